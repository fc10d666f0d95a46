"""A2A-TASK-014 to -016: several clients on one task (scenario multi-client, driver drivers/multi.py).

A2A-TASK-014 is A2A-INT-007's judgement (rules/interactions/ixstreams.py) made in the a2a profile: every stream of the
task carries it on while open and ends only at a terminal or, per D3, an interrupted state, whatever
message or subscription another client sends the task meanwhile (A2A §3.5.2). A2A-TASK-015 reads what
follows a stream the client closed itself: the task goes on, uncanceled, and the task's other streams
with it. A2A-TASK-016 reads every blocking SendMessage of the log: it returns the task at rest (§3.2.2).

Labels read: none; streams by method (streamview.StreamFrames), SendMessage by method.
"""

from __future__ import annotations

from typing import Any

from ...framelog import END_CLIENT_STOP, END_CLOSED, END_RESET, Exchange
from ...protocols import a2a
from .. import Run, Verdict, ex_evidence, rule
from ..common.unary import Answer, no_answer, state_of, task_of
from ..interactions.ixstreams import Carrier, TaskStreams, open_streams_carry_the_task_on
from ..interactions.ixview import text_of

# -- A2A-TASK-014: a second message leaves every open stream as it was --------------------------------

@rule("A2A-TASK-014", view=TaskStreams)
def second_message_leaves_streams(v: TaskStreams, out: Verdict) -> None:
    open_streams_carry_the_task_on(v, out)


# -- A2A-TASK-015: a stream closed by its client leaves the task and the other streams ------------------

def _status_line(status: dict[str, Any] | None) -> tuple[Any, str]:
    status = status if isinstance(status, dict) else {}
    return status.get("state"), text_of(status.get("message"))


def _later_statuses(v: TaskStreams, task_id: Any, since: float) -> list[tuple[float, dict[str, Any], str]]:
    """Every status of the task shown after `since` (arrival time, status, where), by streams and unary reads."""
    seen = [(ev.t, status, o.exchange.label) for o in v.carriers if o.task_id == task_id
            for ev, status in o.statuses if ev.t > since]
    seen += [(t, status, f"{ex.label} ({ex.rpc_method})") for t, tid, status, ex in v.unary
             if tid == task_id and t > since]
    return sorted(seen, key=lambda item: item[0])


def _canceled_unasked(v: TaskStreams, c: Carrier) -> tuple[str, list[dict]] | None:
    """The task turned CANCELED after the client closed `c`, and no CancelTask of it was sent."""
    asked = any(ex.rpc_method == a2a.CANCEL_TASK and isinstance(ex.params, dict) and ex.params.get("id") == c.task_id
                for ex in v.log.exchanges)
    if asked:
        return None
    for t, status, where in _later_statuses(v, c.task_id, c.ended):
        if status.get("state") == a2a.CANCELED:
            return (f"{where} showed the task {a2a.CANCELED} {t - c.ended:.2f} s after the client closed "
                    f"{c.exchange.label}, and no CancelTask was sent: closing a stream must not end the task",
                    [ex_evidence(c.exchange, "closed by the client")])
    return None


def _others_ended(v: TaskStreams, c: Carrier) -> tuple[str, list[dict]] | None:
    """Another stream of the task, open when the client closed `c`, that ended (closed, reset) before a
    terminal or interrupted state with no other request to the task in between (those are A2A-TASK-014's)."""
    for o in v.carriers:
        ex = o.exchange
        if o is c or o.task_id != c.task_id or ex.end not in (END_CLOSED, END_RESET):
            continue
        if not (ex.t_sent <= c.ended < o.ended) or a2a.is_terminal(o.last_state) or a2a.is_interrupted(o.last_state):
            continue
        between = [r for r in v.requests_to(c.task_id, c.ended, o.ended, ex) if r is not c.exchange]
        if not between:
            how = "closed" if ex.end == END_CLOSED else "was reset"
            return (f"{ex.label} {how} at {o.last_state or 'no state'} {o.ended - c.ended:.2f} s after the client "
                    f"closed {c.exchange.label}; closing one stream must leave the task's other streams open",
                    [ex_evidence(ex), ex_evidence(c.exchange, "closed by the client")])
    return None


def _stalled(v: TaskStreams, c: Carrier) -> tuple[str, list[dict]] | None:
    """The task was working when the client closed `c`, and nothing showed it after that beyond where `c` left
    it: no stream, no read (the task's life is its own, not the stream's)."""
    if not c.statuses or a2a.is_interrupted(c.last_state):
        return None  # a pause goes on only with an answer
    left = _status_line(c.statuses[-1][1])
    if any(_status_line(status) != left for _, status, _ in _later_statuses(v, c.task_id, c.ended)):
        return None
    return (f"after the client closed {c.exchange.label} at {left[0]} ({left[1]!r}), nothing showed the task go on: "
            "no later status on another stream, nor in a read of the task", [ex_evidence(c.exchange)])


@rule("A2A-TASK-015", view=TaskStreams)
def closing_a_stream_leaves_the_task(v: TaskStreams, out: Verdict) -> None:
    left = [c for c in v.carriers if c.exchange.end == END_CLIENT_STOP and not a2a.is_terminal(c.last_state)]
    bad, kept = [], []
    for c in left:
        problem = _canceled_unasked(v, c) or _others_ended(v, c) or _stalled(v, c)
        if problem:
            bad.append(problem)
            continue
        later = _later_statuses(v, c.task_id, c.ended)
        last = later[-1][1].get("state") if later else c.last_state
        kept.append(f"{c.exchange.label} closed by the client at {c.last_state}; the task went on to {last}")
    if bad:
        out.failed(f"{len(bad)} stream(s) closed by the client that took the task or its other streams with them; "
                   f"the first: {bad[0][0]}", [item for _, evidence in bad[:2] for item in evidence])
    elif kept:
        out.passed("; ".join(kept) + ", its other streams carrying it on")


# -- A2A-TASK-016: a blocking SendMessage returns the task at rest -------------------------------------

def _blocking(ex: Exchange) -> bool:
    """A SendMessage that asks to wait: `returnImmediately` false or unset (the default, §3.2.2)."""
    params = ex.params if isinstance(ex.params, dict) else {}
    config = params.get("configuration") if isinstance(params.get("configuration"), dict) else {}
    return ex.rpc_method == a2a.SEND_MESSAGE and config.get("returnImmediately") is not True


@rule("A2A-TASK-016", view=Run)
def blocking_send_returns_at_rest(run: Run, out: Verdict) -> None:
    for ex in run.log.exchanges:
        if not _blocking(ex):
            continue
        if lost := no_answer(ex, "a blocking SendMessage"):
            out.error(lost, [ex_evidence(ex)])
            continue
        ans = Answer.of(ex)
        if ans.problem or ans.error is not None:
            continue  # a refusal, or no response at all: the A2A-ERR- and WIRE- requirements judge it
        result = ans.result if isinstance(ans.result, dict) else {}
        if "message" in result:
            continue  # a direct Message: returnImmediately has no effect (§3.2.2)
        state = state_of(task_of(result))
        if a2a.is_terminal(state) or a2a.is_interrupted(state):
            out.passed(f"{ex.label} (blocking SendMessage) returned the task in {state}")
        else:
            out.failed(f"{ex.label} (blocking SendMessage, returnImmediately false) returned the task in "
                       f"{state or 'no state'}; it returns only at a terminal or an interrupted state",
                       [ex_evidence(ex)])
