"""A2A-TASK-010…012: CancelTask ends the task and its stream; SubscribeToTask sends the Task, then
the task stream's own events, and ends with it.

Labels read (written by streamcert.scenarios.a2a, scenario cancel-subscribe): stream (the task's
SendStreamingMessage), subscribe (SubscribeToTask on it), cancel, get_task (after the cancel).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..framelog import FrameLog
from ..protocols import a2a
from . import RuleContext, Unjudgeable, Verdict, ev_evidence, ex_evidence, rule
from .streamview import TaskStream
from .task import last_status_evidence, task_stream
from .unary import Reply, dump, state_of, task_reply


@dataclass
class Cancellation:
    """What CancelTask returned, the canceled task's stream, and GetTask after the cancel (each when the log holds it)."""

    cancel: Reply
    stream: TaskStream | None
    read_back: Reply | None

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> Cancellation:
        ex = log.get("cancel")
        if ex is None:
            raise Unjudgeable()
        cancel = task_reply(ex, "CancelTask").needed()
        ex_s, ex_g = log.get("stream"), log.get("get_task")
        # A CancelTask that returned no task is the finding, whatever became of the stream.
        stream = task_stream(ex_s) if ex_s is not None and not cancel.wrong else None
        return cls(cancel, stream, task_reply(ex_g, "GetTask") if ex_g is not None else None)


@dataclass
class Resubscription:
    """The SubscribeToTask stream, and the id of the task it subscribed to (as the task stream names it)."""

    stream: TaskStream
    task_id: str | None

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> Resubscription:
        ex = log.get("subscribe")
        if ex is None:
            raise Unjudgeable()
        stream = task_stream(ex)
        if not stream.items:
            raise Unjudgeable(f"SubscribeToTask ({ex.label}) was answered with {ex.content_type!r}, not an event "
                              f"stream", [ex_evidence(ex)])
        return cls(stream, TaskStream.from_exchange(log.get("stream")).task_id)


@dataclass
class TwoStreams:
    """The task stream and a SubscribeToTask stream on the same task."""

    main: TaskStream
    sub: TaskStream

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> TwoStreams:
        ex_m, ex_s = log.get("stream"), log.get("subscribe")
        if ex_m is None or ex_s is None:
            raise Unjudgeable()
        main = task_stream(ex_m)
        return cls(main, task_stream(ex_s))


# -- the rules ------------------------------------------------------------------------------------------

@rule("A2A-TASK-010", view=Cancellation)
def cancel_ends_the_task(v: Cancellation, out: Verdict) -> None:
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


@rule("A2A-TASK-011", view=Resubscription)
def task_first_then_the_end(v: Resubscription, out: Verdict) -> None:
    ex, items = v.stream.exchange, v.stream.items
    problems: list[str] = []
    evidence: list[dict] = []
    first, last = items[0], items[-1]
    if first.kind != "task":
        problems.append(f"the first event is {first.kind or 'no StreamResponse'}, not the Task")
        evidence.append(ev_evidence(ex, first.event, "first event"))
    elif v.task_id and first.body.get("id") != v.task_id:
        problems.append(f"the first Task is {first.body.get('id')!r}, not the subscribed task {v.task_id}")
        evidence.append(ev_evidence(ex, first.event, "first event"))
    state = None
    if last.kind == "statusUpdate" or (last.kind == "task" and len(items) == 1):
        state = state_of(last.body)
    if not a2a.is_terminal(state):
        problems.append(f"the last event is {last.kind or 'no StreamResponse'}"
                        f"{' in ' + state if state else ''}, not a terminal status")
        evidence.append(ev_evidence(ex, last.event, "last event"))
    if not v.stream.closed:
        problems.append(f"the stream did not close (end: {ex.end})")
        evidence.append(ex_evidence(ex))
    if problems:
        out.failed("SubscribeToTask: " + "; ".join(problems), evidence)
    else:
        out.passed(f"SubscribeToTask sent the Task first and closed after {state}")


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
