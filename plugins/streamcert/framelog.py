"""The frame log: one data model for a live run, a stored cassette and a hand-made test log.

Rules read only this. Times are seconds (monotonic) from the start of the log, so a rule can
measure gaps and spans without ever reading a clock itself.
"""

from __future__ import annotations

import base64
import json
import os
import re
import tempfile
import threading
import zlib
from array import array
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

from .contract.capture import CONTENT_ENCODING, DECODED_LIMIT, GRPC_STATUS, OVERFLOW, PARAMS, STREAMING, UNJUDGED

if TYPE_CHECKING:
    from .scrub import Scrubber

FORMAT_VERSION = 1

# How a response body ended.
END_CLOSED = "closed"  # the server closed it (or sent the whole body)
END_TIME_LIMIT = "time_limit"  # the suite cut it at its per-stream limit
END_CLIENT_STOP = "client_stop"  # the driver stopped reading on purpose (e.g. at an interrupted state)
END_ERROR = "error"  # no answer: refused, reset or timed out before the headers, or not sent at all
END_RESET = "reset"  # the connection failed after the answer began (`error` says how, after how many bytes)
END_IDLE = "idle"  # the suite stopped waiting: nothing arrived for its idle-gap limit (`error` names the gap)



class Spool:
    """A temporary file holding the raw bytes of one large response, so that memory holds only what was
    decoded from them; each `Chunk` reads its bytes back when asked. The file is gone with the object."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="streamcert-")
        self._fd = self._file.fileno()
        self._lock = threading.Lock()
        self.size = 0

    def add(self, data: bytes) -> int:
        """Append `data`; its offset in the file."""
        with self._lock:
            at = self.size
            view = memoryview(data)
            while view:
                written = os.pwrite(self._fd, view, at + len(data) - len(view))
                view = view[written:]
            self.size += len(data)
            return at

    def __deepcopy__(self, memo: dict[int, Any]) -> Spool:
        return self  # what it holds never changes once written: a copy of a chunk may read the same file

    def read(self, at: int, length: int) -> bytes:
        parts, end = [], at + length
        while at < end:
            part = os.pread(self._fd, end - at, at)
            if not part:
                raise OSError(f"the spool ends at {at}, before {end}")
            parts.append(part)
            at += len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)


class Chunk:
    """Bytes as they arrived from the socket, stamped with their arrival time. `Chunk(t, data)` holds its
    bytes; a chunk of a large response keeps only where they are in its exchange's `Spool` and its
    `length`, and reads them back on `data`."""

    __slots__ = ("t", "length", "_data", "_spool", "_at")
    edits = 0  # bumped by every assignment to `data`, so caches of what chunks hold know they are stale

    def __init__(self, t: float, data: bytes = b"", *, spool: Spool | None = None, at: int = 0,
                 length: int | None = None) -> None:
        self.t = t
        self._spool, self._at = spool, at
        self._data = data if spool is None else None
        self.length = len(data) if spool is None else int(length or 0)

    @property
    def data(self) -> bytes:
        if self._spool is None:
            return self._data
        return self._spool.read(self._at, self.length)

    @data.setter
    def data(self, value: bytes) -> None:
        self._data, self._spool, self.length = value, None, len(value)
        Chunk.edits += 1

    @property
    def spooled(self) -> bool:
        return self._spool is not None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Chunk):
            return NotImplemented
        return self.t == other.t and self.length == other.length and self.data == other.data

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        where = f"spooled at {self._at}" if self._spool is not None else repr(self._data[:40])
        return f"Chunk(t={self.t!r}, length={self.length}, {where})"

    def to_json(self, scrubber: Scrubber | None = None) -> dict[str, Any]:
        # An echoed credential must not survive inside the raw bytes either.
        data = self.data if scrubber is None else scrubber.bytes(self.data)
        return {"t": round(self.t, 6), "b64": base64.b64encode(data).decode("ascii")}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Chunk":
        return cls(t=float(d["t"]), data=base64.b64decode(d["b64"]))


# -- reading JSON ------------------------------------------------------------------------------------
# RFC 8259 §9 lets a parser limit the depth of nesting. The suite's reader stops at MAX_JSON_DEPTH (the
# limit serde_json keeps by default), well inside what every recursive walker a value meets can follow
# (comparison, json.dumps, the scrubber, deepdiff in `streamcert diff`, which stops near 250): a deeper
# text is a finding about the JSON received, never a harness fault.
MAX_JSON_DEPTH = 128
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def json_depth(text: str | bytes) -> int:
    """The deepest nesting of arrays and objects in a JSON text (brackets inside strings not counted)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8", "replace")
    skeleton = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(0, max(accumulate(map(_STEP.__getitem__, skeleton)), default=0))


