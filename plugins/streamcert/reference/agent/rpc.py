"""JSON-RPC 2.0 envelopes and A2A errors (A2A 1.0.1 §9 and §5.4, JSON-RPC 2.0 §5.1)."""

from __future__ import annotations

import json
from typing import Any

from ...protocols import a2a, bindings
from ..faults import Switch, switch, variant
from .options import Options


class RpcError(Exception):
    """An A2A error answer. `case` names the situation when one code covers several (see WRONG_CODES)."""

    def __init__(self, code: int, message: str, case: str | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.case = code, message, case


def invalid_params(message: str) -> RpcError:
    return RpcError(a2a.INVALID_PARAMS, message)


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON; key order is insertion order, so equal inputs give equal bytes."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def error_object(error: RpcError, options: Options) -> dict[str, Any]:
    out = {"code": error.code, "message": error.message,
           "data": [{"@type": a2a.ERROR_INFO_TYPE, "reason": bindings.reason_of(error.code), "domain": a2a.ERROR_DOMAIN}]}
    return _break_error(out, error, options)


def response(rpc_id: Any, options: Options, result: Any = None,
             error: RpcError | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": _break_id(rpc_id, error, options)}
    if error is not None:
        out["error"] = error_object(error, options)
        return out
    out["result"] = result
    return out


# -- fault variants: what each changes in an envelope or an error object ---------------------------
WRONG_RPC_ID = switch("wrong-rpc-id")
FALSY_ID_NULL = switch("falsy-id-null")
ERROR_ID_NULL = switch("error-id-null")
INVALID_ID_ECHOED = switch("invalid-id-echoed")  # request_id: an id of another type (true, an object) echoed
JSONRPC_VERSION_IGNORED = switch("jsonrpc-version-ignored")
NOTIFICATION_ANSWERED = switch("notification-answered")
ERROR_DATA_MISSING = switch("error-data-missing")
# The wrong-code faults: the code each writes instead, by code, or by an error's `case` when one code
# covers several situations.
WRONG_CODES: dict[Switch, dict[int | str, int]] = {
    switch("wrong-code-not-found"): {a2a.TASK_NOT_FOUND: a2a.INTERNAL_ERROR},
    switch("wrong-code-not-cancelable"): {a2a.TASK_NOT_CANCELABLE: a2a.UNSUPPORTED_OPERATION},
    switch("wrong-code-terminal-send"): {"send-terminal": a2a.INVALID_PARAMS},
    switch("wrong-code-protocol"): {a2a.METHOD_NOT_FOUND: a2a.INVALID_REQUEST, a2a.PARSE_ERROR: a2a.INVALID_REQUEST},
    switch("wrong-code-params"): {a2a.INVALID_PARAMS: a2a.INTERNAL_ERROR},
    switch("wrong-code-no-method"): {"no-method": a2a.METHOD_NOT_FOUND},
    switch("wrong-code-cancel-unknown"): {"cancel-unknown": a2a.TASK_NOT_CANCELABLE},
    switch("wrong-code-subscribe-unknown"): {"subscribe-unknown": a2a.UNSUPPORTED_OPERATION},
}


def _break_id(rpc_id: Any, error: RpcError | None, options: Options) -> Any:
    """The id a response carries under each id fault (the request's otherwise)."""
    if WRONG_RPC_ID.on(options):
        return _other_id(rpc_id)
    if FALSY_ID_NULL.on(options) and not isinstance(rpc_id, bool) and rpc_id in (0, ""):
        return None  # `if not rpc_id` read 0 and "" as no id
    if ERROR_ID_NULL.on(options) and error is not None:
        return None
    return rpc_id


def _other_id(rpc_id: Any) -> Any:
    if isinstance(rpc_id, int) and not isinstance(rpc_id, bool):
        return rpc_id + 1
    return f"{rpc_id}-other" if isinstance(rpc_id, str) else 0


def _break_error(out: dict[str, Any], error: RpcError, options: Options) -> dict[str, Any]:
    wrong = variant(options, None, WRONG_CODES)
    if wrong is not None:
        out["code"] = wrong.get(error.case or "", wrong.get(error.code, error.code))
        out["data"][0]["reason"] = bindings.reason_of(out["code"])
    if ERROR_DATA_MISSING.on(options):
        del out["data"]
    return out


def decode(body: bytes) -> Any:
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise RpcError(a2a.PARSE_ERROR, "The request body is not valid JSON") from None


def _is_id(value: Any) -> bool:
    """An id JSON-RPC 2.0 §4 allows: a string, a number or null (true is no number)."""
    return value is None or isinstance(value, (str, int, float)) and not isinstance(value, bool)


def request_id(doc: Any, options: Options) -> Any:
    """The id to answer with: the request's when it is one JSON-RPC allows, else null (JSON-RPC 2.0 §5:
    null when the id cannot be read)."""
    rpc_id = doc.get("id") if isinstance(doc, dict) else None
    return rpc_id if _is_id(rpc_id) or INVALID_ID_ECHOED.on(options) else None


def read_request(doc: Any, options: Options) -> tuple[str, dict[str, Any], bool]:
    """(method, params, whether it is a notification) of a valid Request object, else InvalidRequest /
    InvalidParams. A notification is a valid request without "id" (JSON-RPC 2.0 §4.1): it gets no answer."""
    if not isinstance(doc, dict):
        raise RpcError(a2a.INVALID_REQUEST, "The request must be one JSON-RPC object (batches are not supported)")
    if doc.get("jsonrpc") != "2.0" and not JSONRPC_VERSION_IGNORED.on(options):
        raise RpcError(a2a.INVALID_REQUEST, 'The request must carry "jsonrpc": "2.0"')
    if not isinstance(doc.get("method"), str):
        raise RpcError(a2a.INVALID_REQUEST, "The request's method must be a string", case="no-method")
    if not _is_id(doc.get("id")):
        raise RpcError(a2a.INVALID_REQUEST, "The request's id must be a string, a number or null")
    params = doc.get("params", {})
    if not isinstance(params, dict):
        raise invalid_params("params must be an object")
    return doc["method"], params, "id" not in doc and not NOTIFICATION_ANSWERED.on(options)
