"""report.md: the CI step summary. Text from the run is escaped outside code fences (GitHub renders HTML
inside step summaries)."""

from __future__ import annotations

import html
import re
from typing import Any

from ..outcomes import Outcome
from .common import (
    FAILURES,
    MD_EVIDENCE_CHARS,
    MD_EVIDENCE_ITEMS,
    OUTCOME_ORDER,
    SOFT_FINDINGS,
    entries_with,
    evidence_label,
    evidence_text,
    first_line,
    target_line,
)

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


def md_source(entry: dict[str, Any]) -> str:
    """The requirement's source on its own line of a list item (a Markdown hard break before it)."""
    return f"  \n  _{md_text(entry['source'])}_"
