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
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ...catalogue import LEVELS
from ...outcomes import Outcome
from ..aggregate import untested_over
from ..common import (
    FAILURES,
    OUTCOME_ORDER,
    SOFT_FINDINGS,
    binding_counts,
    binding_title,
    by_run_profile,
    certified_bindings,
    differs_between_bindings,
    entries_with,
    not_certified_note,
    over_text,
    target_line,
    verdict_claim,
)
from ..roots import Root, card_root, frames_first, group, names_frame
from ..sources import source_url

MD_BUDGET = 10_000  # bytes of UTF-8: "at most 10 KB" in either reading of KB
NOTE_RESERVE = 800  # kept back for the last line that says what was left out (`left_out_note` stays under it)
TARGET_CHARS = 400  # of the run's line (an ACP command line can be long)
LINE_CHARS = 300  # of one line of a message
TITLE_CHARS = 160  # of a member's or a listed requirement's title
VALUE_CHARS = 200  # of one fact of an evidence item
FENCE_CHARS = 1200  # of a frame or a body, pretty-printed
FENCE_LINES = 30
MEMBERS_SHOWN = 8  # members listed with their title; the others by ID
IDS_SHOWN = 20  # IDs listed where only IDs are
NOTE_IDS = 15  # IDs the last line names
DETAIL_FRAMES = 3  # frame items in a root's full details
DETAIL_EXCHANGES = 2  # exchange items in a root's full details
LIST_CAPS = (700, 1800)  # the short folded lists (warnings, not tested): their two sizes
DIFF_LINES = (8, 30)  # of a regression's diff: its two sizes
REGRESSIONS_LISTED = 10  # scenarios named with their counts, and with their diffs
COULD_NOT_RUN_CHARS = 1000  # escaped, up to 4 bytes a character (`<` is `&lt;`)
DIFFER_ROWS = (12, 40)  # rows of the table of requirements whose status differs between bindings: its two sizes

# -- Markdown ------------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")


