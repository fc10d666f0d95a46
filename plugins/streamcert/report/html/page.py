"""report.html: one self-contained page a person reads in a browser (docs/contracts.md §4): the verdict, profiles ×
outcomes, the failures grouped by root cause with the frames that decided them, filters, every requirement.
In a run over A2A bindings (issue 15): outcomes × bindings beside the profiles, one status column per
certified binding in the table of requirements, a binding filter (with one chosen, the outcome filter reads
each requirement's status over that binding, and what does not run over it is hidden), and each failure
saying which bindings it came from.

Everything taken from the report is text the implementation under test chose (messages and evidence quote its
frames), so all of it goes through `esc` (`esc_text` inside an element). The page's script only shows and hides
what is already there: it reads the DOM's data attributes, writes no markup, and the page's
Content-Security-Policy lets only that script (and the style sheet) apply, by hash, so markup that slipped through
would still run nothing and load nothing. tests/e2e/test_report_html.py checks the page in Chromium.

Two presentation choices, both honest about what the report holds:
- the member of a frame that an evidence note names ("append: true after its lastChunk" → `append`) is marked
  (`named_members`); a frame whose note names none of its members is marked as a whole;
- a timing rule's figure (`timing_figure`) draws the arrival times its evidence carries and the measured values
  with the limits the rule recorded beside them (GAUGES); nothing is drawn that the report does not hold.
"""

from __future__ import annotations

import base64
import hashlib
from importlib.resources import files
from typing import Any

from ...outcomes import Outcome
from ..aggregate import untested_over
from ..common import (
    FAILURES,
    SOFT_FINDINGS,
    entries_with,
    first_line,
    not_certified_note,
    target_line,
    verdict_claim,
)
from ..roots import Root, group
from .requirements import html_requirement, html_root
from .tables import html_binding_table, html_filters, html_level_table, html_matrix, html_requirement_rows
from .text import badge, esc, plural


def banner_line(report: dict[str, Any], roots: list[Root]) -> str:
    statuses: dict[str, int] = {}
    for entry in report["requirements"]:
        statuses[entry["status"]] = statuses.get(entry["status"], 0) + 1
    failing = statuses.get("FAIL", 0) + statuses.get("ERROR", 0)
    parts = []
    expected = sum(1 for e in report["requirements"] if e.get("baseline") == "expected")
    if failing:
        parts.append(f"{failing} failing ({statuses.get('FAIL', 0)} FAIL, {statuses.get('ERROR', 0)} ERROR) "
                     f"in {plural(len(roots), 'root cause')}"
                     + (f", {expected} expected by the baseline" if expected else ""))
    named = [("PASS", "passed"), ("WARNING", ""), ("NON_STRICT", "non-strict"), ("NOT_TESTED", "not tested"),
             ("UNSUPPORTED", "unsupported"), ("SKIPPED", "skipped")]
    parts += [f"{statuses[o]} {word}" if word else plural(statuses[o], "warning") for o, word in named if statuses.get(o)]
    untested = sum(1 for e in report["requirements"] if e["level"] == "MUST" and untested_over(e))
    if untested:
        parts.append(f"{untested} MUST not tested over a certified binding")
    return " · ".join(parts)


def html_regressions(report: dict[str, Any]) -> list[str]:
    section = report.get("regressions")
    if not section:
        return []
    found = section.get("found") or []
    parts = [f"<h2>Regressions against {esc(section['against'])}</h2>",
             f"<p>{len(found)} of {len(section.get('compared') or [])} scenario(s) differ from their cassettes"
             + (" (the run fails).</p>" if found else ".</p>")]
    for item in found:
        more = (f'<p class="meta">{esc(item["lines_omitted"])} more line(s): run <code>streamcert diff</code> '
                "on the two cassettes</p>") if item.get("lines_omitted") else ""
        parts.append(f'<div class="regression"><h3>{esc(item["scenario"])} — {esc(item["differences"])} '
                     f'difference(s)</h3><div class="meta">{esc(item.get("cassette") or "")} · '
                     f'{esc(item.get("test") or "")}</div><pre>{esc(chr(10).join(item.get("lines") or []))}</pre>'
                     f"{more}</div>")
    if section.get("without_cassette"):
        parts.append(f'<p class="meta">No earlier cassette: {esc(", ".join(section["without_cassette"]))}</p>')
    return parts


def html_notices(report: dict[str, Any]) -> list[str]:
    """What the run says beside the requirements: the baseline's stale and unknown entries, findings on ids
    the catalogue does not know."""
    parts = []
    if report.get("stale_baseline"):
        reasons = {e["id"]: e.get("baseline_reason") for e in report["requirements"]}
        items = "".join(f"<li><code>{esc(i)}</code>" + (f" — {esc(reasons[i])}" if reasons.get(i) else "") + "</li>"
                        for i in report["stale_baseline"])
        parts += ['<div class="notice bad"><h2>Stale baseline entries (now passing)</h2>'
                  f"<p>These pass now: remove them from the baseline. The run fails until then.</p><ul>{items}</ul></div>"]
    if report.get("baseline_unknown"):
        items = "".join(f"<li><code>{esc(i)}</code></li>" for i in report["baseline_unknown"])
        parts += [f'<div class="notice"><h2>Baseline entries not in the catalogue</h2><ul>{items}</ul></div>']
    if report.get("unknown_findings"):
        items = "".join(f"<li><code>{esc(f.get('id'))}</code> {badge(str(f.get('status')))} "
                        f"{esc(first_line(str(f.get('message') or '')))}</li>" for f in report["unknown_findings"])
        parts += ['<div class="notice bad"><h2>Findings on ids the catalogue does not know (a harness bug)</h2>'
                  f"<ul>{items}</ul></div>"]
    return parts


