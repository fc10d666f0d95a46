"""The reference agents over gRPC (A2A 1.0.1 §10): one grpc.aio server per hosted agent on 127.0.0.1, serving
lf.a2a.v1.A2AService through generic handlers with the project's own message descriptors (no generated code).

Each method reaches the same `Agent.handlers[op](params)` as JSON-RPC, with params = the request message as
ProtoJSON; a result is written back as the method's response message, a Stream as StreamResponse messages (its
results as streams.py walks them for SSE). An `RpcError` ends the call with the status §5.4 maps its code to
and, for an A2A error, a google.rpc.Status holding a google.rpc.ErrorInfo in the grpc-status-details-bin
trailer (§10.6). Service parameters come as metadata: a2a-version is checked as JSON-RPC checks its header,
a2a-extensions activates extensions and is echoed in the initial metadata.

The servers start in the app's lifespan, on uvicorn's event loop (the agents' handlers are asyncio on it), so
their ports are known before the first request: app.state.grpc_urls maps each agent's name to its interface
URL, which the card lists. Without the grpc extra nothing starts and the card lists no gRPC interface.
"""

from __future__ import annotations

import socket
from contextlib import aclosing
from typing import Any, AsyncIterator

from ...protocols import a2a, bindings
from ...protocols import grpc_messages as messages
from ..faults import switch
from . import service
from .methods import Agent, Stream
from .options import Options
from .rpc import RpcError, invalid_params
from .shapes import event_state
from .streams import results

try:  # the grpc extra; without it the reference serves JSON-RPC and HTTP+JSON only
    grpc = messages.import_grpc()
except ImportError:  # pragma: no cover - exercised by an install without the extra
    grpc = None  # type: ignore[assignment]

HOST = "127.0.0.1"  # loopback only, always
STOP_GRACE_S = 0.0  # calls still open when the app stops are cancelled at once (streams wait on nothing)
MAX_MESSAGE = 64 * 1024 * 1024  # the largest request message a reference agent reads


def _same(data: bytes) -> bytes:
    return data


