"""What the one walk over a stream's frames reads of each frame (the walk itself: streamview.frame_facts): each
data event of an exchange is parsed once, and what every stream rule reads of it is kept in a small record
(`Facts`), shared by the views (streamview's FrameList and TaskStream, the WIRE envelopes, WIRE-010, the
A2A-STREAM- sequence and forms rules, the unread frame of `ex_evidence`).

Why: a flood of 100 000 events cannot keep every parse (about 2 KiB each), and a rule that walks the frames again
parses them again; here each event is read once and its parse let go at once. A record holds no parsed object,
only what the rules ask (kinds, member counts, ids, a state, a timestamp, what a rule found wrong), and alike
records are one object (a flood of alike chunks costs one pointer a frame). A rule still cites the frame itself:
the event is in the exchange's `data_events()`, in the same order as the records.

    read_facts(binding, value, error, result)   the Facts of one parsed frame
    alike_key(data)                             what alike frames share (their facts are read once)

The readings the rules ask of each frame are here, each named for its requirement: WIRE-002/003/004's `Envelope`,
WIRE-010's `misspelt` (members spelt otherwise than their ProtoJSON names), A2A-STREAM-013's `result_problems`
(the 1.0 names and shapes). This module imports no rule module, so that every rule module can read the walk.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from ...protocols import a2a, bindings

MISSING = "\0missing"  # a member the frame does not have (a timestamp, `final`)


class Envelope(NamedTuple):
    """What the WIRE rules read of one JSON-RPC response an exchange carried (an event, or the body). A stream's
    are read in the one walk over its frames (framewalk.Facts.envelope), alike frames sharing one."""

    error: str | None  # the JSON complaint
    is_object: bool
    jsonrpc: bool  # "jsonrpc": "2.0"
    has_id: bool
    id: Any
    has_result: bool
    has_error: bool

    @classmethod
    def of(cls, value: Any, error: str | None) -> Envelope:
        if error or not isinstance(value, dict):
            return cls(error, False, False, False, None, False, False)
        get = value.get
        return cls(None, True, get("jsonrpc") == "2.0", "id" in value, get("id"), "result" in value, "error" in value)


# Each message's members by their folded names, built once (not once per value walked: a flood walks 100 000 frames).
_FOLDED = {message: {a2a.folded(f): f for f in fields} for message, fields in a2a.ANSWER_MESSAGES.items()}


_KEYS = {message: fields.keys() for message, fields in a2a.ANSWER_MESSAGES.items()}
_NESTED = {message: tuple((f, inner) for f, inner in fields.items() if inner is not None)
           for message, fields in a2a.ANSWER_MESSAGES.items()}


def any_misspelt(value: Any, message: str) -> bool:
    """Whether `misspelt` finds anything in `value`, told without building its paths: a message whose members
    are all under names the proto has is passed at once, and only the members holding messages are walked
    (the walk over a flood's frames asks this of each frame)."""
    stack = [(value, message)]
    while stack:
        item, message = stack.pop()
        if not isinstance(item, dict):
            continue
        if not item.keys() <= _KEYS[message]:
            fields, folded = a2a.ANSWER_MESSAGES[message], _FOLDED[message]
            if any(key not in fields and a2a.folded(key) in folded for key in item):
                return True
        for name, inner in _NESTED[message]:
            held = item.get(name)
            if isinstance(held, list):
                stack.extend((each, inner) for each in held)
            elif held is not None:
                stack.append((held, inner))
    return False


def misspelt(value: Any, message: str, path: str) -> list[str]:
    """The members of `value` (a `message` as JSON) and of the messages it holds that are spelt otherwise than
    their ProtoJSON names, each as `path.key (ProtoJSON writes name)`."""
    fields = a2a.ANSWER_MESSAGES[message]
    if not isinstance(value, dict):
        return []
    folded = _FOLDED[message]
    found = []
    for key, item in value.items():
        name = key if key in fields else folded.get(a2a.folded(key))
        if name is None:
            continue  # a member the proto does not have: ignored
        if name != key:
            found.append(f"{path}.{key} (ProtoJSON writes {name})")
        inner = fields[name]
        if inner is not None:
            for i, each in enumerate(item if isinstance(item, list) else [item]):
                found += misspelt(each, inner, f"{path}.{name}[{i}]" if isinstance(item, list) else f"{path}.{name}")
    return found


def state_in(kind: str | None, body: Any) -> Any:
    """The task state a Task or a statusUpdate shows (None for other frames)."""
    if kind in (a2a.TASK, a2a.STATUS_UPDATE) and isinstance(body, dict):
        status = body.get("status")
        return status.get("state") if isinstance(status, dict) else None
    return None


def _messages_parts(body: dict, kind: str) -> Iterator[tuple[str, Any]]:
    """(where, object) for the messages and parts a result carries, for shape checks."""
    if kind == a2a.TASK:
        for i, m in enumerate(body.get("history") or []):
            yield f"history[{i}]", m
        for i, a in enumerate(body.get("artifacts") or []):
            yield f"artifacts[{i}]", a
    status = body.get("status")
    if isinstance(status, dict) and isinstance(status.get("message"), dict):
        yield "status.message", status["message"]
    if kind == a2a.ARTIFACT_UPDATE and isinstance(body.get("artifact"), dict):
        yield "artifact", body["artifact"]
    if kind == a2a.MESSAGE:
        yield "message", body


def _shape_problems(obj: Any, where: str) -> list[str]:
    """States, roles and parts in their 1.0 form (A2A §4): the 0.3 spellings are departures."""
    problems = []
    if not isinstance(obj, dict):
        return [f"{where} is not an object"]
    if "role" in obj and obj["role"] not in a2a.ROLES:
        problems.append(f"{where}.role {obj['role']!r} is not ROLE_USER/ROLE_AGENT")
    if "kind" in obj:
        problems.append(f"{where} has a 0.3 'kind' field ({obj['kind']!r})")
    for i, part in enumerate(obj.get("parts") or []):
        if not isinstance(part, dict):
            problems.append(f"{where}.parts[{i}] is not an object")
            continue
        held = [k for k in a2a.PART_CONTENT_FIELDS if k in part]
        if len(held) != 1:
            problems.append(f"{where}.parts[{i}] holds {held or 'none'} of text, raw, url, data")
        if "kind" in part:
            problems.append(f"{where}.parts[{i}] has a 0.3 'kind' field ({part['kind']!r})")
    return problems


def result_problems(kind: str, body: Any) -> list[str]:
    """Where one StreamResponse member departs from the 1.0 names and shapes (read in the one walk over a stream's
    frames: framewalk.Facts.problems)."""
    problems = []
    state = state_in(kind, body)
    if kind in (a2a.TASK, a2a.STATUS_UPDATE) and state not in a2a.TASK_STATES:
        problems.append(f"state {state!r} is not a TASK_STATE_* name")
    if isinstance(body, dict) and "kind" in body:
        problems.append(f"the {kind} has a 0.3 'kind' field ({body['kind']!r})")
    for where, obj in _messages_parts(body, kind):
        problems += _shape_problems(obj, where)
    return problems




class Facts(NamedTuple):
    """What the stream rules read of one data event (see the module's docstring)."""

    envelope: Envelope  # the WIRE rules' reading of the JSON-RPC envelope
    answered: bool  # the JSON holds a `result` or an `error` object (engine.unread_frame)
    kind: str | None  # the first StreamResponse member the result holds as an object (None: none)
    members: int  # how many StreamResponse members the result names (-1: no result at all) (A2A-STREAM-005)
    misspelt: tuple[str, ...]  # the StreamResponse's members not under their ProtoJSON names (WIRE-010; () on gRPC)
    problems: tuple[str, ...]  # the result's departures from the 1.0 names and shapes (A2A-STREAM-013)
    ids: tuple[Any, Any]  # (task id, context id) a Task or an update names (A2A-STREAM-004, -016)
    has_status: bool  # a Task or statusUpdate whose `status` is an object
    state: Any  # the task state it shows (state_in)
    timestamp: Any  # its status's timestamp (MISSING: none) (A2A-STREAM-011, -012, -016)
    final: Any  # a statusUpdate's 0.3 `final` member (MISSING: none) (A2A-STREAM-017)
    artifact: tuple[Any, bool, bool] | None  # an artifactUpdate's (artifactId, append: true, lastChunk: true)
    held: tuple[str, ...]  # the artifactIds a Task holds (A2A-STREAM-006)


def read_facts(binding: str, value: Any, error: str | None, result: Any) -> tuple[Facts, str | None]:
    """The facts of one frame, from its parsed value (or the parser's complaint) and the result `frame_answer`
    reads in it; with the one StreamResponse member the result holds as an object (None: none or several)."""
    envelope = Envelope.of(value, error)
    answered = envelope.is_object and (isinstance(value.get("result"), dict) or isinstance(value.get("error"), dict))
    if binding == bindings.JSONRPC:
        has = isinstance(value, dict) and "result" in value
    else:
        has = result is not None
    kind = sole = None
    members = objects = 0
    if isinstance(result, dict):
        for name in a2a.STREAM_RESULT_KINDS:
            if name in result:
                members += 1
                if isinstance(result[name], dict):
                    objects += 1
                    kind = kind or name
        sole = kind if objects == 1 else None
    if not has:
        members = -1
    wrong = () if binding == bindings.GRPC or not any_misspelt(result, "StreamResponse") else \
        tuple(misspelt(result, "StreamResponse", "StreamResponse"))
    if kind is None:
        return Facts(envelope, answered, None, members, wrong, (), (None, None), False, None, MISSING, MISSING,
                     None, ()), sole
    body = result[kind]
    get = body.get
    problems = tuple(result_problems(kind, body))
    ids = (get("id") if kind == a2a.TASK else get("taskId"), get("contextId"))
    artifact, held, final = None, (), MISSING
    has_status, state, timestamp = False, None, MISSING
    if kind == a2a.ARTIFACT_UPDATE:
        art = get("artifact")
        artifact = ((art if isinstance(art, dict) else {}).get("artifactId"), get("append") is True,
                    get("lastChunk") is True)
    elif kind in (a2a.TASK, a2a.STATUS_UPDATE):
        status = get("status")
        if isinstance(status, dict):
            has_status, state, timestamp = True, status.get("state"), status.get("timestamp", MISSING)
        if kind == a2a.TASK:
            held = tuple(task_artifact_ids(body))
        else:
            final = get("final", MISSING)
    return Facts(envelope, answered, kind, members, wrong, problems, ids, has_status, state, timestamp, final,
                 artifact, held), sole


def task_artifact_ids(task: Any) -> list[str]:
    """The artifactIds a Task frame holds."""
    artifacts = task.get("artifacts") if isinstance(task, dict) else None
    return [a["artifactId"] for a in artifacts or [] if isinstance(a, dict) and isinstance(a.get("artifactId"), str)]


# Alike frames: two frames whose texts differ only in the strings under "text" keys (a Part's text, the one thing a
# flood of chunks changes) have the same facts, for no fact reads such a string. Their key is the text without those
# members. In valid JSON an unescaped quote after `{` or `,` (and white space) opens a string, and a string followed
# by a colon is a key: a match not preceded so (a "text" inside another string) leaves the frame without a key.
_TEXT_MEMBER = re.compile(r'"text"\s*:\s*"[^"\\]*(?:\\.[^"\\]*)*"')
_WHITE = " \t\r\n"


def alike_key(data: str) -> str | None:
    """The key alike frames share (see above); None when a match is not a "text" member for certain."""
    pieces = _TEXT_MEMBER.split(data)
    for piece in pieces[:-1]:
        if piece.rstrip(_WHITE)[-1:] not in ("{", ","):
            return None
    return "\0".join(pieces)  # NUL is never in valid JSON text, so the pieces are told apart


ALIKE_KEPT = 4096  # the distinct keys one walk remembers
ALIKE_TEXT = 4096  # a longer event is read on its own (its key would copy it)


