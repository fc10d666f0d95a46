"""A2A-INT-007, A2A-INT-008: the task's several streams and reads in an interrupted-state scenario.

A2A-INT-007 reads every task stream of the log (streamview.StreamFrames) against the others and against
the messages sent to the task: a stream still open when the task moves on carries that move, and none
ends before a terminal or, per D3, an interrupted state (A2A §3.5.2, §3.1.2, §11.7).
A2A-INT-008 compares the reads with the streams: GetTask once the streams have ended (as A2A-TASK-001…003
do for one stream, on the streams read together) and ListTasks at each pause.

Labels read: list_pause_N (streamcert.drivers.interactions); everything else by method.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...contract.labels.interactions import LIST_PAUSE_PREFIX
from ...framelog import END_CLIENT_STOP, END_CLOSED, END_RESET, Event, Exchange, FrameLog
from ...protocols import a2a, bindings
from ...protocols.interactions_v1 import interaction_of, status_key
from .. import RuleContext, Unjudgeable, Verdict, ex_evidence, quote, rule
from ..a2a.task import TaskAfterStream, artifacts_after_stream, message_after_stream, state_after_stream
from ..common.streamview import MESSAGE_METHODS, REPEAT_ANSWERED_ONCE, Frames, StreamFrames, TaskStream
from ..common.unary import Answer
from .ixview import Interruptions, reply, text_of

# How long a stream must have stayed open after a status reached another stream for it to count as missed:
# the same event written to two connections may arrive a little apart.
SLACK_S = 0.25


def _params(ex: Exchange) -> dict[str, Any]:
    params = ex.params
    return params if isinstance(params, dict) else {}


def reaches(ex: Exchange, task_id: Any) -> bool:
    """Whether a request is a second request to the task: a message naming it, or a SubscribeToTask of it."""
    params = _params(ex)
    if ex.rpc_method in MESSAGE_METHODS:
        message = params.get("message")
        return isinstance(message, dict) and message.get("taskId") == task_id
    return ex.rpc_method == a2a.SUBSCRIBE_TO_TASK and params.get("id") == task_id


def _taken(ex: Exchange) -> bool:
    """A message the server took: answered with a result, not a JSON-RPC error."""
    took, _ = reply(ex)
    return bool(took)


@dataclass
class Carrier:
    """One task stream, with what it carried."""

    frames: Frames
    task_id: Any
    keys: set = field(default_factory=set)  # the status_key of every status it carried (Task frames too)
    statuses: list[tuple[Event, dict[str, Any]]] = field(default_factory=list)  # (Task frames too)
    updates: list[tuple[Event, dict[str, Any]]] = field(default_factory=list)  # the statusUpdates only: events

    @property
    def exchange(self) -> Exchange:
        return self.frames.exchange

    @property
    def opened(self) -> float:
        events = self.exchange.data_events()
        return events[0].t if events else (self.exchange.t_headers or self.exchange.t_sent)

    @property
    def last_t(self) -> float:
        events = self.exchange.data_events()
        return events[-1].t if events else self.opened

    @property
    def ended(self) -> float:
        return self.exchange.t_end if self.exchange.t_end is not None else self.last_t

    @property
    def last_state(self) -> Any:
        states = self.frames.states
        return states[-1][1] if states else None


@dataclass
class TaskStreams:
    """Every task stream of the log with what it carried, the requests that reached each task, and the
    statuses the unary answers showed (arrival time, task id, status)."""

    log: FrameLog
    carriers: list[Carrier]
    unary: list[tuple[float, Any, dict[str, Any], Exchange]]
    unjudged: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> TaskStreams:
        frames = StreamFrames.of(log, ctx)
        if not frames.streams:
            raise Unjudgeable(*frames.unjudged[0]) if frames.unjudged else Unjudgeable()
        carriers = []
        for s in frames.streams:
            carrier = Carrier(s, TaskStream.from_exchange(s.exchange).task_id)
            for ev, kind, body in s.results.of_kind(a2a.TASK, a2a.STATUS_UPDATE):
                if isinstance(body, dict) and isinstance(body.get("status"), dict):
                    carrier.keys.add(_key(body["status"]))
                    carrier.statuses.append((ev, body["status"]))
                    if kind == a2a.STATUS_UPDATE:
                        carrier.updates.append((ev, body["status"]))
            carriers.append(carrier)
        unary = []
        for ex in log.exchanges:
            if ex.is_stream or ex.status is None or ex.t_end is None:
                continue
            result = bindings.read_answer(ex).result
            tasks = result.get("tasks") if isinstance(result, dict) and isinstance(result.get("tasks"), list) else \
                [result.get("task") if isinstance(result, dict) and "task" in result else result]
            for task in tasks:
                if isinstance(task, dict) and isinstance(task.get("status"), dict):
                    unary.append((ex.t_end, task.get("id"), task["status"], ex))
        return cls(log, carriers, unary, frames.unjudged)

    def requests_to(self, task_id: Any, start: float, end: float, but: Exchange) -> list[Exchange]:
        """The requests that reached task `task_id` between `start` and `end`, `but` aside."""
        return [ex for ex in self.log.exchanges if ex is not but and start <= ex.t_sent <= end and reaches(ex, task_id)]


def _key(status: dict[str, Any]) -> str:
    key = status_key(status)
    return json.dumps(key, sort_keys=True, default=str)


def _moved_past(v: TaskStreams, c: Carrier, since: float, pause: dict[str, Any]) -> str | None:
    """What shows the task went on after `since` beyond the status `pause` (another stream's status, a reply's
    task), or None."""
    for o in v.carriers:
        if o is c or o.task_id != c.task_id:
            continue
        for ev, status in o.statuses:
            if ev.t > since and _key(status) != _key(pause):
                return f"{o.exchange.label} carried {status.get('state')} after it"
    for t, task_id, status, ex in v.unary:
        if t > since and task_id == c.task_id and (status.get("state") != pause.get("state")
                                                  or text_of(status.get("message")) != text_of(pause.get("message"))):
            return f"{ex.label} ({ex.rpc_method}) then showed {status.get('state')}"
    return None


def _ended_early(v: TaskStreams, c: Carrier) -> tuple[str, list[dict]] | None:
    ex = c.exchange
    last = c.last_state
    if ex.end not in (END_CLOSED, END_RESET) or a2a.is_terminal(last) or a2a.is_interrupted(last):
        return None
    how = "closed" if ex.end == END_CLOSED else f"was reset ({ex.error})" if ex.error else "was reset"
    others = v.requests_to(c.task_id, ex.t_sent, c.ended, ex)
    after = f", after {', '.join(f'{o.label} ({o.rpc_method})' for o in others[:3])} reached the task" if others else ""
    return (f"{ex.label} {how} at {last or 'no state'}{after}; a task stream ends only at a terminal or, per D3, "
            "an interrupted state", [ex_evidence(ex)] + [ex_evidence(o) for o in others[:2]])


def _missed(v: TaskStreams, c: Carrier) -> tuple[str, list[dict]] | None:
    """A status update another stream of the task carried while this one was open, which this one never
    carried (a Task frame is a read of the task, not an event: a stream need not have carried it)."""
    for o in v.carriers:
        if o is c or o.task_id != c.task_id:
            continue
        for ev, status in o.updates:
            if c.opened < ev.t and ev.t + SLACK_S < c.ended and _key(status) not in c.keys:
                cut = "" if c.exchange.end == END_CLOSED else f" until it ended ({c.exchange.end})"
                return (f"{c.exchange.label} was open when {o.exchange.label} carried {status.get('state')} "
                        f"(frame {o.exchange.frame_number(ev)}) and never carried it{cut}; every open stream of a "
                        "task receives its events", [o.frames.evidence(ev, "carried elsewhere"),
                                                    ex_evidence(c.exchange, "never carried it")])
    return None


def _silent_after_answer(v: TaskStreams, c: Carrier) -> tuple[str, list[dict]] | None:
    """The stream stayed open at a pause past an answer the server took, and carried nothing after it while
    the task went on: not the open reading of D3, whose stream carries what follows."""
    if not c.statuses or not a2a.is_interrupted(c.last_state):
        return None
    pause_ev, pause = c.statuses[-1]
    for m in v.requests_to(c.task_id, c.last_t, c.ended - SLACK_S, c.exchange):
        if m.rpc_method not in MESSAGE_METHODS or not _taken(m):
            continue
        moved = _moved_past(v, c, m.t_sent, pause)
        if moved:
            ended = "closed" if c.exchange.end == END_CLOSED else f"was cut ({c.exchange.end})"
            return (f"{c.exchange.label} stayed open at {pause.get('state')} after {m.label} ({m.rpc_method}) was "
                    f"taken and carried nothing more until it {ended} {c.ended - m.t_sent:.1f} s later, while the task "
                    f"went on ({moved})", [c.frames.evidence(pause_ev, "its last event"), ex_evidence(m)])
    return None


@rule("A2A-INT-007", view=TaskStreams)
def open_streams_carry_the_task_on(v: TaskStreams, out: Verdict) -> None:
    bad, kept, readings = [], [], set()
    for c in v.carriers:
        if c.exchange.end == END_CLIENT_STOP:
            continue  # the driver stopped reading on purpose
        if (first := c.frames.repeats) is not None:  # the repeat starts nothing: the first message's streams go on
            kept.append(f"{c.exchange.label} (repeats {first.label}'s messageId: the Task as it is, then closed)")
            readings.add(REPEAT_ANSWERED_ONCE)
            continue
        problem = _ended_early(v, c) or _missed(v, c) or _silent_after_answer(v, c)
        if problem:
            bad.append(problem)
        else:
            rest = "closed" if c.exchange.end == END_CLOSED else c.exchange.end
            kept.append(f"{c.exchange.label} ({rest} at {c.last_state})")
    if bad:
        out.failed(f"{len(bad)} stream(s) of the task that did not carry it on; the first: {bad[0][0]}",
                   [item for _, evidence in bad[:2] for item in evidence])
    elif kept:
        out.passed(f"every stream carried the task on while it was open: {', '.join(kept)}",
                   reading="; ".join(sorted(readings)) or None)


# -- A2A-INT-008 ---------------------------------------------------------------------------------------

@dataclass
class ReadsAgree:
    """GetTask once the task's streams had ended (with the streams read together), and the ListTasks read
    at each pause beside the pause."""

    end: TaskAfterStream | None
    lost: Unjudgeable | None
    pauses: Interruptions

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> ReadsAgree:
        end, lost = None, None
        try:
            end = TaskAfterStream.of(log, ctx)
        except Unjudgeable as why:
            lost = why if why.message else None
        pauses = Interruptions.of(log, ctx)
        if end is None and lost is None and not any(log.get(f"{LIST_PAUSE_PREFIX}{p.n}") for p in pauses.pauses):
            raise Unjudgeable()
        return cls(end, lost, pauses)


def _went_on_unseen(v: ReadsAgree) -> bool:
    """The streams all ended at a pause and a message to the task was taken after it: the task may have gone on
    where no stream could show it, so where the streams ended says nothing of GetTask later."""
    last = v.end.stream.last_status_event
    if last is None or a2a.is_terminal(v.end.stream.last_state):
        return False
    return any(ex.rpc_method in MESSAGE_METHODS and ex.t_sent > last.t and reaches(ex, v.end.stream.task_id)
               and _taken(ex) for ex in v.pauses.log.exchanges)


def _listed(ex: Exchange, task_id: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The task's entry in a ListTasks answer, or what is wrong instead."""
    ans = Answer.of(ex)
    if ans.problem or ans.error is not None:
        return None, f"{ex.label} (ListTasks) did not list tasks: {ans.describe()}"
    tasks = ans.result.get("tasks") if isinstance(ans.result, dict) else None
    if not isinstance(tasks, list):
        return None, f"{ex.label} (ListTasks) answered without a tasks array: {quote(json.dumps(ans.result), 200)}"
    entry = next((t for t in tasks if isinstance(t, dict) and t.get("id") == task_id), None)
    return entry, None if entry is not None else f"{ex.label} (ListTasks by its context) does not list task {task_id}"


