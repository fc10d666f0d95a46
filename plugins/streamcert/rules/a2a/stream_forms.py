"""A2A-STREAM-011..013, 016, 017: the 1.0 forms of what a task stream carries: status timestamps in UTC
with milliseconds (every status the run's answers hold, streamed or not), ProtoJSON enum names,
messages and parts in their 1.0 shape (A2A §4, §5.6.1); the terminal status (and GetTask after the
streams) stamped no earlier than what came before it; no 0.3 `final` member.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterator

from ...contract.capture import NOT_SENT
from ...framelog import FrameLog
from ...outcomes import Outcome
from ...protocols import a2a, bindings
from .. import RuleContext, Unjudgeable, Verdict, ev_evidence, ex_evidence, rule
from ..common.framewalk import MISSING
from ..common.streamview import StreamFrames, read_frames
from ..engine import cannot_judge, unjudged_entry

ISO_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
ISO_MS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3,}Z$")


# -- timestamps --------------------------------------------------------------------------------------------

def _tasks_in(result: Any) -> list[dict]:
    if not isinstance(result, dict):
        return []
    if isinstance(result.get("tasks"), list):
        return [t for t in result["tasks"] if isinstance(t, dict)]
    if isinstance(result.get("task"), dict):
        return [result["task"]]
    if "status" in result and "id" in result:
        return [result]
    return []


def _statuses(log: FrameLog, unjudged: list[tuple[str, list[dict[str, Any]]]]) -> Iterator[tuple[dict[str, Any], Any]]:
    """(evidence, its timestamp or MISSING) for every TaskStatus the log holds: in stream events (as the walk over
    the frames read them) and in unary results (tasks and task lists). An answer that cannot be judged goes to
    `unjudged` instead."""
    for ex in log.exchanges:
        if ex.method == "POST" and ex.notes.get(NOT_SENT):
            unjudged.append(unjudged_entry(ex, ex.error or "not sent"))
        elif ex.method == "POST" and ex.status is not None and (why := cannot_judge(ex)):
            unjudged.append(unjudged_entry(ex, why))
        elif ex.is_stream:
            for ev, f in read_frames(ex).facts_of(a2a.TASK, a2a.STATUS_UPDATE):
                if f.has_status:
                    yield ev_evidence(ex, ev), f.timestamp
        elif ex.status is not None:
            result = bindings.read_answer(ex).result
            for task in _tasks_in(result):
                if isinstance(task.get("status"), dict):
                    yield ex_evidence(ex), task["status"].get("timestamp", MISSING)


@dataclass
class Timestamps:
    """Every status timestamp the run's answers carry, with where it was seen; the ones not in ISO 8601
    UTC with Z, and the ones in that form without milliseconds."""

    stamped: list[tuple[dict[str, Any], Any]]  # (evidence, timestamp)
    not_z: list[tuple[dict[str, Any], Any]]
    no_ms: list[tuple[dict[str, Any], Any]]
    unjudged: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> Timestamps:
        unjudged: list[tuple[str, list[dict[str, Any]]]] = []
        stamped = [(where, ts) for where, ts in _statuses(log, unjudged) if ts is not MISSING]
        if not stamped:
            raise Unjudgeable(*unjudged[0]) if unjudged else Unjudgeable(missing="no status carried a timestamp")
        not_z = [(w, ts) for w, ts in stamped if not isinstance(ts, str) or not ISO_Z.match(ts)]
        no_ms = [(w, ts) for w, ts in stamped if isinstance(ts, str) and ISO_Z.match(ts) and not ISO_MS.match(ts)]
        return cls(stamped, not_z, no_ms, unjudged)


@rule("A2A-STREAM-011", view=Timestamps)
def timestamps_utc(v: Timestamps, out: Verdict) -> None:
    if v.not_z:
        where, ts = v.not_z[0]
        out.failed(f"{len(v.not_z)} of {len(v.stamped)} status timestamps are not ISO 8601 UTC ending in Z, e.g. "
                   f"{ts!r} in {where['exchange']}", [w for w, _ in v.not_z[:5]])
    else:
        out.passed(f"{len(v.stamped)} status timestamps in UTC with Z")


@rule("A2A-STREAM-012", view=Timestamps)
def timestamps_millis(v: Timestamps, out: Verdict) -> None:
    if v.no_ms:
        where, ts = v.no_ms[0]
        out.warning(f"{len(v.no_ms)} of {len(v.stamped)} status timestamps carry no milliseconds, e.g. {ts!r} in "
                    f"{where['exchange']}", [w for w, _ in v.no_ms[:5]])
    elif v.not_z:  # A2A-STREAM-011 blames the form; no fraction digits to count here
        out.otherwise_not_tested("no timestamp in ISO 8601 UTC with Z to count fraction digits in (A2A-STREAM-011 "
                                 "blames their form)")
    elif (digits := sorted({len(ts.split(".")[1]) - 1 for _, ts in v.stamped})) == [3]:
        out.passed("timestamps carry milliseconds", reading="exactly milliseconds")
    else:
        # "Millisecond precision SHOULD be used": finer digits lose nothing, but are not the
        # letter of the text; reported, never failed.
        out.non_strict(f"timestamps carry {', '.join(map(str, digits))} fraction digits (finer than milliseconds), "
                       f"e.g. {v.stamped[0][1]!r}", reading="finer than milliseconds")


# -- names and shapes ----------------------------------------------------------------------------------

@rule("A2A-STREAM-013", view=StreamFrames)
def names_and_shapes(v: StreamFrames, out: Verdict) -> None:
    judged, bad = 0, []
    for s in v.streams:
        for ev, f in s.results.facts_of(*a2a.STREAM_RESULT_KINDS):
            judged += 1
            if problems := f.problems:
                bad.append((f"{s.label} frame {s.exchange.frame_number(ev)}: " + "; ".join(problems),
                            s.evidence(ev, "; ".join(problems))))
    if not out.fail_each("result(s) not in the 1.0 names and shapes (ProtoJSON enum names, a Part with exactly "
                         "one content)", bad) and judged:
        out.passed(f"{judged} results use the 1.0 names and shapes")
    out.otherwise_not_tested("no task stream carried a StreamResponse result")


# -- the order of status timestamps -------------------------------------------------------------------

_INSTANT = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$")


def instant(ts: Any) -> tuple[datetime, str] | None:
    """A status timestamp as a comparable instant (UTC; the fraction kept to every digit given), or None
    when it is absent or not an ISO 8601 date-time (A2A-STREAM-011 says so)."""
    found = _INSTANT.match(ts) if isinstance(ts, str) else None
    if not found:
        return None
    try:
        whole = datetime.fromisoformat(found[1] + ("+00:00" if found[3] == "Z" else found[3]))
    except ValueError:
        return None
    return whole.astimezone(timezone.utc), (found[2] or "").ljust(12, "0")


@dataclass
class Stamped:
    """One status the run saw, with where."""

    task_id: Any
    when: tuple[datetime, str]
    timestamp: str
    state: Any
    t: float  # when it arrived (the client's clock)
    evidence: dict[str, Any]


@dataclass
class StatusOrder:
    """For each task: the statuses its streams carried up to each one's terminal status (in arrival order), the
    terminal status of each stream, and each GetTask read after the task's streams had ended."""

    streamed: dict[Any, list[Stamped]]
    terminals: list[Stamped]
    read_after: list[Stamped]
    unjudged: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> StatusOrder:
        frames = StreamFrames.of(log, ctx)
        streamed: dict[Any, list[Stamped]] = {}
        terminals: list[Stamped] = []
        ended: dict[Any, float] = {}
        for s in frames.streams:
            first_terminal = s.terminal[0] if s.terminal else None
            # A status past the stream's terminal one came after the task's end: A2A-STREAM-008 blames it, and
            # is not compared here (it may reach the client before another stream's terminal, on its own connection)
            over = False
            for ev, f in s.results.facts_of(a2a.TASK, a2a.STATUS_UPDATE):
                task_id = f.ids[0]
                ended[task_id] = max(ended.get(task_id, 0.0), s.exchange.t_end or ev.t)
                if over or (when := instant(None if f.timestamp is MISSING else f.timestamp)) is None:
                    over = over or ev is first_terminal
                    continue
                over = ev is first_terminal
                seen = Stamped(task_id, when, f.timestamp, f.state, ev.t, s.evidence(ev))
                streamed.setdefault(task_id, []).append(seen)
                if ev is first_terminal:
                    terminals.append(seen)
        read_after = []
        for ex in log.exchanges:
            if ex.rpc_method != a2a.GET_TASK or ex.is_stream or ex.status is None or cannot_judge(ex):
                continue
            task = bindings.read_answer(ex).result
            status = task.get("status") if isinstance(task, dict) and isinstance(task.get("status"), dict) else {}
            task_id = task.get("id") if isinstance(task, dict) else None
            if task_id in ended and ex.t_sent >= ended[task_id] and (when := instant(status.get("timestamp"))):
                read_after.append(Stamped(task_id, when, status["timestamp"], status.get("state"), ex.t_end or ex.t_sent,
                                          ex_evidence(ex)))
        if not terminals and not read_after:
            raise Unjudgeable(missing="no terminal status streamed, nor GetTask read after the streams, carried a "
                                      "timestamp")
        return cls(streamed, terminals, read_after, frames.unjudged)


