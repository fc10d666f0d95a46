"""Sending a request again when a kept-alive connection was closed under it: an httpx transport around the pool.

A request that fails before any byte of its answer came, on a connection an earlier exchange had used, because
the server had closed that connection (it reads as "Server disconnected without sending a response", or a reset),
is sent again on another connection: a server may close a kept-alive connection at any time, even without
`Connection: close` (RFC 9112 §9.6), and a request that meets that close was never read by the server (the retry
RFC 9112 §9.3.1 allows a client that knows so; browsers resend on a reused connection in this case alike). A
request on a connection opened for it is never sent again: its failure is the server's answer. Each resend is
recorded in the response's extensions (`RETRIED`), so the exchange says it happened.

This is policy, kept out of `capture.py` (which only stamps what arrives): the A2A client stacks the two,
capture outside, so a resent request is captured once, as the answer it finally got.
"""

from __future__ import annotations

import errno
from typing import Any

import httpx

from .pool import Pool

RETRIED = "streamcert.retried"  # response.extensions key: why the request was sent again, one entry per resend
RESENDS = 3  # reused connections a request may find closed in turn before the pool opens one for it


class ResendTransport(httpx.AsyncBaseTransport):
    """`inner` (default: httpx's pool, wire/pool.py) with a request sent again when it met a reused connection's close."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self.inner = inner or Pool()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        retried: list[str] = []
        given = request.extensions.get("trace")
        while True:
            opened: list[str] = []  # the pool opened a connection for this try (httpcore's trace names it)

            async def trace(name: str, info: dict[str, Any], opened: list[str] = opened) -> None:
                if name.startswith("connection.connect_tcp") or name.startswith("connection.connect_unix"):
                    opened.append(name)
                if given is not None:
                    await given(name, info)

            request.extensions["trace"] = trace
            try:
                response = await self.inner.handle_async_request(request)
                break
            except httpx.TransportError as exc:
                if opened or len(retried) >= RESENDS or not closed_before_answer(exc):
                    raise
                retried.append(said(exc))
        response.extensions = {**response.extensions, RETRIED: retried}
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


def broken_by(exc: BaseException, *codes: int) -> bool:
    """Whether a transport error comes from an OS error of one of `codes` (ECONNRESET, EPIPE), however deeply
    wrapped."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if getattr(seen, "errno", None) in codes or (errno.ECONNRESET in codes and isinstance(seen, ConnectionResetError)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def closed_before_answer(exc: httpx.TransportError) -> bool:
    """Whether a request failed because the server had closed the connection before any byte of the answer: the
    end of the connection where the status line should be, or a reset (or broken pipe) while it was sent or
    awaited its answer."""
    if isinstance(exc, httpx.RemoteProtocolError):
        return "without sending a response" in str(exc)
    return isinstance(exc, (httpx.ReadError, httpx.WriteError)) and broken_by(exc, errno.ECONNRESET, errno.EPIPE)


def said(exc: BaseException) -> str:
    """A transport error as a message names it: its type, and its own words or those of what caused it."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None or str(seen):
            break
        seen = seen.__cause__ or seen.__context__
    words = str(seen) if seen is not None else ""
    return f"{type(exc).__name__}: {words}" if words else type(exc).__name__
