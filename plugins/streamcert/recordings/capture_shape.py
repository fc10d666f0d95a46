"""What a capture holds as the regression diff sees it (capture_diff.py): its exchanges by key, each framed
exchange's frames and their payloads, a frame's kind, and the values that differ from run to run (ids, times,
origins, temporary paths) replaced by what they are, so that two captures compare by shape."""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

from ..framelog import Event, Exchange, FrameLog

UUIDISH = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
ORIGIN = re.compile(r"^(https?://)[^/]+")  # host and port differ between runs of a local server
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
# String values under these keys differ on every run by design: compared by shape and first appearance. A card
# signature's `signature` among them: ECDSA signs with a fresh random k each time (RFC 7518 §3.4), so an unchanged
# card signed again is other bytes (whether it verifies is A2A-CARD-009's to judge, not the diff's).
# token and credentials: a push config's, which the suite makes anew each run (drivers/push*.py; the credentials
# are masked in a recording, so a live value and the mask are both "a string").
VOLATILE_KEYS = {"id", "taskId", "contextId", "messageId", "nextPageToken", "timestamp", "sessionId", "signature",
                 "token", "credentials"}
EPOCH_MS = range(10 ** 12, 10 ** 13)  # an integer in this range is a time (ms since 1970): compared like an id
TEMP_PATH = re.compile("(?:" + "|".join(map(re.escape, {"/tmp", tempfile.gettempdir()})) + r")/[^/\s\"']+")
A2A_KINDS = ("task", "message", "statusUpdate", "artifactUpdate")


# -- what a capture holds, as the diff sees it ---------------------------------------------------------

def exchange_keys(log: FrameLog) -> list[tuple[str, Exchange]]:
    """Each exchange with its key: its label, and `label#2`, `label#3` for later ones of the same label."""
    seen: dict[str, int] = {}
    keyed = []
    for ex in log.exchanges:
        seen[ex.label] = seen.get(ex.label, 0) + 1
        keyed.append((ex.label if seen[ex.label] == 1 else f"{ex.label}#{seen[ex.label]}", ex))
    return keyed


def framed(ex: Exchange) -> bool:
    """Whether an answer is compared frame by frame: an event stream, a program's lines on stdio, or a gRPC
    call's messages (as ProtoJSON; their protobuf bytes hold timestamps that differ run to run)."""
    return ex.is_sse or ex.method == "STDIO" or ex.binding == "grpc"


def frames_of(ex: Exchange) -> list[Event]:
    """The frames a stream is compared by: its events but comments (a keep-alive is sent as time passes, more
    of them on a slower day; it dispatches nothing, WHATWG HTML §9.2.6)."""
    return [ev for ev in ex.events if not ev.is_comment] if framed(ex) else []


def payload_of(ex: Exchange, ev: Event | None) -> Any:
    """The JSON of a frame (or of a unary body); text that is not JSON as {"text": …}."""
    if ev is not None:
        if ev.is_comment:
            return {"comment": ev.data}
        value, err = ev.json()
        return value if err is None else {"text": ev.data[:2000]}
    if ex.status is None:
        return None
    value, err = ex.json()
    return value if err is None else {"text": ex.first_bytes(2000)}


def kind_of(payload: Any) -> str:
    """A frame's kind, as a person names it: `statusUpdate WORKING`, `artifactUpdate test-log +append`,
    `error -32001`, `session/update plan`, `comment`."""
    if not isinstance(payload, dict):
        return "text" if payload is not None else "nothing"
    if "comment" in payload and len(payload) == 1:
        return "comment"
    if "text" in payload and len(payload) == 1:
        return "text (not JSON)"
    if isinstance(payload.get("error"), dict):
        return f"error {payload['error'].get('code')}"
    result = payload.get("result")
    if result is None and (any(k in payload for k in A2A_KINDS) or ("status" in payload and "id" in payload)):
        result = payload  # a frame or body of HTTP+JSON or gRPC: the StreamResponse or Task itself
    if isinstance(result, dict):
        kinds = [k for k in A2A_KINDS if k in result]
        if len(kinds) == 1:
            name, body = kinds[0], result[kinds[0]]
            return name + _detail(name, body)
        if "status" in result and "id" in result:  # a bare Task (GetTask)
            return "task" + _detail("task", result)
        return "result {" + ", ".join(sorted(result)[:4]) + "}"
    if "progress" in payload:  # a progress stream's frame (progress 3.4.0): its phase
        progress = payload["progress"]
        phase = progress.get("phase") if isinstance(progress, dict) else progress
        return f"progress {phase if phase is not None else 'null'}" + (" (agent)" if "agent" in payload else "")
    if isinstance(payload.get("method"), str):
        update = (payload.get("params") or {}).get("update") if isinstance(payload.get("params"), dict) else None
        what = update.get("sessionUpdate") if isinstance(update, dict) else None
        return payload["method"] + (f" {what}" if what else "")
    return "{" + ", ".join(sorted(payload)[:4]) + "}"