@rule("A2A-STREAM-016", view=StatusOrder)
def terminal_stamped_last(v: StatusOrder, out: Verdict) -> None:
    # Only the terminal status (nothing may follow it) and GetTask after the streams are compared: statuses
    # may arrive more than once or out of order (progress/v1), so arrival order alone is never a finding.
    bad = []
    for last, what in [(t, f"the terminal {t.state}") for t in v.terminals] + \
                      [(r, f"GetTask's {r.state} after the streams") for r in v.read_after]:
        before = [s for s in v.streamed.get(last.task_id, []) if s.t <= last.t and s.when > last.when]
        if before:
            later = max(before, key=lambda s: s.when)
            why = (f"{what} is stamped {last.timestamp}, earlier than the {later.state} streamed before it at "
                   f"{later.timestamp}")
            bad.append((why, [last.evidence, later.evidence]))
    if bad:
        out.failed(f"{len(bad)} status(es) stamped earlier than a status streamed before them; the first: "
                   f"{bad[0][0]}; a client that keeps the latest status by timestamp shows the earlier one",
                   [ev for _, pair in bad[:2] for ev in pair])
    else:
        out.passed(f"{len(v.terminals)} terminal status(es) and {len(v.read_after)} GetTask read(s) after the "
                   "streams stamped no earlier than any status streamed before them")


# -- the 0.3 final flag ------------------------------------------------------------------------------

@rule("A2A-STREAM-017", view=StreamFrames)
def no_final_flag(v: StreamFrames, out: Verdict) -> None:
    flagged, updates = [], 0
    for s in v.streams:
        for ev, f in s.results.facts_of(a2a.STATUS_UPDATE):
            updates += 1
            if f.final is not MISSING:
                why = f"{s.label} frame {s.exchange.frame_number(ev)}: final: {f.final!r}"
                flagged.append((why, s.evidence(ev, "a 0.3 final member")))
    # Version 1.0 removed the flag (the close ends a stream); a 1.0 client ignores a member it does not know
    # (A2A §5.7, SHOULD), so its presence is reported, not failed.
    if not out.fail_each("status update(s) with the 0.3 final member, which version 1.0 removed", flagged,
                         outcome=Outcome.NON_STRICT, reading="0.3 final member sent (1.0 clients ignore it)") \
            and updates:
        out.passed(f"{updates} status updates, none with a final member")
    out.otherwise_not_tested("no task stream carried a status update")
