"""The head of report.md: the verdict and the run, profiles and levels × outcomes, the baseline's notes, the A2A
bindings (which were certified, outcomes × bindings, the requirements whose status differs between them) and
the regressions (--against)."""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

from ...outcomes import Outcome
from ..aggregate import untested_over
from ..common import (
    FAILURES,
    OUTCOME_ORDER,
    binding_counts,
    binding_title,
    by_run_profile,
    certified_bindings,
    differs_between_bindings,
    entries_with,
    not_certified_note,
    target_line,
    verdict_claim,
)
from ..roots import card_root
from .text import (
    COULD_NOT_RUN_CHARS,
    DIFF_LINES,
    DIFFER_ROWS,
    IDS_SHOWN,
    LINE_CHARS,
    REGRESSIONS_LISTED,
    TARGET_CHARS,
    VALUE_CHARS,
    Page,
    Part,
    block,
    counted,
    cut,
    md_fence,
    md_message,
    md_text,
)

# -- the head of the page --------------------------------------------------------------------------------

def md_count_table(report: dict[str, Any]) -> list[str]:
    rows = ["| level | " + " | ".join(OUTCOME_ORDER) + " |",
            "| --- |" + " ---: |" * len(OUTCOME_ORDER)]
    for level, counts in report["summary"].items():
        rows.append(f"| {level} | " + " | ".join(str(counts.get(o, 0)) for o in OUTCOME_ORDER) + " |")
    return rows


def md_profile_table(report: dict[str, Any]) -> list[str]:
    """Profiles (as the catalogue and --profile name them, in its order) × outcomes; a profile the run did not
    select at all is named below the table, not given a row of SKIPPED."""
    counts = by_run_profile(report)
    skipped = Outcome.SKIPPED.value
    shown = {p: row for p, row in counts.items() if row[skipped] < sum(row.values())}
    rows = ["| profile | " + " | ".join(OUTCOME_ORDER) + " |", "| --- |" + " ---: |" * len(OUTCOME_ORDER)]
    rows += [f"| {md_text(p)} | " + " | ".join(str(row[o]) for o in OUTCOME_ORDER) + " |" for p, row in shown.items()]
    unselected = [f"{md_text(p)} ({row[skipped]})" for p, row in counts.items() if p not in shown]
    if not shown:
        rows = ["No requirement was selected."]
    if unselected:
        rows += ["", "Not selected (SKIPPED): " + ", ".join(unselected) + "."]
    return rows


def md_head(report: dict[str, Any]) -> str:
    tool, catalogue = report["tool"], report["catalogue"]
    run = (f"{md_text(cut(target_line(report), TARGET_CHARS))} · catalogue {md_text(catalogue['version'])} · "
           f"{md_text(tool['name'])} {md_text(tool['version'])} · {md_text(report['started'])} → "
           f"{md_text(report['finished'])}")
    claim = verdict_claim(report).removeprefix(report["verdict"])  # " · A2A over JSON-RPC · 59/59 MUST"
    lines = [f"# streamcert verdict: **{md_text(report['verdict'])}**{md_text(claim)}", ""]
    if report.get("interrupted"):
        lines += [f"**Interrupted:** {md_text(report['interrupted'])}.", ""]
    card = card_root(entries_with(report, FAILURES), (report.get("target") or {}).get("a2a"))
    if card is not None and not report.get("could_not_run"):  # the cause of the failures below: said first
        lines += [f"**Root cause: {md_text(card.cause or '')}.** Likely fix: {md_text(card.fix or '')}", ""]
    if note := not_certified_note(report):
        lines += [md_text(note[0].upper() + note[1:]) + ".", ""]
    lines += [run, ""]
    lines += md_profile_table(report) + ["", "By level:", ""] + md_count_table(report)
    return block(lines)


def md_could_not_run(report: dict[str, Any]) -> str:
    """One section, however many requirements the reason stopped (not one section each)."""
    errors = entries_with(report, (Outcome.ERROR.value,))
    return block(["## Could not run", "", md_message(cut(report["could_not_run"], COULD_NOT_RUN_CHARS)), "",
                  f"Nothing was judged: the {len(errors)} selected requirements are ERROR with this reason."])


def md_baseline_notes(report: dict[str, Any]) -> str:
    lines = []
    if report.get("baseline_unknown"):
        unknown = report["baseline_unknown"]
        more = f" and {len(unknown) - IDS_SHOWN} more" if len(unknown) > IDS_SHOWN else ""
        lines += ["Baseline ids not in the catalogue (they excuse nothing): "
                  + md_text(", ".join(unknown[:IDS_SHOWN])) + more, ""]
    if report.get("unknown_findings"):
        found = report["unknown_findings"]
        more = f" and {len(found) - IDS_SHOWN} more" if len(found) > IDS_SHOWN else ""
        lines += ["Findings on ids not in the catalogue (a harness bug): "
                  + md_text(", ".join(item["id"] for item in found[:IDS_SHOWN])) + more, ""]
    return block(lines[:-1]) if lines else ""


def md_stale(report: dict[str, Any]) -> str:
    stale = report.get("stale_baseline") or []
    if not stale:
        return ""
    lines = ["## Stale baseline entries (now passing: remove them from the baseline)", ""]
    lines += [f"- {md_text(req_id)}" for req_id in stale[:IDS_SHOWN]]
    if len(stale) > IDS_SHOWN:
        lines.append(f"- and {len(stale) - IDS_SHOWN} more (compatibility.json: `stale_baseline`)")
    return block(lines)


# -- A2A bindings (issue 15) -------------------------------------------------------------------------------

def titles(bindings: Iterable[str]) -> str:
    return ", ".join(binding_title(b) for b in bindings)


