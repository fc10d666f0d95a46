"""The reference server's Starlette app: agent cards, JSON-RPC dispatch, and which response to write."""

from __future__ import annotations

import asyncio
import contextlib
import html
import re
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from ..protocols import a2a
from . import progress, rest, rpc
from .agents import AGENTS, JSONRPC_PATH, AgentSpec
from .card import build_card
from .faults import switch, variant
from .grpc_server import start_grpc
from .methods import Agent, Stream
from .options import Options
from .streams import drain, sse_response

_VERSION_OK = re.compile(r"1\.0(\.\d+)?")  # Major.Minor; a patch number is not considered (A2A §3.6)


def create_app(fault: str | None = None, deterministic: bool = False, keepalive: float | None = None,
               agents: tuple[AgentSpec, ...] = AGENTS, d3: str = "close") -> Starlette:
    """The ASGI app hosting `agents`. `fault` names one FAULTS variant (None: the correct server);
    `d3` the reading of conflict D3 it takes: streams "close" at an interrupted state, or stay "open"."""
    options = Options(fault=fault, deterministic=deterministic, keepalive=keepalive, d3=d3)
    runners: set[asyncio.Task] = set()
    hosted = {spec.name: Agent(spec, options, runners) for spec in agents}
    routes = []
    for agent in hosted.values():
        routes.append(Route(agent.spec.prefix + a2a.CARD_PATH, _card_endpoint(agent), methods=["GET"]))
        routes.append(Route(agent.spec.prefix + JSONRPC_PATH, _rpc_endpoint(agent), methods=["POST"]))
        routes.extend(rest.routes(agent, _checks(agent)))  # HTTP+JSON (A2A §11)
    routes.append(Route(progress.PATH, progress.endpoint(options), methods=["POST"]))  # seed 003

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette):
        # gRPC (A2A §10): one server per agent on uvicorn's loop, started before the first request is served
        grpc_servers = await start_grpc(app, _checks)
        yield
        if grpc_servers is not None:
            await grpc_servers.stop()
        for runner in list(runners):  # players still running when the server stops
            runner.cancel()

    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.options = options
    app.state.agents = hosted
    app.state.grpc_urls = {}  # agent name → its gRPC interface URL, once the lifespan started it
    return app


def _card_endpoint(agent: Agent):
    async def card(request: Request) -> Response:
        if CARD_404.on(agent.options):
            return PlainTextResponse("Not Found", status_code=404)
        if CARD_NOT_JSON.on(agent.options):
            return HTMLResponse("<html><body><h1>streamcert reference agent</h1></body></html>")
        base = f"{request.url.scheme}://{request.url.netloc}"
        grpc_url = request.app.state.grpc_urls.get(agent.spec.name)
        return Response(rpc.dumps(build_card(agent.spec, base, agent.options, grpc_url=grpc_url)),
                        media_type=a2a.JSON_MEDIA_TYPE)
    return card


def _activated(request: Request, agent: Agent) -> list[str]:
    """The extensions the request activates that this agent's card declares, in request order."""
    asked = [uri.strip() for uri in request.headers.get(a2a.EXTENSIONS_HEADER, "").split(",")]
    return list(dict.fromkeys(uri for uri in asked if uri in agent.spec.extension_uris))


def _check_version(request: Request, options: Options) -> None:
    # A missing or empty header reads as 0.3 (A2A §3.6), which this server does not speak.
    version = request.headers.get(a2a.VERSION_HEADER, "").strip() or "0.3"
    known = variant(options, _VERSION_OK, {VERSION_PATCH_REFUSED: _VERSION_EXACT})
    if not known.fullmatch(version) and not VERSION_IGNORED.on(options):
        raise rpc.RpcError(a2a.VERSION_NOT_SUPPORTED,
                           f"A2A version {version} is not supported; this server speaks {a2a.PROTOCOL_VERSION}")


def _rpc_endpoint(agent: Agent):
    options = agent.options

    async def endpoint(request: Request) -> Response:
        headers = _echo_headers(_activated(request, agent), options)
        rpc_id = None
        try:
            doc = rpc.decode(await request.body())
            rpc_id = rpc.request_id(doc)
            method, params, notification = rpc.read_request(doc, options)
            if notification:
                # JSON-RPC 2.0 §4.1: no reply, not even an error. Every A2A method is asked for its answer,
                # so a notification of one is not acted on either.
                return Response(status_code=204, headers=headers)
            _check_version(request, options)
            handler = agent.handlers.get(method)
            if handler is None:
                raise rpc.RpcError(a2a.METHOD_NOT_FOUND, f"Method {method!r} is not supported")
            outcome = await handler(params)
        except rpc.RpcError as error:
            return _error_response(rpc.response(rpc_id, options, error=error), options, headers)
        if isinstance(outcome, Stream):
            return await _stream_response(outcome, rpc_id, agent, headers)
        return _json(rpc.response(rpc_id, options, result=outcome), headers)

    return endpoint


def _checks(agent: Agent) -> rest.Checks:
    """What this endpoint does with a request besides its method, for the HTTP+JSON binding to do the same."""
    options = agent.options
    return rest.Checks(echo_headers=lambda request: _echo_headers(_activated(request, agent), options),
                       check_version=lambda request: _check_version(request, options),
                       streams_as_json=NO_STREAM.on(options))


def _echo_headers(activated: list[str], options: Options) -> dict[str, str]:
    if not activated or NO_EXTENSION_ECHO.on(options):
        return {}
    return {a2a.EXTENSIONS_HEADER: ",".join(activated)}


def _json(body: dict[str, Any], headers: dict[str, str]) -> Response:
    return Response(rpc.dumps(body), media_type=a2a.JSON_MEDIA_TYPE, headers=headers)


def _error_response(body: dict[str, Any], options: Options, headers: dict[str, str]) -> Response:
    if HTML_ERROR.on(options):
        page = f"<html><body><h1>Error</h1><p>{html.escape(body['error']['message'])}</p></body></html>"
        return HTMLResponse(page, status_code=500, headers=headers)
    return _json(body, headers)


async def _stream_response(stream: Stream, rpc_id: Any, agent: Agent, headers: dict[str, str]) -> Response:
    options = agent.options
    if NO_STREAM.on(options):
        await drain(stream, agent.store, options)
        return _json(rpc.response(rpc_id, options, result={"task": stream.record.snapshot()}), headers)
    return sse_response(stream, rpc_id, agent.store, options, headers)


# -- fault variants ---------------------------------------------------------------------------------
CARD_404 = switch("card-404")
CARD_NOT_JSON = switch("card-not-json")
VERSION_IGNORED = switch("version-ignored")
VERSION_PATCH_REFUSED = switch("version-patch-refused")
_VERSION_EXACT = re.compile(r"1\.0")  # (fault: version-patch-refused) the patch number is considered
NO_EXTENSION_ECHO = switch("no-extension-echo")
HTML_ERROR = switch("html-error")
NO_STREAM = switch("no-stream")
