"""What an interrupted-state run shows: the view `Interruptions` (read by rules/interactions/interactions.py,
rules/interactions/ixtruncation.py and rules/interactions/idempotency.py).

    Interruptions.of(log, ctx)  the pauses (in arrival order, across every stream), the script's pausing
                                steps with the `say` that reports each, the agent's status texts, the
                                replies to the requests the driver sent
    Pause                       one interrupted status: its stream, event, state, message, interaction
    reply(exchange)             (taken, value): accepted with a result, refused with an error, or no answer
    answer_value(message)       how an answer the suite sent reads: through the extension, text or data

Labels read: those streamcert.drivers.interactions writes (see its docstring).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...contract.capture import STREAMING
from ...contract.interactions import ACTIVATED, EXTENSION, INTERACTIONS, SENTINEL
from ...contract.labels.a2a import ANSWER_PREFIX, STREAM
from ...contract.labels.interactions import GET_FINAL, SUBSCRIBE_PREFIX, TWIN_SUFFIX
from ...framelog import Event, Exchange, FrameLog
from ...protocols import a2a, bindings
from ...protocols.interactions_v1 import APPROVED, VALUE, interaction_of, status_key
from ...protocols.script import PAUSING
from ..engine import RuleContext, ev_evidence, ex_evidence


def _result(ev: Event, binding: str = bindings.JSONRPC) -> dict[str, Any] | None:
    result = bindings.frame_answer(binding, ev.payload)[0]
    return result if isinstance(result, dict) else None


def text_of(message: Any) -> str | None:
    """The text of a message's first text part."""
    parts = message.get("parts") if isinstance(message, dict) else None
    for part in parts or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            return part["text"]
    return None


def split(template: str) -> tuple[str, str]:
    """A say template's text before and after {{result}}."""
    head, _, tail = template.partition("{{result}}")
    return head, tail


@dataclass
class Step:
    """A pausing step of the script, and the `say` template that reports its outcome (if any)."""

    kind: str  # an interactions/v1 kind: question | approval | connection
    arg: Any
    say: str | None


@dataclass
class Pause:
    """One interrupted status, where it arrived first (its copies on other streams are left out)."""

    n: int  # 1-based, in arrival order: pause n is answered by answer_n
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

    def evidence(self, note: str) -> dict[str, Any]:
        return ev_evidence(self.exchange, self.event, note)


@dataclass
class Said:
    message_id: Any
    text: str
    t: float
    where: str