def render_html(report: dict[str, Any]) -> str:
    verdict = report["verdict"]
    failures = entries_with(report, FAILURES)
    roots = group(failures, (report.get("target") or {}).get("a2a")) if not report.get("could_not_run") else []
    meta = (f'<p class="meta">{esc(target_line(report))} · catalogue {esc(report["catalogue"]["version"])} · '
            f'{esc(report["tool"]["name"])} {esc(report["tool"]["version"])} · {esc(report["started"])} → '
            f'{esc(report["finished"])}</p>')
    if report.get("could_not_run"):  # one section, not one per requirement with the same reason
        errors = entries_with(report, (Outcome.ERROR.value,))
        sections = [f'<header class="banner v-{esc(verdict)}"><h1>streamcert verdict: {esc(verdict)}</h1>'
                    f"<p>could not run: {esc(first_line(report['could_not_run']))}</p></header>", meta,
                    '<section><h2>Could not run</h2>', f"<pre class=\"message\">{esc(report['could_not_run'])}</pre>",
                    f"<p>Nothing was judged: the {len(errors)} selected requirements are ERROR with this reason.</p>",
                    "<h3>By level</h3>", html_level_table(report), "</section>"]
        return _html_page(verdict, sections)
    soft = entries_with(report, SOFT_FINDINGS)
    opened = {e["id"] for e in failures + soft}
    claim = verdict_claim(report).removeprefix(verdict)  # " · A2A over JSON-RPC · 59/59 MUST"
    note = not_certified_note(report)
    sections = [f'<header class="banner v-{esc(verdict)}"><h1>streamcert verdict: {esc(verdict)}{esc(claim)}</h1>'
                f"<p>{esc(banner_line(report, roots))}</p>"
                + (f"<p>Interrupted: {esc(report['interrupted'])}.</p>" if report.get("interrupted") else "")
                + (f"<p><strong>Root cause: {esc(roots[0].cause)}.</strong> Likely fix: {esc(roots[0].fix or '')}</p>"
                   if roots and roots[0].cause else "")
                + (f'<p class="not-certified">{esc(note[0].upper() + note[1:])}.</p>' if note else "")
                + "</header>", meta]
    sections += html_notices(report)
    sections += html_regressions(report)
    if roots:
        sections += [f'<section data-group="section"><h2>Failures by root cause <span class="count">'
                     f'{plural(len(failures), "requirement")}, {plural(len(roots), "root cause")}</span></h2>'
                     '<p class="meta">Grouping is presentation only: every requirement keeps its own status. '
                     "Requirements share a root when their evidence names the same first frame; the first in "
                     "catalogue order heads it.</p>",
                     *[html_root(r) for r in roots], "</section>"]
    if soft:
        sections += ['<section data-group="section"><h2>Warnings and non-strict readings '
                     f'<span class="count">{len(soft)}</span></h2>',
                     *[f'<div class="root" data-group="root">{html_requirement(e)}</div>' for e in soft], "</section>"]
    # the failures come first (the first screen shows what broke), then the counts
    sections += ['<section class="overview"><div><h2>By profile</h2>', html_matrix(report),
                 '</div><div><h2>By level</h2>', html_level_table(report), "</div>",
                 *(['<div id="by-binding"><h2>By binding</h2>', html_binding_table(report), "</div>"]
                   if report.get("bindings") is not None else []),
                 "</section>", html_filters(report)]
    sections += ['<section><h2>All requirements</h2>', html_requirement_rows(report, opened), "</section>"]
    return _html_page(verdict, sections)


# -- the page ---------------------------------------------------------------------------------------------

# The style sheet and the script are package data beside this module. The script shows and hides what the page
# already holds; it reads only data attributes and writes text, never markup.
_CSS = (files(__package__) / "page.css").read_text("utf-8")
_JS = (files(__package__) / "page.js").read_text("utf-8")


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


# Nothing to fetch, and only this page's own style sheet and script may apply or run.
_CSP = f"default-src 'none'; style-src '{_sha256(_CSS)}'; script-src '{_sha256(_JS)}'; base-uri 'none'; form-action 'none'"


def _html_page(verdict: str, sections: list[str]) -> str:
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{esc(_CSP)}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>streamcert: {esc(verdict)}</title><style>{_CSS}</style></head>"
            f"<body>{''.join(sections)}<script>{_JS}</script></body></html>\n")