def nested_deeper(value: Any, limit: int) -> bool:
    """Whether a parsed value nests arrays and objects more than `limit` deep (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        for child in item.values() if isinstance(item, dict) else item:
            if isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
    return False


def too_deep(depth: int) -> str:
    return (f"JSON nested {depth} levels deep; the suite's JSON reader stops at {MAX_JSON_DEPTH} levels "
            f"(RFC 8259 §9 lets a parser limit nesting)")


TOO_DEEP = "JSON nested "  # how a complaint of read_json about nesting begins


_scan = json.JSONDecoder().scan_once  # what json.loads runs, without its checks around (re-run on a failure)
_FAILED = object()


def read_json(text: str | bytes) -> tuple[Any, str | None]:
    """(value, None) for a JSON text, else (None, the complaint): the parser's, or `too_deep`."""
    value = _FAILED
    try:
        if isinstance(text, str):  # the fast way for what nearly every event holds: one value, no blanks
            try:
                value, end = _scan(text, 0)
                if end != len(text) and text[end:].strip():
                    value = _FAILED
            except (StopIteration, ValueError):
                value = _FAILED
        if value is _FAILED:
            value = json.loads(text)  # for the values the fast way leaves, and for the parser's complaint
    except RecursionError:
        return None, too_deep(json_depth(text))
    except ValueError as exc:
        return None, f"{type(exc).__name__}: {exc}"
    # Only a text holding that many brackets can nest that deep.
    if len(text) > 2 * MAX_JSON_DEPTH and isinstance(value, (dict, list)):
        opening = (b"[", b"{") if isinstance(text, (bytes, bytearray)) else ("[", "{")
        if sum(map(text.count, opening)) > MAX_JSON_DEPTH and nested_deeper(value, MAX_JSON_DEPTH):
            return None, too_deep(json_depth(text))
    return value, None


class ContentDecoder:
    """Decodes a body sent with a Content-Encoding (gzip, deflate) piece by piece, never yielding more
    than `limit` bytes in all: a bomb stops at the cap (`over`), a corrupt body says why (`error`)."""

    PIECE = 1024 * 1024  # decoded at a time, however much one compressed read expands to
    CODINGS = ("gzip", "x-gzip", "deflate")

    def __init__(self, coding: str, limit: int) -> None:
        self.coding = coding
        self.limit = limit
        self.size = 0  # bytes decoded (and yielded) so far
        self.over = False  # more than `limit` would have come out
        self.error: str | None = None
        self._raw = False  # a "deflate" body that is a raw deflate stream, not zlib's
        self._z = self._new()

    def _new(self) -> Any:
        if self.coding == "deflate":
            return zlib.decompressobj(-15 if self._raw else 15)
        return zlib.decompressobj(31)

    def feed(self, data: bytes) -> Iterator[bytes]:
        pending = data
        while not self.over and self.error is None:
            try:
                out = self._z.decompress(pending, self.PIECE)
            except zlib.error as exc:
                if self.coding == "deflate" and self.size == 0 and not self._raw:
                    self._raw = True
                    self._z = self._new()
                    continue
                self.error = str(exc)
                return
            pending = self._z.unconsumed_tail
            if self._z.eof:  # a gzip body may hold several members, one after another
                pending, self._z = self._z.unused_data, self._new()
            if self.size + len(out) > self.limit:
                out, self.over = out[:self.limit - self.size], True
            self.size += len(out)
            if out:
                yield out
            if not pending and len(out) < self.PIECE:
                return


PAYLOAD_BUDGET = 8 * 1024 * 1024  # what the parsed payloads of one exchange's events may keep in memory


def budgeted(events: list[Event], size: int = PAYLOAD_BUDGET) -> list[Event]:
    """The events, sharing one ParseBudget of `size` (as the capture gives an exchange's events)."""
    budget = ParseBudget(size)
    for ev in events:
        ev._budget = budget
    return events


