"""Reading one answer (a unary JSON-RPC body, or a stream that may hold only an error).

Shared by the task and error rules. Pure, like every rule helper.

    no_answer(req_id, ex, what)  -> an ERROR finding when `ex` got no answer at all, else None
    Answer.of(ex)                -> the parsed answer: payload, result, error, how it came
    task_of(result)              -> the Task in a result (GetTask's Task, or SendMessage's {"task": …})
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..framelog import END_ERROR, END_TIME_LIMIT, Exchange
from ..outcomes import Finding, Outcome
from . import ex_evidence, outcome, quote

VIA_JSON = "application/json"
VIA_SSE = "a single SSE event"


def got_nothing(ex: Exchange) -> str | None:
    """Why `ex` has no answer to judge (transport failure, no body, no event), or None."""
    if ex.end == END_ERROR:
        return ex.error or "transport error"
    if ex.status is None:
        return ex.error or "no response"
    if ex.is_sse:
        if not ex.data_events():
            return f"the stream carried no data event (ended: {ex.end})"
        return None
    if ex.end == END_TIME_LIMIT:
        return f"the body did not finish within the time limit (HTTP {ex.status})"
    if not ex.body.strip():
        return f"empty body (HTTP {ex.status}, ended: {ex.end})"
    return None


def no_answer(req_id: str, ex: Exchange, what: str) -> Finding | None:
    why = got_nothing(ex)
    if why is None:
        return None
    return outcome(req_id, Outcome.ERROR, f"{what} ({ex.label}) got no answer: {why}",
                   [ex_evidence(ex)])


@dataclass
class Answer:
    ex: Exchange
    payload: Any = None  # the parsed JSON-RPC envelope (a unary body, or the stream's first data event)
    result: Any = None
    error: dict[str, Any] | None = None
    problem: str | None = None  # why the answer is no JSON-RPC response at all
    via: str = VIA_JSON
    extra_events: int = 0  # data events after the first (a stream that holds more than one answer)

    @classmethod
    def of(cls, ex: Exchange) -> Answer:
        ans = cls(ex)
        if ex.is_sse:
            ans.via = VIA_SSE
            events = ex.data_events()
            if not events:
                ans.problem = "no data event"
                return ans
            ans.extra_events = len(events) - 1
            ans.payload, complaint = events[0].json()
        else:
            ans.payload, complaint = ex.json()
        if complaint:
            ans.problem = f"not JSON ({complaint}): {quote(ex.first_bytes())!r}"
        elif not isinstance(ans.payload, dict) or not ("result" in ans.payload or "error" in ans.payload):
            ans.problem = f"not a JSON-RPC response: {quote(_short(ans.payload))}"
        elif isinstance(ans.payload.get("error"), dict):
            ans.error = ans.payload["error"]
        elif "error" in ans.payload:
            ans.problem = f"error member is not an object: {quote(_short(ans.payload))}"
        else:
            ans.result = ans.payload.get("result")
        return ans

    @property
    def code(self) -> Any:
        return self.error.get("code") if self.error else None

    def describe(self) -> str:
        """A short account of what came back, for a failure message."""
        if self.problem:
            return self.problem
        if self.error is not None:
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


def _short(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)
