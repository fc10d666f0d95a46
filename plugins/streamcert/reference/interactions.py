"""interactions/v1 (seed 004) in the reference agent: the open interaction a pausing step publishes,
and the answers a follow-up message brings (checked, deduplicated by messageId, handed to the player).

    open_interaction(kind, prompt, detail)  the Interaction a step raises (its id is fresh)
    pause_message(...)                       the status message: text part = prompt, `extensions`, metadata
    cut(text, limit)                         request_connection's cut: `limit` code points, no "…" appended
    admit(record, message, options)          an arriving message on a task: Plain, Answer or Replay; or RpcError

The reference's choices where the seed is silent: a cut adds no ellipsis; an answer that names an
interaction which is not the open one, or whose messageId was used before with another body, gets
InvalidParams (-32602); an approval answer that is not a boolean gets InvalidParams; a plain text or
data reply to a connection is read as its value.
"""

from __future__ import annotations

import asyncio
import copy
import json
from dataclasses import dataclass, field
from typing import Any

from .. import a2a
from .options import Options
from .rpc import RpcError, invalid_params

URI = a2a.INTERACTIONS_EXT
APPROVAL, QUESTION, CONNECTION = "approval", "question", "connection"
STATE_OF = {APPROVAL: a2a.AUTH_REQUIRED, QUESTION: a2a.INPUT_REQUIRED, CONNECTION: a2a.AUTH_REQUIRED}
APP_LIMIT, REASON_LIMIT = 80, 280
DENIED = "tool.denied"


@dataclass
class Interaction:
    id: str
    kind: str
    prompt: str
    detail: dict[str, Any] | None = None

    def metadata(self) -> dict[str, Any]:
        out: dict[str, Any] = {"interactionId": self.id, "kind": self.kind, "prompt": self.prompt}
        if self.detail is not None:
            out["detail"] = copy.deepcopy(self.detail)
        return out


@dataclass
class Answer:
    """What the player receives: the answer's value as the seed reads it ("approved" folded in)."""

    interaction_id: str
    value: Any
    via: str  # "extension" | "text" | "data"


@dataclass
class Ledger:
    """Per task: the open interaction, the ids already answered, and answers by messageId."""

    open: Interaction | None = None
    closed: set[str] = field(default_factory=set)
    by_message: dict[str, tuple[str, asyncio.Future]] = field(default_factory=dict)
    in_flight: set[str] = field(default_factory=set)


@dataclass
class Plain:
    """A message that answers nothing (the task is not waiting): kept in history, as before."""


@dataclass
class Admitted:
    """A new answer: the player gets `answer`; the method fills `result` with its response."""

    answer: Answer
    result: asyncio.Future


@dataclass
class Replay:
    """A retry of an earlier answer (same messageId and body): it gets the first answer's response."""

    result: asyncio.Future


def cut(text: str, limit: int, options: Options) -> str:
    if options.has("truncate-utf16"):  # counts UTF-16 code units and cuts there, even inside a pair
        units = text.encode("utf-16-le")  # (the half pair left at the cut becomes U+FFFD)
        return units[: 2 * limit].decode("utf-16-le", "replace") if len(units) > 2 * limit else text
    return text[:limit]


def pause_message(message_id: str, task_id: str, context_id: str, interaction: Interaction,
                  options: Options) -> dict[str, Any]:
    meta = interaction.metadata()
    text_part: dict[str, Any] = {"text": interaction.prompt}
    if options.has("prompt-only-in-metadata"):
        text_part = {"data": meta, "mediaType": "application/json"}
    message: dict[str, Any] = {"messageId": message_id, "role": a2a.ROLE_AGENT, "parts": [text_part],
                               "taskId": task_id, "contextId": context_id, "metadata": {URI: meta}}
    if not options.has("interaction-no-extensions-list"):
        message["extensions"] = [URI]
    return message


def fingerprint(message: dict[str, Any]) -> str:
    body = {k: v for k, v in message.items() if k != "messageId"}
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def _extension_answer(message: dict[str, Any]) -> dict[str, Any] | None:
    meta = message.get("metadata")
    value = meta.get(URI) if isinstance(meta, dict) else None
    return value if isinstance(value, dict) else None


def _reply_value(message: dict[str, Any]) -> tuple[Any, str] | None:
    """A plain reply's value: its first text part's text, or its first data part's data."""
    for part in message.get("parts") or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            return part["text"], "text"
        if isinstance(part, dict) and "data" in part:
            return part["data"], "data"
    return None