class ParseBudget:
    """How much memory the parsed payloads of one exchange's events may keep. An event whose parse no
    longer fits is parsed again each time it is read, so a stream near its size cap does not hold its
    data twice (the text and the objects parsed from it)."""

    PER_EVENT = 2048  # about what the objects parsed from a small JSON-RPC event take beyond its text

    def __init__(self, size: int) -> None:
        self.left = size

    def take(self, text: str) -> bool:
        cost = len(text) + self.PER_EVENT
        if cost > self.left:
            return False
        self.left -= cost
        return True


# The one parse kept of the events whose exchange's budget keeps none: (the event, its value, its complaint) of the
# last one read, so two reads of one event in a row parse it once and a large event is never held parsed twice.
# One tuple, swapped whole (the fault meta-test judges in threads). Let go when the judging of a log is over.
_last_parse: tuple[Any, Any, str | None] = (None, None, None)


def forget_last_parse() -> None:
    global _last_parse
    _last_parse = (None, None, None)


@dataclass(slots=True)
class Event:
    """One dispatched server-sent event, or one comment line (kept, with its time).

    `t` is the arrival time of the chunk that completed the event.
    """

    index: int
    t: float
    kind: str = "event"  # "event" | "comment"
    data: str = ""  # the event's data buffer (without the trailing LF); for a comment, its text
    event_type: str = "message"
    last_event_id: str = ""
    retry: int | None = None  # the reconnection time in force when the event was dispatched

    _parsed: Any = field(default=None, repr=False, compare=False)
    _error: str | None = field(default=None, repr=False, compare=False)
    _done: bool = field(default=False, repr=False, compare=False)
    _budget: ParseBudget | None = field(default=None, repr=False, compare=False)  # None: always keep the parse

    @property
    def is_comment(self) -> bool:
        return self.kind == "comment"

    def json(self) -> tuple[Any, str | None]:
        """(value, None) when data is JSON, else (None, the complaint: the parser's, or that it nests
        deeper than the suite reads, `too_deep`). The parse of an event past its exchange's budget is not
        kept with the event, but the last such parse is (`_last_parse`): the same event read again at once (a
        rule's body, then its evidence) is not parsed a second time while the first parse is alive."""
        if self._done:
            return self._parsed, self._error
        global _last_parse
        last = _last_parse
        if last[0] is self:
            return last[1], last[2]
        value, error = read_json(self.data)
        if self._budget is None or self._budget.take(self.data):
            self._parsed, self._error, self._done = value, error, True
        else:
            _last_parse = (self, value, error)
        return value, error

    @property
    def too_deep(self) -> str | None:
        """The complaint when the data nests deeper than the suite's JSON reader goes (else None); cheap
        for the text of an ordinary event, which holds too few brackets to be that deep."""
        data = self.data
        if len(data) <= 2 * MAX_JSON_DEPTH or data.count("[") + data.count("{") <= MAX_JSON_DEPTH:
            return None
        error = self.json()[1]
        return error if error and error.startswith(TOO_DEEP) else None

    @property
    def payload(self) -> Any:
        return self.json()[0]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"i": self.index, "t": round(self.t, 6), "kind": self.kind, "data": self.data}
        if self.event_type != "message":
            out["event"] = self.event_type
        if self.last_event_id:
            out["id"] = self.last_event_id
        if self.retry is not None:
            out["retry"] = self.retry
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Event":
        return cls(
            index=int(d["i"]),
            t=float(d["t"]),
            kind=d.get("kind", "event"),
            data=d.get("data", ""),
            event_type=d.get("event", "message"),
            last_event_id=d.get("id", ""),
            retry=d.get("retry"),
        )