def _detail(name: str, body: Any) -> str:
    if not isinstance(body, dict):
        return ""
    if name in ("task", "statusUpdate"):
        state = (body.get("status") or {}).get("state") if isinstance(body.get("status"), dict) else None
        return f" {str(state).removeprefix('TASK_STATE_')}" if state else ""
    if name == "artifactUpdate":
        art = body.get("artifact") if isinstance(body.get("artifact"), dict) else {}
        flags = (" +append" if body.get("append") else "") + (" +last" if body.get("lastChunk") else "")
        return f" {art.get('artifactId', '?')}{flags}"
    return ""


# -- volatile values ------------------------------------------------------------------------------------

class _Said(str):
    """A value the diff put in place of another (compared as it is, never taken for an id)."""


REQUEST_ID = _Said("<the request's id>")
UUID_IN_TEXT = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def answering(value: Any, ex: Exchange) -> Any:
    """A JSON-RPC answer whose `id` is its request's, with that id named so: it echoes what the suite sent,
    which is no behaviour of the implementation (another `id` stays, and is compared)."""
    sent = ex.request_body.get("id", _Said()) if isinstance(ex.request_body, dict) else _Said()
    if isinstance(value, dict) and "jsonrpc" in value and "id" in value and value["id"] == sent \
            and type(value["id"]) is type(sent):
        return {**value, "id": REQUEST_ID}
    return value


Location = tuple[str, str, str]  # (exchange key, "body" or "frame N", path)