def md_bindings(report: dict[str, Any], page: Page) -> tuple[Part, int] | None:
    """Which bindings were certified and which not (why), outcomes × certified bindings, the MUST requirements
    not tested over a certified binding (fixed: bounded by the three bindings and IDS_SHOWN), then the table of
    the requirements whose status differs between bindings (a part: its rows as the budget allows). Returns
    (that part, how many requirements differ)."""
    given = report.get("bindings")
    if given is None:
        return None
    certified = certified_bindings(report)
    lines = ["## Bindings", "", "Certified: " + (md_text(titles(certified)) if certified else "none") + "."]
    if given.get("declared") is not None:
        lines[-1] += " Declared by the agent card: " + (md_text(titles(given["declared"])) or "none") + "."
    for binding, why in (given.get("skipped") or {}).items():
        lines += ["", f"Not certified: {md_text(binding_title(binding))} — {md_text(cut(why, LINE_CHARS))}"]
    counts = binding_counts(report)
    if certified:
        shown = [o for o in OUTCOME_ORDER if any(counts[b][o] for b in certified)]
        lines += ["", "| outcome | " + " | ".join(md_text(binding_title(b)) for b in certified) + " |",
                  "| --- |" + " ---: |" * len(certified)]
        lines += [f"| {o} | " + " | ".join(str(counts[b][o]) for b in certified) + " |" for o in shown]
    musts = [e for e in report["requirements"] if e["level"] == "MUST" and untested_over(e)]
    if musts:
        listed = [f"{md_text(e['id'])} ({md_text(titles(untested_over(e)))})" for e in musts[:IDS_SHOWN]]
        more = f" and {len(musts) - IDS_SHOWN} more" if len(musts) > IDS_SHOWN else ""
        lines += ["", f"MUST requirements not tested over a certified binding ({len(musts)}; each keeps the verdict "
                  "from PASS): " + ", ".join(listed) + more]
    differ = [e for e in report["requirements"] if differs_between_bindings(e, certified)]
    if len(certified) > 1:
        lines += ["", f"{counted(len(differ), 'requirement') or 'No requirement'} "
                  f"differ{'s' if len(differ) <= 1 else ''} between the bindings."]
    page.add(block(lines))
    if not differ:
        return None
    forms = [md_differ_table(differ, certified, rows) for rows in DIFFER_ROWS]
    return page.add("", *forms), len(differ)


def md_differ_table(differ: list[dict[str, Any]], certified: list[str], rows: int) -> str:
    """The requirements whose status differs between the certified bindings, one column each ("—": the
    requirement does not apply to that binding); the first `rows` of them."""
    head = ["| requirement | level | " + " | ".join(md_text(binding_title(b)) for b in certified) + " |",
            "| --- | --- |" + " --- |" * len(certified)]
    body = [f"| {md_text(e['id'])} | {e['level']} | "
            + " | ".join(e["bindings"].get(b, "—") for b in certified) + " |" for e in differ[:rows]]
    more = ([f"_and {len(differ) - rows} more: each requirement's `bindings` in compatibility.json_"]
            if len(differ) > rows else [])
    return block(head + body + ([""] + more if more else []))


# -- regressions (--against) -----------------------------------------------------------------------------

def md_regressions(report: dict[str, Any], page: Page) -> list[tuple[Part, str]]:
    """The regressions: which scenarios differ (a line each, up to REGRESSIONS_LISTED; fixed), then each one's
    diff folded (a part each, up to REGRESSIONS_LISTED). Returns (part, scenario) for each diff."""
    section = report.get("regressions")
    if not section:
        return []
    found = section.get("found") or []
    lines = [f"## Regressions against {md_text(section['against'])}", "",
             f"{len(found)} of {len(section.get('compared') or [])} scenario(s) differ from their cassettes"
             + (" (the run fails)." if found else "."), ""]
    lines += [f"- {md_text(item['scenario'])}: {item['differences']} difference(s) · "
              f"{md_text(item.get('cassette') or '')} · {md_text(item.get('test') or '')}"
              for item in found[:REGRESSIONS_LISTED]]
    if len(found) > REGRESSIONS_LISTED:
        rest = [item["scenario"] for item in found[REGRESSIONS_LISTED:]]
        more = f" and {len(rest) - IDS_SHOWN} more" if len(rest) > IDS_SHOWN else ""
        lines.append(f"- and {len(rest)} more: " + md_text(", ".join(rest[:IDS_SHOWN])) + more)
    if section.get("without_cassette"):
        without = section["without_cassette"]
        more = f" and {len(without) - IDS_SHOWN} more" if len(without) > IDS_SHOWN else ""
        lines += ["", "No earlier cassette: " + md_text(", ".join(without[:IDS_SHOWN])) + more]
    page.add(block(lines))
    parts = []
    for n, item in enumerate(found[:REGRESSIONS_LISTED], start=1):
        forms = [md_diff(item, f"The differences of scenario {n} of {len(found)}", shown) for shown in DIFF_LINES]
        parts.append((page.add("", *forms), item["scenario"]))
    return parts


def md_diff(item: dict[str, Any], summary: str, shown: int) -> str:
    """One regression's diff, its first `shown` lines, folded."""
    diff = list(item.get("lines") or [])
    hidden = len(diff) - shown + int(item.get("lines_omitted") or 0)
    folded = [f"<details><summary>{html.escape(summary)}</summary>", "", f"**{md_text(item['scenario'])}**", "",
              md_fence("\n".join(cut(line, VALUE_CHARS) for line in diff[:shown]))]
    if hidden > 0:
        folded += ["", f"_{hidden} more line(s): run `streamcert diff` on the two cassettes_"]
    return block(folded + ["", "</details>"])
