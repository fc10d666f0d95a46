"""What an interrupted-state log shows (read by rules/interactions.py and rules/idempotency.py).

    IxView.of(log)      the pauses (in arrival order, across every stream), the script's pausing
                        steps with the `say` that reports each, the agent's status texts, the answers
    Pause               one interrupted status: its stream, event, state, message, interaction
    split(template)     a say template's text before and after {{result}}

Labels read: those streamcert.scenarios.interactions writes (see its docstring).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .. import a2a
from ..framelog import Event, Exchange, FrameLog
from ..wire.jsonrpc import rpc_error

URI = a2a.INTERACTIONS_EXT
PAUSING = {"ask": "question", "call": "approval", "connect": "connection"}
STATE_OF = {"question": a2a.INPUT_REQUIRED, "approval": a2a.AUTH_REQUIRED, "connection": a2a.AUTH_REQUIRED}
SEED = "004_b45a7e2830468043.txt"


def _result(ev: Event) -> dict[str, Any] | None:
    value = ev.payload
    result = value.get("result") if isinstance(value, dict) else None
    return result if isinstance(result, dict) else None


def text_of(message: Any) -> str | None:
    """The text of a message's first text part."""
    parts = message.get("parts") if isinstance(message, dict) else None
    for part in parts or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            return part["text"]
    return None


def interaction_of(message: Any) -> dict[str, Any] | None:
    meta = message.get("metadata") if isinstance(message, dict) else None
    value = meta.get(URI) if isinstance(meta, dict) else None
    return value if isinstance(value, dict) else None


def status_key(status: dict[str, Any]) -> Any:
    """What tells one status from its copies on other streams: its message's id, else state and time."""
    message = status.get("message")
    if isinstance(message, dict) and message.get("messageId"):
        return message["messageId"]
    return (status.get("state"), status.get("timestamp"))


def split(template: str) -> tuple[str, str]:
    head, _, tail = template.partition("{{result}}")
    return head, tail


@dataclass
class Step:
    """A pausing step of the script, and the `say` template that reports its outcome (if any)."""

    kind: str  # question | approval | connection
    arg: Any
    say: str | None


@dataclass
class Pause:
    n: int
    exchange: Exchange
    event: Event
    status: dict[str, Any]
    task_id: Any

    @property
    def state(self) -> Any:
        return self.status.get("state")

    @property
    def message(self) -> dict[str, Any] | None:
        m = self.status.get("message")
        return m if isinstance(m, dict) else None

    @property
    def interaction(self) -> dict[str, Any] | None:
        return interaction_of(self.message)

    @property
    def t(self) -> float:
        return self.event.t

    @property
    def key(self) -> Any:
        return status_key(self.status)


@dataclass
class Said:
    message_id: Any
    text: str
    t: float
    where: str