def _path(parts: tuple[Any, ...]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _volatile(key: Any, value: Any) -> str | None:
    """The shape of a value compared by shape and first appearance (None: compared as it is)."""
    value = _number(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return "epoch ms" if value in EPOCH_MS or key == "since" else None
    if not isinstance(value, str) or isinstance(value, _Said):
        return None
    if UUIDISH.match(value):
        return "uuid"
    if key in VOLATILE_KEYS and not TIMESTAMP.match(value):
        return "string" if value else "empty string"
    return None


def _leaves(value: Any, parts: tuple[Any, ...] = (), key: Any = None) -> Iterator[tuple[tuple[Any, ...], Any, Any]]:
    """(path, key, value) of every string leaf, an object's members in sorted order (not as they came: RFC 8259
    leaves them unordered), without recursion (values are bounded in depth by the reader)."""
    stack = [(value, parts, key)]
    while stack:
        item, where, name = stack.pop()
        if isinstance(item, dict):
            stack.extend((v, where + (k,), k) for k, v in sorted(item.items(), key=lambda kv: str(kv[0]), reverse=True))
        elif isinstance(item, list):
            stack.extend((v, where + (i,), name) for i, v in reversed(list(enumerate(item))))
        elif isinstance(item, (str, int, float)) and not isinstance(item, bool):
            yield where, name, _number(item)


class Capture:
    """One capture as the diff reads it: exchanges by key, each frame's kind and comparable content, and where
    each volatile value first appeared. A frame's payload is parsed again when it is asked for (`payload`): kept,
    the parses of two 100 000-frame captures held about 500 MiB (issue 25)."""

    def __init__(self, log: FrameLog) -> None:
        self.log = log
        self.exchanges = dict(exchange_keys(log))
        self.frames = {key: frames_of(ex) for key, ex in self.exchanges.items()}
        self.first: dict[str, Location] = {}
        self._kinds: dict[str, list[str]] = {}
        self._contents: dict[str, list[bytes]] = {}
        for key, ex in self.exchanges.items():
            kinds, contents = self._kinds.setdefault(key, []), self._contents.setdefault(key, [])
            for n in list(range(len(self.frames[key]))) if framed(ex) else [None]:
                value = self.payload(key, n)
                for where, name, leaf in _leaves(value):
                    if _volatile(name, leaf) is not None:
                        self.first.setdefault(leaf, (key, _part(n), _path(where)))
                if n is not None:
                    kinds.append(sys.intern(kind_of(value)))  # one string per kind, not one a frame
                    text = kinds[-1] + "\n" + json.dumps(shape_of(value), sort_keys=True, default=str)
                    contents.append(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest())

    def payload(self, key: str, n: int | None) -> Any:
        """Frame `n`'s payload (None: the body's), as the diff compares it."""
        ex = self.exchanges[key]
        return answering(payload_of(ex, None if n is None else self.frames[key][n]), ex)

    def kinds(self, key: str) -> list[str]:
        return self._kinds[key]

    def contents(self, key: str) -> list[bytes]:
        """What each frame holds, as a digest (BLAKE2b, 128 bits) of its kind and its payload with volatile values
        by shape alone (two frames alike in this are the same frame, wherever they are)."""
        return self._contents[key]


def _part(n: int | None) -> str:
    return "body" if n is None else f"frame {n + 1}"


def _number(value: Any) -> Any:
    """A number as a value: 11.0 is 11 (JSON does not tell them apart; protobuf's Value holds doubles)."""
    return int(value) if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 63 else value


def _text(value: str) -> str:
    """A text with what differs run to run left out: host and port, temporary folders, ids quoted in it, and
    the order of the members of a JSON object quoted in it (`S8: {"region": …, "replicas": 3}`)."""
    value = ORIGIN.sub(r"\1<host>", value) if ORIGIN.match(value) else value
    value = TEMP_PATH.sub("<temporary folder>", value)  # made anew by each run
    value = UUID_IN_TEXT.sub("<uuid>", value)  # an id quoted in a sentence: its shape only
    return _quoted_json(value) if "{" in value and len(value) <= QUOTED_JSON_LIMIT else value


QUOTED_JSON_LIMIT = 20000  # characters of a text searched for a quoted JSON object
_DECODER = json.JSONDecoder()


def _quoted_json(text: str) -> str:
    """Each JSON object quoted in a text written again with its members sorted and its numbers as values."""
    out, at = [], 0
    while (start := text.find("{", at)) >= 0:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            out.append(text[at:start + 1])
            at = start + 1
            continue
        out.append(text[at:start] + json.dumps(_values(value), sort_keys=True, ensure_ascii=False))
        at = end
    return "".join(out) + text[at:]


def _values(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_values(v) for v in value]
    return _number(value)


def shape_of(value: Any, key: Any = None) -> Any:
    """A value with its volatile values replaced by their shape alone (no first appearance): how two values are
    compared where no capture is at hand. Recursive: the suite's JSON reader bounds the depth (framelog.py)."""
    if isinstance(value, dict):
        return {k: shape_of(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [shape_of(v, key) for v in value]
    if isinstance(value, str) and TIMESTAMP.match(value):
        return "<timestamp>"
    shape = _volatile(key, value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else None
    if shape is not None:
        return f"<{shape}>"
    if isinstance(value, str):
        return _text(value)
    return _number(value)


def shaped(capture: Capture, key: str, n: int | None, where_in_old: Any) -> Any:
    """The payload of frame `n` (None: the body) of exchange `key`, its volatile values replaced by their shape
    and where they first appeared, that place named in the old capture's numbering (`where_in_old`)."""
    here = _part(n)

    def walk(value: Any, parts: tuple[Any, ...], name: Any) -> Any:
        if isinstance(value, dict):
            return {k: walk(v, parts + (k,), k) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v, parts + (i,), name) for i, v in enumerate(value)]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and _volatile(name, value):
            return _first(_number(value), "epoch ms", parts)
        if not isinstance(value, str):
            return _number(value)
        if TIMESTAMP.match(value):
            fraction = len(value.split(".")[1].rstrip("Z").split("+")[0].split("-")[0]) if "." in value else 0
            return f"<timestamp, {'Z' if value.endswith('Z') else 'offset'}, {fraction} fraction digits>"
        shape = _volatile(name, value)
        if shape is None:
            return value if isinstance(value, _Said) else _text(value)
        return _first(value, shape, parts)

    def _first(value: Any, shape: str, parts: tuple[Any, ...]) -> str:
        first = capture.first.get(value)
        if first is None or (first[0], first[1], first[2]) == (key, here, _path(parts)):
            return f"<{shape}, first seen here>"
        return f"<{shape}, as at {where_in_old(first)}>"

    return walk(capture.payload(key, n), (), None)