class GrpcServers:
    """The gRPC servers of the hosted agents: `await start()` on the app's loop, `await stop()` when it ends."""

    def __init__(self, agents: dict[str, Agent], options: Options) -> None:
        self.agents = agents
        self.options = options
        self.urls: dict[str, str] = {}  # agent name → the URL its card lists for GRPC
        self._servers: list[Any] = []
        self._reserved: list[socket.socket] = []  # (fault: card-phantom-grpc) ports nothing serves

    async def start(self) -> dict[str, str]:
        for name, agent in self.agents.items():
            if CARD_PHANTOM_GRPC.on(self.options):
                port = self._reserve()
            else:
                server = grpc.aio.server(options=[("grpc.so_reuseport", 0),
                                                  ("grpc.max_receive_message_length", MAX_MESSAGE)])
                server.add_generic_rpc_handlers((_Service(agent).handler(),))
                port = server.add_insecure_port(f"{HOST}:0")
                await server.start()
                self._servers.append(server)
            self.urls[name] = f"http://{HOST}:{port}"
        return self.urls

    def _reserve(self) -> int:
        """A loopback port held bound but never listening: a connection there is refused."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((HOST, 0))
        self._reserved.append(sock)
        return sock.getsockname()[1]

    async def stop(self) -> None:
        servers, self._servers = self._servers, []
        for server in servers:
            await server.stop(STOP_GRACE_S)
        for sock in self._reserved:
            sock.close()
        self._reserved = []


async def start_grpc(app: Any) -> GrpcServers | None:
    """Start the gRPC servers of the app's agents (None without the grpc extra); their URLs go to
    app.state.grpc_urls, which the card endpoint reads."""
    if messages.grpc_available() is not None:
        return None
    servers = GrpcServers(app.state.agents, app.state.options)
    app.state.grpc_urls.update(await servers.start())
    return servers


class _Service:
    """A2AService for one agent."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.options = agent.options

    def handler(self) -> Any:
        methods = {}
        for op in messages.OPERATIONS:
            if op == a2a.SUBSCRIBE_TO_TASK and UNIMPLEMENTED_SUBSCRIBE.on(self.options):
                continue  # (fault) the server answers UNIMPLEMENTED, as for a method it does not have
            if op not in self.agent.handlers:
                continue  # (fault: capability-methods-unimplemented) likewise
            if messages.streaming(op):
                methods[op] = grpc.unary_stream_rpc_method_handler(self._stream(op), _same, _same)
            else:
                methods[op] = grpc.unary_unary_rpc_method_handler(self._unary(op), _same, _same)
        return grpc.method_handlers_generic_handler(bindings.GRPC_SERVICE, methods)

    def _unary(self, op: str):
        async def call(request: bytes, context: Any) -> bytes:
            echo = self._echo(context)
            if echo:
                await context.send_initial_metadata(echo)
            outcome = await self._outcome(op, request, context)
            return await self._encode(messages.response_type(op), outcome, context)
        return call

    def _stream(self, op: str):
        async def call(request: bytes, context: Any) -> AsyncIterator[bytes]:
            # the initial metadata at once: the client sees the answer begin before the first event
            await context.send_initial_metadata(self._echo(context))
            outcome = await self._outcome(op, request, context)
            if not isinstance(outcome, Stream):  # an answer that is no stream: one StreamResponse
                yield await self._encode("StreamResponse", outcome, context)
                return
            garbage = GARBAGE_MESSAGE.on(self.options) and outcome.origin == a2a.SEND_STREAMING_MESSAGE \
                and not outcome.answer
            index = 0
            async with aclosing(results(outcome, self.agent.store, self.options)) as source:
                async for result in source:
                    if result is None:
                        continue  # a keep-alive: gRPC has nothing like SSE's comments to send
                    index += 1
                    if garbage and index == 2 and not a2a.is_terminal(event_state(result)):
                        yield GARBAGE  # (fault) the second message of the task stream is no StreamResponse
                        continue
                    yield await self._encode("StreamResponse", result, context)
        return call

    def _echo(self, context: Any) -> tuple[tuple[str, str], ...]:
        """The initial metadata: the extensions the request activated, as the JSON-RPC answer's header."""
        echo = service.echo_headers(service.activated(_metadata(context), self.agent), self.options)
        return tuple((key.lower(), value) for key, value in echo.items())

    async def _outcome(self, op: str, request: bytes, context: Any) -> Any:
        """What the agent answers the request, or the call ended with the error's status."""
        try:
            service.check_version(_metadata(context), self.options)
            service.check_extensions(_metadata(context), self.agent, self.options)
            try:
                params = messages.decode(messages.request_type(op), request)
            except messages.ProtoError as exc:
                raise invalid_params(str(exc)) from None
            if (refusal := await service.unauthenticated(_metadata(context), op, params, self.agent)) is not None:
                await context.abort(grpc.StatusCode.UNAUTHENTICATED, refusal)
            return await self.agent.handlers[op](params)
        except RpcError as error:
            await self._abort(context, error)

    async def _encode(self, name: str, outcome: Any, context: Any) -> bytes:
        try:
            return messages.encode(name, outcome)
        except messages.ProtoError as exc:  # the reference's own bug: shown, never hidden
            await context.abort(grpc.StatusCode.INTERNAL, f"the reference's answer is no {name}: {exc}")
            raise AssertionError("abort returns only by raising") from exc

    async def _abort(self, context: Any, error: RpcError) -> None:
        """End the call with the error's gRPC status (§5.4) and, for an A2A error, its ErrorInfo (§10.6)."""
        status, _ = bindings.forms_of(error.code) or ("INTERNAL", 500)
        status = WRONG_STATUS.get(error.code, status) if GRPC_WRONG_STATUS.on(self.options) else status
        trailers: tuple[tuple[str, bytes], ...] = ()
        dropped = GRPC_NO_ERRORINFO.on(self.options) and error.code in WITHOUT_ERRORINFO
        if error.code in bindings.ERROR_FORMS and not dropped:
            info = messages.error_info(bindings.reason_of(error.code))
            trailers = ((messages.STATUS_DETAILS_KEY, messages.status_bytes(status, error.message, [info])),)
        await context.abort(grpc.StatusCode[status], error.message, trailing_metadata=trailers)


def _metadata(context: Any) -> dict[str, str]:
    """The call's text metadata: the service parameters, read as the HTTP bindings read their headers."""
    return {key: value for key, value in context.invocation_metadata() or ()
            if isinstance(value, str) and not key.endswith("-bin")}


# -- fault variants ---------------------------------------------------------------------------------
GRPC_WRONG_STATUS = switch("grpc-wrong-status")
WRONG_STATUS = {a2a.TASK_NOT_FOUND: "FAILED_PRECONDITION"}  # grpc-wrong-status: TaskNotFoundError's status
GRPC_NO_ERRORINFO = switch("grpc-no-errorinfo")
WITHOUT_ERRORINFO = {a2a.TASK_NOT_CANCELABLE}  # grpc-no-errorinfo: the errors sent without their ErrorInfo
UNIMPLEMENTED_SUBSCRIBE = switch("grpc-unimplemented-subscribe")
GARBAGE_MESSAGE = switch("grpc-garbage-message")
# A length-delimited field 1 that claims 5 bytes where 2 follow: no protobuf message at all.
GARBAGE = b"\x0a\x05ab"
CARD_PHANTOM_GRPC = switch("card-phantom-grpc")
