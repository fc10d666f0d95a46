"""Hostile servers for the project's tests: raw HTTP/1.1 on 127.0.0.1, so a test can send what no
framework would (a reset mid-stream, a gzip bomb, a body that trickles, a card pointing elsewhere).

    with HostileServer(handler) as server:      # server.url, server.requests (what it was sent)
        ...

`handler(request, writer)` is a coroutine that writes whatever it likes to the socket and returns;
the connection is closed after it (one request per connection). Without a handler for a path the
server answers the agent card (`card(server.url)`) at the card path and 404 elsewhere. Every server is
bounded: it stops when its `with` block ends or after `lifetime` seconds, and serves at most
`max_requests` requests.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

HOST = "127.0.0.1"
CARD_PATH = "/.well-known/agent-card.json"
RPC_PATH = "/a2a/jsonrpc"


@dataclass
class Request:
    method: str
    target: str  # the request target as sent: path and query
    headers: dict[str, str]  # lower-case names
    body: bytes = b""
    query: dict[str, list[str]] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return urlsplit(self.target).path

    def json(self) -> Any:
        return json.loads(self.body or b"null")


Handler = Callable[[Request, asyncio.StreamWriter], Awaitable[None]]


def card(base: str, rpc_url: str | None = None, **extra: Any) -> dict[str, Any]:
    """A minimal valid A2A 1.0 card whose JSON-RPC interface is `rpc_url` (default: this server's)."""
    return {
        "name": "hostile", "description": "A server that misbehaves on purpose.", "version": "0",
        "supportedInterfaces": [{"url": rpc_url or base + RPC_PATH, "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}],
        "capabilities": {"streaming": True, "pushNotifications": False, "extensions": []},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "Misbehaves.", "tags": ["test"]}],
        **extra,
    }


def head(status: int = 200, content_type: str = "application/json", **headers: str | int) -> bytes:
    """A response head with `Connection: close` (the body runs to the end of the connection unless a
    content-length is given: pass content_length=N)."""
    lines = [f"HTTP/1.1 {status} X", f"content-type: {content_type}", "connection: close"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def response(body: Any, status: int = 200, content_type: str = "application/json", **headers: str | int) -> bytes:
    """A whole response: `body` bytes as they are, anything else as JSON."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return head(status, content_type, content_length=len(data), **headers) + data


def sse_event(result: dict[str, Any], rpc_id: Any = 1) -> bytes:
    return b"data: " + json.dumps({"jsonrpc": "2.0", "id": rpc_id, "result": result}).encode() + b"\n\n"


class HostileServer:
    def __init__(self, handler: Handler | None = None, *, lifetime: float = 60.0, max_requests: int = 500) -> None:
        self.handler = handler
        self.lifetime = lifetime
        self.max_requests = max_requests
        self.requests: list[Request] = []
        self.url = ""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None

    def __enter__(self) -> HostileServer:
        self._thread = threading.Thread(target=self._run, name="hostile-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the hostile server did not start")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10)

    # -- the server thread -----------------------------------------------------------------------
    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._serve, HOST, 0)
        self.url = f"http://{HOST}:{server.sockets[0].getsockname()[1]}"
        self._ready.set()
        try:
            await asyncio.wait_for(self._stop.wait(), self.lifetime)
        except TimeoutError:
            pass
        server.close()
        # Handlers that never end (a trickle, a silent socket) are cancelled with the loop.

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await _read_request(reader)
            if request is None or len(self.requests) >= self.max_requests:
                return
            self.requests.append(request)
            if self.handler is not None:
                await self.handler(request, writer)
            elif request.path == CARD_PATH:
                writer.write(response(card(self.url)))
            else:
                writer.write(response({"detail": "not found"}, 404))
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            try:
                writer.close()
            except RuntimeError:
                pass


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return None
    lines = raw.decode("latin-1").split("\r\n")
    method, target, _ = (lines[0].split(" ") + ["", ""])[:3]
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    body = b""
    if headers.get("content-length", "").isdigit():
        body = await reader.readexactly(int(headers["content-length"]))
    return Request(method, target, headers, body, parse_qs(urlsplit(target).query))
