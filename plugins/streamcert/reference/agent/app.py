"""The reference server's Starlette app: agent cards, JSON-RPC dispatch, and which response to write."""

from __future__ import annotations

import asyncio
import contextlib
import html
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from ...protocols import a2a
from ..faults import switch
from ..progress import stream as progress
from . import auth, rest, rpc, service
from .agents import AGENTS, JSONRPC_PATH, AgentSpec
from .card import build_card, caching_headers, not_modified
from .grpc_server import start_grpc
from .methods import Agent, Stream
from .options import Options
from .streams import drained, sse_response


def create_app(fault: str | None = None, deterministic: bool = False, keepalive: float | None = None,
               agents: tuple[AgentSpec, ...] = AGENTS, d3: str = "close", script_steps: tuple[str, ...] | None = None,
               ignore_script: bool = False, auth: str | None = None, secured_token: str | None = None) -> Starlette:
    """The ASGI app hosting `agents`. `fault` names one FAULTS variant (None: the correct server);
    `d3` the reading of conflict D3 it takes: streams "close" at an interrupted state, or stay "open"; `script_steps`
    the only steps its test agent plays, `ignore_script` an agent that plays none, `auth` the bearer token every
    agent requires, `secured_token` the one /agents/secured requires without it (options.py)."""
    options = Options(fault=fault, deterministic=deterministic, keepalive=keepalive, d3=d3, script_steps=script_steps,
                      ignore_script=ignore_script, auth=auth, secured_token=secured_token)
    runners: set[asyncio.Task] = set()
    hosted = {spec.name: Agent(spec, options, runners) for spec in agents}
    routes = []
    for agent in hosted.values():
        routes.append(Route(agent.spec.prefix + a2a.CARD_PATH, _card_endpoint(agent), methods=["GET"]))
        routes.append(Route(agent.spec.prefix + JSONRPC_PATH, _rpc_endpoint(agent), methods=["POST"]))
        routes.extend(rest.routes(agent))  # HTTP+JSON (A2A §11)
    routes.append(Route(progress.PATH, progress.endpoint(options), methods=["POST"]))  # seed 003

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette):
        # gRPC (A2A §10): one server per agent on uvicorn's loop, started before the first request is served
        grpc_servers = await start_grpc(app)
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
        agent.served_card = build_card(agent.spec, base, agent.options, grpc_url=grpc_url, secured=agent.secured)
        body = rpc.dumps(agent.served_card)
        headers = caching_headers(body, agent.options)
        if not_modified(request.headers, headers, agent.options):  # RFC 9110 §13.1.2: the client's copy is current
            return Response(status_code=304, headers=headers)
        return Response(body, media_type=a2a.JSON_MEDIA_TYPE, headers=headers)
    return card


def _rpc_endpoint(agent: Agent):
    options = agent.options

    async def endpoint(request: Request) -> Response:
        headers = service.echo_headers(service.activated(request.headers, agent), options)
        rpc_id = None
        try:
            doc = rpc.decode(await request.body())
            rpc_id = rpc.request_id(doc, options)
            method, params, notification = rpc.read_request(doc, options)
            if (refusal := await service.unauthenticated(request.headers, method, params, agent)) is not None:
                return PlainTextResponse(refusal, status_code=401, headers={**headers, **auth.challenge(options)})
            if notification:
                # JSON-RPC 2.0 §4.1: no reply, not even an error. Every A2A method is asked for its answer,
                # so a notification of one is not acted on either.
                return Response(status_code=204, headers=headers)
            service.check_version(request.headers, options)
            service.check_extensions(request.headers, agent, options)
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


def _json(body: dict[str, Any], headers: dict[str, str]) -> Response:
    return Response(rpc.dumps(body), media_type=a2a.JSON_MEDIA_TYPE, headers=headers)


def _error_response(body: dict[str, Any], options: Options, headers: dict[str, str]) -> Response:
    if HTML_ERROR.on(options):
        page = f"<html><body><h1>Error</h1><p>{html.escape(body['error']['message'])}</p></body></html>"
        return HTMLResponse(page, status_code=500, headers=headers)
    return _json(body, headers)


async def _stream_response(stream: Stream, rpc_id: Any, agent: Agent, headers: dict[str, str]) -> Response:
    options = agent.options
    if (final := await drained(stream, agent.store, options)) is not None:
        return _json(rpc.response(rpc_id, options, result=final), headers)
    return sse_response(stream, rpc_id, agent.store, options, headers)


# -- fault variants ---------------------------------------------------------------------------------
CARD_404 = switch("card-404")
CARD_NOT_JSON = switch("card-not-json")
HTML_ERROR = switch("html-error")