@rule("A2A-INT-008", view=ReadsAgree)
def reads_agree_with_the_streams(v: ReadsAgree, out: Verdict) -> None:
    if v.lost is not None:
        out.error(v.lost.message, v.lost.evidence)
    elif v.end is not None and v.end.stream.last_state is not None and not _went_on_unseen(v):
        for compare in (state_after_stream, message_after_stream, artifacts_after_stream):
            compare(v.end, out)
    listed, bad = 0, []
    for pause in v.pauses.pauses:
        ex = v.pauses.log.get(f"{LIST_PAUSE_PREFIX}{pause.n}")
        if ex is None:
            continue
        if ex.status is None or ex.end == "error":
            out.error(f"{ex.label} (ListTasks) got no answer: {ex.error or 'no answer'}", [ex_evidence(ex)])
            continue
        entry, wrong = _listed(ex, v.pauses.task_id)
        listed += 1
        if wrong:
            bad.append((wrong, ex_evidence(ex)))
            continue
        status = entry.get("status") if isinstance(entry.get("status"), dict) else {}
        problems = []
        if status.get("state") != pause.state:
            problems.append(f"state {status.get('state')}, not the pause's {pause.state}")
        if text_of(status.get("message")) != text_of(pause.message):
            problems.append(f"status message text {text_of(status.get('message'))!r}, not {text_of(pause.message)!r}")
        if v.pauses.extension and pause.interaction is not None and interaction_of(status.get("message")) != \
                pause.interaction:
            problems.append(f"open interaction {quote(json.dumps(interaction_of(status.get('message'))), 200)}, not the "
                            f"stream's {quote(json.dumps(pause.interaction), 200)}")
        if problems:
            why = f"{ex.label}: the task at pause {pause.n} shows " + "; ".join(problems)
            bad.append((why, ex_evidence(ex, why)))
    if not out.fail_each("ListTasks read(s) at a pause that do not show the task as the stream paused it", bad) \
            and listed:
        out.passed(f"ListTasks at {listed} pause(s) shows the task in the pause's state, text and interaction")