@dataclass
class Exchange:
    """One request and everything that came back for it."""

    label: str  # its role in the scenario: "card", "stream", "get_task", ...
    method: str  # HTTP method
    url: str
    rpc_method: str | None = None  # the A2A operation (SendMessage, GetTask…), on every binding
    request_headers: dict[str, str] = field(default_factory=dict)
    request_body: Any = None  # the JSON sent, or raw text for a deliberately broken body
    status: int | None = None
    response_headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    t_sent: float = 0.0
    t_headers: float | None = None
    t_end: float | None = None
    end: str = END_CLOSED
    error: str | None = None
    chunks: list[Chunk] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    discarded: str | None = None  # an unterminated last SSE block, discarded as the rules say
    notes: dict[str, Any] = field(default_factory=dict)
    binding: str = "jsonrpc"  # the A2A protocol binding it went over (protocols/bindings.py)

    # -- reading helpers ---------------------------------------------------------------------
    @property
    def size(self) -> int:
        """Bytes received on the wire (those kept in `chunks`; past a size cap see `overflow`)."""
        return sum(c.length for c in self.chunks)

    @property
    def wire_bytes(self) -> bytes:
        """The body as the socket gave it (still compressed when it came with a Content-Encoding)."""
        return b"".join(c.data for c in self.chunks)

    def pieces(self) -> Iterator[bytes]:
        """The body in pieces, decoded when the capture decoded its Content-Encoding (up to the cap it
        decoded with)."""
        coding = self.notes.get(CONTENT_ENCODING)
        if not coding:
            for c in self.chunks:
                yield c.data
            return
        decoder = ContentDecoder(coding, int(self.notes.get(DECODED_LIMIT) or 0))
        for c in self.chunks:
            yield from decoder.feed(c.data)

    @property
    def body(self) -> bytes:
        """The body the server meant: the wire bytes, decoded when they came with a Content-Encoding."""
        if not self.notes.get(CONTENT_ENCODING):
            return self.wire_bytes
        return b"".join(self.pieces())

    def head(self, n: int) -> bytes:
        """The first `n` bytes of `body`, reading no more of it than that."""
        out, size = [], 0
        for piece in self.pieces():
            out.append(piece[:n - size])
            size += len(out[-1])
            if size >= n:
                break
        return b"".join(out)

    @property
    def blank(self) -> bool:
        """The body holds nothing but white space (or nothing at all)."""
        return all(not piece.strip() for piece in self.pieces())

    @property
    def unjudged(self) -> str | None:
        """Why nothing of this answer can be judged (a size cap reached, an encoding it cannot read), as
        the finding says it; None when it can be judged."""
        record = self.notes.get(UNJUDGED)
        return record.get("reason") if isinstance(record, dict) else None

    @property
    def overflow(self) -> dict[str, Any] | None:
        """The record of a response past its size cap: what was measured of the part not kept."""
        return self.notes.get(OVERFLOW)

    @property
    def content_type(self) -> str:
        return self.response_headers.get("content-type", "")

    @property
    def media_type(self) -> str:
        return self.content_type.split(";", 1)[0].strip().lower()

    @property
    def is_sse(self) -> bool:
        return self.media_type == "text/event-stream"

    @property
    def is_stream(self) -> bool:
        """The answer is a stream of frames: an event stream, or a gRPC server stream that sent messages or
        ended OK (one that ended in an error before any message is an error answer, as a JSON-RPC error sent
        as application/json before a stream starts)."""
        if self.binding == "grpc":
            status = self.notes.get(GRPC_STATUS) or {}
            return bool(self.notes.get(STREAMING)) and (bool(self.events) or status.get("code") == "OK")
        return self.is_sse

    @property
    def params(self) -> Any:
        """The operation's request message: JSON-RPC's `params`; the body (or, for a GET, what its path and
        query carried, noted by the client) on HTTP+JSON; the request as ProtoJSON on gRPC."""
        if self.binding == "jsonrpc":
            return self.request_body.get("params") if isinstance(self.request_body, dict) else None
        return self.notes.get(PARAMS, self.request_body)

    JSON_KEPT = 16 * 1024 * 1024  # a body up to this size keeps its parse; a larger one is parsed when read

    def json(self) -> tuple[Any, str | None]:
        """(value, None) when the body is JSON, else (None, the complaint; see `read_json`). An answer left
        unjudged (`unjudged`) is not read at all: the complaint is why."""
        if self.unjudged:
            return None, self.unjudged
        key = (Chunk.edits, len(self.chunks), id(self.chunks), self.notes.get(CONTENT_ENCODING))
        cached = self.__dict__.get("_json")
        if cached is not None and cached[0] == key:
            return cached[1]
        body = self.body
        parsed = read_json(body)
        if len(body) <= self.JSON_KEPT:
            self.__dict__["_json"] = (key, parsed)
        return parsed

    @property
    def rpc_id(self) -> Any:
        return self.request_body.get("id") if isinstance(self.request_body, dict) else None

    def derived(self, name: str, build: Callable[[], Any]) -> Any:
        """What `build()` makes of the events, made once per events list and kept beside it (not a field:
        never saved): made again when the list is another one or has grown, and for a copy of the exchange."""
        events = self.events
        cached = self.__dict__.get(name)
        if cached is None or cached[0] != id(events) or cached[1] != len(events):
            # the list itself is held too, so that its id is not another list's while this is kept
            cached = self.__dict__[name] = (id(events), len(events), events, build())
        return cached[3]

    def let_go_of_events(self) -> None:
        """Drop the events and all that `derived` and `json` made of them (views, numbers, parses), so that a
        stream read for one question (the script probe's) holds no memory once it is answered, even while
        something still refers to the exchange."""
        self.events = []
        for name in [k for k in self.__dict__ if k.startswith("_")]:
            del self.__dict__[name]

    def data_events(self) -> list[Event]:
        """The events that are not comments (one list per events list)."""
        return self.derived("_data_events", lambda: [e for e in self.events if not e.is_comment])

    @property
    def too_deep(self) -> str | None:
        """Where this answer holds JSON nested deeper than the suite reads (`read_json`): which frame, or
        the body; None otherwise."""
        if self.is_sse:
            return self.derived("_too_deep", lambda: next((f"frame {n} is {why}" for n, ev in enumerate(
                self.data_events(), start=1) if (why := ev.too_deep)), None))
        if self.status is None:
            return None
        why = self.json()[1]
        return f"the body is {why}" if why and why.startswith(TOO_DEEP) else None

    def frame_number(self, event: Event) -> int:
        """The 1-based number of `event` among this exchange's data events (a comment: the number of the
        data event before it); 0 when it is not one of this exchange's events. Numbered once per events list
        and kept beside it (not a field: never saved), so evidence for every frame of a flood stays linear.
        A data event is found by its index (the parser numbers events in order) in an array of the data
        events' indexes; any other event through a table of every event, made only when one is asked."""
        data = self.data_events()
        indexes = self.derived("_data_indexes", lambda: array("q", [ev.index for ev in data]))
        at = bisect_left(indexes, event.index)
        if at < len(data) and data[at] is event:
            return at + 1

        def number() -> dict[int, int]:
            numbers, n = {}, 0
            for ev in self.events:
                n += not ev.is_comment
                numbers[id(ev)] = n
            return numbers

        return self.derived("_frame_numbers", number).get(id(event), 0)

    def results(self) -> Iterator[tuple[Event, Any]]:
        """(event, result) for every data event that carries an object result: a JSON-RPC response's `result`,
        or on the other bindings the frame itself (protocols/bindings.py)."""
        from .protocols.bindings import frame_answer

        for ev in self.data_events():
            result = frame_answer(self.binding, ev.payload)[0]
            if isinstance(result, dict):
                yield ev, result

    def first_bytes(self, n: int = 120) -> str:
        return self.head(n).decode("utf-8", "replace")

    # -- cassette form -----------------------------------------------------------------------
    def to_json(self, scrubber: Scrubber | None = None) -> dict[str, Any]:
        from .scrub import BY_NAME

        scrubber = scrubber or BY_NAME
        out = scrubber.value({
            "label": self.label,
            "method": self.method,
            "url": scrubber.url(self.url),
            "rpc_method": self.rpc_method,
            "request_headers": self.request_headers,
            "request_body": self.request_body,
            "status": self.status,
            "response_headers": self.response_headers,
            "t_sent": round(self.t_sent, 6),
            "t_headers": None if self.t_headers is None else round(self.t_headers, 6),
            "t_end": None if self.t_end is None else round(self.t_end, 6),
            "end": self.end,
            "error": self.error,
            "chunks": None,  # set below, in its place
            "events": [e.to_json() for e in self.events],
            "discarded": self.discarded,
            "notes": self.notes,
        })
        if self.binding != "jsonrpc":
            out["binding"] = self.binding
        # The chunks are scrubbed as one body, so a secret cut across two chunks is found too; each chunk's
        # bytes are read when its turn comes (a large response's are on disk, see Spool).
        scrubbed = scrubber.iter_pieces(_ChunkBytes(self.chunks))
        out["chunks"] = [Chunk(c.t, data).to_json() for c, data in zip(self.chunks, scrubbed)]
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Exchange":
        return cls(
            label=d["label"],
            method=d.get("method", "POST"),
            url=d.get("url", ""),
            rpc_method=d.get("rpc_method"),
            request_headers=dict(d.get("request_headers") or {}),
            request_body=d.get("request_body"),
            status=d.get("status"),
            response_headers=dict(d.get("response_headers") or {}),
            t_sent=float(d.get("t_sent") or 0.0),
            t_headers=d.get("t_headers"),
            t_end=d.get("t_end"),
            end=d.get("end", END_CLOSED),
            error=d.get("error"),
            chunks=[Chunk.from_json(c) for c in d.get("chunks", [])],
            events=budgeted([Event.from_json(e) for e in d.get("events", [])]),
            discarded=d.get("discarded"),
            notes=dict(d.get("notes") or {}),
            binding=d.get("binding", "jsonrpc"),
        )


