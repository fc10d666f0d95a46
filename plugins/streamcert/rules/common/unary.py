"""Reading one answer (a unary JSON-RPC body, or a stream that may hold only an error).

Shared by the task and error rules. Pure, like every rule helper.

    got_nothing(ex)       -> why `ex` has no answer to judge (transport failure, no body, no event), or None
    no_answer(ex, what)   -> the sentence of a requirement that answer leaves unjudged, or None
    Answer.of(ex)         -> the parsed answer: payload, result, error, how it came
    task_of(result)       -> the Task in a result (GetTask's Task, or SendMessage's {"task": …})
    task_reply(ex, what)  -> the Task a unary call returned, as a Reply: the Task, or why there is none
    answer_or_error(ex, what, out) -> the Answer to judge, or None after `out` was given the ERROR of an answer that
                             never came or cannot be read
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...contract.capture import CONTENT_ENCODING
from ...framelog import END_CLOSED, END_ERROR, END_IDLE, END_RESET, END_TIME_LIMIT, Exchange
from ...protocols import bindings
from ..engine import Unjudgeable, Verdict, cannot_judge, ex_evidence, quote

VIA_JSON = "application/json"
VIA_SSE = "a single SSE event"
VIA_GRPC = "a gRPC status"


def got_nothing(ex: Exchange) -> str | None:
    """Why `ex` has no answer to judge (transport failure, an answer that cannot be judged, no event, a body cut
    short), or None. A stream cut short still has the events that came to judge, and an empty body the server
    ended is its answer (judged as one that is not what was asked)."""
    if ex.end == END_ERROR:
        return ex.error or "transport error"
    if ex.status is None:
        return ex.error or "no response"
    if why := cannot_judge(ex):
        return why
    if ex.binding == bindings.GRPC and not ex.is_stream and (ex.events or bindings.grpc_error(ex.notes)):
        return None  # a unary message, or the error status the call ended with
    if ex.is_stream:
        if not ex.data_events():
            ended = ex.error if ex.end in (END_RESET, END_IDLE) and ex.error else f"ended: {ex.end}"
            return f"the stream carried no data event ({ended})"
        return None
    if ex.end == END_TIME_LIMIT:
        said = f": {ex.error}" if ex.error else ""
        return f"the body did not finish within the time limit (HTTP {ex.status}){said}"
    if ex.end in (END_RESET, END_IDLE):
        return f"the body is incomplete (HTTP {ex.status}): {ex.error}"
    if ex.blank and (ex.binding == bindings.GRPC or ex.end != END_CLOSED):
        return f"empty body (HTTP {ex.status}, ended: {ex.end})"
    return None  # a body the server sent whole, empty ones too (202 Accepted with nothing): an answer to judge


def no_answer(ex: Exchange, what: str) -> str | None:
    """The sentence of a requirement left unjudged by `ex` ("what (label) got no answer: why", or "… could
    not be judged: why" when an answer came that the suite cannot judge), or None when it can be judged."""
    why = got_nothing(ex)
    if why is None:
        return None
    came = ex.end != END_ERROR and ex.status is not None and (
        cannot_judge(ex) or ex.end in (END_RESET, END_IDLE, END_TIME_LIMIT))
    return f"{what} ({ex.label}) {'could not be judged' if came else 'got no answer'}: {why}"


@dataclass
class Answer:
    ex: Exchange
    payload: Any = None  # the parsed answer as it came (a unary body, or the stream's first data event)
    result: Any = None
    error: dict[str, Any] | None = None
    problem: str | None = None  # why the answer is no JSON-RPC response at all
    via: str = VIA_JSON
    extra_events: int = 0  # data events after the first (a stream that holds more than one answer)

    @classmethod
    def of(cls, ex: Exchange) -> Answer:
        """The answer of any binding, read as the operation's result or its A2A error (bindings.read_answer)."""
        ans = cls(ex)
        if ex.is_stream or (ex.binding == bindings.GRPC and ex.events):
            ans.via = VIA_SSE if ex.is_sse else VIA_GRPC
        elif ex.binding == bindings.GRPC:
            ans.via = VIA_GRPC
        read = bindings.read_answer(ex)
        ans.payload, ans.result, ans.error = read.payload, read.result, read.error
        ans.extra_events = max(0, read.frames - 1)
        if ans.via != VIA_JSON and not read.frames and ex.binding != bindings.GRPC:
            ans.problem = "no data event"
        elif ex.binding == bindings.GRPC and not read.frames and ans.error is None:
            ans.problem = "no message and no error status"
        elif ans.via == VIA_JSON and ex.blank:
            ans.problem = f"an empty body (HTTP {ex.status})"
        elif read.complaint:
            ans.problem = f"not JSON ({read.complaint}): {quote(ex.first_bytes())!r}"
            if coding := ex.notes.get(CONTENT_ENCODING):
                ans.problem += f" (decoded from Content-Encoding: {coding}, which the suite did not ask for)"
        elif read.shape:
            ans.problem = f"{read.shape}: {quote(_short(ans.payload))}"
        return ans

    @property
    def code(self) -> Any:
        return self.error.get("code") if self.error else None

    def describe(self) -> str:
        """A short account of what came back, for a failure message."""
        if self.problem:
            return self.problem
        if self.error is not None:
            if "binding" in self.error:
                return f"error {bindings.describe_error(self.error)}"
            return f"error {self.code} {self.error.get('message', '')!r}".rstrip()
        return f"a result: {quote(_short(self.result), 200)}"


def task_of(result: Any) -> dict[str, Any] | None:
    """The Task in a result: the result itself (GetTask, CancelTask) or its `task` member (SendMessage)."""
    if not isinstance(result, dict):
        return None
    if isinstance(result.get("task"), dict) and "id" not in result:
        return result["task"]
    return result


def state_of(task: Any) -> str | None:
    status = task.get("status") if isinstance(task, dict) else None
    state = status.get("state") if isinstance(status, dict) else None
    return state if isinstance(state, str) else None


@dataclass
class Reply:
    """What a rule wants from one call (a Task, a task list) as `value`, or why it is not there: `lost`
    when the call got no answer at all (the requirement is ERROR), `wrong` when the answer is not it (FAIL)."""

    ex: Exchange
    value: Any = None
    lost: str | None = None
    wrong: str | None = None

    @property
    def evidence(self) -> list[dict[str, Any]]:
        return [ex_evidence(self.ex)]

    def needed(self) -> Reply:
        """This reply; Unjudgeable (ERROR for every requirement reading it) when the call got no answer."""
        if self.lost:
            raise Unjudgeable(self.lost, self.evidence)
        return self

    def explain(self, out: Verdict) -> bool:
        """Say in `out` why there is no value (ERROR or FAIL); whether there was none."""
        if self.lost:
            out.error(self.lost, self.evidence)
        elif self.wrong:
            out.failed(self.wrong, self.evidence)
        return bool(self.lost or self.wrong)


def answer_or_error(ex: Exchange, what: str, out: Verdict) -> "Answer | None":
    """The answer `ex` got, to judge; None when there is none (no answer, or one that cannot be read), after saying
    so as `out`'s ERROR (`what`: the request, as the message names it)."""
    if lost := no_answer(ex, what):
        out.error(lost, [ex_evidence(ex)])
        return None
    ans = Answer.of(ex)
    if ans.problem:
        out.error(f"{what}: {ans.describe()}", [ex_evidence(ex)])
        return None
    return ans


def task_reply(ex: Exchange, what: str) -> Reply:
    """The Task a unary call (`what`: GetTask, CancelTask) returned."""
    if lost := no_answer(ex, what):
        return Reply(ex, lost=lost)
    ans = Answer.of(ex)
    if ans.problem or ans.error is not None:
        return Reply(ex, wrong=f"{what} ({ex.label}) did not return the task: {ans.describe()}")
    task = task_of(ans.result)
    if task is None:
        return Reply(ex, wrong=f"{what} ({ex.label}) returned a result that is no Task: {dump(ans.result)}")
    return Reply(ex, task)


def dump(value: Any, limit: int = 200) -> str:
    """A JSON value, compact and cut to `limit` characters, for a message."""
    return quote(_short(value), limit)


def _short(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)
