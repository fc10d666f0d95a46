"""LINE-: the line a client draws for a progress object (seed 003 §2–§3), judged case by case.

Reads the log of drivers/line.py: the cases (log.notes["cases"]), the inputs in the order sent
(log.notes["inputs"]) and the renderer's output lines (exchange `line`), the n-th line answering the
n-th input. A case names the requirements it exercises; a line that differs from the case is blamed
on the part that differs:
  the text (before the last " · ")       the case's text requirements (LINE-001…006, 010, 012, 013)
  elapsed missing                        LINE-007 (the line is "{{text}} · {{elapsed}}")
  elapsed drawn for stopped / failed     LINE-011
  elapsed drawn with another value       LINE-009 in a ticking case, else LINE-008
The text-alone outputs are judged by LINE-013, the repeated pass by LINE-014. A line that matches
one of a case's `readings` passes, and the reading taken is reported.

An input with no line fails its case, and the finding says why (the renderer exited: its status and
stderr; it was cut at the per-exchange or stream limit). A renderer that drew no line at all before
the start-up limit, or whose output reached a size cap, gave nothing to judge: every requirement is
ERROR, naming the limit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ... import limits
from ...contract.capture import LIMIT
from ...contract.labels.line import LINE
from ...contract.line import CASES, CASES_ERROR, CASES_SOURCE, INPUTS
from ...framelog import END_ERROR, FrameLog
from ...wire.stdio import how_it_ended
from .. import RuleContext, Unjudgeable, Verdicts, quote, rule

SEPARATOR = " · "
# Limits whose stop leaves the run unjudged (the others leave inputs with no line, blamed case by case).
UNJUDGED_AT = {limits.START.field, limits.MAX_STREAM.field, limits.MAX_EVENT.field}
IDS = tuple(f"LINE-{n:03d}" for n in range(1, 15))
TIME_IDS = {"LINE-007", "LINE-008", "LINE-009", "LINE-011"}
EVIDENCE_LIMIT = 12
NO_LINE = "(no line)"  # what an input the renderer drew no line for shows as `got`
MISSING = "no line for this input: "

def split_line(line: str) -> tuple[str, str | None]:
    """(text, elapsed) of a line; elapsed None when the line has no separator."""
    if SEPARATOR in line:
        text, tail = line.rsplit(SEPARATOR, 1)
        return text, tail
    return line, None


def match(got: str, case: dict[str, Any], key: str) -> tuple[bool, str | None]:
    """Whether `got` is the case's line (key "line") or text ("text"); the reading's name if one was taken."""
    if got == case[key]:
        return True, None
    for reading in case.get("readings", []):
        if got == reading[key]:
            return True, reading["name"]
    return False, None


def blame(case: dict[str, Any], got: str) -> tuple[set[str], set[str], str]:
    """(the requirements a wrong line breaks, those it can still be credited with, which part differs).

    A requirement is credited only when the part of the line it concerns is as the case says: an
    unreadable line credits nothing about its elapsed."""
    listed = set(case["requirements"])
    want_text, want_tail = split_line(case["line"])
    got_text, got_tail = split_line(got)
    readings = case.get("readings", [])
    text_ok = got_text == want_text or any(split_line(r["line"])[0] == got_text for r in readings)
    tail_ok = got_tail == want_tail or any(split_line(r["line"])[1] == got_tail for r in readings)
    broken: set[str] = set()
    parts = []
    if not text_ok:
        broken |= (listed - TIME_IDS) or {"LINE-001"}
        parts.append("the text")
    if not tail_ok:
        if want_tail is None:
            broken.add("LINE-011")
            parts.append("elapsed drawn where the text stands alone")
        elif got_tail is None:
            broken.add("LINE-007")
            parts.append("no · elapsed")
        else:
            broken.add("LINE-009" if "LINE-009" in listed else "LINE-008")
            parts.append("elapsed")
    credited = (listed - TIME_IDS if text_ok else set()) | (listed & TIME_IDS if tail_ok else set())
    return broken or listed, credited - broken, " and ".join(parts) or "the line"


@dataclass
class Tally:
    """What one requirement saw over the cases."""

    passed: int = 0
    readings: set[str] = field(default_factory=set)
    failures: list[dict[str, Any]] = field(default_factory=list)


def _evidence(case: dict[str, Any], sent: str, expected: str, got: str | None, note: str) -> dict[str, Any]:
    return {"exchange": "line", "case": case["name"], "group": case["group"], "input": quote(sent),
            "expected": expected, "got": NO_LINE if got is None else quote(got), "note": note}


@dataclass
class LineRun:
    """What a renderer drew for the cases: per requirement, the cases drawn right and those drawn wrong."""

    tallies: dict[str, Tally]
    cases_source: str

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> "LineRun":
        if log.notes.get(CASES_ERROR):
            raise Unjudgeable(f"the cases could not be used: {log.notes[CASES_ERROR]}")
        ex = log.get(LINE)
        if ex is None or CASES not in log.notes:
            raise Unjudgeable()
        if ex.end == END_ERROR:
            raise Unjudgeable(f"the renderer did not start ({ex.url}): {ex.error}")
        stop = ex.notes.get(LIMIT)
        if isinstance(stop, dict) and stop.get("cap") in UNJUDGED_AT:
            raise Unjudgeable(f"the renderer drew {len(ex.events)} line(s) for {len(log.notes[INPUTS])} inputs "
                              f"and {how_it_ended(ex)}")
        inputs = log.notes[INPUTS]
        sent = list(ex.request_body or [])
        lines = [ev.data for ev in ex.events]
        answers: dict[tuple[str, int], str | None] = {}
        sent_of: dict[tuple[str, int], str] = {}
        for n, item in enumerate(inputs):
            answers[(item["case"], item["pass"])] = lines[n] if n < len(lines) else None
            sent_of[(item["case"], item["pass"])] = sent[n] if n < len(sent) else json.dumps(item)
        tallies = {r: Tally() for r in IDS}
        missing_note = _missing_note(ex, len(lines), len(inputs))
        for case in log.notes[CASES]:
            name = case["name"]
            got = answers.get((name, 1))
            _judge_line(case, got, sent_of[(name, 1)], tallies, missing_note)
            _judge_text(case, got, answers.get((name, 2)), sent_of[(name, 2)], tallies["LINE-013"], missing_note)
            _judge_repeat(case, got, answers.get((name, 3)), sent_of[(name, 3)], tallies["LINE-014"], missing_note)
        return cls(tallies, log.notes.get(CASES_SOURCE, "the cases"))


@rule(*IDS, view=LineRun)
def line_cases(v: LineRun, out: Verdicts) -> None:
    for rid, t in v.tallies.items():
        if t.failures:
            shown = "; ".join(f"{e['case']}: expected {e['expected']!r}, got {e['got']!r}" for e in t.failures[:3])
            more = f" (and {len(t.failures) - 3} more)" if len(t.failures) > 3 else ""
            # Why lines are missing, once, first: the renderer exited, or was cut at a limit.
            missing = [e for e in t.failures if e["got"] == NO_LINE]
            why = f", {len(missing)} with no line ({missing[0]['note'].removeprefix(MISSING)})" if missing else ""
            out[rid].failed(f"{len(t.failures)} case(s) drawn wrong{why}: {shown}{more}", t.failures[:EVIDENCE_LIMIT],
                            measured={"cases_failed": len(t.failures), "cases_passed": t.passed})
        elif t.passed:
            out[rid].passed(f"{t.passed} case(s) drawn as {v.cases_source} says", measured={"cases_passed": t.passed},
                            reading="; ".join(sorted(t.readings)) or None)


def _judge_line(case: dict[str, Any], got: str | None, sent: str, tallies: dict[str, Tally], missing: str) -> None:
    """The whole line, against the case: credited to the case's requirements, or blamed on the part that differs."""
    if got is None:
        for r in case["requirements"]:
            tallies[r].failures.append(_evidence(case, sent, case["line"], None, missing))
        return
    good, reading = match(got, case, "line")
    if good:
        for r in case["requirements"]:
            tallies[r].passed += 1
            if reading:
                tallies[r].readings.add(f"{reading} ({case['name']})")
        return
    broken, credited, part = blame(case, got)
    for r in credited:
        tallies[r].passed += 1
    for r in broken:
        tallies[r].failures.append(_evidence(case, sent, case["line"], got, f"{part} differs"))


