"""`streamcert proxy`: a recording proxy on 127.0.0.1 between any A2A client and an upstream A2A agent.

Every request is forwarded to the upstream through the suite's own A2A client (wire/a2a_client.py), so each
exchange lands in a frame log exactly as a run captures it: stamped as bytes arrive, within the same caps
(limits.py), a stream cut at the stream limit. Each read of the answer is handed on to the proxy's client as
it arrives (a `_Tap` under the capture transport), never buffered whole; the card alone is read whole, its
interface URLs at the upstream's origin rewritten to the proxy's, so the client stays on it. gRPC is not
proxied (docs/proxy.md). On stop the exchanges are filed into one cassette per task (running/proxy_logs.py), written
with the run's scrubbing and judged with `streamcert check`'s code (offline.check_cassettes).
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlsplit

import httpx

from ..contract.capture import PARAMS
from ..contract.labels.a2a import CARD
from ..framelog import END_CLIENT_STOP, Exchange, FrameLog
from ..protocols import a2a, bindings
from ..wire.a2a_client import A2AClient
from ..wire.bounds import Bounds
from ..wire.capture import Clock

# Hop-by-hop and framing headers (RFC 9110 §7.6.1): the proxy's own connections frame the bodies. A client's
# Accept-Encoding is not passed on: the upstream answers in identity, which every client accepts (RFC 9110
# §12.5.3), so what is recorded is what the rules read.
HOP = frozenset({"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
                 "host", "content-length", "accept-encoding"})
QUEUE = 64  # reads of one answer waiting for the proxy's client: past this the upstream is read no faster
GONE = "the proxy's client closed its connection before this answer ended"
STOPPED = "the proxy was stopped before this answer ended"

_LOG: ContextVar[FrameLog] = ContextVar("streamcert_proxy_log")
_SINK: ContextVar["_Sink | None"] = ContextVar("streamcert_proxy_sink", default=None)


class _Sink:
    """Where one answer's head and reads go, for the proxy's client (a bounded queue)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue(QUEUE)

    async def put(self, kind: str, value: Any = None) -> None:
        await self.queue.put((kind, value))


class _TappedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, sink: _Sink) -> None:
        self._inner, self._sink = inner, sink

    async def __aiter__(self):
        async for part in self._inner:
            if part:
                await self._sink.put("body", bytes(part))
            yield part

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Tap(httpx.AsyncBaseTransport):
    """Hands the answer's status, headers and every read to the sink of the request being forwarded."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        sink = _SINK.get()
        if sink is None:
            return response
        await sink.put("head", (response.status_code, list(response.headers.raw)))
        assert isinstance(response.stream, httpx.AsyncByteStream)
        return httpx.Response(response.status_code, headers=response.headers,
                              stream=_TappedStream(response.stream, sink), extensions=response.extensions,
                              request=request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class _ProxyClient(A2AClient):
    """The suite's client, each exchange written into the frame log of the request it forwards."""

    @property
    def log(self) -> FrameLog:  # type: ignore[override]
        return _LOG.get()

    @log.setter
    def log(self, value: FrameLog) -> None:
        pass

    def sending_transport(self) -> httpx.AsyncBaseTransport:
        return _Tap(super().sending_transport())


@dataclass
class Interfaces:
    """Where the upstream's card puts each binding: the paths the proxy tells a JSON-RPC request and an
    HTTP+JSON route by."""

    jsonrpc: set[str] = field(default_factory=set)
    rest: list[str] = field(default_factory=list)  # HTTP+JSON interface paths, longest first

    @classmethod
    def of(cls, card: Any, origin: str) -> Interfaces:
        out = cls()
        for binding, url in bindings.declared(card):
            parts = urlsplit(bindings.schemed(url))
            if f"{parts.scheme}://{parts.netloc}" != origin:
                continue
            if binding == bindings.JSONRPC:
                out.jsonrpc.add(parts.path or "/")
            elif binding == bindings.HTTP_JSON:
                out.rest.append(parts.path.rstrip("/"))
        out.rest.sort(key=len, reverse=True)
        return out

    def read(self, method: str, path: str, body: Any, query: str) -> tuple[str | None, str | None, Any]:
        """(binding, operation, request message) of a request; (None, None, None) for one that is neither
        (the card, a path no interface names)."""
        if method == "POST" and (path in self.jsonrpc or isinstance(body, dict) and "jsonrpc" in body):
            op = body.get("method") if isinstance(body, dict) else None
            return bindings.JSONRPC, op if isinstance(op, str) else None, None
        for base in self.rest:
            if path == base or path.startswith(base + "/"):
                op, ids = bindings.rest_operation(method, path[len(base):])
                if op is None:
                    return bindings.HTTP_JSON, None, None
                fields = dict(httpx.QueryParams(query)) if method in ("GET", "DELETE") else {}
                message = body if isinstance(body, dict) else {}
                return bindings.HTTP_JSON, op, {**message, **fields, **ids}
        return None, None, None