def admit(ledger: Ledger, message: dict[str, Any], options: Options) -> Plain | Admitted | Replay:
    """Decide what an arriving message on a task is. Raises RpcError for an answer it refuses; a
    refused message changes nothing."""
    message_id = message.get("messageId")
    print_ = fingerprint(message)
    retry_lost = options.has("retry-answers-again")
    ext = _extension_answer(message)
    if options.has("concurrent-double-effect") and message_id in ledger.in_flight and ext is not None:
        # The key is only looked up once the first answer is done: a twin in flight is queued again.
        return _accept(ledger, None, print_, Answer(str(ext.get("interactionId")), _ext_value(ext), "extension"),
                       options)
    replay = replay_of(ledger, message, options)
    if replay is not None:
        return replay
    open_ = ledger.open
    if open_ is None:
        if ext is not None:
            iid = ext.get("interactionId")
            if iid in ledger.closed and not options.has("stale-answer-accepted"):
                raise invalid_params(f"interaction {iid!r} is no longer open")
            if iid not in ledger.closed:
                raise invalid_params(f"no open interaction {iid!r} on this task")
        return Plain()
    if ext is not None:
        iid = ext.get("interactionId")
        ignore_id = options.has("interaction-id-ignored") or retry_lost
        if iid != open_.id and not ignore_id:
            if iid in ledger.closed and not options.has("stale-answer-accepted"):
                raise invalid_params(f"interaction {iid!r} is no longer open (the open one is {open_.id})")
            if iid not in ledger.closed:
                raise invalid_params(f"interaction {iid!r} is not open on this task (the open one is {open_.id})")
            return Plain()  # stale-answer-accepted: taken and ignored
        if "approved" not in ext and "value" not in ext:
            raise invalid_params("an interactions/v1 answer needs approved or value")
        answer = Answer(open_.id, _ext_value(ext), "extension")
    else:
        if open_.kind == APPROVAL and not options.has("text-approves"):
            raise RpcError(a2a.UNSUPPORTED_OPERATION,
                           f"Task is waiting for an approval ({open_.id}); text never approves: "
                           "answer with the interactions/v1 extension")
        reply = _reply_value(message)
        if reply is None:
            raise invalid_params("the reply has no text or data part")
        value, via = reply
        if open_.kind == APPROVAL:  # text-approves: any reply is taken as a yes
            value = True
        answer = Answer(open_.id, value, via)
    if open_.kind == APPROVAL and not isinstance(answer.value, bool):
        raise invalid_params("an approval is answered with approved (or value) true or false")
    return _accept(ledger, message_id, print_, answer, options)


def replay_of(ledger: Ledger, message: dict[str, Any], options: Options) -> Replay | None:
    """A retry of an answer already taken (looked up first, even on a task that has ended since)."""
    message_id = message.get("messageId")
    if message_id not in ledger.by_message or options.has("retry-answers-again"):
        return None
    if options.has("concurrent-double-effect") and message_id in ledger.in_flight:
        return None
    seen, result = ledger.by_message[message_id]
    if seen == fingerprint(message) and not options.has("retry-refused"):
        return Replay(result)
    raise invalid_params(f"messageId {message_id!r} was already used on this task"
                         + ("" if seen == fingerprint(message) else " for another message"))


def _ext_value(ext: dict[str, Any]) -> Any:
    # `approved` is read as the value (connection, question); a boolean value as `approved`.
    return ext["approved"] if "approved" in ext else ext.get("value")


# concurrent-double-effect: how long after an answer is done its key still counts as in flight (the
# fault's race window, wide enough that a twin sent at the same moment always falls inside it).
RACE_WINDOW_S = 0.5


def _accept(ledger: Ledger, message_id: Any, print_: str, answer: Answer, options: Options) -> Admitted:
    result: asyncio.Future = asyncio.get_running_loop().create_future()
    if ledger.open is not None:
        ledger.closed.add(ledger.open.id)
    ledger.open = None
    if isinstance(message_id, str):
        ledger.by_message[message_id] = (print_, result)
        ledger.in_flight.add(message_id)
        hold = RACE_WINDOW_S if options.has("concurrent-double-effect") else 0
        loop = asyncio.get_running_loop()
        result.add_done_callback(lambda _f: loop.call_later(hold, ledger.in_flight.discard, message_id))
    return Admitted(answer, result)


def connected(value: Any) -> bool:
    """{"connected": true} or true connect; anything else declines."""
    return value is True or (isinstance(value, dict) and value.get("connected") is True)


def value_text(answer: Answer, options: Options) -> str:
    """A question's answer as the model sees it: the value as JSON."""
    if options.has("answer-value-mangled"):
        return str(answer.value)
    return json.dumps(answer.value, ensure_ascii=False)
