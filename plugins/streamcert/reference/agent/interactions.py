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

from ...protocols import a2a
from ...protocols.interactions_v1 import APPROVAL, ELLIPSIS, QUESTION, URI, interaction_of
from ..faults import switch
from .options import Options
from .rpc import RpcError, invalid_params


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
    if TRUNCATE_UTF16.on(options):  # counts UTF-16 code units and cuts there, even inside a pair
        units = text.encode("utf-16-le")  # (the half pair left at the cut becomes U+FFFD)
        return units[: 2 * limit].decode("utf-16-le", "replace") if len(units) > 2 * limit else text
    if CUT_PLUS_ELLIPSIS.on(options):  # keeps the limit and appends the ellipsis: one past it
        return text[:limit] + ELLIPSIS if len(text) > limit else text
    return text[:limit]


def pause_message(message_id: str, task_id: str, context_id: str, interaction: Interaction,
                  options: Options) -> dict[str, Any]:
    meta = interaction.metadata()
    message: dict[str, Any] = {"messageId": message_id, "role": a2a.ROLE_AGENT, "parts": [{"text": interaction.prompt}],
                               "taskId": task_id, "contextId": context_id, "metadata": {URI: meta},
                               "extensions": [URI]}
    return _break_pause_message(message, interaction.kind, options)


def fingerprint(message: dict[str, Any]) -> str:
    body = {k: v for k, v in message.items() if k != "messageId"}
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


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
    ext = interaction_of(message)
    if _twin_in_flight(ledger, message_id, ext, options):
        return _accept(ledger, None, print_, Answer(str(ext.get("interactionId")), _ext_value(ext), "extension"),
                       options)
    replay = replay_of(ledger, message, options)
    if replay is not None:
        return replay
    if _stale_answer_taken(ledger, ext, options):
        return Plain()
    open_ = ledger.open
    if open_ is None:
        if ext is not None:
            iid = ext.get("interactionId")
            if iid in ledger.closed:
                raise invalid_params(f"interaction {iid!r} is no longer open")
            raise invalid_params(f"no open interaction {iid!r} on this task")
        return Plain()
    if ext is not None:
        iid = _named_interaction(ext, open_, options)
        if iid != open_.id:
            if iid in ledger.closed:
                raise invalid_params(f"interaction {iid!r} is no longer open (the open one is {open_.id})")
            raise invalid_params(f"interaction {iid!r} is not open on this task (the open one is {open_.id})")
        if "approved" not in ext and "value" not in ext:
            raise invalid_params("an interactions/v1 answer needs approved or value")
        answer = Answer(open_.id, _break_ext_value(_ext_value(ext), ext, open_, options), "extension")
    elif open_.kind == APPROVAL and not TEXT_APPROVES.on(options):
        raise RpcError(a2a.UNSUPPORTED_OPERATION,
                       f"Task is waiting for an approval ({open_.id}); text never approves: "
                       "answer with the interactions/v1 extension")
    else:
        reply = _reply_value(message)
        if reply is None:
            raise invalid_params("the reply has no text or data part")
        answer = _break_reply(Answer(open_.id, *reply), open_, options)
    if open_.kind == APPROVAL and not isinstance(answer.value, bool):
        raise invalid_params("an approval is answered with approved (or value) true or false")
    return _accept(ledger, message_id, print_, answer, options)


def replay_of(ledger: Ledger, message: dict[str, Any], options: Options) -> Replay | None:
    """A retry of an answer already taken (looked up first, even on a task that has ended since)."""
    message_id = message.get("messageId")
    if message_id not in ledger.by_message or _retry_not_recognised(ledger, message_id, options):
        return None
    seen, result = ledger.by_message[message_id]
    if seen == fingerprint(message):
        return Replay(result)
    raise invalid_params(f"messageId {message_id!r} was already used on this task for another message")


def _ext_value(ext: dict[str, Any]) -> Any:
    # `approved` is read as the value (connection, question); a boolean value as `approved`.
    return ext["approved"] if "approved" in ext else ext.get("value")


def _accept(ledger: Ledger, message_id: Any, print_: str, answer: Answer, options: Options) -> Admitted:
    result: asyncio.Future = asyncio.get_running_loop().create_future()
    if ledger.open is not None:
        ledger.closed.add(ledger.open.id)
    ledger.open = None
    if isinstance(message_id, str):
        ledger.by_message[message_id] = (print_, result)
        ledger.in_flight.add(message_id)
        hold = RACE_WINDOW_S if CONCURRENT_DOUBLE_EFFECT.on(options) else 0  # (the correct agent: none)
        loop = asyncio.get_running_loop()
        result.add_done_callback(lambda _f: loop.call_later(hold, ledger.in_flight.discard, message_id))
    return Admitted(answer, result)


