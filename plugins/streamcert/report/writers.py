"""Write the report files: compatibility.json, report.md (CI step summary), report.html (one file).

JUnit XML comes from pytest itself (`--junitxml`). Everything taken from the report is text the
implementation under test chose (messages quote its frames), so the HTML escapes all of it and the
Markdown escapes it outside code fences (GitHub renders HTML inside step summaries).
"""

from __future__ import annotations

import contextlib
import html
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from ..outcomes import Outcome

OUTCOME_ORDER = [o.value for o in Outcome]
FAILURES = (Outcome.FAIL.value, Outcome.ERROR.value)
SOFT_FINDINGS = (Outcome.WARNING.value, Outcome.NON_STRICT.value)
MD_EVIDENCE_ITEMS = 3
MD_EVIDENCE_CHARS = 500


def write_all(report: dict[str, Any], directory: Path) -> list[Path]:
    """Write the three files, each atomically; all are rendered before any is written, so a rendering
    error leaves the previous report whole."""
    directory = Path(directory)
    contents = {
        "compatibility.json": json.dumps(report, indent=2, ensure_ascii=False) + "\n",
        "report.md": render_markdown(report),
        "report.html": render_html(report),
    }
    if report.get("could_not_run"):  # pytest never ran, so nothing else writes junit.xml
        contents["junit.xml"] = render_junit_could_not_run(report)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in contents.items():
        written.append(write_atomic(directory / name, text))
    return written


def write_atomic(path: Path, data: str | bytes) -> Path:
    """Write `path` through a temporary file in the same directory and `os.replace`: a reader (or a
    run killed half-way) sees the old file or the new one, never a part of it."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path


def entries_with(report: dict[str, Any], statuses: tuple[str, ...]) -> list[dict[str, Any]]:
    return [e for e in report["requirements"] if e["status"] in statuses]


def evidence_text(item: dict[str, Any]) -> str:
    """The quoted frame or body of one evidence item, or the whole item as JSON."""
    for key in ("data", "body", "error"):
        if isinstance(item.get(key), str):
            return item[key]
    return json.dumps(item, ensure_ascii=False, indent=1)


def evidence_label(item: dict[str, Any]) -> str:
    """The scalar facts of one evidence item (test, exchange, frame, time, note) on one line."""
    skip = ("data", "body", "error")
    return " · ".join(f"{k}={v}" for k, v in item.items()
                      if k not in skip and isinstance(v, (str, int, float, bool)) and v != "")


def target_line(report: dict[str, Any]) -> str:
    targets = [f"{name}: {value}" for name, value in report.get("target", {}).items() if value]
    return ", ".join(targets) or "no target"


# -- Markdown -----------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")


def md_text(text: str) -> str:
    """Text from the run, made inert in Markdown: HTML escaped, Markdown punctuation backslashed."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))


def md_fence(text: str) -> str:
    longest_run = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest_run + 1)
    return f"{fence}\n{text}\n{fence}"


def md_message(text: str) -> str:
    return "  \n".join(md_text(line) for line in text.splitlines()) or "_(no message)_"


def md_evidence(entry: dict[str, Any]) -> list[str]:
    lines = []
    for item in entry["evidence"][:MD_EVIDENCE_ITEMS]:
        excerpt = evidence_text(item)
        if len(excerpt) > MD_EVIDENCE_CHARS:
            excerpt = excerpt[:MD_EVIDENCE_CHARS] + "…"
        lines += [f"- {md_text(evidence_label(item))}", "", md_fence(excerpt), ""]
    hidden = len(entry["evidence"]) - MD_EVIDENCE_ITEMS + entry.get("evidence_omitted", 0)
    if hidden > 0:
        lines += [f"_{hidden} more evidence item(s) in compatibility.json_", ""]
    return lines


def md_count_table(report: dict[str, Any]) -> list[str]:
    rows = ["| level | " + " | ".join(OUTCOME_ORDER) + " |",
            "| --- |" + " ---: |" * len(OUTCOME_ORDER)]
    for level, counts in report["summary"].items():
        rows.append(f"| {level} | " + " | ".join(str(counts.get(o, 0)) for o in OUTCOME_ORDER) + " |")
    return rows