@dataclass
class Interruptions:
    """The task's interrupted states and what happened around them, across every stream of the run."""

    log: FrameLog
    steps: list[Step] = field(default_factory=list)
    pauses: list[Pause] = field(default_factory=list)
    said: list[Said] = field(default_factory=list)  # the agent's status texts, one per message
    task_id: Any = None
    extension: bool = True  # whether the driver activated interactions/v1 (else: a plain client)
    sentinel: str | None = None  # the string the script put in a held call's arguments
    activated: set[str] = field(default_factory=set)  # labels sent with the extension in a run without it

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext | None = None) -> Interruptions:
        notes = log.notes.get(INTERACTIONS) or {}
        view = cls(log, extension=bool(notes.get(EXTENSION, True)), sentinel=notes.get(SENTINEL),
                   activated=set(notes.get(ACTIVATED) or ()))
        view.steps = _steps(log.script)
        view._read_streams()
        view._read_history()
        return view

    def streams(self) -> list[Exchange]:
        return [ex for ex in self.log.exchanges if ex.notes.get(STREAMING)
                and (ex.label == STREAM or ex.label.startswith((SUBSCRIBE_PREFIX, ANSWER_PREFIX)))]

    def _read_streams(self) -> None:
        found: list[tuple[float, Exchange, Event, dict[str, Any], Any]] = []
        seen_said: set = set()
        for ex in self.streams():
            for ev in ex.data_events():
                result = _result(ev, ex.binding)
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
                key = status_key(status)
                text = text_of(status.get("message"))
                if text is not None and key not in seen_said:
                    seen_said.add(key)
                    self.said.append(Said(key, text, ev.t, ex.label))
                if a2a.is_interrupted(status.get("state")):
                    found.append((ev.t, ex, ev, status, update.get("taskId")))
        found.sort(key=lambda item: item[0])  # a pause is where it arrived first; its copies are left out
        keys: set = set()
        for _, ex, ev, status, tid in found:
            if tid is not None and tid != self.task_id:
                continue  # another task's pause (a server that starts a new task for a message) is not this task's
            if status_key(status) not in keys:
                keys.add(status_key(status))
                self.pauses.append(Pause(len(self.pauses) + 1, ex, ev, status, tid))

    def _read_history(self) -> None:
        """Agent messages in the final GetTask's history that no stream showed (a stream may miss some)."""
        task = self.unary_result(GET_FINAL)
        known = {s.message_id for s in self.said}
        for message in (task or {}).get("history") or []:
            if not isinstance(message, dict) or message.get("role") != a2a.ROLE_AGENT:
                continue
            text = text_of(message)
            if text is not None and message.get("messageId") not in known:
                known.add(message.get("messageId"))
                self.said.append(Said(message.get("messageId"), text, float("inf"), GET_FINAL))

    # -- the script's steps ----------------------------------------------------------------------
    def step(self, pause: Pause) -> Step | None:
        return self.steps[pause.n - 1] if pause.n <= len(self.steps) else None

    def pauses_of(self, kind: str) -> list[tuple[Pause, Step]]:
        """The pauses raised by a step of this kind, each with its step."""
        return [(p, s) for p in self.pauses if (s := self.step(p)) is not None and s.kind == kind]

    def never_paused(self) -> tuple[str, dict[str, Any]] | None:
        """(what the stream showed, its evidence) when the task stream answered but reached no
        interrupted state; None when there are pauses, or no stream answer to judge."""
        stream = self.log.get(STREAM)
        if stream is None or not stream.data_events() or self.pauses:
            return None
        states = [((r.get("statusUpdate") or r.get("task") or {}).get("status") or {}).get("state")
                  for _, r in stream.results()]
        shown = ", ".join(str(s) for s in states) or "no parsable result"
        return (f"no interrupted state was seen (the stream showed: {shown}; it ended: {stream.end})",
                ex_evidence(stream))

    # -- the replies to what the driver sent -----------------------------------------------------
    def reply(self, label: str) -> tuple[bool | None, Any]:
        return reply(self.log.get(label))

    def unary_result(self, label: str) -> dict[str, Any] | None:
        """The result of a unary answer (its Task when it is wrapped as {"task": …}), if any."""
        ex = self.log.get(label)
        if ex is None:
            return None
        result = bindings.read_answer(ex).result
        if isinstance(result, dict) and isinstance(result.get("task"), dict):
            return result["task"]
        return result if isinstance(result, dict) else None

    def sent_message(self, label: str) -> dict[str, Any] | None:
        ex = self.log.get(label)
        params = ex.params if ex is not None else None
        message = params.get("message") if isinstance(params, dict) else None
        return message if isinstance(message, dict) else None

    def answer_sent(self, n: int) -> tuple[str, Any]:
        """How answer n reads (see `answer_value`)."""
        return answer_value(self.sent_message(f"{ANSWER_PREFIX}{n}"))

    # -- what the model saw ----------------------------------------------------------------------
    def reports(self, template: str | None) -> list[Said]:
        """The agent's status texts that fill this say template."""
        if not template:
            return []
        head, tail = split(template)
        return [s for s in self.said if s.text.startswith(head) and s.text.endswith(tail)
                and len(s.text) >= len(head) + len(tail)]

    def model_saw(self, pause: Pause) -> tuple[str | None, str | None]:
        """(the result part of the say that reports this pause's outcome, its template); (None, template)
        when no such report was seen."""
        step = self.step(pause)
        template = step.say if step else None
        said = self.reports(template)
        if not said:
            return None, template
        head, tail = split(template)
        text = said[0].text
        return text[len(head):len(text) - len(tail) if tail else None], template

    def continued(self, pause: Pause) -> bool:
        """Whether any stream (a status update of this task), or the final GetTask, shows the task after this pause."""
        later = [ev for ex in self.streams() for ev in ex.data_events() if ev.t > pause.t
                 and isinstance(update := (_result(ev, ex.binding) or {}).get("statusUpdate"), dict)
                 and update.get("taskId") == self.task_id]
        final = self.unary_result(GET_FINAL)
        return bool(later) or (isinstance(final, dict) and a2a.is_terminal((final.get("status") or {}).get("state")))

    def answers_to(self, pause: Pause) -> list[str]:
        """The labels of the answers sent to the pause: answer_N, and answer_N_twin when the same answer was sent
        twice at the same moment. The server takes one of the two as the answer and the other as its retry,
        whichever reached it first: the suite cannot tell which."""
        labels = [f"{ANSWER_PREFIX}{pause.n}", f"{ANSWER_PREFIX}{pause.n}{TWIN_SUFFIX}"]
        return [label for label in labels if self.log.get(label) is not None]

    def first_status_after(self, pause: Pause, answer: str | None = None) -> tuple[Exchange, Event, dict[str, Any]] | None:
        """The first status any stream carried after the pause (a statusUpdate, or the Task a later stream
        opens with: a streamed answer's stream shows the task as the answer moved it), as a statusUpdate. Of two
        identical answers to the pause, the stream of `answer` (answer_N unless given) is read, not the other's:
        a retry's stream may show the task later on, as the answer left it."""
        pair = set(self.answers_to(pause))
        best = None
        for ex in self.streams():
            if ex.label in pair - {answer or f"{ANSWER_PREFIX}{pause.n}"} or (
                    ex.label.endswith(TWIN_SUFFIX) and ex.label not in pair):
                continue  # the retry of this pause's answer; a duplicate answer to another pause
            for ev in ex.data_events():
                result = _result(ev, ex.binding)
                update = _as_update(result) if result and ev.t > pause.t else None
                if update is None or status_key(update["status"]) == pause.key:
                    continue  # the same pause, as another stream carried it
                if best is None or ev.t < best[1].t:
                    best = (ex, ev, update)
        return best