def rewrite_card(card: Any, upstream: str, here: str) -> Any:
    """The card with every interface URL at the upstream's origin moved to the proxy's (same path)."""
    if not isinstance(card, dict):
        return card
    out = dict(card)
    ifaces = out.get("supportedInterfaces")
    if isinstance(ifaces, list):
        out["supportedInterfaces"] = [{**i, "url": here + i["url"][len(upstream):]}
                                      if isinstance(i, dict) and isinstance(i.get("url"), str)
                                      and i.get("protocolBinding") != bindings.CARD_NAME[bindings.GRPC]
                                      and _at(i["url"], upstream) else i for i in ifaces]
    if isinstance(out.get("url"), str) and _at(out["url"], upstream):  # a 0.3 card's main URL
        out["url"] = here + out["url"][len(upstream):]
    return out


def _at(url: str, origin: str) -> bool:
    return url == origin or url.startswith(origin + "/")


@dataclass
class ProxySettings:
    upstream: str  # the upstream's origin (scheme://host:port)
    stream_limit: float
    timeout: float
    bounds: Bounds
    max_exchanges: int | None = None
    duration: float | None = None


class Proxy:
    """The ASGI app: forwards each request, records its exchange, and stops when told to (or at its limits)."""

    def __init__(self, settings: ProxySettings, here: str = "") -> None:
        self.settings = settings
        self.here = here
        self.clock = Clock()
        self.exchanges: list[Exchange] = []
        self.interfaces = Interfaces()
        self.client = _ProxyClient(settings.upstream, FrameLog("proxy"), clock=self.clock,
                                   stream_limit=settings.stream_limit, timeout=settings.timeout, bounds=settings.bounds)
        self.on_limit: Any = None  # called once the exchange limit is reached

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _lifespan(self, receive: Any, send: Any) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self.client.__aenter__()
                await self._learn_interfaces()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.client.__aexit__()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _learn_interfaces(self) -> None:
        """Where the upstream's card puts each binding, read once at start (not recorded), for a client that never
        reads the card; each card a client reads through the proxy replaces it."""
        try:
            body = bytearray()
            async with httpx.AsyncClient(timeout=self.settings.timeout) as plain, plain.stream(
                    "GET", self.settings.upstream + a2a.CARD_PATH, headers={"Accept": a2a.JSON_MEDIA_TYPE}) as answer:
                async for part in answer.aiter_bytes():
                    body += part
                    if len(body) > self.settings.bounds.max_body:  # the same cap as the card a client reads
                        return
            self.interfaces = Interfaces.of(json.loads(body), self.settings.upstream)
        except (httpx.HTTPError, ValueError) as exc:
            print(f"streamcert proxy: the upstream's card could not be read at start ({type(exc).__name__}: {exc}); "
                  "requests are told apart once a client reads it", file=sys.stderr, flush=True)

    async def _http(self, scope: dict, receive: Any, send: Any) -> None:
        body = await _read_body(receive, self.settings.bounds.max_body)
        if body is None:
            await _answer(send, 413, b"the request body is past the proxy's per-response size cap")
            return
        method, path, query = scope["method"], scope["path"], scope.get("query_string", b"").decode("latin-1")
        log = FrameLog("proxy")
        sink = _Sink()
        forward = asyncio.create_task(self._forward(method, path, query, scope["headers"], body, log, sink))
        gone = asyncio.create_task(_disconnect(receive))  # the client leaving: the upstream sees it leave too
        left = False
        try:
            left = not await self._relay(path, sink, forward, gone, send)
            if not left:
                await forward
        finally:
            for task in (forward, gone):
                if not task.done():
                    task.cancel()
            await asyncio.gather(forward, gone, return_exceptions=True)
            for ex in log.exchanges:
                if ex.t_end is None:
                    ex.end, ex.error, ex.t_end = END_CLIENT_STOP, GONE if left else STOPPED, self.clock()
            self.exchanges += log.exchanges
            if self.settings.max_exchanges and len(self.exchanges) >= self.settings.max_exchanges and self.on_limit:
                self.on_limit()

    async def _forward(self, method: str, path: str, query: str, raw_headers: list, body: bytes, log: FrameLog,
                       sink: _Sink) -> None:
        _LOG.set(log)
        _SINK.set(sink)
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        is_card = method == "GET" and path == a2a.CARD_PATH
        binding, op, message = (None, None, None) if is_card else self.interfaces.read(method, path, parsed, query)
        headers: dict[str, str] = {}
        for name, value in raw_headers:
            key = name.decode("latin-1")
            if key.lower() not in HOP:
                headers[key] = value.decode("latin-1")
        streaming = op in (a2a.SEND_STREAMING_MESSAGE, a2a.SUBSCRIBE_TO_TASK)
        url = self.settings.upstream + path + (f"?{query}" if query else "")
        ex = await self.client.send_http(method, url, label=CARD if is_card else (op or "other"), headers=headers,
                                         raw_body=body or None, rpc_method=op, streaming=streaming,
                                         limit=self.settings.stream_limit if streaming else None)
        ex.binding = binding or bindings.JSONRPC
        ex.request_body = parsed if parsed is not None else (body.decode("utf-8", "replace") or None)
        if message is not None:
            ex.notes[PARAMS] = message
        if is_card and ex.status == 200:
            card, _ = ex.json()
            self.interfaces = Interfaces.of(card, self.settings.upstream)
        if ex.t_headers is None:
            await sink.put("error", ex.error or "no answer")
        await sink.put("end", ex)

    async def _relay(self, path: str, sink: _Sink, forward: asyncio.Task, gone: asyncio.Task, send: Any) -> bool:
        """The answer to the proxy's client: each read as it comes; the card whole, its URLs rewritten. False
        when the client went away first."""
        started = False
        card = path == a2a.CARD_PATH
        whole: list[bytes] = []
        while True:
            if gone.done():
                return False
            if sink.queue.empty():
                getter = asyncio.ensure_future(sink.queue.get())
                await asyncio.wait({getter, forward, gone}, return_when=asyncio.FIRST_COMPLETED)
                if not getter.done():
                    getter.cancel()  # (a get cancelled before it returned takes nothing from the queue)
                    if gone.done() or not sink.queue.empty():
                        continue
                    forward.result()  # raises what ended the forwarding; else it ended without "end"
                    return True
                kind, value = getter.result()
            else:
                kind, value = sink.queue.get_nowait()
            if kind == "head":
                status, raw = value
                headers = [(k, v) for k, v in raw if k.decode("latin-1").lower() not in HOP]
                await send({"type": "http.response.start", "status": status, "headers": headers})
                started = True
            elif kind == "body" and card:
                whole.append(value)
            elif kind == "body":
                await send({"type": "http.response.body", "body": value, "more_body": True})
            elif kind == "error":
                await _answer(send, 502, f"streamcert proxy: the upstream gave no answer: {value}".encode())
                return True
            elif kind == "end":
                if card and started:
                    await send({"type": "http.response.body", "body": self._card_bytes(b"".join(whole), value)})
                elif started:
                    await send({"type": "http.response.body", "body": b""})
                return True

    def _card_bytes(self, data: bytes, ex: Exchange) -> bytes:
        card, error = ex.json()
        if error is not None or ex.status != 200:
            return data
        return json.dumps(rewrite_card(card, self.settings.upstream, self.here)).encode("utf-8")


