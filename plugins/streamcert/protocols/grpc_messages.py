"""The A2A gRPC messages (A2A 1.0.1 §10): the project's own declarations (a2a_grpc.proto, google_rpc.proto),
loaded from the committed descriptor set (a2a_grpc.binpb, built by grpc_build.py) into a descriptor pool of
their own, never protobuf's default pool: a peer in the same process (the a2a-sdk) installs its own
lf.a2a.v1 and google.rpc messages there, and two declarations of one name in one pool clash.

Messages are read and written as ProtoJSON (§5.5: camelCase names, enums by name), the JSON the other
bindings carry, with two choices of the suite's (both readings of what proto3 leaves open):
- a field the specification marks REQUIRED that proto3 cannot show as absent (a string, a number, an enum, a
  list) is written even at its default value (`Task.id` "", `ListTasksResponse.nextPageToken` "",
  `TaskStatus.state` TASK_STATE_UNSPECIFIED): on the wire it is there, its default is its value;
- a Timestamp is written with at least milliseconds, and a Struct number that is whole as an integer: a
  binary message has no text form, so the suite's rendering must not pass for the server's.

This module needs protobuf (the `grpc` extra); `grpc_available()` says whether the gRPC binding can run.
"""

from __future__ import annotations

import base64
import functools
import json
import os
from importlib import resources
from types import ModuleType
from typing import Any

from . import a2a
from .bindings import GRPC_CODES, GRPC_NAMES, GRPC_PACKAGE

try:  # the `grpc` extra: without it streamcert runs JSON-RPC and HTTP+JSON only
    from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
    from google.protobuf.message import DecodeError, Message
except ImportError as exc:  # pragma: no cover - exercised by an install without the extra
    _PROTOBUF_MISSING: ImportError | None = exc
    Message = Any  # type: ignore[misc,assignment]
else:
    _PROTOBUF_MISSING = None

DESCRIPTOR_SET = "a2a_grpc.binpb"  # beside this module (protocols/grpc_build.py writes it)
NEEDS_EXTRA = "the gRPC binding needs the grpc extra: pip install 'streamcert[grpc]'"
MIN_PROTOBUF = (5, 26)  # json_format and message_factory.GetMessageClass as used here

STATUS = "google.rpc.Status"
ERROR_INFO = "google.rpc.ErrorInfo"
STATUS_DETAILS_KEY = "grpc-status-details-bin"  # the trailer holding a google.rpc.Status (§10.6)

# What each operation sends (a2a.REQUEST_TYPES) and answers (§10.4); the streaming ones answer a stream of
# StreamResponse.
EMPTY = "google.protobuf.Empty"  # the response of DeleteTaskPushNotificationConfig: no fields at all
REQUEST_TYPES = a2a.REQUEST_TYPES
RESPONSE_TYPES = {
    a2a.SEND_MESSAGE: "SendMessageResponse",
    a2a.SEND_STREAMING_MESSAGE: "StreamResponse",
    a2a.GET_TASK: "Task",
    a2a.LIST_TASKS: "ListTasksResponse",
    a2a.CANCEL_TASK: "Task",
    a2a.SUBSCRIBE_TO_TASK: "StreamResponse",
    a2a.CREATE_PUSH_CONFIG: "TaskPushNotificationConfig",
    a2a.GET_PUSH_CONFIG: "TaskPushNotificationConfig",
    a2a.LIST_PUSH_CONFIGS: "ListTaskPushNotificationConfigsResponse",
    a2a.DELETE_PUSH_CONFIG: EMPTY,
    a2a.GET_EXTENDED_CARD: "AgentCard",
}
OPERATIONS = tuple(REQUEST_TYPES)

# The fields a2a.proto v1.0.1 marks REQUIRED (google.api.field_behavior) that have no presence in proto3:
# written even at their default (see the module's note). Proto field names.
REQUIRED = {
    "Task": ("id",),
    "TaskStatus": ("state",),
    "Message": ("message_id", "role", "parts"),
    "Artifact": ("artifact_id", "parts"),
    "TaskStatusUpdateEvent": ("task_id", "context_id"),
    "TaskArtifactUpdateEvent": ("task_id", "context_id"),
    "ListTasksResponse": ("tasks", "next_page_token", "page_size", "total_size"),
    "GetTaskRequest": ("id",),
    "CancelTaskRequest": ("id",),
    "SubscribeToTaskRequest": ("id",),
    "TaskPushNotificationConfig": ("url",),
    "AuthenticationInfo": ("scheme",),
    "AgentCard": ("name", "description", "supported_interfaces", "version", "capabilities", "default_input_modes",
                  "default_output_modes", "skills"),
    "AgentInterface": ("url", "protocol_binding", "protocol_version"),
    "AgentSkill": ("id", "name", "description", "tags"),
}
_STRUCTS = ("google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue")
_TIMESTAMP = "google.protobuf.Timestamp"
_WHOLE_LIMIT = 2 ** 53  # a double holds every integer up to this exactly