def md_text(text: Any) -> str:
    """Text from the run, made inert in Markdown: HTML escaped, Markdown punctuation backslashed."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))


def md_source(source: str) -> str:
    """A requirement's source, linked to the document's public text where one is known (sources.py)."""
    url = source_url(source)
    return f"[{md_text(source)}]({url})" if url else md_text(source)


def md_fence(text: str, info: str = "") -> str:
    longest_run = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest_run + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def md_message(text: str) -> str:
    return "  \n".join(md_text(line) for line in text.splitlines()) or "_(no message)_"


def cut(text: str, limit: int) -> str:
    """`text` up to `limit` characters, cut before it is escaped (an escape is never split)."""
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "…"


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def block(lines: Iterable[str]) -> str:
    """Lines as one part of the page, one blank line after it."""
    return "\n".join(lines).rstrip("\n") + "\n\n"


def message_lines(entry: dict[str, Any]) -> list[str]:
    """The entry's message, line by line, without the source a failing finding appends to each (`[source]`:
    rules/engine.py Verdict.add): the page shows the source once, beside the title."""
    suffix = f" [{entry.get('source')}]"
    return [line.removesuffix(suffix) for line in str(entry.get("message") or "").splitlines() if line.strip()]


def counted(n: int, what: str) -> str:
    return "" if n == 0 else f"{n} {what}" + ("" if n == 1 else "s")


def ids_line(entries: list[dict[str, Any]], limit: int = IDS_SHOWN) -> str:
    shown = [f"{md_text(e['id'])} ({e['status']})" for e in entries[:limit]]
    more = f" and {len(entries) - limit} more" if len(entries) > limit else ""
    return ", ".join(shown) + more


# -- the page and its budget -----------------------------------------------------------------------------

@dataclass
class Part:
    """One part of the page in the forms it can take, smallest first ("" for left out)."""

    forms: list[str]
    chosen: int = 0

    @property
    def text(self) -> str:
        return self.forms[self.chosen]


@dataclass
class Page:
    budget: int
    parts: list[Part] = field(default_factory=list)
    used: int = 0

    def add(self, *forms: str) -> Part:
        part = Part(list(forms))
        self.parts.append(part)
        self.used += size(part.text)
        return part

    def enlarge(self, part: Part, form: int) -> bool:
        """Take `form` for `part` when the budget allows (a smaller or equal form: nothing to do)."""
        form = min(form, len(part.forms) - 1)
        if form <= part.chosen:
            return True
        extra = size(part.forms[form]) - size(part.text)
        if self.used + extra > self.budget:
            return False
        part.chosen, self.used = form, self.used + extra
        return True

    @property
    def text(self) -> str:
        return "".join(part.text for part in self.parts)


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


# -- evidence ----------------------------------------------------------------------------------------------

_SHOWN_APART = ("exchange", "frame", "t", "data", "body", "request", "sent", "status", "content_type", "test",
                "unread", "note", "error", "unjudged", "content_encoding")
_NOTES = (("unread", "could not be read: "), ("note", ""), ("error", "error: "), ("unjudged", "not judged: "),
          ("content_encoding", "content encoding: "))


def pretty(text: str) -> tuple[str, str]:
    """(text, fence info): an object or array pretty-printed as JSON, anything else as it came."""
    try:
        value = json.loads(text)
    except ValueError:
        return text, ""
    if not isinstance(value, (dict, list)):
        return text, ""
    return json.dumps(value, indent=2, ensure_ascii=False), "json"


def md_quoted(text: str) -> str:
    shown, info = pretty(text)
    lines = shown.splitlines()
    kept = cut("\n".join(lines[:FENCE_LINES]), FENCE_CHARS)
    if len(lines) > FENCE_LINES or len(kept) < len("\n".join(lines[:FENCE_LINES])):
        kept += f"\n… ({size(shown)} bytes in all)"
    return md_fence(kept, info)


def md_item(item: dict[str, Any]) -> list[str]:
    """One evidence item: what it names on a line (frame or exchange, time, request and answer, test), its
    notes, then the frame's data or the body in a fence."""
    exchange = md_text(item.get("exchange") or "?")
    if names_frame(item):
        facts = [f"**frame {item['frame']} of {exchange}**"]
        if isinstance(item.get("t"), (int, float)):
            facts.append(f"at {item['t']} s")
    else:
        facts = [f"**exchange {exchange}**"]
    if item.get("request"):
        answer = f"HTTP {item['status']}" if item.get("status") is not None else "no answer"
        facts.append(f"{md_text(item['request'])} → {answer}")
    if item.get("content_type"):
        facts.append(md_text(item["content_type"]))
    facts += [f"{md_text(key)}: {md_text(cut(value, VALUE_CHARS))}" for key, value in item.items()
              if key not in _SHOWN_APART and isinstance(value, (str, int, float, bool)) and value != ""]
    if item.get("test"):
        facts.append(f"test {md_text(item['test'])}")
    lines = [" · ".join(facts)]
    lines += [f"{label}{md_text(cut(item[key], LINE_CHARS))}" for key, label in _NOTES if item.get(key)]
    out = ["  \n".join(lines), ""]
    quoted = item.get("data") if isinstance(item.get("data"), str) else item.get("body")
    if isinstance(quoted, str) and quoted:
        out += [md_quoted(quoted), ""]
    rest = {key: value for key, value in item.items()
            if key not in _SHOWN_APART and not isinstance(value, (str, int, float, bool)) and value is not None}
    if rest:
        out += [md_quoted(json.dumps(rest, ensure_ascii=False)), ""]
    return out


