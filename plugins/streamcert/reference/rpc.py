"""JSON-RPC 2.0 envelopes and A2A errors (A2A §9, ../shared/specs/a2a-1.0.md · Errors)."""

from __future__ import annotations

import json
import re
from typing import Any

from ..protocols import a2a
from .faults import Switch, switch, variant
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


def reason(code: int) -> str:
    """ErrorInfo.reason: the error's name in UPPER_SNAKE without "Error" (TaskNotFoundError → TASK_NOT_FOUND)."""
    name = a2a.error_name(code).removesuffix("Error").replace("JSON", "Json")
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper() if name[:1].isalpha() else "UNKNOWN"


def error_object(error: RpcError, options: Options) -> dict[str, Any]:
    out = {"code": error.code, "message": error.message,
           "data": [{"@type": a2a.ERROR_INFO_TYPE, "reason": reason(error.code), "domain": a2a.ERROR_DOMAIN}]}
    return _break_error(out, error, options)


def response(rpc_id: Any, options: Options, result: Any = None,
             error: RpcError | None = None) -> dict[str, Any]:
    if WRONG_RPC_ID.on(options):
        rpc_id = _other_id(rpc_id)
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": rpc_id}
    if error is not None:
        out["error"] = error_object(error, options)
        return out
    out["result"] = result
    return out


# -- fault variants: what each changes in an envelope or an error object ---------------------------
WRONG_RPC_ID = switch("wrong-rpc-id")
ERROR_DATA_MISSING = switch("error-data-missing")
# The wrong-code faults: the code each writes instead, by code, or by an error's `case` when one code
# covers several situations.
WRONG_CODES: dict[Switch, dict[int | str, int]] = {
    switch("wrong-code-not-found"): {a2a.TASK_NOT_FOUND: a2a.INTERNAL_ERROR},
    switch("wrong-code-not-cancelable"): {a2a.TASK_NOT_CANCELABLE: a2a.UNSUPPORTED_OPERATION},
    switch("wrong-code-terminal-send"): {"send-terminal": a2a.INVALID_PARAMS},
    switch("wrong-code-protocol"): {a2a.METHOD_NOT_FOUND: a2a.INVALID_REQUEST, a2a.PARSE_ERROR: a2a.INVALID_REQUEST},
    switch("wrong-code-params"): {a2a.INVALID_PARAMS: a2a.INTERNAL_ERROR},
}


def _other_id(rpc_id: Any) -> Any:
    if isinstance(rpc_id, int) and not isinstance(rpc_id, bool):
        return rpc_id + 1
    return f"{rpc_id}-other" if isinstance(rpc_id, str) else 0


def _break_error(out: dict[str, Any], error: RpcError, options: Options) -> dict[str, Any]:
    wrong = variant(options, None, WRONG_CODES)
    if wrong is not None:
        out["code"] = wrong.get(error.case or "", wrong.get(error.code, error.code))
        out["data"][0]["reason"] = reason(out["code"])
    if ERROR_DATA_MISSING.on(options):
        del out["data"]
    return out


def decode(body: bytes) -> Any:
    try:
        return json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise RpcError(a2a.PARSE_ERROR, "The request body is not valid JSON") from None


def request_id(doc: Any) -> Any:
    """The id to answer with: the request's when it has a usable one, else null."""
    if isinstance(doc, dict):
        rpc_id = doc.get("id")
        if isinstance(rpc_id, (str, int)) and not isinstance(rpc_id, bool):
            return rpc_id
    return None


def read_request(doc: Any) -> tuple[str, dict[str, Any]]:
    """(method, params) of a well-formed request object, else InvalidRequest / InvalidParams."""
    if not isinstance(doc, dict):
        raise RpcError(a2a.INVALID_REQUEST, "The request must be one JSON-RPC object (batches are not supported)")
    if doc.get("jsonrpc") != "2.0":
        raise RpcError(a2a.INVALID_REQUEST, 'The request must carry "jsonrpc": "2.0"')
    if request_id(doc) is None:
        # Notifications get no answer in JSON-RPC; A2A methods all answer, so an id is required.
        raise RpcError(a2a.INVALID_REQUEST, "The request needs an id (a string or an integer)")
    if not isinstance(doc.get("method"), str):
        raise RpcError(a2a.INVALID_REQUEST, "The request's method must be a string")
    params = doc.get("params", {})
    if not isinstance(params, dict):
        raise invalid_params("params must be an object")
    return doc["method"], params
