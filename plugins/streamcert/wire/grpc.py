"""The A2A gRPC client transport (A2A 1.0.1 §10): one call of an A2AService method, written into the frame log
as docs/bindings.md's "gRPC exchange" says, stamped like every other exchange.

The channel hands each response message over as its raw bytes (identity deserializers): the transport stamps
its arrival, keeps the bytes (a `Chunk`) and decodes them itself into ProtoJSON (`grpc_messages`), so that a
message that is not the method's response type is recorded (`notes["undecodable"]`), never raised. How the call
ended is written in `notes["grpc_status"]` (the status code's name, its message, and the details decoded from
the `grpc-status-details-bin` trailer) and `notes["trailers"]`.

Every call is bounded: a unary call by the --timeout, a stream by its limit (cut there, `time_limit`) and by
the idle-gap limit between two messages, a message by --max-event-bytes (the channel's receive limit), a stream
by --max-stream-bytes. A target that cannot be reached ends `error` with why, as soon as the channel knows.
Needs the grpc extra (`grpc_messages.grpc_available()`).
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .. import limits
from ..contract.capture import (
    GRPC_STATUS,
    IDLE_S,
    LIMIT_S,
    NOT_SENT,
    OVERSIZE,
    STREAMING,
    TRAILERS,
    TRANSPORT_FAILURE,
    UNDECODABLE,
    UNJUDGED,
)
from ..framelog import (
    END_CLIENT_STOP,
    END_CLOSED,
    END_ERROR,
    END_IDLE,
    END_TIME_LIMIT,
    PAYLOAD_BUDGET,
    Chunk,
    Event,
    Exchange,
    FrameLog,
    ParseBudget,
)
from ..limits import show
from ..protocols import bindings
from ..protocols import grpc_messages as messages
from . import activity, unanswered
from .bounds import Bounds, OnEvent, Until
from .capture import Clock

grpc = messages.import_grpc()  # with the suite's settings for gRPC's core (grpc_messages.GRPC_SETTINGS)

CONTENT_TYPE = "application/grpc"
SCHEMES = {"http": False, "grpc": False, "https": True, "grpcs": True}  # scheme → a TLS channel
_TOO_LARGE = re.compile(r"larger than max \((\d+) vs\. (\d+)\)")
# The statuses the gRPC library makes up itself when it cannot read the answer's framing (a message frame cut
# short by the end of the stream, a compressed flag with no encoding, a stream reset): the server sent no such
# status, so it is named a transport failure, never read as the server's InternalError or UNKNOWN.
UNREADABLE_FRAME = "the answer's message frame could not be read (the gRPC library handed over no message)"
_TRANSPORT_FAILURE = re.compile(r"(Stream removed|Compression bit set|Failed to decompress|Unexpected error "
                                r"decompress|Received RST_STREAM|Failed parsing HTTP/2|Bad gRPC response)")


def _same(data: bytes) -> bytes:
    return data


def grpc_target(url: str) -> tuple[str, bool]:
    """(host:port, TLS) of an interface URL: `http://host:port` and `grpc://host:port` without TLS,
    `https://` and `grpcs://` with it, a bare `host:port` without. A path is not part of a gRPC target (the
    method path is fixed, §10.3); a URL without a port gets its scheme's (80, 443). ValueError otherwise."""
    text = url.strip()
    if "://" not in text:
        host_port = text.split("/", 1)[0]
        if not host_port:
            raise ValueError(f"no host in the gRPC target {url!r}")
        return host_port, False
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise ValueError(f"the gRPC target {url!r} has scheme {scheme!r}; the suite speaks "
                         f"{', '.join(SCHEMES)}")
    secure = SCHEMES[scheme]
    if not parts.hostname:
        raise ValueError(f"no host in the gRPC target {url!r}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{host}:{parts.port or (443 if secure else 80)}", secure


def _metadata(pairs: Any) -> dict[str, str]:
    """Metadata as the frame log keeps it: lower-case keys, binary values (`-bin`) in base64; a key sent
    twice keeps its values comma-joined (as HTTP headers would)."""
    out: dict[str, str] = {}
    for key, value in pairs or ():
        key = str(key).lower()
        text = base64.b64encode(value).decode("ascii") if isinstance(value, bytes) else str(value)
        out[key] = f"{out[key]},{text}" if key in out else text
    return out


@dataclass
class _Call:
    """One call as it is read."""

    ex: Exchange
    response_type: str
    budget: ParseBudget
    received: int = 0  # bytes of all messages so far
    waited_out: bool = False  # the call did not end within the time it was given


class GrpcTransport:
    """The gRPC calls of one client: one channel per target, closed by `aclose`.

        transport = GrpcTransport(clock, log, timeout=10, stream_limit=15, bounds=Bounds())
        ex = await transport.call("GetTask", {"id": "t1"}, label="get_task", target_url="http://127.0.0.1:5001",
                                  metadata={"a2a-version": "1.0"}, streaming=False)
        await transport.aclose()
    """

    def __init__(self, clock: Clock, log: FrameLog, *, timeout: float = 10.0, stream_limit: float = 15.0,
                 bounds: Bounds | None = None) -> None:
        self.clock = clock
        self.log = log
        self.timeout = timeout
        self.stream_limit = stream_limit
        self.bounds = bounds or Bounds()
        self._channels: dict[tuple[str, bool], grpc.aio.Channel] = {}

    async def __aenter__(self) -> GrpcTransport:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        channels, self._channels = list(self._channels.values()), {}
        for channel in channels:
            await channel.close()

    def _channel(self, target: str, secure: bool) -> grpc.aio.Channel:
        channel = self._channels.get((target, secure))
        if channel is None:
            options = [("grpc.max_receive_message_length", self.bounds.max_event), ("grpc.enable_retries", 0)]
            channel = (grpc.aio.secure_channel(target, grpc.ssl_channel_credentials(), options=options) if secure
                       else grpc.aio.insecure_channel(target, options=options))
            self._channels[target, secure] = channel
        return channel

    # -- one call ---------------------------------------------------------------------------------
    async def call(self, operation: str, params: dict[str, Any] | None, *, label: str, target_url: str,
                   metadata: dict[str, str], streaming: bool, until: Until | None = None,
                   on_event: OnEvent | None = None, limit: float | None = None) -> Exchange:
        """Call `operation` with the request message `params` (ProtoJSON) at the interface `target_url`; the
        exchange, however the call went. A stream is read until its status, `until(event)` or the limit."""
        sent = {str(k).lower(): str(v) for k, v in (metadata or {}).items()}
        ex = self.log.add(Exchange(
            label=label, method="POST", url=target_url.rstrip("/") + bindings.grpc_path(operation),
            rpc_method=operation, request_headers=sent, request_body=params, t_sent=self.clock(),
            notes={STREAMING: True} if streaming else {}, binding=bindings.GRPC,
        ))
        # a unary call has the --timeout in all, or less once the target has shown it does not answer the method
        kind = unanswered.kind("POST", ex.url)
        bound = (self.stream_limit if limit is None else limit) if streaming else unanswered.wait(kind, self.timeout)
        if streaming:
            ex.notes[LIMIT_S] = bound
        request, target = self._prepare(ex, operation, params, target_url)
        if request is None or target is None:
            ex.end, ex.t_end = END_ERROR, ex.t_sent
            ex.notes[NOT_SENT] = True
            return ex
        activity.waiting(self.log.scenario, ex, bound)  # what the run waits for, shown while it lasts
        channel = self._channel(*target)
        path = bindings.grpc_path(operation)
        # A unary call is read as a response stream too (the same bytes on the wire): its headers and its message are
        # handed over as they come, so a server that never sends the status after them has still answered.
        method = channel.unary_stream(path, request_serializer=_same, response_deserializer=_same)
        reading = _Call(ex, messages.response_type(operation), ParseBudget(PAYLOAD_BUDGET))
        call = None
        try:
            async with asyncio.timeout(bound):
                if not await self._ready(channel):
                    # the call fails at once on a channel that cannot connect; its status says why
                    call = method(request, metadata=tuple(sent.items()), timeout=self.timeout)
                    await self._unreachable(ex, call, target[0])
                else:
                    # the server is told a deadline past the suite's own bound, so the suite's cut is the one seen
                    # (never a DEADLINE_EXCEEDED the library made up, read as the server's status)
                    call = method(request, metadata=tuple(sent.items()), timeout=bound + self.timeout)
                    await self._read(reading, call, until, on_event)
        except TimeoutError:
            reading.waited_out = True
            if ex.t_headers is None:
                ex.end, ex.error = END_ERROR, f"no answer within {bound:g} s"
            else:
                ex.end = END_TIME_LIMIT
                if not streaming:
                    ex.error = self._no_status(ex, bound)
        finally:
            if call is not None and not call.done():
                call.cancel()
            ex.t_end = self.clock()
        if not streaming:
            if reading.waited_out:
                ex.error = (ex.error or "no answer") + unanswered.because(kind, bound, self.timeout)
                unanswered.silent(kind, ex.label, ex.error)
            elif ex.end == END_CLOSED:
                unanswered.answered(kind)
        return ex

    @staticmethod
    def _no_status(ex: Exchange, seconds: float) -> str:
        """A unary call whose status did not come in time: what did (a message that came is judged, as the answer)."""
        came = "its message came" if ex.events else "its headers came, no message"
        return f"the call's status (its trailers) did not come within {seconds:g} s: {came}"

    def _prepare(self, ex: Exchange, operation: str, params: Any,
                 target_url: str) -> tuple[bytes | None, tuple[str, bool] | None]:
        """(the request's bytes, (target, TLS)); a None says why in the exchange: an operation the service
        does not have, a request that protobuf cannot express, a URL that names no gRPC target."""
        if operation not in messages.REQUEST_TYPES:
            ex.error = f"{operation} is not an A2AService method the suite calls over gRPC"
            return None, None
        try:
            message = messages.to_proto(messages.request_type(operation), params if params is not None else {})
        except messages.ProtoError as exc:
            ex.error = f"the request cannot be sent over gRPC: {exc}"
            return None, None
        ex.request_body = messages.to_json(message)  # what the wire carries, as ProtoJSON
        try:
            target = grpc_target(target_url)
        except ValueError as exc:
            ex.error = str(exc)
            return None, None
        return message.SerializeToString(), target

    @staticmethod
    async def _ready(channel: grpc.aio.Channel) -> bool:
        """Wait until the channel is connected (True) or has failed to connect (False)."""
        state = channel.get_state(try_to_connect=True)
        settled = (grpc.ChannelConnectivity.READY, grpc.ChannelConnectivity.TRANSIENT_FAILURE,
                   grpc.ChannelConnectivity.SHUTDOWN)
        while state not in settled:
            await channel.wait_for_state_change(state)
            state = channel.get_state(try_to_connect=True)
        return state == grpc.ChannelConnectivity.READY

    async def _unreachable(self, ex: Exchange, call: Any, target: str) -> None:
        try:
            await call.initial_metadata()
            code, details = await call.code(), await call.details()
        except grpc.RpcError as exc:  # pragma: no cover - the aio call reports through code()/details()
            code, details = exc.code(), exc.details()
        said = f"{code.name}: {details}" if code is not None else "the channel did not connect"
        ex.end, ex.error = END_ERROR, f"no gRPC connection to {target} ({said})"

    async def _read(self, r: _Call, call: Any, until: Until | None, on_event: OnEvent | None) -> None:
        ex = r.ex
        try:
            head = await asyncio.wait_for(call.initial_metadata(), self._read_timeout(ex))
            self._headers(ex, head)
            streaming = bool(ex.notes.get(STREAMING))
            while True:
                data = await asyncio.wait_for(call.read(), self._read_timeout(ex))
                if data is grpc.aio.EOF:
                    break
                if data is None:  # the library read a message frame it could not make bytes of
                    self._headers(ex, ())
                    _transport_failed(ex, UNREADABLE_FRAME)
                    return
                event = self._message(r, data)
                if streaming and await self._stop(ex, event, until, on_event):
                    return
                if self._over(r):
                    return
            if not streaming and await call.code() == grpc.StatusCode.OK and (why := self._unreadable(r)):
                _transport_failed(ex, why)
                return
        except grpc.RpcError:
            pass  # the status it ended with is read below, as an OK one is
        except TimeoutError:
            if asyncio.current_task().cancelling():  # the call's own bound, not the idle gap: said by `call`
                raise
            self._idle(r)
            return
        await self._ended(r, call)

    @staticmethod
    def _unreadable(r: _Call) -> str | None:
        """Why an OK unary answer has no message to judge: none handed over, or an empty one where the method's
        response is not google.protobuf.Empty. Read as a stream, the library hands a message frame it cannot read
        (an unknown flag byte) over as an empty message, so an empty answer cannot be told from that frame."""
        events = r.ex.events
        if not events:
            return UNREADABLE_FRAME
        if len(events) == 1 and not r.received and r.response_type != messages.EMPTY:
            return (f"the answer is an empty message where a {r.response_type} was due, as the gRPC library hands over "
                    f"a message frame it cannot read (an empty {r.response_type} and such a frame look alike)")
        return None

    def _read_timeout(self, ex: Exchange) -> float:
        """How long one read may wait: the idle-gap limit (for a unary answer, the --timeout if shorter)."""
        return self.bounds.idle if ex.notes.get(STREAMING) else min(self.timeout, self.bounds.idle)

    def _headers(self, ex: Exchange, head: Any) -> None:
        if ex.t_headers is None:
            ex.t_headers = self.clock()
            ex.status = 200
            ex.response_headers = {**_metadata(head), "content-type": CONTENT_TYPE}

    def _message(self, r: _Call, data: bytes) -> Event:
        """One response message: its bytes kept and stamped, decoded into the event's ProtoJSON text."""
        ex, t = r.ex, self.clock()
        self._headers(ex, ())  # a message without initial metadata first: the answer has begun all the same
        r.received += len(data)
        index = len(ex.events)
        ex.chunks.append(Chunk(t, data))
        try:
            text = messages.dumps(messages.decode(r.response_type, data))
        except messages.ProtoError as exc:
            text = ""
            ex.notes.setdefault(UNDECODABLE, []).append({"i": index, "error": str(exc)})
        event = Event(index=index, t=t, data=text)
        event._budget = r.budget
        ex.events.append(event)
        return event

    async def _stop(self, ex: Exchange, event: Event, until: Until | None, on_event: OnEvent | None) -> bool:
        if on_event is not None:
            res = on_event(event)
            if inspect.isawaitable(res):
                await res
        if until is not None and until(event):
            ex.end = END_CLIENT_STOP
            return True
        return False

    def _over(self, r: _Call) -> bool:
        """Past the stream's size cap the suite stops reading: the answer is left unjudged, named."""
        limit = self.bounds.max_stream
        if r.received <= limit:
            return False
        cap = limits.MAX_STREAM
        r.ex.notes.setdefault(UNJUDGED, {"reason": cap.reached(f"a stream of more than {show(r.received, 'bytes')}",
                                                                limit), "cap": cap.field, "figure": r.received,
                                         "limit": limit})
        r.ex.end = END_CLIENT_STOP
        return True

    def _idle(self, r: _Call) -> None:
        ex = r.ex
        r.waited_out = True
        if ex.t_headers is None:
            ex.end, ex.error = END_ERROR, f"no answer within {self._read_timeout(ex):g} s"
            return
        if not ex.notes.get(STREAMING):
            ex.end, ex.error = END_IDLE, self._no_status(ex, self._read_timeout(ex))
            return
        last = ex.events[-1].t if ex.events else ex.t_headers
        gap = self.clock() - last
        ex.end = END_IDLE
        ex.error = limits.IDLE.reached(f"a silence of {gap:.1f} s after {r.received} bytes", self.bounds.idle)
        ex.notes[IDLE_S] = round(gap, 3)

    async def _ended(self, r: _Call, call: Any) -> None:
        """The status the call ended with: the server's (recorded), or the client's own receive limit."""
        ex = r.ex
        code, details = await call.code(), await call.details() or ""
        trailers = await call.trailing_metadata()
        too_large = _TOO_LARGE.search(details) if code == grpc.StatusCode.RESOURCE_EXHAUSTED else None
        # the channel's own receive limit (grpcio names it so; a server refusing a large request names its own)
        if too_large and int(too_large.group(2)) == self.bounds.max_event:
            size, limit = int(too_large.group(1)), int(too_large.group(2))
            cap = limits.MAX_EVENT
            self._headers(ex, ())
            ex.notes.setdefault(UNJUDGED, {"reason": cap.reached(f"a message of {show(size, 'bytes')}", limit),
                                           "cap": cap.field, "figure": size, "limit": limit})
            ex.notes[OVERSIZE] = [[len(ex.events), size]]
            ex.end = END_CLIENT_STOP
            return
        self._headers(ex, ())
        if code is not None and code != grpc.StatusCode.OK and _TRANSPORT_FAILURE.match(details):
            _transport_failed(ex, f"the answer's framing could not be read ({code.name} {details!r}, the gRPC "
                                  f"library's own status: the server sent none)")
            return
        ex.end = END_CLOSED
        ex.notes[GRPC_STATUS] = _status(code, details, trailers)
        ex.notes[TRAILERS] = _metadata(trailers)


def _transport_failed(ex: Exchange, why: str) -> None:
    """The call ended in a failure of the transport, not with a status the server sent: `error`, saying so."""
    ex.end, ex.error = END_ERROR, f"gRPC transport failure: {why}"
    ex.notes[TRANSPORT_FAILURE] = True


def _status(code: Any, details: str, trailers: Any) -> dict[str, Any]:
    """notes["grpc_status"]: the code's name, the message, and the details of grpc-status-details-bin (with
    what is wrong with that trailer, when something is)."""
    name = code.name if code is not None else "UNKNOWN"
    out: dict[str, Any] = {"code": name, "message": details, "details": []}
    raw = next((value for key, value in trailers or () if str(key).lower() == messages.STATUS_DETAILS_KEY), None)
    if raw is None:
        return out
    if not isinstance(raw, bytes):
        out["details_error"] = f"{messages.STATUS_DETAILS_KEY} is not binary metadata"
        return out
    try:
        number, message, details_list = messages.status_details(raw)
    except messages.ProtoError as exc:
        out["details_error"] = f"{messages.STATUS_DETAILS_KEY} is no google.rpc.Status: {exc}"
        return out
    out["details"] = details_list
    if messages.code_name(number) != name or message != details:
        # the Status in the trailer is meant to repeat the call's own (google.rpc.Status, §10.6)
        out["details_status"] = {"code": messages.code_name(number), "message": message}
    return out