def refused_but_taken(ledger: Ledger, message: dict[str, Any], options: Options) -> Answer | None:
    """wrong-id-taken: an answer naming an interaction never opened is refused, and taken anyway as the
    answer to the open one (the answer the player gets), or None."""
    ext = interaction_of(message)
    open_ = ledger.open
    if not WRONG_ID_TAKEN.on(options) or ext is None or open_ is None:
        return None
    if ext.get("interactionId") == open_.id or ext.get("interactionId") in ledger.closed:
        return None
    return _accept(ledger, None, fingerprint(message), Answer(open_.id, _ext_value(ext), "extension"), options).answer


def connected(value: Any) -> bool:
    """{"connected": true} or true connect; anything else declines."""
    return value is True or (isinstance(value, dict) and value.get("connected") is True)


def value_text(answer: Answer, options: Options) -> str:
    """A question's answer as the model sees it: the value as JSON."""
    if ANSWER_VALUE_MANGLED.on(options):
        return str(answer.value)
    return json.dumps(answer.value, ensure_ascii=False)


# -- fault variants ---------------------------------------------------------------------------------
TRUNCATE_UTF16 = switch("truncate-utf16")
CUT_PLUS_ELLIPSIS = switch("connection-cut-plus-ellipsis")
PROMPT_ONLY_IN_METADATA = switch("prompt-only-in-metadata")
TEXT_FOR_QUESTIONS_ONLY = switch("pause-text-for-questions-only")
INTERACTION_NO_EXTENSIONS_LIST = switch("interaction-no-extensions-list")
RETRY_ANSWERS_AGAIN = switch("retry-answers-again")
CONCURRENT_DOUBLE_EFFECT = switch("concurrent-double-effect")
STALE_ANSWER_ACCEPTED = switch("stale-answer-accepted")
INTERACTION_ID_IGNORED = switch("interaction-id-ignored")
TEXT_APPROVES = switch("text-approves")
ANSWER_VALUE_MANGLED = switch("answer-value-mangled")
WRONG_ID_TAKEN = switch("wrong-id-taken")
VALUE_FALSE_APPROVES = switch("value-false-approves")
QUESTION_APPROVED_IGNORED = switch("question-approved-ignored")
ID_IGNORED = (INTERACTION_ID_IGNORED, RETRY_ANSWERS_AGAIN)
# concurrent-double-effect: how long after an answer is done its key still counts as in flight (the
# fault's race window, wide enough that a twin sent at the same moment always falls inside it).
RACE_WINDOW_S = 0.5


def _break_pause_message(message: dict[str, Any], kind: str, options: Options) -> dict[str, Any]:
    if PROMPT_ONLY_IN_METADATA.on(options) or (TEXT_FOR_QUESTIONS_ONLY.on(options) and kind != QUESTION):
        message["parts"] = [{"data": message["metadata"][URI], "mediaType": "application/json"}]
    if INTERACTION_NO_EXTENSIONS_LIST.on(options):
        del message["extensions"]
    return message


def _twin_in_flight(ledger: Ledger, message_id: Any, ext: dict[str, Any] | None, options: Options) -> bool:
    """concurrent-double-effect: the messageId is only looked up once the first answer is done, so an
    identical answer still in flight is taken again."""
    return CONCURRENT_DOUBLE_EFFECT.on(options) and message_id in ledger.in_flight and ext is not None


def _retry_not_recognised(ledger: Ledger, message_id: Any, options: Options) -> bool:
    """retry-answers-again: messageIds are not remembered; concurrent-double-effect: not while in flight."""
    return RETRY_ANSWERS_AGAIN.on(options) or (CONCURRENT_DOUBLE_EFFECT.on(options) and message_id in ledger.in_flight)


def _stale_answer_taken(ledger: Ledger, ext: dict[str, Any] | None, options: Options) -> bool:
    """stale-answer-accepted: an answer naming an interaction already answered is taken, and ignored."""
    return STALE_ANSWER_ACCEPTED.on(options) and ext is not None and ext.get("interactionId") in ledger.closed


def _named_interaction(ext: dict[str, Any], open_: Interaction, options: Options) -> Any:
    """The interaction an answer names; the id-ignoring faults take every answer for the open one."""
    if any(fault.on(options) for fault in ID_IGNORED):
        return open_.id
    return ext.get("interactionId")


def _break_ext_value(value: Any, ext: dict[str, Any], open_: Interaction, options: Options) -> Any:
    """value-false-approves: an approval's `value: false` is taken as a yes; question-approved-ignored: a
    question answered with `approved` gets no value (null)."""
    if VALUE_FALSE_APPROVES.on(options) and open_.kind == APPROVAL and "approved" not in ext and value is False:
        return True
    if QUESTION_APPROVED_IGNORED.on(options) and open_.kind == QUESTION and "approved" in ext:
        return ext.get("value")
    return value


def _break_reply(answer: Answer, open_: Interaction, options: Options) -> Answer:
    """text-approves: a text or data reply to an approval is taken as a yes."""
    if TEXT_APPROVES.on(options) and open_.kind == APPROVAL:
        answer.value = True
    return answer
