"""The HTTP+JSON binding of the reference agent (A2A 1.0.1 §11).

Every hosted agent serves the routes of §11.3 below `agent.spec.prefix + REST_PATH`. Each route builds the
operation's request message (camelCase JSON, the same message a JSON-RPC `params` is: the body of a POST,
the path's id and the query of a GET) and calls the same `Agent.handlers[op]` the JSON-RPC endpoint calls,
after the same checks of the service parameters (service.py: A2A-Version, activated extensions echoed).
What comes back is written in the binding's own form: the response message itself as application/a2a+json,
a stream as SSE events whose data is the bare StreamResponse (§11.7), an RpcError as google.rpc.Status JSON
with the HTTP status §5.4 maps it to and, for an A2A error, an ErrorInfo in `details` (§11.6).

The routes are matched here, on the raw path (an id is percent-encoded in it), not by Starlette's router,
so that a path no route serves (404) and a method a route does not take (405) are answered in that form
too, without an ErrorInfo: they are no A2A error.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...protocols import a2a, bindings
from ..faults import switch
from . import auth, rpc, service
from .methods import Agent, Stream
from .options import Options
from .streams import NO_ENVELOPE, drained, sse_response

REST_PATH = "/a2a/rest"  # below the agent's prefix; the card's HTTP+JSON interface URL
HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")  # taken by the mount: a wrong one is answered 405 here


@dataclass(frozen=True)
class RestRoute:
    methods: tuple[str, ...]
    path: re.Pattern[str]  # matched in full against the raw path below REST_PATH
    operation: str


_ID = r"(?P<id>[^/:]+)"  # a path segment without ':' (a ':' in an id is sent percent-encoded)
_TASK_ID = r"(?P<taskId>[^/:]+)"  # the task a push-notification config belongs to
ROUTES = (
    RestRoute(("POST",), re.compile(r"/message:send"), a2a.SEND_MESSAGE),
    RestRoute(("POST",), re.compile(r"/message:stream"), a2a.SEND_STREAMING_MESSAGE),
    RestRoute(("GET",), re.compile(r"/tasks"), a2a.LIST_TASKS),
    RestRoute(("GET",), re.compile(rf"/tasks/{_ID}"), a2a.GET_TASK),
    RestRoute(("POST",), re.compile(rf"/tasks/{_ID}:cancel"), a2a.CANCEL_TASK),
    # §11.3.2 and §5.3 say POST, the google.api.http annotation of a2a.proto GET: both are served.
    RestRoute(bindings.SUBSCRIBE_METHODS, re.compile(rf"/tasks/{_ID}:subscribe"), a2a.SUBSCRIBE_TO_TASK),
    RestRoute(("POST",), re.compile(rf"/tasks/{_TASK_ID}/pushNotificationConfigs"), a2a.CREATE_PUSH_CONFIG),
    RestRoute(("GET",), re.compile(rf"/tasks/{_TASK_ID}/pushNotificationConfigs"), a2a.LIST_PUSH_CONFIGS),
    RestRoute(("GET",), re.compile(rf"/tasks/{_TASK_ID}/pushNotificationConfigs/{_ID}"), a2a.GET_PUSH_CONFIG),
    RestRoute(("DELETE",), re.compile(rf"/tasks/{_TASK_ID}/pushNotificationConfigs/{_ID}"), a2a.DELETE_PUSH_CONFIG),
    RestRoute(("GET",), re.compile(r"/extendedAgentCard"), a2a.GET_EXTENDED_CARD),
)

# Request fields a GET carries in its query that are no strings (a2a.proto: int32 and bool; §11.5 writes
# numbers in decimal and booleans lower-case). The others (contextId, status, pageToken, the timestamp
# statusTimestampAfter) are strings already, as their JSON forms are.
QUERY_INTEGERS = ("historyLength", "pageSize")
QUERY_BOOLEANS = ("includeArtifacts",)
# A query names a field by its JSON name or its proto name alike (the reference reads both, docs/bindings.md).
_INTEGER_KEYS = {*QUERY_INTEGERS, *map(a2a.proto_name, QUERY_INTEGERS)}
_BOOLEAN_KEYS = {*QUERY_BOOLEANS, *map(a2a.proto_name, QUERY_BOOLEANS)}


class _NotAllowed(Exception):
    """The path is a route's, the method is not one it takes."""

    def __init__(self, methods: tuple[str, ...]) -> None:
        super().__init__(f"this route takes {', '.join(methods)}")
        self.methods = methods


