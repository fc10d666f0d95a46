"""The frame log: one data model for a live run, a stored cassette and a hand-made test log.

Rules read only this. Times are seconds (monotonic) from the start of the log, so a rule can
measure gaps and spans without ever reading a clock itself.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

FORMAT_VERSION = 1

# How a response body ended.
END_CLOSED = "closed"  # the server closed it (or sent the whole body)
END_TIME_LIMIT = "time_limit"  # the suite cut it at its per-stream limit
END_CLIENT_STOP = "client_stop"  # the driver stopped reading on purpose (e.g. at an interrupted state)
END_ERROR = "error"  # transport error (refused, reset, timeout before headers)

SCRUBBED = "***"


@dataclass
class Chunk:
    """Bytes as they arrived from the socket, stamped with their arrival time."""

    t: float
    data: bytes

    def to_json(self, secrets: tuple[str, ...] = ()) -> dict[str, Any]:
        data = self.data
        for s in secrets:  # an echoed credential must not survive inside the raw bytes either
            if s:
                data = data.replace(s.encode("utf-8"), SCRUBBED.encode("ascii"))
        return {"t": round(self.t, 6), "b64": base64.b64encode(data).decode("ascii")}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Chunk":
        return cls(t=float(d["t"]), data=base64.b64decode(d["b64"]))


@dataclass
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

    @property
    def is_comment(self) -> bool:
        return self.kind == "comment"

    def json(self) -> tuple[Any, str | None]:
        """(value, None) when data is JSON, else (None, the parser's complaint)."""
        if not self._done:
            try:
                self._parsed = json.loads(self.data)
            except ValueError as exc:
                self._error = f"{type(exc).__name__}: {exc}"
            self._done = True
        return self._parsed, self._error

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
    rpc_method: str | None = None
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

    # -- reading helpers ---------------------------------------------------------------------
    @property
    def body(self) -> bytes:
        return b"".join(c.data for c in self.chunks)

    @property
    def content_type(self) -> str:
        return self.response_headers.get("content-type", "")

    @property
    def media_type(self) -> str:
        return self.content_type.split(";", 1)[0].strip().lower()

    @property
    def is_sse(self) -> bool:
        return self.media_type == "text/event-stream"

    def json(self) -> tuple[Any, str | None]:
        try:
            return json.loads(self.body), None
        except ValueError as exc:
            return None, f"{type(exc).__name__}: {exc}"

    @property
    def rpc_id(self) -> Any:
        return self.request_body.get("id") if isinstance(self.request_body, dict) else None

    def data_events(self) -> list[Event]:
        return [e for e in self.events if not e.is_comment]

    def frame_number(self, event: Event) -> int:
        """The 1-based number of `event` among this exchange's data events (a comment: the number of the
        data event before it); 0 when it is not one of this exchange's events. Numbered once per events list
        and kept beside it (not a field: never saved), so evidence for every frame of a flood stays linear."""
        key = (id(self.events), len(self.events))
        cached = self.__dict__.get("_frame_numbers")
        if cached is None or cached[0] != key:
            numbers, n = {}, 0
            for ev in self.events:
                n += not ev.is_comment
                numbers[id(ev)] = n
            cached = self.__dict__["_frame_numbers"] = (key, numbers)
        return cached[1].get(id(event), 0)

    def results(self) -> Iterator[tuple[Event, Any]]:
        """(event, JSON-RPC result) for every data event whose payload has an object `result`."""
        for ev in self.data_events():
            value = ev.payload
            if isinstance(value, dict) and isinstance(value.get("result"), dict):
                yield ev, value["result"]

    def first_bytes(self, n: int = 120) -> str:
        return self.body[:n].decode("utf-8", "replace")

    # -- cassette form -----------------------------------------------------------------------
    def to_json(self, secrets: tuple[str, ...] = ()) -> dict[str, Any]:
        return {
            "label": self.label,
            "method": self.method,
            "url": self.url,
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
            "chunks": [c.to_json(secrets) for c in self.chunks],
            "events": [e.to_json() for e in self.events],
            "discarded": self.discarded,
            "notes": self.notes,
        }

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
            events=[Event.from_json(e) for e in d.get("events", [])],
            discarded=d.get("discarded"),
            notes=dict(d.get("notes") or {}),
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
        return [ex for ex in self.exchanges if ex.notes.get("streaming")]

    # -- cassette form -----------------------------------------------------------------------
    def to_json(self, secrets: tuple[str, ...] = ()) -> dict[str, Any]:
        data = {
            "streamcert_cassette": FORMAT_VERSION,
            "scenario": self.scenario,
            "target": self.target,
            "started": self.started,
            "script": self.script,
            "notes": self.notes,
            "exchanges": [ex.to_json(secrets) for ex in self.exchanges],
        }
        return scrub(data, secrets)

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

    def save(self, path: str | Path, secrets: tuple[str, ...] = ()) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(secrets), indent=1, ensure_ascii=False) + "\n", "utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> "FrameLog":
        return cls.from_json(json.loads(Path(path).read_text("utf-8")))


SECRET_HEADERS = ("authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key")


def scrub(value: Any, secrets: tuple[str, ...] = ()) -> Any:
    """Replace credential headers and every occurrence of the given secret strings."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(k, str) and k.lower() in SECRET_HEADERS and isinstance(v, str):
                out[k] = SCRUBBED
            else:
                out[k] = scrub(v, secrets)
        return out
    if isinstance(value, list):
        return [scrub(v, secrets) for v in value]
    if isinstance(value, str) and secrets:
        for s in secrets:
            if s:
                value = value.replace(s, SCRUBBED)
        return value
    return value
