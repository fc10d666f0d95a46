"""report.html: one self-contained page. Everything taken from the report is text the implementation
under test chose (messages quote its frames), so all of it is escaped."""

from __future__ import annotations

import html
from typing import Any

from ..outcomes import Outcome
from .common import FAILURES, OUTCOME_ORDER, entries_with, evidence_label, evidence_text, first_line, target_line

# -- HTML ---------------------------------------------------------------------------------------------

def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#222;max-width:80em}
.banner{padding:.8em 1.2em;border-radius:6px;font-size:1.6em;font-weight:bold;color:#fff}
.v-PASS{background:#2a7d2e}.v-FAIL{background:#b3261e}.v-INCOMPLETE{background:#a86b00}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.25em .6em}
td.n{text-align:right}td.zero{color:#bbb}th{background:#f3f3f3}
.s-FAIL,.s-ERROR{color:#b3261e;font-weight:bold}.s-WARNING,.s-NON_STRICT{color:#a86b00}
.s-PASS{color:#2a7d2e}.s-NOT_TESTED{color:#666}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
.failure{border-left:4px solid #b3261e;padding-left:1em;margin:1.5em 0}
.meta{color:#666;font-size:.9em}
"""


def html_matrix(report: dict[str, Any]) -> str:
    """Families (in catalogue order) × outcomes, with counts."""
    counts: dict[str, dict[str, int]] = {}
    for entry in report["requirements"]:
        row = counts.setdefault(entry["profile"], dict.fromkeys(OUTCOME_ORDER, 0))
        row[entry["status"]] += 1
    head = "<tr><th>profile</th>" + "".join(f"<th>{esc(o)}</th>" for o in OUTCOME_ORDER) + "</tr>"
    body = []
    for family, row in counts.items():
        cells = "".join(f'<td class="n{" zero" if row[o] == 0 else ""}">{row[o]}</td>' for o in OUTCOME_ORDER)
        body.append(f"<tr><th>{esc(family)}</th>{cells}</tr>")
    return f"<table>{head}{''.join(body)}</table>"


def html_level_table(report: dict[str, Any]) -> str:
    head = "<tr><th>level</th>" + "".join(f"<th>{esc(o)}</th>" for o in OUTCOME_ORDER) + "</tr>"
    body = "".join(
        f"<tr><th>{esc(level)}</th>" + "".join(f'<td class="n">{counts.get(o, 0)}</td>' for o in OUTCOME_ORDER)
        + "</tr>" for level, counts in report["summary"].items())
    return f"<table>{head}{body}</table>"


def html_evidence(entry: dict[str, Any]) -> str:
    parts = [f'<div class="meta">{esc(evidence_label(item))}</div><pre>{esc(evidence_text(item))}</pre>'
             for item in entry["evidence"]]
    if entry.get("evidence_omitted"):
        parts.append(f'<div class="meta">{entry["evidence_omitted"]} more evidence item(s) omitted</div>')
    return "".join(parts)


def html_failure(entry: dict[str, Any]) -> str:
    expected = " · expected by baseline" if entry.get("baseline") == "expected" else ""
    tests = "".join(f"<li>{esc(t)}</li>" for t in entry["tests"])
    return (f'<div class="failure"><h3><span class="s-{esc(entry["status"])}">{esc(entry["status"])}</span> '
            f'{esc(entry["id"])} — {esc(entry["title"])}</h3>'
            f'<div class="meta">{esc(entry["level"])} · {esc(entry["profile"])} · {esc(entry["source"])}'
            f'{expected}</div><pre>{esc(entry["message"])}</pre>'
            f'<div class="meta">tests</div><ul>{tests}</ul>{html_evidence(entry)}</div>')


def html_requirement_rows(report: dict[str, Any]) -> str:
    rows = [f'<tr><td>{esc(e["id"])}</td><td>{esc(e["level"])}</td>'
            f'<td class="s-{esc(e["status"])}">{esc(e["status"])}</td><td>{esc(e["title"])}</td>'
            f'<td class="meta">{esc(e["source"])}</td><td>{esc(first_line(e["message"]))}</td></tr>'
            for e in report["requirements"]]
    return ("<table><tr><th>id</th><th>level</th><th>status</th><th>requirement</th><th>source</th>"
            "<th>message</th></tr>" + "".join(rows) + "</table>")


def render_html(report: dict[str, Any]) -> str:
    verdict = report["verdict"]
    sections = [
        f'<div class="banner v-{esc(verdict)}">streamcert verdict: {esc(verdict)}</div>',
        (f'<p class="meta">{esc(target_line(report))} · catalogue {esc(report["catalogue"]["version"])} · '
         f'{esc(report["tool"]["name"])} {esc(report["tool"]["version"])} · {esc(report["started"])} → '
         f'{esc(report["finished"])}</p>'),
        "<h2>By level</h2>", html_level_table(report),
    ]
    if report.get("could_not_run"):
        errors = entries_with(report, (Outcome.ERROR.value,))
        sections += ["<h2>Could not run</h2>", f"<pre>{esc(report['could_not_run'])}</pre>",
                     f"<p>Nothing was judged: the {len(errors)} selected requirements are ERROR with this reason.</p>"]
        return _html_page(verdict, sections)
    sections += ["<h2>By profile</h2>", html_matrix(report)]
    if report.get("stale_baseline"):
        items = "".join(f"<li>{esc(i)}</li>" for i in report["stale_baseline"])
        sections += ["<h2>Stale baseline entries (now passing)</h2>", f"<ul>{items}</ul>"]
    sections += html_regressions(report)
    failures = entries_with(report, FAILURES)
    if failures:
        sections += ["<h2>Failures</h2>"] + [html_failure(e) for e in failures]
    sections += ["<h2>All requirements</h2>", html_requirement_rows(report)]
    return _html_page(verdict, sections)


def html_regressions(report: dict[str, Any]) -> list[str]:
    section = report.get("regressions")
    if not section:
        return []
    found = section.get("found") or []
    parts = [f"<h2>Regressions against {esc(section['against'])}</h2>",
             f"<p>{len(found)} of {len(section.get('compared') or [])} scenario(s) differ from their cassettes"
             + (" (the run fails).</p>" if found else ".</p>")]
    for item in found:
        parts.append(f'<div class="failure"><h3>{esc(item["scenario"])} — {item["differences"]} difference(s)</h3>'
                     f'<div class="meta">{esc(item.get("cassette") or "")} · {esc(item.get("test") or "")}</div>'
                     f'<pre>{esc(chr(10).join(item.get("lines") or []))}</pre></div>')
    if section.get("without_cassette"):
        parts.append(f'<p class="meta">No earlier cassette: {esc(", ".join(section["without_cassette"]))}</p>')
    return parts



def _html_page(verdict: str, sections: list[str]) -> str:
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>streamcert: {esc(verdict)}</title><style>{_CSS}</style></head>"
            f"<body>{''.join(sections)}</body></html>\n")
