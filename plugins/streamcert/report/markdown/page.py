"""report.md: the CI step summary (GitHub renders it, `<details>` included, on the run's page).

In this order: the verdict and the run; profiles × outcomes and levels × outcomes; stale baseline entries; the
A2A bindings (which were certified, which not and why, outcomes × bindings, the requirements whose status
differs between bindings); regressions (--against); the failures grouped by root cause (roots.py: the head
with its sentence, message, the bindings it failed over, and the frames that decided it, folded; the others
it caused listed under it, each with its own status), MUST before SHOULD, expected failures last; warnings
and non-strict readings, and what was not tested, as counts with a short folded list.

At most MD_BUDGET bytes whatever the run: a step summary is read in a screen or two, and compatibility.json
and report.html beside it hold everything. The page is a list of parts, each in the forms it can take
(smallest first, often "": left out); every part starts in its smallest form and the parts are enlarged in
priority order while the budget allows: the heads of the failures (most severe first, none after one that
did not fit), the first rows of the bindings' differences, the short lists, each failure's first frame and
exchange, the regressions' first diff lines, each failure's other frames and its members' messages, the long
lists, the longer table of differences, the long diffs. The fixed parts (the tables, the counts, the
could-not-run reason, stale baseline entries, the bindings' reasons) are bounded by construction. What did
not fit is named in a last line.

Text from the run is made inert: outside code fences its HTML is escaped and its Markdown punctuation
backslashed (`md_text`); frames and bodies sit in fences longer than any backtick run they hold; a
`<summary>` holds only the report's own words and counts (Markdown is not read inside it).
"""

from __future__ import annotations

import html
from typing import Any

from ...outcomes import Outcome
from ..common import (
    SOFT_FINDINGS,
    entries_with,
)
from .failures import Section, md_failures
from .head import md_baseline_notes, md_bindings, md_could_not_run, md_head, md_regressions, md_stale
from .text import (
    DIFFER_ROWS,
    LINE_CHARS,
    LIST_CAPS,
    MD_BUDGET,
    NOTE_IDS,
    NOTE_RESERVE,
    TITLE_CHARS,
    VALUE_CHARS,
    Page,
    Part,
    block,
    cut,
    ids_line,
    md_text,
    message_lines,
    size,
)

# -- counts and short lists ----------------------------------------------------------------------------

def short_list(lines: list[str], cap: int, summary: str) -> str:
    """A folded list of at most `cap` bytes: the lines that fit, then how many did not."""
    kept, used = [], 0
    for line in lines:
        if used + size(line) + 1 > cap:
            break
        kept.append(line)
        used += size(line) + 1
    if not kept:
        return ""
    more = [f"- and {len(lines) - len(kept)} more in compatibility.json"] if len(kept) < len(lines) else []
    return block(["<details><summary>" + html.escape(summary) + "</summary>", "", *kept, *more, "", "</details>"])


def md_soft(report: dict[str, Any], page: Page) -> tuple[Part, int] | None:
    soft = entries_with(report, SOFT_FINDINGS)
    if not soft:
        return None
    counts = ", ".join(f"{sum(e['status'] == s for e in soft)} {s}" for s in SOFT_FINDINGS
                       if any(e["status"] == s for e in soft))
    page.add(block([f"## Warnings and non-strict readings: {counts}", "",
                    "Not failures: a tolerance exceeded, a SHOULD missed, or a weaker reading accepted."]))
    lines = []
    for e in soft:
        said = message_lines(e)
        why = f" — {md_text(cut(said[0], LINE_CHARS // 2))}" if said else ""
        lines.append(f"- {e['status']} **{md_text(e['id'])}** {md_text(cut(e['title'], TITLE_CHARS))}{why}")
    forms = [short_list(lines, cap, f"The {len(soft)} requirement(s)") for cap in LIST_CAPS]
    return page.add("", *[f for f in forms if f]), len(soft)