def _missing_note(ex, have: int, want: int) -> str:
    return f"{MISSING}the renderer wrote {have} line(s) for {want} input(s) and {how_it_ended(ex)}"


def _judge_text(case, line_got: str | None, got: str | None, sent: str, tally: Tally, missing: str) -> None:
    """LINE-013: the text alone is the case's text, or, where the line itself was wrong (and blamed
    there), at least the renderer's own line without its · elapsed."""
    if got is None:
        tally.failures.append(_evidence(case, sent, case["text"], None, missing))
        return
    good, reading = match(got, case, "text")
    if good:
        tally.passed += 1
        if reading:
            tally.readings.add(f"{reading} ({case['name']})")
        return
    if line_got is not None and not match(line_got, case, "line")[0] and got == split_line(line_got)[0]:
        tally.passed += 1  # consistent with a line already blamed on its own requirements
        return
    tally.failures.append(_evidence(case, sent, case["text"], got, "the text alone differs"))


def _judge_repeat(case, first: str | None, again: str | None, sent: str, tally: Tally, missing: str) -> None:
    """LINE-014: the same object at the same now, sent again later (in another order), draws the same line."""
    if first is None:
        return
    if again is None:
        tally.failures.append(_evidence(case, sent, first, None, missing))
    elif again != first:
        tally.failures.append(_evidence(case, sent, first, again, "the same input drew another line the second time"))
    else:
        tally.passed += 1