def routes(agent: Agent) -> list[Route]:
    """The Starlette route of `agent`'s HTTP+JSON interface: every path below it, every method."""
    options = agent.options
    base = agent.spec.prefix + REST_PATH

    async def endpoint(request: Request) -> Response:
        headers = service.echo_headers(service.activated(request.headers, agent), options)
        try:
            route, path_params = match(request.method, _below(request, base), options)
            if route.operation not in agent.handlers:  # (fault: capability-methods-unimplemented)
                raise rpc.RpcError(a2a.METHOD_NOT_FOUND, f"{route.operation} is not served here")
            params = await _request_message(request, path_params)
            if (refusal := await service.unauthenticated(request.headers, route.operation, params, agent)) is not None:
                return _status_response(401, "UNAUTHENTICATED", refusal, [], options,
                                        {**headers, **auth.challenge(options)})
            service.check_version(request.headers, options)
            service.check_extensions(request.headers, agent, options)
            outcome = await agent.handlers[route.operation](params)
        except rpc.RpcError as error:
            return error_response(error, options, headers)
        except _NotAllowed as refusal:
            allow = ", ".join(refusal.methods)
            return _status_response(405, "UNIMPLEMENTED", f"{request.method} is not served here; {refusal}",
                                    [], options, {**headers, "allow": allow})
        if isinstance(outcome, Stream):
            return await _stream_response(outcome, agent, headers)
        if route.operation == a2a.CANCEL_TASK and REST_CANCEL_ACCEPTED_EMPTY.on(options):
            return Response(b"", status_code=202, headers=headers)  # the task is canceled all the same
        if route.operation == a2a.CANCEL_TASK and REST_JSONRPC_ENVELOPE.on(options):
            outcome = {"jsonrpc": a2a.JSONRPC_VERSION, "id": None, "result": outcome}
        return _json(outcome, 200, options, headers)

    return [Route(base + "/{path:path}", endpoint, methods=list(HTTP_METHODS))]


