"""An httpx transport that stamps every response chunk with its monotonic arrival time, within bounds.

It wraps the real transport; the response stream it hands back records each chunk the moment the
socket yields it, before anything parses it, in a `Capture`. The times are seconds since the capture
clock's origin (the start of the frame log).

A `Capture` keeps every byte below its cap, in memory while the response is small and in a temporary
file (`framelog.Spool`) past `SPOOL_AFTER`, so memory holds only what the reader decoded from them.
Past the cap (`max_stream_bytes` for an event stream, `max_body_bytes` for any other body) the response
is kept as lengths, a hash and windows: the chunks of its first `WINDOW` bytes stay, the rest are let go
(the file with them), and it keeps counting (reads, bytes, a SHA-256 of everything) and the last
`WINDOW` bytes: `overflow()` is that record.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any, AsyncIterator, Callable

import httpx

from ..framelog import Chunk, Spool
from ..limits import SPOOL_AFTER  # the bytes of one response past this go to a temporary file
from .pool import Pool

CHUNKS = "streamcert.chunks"  # response.extensions key: the list of Chunk, filled as bytes arrive
CAPTURE = "streamcert.capture"  # response.extensions key: the Capture filling it
T_HEADERS = "streamcert.t_headers"

WINDOW = 64 * 1024  # the last bytes kept of a response past its cap


class Clock:
    """Monotonic seconds since an origin (the frame log's start)."""

    def __init__(self, origin: float | None = None) -> None:
        self.origin = time.monotonic() if origin is None else origin

    def __call__(self) -> float:
        return time.monotonic() - self.origin


class Capture:
    """The bytes of one response as they arrive: kept as chunks up to `limit` bytes (None: no limit),
    counted and hashed whatever their number."""

    def __init__(self, limit: int | None = None, spool_after: int = SPOOL_AFTER) -> None:
        self.limit = limit
        self.spool_after = spool_after
        self.chunks: list[Chunk] = []
        self.size = 0  # bytes received
        self.reads = 0  # non-empty reads
        self.kept = 0  # bytes kept in `chunks`
        self.over = False  # past the limit: nothing more is kept
        self.last_t: float | None = None  # when the last read arrived
        self._hash = hashlib.sha256()
        self._tail = bytearray()  # the last WINDOW bytes received past the limit
        self._spool: Spool | None = None

    def add(self, t: float, data: bytes) -> None:
        self.size += len(data)
        self.reads += 1
        self.last_t = t
        self._hash.update(data)
        if self.over or (self.limit is not None and self.kept + len(data) > self.limit):
            if not self.over:
                self.over = True
                self._keep_head()
            if len(data) >= WINDOW:
                self._tail[:] = data[-WINDOW:]
            else:
                self._tail += data
                del self._tail[:-WINDOW]
            return
        if self._spool is None and self.kept + len(data) > self.spool_after:
            self._spool = Spool()
        if self._spool is None:
            self.chunks.append(Chunk(t, data))
        else:
            self.chunks.append(Chunk(t, spool=self._spool, at=self._spool.add(data), length=len(data)))
        self.kept += len(data)

    def _keep_head(self) -> None:
        """Past the limit: keep the chunks of the first WINDOW bytes, let the others (and their file) go."""
        kept = n = 0
        for chunk in self.chunks:
            if kept + chunk.length > WINDOW:
                break
            kept += chunk.length
            n += 1
        del self.chunks[n:]
        self.kept = kept
        if not any(c.spooled for c in self.chunks):
            self._spool = None

    def overflow(self, **more: Any) -> dict[str, Any]:
        """What is known of a response past its limit: its size and reads in all, the part kept, a SHA-256
        of every byte, and its last bytes as text (text, so that a scrubber finds a secret echoed there)."""
        return {"limit": self.limit, "bytes": self.size, "reads": self.reads, "kept_bytes": self.kept,
                "kept_reads": len(self.chunks), "sha256": self._hash.hexdigest(),
                "tail": bytes(self._tail).decode("utf-8", "replace"), "tail_bytes": len(self._tail), **more}


class _StampedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, clock: Callable[[], float], capture: Capture) -> None:
        self._inner = inner
        self._clock = clock
        self._capture = capture

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._inner:
            if part:
                self._capture.add(self._clock(), bytes(part))
            yield part

    async def aclose(self) -> None:
        await self._inner.aclose()


class CaptureTransport(httpx.AsyncBaseTransport):
    """`max_body` and `max_stream` (None: unbounded) cap what one response keeps: an event stream's
    bytes, any other body's."""

    def __init__(self, clock: Callable[[], float], inner: httpx.AsyncBaseTransport | None = None, *,
                 max_body: int | None = None, max_stream: int | None = None) -> None:
        self.clock = clock
        self.inner = inner or Pool()
        self.max_body = max_body
        self.max_stream = max_stream

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        t_headers = self.clock()
        streaming = response.headers.get("content-type", "").split(";", 1)[0].strip().lower() == "text/event-stream"
        capture = Capture(self.max_stream if streaming else self.max_body)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        extensions = dict(response.extensions)
        extensions[CHUNKS] = capture.chunks
        extensions[CAPTURE] = capture
        extensions[T_HEADERS] = t_headers
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_StampedStream(response.stream, self.clock, capture),
            extensions=extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()
