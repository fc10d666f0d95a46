"""The one walk over a stream's frames: each data event of an exchange parsed once, and what every stream rule
reads of it kept in a small record (`Facts`), shared by the views (streamview's FrameList and TaskStream, the
WIRE envelopes, WIRE-010, the A2A-STREAM- sequence and forms rules, the unread frame of `ex_evidence`).

Why: a flood of 100 000 events cannot keep every parse (about 2 KiB each), and a rule that walks the frames again
parses them again; here each event is read once and its parse let go at once. A record holds no parsed object,
only what the rules ask (kinds, member counts, ids, a state, a timestamp, what a rule found wrong), and records
alike are one object (a flood of alike chunks costs one pointer a frame). A rule still cites the frame itself: the
event is in the exchange's `data_events()`, in the same order as the records.

    frame_facts(ex)     one Facts per data event of `ex`, in order (walked once per events list)

What each field is for is said beside it; a field a rule reads is computed as that rule's own module says (WIRE-010's
`misspelt`, A2A-STREAM-013's `result_problems`, WIRE's `Envelope`), so no requirement is read in two places.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ..framelog import Exchange
from ..protocols import a2a, bindings
from .field_names import any_misspelt, misspelt
from .stream_forms import result_problems
from .streamview import MISSING, TaskStream
from .wire import Envelope


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


def frame_facts(ex: Exchange) -> list[Facts]:
    """One Facts per data event of `ex`, in order: the events are walked once per events list, each parsed once
    (its parse kept only as its exchange's parse budget says), and the exchange's TaskStream is read in the same
    walk (TaskStream.from_exchange gives it)."""
    return ex.derived("_facts", lambda: _walk(ex))


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


def _walk(ex: Exchange) -> list[Facts]:
    binding, out = ex.binding, []
    alike: dict[str, tuple[Facts, str | None]] = {}
    shared: dict[Facts, Facts] = {}
    stream = TaskStream(exchange=ex)
    answer = bindings.frame_answer
    for ev in ex.data_events():
        value, error = ev.json()
        result, answer_error = answer(binding, value)
        data = ev.data
        key = alike_key(data) if error is None and len(data) <= ALIKE_TEXT else None
        known = alike.get(key) if key is not None else None
        if known is None:
            known = read_facts(binding, value, error, result)
            try:
                known = (shared.setdefault(known[0], known[0]), known[1])
            except TypeError:  # an unhashable id or member value: kept as it is
                pass
            if key is not None and len(alike) < ALIKE_KEPT:
                alike[key] = known
        out.append(known[0])
        stream.take(ev, result, answer_error, known[1])
    ex.derived("_task_stream", lambda: stream)
    return out