async def _read_body(receive: Any, limit: int) -> bytes | None:
    parts, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(parts)
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
        if not message.get("more_body"):
            return b"".join(parts)


async def _disconnect(receive: Any) -> None:
    """Returns once the client has closed its connection (after its request was read whole)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _answer(send: Any, status: int, text: bytes) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8")]})
    await send({"type": "http.response.body", "body": text})


def origin_of(url: str) -> str:
    parts = urlsplit(bindings.schemed(url))
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"--upstream {url!r} is not an http(s) URL")
    return f"{parts.scheme}://{parts.netloc}"


def serve(settings: ProxySettings, port: int, record: Path, report: Path, scrub_names: tuple[str, ...] = (),
          out: TextIO | None = None) -> dict[str, Any]:
    """Serve until SIGINT/SIGTERM, `--max-exchanges` or `--duration`; then write the cassettes into `record`
    and judge them into `report`. The first line printed is the URL to point the client at."""
    import uvicorn

    from ..reference.agent.server import HOST, _bind, _Server
    from .proxy_logs import write_and_judge

    out = out or sys.stdout
    sock = _bind(port)
    here = f"http://{HOST}:{sock.getsockname()[1]}"
    proxy = Proxy(settings, here)
    config = uvicorn.Config(proxy, log_level="warning", access_log=False, lifespan="on", loop="asyncio",
                            timeout_graceful_shutdown=1)
    server = _Server(config)
    proxy.on_limit = lambda: setattr(server, "should_exit", True)
    print(f"{here} (streamcert proxy on {HOST} only, to {settings.upstream}: point the client at this URL; the "
          f"card it serves names this proxy, so the client stays on it; gRPC is not proxied)", file=out, flush=True)

    async def run() -> None:
        if settings.duration:
            asyncio.get_running_loop().call_later(settings.duration, proxy.on_limit)
        await server.serve(sockets=[sock])

    try:
        asyncio.run(run())
    finally:
        sock.close()
    return write_and_judge(proxy.exchanges, settings.upstream, record, report, scrub_names, out)