class ProtoError(ValueError):
    """A value that cannot be written as, or bytes that do not read as, the message named."""


# gRPC's core logs at INFO to stderr (a server that goes away…); the suite reports what it sees itself. Its fork
# handlers are left out: the suite starts programs (a client, an ACP agent) while gRPC threads run, and a child
# running those handlers before its exec crashed now and then (SIGSEGV). A user's own settings stand.
GRPC_SETTINGS = {"GRPC_VERBOSITY": "ERROR", "GRPC_ENABLE_FORK_SUPPORT": "false"}


def import_grpc() -> ModuleType:
    """grpc (with grpc.aio), imported with GRPC_SETTINGS in the environment where the user set neither. gRPC's core
    reads them when it loads, so every import of grpc in the suite comes through here (wire/grpc.py, the
    reference's gRPC servers, `grpc_available`); importing streamcert alone sets nothing. Raises ImportError
    without the grpc extra."""
    for name, value in GRPC_SETTINGS.items():
        os.environ.setdefault(name, value)
    import grpc
    import grpc.aio  # noqa: F401

    return grpc


def grpc_available() -> str | None:
    """None when the gRPC binding can run here; else the sentence saying why not."""
    if _PROTOBUF_MISSING is not None:
        return f"{NEEDS_EXTRA} (protobuf is not installed)"
    try:
        import_grpc()
    except ImportError:
        return f"{NEEDS_EXTRA} (grpcio is not installed)"
    from google.protobuf import __version__ as version

    if _version(version) < MIN_PROTOBUF:
        return f"{NEEDS_EXTRA} (protobuf {version} is installed; it needs {'.'.join(map(str, MIN_PROTOBUF))} or later)"
    try:
        pool()
    except Exception as exc:  # a broken install: say so rather than fail later
        return f"the gRPC message descriptors do not load: {type(exc).__name__}: {exc}"
    return None


def _version(text: str) -> tuple[int, ...]:
    out = []
    for piece in text.split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit())
        out.append(int(digits or 0))
    return tuple(out)


@functools.cache
def pool() -> Any:
    """The private descriptor pool holding the project's messages and the well-known types they use."""
    if _PROTOBUF_MISSING is not None:
        raise RuntimeError(NEEDS_EXTRA) from _PROTOBUF_MISSING
    data = (resources.files(__package__) / DESCRIPTOR_SET).read_bytes()
    files = descriptor_pb2.FileDescriptorSet.FromString(data)
    out = descriptor_pool.DescriptorPool()
    added: set[str] = set()
    pending = list(files.file)
    while pending:  # each file after the files it imports
        ready = [f for f in pending if set(f.dependency) <= added]
        if not ready:
            raise RuntimeError(f"{DESCRIPTOR_SET}: imports missing for {[f.name for f in pending]}")
        for f in ready:
            out.AddSerializedFile(f.SerializeToString())
            added.add(f.name)
            pending.remove(f)
    return out


def full_name(name: str) -> str:
    """A message's full name: "Task" is lf.a2a.v1.Task; a name with a dot is taken as it is."""
    return name if "." in name else f"{GRPC_PACKAGE}.{name}"


@functools.cache
def message_class(name: str) -> type:
    """The message class of `name` ("Task", "StreamResponse", "google.rpc.Status"…) in the private pool."""
    return message_factory.GetMessageClass(pool().FindMessageTypeByName(full_name(name)))


def request_type(operation: str) -> str:
    return REQUEST_TYPES[operation]


def response_type(operation: str) -> str:
    return RESPONSE_TYPES[operation]


def streaming(operation: str) -> bool:
    return RESPONSE_TYPES.get(operation) == "StreamResponse"


# -- ProtoJSON -------------------------------------------------------------------------------------

def to_proto(name: str, value: Any) -> Message:
    """The message `name` holding the ProtoJSON `value`; ProtoError (its sentence) when it cannot hold it:
    an unknown member, an enum name the enum does not have, a value of another type."""
    if not isinstance(value, dict):
        raise ProtoError(f"{full_name(name)} is written from a JSON object, not {type(value).__name__}")
    message = message_class(name)()
    try:
        json_format.ParseDict(value, message, descriptor_pool=pool())
    except (json_format.ParseError, TypeError, ValueError) as exc:
        raise ProtoError(f"not a {full_name(name)}: {_one_line(exc)}") from None
    return message


def to_json(message: Message) -> dict[str, Any]:
    """The message as ProtoJSON (camelCase, enums by name), with the suite's two choices (module note)."""
    out = json_format.MessageToDict(message, descriptor_pool=pool())
    _complete(message, out)
    return _plain(out)


