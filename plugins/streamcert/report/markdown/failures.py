"""The failures on report.md, grouped by root cause (roots.py): each root's head with its sentence and message,
the others it caused under it, and the evidence that decided it (the frames and exchanges, folded)."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Any

from ...catalogue import LEVELS
from ..common import (
    FAILURES,
    entries_with,
    over_text,
)
from ..roots import Root, frames_first, group, names_frame
from .text import (
    DETAIL_EXCHANGES,
    DETAIL_FRAMES,
    FENCE_CHARS,
    FENCE_LINES,
    LINE_CHARS,
    MEMBERS_SHOWN,
    TITLE_CHARS,
    VALUE_CHARS,
    Page,
    Part,
    block,
    counted,
    cut,
    ids_line,
    md_fence,
    md_source,
    md_text,
    message_lines,
    size,
)

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