@dataclass
class FrameLog:
    """Everything one scenario exchanged with the implementation, in order."""

    scenario: str
    target: str = ""
    exchanges: list[Exchange] = field(default_factory=list)
    script: dict[str, Any] | None = None
    notes: dict[str, Any] = field(default_factory=dict)  # driver facts: limits used, mode, ...
    started: str = ""  # wall-clock start, informational only

    def add(self, exchange: Exchange) -> Exchange:
        self.exchanges.append(exchange)
        return exchange

    def get(self, label: str) -> Exchange | None:
        """The last exchange with this label."""
        for ex in reversed(self.exchanges):
            if ex.label == label:
                return ex
        return None

    def all(self, label: str) -> list[Exchange]:
        return [ex for ex in self.exchanges if ex.label == label]

    def streams(self) -> list[Exchange]:
        return [ex for ex in self.exchanges if ex.notes.get(STREAMING)]

    # -- cassette form -----------------------------------------------------------------------
    def to_json(self, scrubber: Scrubber | None = None) -> dict[str, Any]:
        """The cassette form, scrubbed by `scrubber` (default: credential names only, no secret values)."""
        from .scrub import BY_NAME

        scrubber = scrubber or BY_NAME
        data = scrubber.value({
            "streamcert_cassette": FORMAT_VERSION,
            "scenario": self.scenario,
            "target": scrubber.url(self.target),
            "started": self.started,
            "script": self.script,
            "notes": self.notes,
        })
        data["exchanges"] = [ex.to_json(scrubber) for ex in self.exchanges]
        return data

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "FrameLog":
        if d.get("streamcert_cassette") != FORMAT_VERSION:
            raise ValueError(f"not a streamcert cassette of format {FORMAT_VERSION}")
        return cls(
            scenario=d["scenario"],
            target=d.get("target", ""),
            exchanges=[Exchange.from_json(x) for x in d.get("exchanges", [])],
            script=d.get("script"),
            notes=dict(d.get("notes") or {}),
            started=d.get("started", ""),
        )

    def save(self, path: str | Path, scrubber: Scrubber | None = None) -> Path:
        """Write the cassette atomically (a reader never sees half of it), scrubbed by `scrubber`, in vcrpy's
        YAML format (recordings/cassette.py; docs/cassettes.md), a large response streamed into the file."""
        from .recordings.cassette import write

        return write(self, path, scrubber)

    @classmethod
    def load(cls, path: str | Path, max_bytes: int | None = None) -> "FrameLog":
        """A cassette: vcrpy's YAML format, or the suite's older JSON form (`to_json`, format 1); one larger
        than `max_bytes` (default: limits.MAX_CASSETTE) is refused."""
        from .recordings.cassette import load

        return load(path) if max_bytes is None else load(path, max_bytes)


class _ChunkBytes:
    """The chunks' bytes as a sequence that reads each chunk's bytes when asked (for the scrubber)."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.chunks = chunks

    def __len__(self) -> int:
        return len(self.chunks)

    def __getitem__(self, i: int) -> bytes:
        return self.chunks[i].data

