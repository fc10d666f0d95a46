"""An httpx transport that stamps every response chunk with its monotonic arrival time.

It wraps the real transport; the response stream it hands back records each chunk as a
`framelog.Chunk` the moment the socket yields it, before anything parses it. The times are
seconds since the capture clock's origin (the start of the frame log).
"""

from __future__ import annotations

import time
from typing import AsyncIterator, Callable

import httpx

from ..framelog import Chunk

CHUNKS = "streamcert.chunks"  # response.extensions key: the list of Chunk, filled as bytes arrive
T_HEADERS = "streamcert.t_headers"


class Clock:
    """Monotonic seconds since an origin (the frame log's start)."""

    def __init__(self, origin: float | None = None) -> None:
        self.origin = time.monotonic() if origin is None else origin

    def __call__(self) -> float:
        return time.monotonic() - self.origin


class _StampedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, clock: Callable[[], float], sink: list[Chunk]) -> None:
        self._inner = inner
        self._clock = clock
        self._sink = sink

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._inner:
            if part:
                self._sink.append(Chunk(t=self._clock(), data=bytes(part)))
            yield part

    async def aclose(self) -> None:
        await self._inner.aclose()


class CaptureTransport(httpx.AsyncBaseTransport):
    def __init__(self, clock: Callable[[], float], inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.clock = clock
        self.inner = inner or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        t_headers = self.clock()
        sink: list[Chunk] = []
        assert isinstance(response.stream, httpx.AsyncByteStream)
        extensions = dict(response.extensions)
        extensions[CHUNKS] = sink
        extensions[T_HEADERS] = t_headers
        return httpx.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_StampedStream(response.stream, self.clock, sink),
            extensions=extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()