def shown_evidence(root: Root, frames: int, exchanges: int) -> tuple[list[dict[str, Any]], dict[int, list[str]],
                                                                  int]:
    """The head's evidence to show: the shared frame first, then other frames, then the exchanges' metadata.
    A frame is shown once: the same frame of another test's run (the same scenario played again) is named by
    its test only. Returns (the items, for each shown frame item's id the other tests naming its frame, how
    many items are not shown)."""
    items = list(root.head.get("evidence") or [])
    ordered = frames_first(([root.frame] if root.frame in items else []) + items)
    first_of: dict[tuple[Any, Any, Any], dict[str, Any]] = {}
    also: dict[int, list[str]] = {}
    picked: list[dict[str, Any]] = []
    seen: set[int] = set()
    for item in ordered:
        if id(item) in seen:
            continue
        seen.add(id(item))
        if names_frame(item):
            key = (item.get("binding"), item.get("exchange"), item["frame"])  # over another binding: another frame
            if key in first_of:
                if any(first_of[key] is p for p in picked):
                    also.setdefault(id(first_of[key]), []).append(str(item.get("test") or ""))
                continue
            first_of[key] = item
        wanted = frames if names_frame(item) else exchanges
        if sum(names_frame(p) == names_frame(item) for p in picked) < wanted:
            picked.append(item)
    named = sum(len(tests) for tests in also.values())
    hidden = len(items) - len(picked) - named + int(root.head.get("evidence_omitted") or 0)
    return picked, also, hidden


# -- failures, by root cause ---------------------------------------------------------------------------

@dataclass
class Section:
    """One root cause on the page: a root (roots.py), and the failures without a frame that gave the very same
    message (a target gone, a view that could not be built: said once, not once per requirement)."""

    root: Root
    same_message: list[dict[str, Any]] = field(default_factory=list)

    @property
    def entries(self) -> list[dict[str, Any]]:
        return self.root.entries + self.same_message

    @property
    def rank(self) -> tuple[int, int]:
        """Most severe first: an unexpected failure before one the baseline expects, then MUST before SHOULD
        before MAY (of the most severe requirement in it)."""
        if self.root.cause:  # a card that could not be read: the cause of the rest, first
            return (-1, -1)
        return min((int(e.get("baseline") == "expected"), LEVELS.index(e["level"]) if e["level"] in LEVELS
                    else len(LEVELS)) for e in self.entries)


def sections_of(failures: list[dict[str, Any]], a2a_url: str | None = None) -> list[Section]:
    sections: list[Section] = []
    by_message: dict[tuple[str, str], Section] = {}
    for root in group(failures, a2a_url):
        key = (root.head["status"], "\n".join(message_lines(root.head)))
        if root.frame is None and not root.members and key in by_message:
            by_message[key].same_message.append(root.head)
            continue
        section = Section(root)
        sections.append(section)
        if root.frame is None and not root.members:
            by_message.setdefault(key, section)
    return sorted(sections, key=lambda s: s.rank)  # stable: catalogue order within a rank


def baseline_note(entry: dict[str, Any]) -> str:
    mark = entry.get("baseline")
    reason = f": {md_text(cut(entry['baseline_reason'], LINE_CHARS))}" if entry.get("baseline_reason") else ""
    if mark == "expected":
        return f" · expected by baseline{reason}"
    if mark is None and entry.get("baseline_scenarios"):
        scenarios = ", ".join(entry.get("baseline_scenarios") or [])
        return f" · the baseline expects it only in {md_text(scenarios)}; it failed elsewhere{reason}"
    return ""


def over(entry: dict[str, Any]) -> str:
    """Over which bindings the entry's status was found ("" in a run without bindings)."""
    said = over_text(entry)
    return f" · over {md_text(said)}" if said else ""


def member_line(entry: dict[str, Any], why: str) -> str:
    return (f"- also failed {why}: **{md_text(entry['id'])}** — {md_text(cut(entry['title'], TITLE_CHARS))} "
            f"({entry['status']} · {entry['level']}{over(entry)}{baseline_note(entry)})")


