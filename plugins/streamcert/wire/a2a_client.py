"""The A2A client the drivers use, over any binding. Every exchange lands in the frame log, stamped.

The drivers ask for operations (`call`, `stream`: SendMessage, GetTask…, with the request message as its JSON
`params`); the client hands each to the transport of its binding (wire/bindings/: a JSON-RPC envelope POSTed to
the interface URL, the HTTP+JSON route of the operation (§11.3), or the gRPC method through wire/grpc.py), and
records the binding on every exchange. The HTTP bindings' requests all go out through `send_http`, here.

It always sends `A2A-Version: 1.0` (unless a test asks for another value on purpose) and activates
extensions with one `A2A-Extensions` header. Streams are read with the suite's own SSE parser and
are bounded in time: a stream that never ends is cut at `stream_limit` and marked so.

Every answer is bounded (`Bounds`, from the run's caps in limits.py): its size on the wire (a body past
`max_body` is left unread, a stream past `max_stream` is read on but no longer kept), each event's size,
what a Content-Encoding it did not ask for decodes to, and the silence between two reads. A bound
reached is written into the exchange (`contract.capture.UNJUDGED`, with the sentence of `Cap.reached`), so the
requirements reading it are ERROR with that sentence, never a blame on the server. A connection that
fails once the answer has begun ends `reset` with the bytes received, and what came is judged; one the server
closed before any byte of the answer, when it had served an earlier answer, is sent again on another connection
(wire/capture.py) and noted `retried`.
Requests go to the target's origin with its credentials; another origin gets them only when allowed
(wire/urls.py), and otherwise the exchange records why it was not sent.
"""

from __future__ import annotations

import asyncio
import errno
import inspect
import json
from dataclasses import dataclass, field
from typing import Any, Iterable

import httpx

from .. import limits
from ..contract.capture import (
    CONTENT_ENCODING,
    DECODED_LIMIT,
    IDLE_S,
    INVALID_UTF8,
    LIMIT_S,
    NOT_SENT,
    ORIGIN,
    OVERFLOW,
    OVERSIZE,
    RESENT,
    RETRY,
    STREAMING,
    UNJUDGED,
)
from ..contract.labels.a2a import CARD
from ..framelog import (
    END_CLIENT_STOP,
    END_CLOSED,
    END_ERROR,
    END_IDLE,
    END_RESET,
    END_TIME_LIMIT,
    PAYLOAD_BUDGET,
    ContentDecoder,
    Exchange,
    FrameLog,
    ParseBudget,
)
from ..limits import show
from ..protocols import a2a, bindings
from . import activity, unanswered
from .bindings import jsonrpc, transport_for
from .bindings.base import UNSET, Operation
from .bounds import Bounds, OnEvent, Until
from .capture import CAPTURE, T_HEADERS, WINDOW, Capture, CaptureTransport, Clock
from .resend import RETRIED, ResendTransport, broken_by
from .sse import SSEParser
from .urls import Origins, join

NOT_ASKED = "which the suite did not ask for: it sends Accept-Encoding: identity"
KEEPALIVE_EXPIRY_S = 1.0  # seconds a pooled connection may sit idle and still be reused


@dataclass
class _Reading:
    """One answer as it is read: where its bytes went, what decodes them, what was dropped."""

    ex: Exchange
    capture: Capture | None = None
    decoder: ContentDecoder | None = None
    parser: SSEParser | None = None
    past_events: int = 0  # events parsed past the stream's size cap (counted, not kept)
    headed: bool = False  # past the cap, the events were cut to the head window
    waited_out: bool = False  # the answer did not come (or end) within the time it was given
    on_headers: Any = None  # called once the answer's headers have come
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def received(self) -> int:
        return self.capture.size if self.capture is not None else 0

    def unjudged(self, reason: str, cap: limits.Cap | None = None, figure: float | None = None,
                 limit: float | None = None) -> None:
        """Record why nothing of this answer can be judged (the first reason found stands)."""
        if UNJUDGED in self.ex.notes:
            return
        record: dict[str, Any] = {"reason": reason}
        if cap is not None:
            record.update(cap=cap.field, figure=figure, limit=limit)
        self.ex.notes[UNJUDGED] = record

    def pieces(self, part: bytes) -> Iterable[bytes]:
        return (part,) if self.decoder is None else self.decoder.feed(part)