def _below(request: Request, base: str) -> str:
    """The raw path below the interface URL (still percent-encoded, so an encoded '/' or ':' stays in its id)."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    return raw.decode("latin-1")[len(base):]


def match(method: str, path: str, options: Options | None = None) -> tuple[RestRoute, dict[str, str]]:
    """The route serving `method path` and the ids its path names (id, taskId); METHOD_NOT_FOUND (404) for a
    path no route serves, _NotAllowed (405) for a method the route does not take."""
    allowed: tuple[str, ...] = ()
    for route in ROUTES:
        found = route.path.fullmatch(path)
        if found is None or (route.operation == a2a.SUBSCRIBE_TO_TASK and REST_SUBSCRIBE_MISSING.on(options)):
            continue
        if method in route.methods or (method == "HEAD" and "GET" in route.methods):
            return route, {name: unquote(value) for name, value in found.groupdict().items()}
        allowed += route.methods
    if allowed:
        raise _NotAllowed(allowed)
    raise rpc.RpcError(a2a.METHOD_NOT_FOUND, f"No HTTP+JSON route serves {method} {path or '/'}")


async def _request_message(request: Request, path_params: dict[str, str]) -> dict[str, Any]:
    """The operation's request message: a POST's body (empty: no fields), a GET's or DELETE's query; the ids
    its path names replace any the body gives."""
    if request.method in ("GET", "HEAD", "DELETE"):
        params = query_message(request.query_params)
    else:
        params = body_message(await request.body())
    params.update(path_params)
    return params


def body_message(body: bytes) -> dict[str, Any]:
    if not body.strip():
        return {}
    doc = rpc.decode(body)  # PARSE_ERROR for a body that is not JSON
    if not isinstance(doc, dict):
        raise rpc.invalid_params("The request body must be a JSON object (the operation's request message)")
    return doc


def query_message(query: QueryParams) -> dict[str, Any]:
    """A request message from query parameters (§11.5): integers and booleans read back to their JSON types,
    every other field a string; a field given twice is refused (none of these is a repeated field)."""
    out: dict[str, Any] = {}
    for key in dict.fromkeys(query.keys()):
        values = query.getlist(key)
        if len(values) > 1:
            raise rpc.invalid_params(f"{key} is given {len(values)} times; it takes one value")
        out[key] = _typed(key, values[0])
    return out


def _typed(key: str, text: str) -> Any:
    if key in _INTEGER_KEYS:
        if not re.fullmatch(r"-?\d+", text):
            raise rpc.invalid_params(f"{key} must be an integer in decimal, got {text!r}")
        return int(text)
    if key in _BOOLEAN_KEYS:
        if text not in ("true", "false"):
            raise rpc.invalid_params(f"{key} must be true or false, got {text!r}")
        return text == "true"
    return text


# -- writing answers ----------------------------------------------------------------------------------

def _json(value: Any, status: int, options: Options, headers: dict[str, str]) -> Response:
    media_type = a2a.JSON_MEDIA_TYPE if REST_JSON_CONTENT_TYPE.on(options) else bindings.A2A_JSON_MEDIA_TYPE
    return Response(rpc.dumps(value), status_code=status, media_type=media_type, headers=headers)


def error_response(error: rpc.RpcError, options: Options, headers: dict[str, str]) -> Response:
    """An RpcError as google.rpc.Status JSON (§11.6) with the HTTP status of its error (§5.4); an A2A error
    carries its ErrorInfo."""
    code = rpc.error_object(error, options)["code"]  # the code a wrong-code fault writes instead, if any
    grpc_status, http_status = bindings.forms_of(code) or bindings.forms_of(a2a.INTERNAL_ERROR)
    details = []
    if code in bindings.ERROR_FORMS and not (code == a2a.TASK_NOT_CANCELABLE and REST_NO_ERRORINFO.on(options)):
        details.append({"@type": a2a.ERROR_INFO_TYPE, "reason": bindings.reason_of(code), "domain": a2a.ERROR_DOMAIN})
    if code == a2a.TASK_NOT_CANCELABLE and REST_WRONG_ERROR_STATUS.on(options):
        http_status = 409
    written = code if REST_STATUS_JSONRPC_CODE.on(options) else http_status
    return _status_response(http_status, grpc_status, error.message, details, options, headers, written)


def _status_response(http_status: int, grpc_status: str, message: str, details: list[dict[str, Any]],
                     options: Options, headers: dict[str, str], written: int | None = None) -> Response:
    """google.rpc.Status as JSON: `error.code` is the HTTP status (`written`: what a fault writes instead);
    `status` names the gRPC code, as §11.6's example does; `details` only when there are any."""
    error: dict[str, Any] = {"code": http_status if written is None else written, "status": grpc_status,
                             "message": message}
    if details:
        error["details"] = details
    return _json({"error": error}, http_status, options, headers)


async def _stream_response(stream: Stream, agent: Agent, headers: dict[str, str]) -> Response:
    options = agent.options
    if (final := await drained(stream, agent.store, options)) is not None:
        return _json(final, 200, options, headers)
    response = sse_response(stream, NO_ENVELOPE, agent.store, options, headers)
    if REST_UNWRAPPED_EVENTS.on(options):
        response.body_iterator = _unwrapped(response.body_iterator)
    return response


# -- fault variants ---------------------------------------------------------------------------------
REST_SUBSCRIBE_MISSING = switch("rest-subscribe-missing")
REST_JSONRPC_ENVELOPE = switch("rest-jsonrpc-envelope")
REST_JSON_CONTENT_TYPE = switch("rest-json-content-type")
REST_WRONG_ERROR_STATUS = switch("rest-wrong-error-status")
REST_STATUS_JSONRPC_CODE = switch("rest-status-jsonrpc-code")
REST_NO_ERRORINFO = switch("rest-no-errorinfo")
REST_UNWRAPPED_EVENTS = switch("rest-unwrapped-events")
REST_CANCEL_ACCEPTED_EMPTY = switch("rest-cancel-accepted-empty")


async def _unwrapped(events: AsyncIterator[Any]) -> AsyncIterator[bytes]:
    """(fault: rest-unwrapped-events) each event's data is what its StreamResponse held (the Task, the status or
    artifact update, the Message) without the wrapper; keep-alive comments pass as they are."""
    async for event in events:
        raw = event if isinstance(event, bytes) else str(event).encode("utf-8")
        if not raw.startswith(b"data: "):
            yield raw
            continue
        result = json.loads(raw[len(b"data: "):])
        inner = next((result[k] for k in a2a.STREAM_RESULT_KINDS if k in result), result)
        yield b"data: " + rpc.dumps(inner) + b"\n\n"