def md_not_tested(report: dict[str, Any], page: Page) -> tuple[Part, int] | None:
    untested = entries_with(report, (Outcome.NOT_TESTED.value,))
    if not untested:
        return None
    reasons = {e["message"] for e in untested}
    head = [f"## Not tested: {len(untested)}", ""]
    head.append(f"Each for the same reason: {md_text(next(iter(reasons)))}." if len(reasons) == 1 else
                "Selected, but no finding: each one counts against the verdict (INCOMPLETE) when it is a MUST.")
    page.add(block(head))
    lines = [f"- {e['level']} **{md_text(e['id'])}** {md_text(cut(e['title'], TITLE_CHARS))}"
             + (f" — {md_text(cut(e['message'], VALUE_CHARS))}" if len(reasons) > 1 else "") for e in untested]
    forms = [short_list(lines, cap, f"The {len(untested)} requirement(s)") for cap in LIST_CAPS]
    return page.add("", *[f for f in forms if f]), len(untested)


# -- the page ----------------------------------------------------------------------------------------------

def render_markdown(report: dict[str, Any], budget: int = MD_BUDGET) -> str:
    page = Page(budget - NOTE_RESERVE)
    page.add(md_head(report))
    if report.get("could_not_run"):
        page.add(md_could_not_run(report))
        return page.text.rstrip("\n") + "\n"
    page.add(md_baseline_notes(report))
    page.add(md_stale(report))
    bindings = md_bindings(report, page)
    regressions = md_regressions(report, page)
    failures = md_failures(report, page)
    soft = md_soft(report, page)
    untested = md_not_tested(report, page)
    lists = [found for found in (soft, untested) if found]

    # The order of priority (see the module's docstring).
    for part, _ in failures:
        if not page.enlarge(part, 1):
            break  # the heads go most severe first: none after one that did not fit
    if bindings:
        page.enlarge(bindings[0], 1)
    for part, _ in lists:
        page.enlarge(part, 1)
    for part, _ in failures:
        page.enlarge(part, 2)
    for part, _ in regressions:
        page.enlarge(part, 1)
    for part, _ in failures:
        page.enlarge(part, 3)
    for part, _ in lists:
        page.enlarge(part, 2)
    if bindings:
        page.enlarge(bindings[0], 2)
    for part, _ in regressions:
        page.enlarge(part, 2)
    note = left_out_note(regressions, failures, lists, budget, bindings)
    text = (page.text + note).rstrip("\n") + "\n"
    if size(text) > budget:  # the fixed parts alone are over it (a catalogue of hundreds of profiles): no fold yet
        text = cut_lines(text, budget - NOTE_RESERVE) + block([
            f"_Cut here to keep this summary under {budget / 1000:g} KB: compatibility.json and report.html "
            "beside this file have all of it._"])
    return text


def cut_lines(text: str, limit: int) -> str:
    """The whole lines of `text` that fit in `limit` bytes."""
    kept, used = [], 0
    for line in text.splitlines():
        if used + size(line) + 1 > limit:
            break
        kept.append(line)
        used += size(line) + 1
    return "\n".join(kept).rstrip("\n") + "\n\n"


def left_out_note(regressions: list[tuple[Part, str]], failures: list[tuple[Part, Section]],
                  lists: list[tuple[Part, int]], budget: int, bindings: tuple[Part, int] | None = None) -> str:
    """The last line when the budget left something out: what, and where all of it is. Under NOTE_RESERVE
    bytes whatever was left out (IDs listed up to IDS_SHOWN)."""
    said = []
    omitted = [section for part, section in failures if part.chosen == 0]
    if omitted:
        entries = [e for section in omitted for e in section.entries]
        said.append(f"{len(omitted)} root cause(s) of failure ({len(entries)} requirement(s): "
                    f"{ids_line(entries, NOTE_IDS)})")
    folded = [section for part, section in failures if 0 < part.chosen < len(part.forms) - 1]
    if folded:
        said.append(f"the details of {len(folded)} root cause(s)")
    diffs = [name for part, name in regressions if part.chosen < len(part.forms) - 1]
    if diffs:
        said.append(f"all or part of the diffs of {len(diffs)} regression(s)")
    if any(part.chosen < len(part.forms) - 1 for part, _ in lists):
        said.append("part of the lists of warnings and untested requirements")
    if bindings:
        part, differ = bindings
        rows = DIFFER_ROWS[part.chosen - 1] if part.chosen else 0
        if rows < differ:
            said.append(f"{'part' if rows else 'all'} of the table of the {differ} requirement(s) whose status "
                        "differs between bindings")
    if not said:
        return ""
    return block([f"_Left out to keep this summary under {budget / 1000:g} KB: " + "; ".join(said)
                  + ". compatibility.json and report.html beside this file have all of it._"])
