"""A2A-TASK-010…012: CancelTask ends the task and its stream; SubscribeToTask sends the Task, then
the task stream's own events, and ends with it.

Labels read (written by streamcert.drivers.a2a, scenario cancel-subscribe): stream (the task's
SendStreamingMessage), subscribe (SubscribeToTask on it), cancel, get_task (after the cancel).
A2A-TASK-011 reads every SubscribeToTask of a run by its method (one opened at a pause too); a
refusal of one on a task that had not ended is a finding about what came, never a harness fault.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...contract.labels.a2a import CANCEL, GET_TASK, STREAM, SUBSCRIBE
from ...framelog import END_CLIENT_STOP, Exchange, FrameLog
from ...outcomes import Outcome
from ...protocols import a2a, bindings
from .. import RuleContext, Unjudgeable, Verdict, ev_evidence, ex_evidence, rule
from ..common.streamview import TaskStream
from ..common.unary import Answer, Reply, dump, state_of, task_of, task_reply
from .task import last_status_evidence, task_stream


@dataclass
class Cancellation:
    """What CancelTask returned, the canceled task's stream, and GetTask after the cancel (each when the log holds it)."""

    cancel: Reply
    stream: TaskStream | None
    read_back: Reply | None
    ended_first: tuple[float, str] | None = None  # the cancel raced the task's end: (when it was seen, state)

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> Cancellation:
        ex = log.get(CANCEL)
        if ex is None:
            raise Unjudgeable()
        cancel = task_reply(ex, "CancelTask").needed()
        ex_s, ex_g = log.get(STREAM), log.get(GET_TASK)
        # A CancelTask that returned no task is the finding, whatever became of the stream.
        stream = task_stream(ex_s) if ex_s is not None and not cancel.wrong else None
        ended = _ended_first(log, ex, ctx.tolerance("A2A-TASK-010", "race_s", RACE_S)) if cancel.wrong else None
        return cls(cancel, stream, task_reply(ex_g, "GetTask") if ex_g is not None else None, ended)


RACE_S = 1.0  # how soon after CancelTask's answer a terminal state seen still shows the task ended first


def _ended_first(log: FrameLog, cancel: Exchange, tolerance: float) -> tuple[float, str] | None:
    """A CancelTask refused with TaskNotCancelableError on a task the run shows ended by itself first: a
    terminal state other than CANCELED seen (on a stream, or in an answer) no later than `tolerance` after the
    refusal came, and no sign of the task at work after it. (arrival, state); None otherwise."""
    error = bindings.read_answer(cancel).error
    if not isinstance(error, dict) or error.get("code") != a2a.TASK_NOT_CANCELABLE:
        return None
    task_id = cancel.params.get("id") if isinstance(cancel.params, dict) else None
    refused_at = cancel.t_end if cancel.t_end is not None else cancel.t_sent
    if task_id is None or _alive_after(log, task_id, refused_at):
        return None
    seen = []
    for ex in log.exchanges:
        if ex.is_stream:
            seen += [(at, state) for at, state in _streamed_states(ex, task_id) if a2a.is_terminal(state)]
        elif ex is not cancel and ex.t_end is not None and ex.status is not None:
            task = task_of(bindings.read_answer(ex).result)
            if isinstance(task, dict) and task.get("id") == task_id and a2a.is_terminal(state_of(task)):
                seen.append((ex.t_end, state_of(task)))
    first = min(seen, default=None)
    if first is None or first[1] == a2a.CANCELED or first[0] > refused_at + tolerance:
        return None
    return first


@dataclass
class Subscription:
    """One SubscribeToTask on a task the run had not seen end (one on an ended task is A2A-ERR-005's), the
    id it asked for, and its answer: a stream to read, or what came instead (`refused`)."""

    exchange: Exchange
    task_id: Any
    stream: TaskStream | None = None
    refused: str | None = None  # what came instead of an event stream, as a finding says it


@dataclass
class Subscriptions:
    """Every SubscribeToTask of the run (the scenario's `subscribe`, each one opened at a pause), by method."""

    subscriptions: list[Subscription]

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> Subscriptions:
        found = []
        for ex in log.exchanges:
            if ex.rpc_method != a2a.SUBSCRIBE_TO_TASK:
                continue
            params = ex.params
            task_id = params.get("id") if isinstance(params, dict) else None
            if a2a.is_terminal(_state_before(log, task_id, ex.t_sent)):
                continue
            stream = task_stream(ex)  # an answer that got nothing is ERROR, as before
            refused = _refusal(ex, stream)
            if refused and _refused_as_ended(ex) and not _alive_after(log, task_id, ex.t_end or ex.t_sent):
                continue  # the task ended unseen before the request reached it: A2A-ERR-005's case, not this one
            found.append(Subscription(ex, task_id, stream, refused))
        if not found:
            raise Unjudgeable()
        return cls(found)