def md_section_head(section: Section) -> list[str]:
    head = section.root.head
    lines = [f"### {head['status']} {md_text(head['id'])} — {md_text(head['title'])}", "",
             f"{head['level']} · {md_text(head['profile'])} · {md_source(head['source'])}{over(head)}"
             f"{baseline_note(head)}", ""]
    said = message_lines(head)
    if section.root.cause:
        lines += [f"**Root cause: {md_text(section.root.cause)}.** Likely fix: {md_text(section.root.fix or '')}", ""]
    else:
        lines += [md_text(cut(said[0], LINE_CHARS)) if said else "_(no message)_", ""]
    why = "on the agent whose card could not be read" if section.root.cause else "by this frame"
    listed = [(e, why) for e in section.root.members] + [(e, "with the same message")
                                                                      for e in section.same_message]
    lines += [member_line(e, why) for e, why in listed[:MEMBERS_SHOWN]]
    if len(listed) > MEMBERS_SHOWN:
        lines.append(f"- and {len(listed) - MEMBERS_SHOWN} more: "
                     + ids_line([e for e, _ in listed[MEMBERS_SHOWN:]]))
    return lines[:-1] if lines[-1] == "" else lines


def md_section_details(section: Section, frames: int, exchanges: int, full: bool) -> list[str]:
    """The folded part of a root: the rest of the head's message, the members' messages (`full`), and the
    head's evidence, frames first."""
    head = section.root.head
    items, also, hidden = shown_evidence(section.root, frames, exchanges)
    said = message_lines(head)
    n_frames = sum(names_frame(item) for item in items)
    shown = [counted(n_frames, "frame"), counted(len(items) - n_frames, "exchange")]
    if len(said) > 1 or (full and len(section.entries) > 1):
        shown.insert(0, "the messages")
    summary = ", ".join(s for s in shown if s)
    if not summary:
        return []  # nothing to fold
    summary = summary[0].upper() + summary[1:]
    lines = ["<details><summary>" + html.escape(summary) + "</summary>", ""]
    if len(said) > 1:
        lines += ["  \n".join(md_text(cut(line, LINE_CHARS)) for line in said[1:]), ""]
    if full:
        for entry in section.root.members + section.same_message:
            first = message_lines(entry)
            lines += [f"**{md_text(entry['id'])}**: " + (md_text(cut(first[0], LINE_CHARS)) if first else
                                                        "_(no message)_"), ""]
    for item in items:
        lines += md_item(item)
        if also.get(id(item)):
            tests = also[id(item)]
            more = f" and {len(tests) - 3} more" if len(tests) > 3 else ""
            lines += [f"_The same frame in the run of {counted(len(tests), 'more test')}: "
                      f"{md_text(', '.join(tests[:3]))}{more}_", ""]
    if hidden > 0:
        lines += [f"_{hidden} more evidence item(s) in compatibility.json_", ""]
    return lines + ["</details>"]


def md_failures(report: dict[str, Any], page: Page) -> list[tuple[Part, Section]]:
    failures = entries_with(report, FAILURES)
    if not failures:
        return []
    sections = sections_of(failures, (report.get("target") or {}).get("a2a"))
    # the count of roots.py (report.html and the Action count the same); those said alike are shown together
    alike = sum(len(section.same_message) for section in sections)
    together = f"; {alike} said what another said and are listed under it" if alike else ""
    page.add(block([f"## Failures: {len(failures)} requirement(s), {len(sections) + alike} root cause(s)"
                    f"{together}"]))
    parts = []
    for section in sections:
        head = md_section_head(section)
        forms = ["", block(head)]
        if section.root.head.get("evidence") or len(message_lines(section.root.head)) > 1 or len(section.entries) > 1:
            forms += [block(head + [""] + md_section_details(section, 1, 1, full=False)),
                      block(head + [""] + md_section_details(section, DETAIL_FRAMES, DETAIL_EXCHANGES, full=True))]
        parts.append((page.add(*forms), section))
    return parts


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