@dataclass
class IxView:
    log: FrameLog
    steps: list[Step] = field(default_factory=list)
    pauses: list[Pause] = field(default_factory=list)
    said: list[Said] = field(default_factory=list)  # the agent's status texts, one per message
    task_id: Any = None
    extension: bool = True
    sentinel: str | None = None

    @classmethod
    def of(cls, log: FrameLog) -> IxView:
        notes = log.notes.get("interactions") or {}
        view = cls(log, extension=bool(notes.get("extension", True)), sentinel=notes.get("sentinel"))
        view.steps = _steps(log.script)
        view._read_streams()
        view._read_history()
        return view

    def streams(self) -> list[Exchange]:
        return [ex for ex in self.log.exchanges if ex.notes.get("streaming")
                and (ex.label == "stream" or ex.label.startswith(("subscribe_", "answer_")))]

    def _read_streams(self) -> None:
        found: list[tuple[float, Exchange, Event, dict[str, Any], Any]] = []
        seen_said: set = set()
        for ex in self.streams():
            for ev in ex.data_events():
                result = _result(ev)
                if result is None:
                    continue
                if isinstance(result.get("task"), dict) and self.task_id is None:
                    self.task_id = result["task"].get("id")
                update = result.get("statusUpdate")
                status = update.get("status") if isinstance(update, dict) else None
                if not isinstance(status, dict):
                    continue
                if self.task_id is None:
                    self.task_id = update.get("taskId")
                message = status.get("message")
                key = status_key(status)
                text = text_of(message)
                if text is not None and key not in seen_said:
                    seen_said.add(key)
                    self.said.append(Said(key, text, ev.t, ex.label))
                if a2a.is_interrupted(status.get("state")):
                    found.append((ev.t, ex, ev, status, update.get("taskId")))
        found.sort(key=lambda item: item[0])  # a pause is where it arrived first; its copies are left out
        keys: set = set()
        for _, ex, ev, status, tid in found:
            if status_key(status) not in keys:
                keys.add(status_key(status))
                self.pauses.append(Pause(len(self.pauses) + 1, ex, ev, status, tid))

    def _read_history(self) -> None:
        """Agent messages in the final GetTask's history that no stream showed (a stream may miss some)."""
        task = self.unary_result("get_final")
        known = {s.message_id for s in self.said}
        for message in (task or {}).get("history") or []:
            if not isinstance(message, dict) or message.get("role") != a2a.ROLE_AGENT:
                continue
            text = text_of(message)
            if text is not None and message.get("messageId") not in known:
                known.add(message.get("messageId"))
                self.said.append(Said(message.get("messageId"), text, float("inf"), "get_final"))

    # -- reading answers -------------------------------------------------------------------------
    def unary_result(self, label: str) -> dict[str, Any] | None:
        ex = self.log.get(label)
        if ex is None:
            return None
        value, _ = ex.json()
        result = value.get("result") if isinstance(value, dict) else None
        if isinstance(result, dict) and isinstance(result.get("task"), dict):
            return result["task"]
        return result if isinstance(result, dict) else None

    def step(self, pause: Pause) -> Step | None:
        return self.steps[pause.n - 1] if pause.n <= len(self.steps) else None

    def sent_message(self, label: str) -> dict[str, Any] | None:
        ex = self.log.get(label)
        body = ex.request_body if ex is not None else None
        params = body.get("params") if isinstance(body, dict) else None
        message = params.get("message") if isinstance(params, dict) else None
        return message if isinstance(message, dict) else None

    def reports(self, template: str | None) -> list[Said]:
        """The agent's status texts that fill this say template."""
        if not template:
            return []
        head, tail = split(template)
        return [s for s in self.said if s.text.startswith(head) and s.text.endswith(tail)
                and len(s.text) >= len(head) + len(tail)]

    def continued(self, pause: Pause) -> bool:
        """Whether any stream, or the final GetTask, shows the task after this pause."""
        later = [ev for ex in self.streams() for ev in ex.data_events() if ev.t > pause.t
                 and isinstance(_result(ev), dict) and "statusUpdate" in _result(ev)]
        final = self.unary_result("get_final")
        return bool(later) or (isinstance(final, dict) and a2a.is_terminal((final.get("status") or {}).get("state")))

    def first_status_after(self, pause: Pause) -> tuple[Exchange, Event, dict[str, Any]] | None:
        best = None
        for ex in self.streams():
            for ev in ex.data_events():
                result = _result(ev)
                if ev.t <= pause.t or not result or not isinstance(result.get("statusUpdate"), dict):
                    continue
                if status_key(result["statusUpdate"].get("status") or {}) == pause.key:
                    continue  # the same pause, as another stream carried it
                if best is None or ev.t < best[1].t:
                    best = (ex, ev, result["statusUpdate"])
        return best


def answered(ex: Exchange | None) -> tuple[bool | None, Any]:
    """(True, result) when the request was accepted, (False, error) when refused, (None, why) if no answer."""
    if ex is None:
        return None, "not sent"
    if ex.status is None:
        return None, ex.error or "no answer"
    error = rpc_error(ex)
    if error is not None:
        return False, error
    if ex.is_sse:  # an answer sent as a streaming message: its first event is the result
        events = ex.data_events()
        value, problem = (events[0].json() if events else (None, "the stream carried no event"))
    else:
        value, problem = ex.json()
    if isinstance(value, dict) and "result" in value:
        return True, value["result"]
    return None, problem or f"HTTP {ex.status}: no JSON-RPC result or error"


def answer_value(message: dict[str, Any] | None) -> tuple[str, Any]:
    """How an answer the suite sent reads: ("extension", approved-or-value) | ("text", t) | ("data", d)."""
    meta = interaction_of(message)
    if meta is not None:
        return "extension", meta["approved"] if "approved" in meta else meta.get("value")
    for part in (message or {}).get("parts") or []:
        if isinstance(part, dict) and "text" in part:
            return "text", part["text"]
        if isinstance(part, dict) and "data" in part:
            return "data", part["data"]
    return "none", None


def same_json(text: str, value: Any) -> bool:
    try:
        return json.loads(text) == value
    except ValueError:
        return False


def _steps(script: Any) -> list[Step]:
    steps = script.get("steps") if isinstance(script, dict) else None
    out: list[Step] = []
    for step in steps or []:
        if not isinstance(step, dict) or len(step) != 1:
            continue
        name, arg = next(iter(step.items()))
        if name in PAUSING:
            out.append(Step(PAUSING[name], arg, None))
        elif name == "say" and out and out[-1].say is None:
            out[-1].say = arg
    return out


def without_user_messages(value: Any) -> Any:
    """A JSON value with every message of role ROLE_USER left out (the suite's own words)."""
    if isinstance(value, list):
        return [without_user_messages(v) for v in value
                if not (isinstance(v, dict) and v.get("role") == a2a.ROLE_USER)]
    if isinstance(value, dict):
        return {k: without_user_messages(v) for k, v in value.items()
                if not (isinstance(v, dict) and v.get("role") == a2a.ROLE_USER)}
    return value