def _state_before(log: FrameLog, task_id: Any, t: float) -> str | None:
    """The last state the run saw of task `task_id` before time `t` (a streamed status, or a Task a call
    returned); a terminal state once seen stays (a task does not leave it)."""
    latest: tuple[float, str | None] = (-1.0, None)
    for ex in log.exchanges:
        if ex.is_stream:
            for at, state in _streamed_states(ex, task_id):
                if at < t and at > latest[0]:
                    latest = (at, state) if not a2a.is_terminal(latest[1]) else latest
        elif ex.t_end is not None and ex.t_end < t and ex.status is not None:
            task = task_of(bindings.read_answer(ex).result)
            if isinstance(task, dict) and task.get("id") == task_id and ex.t_end > latest[0] \
                    and not a2a.is_terminal(latest[1]):
                latest = (ex.t_end, state_of(task))
    return latest[1]


def _streamed_states(ex: Exchange, task_id: Any) -> list[tuple[float, str]]:
    """(arrival, state) of every Task or status update of task `task_id` that the stream `ex` carried."""
    out = []
    for ev in ex.data_events():
        result = bindings.frame_answer(ex.binding, ev.payload)[0]
        kind = a2a.stream_kind(result)
        body = result[kind] if kind else None
        named = body.get("id") if kind == a2a.TASK else (body or {}).get("taskId")
        if named == task_id and (state := state_of(body)):
            out.append((ev.t, state))
    return out


def _refused_as_ended(ex: Exchange) -> bool:
    """Refused with UnsupportedOperationError, the answer to a SubscribeToTask on an ended task."""
    error = bindings.read_answer(ex).error
    return isinstance(error, dict) and error.get("code") == a2a.UNSUPPORTED_OPERATION


def _alive_after(log: FrameLog, task_id: Any, t: float) -> bool:
    """Whether the run shows task `task_id` not ended after time `t`: a state that is not terminal arriving
    later, or a CancelTask sent later that returned a task (one that has ended cannot be canceled)."""
    for ex in log.exchanges:
        if ex.is_stream:
            if any(at > t and not a2a.is_terminal(state) for at, state in _streamed_states(ex, task_id)):
                return True
        elif ex.t_sent > t and ex.status is not None:
            task = task_of(bindings.read_answer(ex).result)
            if isinstance(task, dict) and task.get("id") == task_id and (
                    ex.rpc_method == a2a.CANCEL_TASK or not a2a.is_terminal(state_of(task))):
                return True
    return False


def _refusal(ex: Exchange, stream: TaskStream) -> str | None:
    """What a SubscribeToTask got instead of an event stream, said as what was received (None: a stream)."""
    if not ex.is_stream:
        ans = Answer.of(ex)
        return (f"answered HTTP {ex.status} {ex.content_type or '(no Content-Type)'} instead of an event stream: "
                f"{ans.describe()}")
    if stream.items and all(item.kind == "error" for item in stream.items):
        return f"answered with an event stream holding only an error: {dump(stream.errors[0][1])}"
    return None


@dataclass
class TwoStreams:
    """The task stream and a SubscribeToTask stream on the same task."""

    main: TaskStream
    sub: TaskStream

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> TwoStreams:
        ex_m, ex_s = log.get(STREAM), log.get(SUBSCRIBE)
        if ex_m is None or ex_s is None:
            raise Unjudgeable()
        main = task_stream(ex_m)
        sub = task_stream(ex_s)
        if _refusal(ex_s, sub):
            raise Unjudgeable()  # no stream to compare: A2A-TASK-011 says what came instead
        return cls(main, sub)


# -- the rules ------------------------------------------------------------------------------------------

@rule("A2A-TASK-010", view=Cancellation)
def cancel_ends_the_task(v: Cancellation, out: Verdict) -> None:
    if v.ended_first is not None:  # the cancel raced the task's end: its refusal is right, nothing was canceled
        at, state = v.ended_first
        out.add(Outcome.NOT_TESTED, f"the task ended by itself ({state}, seen at {at:.3f} s) before CancelTask "
                f"reached it, which the server rightly refused with TaskNotCancelableError: cancellation was not "
                f"exercised", v.cancel.evidence)
        return
    if v.cancel.explain(out):
        return
    problems: list[str] = []
    evidence = v.cancel.evidence
    if state_of(v.cancel.value) != a2a.CANCELED:
        problems.append(f"CancelTask returned the task in state {state_of(v.cancel.value)!r}")
    if v.stream is not None:
        if v.stream.last_state != a2a.CANCELED:
            problems.append(f"the task's stream ended at {v.stream.last_state}, not {a2a.CANCELED}")
            evidence += last_status_evidence(v.stream, "last status of the stream")
        elif not v.stream.closed:
            problems.append(f"the task's stream reached {a2a.CANCELED} but did not close (end: {v.stream.exchange.end})")
            evidence.append(ex_evidence(v.stream.exchange))
    if v.read_back is not None and v.read_back.value is not None and state_of(v.read_back.value) != a2a.CANCELED:
        problems.append(f"GetTask after the cancel shows state {state_of(v.read_back.value)!r}")
        evidence += v.read_back.evidence
    if problems:
        out.failed("; ".join(problems), evidence)
    else:
        out.passed(f"CancelTask returned {a2a.CANCELED}; the stream ended there and closed")


