"""Reading and checking method params; every failure is InvalidParams (-32602) with a plain reason."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ...protocols import a2a
from ..faults import switch
from .clock import parse_timestamp
from .options import Options
from .rpc import invalid_params


def _optional(params: dict[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    value = params.get(key)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool) and kind is not bool):
        raise invalid_params(f"{key} must be {what}")
    return value


def optional_str(params: dict[str, Any], key: str) -> str | None:
    return _optional(params, key, str, "a string")


def optional_bool(params: dict[str, Any], key: str) -> bool:
    return bool(_optional(params, key, bool, "true or false"))


def optional_int(params: dict[str, Any], key: str, low: int, high: int | None = None) -> int | None:
    value = _optional(params, key, int, "an integer")
    if value is not None and (value < low or (high is not None and value > high)):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise invalid_params(f"{key} must be {bounds}, got {value}")
    return value


def history_length(params: dict[str, Any]) -> int | None:
    return optional_int(params, "historyLength", 0)


def optional_time(params: dict[str, Any], key: str) -> datetime | None:
    text = optional_str(params, key)
    if text is None:
        return None
    try:
        return parse_timestamp(text)
    except ValueError:
        raise invalid_params(f"{key} must be an ISO 8601 timestamp, got {text!r}") from None


def task_id(params: dict[str, Any]) -> str:
    value = params.get("id")
    if not isinstance(value, str):
        raise invalid_params("id (the task id) must be a string")
    return value


def configuration(params: dict[str, Any]) -> dict[str, Any]:
    config = params.get("configuration") or {}
    if not isinstance(config, dict):
        raise invalid_params("configuration must be an object")
    return config


def message(params: dict[str, Any], options: Options | None = None) -> dict[str, Any]:
    """The message of SendMessage / SendStreamingMessage, its required members (messageId, role, parts)
    checked: a message without them is refused before anything runs (A2A §3.3.2, §5.7). Members the Message
    and its Parts do not have are ignored (§5.7), never kept: what is stored is what every binding can write
    back (a gRPC Task has no field for them, §5.1)."""
    msg = params.get("message")
    if not isinstance(msg, dict):
        raise invalid_params("message must be an object")
    if not UNKNOWN_FIELDS_STORED.on(options):
        msg = _known(msg, a2a.MESSAGE_FIELDS)
        if isinstance(msg.get("parts"), list):
            msg["parts"] = [_known(part, a2a.PART_FIELDS) if isinstance(part, dict) else part for part in msg["parts"]]
    if not isinstance(msg.get("messageId"), str) or not msg["messageId"]:
        raise invalid_params("message.messageId must be a non-empty string")
    if MESSAGE_ROLE_DEFAULTED.on(options) and msg.get("role") not in a2a.ROLES:
        msg["role"] = a2a.ROLE_USER  # (fault) a missing or unknown role read as the user's
    if msg.get("role") not in a2a.ROLES:
        raise invalid_params(f"message.role must be one of {', '.join(sorted(a2a.ROLES))}")
    parts = msg.get("parts")
    if not isinstance(parts, list) or not parts:
        raise invalid_params("message.parts must be a non-empty list")
    for index, part in enumerate(parts):
        _check_part(part, index)
    for key in ("taskId", "contextId"):
        optional_str(msg, key)
    if msg.get("metadata") is not None and not isinstance(msg["metadata"], dict):
        raise invalid_params("message.metadata must be an object")
    return msg


def json_names(operation: str, params: Any, options: Options | None = None) -> Any:
    """The request message with each member its message declares named by its JSON name. A ProtoJSON parser
    takes a field by its proto name too (`context_id` for `contextId`), and so does the reference, the same on
    every binding (docs/bindings.md): §5.5 says how JSON is written, not that another spelling is ignored. The
    keys of a Struct or Value (`metadata`, a Part's `data`) are the sender's own and stay as they came; a field
    given by both its names is InvalidParams."""
    kind = a2a.REQUEST_TYPES.get(operation)
    if kind is None or not isinstance(params, dict) or PROTO_NAMES_IGNORED.on(options):
        return params
    return _renamed(params, kind, "")


def _renamed(value: dict[str, Any], kind: str, path: str) -> dict[str, Any]:
    fields = a2a.REQUEST_MESSAGES[kind]
    by_proto_name = {a2a.proto_name(name): name for name in fields}
    out: dict[str, Any] = {}
    for key, member in value.items():
        name = by_proto_name.get(key, key)
        if name != key and name in value:
            raise invalid_params(f"{path}{key} and {path}{name} name the same field; give it once")
        nested = fields.get(name)
        if nested is not None and isinstance(member, dict):
            member = _renamed(member, nested, f"{path}{name}.")
        elif nested is not None and isinstance(member, list):
            member = [_renamed(item, nested, f"{path}{name}[{index}].") if isinstance(item, dict) else item
                      for index, item in enumerate(member)]
        out[name] = member
    return out


def _known(value: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {key: member for key, member in value.items() if key in fields}


def _check_part(part: Any, index: int) -> None:
    if not isinstance(part, dict):
        raise invalid_params(f"message.parts[{index}] must be an object")
    content = [key for key in a2a.PART_CONTENT_FIELDS if key in part]
    if len(content) != 1:
        raise invalid_params(f"message.parts[{index}] must hold exactly one of text, raw, url, data")
    if content[0] != "data" and not isinstance(part[content[0]], str):
        raise invalid_params(f"message.parts[{index}].{content[0]} must be a string")


# -- fault variants ---------------------------------------------------------------------------------
MESSAGE_ROLE_DEFAULTED = switch("message-role-defaulted")
UNKNOWN_FIELDS_STORED = switch("unknown-fields-stored")
PROTO_NAMES_IGNORED = switch("proto-names-ignored")  # a field named by its proto name is left unread