def dumps(value: Any) -> str:
    """Compact JSON text, as an event's data holds it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def parse(name: str, data: bytes) -> Message:
    """The bytes read as the message `name`; ProtoError when they are not one."""
    message = message_class(name)()
    try:
        message.ParseFromString(data)
    except (DecodeError, ValueError, RuntimeError) as exc:
        raise ProtoError(f"{len(data)} bytes that do not decode as {full_name(name)}: {_one_line(exc)}") from None
    return message


def decode(name: str, data: bytes) -> dict[str, Any]:
    """The bytes of a message `name` as ProtoJSON; ProtoError when they do not decode."""
    message = parse(name, data)
    try:
        return to_json(message)
    except (json_format.SerializeToJsonError, TypeError, ValueError) as exc:
        raise ProtoError(f"{full_name(name)} that has no ProtoJSON form: {_one_line(exc)}") from None


def encode(name: str, value: Any) -> bytes:
    """The ProtoJSON `value` as the bytes of the message `name` (ProtoError when it cannot be one)."""
    return to_proto(name, value).SerializeToString()


def _complete(message: Message, out: dict[str, Any]) -> None:
    """Walk the message beside its ProtoJSON: write the REQUIRED defaults, the timestamps with milliseconds
    and whole Struct numbers as integers."""
    descriptor = message.DESCRIPTOR
    required = REQUIRED.get(descriptor.name, ()) if descriptor.full_name.startswith(GRPC_PACKAGE + ".") else ()
    for field in descriptor.fields:
        key = field.json_name
        repeated = _is_repeated(field)
        if field.message_type is not None and key in out:
            kind = field.message_type.full_name
            value = getattr(message, field.name)
            if kind == _TIMESTAMP and not repeated:
                out[key] = _stamp(value)
            elif kind in _STRUCTS:
                out[key] = _whole(out[key])
            elif field.message_type.GetOptions().map_entry:
                continue  # no map of messages in these declarations
            elif repeated:
                for item, item_out in zip(value, out[key]):
                    _complete(item, item_out)
            elif isinstance(out[key], dict):
                _complete(value, out[key])
        elif field.name in required and key not in out and not field.has_presence:
            out[key] = _default(field, repeated)


def _is_repeated(field: Any) -> bool:
    # `is_repeated` is the newer name; `label` the older one, removed in later runtimes
    flag = getattr(field, "is_repeated", None)
    if flag is not None:
        return bool(flag)
    return field.label == field.LABEL_REPEATED


def _default(field: Any, repeated: bool) -> Any:
    if repeated:
        return []
    if field.enum_type is not None:
        return field.enum_type.values_by_number[0].name
    if field.type == field.TYPE_BOOL:
        return False
    if field.type in (field.TYPE_STRING, field.TYPE_BYTES):
        return ""
    if field.type in (field.TYPE_INT64, field.TYPE_UINT64, field.TYPE_SINT64, field.TYPE_FIXED64,
                      field.TYPE_SFIXED64):
        return "0"  # ProtoJSON writes 64-bit integers as strings
    return 0


def _stamp(timestamp: Any) -> str:
    """RFC 3339 in UTC with at least milliseconds (ProtoJSON leaves a whole second without a fraction)."""
    text = timestamp.ToJsonString()
    if timestamp.nanos == 0 and text.endswith("Z") and "." not in text:
        text = text[:-1] + ".000Z"
    return text


def _whole(value: Any) -> Any:
    """A Struct value with every whole number (a double on the wire) as an integer, as JSON would carry it."""
    if isinstance(value, float) and value.is_integer() and abs(value) < _WHOLE_LIMIT:
        return int(value)
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value


def _plain(value: Any) -> Any:
    """Plain dicts throughout (json_format hands back an OrderedDict for an Any)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


# -- error status (§10.6) --------------------------------------------------------------------------

def status_details(data: bytes) -> tuple[int, str, list[dict[str, Any]]]:
    """The google.rpc.Status of a grpc-status-details-bin trailer: (code, message, its details as ProtoJSON,
    each with "@type"). A detail of a type the suite does not declare is kept as {"@type", "value": base64}.
    ProtoError when the bytes are no Status."""
    status = parse(STATUS, data)
    details = []
    for item in status.details:
        try:
            details.append(_plain(json_format.MessageToDict(item, descriptor_pool=pool())))
        except (TypeError, KeyError, json_format.SerializeToJsonError, json_format.ParseError):
            details.append({"@type": item.type_url, "value": base64.b64encode(item.value).decode("ascii")})
    return status.code, status.message, details


def error_info(reason: str, domain: str = a2a.ERROR_DOMAIN, metadata: dict[str, str] | None = None) -> Message:
    """A google.rpc.ErrorInfo."""
    return message_class(ERROR_INFO)(reason=reason, domain=domain, metadata=metadata or {})


def status_bytes(code: str | int, message: str, details: tuple[Message, ...] | list[Message] = ()) -> bytes:
    """A google.rpc.Status as the grpc-status-details-bin trailer carries it; `code` a name or a number."""
    number = GRPC_CODES[code] if isinstance(code, str) else int(code)
    status = message_class(STATUS)(code=number, message=message)
    for detail in details:
        status.details.add().Pack(detail)
    return status.SerializeToString()


def code_name(code: int) -> str:
    """The name of a gRPC status code ("NOT_FOUND"); an unknown number as "CODE_<n>"."""
    return GRPC_NAMES.get(code, f"CODE_{code}")