@rule("A2A-TASK-011", view=Subscriptions)
def task_first_then_the_end(v: Subscriptions, out: Verdict) -> None:
    for sub in v.subscriptions:
        ex, label = sub.exchange, sub.exchange.label
        if sub.refused:
            out.failed(f"{label}: SubscribeToTask on task {sub.task_id}, which had not ended, was {sub.refused}",
                       [ex_evidence(ex)])
            continue
        problems, evidence = _subscription_problems(sub)
        if problems:
            out.failed(f"{label}: SubscribeToTask: " + "; ".join(problems), evidence)
            continue
        last = sub.stream.last_state
        if ex.end == END_CLIENT_STOP:
            out.passed(f"{label}: SubscribeToTask sent the Task first (the driver stopped reading at {last})")
        elif a2a.is_terminal(last):
            out.passed(f"{label}: SubscribeToTask sent the Task first and closed after {last}",
                       reading="ends at a terminal state")
        else:  # closed at an interrupted state: conflict D3, the close reading (A2A §11.7)
            out.passed(f"{label}: SubscribeToTask sent the Task first and closed at {last} (D3: the stream closes at "
                       "an interrupted state)", reading="D3: closes at an interrupted state")


def _subscription_problems(sub: Subscription) -> tuple[list[str], list[dict]]:
    stream, ex = sub.stream, sub.exchange
    items = stream.items if stream is not None else []
    if not items:
        return [f"the stream carried no data event (ended: {ex.end})"], [ex_evidence(ex)]
    problems: list[str] = []
    evidence: list[dict] = []
    first = items[0]
    if first.kind != "task":
        problems.append(f"the first event is {first.kind or 'no StreamResponse'}, not the Task")
        evidence.append(ev_evidence(ex, first.event, "first event"))
    elif sub.task_id and first.body.get("id") != sub.task_id:
        problems.append(f"the first Task is {first.body.get('id')!r}, not the subscribed task {sub.task_id}")
        evidence.append(ev_evidence(ex, first.event, "first event"))
    if ex.end == END_CLIENT_STOP:
        return problems, evidence
    last = stream.last_state
    at_rest = a2a.is_terminal(last) or a2a.is_interrupted(last)
    if not at_rest:
        last_item = items[-1]
        problems.append(f"the last event is {last_item.kind or 'no StreamResponse'}"
                        f"{' in ' + last if last else ''}, not a terminal (or, per D3, interrupted) status")
        evidence.append(ev_evidence(ex, last_item.event, "last event"))
    if not stream.closed:
        problems.append(f"the stream did not close (end: {ex.end}{', ' + ex.error if ex.error else ''})")
        evidence.append(ex_evidence(ex))
    return problems, evidence


@rule("A2A-TASK-012", view=TwoStreams)
def same_events(v: TwoStreams, out: Verdict) -> None:
    main, sub = v.main, v.sub
    start = 1 if sub.items and sub.items[0].kind == "task" else 0
    tail = sub.items[start:]
    k = len(tail)
    if k == 0:
        out.failed(f"the subscribe stream carried no event after its Task, while the task stream went on to "
                   f"{main.last_state}", [ex_evidence(sub.exchange)])
        return
    if k > len(main.items):
        out.failed(f"the subscribe stream carried {k} events after its Task, the task stream only {len(main.items)} "
                   f"in all", [ex_evidence(sub.exchange), ex_evidence(main.exchange)])
        return
    for i, (a, b) in enumerate(zip(main.items[-k:], tail)):
        if a.result != b.result:
            out.failed(f"event {start + i + 1} of the subscribe stream {dump(b.result)} differs from the task "
                       f"stream's matching event {dump(a.result)} (the subscriber's {k} events after its Task must "
                       f"be the task stream's last {k})",
                       [ev_evidence(sub.exchange, b.event, "subscribe"), ev_evidence(main.exchange, a.event, "task stream")])
            return
    out.passed(f"the subscriber's {k} event(s) after its Task equal the task stream's last {k} "
               f"(JSON-RPC results compared as JSON)")
