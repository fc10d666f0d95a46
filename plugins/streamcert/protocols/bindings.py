"""The three A2A 1.0.1 protocol bindings, in one place: their names, where each operation is reached, and
how each writes an A2A error (A2A 1.0.1 §5.3 method mapping, §5.4 error mapping, §9 JSON-RPC, §10 gRPC,
§11 HTTP+JSON).

Rules judge operations, not envelopes: `frame_answer` and `body_answer` read one frame or one body of any
binding as the operation's result or its A2A error. An error is read into one binding-neutral form,
`{"code": n, "message": s, "name": "TaskNotFoundError", "binding": …, "as": "HTTP 404", "details": […]}`,
where `code` is the A2A error's JSON-RPC number (§5.4 lists the three forms of each error side by side), so a
rule asks "was it TaskNotFoundError?" once for every binding; what the binding itself owes (the HTTP status,
the gRPC status, the ErrorInfo) is judged by the REST- and GRPC- requirements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

from . import a2a

if TYPE_CHECKING:
    from ..framelog import Exchange

JSONRPC = "jsonrpc"
HTTP_JSON = "http-json"
GRPC = "grpc"
BINDINGS = (JSONRPC, HTTP_JSON, GRPC)  # the order `--url` picks the default from (the order)
CARD_NAME = {JSONRPC: "JSONRPC", HTTP_JSON: "HTTP+JSON", GRPC: "GRPC"}  # AgentInterface.protocolBinding
BY_CARD_NAME = {v: k for k, v in CARD_NAME.items()}
TITLE = {JSONRPC: "JSON-RPC", HTTP_JSON: "HTTP+JSON", GRPC: "gRPC"}

A2A_JSON_MEDIA_TYPE = "application/a2a+json"  # §11.1: SHOULD be used for HTTP+JSON requests and responses
GRPC_PACKAGE = "lf.a2a.v1"  # a2a.proto v1.0.1: `package lf.a2a.v1;`
GRPC_SERVICE = f"{GRPC_PACKAGE}.A2AService"

# -- HTTP+JSON routes (§5.3, §11.3) ------------------------------------------------------------------
# SubscribeToTask: §11.3.2 and §5.3 say POST /tasks/{id}:subscribe, the proto's google.api.http annotation
# says GET. Both are defensible: the suite asks with POST, and on 405 Method Not Allowed asks again with GET
# (the reading taken is reported by REST-001).
SUBSCRIBE_METHODS = ("POST", "GET")


def rest_route(operation: str, params: dict[str, Any] | None) -> tuple[str, str, dict[str, str], Any]:
    """(HTTP method, path below the interface URL, query, body) of one operation with its request message
    (the JSON-RPC `params`, which is the same message, §9.4). GET parameters go to the query in camelCase
    (§11.5); the id named by the path is not repeated in the body."""
    params = dict(params or {})
    task_id = params.pop("id", None) if operation in (a2a.GET_TASK, a2a.CANCEL_TASK, a2a.SUBSCRIBE_TO_TASK) else None
    path_id = quote(str(task_id if task_id is not None else ""), safe="")
    if operation == a2a.SEND_MESSAGE:
        return "POST", "/message:send", {}, params
    if operation == a2a.SEND_STREAMING_MESSAGE:
        return "POST", "/message:stream", {}, params
    if operation == a2a.GET_TASK:
        return "GET", f"/tasks/{path_id}", query_of(params), None
    if operation == a2a.LIST_TASKS:
        return "GET", "/tasks", query_of(params), None
    if operation == a2a.CANCEL_TASK:
        return "POST", f"/tasks/{path_id}:cancel", {}, params
    if operation == a2a.SUBSCRIBE_TO_TASK:
        return "POST", f"/tasks/{path_id}:subscribe", {}, params or None
    if operation == a2a.GET_EXTENDED_CARD:
        return "GET", "/extendedAgentCard", query_of(params), None
    if operation in a2a.PUSH_CONFIG_METHODS:
        return _push_config_route(operation, params)
    raise ValueError(f"no HTTP+JSON route for {operation!r}")


def rest_operation(method: str, path: str) -> tuple[str | None, dict[str, str]]:
    """The operation an HTTP+JSON request names (the reverse of `rest_route`): (operation, the ids its path
    carries, as request fields), or (None, {}) for a route §11.3 does not name. `path` is below the interface URL."""
    parts = [unquote(p) for p in path.strip("/").split("/")] if path.strip("/") else []
    if method == "POST" and parts in (["message:send"], ["message:stream"]):
        return (a2a.SEND_MESSAGE if parts[0].endswith("send") else a2a.SEND_STREAMING_MESSAGE), {}
    if parts == ["extendedAgentCard"] and method == "GET":
        return a2a.GET_EXTENDED_CARD, {}
    if parts == ["tasks"] and method == "GET":
        return a2a.LIST_TASKS, {}
    if len(parts) == 2 and parts[0] == "tasks":
        task, _, verb = parts[1].rpartition(":") if ":" in parts[1] else (parts[1], "", "")
        if not verb and method == "GET":
            return a2a.GET_TASK, {"id": task}
        if verb == "cancel" and method == "POST":
            return a2a.CANCEL_TASK, {"id": task}
        if verb == "subscribe" and method in SUBSCRIBE_METHODS:
            return a2a.SUBSCRIBE_TO_TASK, {"id": task}
    if len(parts) in (3, 4) and parts[0] == "tasks" and parts[2] == "pushNotificationConfigs":
        ids = {"taskId": parts[1], **({"id": parts[3]} if len(parts) == 4 else {})}
        op = {("POST", 3): a2a.CREATE_PUSH_CONFIG, ("GET", 3): a2a.LIST_PUSH_CONFIGS, ("GET", 4): a2a.GET_PUSH_CONFIG,
              ("DELETE", 4): a2a.DELETE_PUSH_CONFIG}.get((method, len(parts)))
        return (op, ids) if op else (None, {})
    return None, {}


def _push_config_route(operation: str, params: dict[str, Any]) -> tuple[str, str, dict[str, str], Any]:
    """The push-notification-config routes (§5.3): below /tasks/{taskId}/pushNotificationConfigs, the config's
    id in the path for Get and Delete; Create sends the whole TaskPushNotificationConfig as its body."""
    task_id = quote(str(params.get("taskId") or ""), safe="")
    configs = f"/tasks/{task_id}/pushNotificationConfigs"
    if operation == a2a.CREATE_PUSH_CONFIG:
        return "POST", configs, {}, params
    if operation == a2a.LIST_PUSH_CONFIGS:
        return "GET", configs, query_of({k: v for k, v in params.items() if k != "taskId"}), None
    rest = {k: v for k, v in params.items() if k not in ("taskId", "id")}
    path = f"{configs}/{quote(str(params.get('id') or ''), safe='')}"
    return ("GET" if operation == a2a.GET_PUSH_CONFIG else "DELETE"), path, query_of(rest), None


def query_of(params: dict[str, Any]) -> dict[str, str]:
    """A request message as query parameters (§11.5): strings as they are, booleans lower-case, numbers in
    decimal; nested objects cannot be sent this way and are left out."""
    out = {}
    for key, value in params.items():
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        elif isinstance(value, (int, float, str)):
            out[key] = str(value)
    return out


def grpc_path(operation: str) -> str:
    """The gRPC method path of an operation (§10.3): /lf.a2a.v1.A2AService/SendMessage."""
    return f"/{GRPC_SERVICE}/{operation}"


# -- errors (§5.4) ---------------------------------------------------------------------------------
# A2A error: (gRPC status, HTTP status)
ERROR_FORMS: dict[int, tuple[str, int]] = {
    a2a.TASK_NOT_FOUND: ("NOT_FOUND", 404),
    a2a.TASK_NOT_CANCELABLE: ("FAILED_PRECONDITION", 400),
    a2a.PUSH_NOT_SUPPORTED: ("FAILED_PRECONDITION", 400),
    a2a.UNSUPPORTED_OPERATION: ("FAILED_PRECONDITION", 400),
    a2a.CONTENT_TYPE_NOT_SUPPORTED: ("INVALID_ARGUMENT", 400),
    a2a.INVALID_AGENT_RESPONSE: ("INTERNAL", 500),
    a2a.EXTENDED_CARD_NOT_CONFIGURED: ("FAILED_PRECONDITION", 400),
    a2a.EXTENSION_SUPPORT_REQUIRED: ("FAILED_PRECONDITION", 400),
    a2a.VERSION_NOT_SUPPORTED: ("FAILED_PRECONDITION", 400),
}
# The generic errors the other bindings write without an A2A ErrorInfo, read as the JSON-RPC code of the same
# meaning: an invalid argument or request (gRPC INVALID_ARGUMENT, HTTP 400), an operation not there
# (UNIMPLEMENTED, HTTP 404/405/501 with no ErrorInfo), an internal error. The same table tells the reference
# which form to write for JSON-RPC's own codes.
GENERIC_FORMS: dict[int, tuple[str, int]] = {
    a2a.INVALID_PARAMS: ("INVALID_ARGUMENT", 400),
    a2a.INVALID_REQUEST: ("INVALID_ARGUMENT", 400),
    a2a.PARSE_ERROR: ("INVALID_ARGUMENT", 400),
    a2a.METHOD_NOT_FOUND: ("UNIMPLEMENTED", 404),
    a2a.INTERNAL_ERROR: ("INTERNAL", 500),
}
GENERIC_BY_GRPC = {"INVALID_ARGUMENT": a2a.INVALID_PARAMS, "UNIMPLEMENTED": a2a.METHOD_NOT_FOUND,
                   "INTERNAL": a2a.INTERNAL_ERROR, "UNKNOWN": a2a.INTERNAL_ERROR,
                   # NOT_FOUND is given to TaskNotFoundError alone (§5.4; an unserved method is UNIMPLEMENTED): the
                   # status names the error even without its ErrorInfo, whose absence GRPC-004 judges
                   "NOT_FOUND": a2a.TASK_NOT_FOUND}
GENERIC_BY_HTTP = {400: a2a.INVALID_PARAMS, 404: a2a.METHOD_NOT_FOUND, 405: a2a.METHOD_NOT_FOUND,
                   501: a2a.METHOD_NOT_FOUND, 500: a2a.INTERNAL_ERROR}

# gRPC status codes (google.rpc.Code) by name, and back
GRPC_CODES = {
    "OK": 0, "CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4, "NOT_FOUND": 5,
    "ALREADY_EXISTS": 6, "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8, "FAILED_PRECONDITION": 9, "ABORTED": 10,
    "OUT_OF_RANGE": 11, "UNIMPLEMENTED": 12, "INTERNAL": 13, "UNAVAILABLE": 14, "DATA_LOSS": 15,
    "UNAUTHENTICATED": 16,
}
GRPC_NAMES = {v: k for k, v in GRPC_CODES.items()}


def reason_of(code: int) -> str:
    """ErrorInfo.reason of an error (§10.6, §11.6): its name in UPPER_SNAKE_CASE without "Error"
    (TaskNotFoundError → TASK_NOT_FOUND, JSONParseError → JSON_PARSE; a code without a name: UNKNOWN)."""
    name = a2a.error_name(code).removesuffix("Error").replace("JSON", "Json")
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper() if name[:1].isalpha() else "UNKNOWN"


CODE_BY_REASON = {reason_of(code): code for code in ERROR_FORMS}
# ErrorInfo reasons that name one of JSON-RPC's generic errors, not an A2A-specific one (a2a-sdk writes
# INVALID_PARAMS with INVALID_ARGUMENT for a message without its role): the A2A error forms do not apply to them.
GENERIC_REASONS = frozenset({"INVALID_PARAMS", "INVALID_REQUEST", "METHOD_NOT_FOUND", "PARSE_ERROR", "JSON_PARSE",
                             "INTERNAL", "INTERNAL_ERROR"})


def forms_of(code: int) -> tuple[str, int] | None:
    """(gRPC status name, HTTP status) an error of this JSON-RPC code is written with on the other bindings."""
    return ERROR_FORMS.get(code) or GENERIC_FORMS.get(code)


def error_info(details: Any) -> dict[str, Any] | None:
    """The google.rpc.ErrorInfo of the A2A domain among error details (ProtoJSON objects with "@type")."""
    for item in details if isinstance(details, list) else ():
        if isinstance(item, dict) and item.get("@type") == a2a.ERROR_INFO_TYPE and item.get("domain") == a2a.ERROR_DOMAIN:
            return item
    return None


def neutral_error(binding: str, *, message: Any, details: Any, http_status: int | None = None,
                  grpc_status: str | None = None) -> dict[str, Any]:
    """The binding-neutral error of an HTTP+JSON or gRPC answer: the A2A error named by its ErrorInfo reason,
    else the generic error its status means (see GENERIC_FORMS), else code None."""
    info = error_info(details)
    code = CODE_BY_REASON.get(info.get("reason")) if info else None
    if code is None:
        code = GENERIC_BY_GRPC.get(grpc_status or "") if binding == GRPC else GENERIC_BY_HTTP.get(http_status or 0)
    shown = f"gRPC {grpc_status}" if binding == GRPC else f"HTTP {http_status}"
    return {"code": code, "message": message if isinstance(message, str) else "", "name": a2a.error_name(code)
            if code is not None else None, "binding": binding, "as": shown, "details": details}


def frame_answer(binding: str, value: Any) -> tuple[Any, Any]:
    """(result, error) one frame of a stream carries: a JSON-RPC response's members; on HTTP+JSON and gRPC
    the frame is the StreamResponse itself (an HTTP+JSON frame holding only `error` is read as an error
    object of google.rpc.Status's form). (None, None) when it is neither."""
    if not isinstance(value, dict):
        return None, None
    if binding == JSONRPC:
        error = value.get("error")
        return value.get("result"), error if isinstance(error, dict) else None
    if binding == HTTP_JSON and set(value) == {"error"} and isinstance(value["error"], dict):
        status = value["error"]
        code = status.get("code") if isinstance(status.get("code"), int) else None
        return None, neutral_error(binding, message=status.get("message"), details=status.get("details"),
                                   http_status=code)
    return value, None


def status_error(binding: str, http_status: int | None, value: Any) -> dict[str, Any] | None:
    """The error an HTTP+JSON answer holds: a non-2xx status, its body read as google.rpc.Status JSON (§11.6)."""
    if binding != HTTP_JSON or http_status is None or 200 <= http_status < 300:
        return None
    status = value.get("error") if isinstance(value, dict) else None
    status = status if isinstance(status, dict) else {}
    return neutral_error(binding, message=status.get("message"), details=status.get("details"),
                         http_status=http_status)


def grpc_error(notes: dict[str, Any]) -> dict[str, Any] | None:
    """The error a gRPC call ended with (its status, `notes["grpc_status"]`), None when it ended OK or not yet."""
    status = notes.get("grpc_status")
    if not isinstance(status, dict) or status.get("code") in (None, "OK"):
        return None
    return neutral_error(GRPC, message=status.get("message"), details=status.get("details"),
                         grpc_status=status.get("code"))


def describe_error(error: dict[str, Any]) -> str:
    """An error for a message: `-32001 TaskNotFoundError 'msg'` on JSON-RPC, `TaskNotFoundError as HTTP 404
    'msg'` on the others."""
    code, text = error.get("code"), error.get("message", "")
    if "binding" in error:
        name = error.get("name") or "no A2A error (no ErrorInfo of domain a2a-protocol.org)"
        return f"{name} as {error.get('as')} {text!r}".rstrip()
    return f"{code} {a2a.error_name(code) if isinstance(code, int) else ''} {text!r}".replace("  ", " ")


def declared(card: Any) -> list[tuple[str, str]]:
    """(binding, url) of every interface the card declares for protocol 1.x in a binding the suite speaks,
    in the card's order."""
    out = []
    for iface in card.get("supportedInterfaces") or [] if isinstance(card, dict) else []:
        if not isinstance(iface, dict) or not isinstance(iface.get("url"), str):
            continue
        binding = BY_CARD_NAME.get(iface.get("protocolBinding"))
        version = str(iface.get("protocolVersion") or "")
        if binding and version.split(".")[0] == "1":
            out.append((binding, iface["url"]))
    return out


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


def jsonrpc_paths(card: Any) -> set[str]:
    """The paths of every JSONRPC interface the card declares: where its JSON-RPC requests go."""
    interfaces = card.get("supportedInterfaces") if isinstance(card, dict) else None
    return {urlsplit(schemed(i["url"])).path or "/" for i in interfaces or [] if isinstance(i, dict)
            and i.get("protocolBinding") == "JSONRPC" and isinstance(i.get("url"), str)} \
        if isinstance(interfaces, list) else set()


def schemed(url: str) -> str:
    """An interface URL with its scheme, for its origin: a bare host:port (the gRPC form an SDK writes) is plaintext
    gRPC, read as http://host:port."""
    return url if "://" in url else "http://" + url


@dataclass
class Reading:
    """One answer of any binding, read (not judged): the operation's result or its error.

    `payload` is what came as parsed JSON (a unary body or the first frame of a stream), `complaint` why it is
    not JSON, `frames` how many data frames a stream held (0 for a body), `shape` why a JSON-RPC answer is no
    JSON-RPC response at all (judged by the WIRE- requirements)."""

    payload: Any = None
    complaint: str | None = None
    result: Any = None
    error: dict[str, Any] | None = None
    frames: int = 0
    shape: str | None = None


def read_answer(ex: Exchange) -> Reading:
    """The answer of a unary call, or of a stream that holds one answer (its first frame): a JSON-RPC response;
    an HTTP+JSON body (an error by its non-2xx status, §11.6) or frame; a gRPC message, or the status the call
    ended with (§10.6)."""
    out = Reading()
    framed = ex.is_stream or (ex.binding == GRPC and bool(ex.events))
    if framed:
        events = ex.data_events()
        out.frames = len(events)
        if not events:
            return out
        out.payload, out.complaint = events[0].json()
    elif ex.binding == GRPC:
        out.error = grpc_error(ex.notes)
        return out
    else:
        out.payload, out.complaint = ex.json()
    if out.complaint:
        return out
    if ex.binding == HTTP_JSON and not framed:
        out.error = status_error(ex.binding, ex.status, out.payload)
        out.result = out.payload if out.error is None else None
    elif ex.binding != JSONRPC:
        out.result, out.error = frame_answer(ex.binding, out.payload)
    elif not isinstance(out.payload, dict) or not ("result" in out.payload or "error" in out.payload):
        out.shape = "not a JSON-RPC response"
    elif "error" in out.payload and not isinstance(out.payload["error"], dict):
        out.shape = "error member is not an object"
    else:
        out.result, out.error = frame_answer(ex.binding, out.payload)
    return out


# A request refused for want of credentials (A2A 1.0.1 §7): HTTP 401 (or 403) on the HTTP bindings, a status of
# these on gRPC. 401 is the one that asks for credentials, and carries WWW-Authenticate (RFC 9110 §11.6.1).
HTTP_AUTH_REFUSALS = (401, 403)
GRPC_AUTH_REFUSALS = ("UNAUTHENTICATED", "PERMISSION_DENIED")
CHALLENGE_HEADER = "www-authenticate"


def auth_refusal(ex: Any) -> str | None:
    """How the exchange was refused for want of credentials ("HTTP 401", "gRPC UNAUTHENTICATED"), or None."""
    if ex.binding == GRPC:
        status = (ex.notes.get("grpc_status") or {}).get("code")
        return f"gRPC {status}" if status in GRPC_AUTH_REFUSALS else None
    return f"HTTP {ex.status}" if ex.status in HTTP_AUTH_REFUSALS else None