class A2AClient:
    def __init__(self, base_url: str, log: FrameLog, *, clock: Clock | None = None,
                 stream_limit: float = 15.0, timeout: float = 10.0,
                 headers: dict[str, str] | None = None, bounds: Bounds | None = None,
                 allow_origins: tuple[str, ...] | list[str] = (), binding: str = bindings.JSONRPC,
                 own_interfaces: bool = False) -> None:
        self.base_url = base_url
        self.binding = binding
        self.log = log
        self.clock = clock or Clock()
        self.stream_limit = stream_limit
        self.timeout = timeout
        self.extra_headers = dict(headers or {})
        self.bounds = bounds or Bounds()
        self.allow_origins = tuple(allow_origins)
        self.own_interfaces = own_interfaces  # the card's interfaces are the target's own (Target.own_interfaces)
        self.origins = Origins.of(base_url, self.extra_headers, self.allow_origins)
        self.rpc_url: str | None = None
        self._next_id = 1
        self._http: httpx.AsyncClient | None = None
        self.transport = transport_for(binding, self)  # how an operation goes over the binding (wire/bindings/)

    async def __aenter__(self) -> "A2AClient":
        # The credentials are added request by request (only where they may go), never as defaults.
        self._http = httpx.AsyncClient(
            transport=CaptureTransport(self.clock, self.sending_transport(), max_body=self.bounds.max_body,
                                       max_stream=self.bounds.max_stream),
            timeout=httpx.Timeout(self.timeout),
            headers={"Accept-Encoding": "identity"},
            # A connection idle this long is not reused: servers close idle keep-alive connections (uvicorn
            # after 5 s, httpx's own default expiry), and a request sent as the server closes one gets a
            # ReadError that would read as the server's silence.
            limits=httpx.Limits(keepalive_expiry=KEEPALIVE_EXPIRY_S),
        )
        return self

    def sending_transport(self) -> httpx.AsyncBaseTransport:
        """What sends the requests, under the capture (a subclass may wrap it: the recording proxy's tap)."""
        return ResendTransport()

    async def __aexit__(self, *exc: Any) -> None:
        if self._http is not None:
            await self._http.aclose()
        await self.transport.aclose()

    # -- discovery -------------------------------------------------------------------------------
    async def get_card(self, label: str = CARD, base_url: str | None = None,
                       headers: dict[str, str] | None = None) -> Exchange:
        """GET the agent card (`headers`: more request headers, e.g. a conditional request's validator)."""
        url = join(base_url or self.base_url, a2a.CARD_PATH)
        return await self.send_http("GET", url, label=label, headers={"Accept": a2a.JSON_MEDIA_TYPE, **(headers or {})})

    def use_card(self, card: Any) -> str | None:
        """Take the URL of the client's binding from the card's supportedInterfaces (None if there is none)."""
        self.rpc_url = self.transport.interface_url(card)
        if self.own_interfaces:
            own = tuple(bindings.schemed(url) for _, url in bindings.declared(card))
            self.origins = Origins.of(self.base_url, self.extra_headers, self.allow_origins + own)
        return self.rpc_url

    # -- the operations, over the client's binding ---------------------------------------------------
    def new_id(self) -> int:
        rid = self._next_id
        self._next_id += 1
        return rid

    def envelope(self, method: str, params: Any, rpc_id: Any = UNSET) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": self.new_id() if rpc_id is UNSET else rpc_id,
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
                   version: str | None = a2a.PROTOCOL_VERSION, rpc_id: Any = UNSET,
                   raw_body: bytes | None = None, url: str | None = None) -> Exchange:
        """A unary call. `raw_body` sends those bytes instead of a request, POSTed as JSON-RPC (for error tests)."""
        op = Operation(method, params, label, extensions, version, url, rpc_id)
        if raw_body is not None:
            return await jsonrpc.send_raw(self, op, raw_body)
        return await self.transport.send(op)

    async def stream(self, method: str, params: Any, *, label: str, extensions: tuple[str, ...] | list[str] = (),
                     version: str | None = a2a.PROTOCOL_VERSION, rpc_id: Any = UNSET,
                     until: Until | None = None, on_event: OnEvent | None = None,
                     limit: float | None = None, url: str | None = None) -> Exchange:
        """A streaming call, read until the server closes it, `until(event)` holds, or the limit. `until` and
        `on_event` see data events only: a comment (a keep-alive) is kept in the log, never read as an event."""
        return await self.transport.open_stream(Operation(method, params, label, extensions, version, url, rpc_id),
                                                limit=self.stream_limit if limit is None else limit, until=until,
                                                on_event=on_event)

    async def post_stream(self, url: str, body: Any, *, label: str, limit: float | None = None,
                          until: Until | None = None, on_event: OnEvent | None = None) -> Exchange:
        """A plain JSON POST (no JSON-RPC, no A2A headers) whose answer is read as an event stream:
        the progress stream of seed 003 (docs/contracts.md §6)."""
        headers = {"Content-Type": "application/json", "Accept": a2a.SSE_MEDIA_TYPE}
        return await self.send_http("POST", url, label=label, json_body=body, headers=headers, streaming=True,
                                    until=until, on_event=on_event,
                                    limit=self.stream_limit if limit is None else limit)

    # -- the one place a request goes out ----------------------------------------------------------
    async def send_http(self, http_method: str, url: str, *, label: str, headers: dict[str, str],
                        json_body: Any = None, raw_body: bytes | None = None, rpc_method: str | None = None,
                        streaming: bool = False, until: Until | None = None, on_event: OnEvent | None = None,
                        limit: float | None = None) -> Exchange:
        """One HTTP request of the client's binding (or its card), its answer read into one exchange."""
        assert self._http is not None, "use the client inside `async with`"
        content = raw_body if raw_body is not None else (
            None if json_body is None else json.dumps(json_body).encode("utf-8"))
        passage = self.origins.passage(url)
        sent = {**(self.extra_headers if passage.credentials else {}), **headers}
        ex = self.log.add(Exchange(
            label=label, method=http_method, url=passage.url, rpc_method=rpc_method,
            request_headers=sent,  # credentials are scrubbed on save
            request_body=json_body if raw_body is None else raw_body.decode("utf-8", "replace"),
            t_sent=self.clock(), notes={STREAMING: streaming} if streaming else {}, binding=self.binding,
        ))
        if limit is not None:
            ex.notes[LIMIT_S] = limit
        if passage.note:
            ex.notes[ORIGIN] = passage.note
        if passage.refused:
            ex.end, ex.error, ex.t_end = END_ERROR, passage.refused, ex.t_sent
            ex.notes[NOT_SENT] = True
            return ex
        reading = _Reading(ex)
        # A unary answer has the --timeout in all (headers and body), or less once the target has shown it does
        # not answer this kind of request (wire/unanswered.py); a stream has its limit.
        kind = unanswered.kind(http_method, passage.url, rpc_method if self.binding == bindings.HTTP_JSON else None)
        unary = limit is None
        full = self.timeout if unary else limit
        bound = unanswered.wait(kind, full)  # for the answer to begin (a unary one: to end)
        activity.waiting(self.log.scenario, ex, bound)  # what the run waits for, shown while it lasts
        try:
            async with asyncio.timeout(bound) as scope:
                if not unary:  # a stream that has begun has its whole limit
                    deadline = asyncio.get_running_loop().time() + full
                    reading.on_headers = lambda: scope.reschedule(deadline)
                await self._exchange(reading, http_method, passage.url, sent, content, until, on_event)
        except TimeoutError:
            reading.waited_out = True
            ex.end = END_TIME_LIMIT if ex.t_headers is not None else END_ERROR
            if ex.t_headers is None:
                ex.error = f"no response headers within {bound:g} s"
            elif unary:
                ex.error = f"the body was still arriving after {bound:g} s ({reading.received} bytes received)"
        except httpx.HTTPError as exc:
            reading.waited_out = isinstance(exc, httpx.TimeoutException)
            self._failed(reading, exc)
        finally:
            self._finish(reading)
        ex.t_end = self.clock()
        self._remember(kind, reading, bound, full, unary)
        return ex

    def _remember(self, kind: tuple[str, str], r: _Reading, bound: float, full: float, unary: bool) -> None:
        """What this answer shows of the target's answers of its kind: none within the wait (a unary one, or a
        stream that never began: the next ones of the kind wait less, and this one says why it waited less), or
        one (they wait in full again). A stream cut at its limit once it has begun shows nothing."""
        ex = r.ex
        if r.waited_out and (unary or ex.t_headers is None):
            if ex.error:
                ex.error += unanswered.because(kind, bound, full, "the --timeout" if unary else "the stream limit")
            unanswered.silent(kind, ex.label, ex.error or "no answer")
        elif ex.t_headers is not None and (not unary or ex.end in (END_CLOSED, END_CLIENT_STOP)):
            unanswered.answered(kind)

    def _read_timeout(self, streaming: bool) -> float:
        """How long one read may wait: the idle-gap limit (for a unary answer, the --timeout if shorter)."""
        return self.bounds.idle if streaming else min(self.timeout, self.bounds.idle)

    async def _exchange(self, r: _Reading, http_method: str, url: str, headers: dict[str, str],
                        content: bytes | None, until: Until | None, on_event: OnEvent | None) -> None:
        assert self._http is not None
        ex = r.ex
        # A stream may rightly stay silent for a while (a task at work); no read may wait past the
        # idle-gap limit, which is named when it ends one, never mistaken for "no answer".
        timeout = httpx.Timeout(self.timeout, read=self._read_timeout(bool(ex.notes.get(STREAMING))))
        request = self._http.build_request(http_method, url, headers=headers, content=content, timeout=timeout)
        response = await self._http.send(request, stream=True)
        try:
            ex.status = response.status_code
            ex.response_headers = {k.lower(): v for k, v in response.headers.items()}
            ex.t_headers = response.extensions.get(T_HEADERS, self.clock())
            if r.on_headers is not None:
                r.on_headers()
            if retried := response.extensions.get(RETRIED):
                ex.notes[RESENT] = retried  # sent again: the server had closed the reused connection
            r.capture = response.extensions.get(CAPTURE)
            if r.capture is not None:
                ex.chunks = r.capture.chunks  # the transport fills it as bytes arrive
            self._decoding(r)
            if ex.is_sse:
                await self._read_events(r, response, until, on_event)
            else:
                await self._read_body(r, response)
        finally:
            await response.aclose()

    def _decoding(self, r: _Reading) -> None:
        """Decode a Content-Encoding the suite did not ask for (gzip, deflate), within the decompressed-size
        cap; one it cannot decode leaves the answer unjudged, named."""
        codings = [c.strip().lower() for c in r.ex.response_headers.get("content-encoding", "").split(",")]
        codings = [c for c in codings if c and c != "identity"]
        if not codings:
            return
        if len(codings) == 1 and codings[0] in ContentDecoder.CODINGS:
            r.decoder = ContentDecoder(codings[0], self.bounds.max_decompressed)
            r.ex.notes[CONTENT_ENCODING] = codings[0]
            r.ex.notes[DECODED_LIMIT] = self.bounds.max_decompressed
            return
        r.unjudged(f"the answer came with Content-Encoding: {', '.join(codings)} ({NOT_ASKED}), which the suite "
                   f"does not decode")

    def _decoded(self, r: _Reading) -> bool:
        """Whether the decoding may go on; when not, why is recorded."""
        d = r.decoder
        if d is None or not (d.over or d.error):
            return True
        what = f"a body sent with Content-Encoding: {d.coding} ({NOT_ASKED})"
        if d.error:
            r.unjudged(f"{what} does not decode: {d.error}")
        else:
            cap = limits.MAX_DECOMPRESSED
            r.unjudged(cap.reached(f"{what} that decodes to more than {show(d.limit, 'bytes')}", d.limit),
                       cap, d.size, d.limit)
        return False

    async def _read_body(self, r: _Reading, response: httpx.Response) -> None:
        ex = r.ex
        readable = UNJUDGED not in ex.notes  # an encoding it cannot decode: the bytes are kept, not decoded
        async for part in response.aiter_raw():
            if readable:
                for _ in r.pieces(part):
                    pass  # decoded only to know the size it decodes to (`body` decodes it again when read)
                if not self._decoded(r):
                    ex.end = END_CLIENT_STOP
                    return
            if r.capture is not None and r.capture.over:
                cap, limit = limits.MAX_BODY, self.bounds.max_body
                declared = ex.response_headers.get("content-length", "")
                figure = int(declared) if declared.isdigit() else r.capture.size
                said = f"a body of {show(figure, 'bytes')}" if declared.isdigit() else \
                    f"a body of more than {show(figure, 'bytes')}"
                r.unjudged(cap.reached(said, limit), cap, figure, limit)
                ex.end = END_CLIENT_STOP
                return
        ex.end = END_CLOSED

    async def _read_events(self, r: _Reading, response: httpx.Response, until: Until | None,
                           on_event: OnEvent | None) -> None:
        ex = r.ex
        if UNJUDGED in ex.notes:  # bytes in an encoding the suite cannot read: nothing to parse
            ex.end = END_CLIENT_STOP
            return
        parser = r.parser = SSEParser(self.bounds.max_event)
        budget = ParseBudget(PAYLOAD_BUDGET)
        async for part in response.aiter_raw():
            # The transport has recorded this read, with its time, before handing it on.
            t = r.capture.last_t if r.capture is not None and r.capture.last_t is not None else self.clock()
            over = r.capture is not None and r.capture.over
            if over and not r.headed:
                self._keep_head(r)
            for piece in r.pieces(part):
                for ev in parser.feed(piece, t):
                    if over:
                        r.past_events += 1  # past the stream's size cap: counted, not kept
                    else:
                        ev._budget = budget
                        ex.events.append(ev)
                    if ev.is_comment:
                        continue  # kept with its time, but no event (WHATWG HTML §9.2.6): no driver reads one
                    if on_event is not None:
                        res = on_event(ev)
                        if inspect.isawaitable(res):
                            await res
                    if until is not None and until(ev):
                        ex.end = END_CLIENT_STOP
                        return
            if parser.oversize:
                self._oversize(r)
            if not self._decoded(r):
                ex.end = END_CLIENT_STOP
                return
        ex.end = END_CLOSED

    def _keep_head(self, r: _Reading) -> None:
        """A stream past its size cap keeps the events of its first WINDOW bytes (at least the first:
        the Task a driver reads its ids from); the others are let go, counted."""
        events, size, n = r.ex.events, 0, 0
        for ev in events:
            size += len(ev.data)
            if n and size > WINDOW:
                break
            n += 1
        r.past_events += len(events) - n
        del events[n:]
        r.headed = True

    def _oversize(self, r: _Reading) -> None:
        cap, limit = limits.MAX_EVENT, self.bounds.max_event
        index, size = r.parser.oversize[0]
        r.unjudged(cap.reached(f"an event of {show(size, 'bytes')}", limit), cap, size, limit)

    # -- how it ended -------------------------------------------------------------------------------
    def _failed(self, r: _Reading, exc: httpx.HTTPError) -> None:
        """A transport error: before the headers there is no answer; after, the answer was cut."""
        ex = r.ex
        said = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if ex.t_headers is None:
            ex.end = END_ERROR
            if isinstance(exc, httpx.ReadTimeout):
                ex.error = f"no response headers within {self._read_timeout(bool(ex.notes.get(STREAMING))):g} s"
            else:
                ex.error = said
            return
        received = f"{r.received} bytes"
        if isinstance(exc, httpx.ReadTimeout):
            last = r.capture.last_t if r.capture is not None and r.capture.last_t is not None else ex.t_headers
            gap = self.clock() - last
            ex.end = END_IDLE
            streaming = bool(ex.notes.get(STREAMING))
            if streaming or self.bounds.idle <= self.timeout:
                ex.error = limits.IDLE.reached(f"a silence of {gap:.1f} s after {received}", self.bounds.idle)
            else:
                ex.error = f"a silence of {gap:.1f} s after {received} of the body, past the --timeout of " \
                           f"{self.timeout:g} s"
            ex.notes[IDLE_S] = round(gap, 3)
            return
        ex.end = END_RESET
        if broken_by(exc, errno.ECONNRESET):
            ex.error = f"the connection was reset after {received}"
        elif isinstance(exc, httpx.RemoteProtocolError):
            ex.error = f"the connection closed after {received}, before the end of the body ({said})"
        else:
            ex.error = f"the connection failed after {received} ({said})"

    def _finish(self, r: _Reading) -> None:
        """What the reading leaves in the exchange, however it ended: the unterminated block, the stream's
        flags, and the record of a size cap passed."""
        ex = r.ex
        parser = r.parser
        if parser is not None:
            parser.finish(self.clock())
            ex.discarded = parser.discarded
            if parser.invalid_utf8:
                ex.notes[INVALID_UTF8] = True
            if parser.retry is not None:
                ex.notes[RETRY] = parser.retry
            if parser.oversize:
                self._oversize(r)
                ex.notes[OVERSIZE] = [list(o) for o in parser.oversize[:10]]
        capture = r.capture
        if capture is not None and capture.over:
            more = {"events": len(ex.events) + r.past_events, "kept_events": len(ex.events)} if parser else {}
            ex.notes[OVERFLOW] = capture.overflow(**more)
            if ex.is_sse:
                cap, limit = limits.MAX_STREAM, self.bounds.max_stream
                r.unjudged(cap.reached(f"a stream of {show(capture.size, 'bytes')}", limit), cap, capture.size, limit)

