"""The reference A2A client's wire: the agent's card and the headers of every request (`Agent`,
`request_headers`), and a response read as it arrives, SSE parsed with the suite's own parser (`Feed`); with
the fault variants that get one of those wrong."""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import httpx

from ... import limits
from ...protocols import a2a
from ...wire.sse import SSEParser
from ..faults import switch, variant

# Where the client's diagnostics go: its stderr when it runs as a program; what the run gave `in_process` when the
# suite plays it in its own process (each run's tasks see their own).
STDERR: ContextVar[Callable[[str], None] | None] = ContextVar("streamcert_client_stderr", default=None)


def say(text: str) -> None:
    """One line of diagnostics: `streamcert client: TEXT`."""
    line = f"streamcert client: {text}\n"
    write = STDERR.get()
    if write is None:
        sys.stderr.write(line)
    else:
        write(line)


# -- the wire ----------------------------------------------------------------------------------------

END = object()  # a Feed's last item


class Feed:
    """One POST's answer, read in the background: the JSON values it carries in arrival order (each event
    of a stream, or the one body of an answer that is not a stream), then END."""

    def __init__(self, http: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str],
                 fault: str | None) -> None:
        self.fault = fault
        self.items: asyncio.Queue = asyncio.Queue()
        self.count = 0  # JSON values received
        self.dropped = False  # the connection failed (refused, reset, cut short) rather than closing
        self.error: str | None = None
        self.first = asyncio.Event()  # set at the first value, or at the end
        self._task = asyncio.create_task(self._read(http, url, body, headers))

    async def _read(self, http: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str]) -> None:
        try:
            async with http.stream("POST", url, content=body, headers=headers) as response:
                if response.headers.get("content-type", "").split(";")[0].strip().lower() == a2a.SSE_MEDIA_TYPE:
                    await self._events(response)
                else:
                    await self._body(response)
        except httpx.TransportError as exc:
            self.dropped, self.error = True, f"{type(exc).__name__}: {exc or 'the connection failed'}"
        except httpx.HTTPError as exc:
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.items.put_nowait(END)
            self.first.set()

    async def _events(self, response: httpx.Response) -> None:
        parser = variant(self.fault, SSEParser, {BOM_DROPS_FIRST: _BomKept, DISPATCHES_UNTERMINATED: _PendingDispatched})(
            max_event=int(limits.MAX_EVENT.default))
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limits.MAX_STREAM.default:
                self.error = f"the stream passed {limits.MAX_STREAM.default:.0f} bytes: no longer read"
                return
            for event in parser.feed(_break_chunk(chunk, self.fault), time.monotonic()):
                if event.kind == "event":
                    self._put(event.data)
        for event in parser.finish(time.monotonic()):  # an event the stream ended inside: never one (§9.2.6)
            if event.kind == "event":
                self._put(event.data)

    async def _body(self, response: httpx.Response) -> None:
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limits.MAX_BODY.default:
                self.error = f"the answer passed {limits.MAX_BODY.default:.0f} bytes: no longer read"
                return
        if not body.strip():
            self.error = f"HTTP {response.status_code} with an empty body"
            return
        self._put(bytes(body).decode("utf-8", "replace"))

    def _put(self, text: str) -> None:
        try:
            value = json.loads(text)
        except ValueError:
            say(f"a frame that is not JSON, left aside: {text[:200]!r}")
            return
        self.count += 1
        self.items.put_nowait(value)
        self.first.set()

    async def next(self, wait: float) -> Any:
        """The next value, END, or None when nothing came within `wait` seconds."""
        if not self.items.empty():
            return self.items.get_nowait()
        if wait <= 0:
            return None
        try:
            return await asyncio.wait_for(self.items.get(), wait)
        except asyncio.TimeoutError:
            return None

    @property
    def failed_before_answer(self) -> bool:
        """The connection dropped before anything came back: the request may not have been taken."""
        return self.dropped and self.count == 0

    async def close(self) -> None:
        self._task.cancel()
        # Waited for without taking its end as ours: a cancel of the client itself (the suite stopping it at a limit)
        # still ends the client here, rather than being swallowed with the reader's.
        await asyncio.wait([self._task])
        if not self._task.cancelled():
            self._task.exception()  # closing: how the reader ended does not matter


