"""The A2A JSON-RPC client the drivers use. Every exchange lands in the frame log, stamped.

It always sends `A2A-Version: 1.0` (unless a test asks for another value on purpose) and activates
extensions with one `A2A-Extensions` header. Streams are read with the suite's own SSE parser and
are bounded in time: a stream that never ends is cut at `stream_limit` and marked so.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any, Awaitable, Callable

import httpx

from ..framelog import END_CLIENT_STOP, END_CLOSED, END_ERROR, END_TIME_LIMIT, Event, Exchange, FrameLog
from ..protocols import a2a
from .capture import CHUNKS, T_HEADERS, CaptureTransport, Clock
from .sse import SSEParser

MAX_BODY = 4 * 1024 * 1024  # a non-stream body past this is cut (and noted)
_UNSET = object()

OnEvent = Callable[[Event], "Awaitable[None] | None"]
Until = Callable[[Event], bool]


class A2AClient:
    def __init__(self, base_url: str, log: FrameLog, *, clock: Clock | None = None,
                 stream_limit: float = 15.0, timeout: float = 10.0,
                 headers: dict[str, str] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.log = log
        self.clock = clock or Clock()
        self.stream_limit = stream_limit
        self.timeout = timeout
        self.extra_headers = dict(headers or {})
        self.rpc_url: str | None = None
        self._next_id = 1
        self._http: httpx.AsyncClient | None = None

    async def __aenter__(self) -> "A2AClient":
        self._http = httpx.AsyncClient(
            transport=CaptureTransport(self.clock),
            timeout=httpx.Timeout(self.timeout),
            headers={"Accept-Encoding": "identity", **self.extra_headers},
        )
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._http is not None:
            await self._http.aclose()

    # -- discovery -------------------------------------------------------------------------------
    async def get_card(self, label: str = "card", base_url: str | None = None) -> Exchange:
        url = (base_url or self.base_url).rstrip("/") + a2a.CARD_PATH
        ex = await self._send("GET", url, label=label, headers={"Accept": a2a.JSON_MEDIA_TYPE})
        return ex

    def use_card(self, card: Any) -> str | None:
        """Take the JSON-RPC URL from the card's supportedInterfaces (None if there is none)."""
        self.rpc_url = jsonrpc_url(card)
        return self.rpc_url

    # -- JSON-RPC ----------------------------------------------------------------------------------
    def new_id(self) -> int:
        rid = self._next_id
        self._next_id += 1
        return rid

    def envelope(self, method: str, params: Any, rpc_id: Any = _UNSET) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.new_id() if rpc_id is _UNSET else rpc_id,
                "method": method, "params": params}

    def rpc_headers(self, extensions: tuple[str, ...] | list[str] = (), version: str | None = a2a.PROTOCOL_VERSION,
                    accept: str = a2a.JSON_MEDIA_TYPE) -> dict[str, str]:
        headers = {"Content-Type": a2a.JSON_MEDIA_TYPE, "Accept": accept}
        if version is not None:
            headers[a2a.VERSION_HEADER] = version
        if extensions:
            headers[a2a.EXTENSIONS_HEADER] = ",".join(extensions)
        return headers

    async def call(self, method: str, params: Any, *, label: str, extensions: tuple[str, ...] | list[str] = (),
                   version: str | None = a2a.PROTOCOL_VERSION, rpc_id: Any = _UNSET,
                   raw_body: bytes | None = None, url: str | None = None) -> Exchange:
        """A unary call. `raw_body` sends those bytes instead of a JSON envelope (for error tests)."""
        body = None if raw_body is not None else self.envelope(method, params, rpc_id)
        return await self._send("POST", url or self._rpc(), label=label, json_body=body, raw_body=raw_body,
                                headers=self.rpc_headers(extensions, version), rpc_method=method)

    async def stream(self, method: str, params: Any, *, label: str, extensions: tuple[str, ...] | list[str] = (),
                     version: str | None = a2a.PROTOCOL_VERSION, rpc_id: Any = _UNSET,
                     until: Until | None = None, on_event: OnEvent | None = None,
                     limit: float | None = None, url: str | None = None) -> Exchange:
        """A streaming call, read until the server closes it, `until(event)` holds, or the limit."""
        body = self.envelope(method, params, rpc_id)
        headers = self.rpc_headers(extensions, version, accept=a2a.SSE_MEDIA_TYPE)
        return await self._send("POST", url or self._rpc(), label=label, json_body=body, headers=headers,
                                rpc_method=method, streaming=True, until=until, on_event=on_event,
                                limit=self.stream_limit if limit is None else limit)

    async def post_stream(self, url: str, body: Any, *, label: str, limit: float | None = None,
                          until: Until | None = None, on_event: OnEvent | None = None) -> Exchange:
        """A plain JSON POST (no JSON-RPC, no A2A headers) whose answer is read as an event stream:
        the progress stream of seed 003 (DESIGN §6)."""
        headers = {"Content-Type": "application/json", "Accept": a2a.SSE_MEDIA_TYPE}
        return await self._send("POST", url, label=label, json_body=body, headers=headers, streaming=True,
                                until=until, on_event=on_event, limit=self.stream_limit if limit is None else limit)

    def _rpc(self) -> str:
        return self.rpc_url or (self.base_url + "/a2a/jsonrpc")

    # -- the one place a request goes out ----------------------------------------------------------
    async def _send(self, http_method: str, url: str, *, label: str, headers: dict[str, str],
                    json_body: Any = None, raw_body: bytes | None = None, rpc_method: str | None = None,
                    streaming: bool = False, until: Until | None = None, on_event: OnEvent | None = None,
                    limit: float | None = None) -> Exchange:
        assert self._http is not None, "use the client inside `async with`"
        content = raw_body if raw_body is not None else (
            None if json_body is None else json.dumps(json_body).encode("utf-8"))
        ex = self.log.add(Exchange(
            label=label, method=http_method, url=url, rpc_method=rpc_method,
            request_headers={**self.extra_headers, **headers},  # credentials are scrubbed on save
            request_body=json_body if raw_body is None else raw_body.decode("utf-8", "replace"),
            t_sent=self.clock(), notes={"streaming": streaming} if streaming else {},
        ))
        if limit is not None:
            ex.notes["limit_s"] = limit
        try:
            async with asyncio.timeout(limit if limit is not None else self.timeout * 3):
                await self._exchange(ex, http_method, url, headers, content, until, on_event)
        except TimeoutError:
            ex.end = END_TIME_LIMIT if ex.t_headers is not None else END_ERROR
            if ex.t_headers is None:
                ex.error = f"no response headers within {limit if limit is not None else self.timeout * 3:g} s"
        except httpx.HTTPError as exc:
            ex.end = END_ERROR
            ex.error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        ex.t_end = self.clock()
        return ex

    async def _exchange(self, ex: Exchange, http_method: str, url: str, headers: dict[str, str],
                        content: bytes | None, until: Until | None, on_event: OnEvent | None) -> None:
        assert self._http is not None
        # A stream may rightly stay silent for a while (a task at work); its only bound is the
        # per-stream limit, so no read timeout may end it first and be mistaken for "no answer".
        timeout = httpx.Timeout(self.timeout, read=None) if ex.notes.get("streaming") else None
        request = self._http.build_request(http_method, url, headers=headers, content=content,
                                           **({"timeout": timeout} if timeout else {}))
        response = await self._http.send(request, stream=True)
        try:
            ex.status = response.status_code
            ex.response_headers = {k.lower(): v for k, v in response.headers.items()}
            ex.t_headers = response.extensions.get(T_HEADERS, self.clock())
            sink = response.extensions.get(CHUNKS)
            if sink is not None:
                ex.chunks = sink  # the transport fills it as bytes arrive
            if ex.is_sse:
                await self._read_events(ex, response, until, on_event)
            else:
                size = 0
                async for part in response.aiter_raw():
                    size += len(part)
                    if size > MAX_BODY:
                        ex.notes["truncated_at"] = MAX_BODY
                        break
        finally:
            await response.aclose()

    async def _read_events(self, ex: Exchange, response: httpx.Response, until: Until | None,
                           on_event: OnEvent | None) -> None:
        parser = SSEParser()
        seen = 0
        try:
            async for _ in response.aiter_raw():
                # The transport has appended the chunk(s) that this read produced, with their times.
                while seen < len(ex.chunks):
                    chunk = ex.chunks[seen]
                    seen += 1
                    for ev in parser.feed(chunk.data, chunk.t):
                        ex.events.append(ev)
                        if on_event is not None:
                            res = on_event(ev)
                            if inspect.isawaitable(res):
                                await res
                        if until is not None and until(ev):
                            ex.end = END_CLIENT_STOP
                            return
            parser.finish(self.clock())
            ex.end = END_CLOSED
        finally:
            ex.discarded = parser.discarded
            if parser.invalid_utf8:
                ex.notes["invalid_utf8"] = True
            if parser.retry is not None:
                ex.notes["retry"] = parser.retry


def jsonrpc_url(card: Any) -> str | None:
    """The URL of the card's JSONRPC interface for protocol 1.0 (or any JSONRPC one)."""
    if not isinstance(card, dict):
        return None
    interfaces = card.get("supportedInterfaces")
    if not isinstance(interfaces, list):
        return None
    candidates = [i for i in interfaces if isinstance(i, dict) and i.get("protocolBinding") == "JSONRPC"
                  and isinstance(i.get("url"), str)]
    for iface in candidates:
        if str(iface.get("protocolVersion", "")).startswith(a2a.PROTOCOL_VERSION):
            return iface["url"]
    return candidates[0]["url"] if candidates else None


def rpc_error(ex: Exchange) -> dict[str, Any] | None:
    """The JSON-RPC error object of a unary exchange (or of a stream's only event), if any."""
    value = None
    if ex.is_sse:
        events = ex.data_events()
        if events:
            value = events[0].payload
    else:
        value, _ = ex.json()
    if isinstance(value, dict) and isinstance(value.get("error"), dict):
        return value["error"]
    return None