def _as_update(result: dict[str, Any]) -> dict[str, Any] | None:
    """A statusUpdate result's update, or a Task result read as one (its id as the taskId)."""
    if isinstance(result.get("statusUpdate"), dict) and isinstance(result["statusUpdate"].get("status"), dict):
        return result["statusUpdate"]
    task = result.get("task")
    if isinstance(task, dict) and isinstance(task.get("status"), dict):
        return {"taskId": task.get("id"), "contextId": task.get("contextId"), "status": task["status"]}
    return None


def reply(ex: Exchange | None) -> tuple[bool | None, Any]:
    """(True, result) when the request was accepted, (False, error) when refused, (None, why) if no answer."""
    if ex is None:
        return None, "not sent"
    if ex.status is None:
        return None, ex.error or "no answer"
    read = bindings.read_answer(ex)  # a streamed answer: its first event is the result
    if read.error is not None:
        return False, read.error
    if read.result is not None:
        return True, read.result
    if ex.is_stream and not read.frames:
        return None, "the stream carried no event"
    return None, read.complaint or f"HTTP {ex.status}: no result or error"


def named_code(error: Any) -> str:
    """A JSON-RPC error's code with its A2A name, e.g. "-32004 UnsupportedOperationError"."""
    code = error.get("code") if isinstance(error, dict) else None
    return f"{code} {a2a.error_name(code)}" if isinstance(code, int) else repr(code)


def answer_value(message: dict[str, Any] | None) -> tuple[str, Any]:
    """How an answer the suite sent reads: ("extension", approved-or-value) | ("text", t) | ("data", d)."""
    meta = interaction_of(message)
    if meta is not None:
        return "extension", meta[APPROVED] if APPROVED in meta else meta.get(VALUE)
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