class Agent:
    """The agent the client talks to: its JSON-RPC URL and the headers every request carries."""

    def __init__(self, http: httpx.AsyncClient, rpc_url: str, extensions: list[str], fault: str | None) -> None:
        self.http = http
        self.rpc_url = rpc_url
        self.extensions = extensions
        self.fault = fault
        self._next_id = 1
        self.feeds: list[Feed] = []

    def post(self, method: str, params: Any, extensions: tuple[str, ...] = ()) -> Feed:
        body = {"jsonrpc": a2a.JSONRPC_VERSION, "id": self._next_id, "method": method, "params": params}
        self._next_id += 1
        activated = self.extensions + [e for e in extensions if e not in self.extensions]
        feed = Feed(self.http, self.rpc_url, json.dumps(body, ensure_ascii=False).encode("utf-8"),
                    request_headers(method, activated, self.fault), self.fault)
        self.feeds.append(feed)
        return feed

    async def close(self) -> None:
        for feed in self.feeds:
            await feed.close()


def request_headers(method: str | None, extensions: list[str], fault: str | None = None) -> dict[str, str]:
    """What every request carries: A2A-Version (the card's GET too), Accept by what the call answers with,
    the extensions activated; `method` None for the card."""
    streaming = method in a2a.STREAMING_METHODS
    headers = {"Accept": a2a.SSE_MEDIA_TYPE if streaming else a2a.JSON_MEDIA_TYPE,
               a2a.VERSION_HEADER: a2a.PROTOCOL_VERSION}
    if method is not None:
        headers["Content-Type"] = a2a.JSON_MEDIA_TYPE
    if extensions:
        headers[a2a.EXTENSIONS_HEADER] = ",".join(extensions)
    return _break_headers(headers, streaming, fault)


def card_streams(card: dict[str, Any]) -> bool:
    caps = card.get("capabilities")
    return isinstance(caps, dict) and caps.get("streaming") is True


def declared_extensions(card: dict[str, Any]) -> list[str]:
    caps = card.get("capabilities")
    exts = caps.get("extensions") if isinstance(caps, dict) else None
    return [e["uri"] for e in exts if isinstance(e, dict) and isinstance(e.get("uri"), str)] \
        if isinstance(exts, list) else []


def mint() -> str:
    return str(uuid.uuid4())


# -- fault variants: each a client that gets one thing wrong ---------------------------------------------
SPLIT_CHAR_LOST = switch("split-char-lost")
BOM_DROPS_FIRST = switch("bom-drops-first")
DISPATCHES_UNTERMINATED = switch("dispatches-unterminated")
NO_VERSION_HEADER = switch("no-version-header")
STREAM_ACCEPT_JSON = switch("stream-accept-json")


def _break_chunk(chunk: bytes, fault: str | None) -> bytes:
    if SPLIT_CHAR_LOST.on(fault):
        return chunk.decode("utf-8", "ignore").encode("utf-8")  # each chunk decoded alone
    return chunk


class _BomKept(SSEParser):
    """A reader that does not skip a leading BOM: it stays in the first line's field name, so the first
    event's `data` field is not one."""

    def _skip_bom(self, chunk: bytes) -> bytes:
        self._started = True
        return chunk


class _PendingDispatched(SSEParser):
    """A reader that, at the end of the stream, dispatches the event it was reading although no blank line ended
    it (WHATWG HTML §9.2.6 discards it): its line, ended or not, and the pending data go out as an event."""

    def finish(self, t: float = 0.0) -> list:
        return self.feed(b"\n\n", t)


def _break_headers(headers: dict[str, str], streaming: bool, fault: str | None) -> dict[str, str]:
    if NO_VERSION_HEADER.on(fault):
        headers.pop(a2a.VERSION_HEADER)
    if STREAM_ACCEPT_JSON.on(fault) and streaming:
        headers["Accept"] = a2a.JSON_MEDIA_TYPE
    return headers