def render_markdown(report: dict[str, Any]) -> str:
    tool, catalogue = report["tool"], report["catalogue"]
    lines = [f"# streamcert verdict: **{report['verdict']}**", "",
             (f"{md_text(target_line(report))} · catalogue {md_text(catalogue['version'])} · "
              f"{tool['name']} {md_text(tool['version'])} · {md_text(report['started'])} → "
              f"{md_text(report['finished'])}"), ""]
    lines += md_count_table(report) + [""]

    if report.get("could_not_run"):  # one section, not one per requirement with the same reason
        errors = entries_with(report, (Outcome.ERROR.value,))
        lines += ["## Could not run", "", md_message(report["could_not_run"]), "",
                  f"Nothing was judged: the {len(errors)} selected requirements are ERROR with this reason.", ""]
        return "\n".join(lines)

    if report.get("stale_baseline"):
        lines += ["## Stale baseline entries (now passing: remove them from the baseline)", ""]
        lines += [f"- {md_text(req_id)}" for req_id in report["stale_baseline"]] + [""]

    lines += md_regressions(report)

    failures = entries_with(report, FAILURES)
    if failures:
        lines += ["## Failures", ""]
        for entry in failures:
            expected = " · expected by baseline" if entry.get("baseline") == "expected" else ""
            lines += [f"### {entry['status']} {md_text(entry['id'])} — {md_text(entry['title'])}", "",
                      (f"{entry['level']} · {md_text(entry['profile'])} · {md_text(entry['source'])}"
                       f"{expected}"), "", md_message(entry["message"]), ""]
            lines += md_evidence(entry)

    soft = entries_with(report, SOFT_FINDINGS)
    if soft:
        lines += ["## Warnings and non-strict readings", ""]
        lines += [f"- {e['status']} **{md_text(e['id'])}** {md_text(e['title'])} — "
                  f"{md_text(first_line(e['message']))}{md_source(e)}" for e in soft] + [""]

    not_tested = entries_with(report, (Outcome.NOT_TESTED.value,))
    if not_tested:
        lines += [f"## Not tested ({len(not_tested)})", ""]
        lines += [f"- {e['level']} **{md_text(e['id'])}** {md_text(e['title'])}{md_source(e)}"
                  for e in not_tested] + [""]
    return "\n".join(lines)


def md_regressions(report: dict[str, Any]) -> list[str]:
    """--against: the scenarios that differ from their earlier cassettes, each with its diff."""
    section = report.get("regressions")
    if not section:
        return []
    found = section.get("found") or []
    lines = [f"## Regressions against {md_text(section['against'])}", "",
             f"{len(found)} of {len(section.get('compared') or [])} scenario(s) differ from their cassettes"
             + (" (the run fails)." if found else "."), ""]
    for item in found:
        lines += [f"### {md_text(item['scenario'])} — {item['differences']} difference(s)", "",
                  f"{md_text(item.get('cassette') or '')} · {md_text(item.get('test') or '')}", "",
                  md_fence("\n".join(item.get("lines") or []))]
        if item.get("lines_omitted"):
            lines.append(f"_{item['lines_omitted']} more line(s): run `streamcert diff` on the two cassettes_")
        lines.append("")
    if section.get("without_cassette"):
        lines += ["No earlier cassette: " + md_text(", ".join(section["without_cassette"])), ""]
    return lines


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


def md_source(entry: dict[str, Any]) -> str:
    """The requirement's source on its own line of a list item (a Markdown hard break before it)."""
    return f"  \n  _{md_text(entry['source'])}_"


def first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


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


# -- JUnit XML for a run that could not run ------------------------------------------------------------

def render_junit_could_not_run(report: dict[str, Any]) -> str:
    """One errored test case naming why the run could not run (CI systems show it like a test error)."""
    suite = ElementTree.Element("testsuite", name="streamcert", tests="1", errors="1", failures="0", skipped="0")
    case = ElementTree.SubElement(suite, "testcase", classname="streamcert", name="preflight")
    ElementTree.SubElement(case, "error", message=report["could_not_run"]).text = report["could_not_run"]
    root = ElementTree.Element("testsuites")
    root.append(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def _html_page(verdict: str, sections: list[str]) -> str:
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>streamcert: {esc(verdict)}</title><style>{_CSS}</style></head>"
            f"<body>{''.join(sections)}</body></html>\n")
