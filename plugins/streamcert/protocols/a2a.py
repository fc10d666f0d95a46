"""A2A 1.0.1 protocol facts, in one place (the A2A 1.0.1 specification; A2A 101 part 1).

The extension URIs are in their own modules (progress_v1, interactions_v1); the script key in script.
"""

from __future__ import annotations

import re
from typing import Any

PROTOCOL_VERSION = "1.0"
VERSION_HEADER = "A2A-Version"
UNSET_VERSION = "0.3"  # what a missing or empty A2A-Version means (§3.6.2)
EXTENSIONS_HEADER = "A2A-Extensions"
CARD_PATH = "/.well-known/agent-card.json"
# A conditional request of the card (§8.6.1, RFC 9110 §13.1): the validator's response header → the request header
# that sends it back. A strong or weak ETag is preferred to a date (RFC 9110 §13.1.3).
CARD_VALIDATORS = (("etag", "If-None-Match"), ("last-modified", "If-Modified-Since"))


def card_validator(response_headers: dict[str, str]) -> tuple[str, str] | None:
    """The request header (name, value) revalidating a card served with `response_headers` (lower-case names)."""
    for name, condition in CARD_VALIDATORS:
        if value := response_headers.get(name):
            return condition, value
    return None
SSE_MEDIA_TYPE = "text/event-stream"
JSON_MEDIA_TYPE = "application/json"

# Methods (§5.3)
SEND_MESSAGE = "SendMessage"
SEND_STREAMING_MESSAGE = "SendStreamingMessage"
GET_TASK = "GetTask"
LIST_TASKS = "ListTasks"
CANCEL_TASK = "CancelTask"
SUBSCRIBE_TO_TASK = "SubscribeToTask"
CREATE_PUSH_CONFIG = "CreateTaskPushNotificationConfig"
GET_PUSH_CONFIG = "GetTaskPushNotificationConfig"
LIST_PUSH_CONFIGS = "ListTaskPushNotificationConfigs"
DELETE_PUSH_CONFIG = "DeleteTaskPushNotificationConfig"
PUSH_CONFIG_METHODS = (CREATE_PUSH_CONFIG, GET_PUSH_CONFIG, LIST_PUSH_CONFIGS, DELETE_PUSH_CONFIG)
GET_EXTENDED_CARD = "GetExtendedAgentCard"
METHODS = (
    SEND_MESSAGE, SEND_STREAMING_MESSAGE, GET_TASK, LIST_TASKS, CANCEL_TASK, SUBSCRIBE_TO_TASK,
    *PUSH_CONFIG_METHODS, GET_EXTENDED_CARD,
)
STREAMING_METHODS = (SEND_STREAMING_MESSAGE, SUBSCRIBE_TO_TASK)

# Task states
SUBMITTED = "TASK_STATE_SUBMITTED"
WORKING = "TASK_STATE_WORKING"
COMPLETED = "TASK_STATE_COMPLETED"
FAILED = "TASK_STATE_FAILED"
CANCELED = "TASK_STATE_CANCELED"
REJECTED = "TASK_STATE_REJECTED"
INPUT_REQUIRED = "TASK_STATE_INPUT_REQUIRED"
AUTH_REQUIRED = "TASK_STATE_AUTH_REQUIRED"
TERMINAL_STATES = frozenset({COMPLETED, FAILED, CANCELED, REJECTED})
INTERRUPTED_STATES = frozenset({INPUT_REQUIRED, AUTH_REQUIRED})
TASK_STATES = frozenset({SUBMITTED, WORKING}) | TERMINAL_STATES | INTERRUPTED_STATES

ROLE_USER = "ROLE_USER"
ROLE_AGENT = "ROLE_AGENT"
ROLES = frozenset({ROLE_USER, ROLE_AGENT})

# StreamResponse: exactly one of these members (§3.1.2)
TASK, MESSAGE, STATUS_UPDATE, ARTIFACT_UPDATE = "task", "message", "statusUpdate", "artifactUpdate"
STREAM_RESULT_KINDS = (TASK, MESSAGE, STATUS_UPDATE, ARTIFACT_UPDATE)
# Part: exactly one content field
PART_CONTENT_FIELDS = ("text", "raw", "url", "data")
# The members Message and Part have (§4.1.4, §4.1.6; a2a.proto v1.0.1), by their JSON names: anything else in
# a request is an unrecognized field, which implementations SHOULD ignore (§5.7).
MESSAGE_FIELDS = ("messageId", "contextId", "taskId", "role", "parts", "metadata", "extensions", "referenceTaskIds")
PART_FIELDS = (*PART_CONTENT_FIELDS, "metadata", "filename", "mediaType")

# The request messages of the operations (a2a.proto v1.0.1, §3.1, §10.4), as CARD_MESSAGES below: each member by
# its lowerCamelCase JSON name, with the message it holds (a list of it alike), or None for a scalar, an enum, a
# Timestamp, or a Struct / Value (`metadata`, a Part's `data`), whose keys are the sender's own, never the proto's.
REQUEST_MESSAGES: dict[str, dict[str, str | None]] = {
    "SendMessageRequest": {"tenant": None, "message": "Message", "configuration": "SendMessageConfiguration",
                           "metadata": None},
    "SendMessageConfiguration": {"acceptedOutputModes": None, "taskPushNotificationConfig": "TaskPushNotificationConfig",
                                 "historyLength": None, "returnImmediately": None},
    "Message": {"messageId": None, "contextId": None, "taskId": None, "role": None, "parts": "Part", "metadata": None,
                "extensions": None, "referenceTaskIds": None},
    "Part": {"text": None, "raw": None, "url": None, "data": None, "metadata": None, "filename": None,
             "mediaType": None},
    "GetTaskRequest": {"tenant": None, "id": None, "historyLength": None},
    "ListTasksRequest": {"tenant": None, "contextId": None, "status": None, "pageSize": None, "pageToken": None,
                         "historyLength": None, "statusTimestampAfter": None, "includeArtifacts": None},
    "CancelTaskRequest": {"tenant": None, "id": None, "metadata": None},
    "SubscribeToTaskRequest": {"tenant": None, "id": None},
    "TaskPushNotificationConfig": {"tenant": None, "id": None, "taskId": None, "url": None, "token": None,
                                   "authentication": "AuthenticationInfo"},
    "AuthenticationInfo": {"scheme": None, "credentials": None},
    "GetTaskPushNotificationConfigRequest": {"tenant": None, "taskId": None, "id": None},
    "ListTaskPushNotificationConfigsRequest": {"tenant": None, "taskId": None, "pageSize": None, "pageToken": None},
    "DeleteTaskPushNotificationConfigRequest": {"tenant": None, "taskId": None, "id": None},
    "GetExtendedAgentCardRequest": {"tenant": None},
}
# What each operation is sent (§10.4): the streaming ones take the same request messages as their unary twins.
REQUEST_TYPES = {
    SEND_MESSAGE: "SendMessageRequest",
    SEND_STREAMING_MESSAGE: "SendMessageRequest",
    GET_TASK: "GetTaskRequest",
    LIST_TASKS: "ListTasksRequest",
    CANCEL_TASK: "CancelTaskRequest",
    SUBSCRIBE_TO_TASK: "SubscribeToTaskRequest",
    CREATE_PUSH_CONFIG: "TaskPushNotificationConfig",
    GET_PUSH_CONFIG: "GetTaskPushNotificationConfigRequest",
    LIST_PUSH_CONFIGS: "ListTaskPushNotificationConfigsRequest",
    DELETE_PUSH_CONFIG: "DeleteTaskPushNotificationConfigRequest",
    GET_EXTENDED_CARD: "GetExtendedAgentCardRequest",
}


def proto_name(json_name: str) -> str:
    """A field's name in a2a.proto from its JSON name (§5.5: `context_id` → `contextId`, read backwards)."""
    return re.sub(r"[A-Z]", lambda m: "_" + m.group(0).lower(), json_name)

# JSON-RPC error codes
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
TASK_NOT_FOUND = -32001
TASK_NOT_CANCELABLE = -32002
PUSH_NOT_SUPPORTED = -32003
UNSUPPORTED_OPERATION = -32004
CONTENT_TYPE_NOT_SUPPORTED = -32005
INVALID_AGENT_RESPONSE = -32006
EXTENDED_CARD_NOT_CONFIGURED = -32007
EXTENSION_SUPPORT_REQUIRED = -32008
VERSION_NOT_SUPPORTED = -32009
ERROR_NAMES = {
    PARSE_ERROR: "JSONParseError",
    INVALID_REQUEST: "InvalidRequestError",
    METHOD_NOT_FOUND: "MethodNotFoundError",
    INVALID_PARAMS: "InvalidParamsError",
    INTERNAL_ERROR: "InternalError",
    TASK_NOT_FOUND: "TaskNotFoundError",
    TASK_NOT_CANCELABLE: "TaskNotCancelableError",
    PUSH_NOT_SUPPORTED: "PushNotificationNotSupportedError",
    UNSUPPORTED_OPERATION: "UnsupportedOperationError",
    CONTENT_TYPE_NOT_SUPPORTED: "ContentTypeNotSupportedError",
    INVALID_AGENT_RESPONSE: "InvalidAgentResponseError",
    EXTENDED_CARD_NOT_CONFIGURED: "ExtendedAgentCardNotConfiguredError",
    EXTENSION_SUPPORT_REQUIRED: "ExtensionSupportRequiredError",
    VERSION_NOT_SUPPORTED: "VersionNotSupportedError",
}
ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
ERROR_DOMAIN = "a2a-protocol.org"
# The codes of the A2A-specific errors (§9.5); the others are JSON-RPC 2.0's own (-32700, -32600…-32603).
A2A_ERROR_CODES = range(-32099, -32000)


def is_a2a_error(code: Any) -> bool:
    """Whether `code` is in the range A2A keeps for its own errors (-32001 to -32099)."""
    return isinstance(code, int) and not isinstance(code, bool) and code in A2A_ERROR_CODES


# The JSON-RPC 2.0 envelope (JSON-RPC 2.0 §4): "jsonrpc" is exactly "2.0", "method" a string, and "id",
# when present, a string, a number or null; a request without "id" is a notification (§4.1).
JSONRPC_VERSION = "2.0"

LIST_PAGE_SIZE_DEFAULT = 50
LIST_PAGE_SIZE_MAX = 100

# The agent card's messages as ProtoJSON writes them (a2a.proto at v1.0.1; §5.5): each message's members
# by their lowerCamelCase JSON names, with the message a member holds (a list or a map of it alike), or
# None for a scalar, a Struct or a map of strings, whose keys are not the proto's.
CARD_MESSAGES: dict[str, dict[str, str | None]] = {
    "AgentCard": {
        "name": None, "description": None, "supportedInterfaces": "AgentInterface", "provider": "AgentProvider",
        "version": None, "documentationUrl": None, "capabilities": "AgentCapabilities",
        "securitySchemes": "SecurityScheme", "securityRequirements": "SecurityRequirement",
        "defaultInputModes": None, "defaultOutputModes": None, "skills": "AgentSkill",
        "signatures": "AgentCardSignature", "iconUrl": None,
    },
    "AgentInterface": {"url": None, "protocolBinding": None, "tenant": None, "protocolVersion": None},
    "AgentProvider": {"url": None, "organization": None},
    "AgentCapabilities": {"streaming": None, "pushNotifications": None, "extensions": "AgentExtension",
                          "extendedAgentCard": None},
    "AgentExtension": {"uri": None, "description": None, "required": None, "params": None},
    "AgentSkill": {"id": None, "name": None, "description": None, "tags": None, "examples": None,
                   "inputModes": None, "outputModes": None, "securityRequirements": "SecurityRequirement"},
    "AgentCardSignature": {"protected": None, "signature": None, "header": None},
    "SecurityRequirement": {"schemes": None},
    "SecurityScheme": {"apiKeySecurityScheme": "APIKeySecurityScheme",
                       "httpAuthSecurityScheme": "HTTPAuthSecurityScheme",
                       "oauth2SecurityScheme": "OAuth2SecurityScheme",
                       "openIdConnectSecurityScheme": "OpenIdConnectSecurityScheme",
                       "mtlsSecurityScheme": "MutualTlsSecurityScheme"},
    "APIKeySecurityScheme": {"description": None, "location": None, "name": None},
    "HTTPAuthSecurityScheme": {"description": None, "scheme": None, "bearerFormat": None},
    "OAuth2SecurityScheme": {"description": None, "flows": "OAuthFlows", "oauth2MetadataUrl": None},
    "OpenIdConnectSecurityScheme": {"description": None, "openIdConnectUrl": None},
    "MutualTlsSecurityScheme": {"description": None},
    "OAuthFlows": {"authorizationCode": "AuthorizationCodeOAuthFlow",
                   "clientCredentials": "ClientCredentialsOAuthFlow", "implicit": "ImplicitOAuthFlow",
                   "password": "PasswordOAuthFlow", "deviceCode": "DeviceCodeOAuthFlow"},
    "AuthorizationCodeOAuthFlow": {"authorizationUrl": None, "tokenUrl": None, "refreshUrl": None, "scopes": None,
                                   "pkceRequired": None},
    "ClientCredentialsOAuthFlow": {"tokenUrl": None, "refreshUrl": None, "scopes": None},
    "ImplicitOAuthFlow": {"authorizationUrl": None, "refreshUrl": None, "scopes": None},
    "PasswordOAuthFlow": {"tokenUrl": None, "refreshUrl": None, "scopes": None},
    "DeviceCodeOAuthFlow": {"deviceAuthorizationUrl": None, "tokenUrl": None, "refreshUrl": None, "scopes": None},
}
# The card's oneofs (each message is nothing but its oneof): exactly one member is written, by its JSON name.
CARD_ONEOFS = ("SecurityScheme", "OAuthFlows")
# Members whose value is a map of the message named (its keys are the agent's own names).
CARD_MAPS = frozenset({("AgentCard", "securitySchemes")})


# The messages an operation answers with, as ProtoJSON writes them (a2a.proto at v1.0.1; §5.5): each message's
# members by their lowerCamelCase JSON names, with the message a member holds (a list of it alike), or None for a
# scalar, an enum, or a Struct / Value (metadata, a Part's data), whose keys are the agent's own.
ANSWER_MESSAGES: dict[str, dict[str, str | None]] = {
    "Task": {"id": None, "contextId": None, "status": "TaskStatus", "artifacts": "Artifact", "history": "Message",
             "metadata": None},
    "TaskStatus": {"state": None, "message": "Message", "timestamp": None},
    "Message": {"messageId": None, "contextId": None, "taskId": None, "role": None, "parts": "Part", "metadata": None,
                "extensions": None, "referenceTaskIds": None},
    "Part": {"text": None, "raw": None, "url": None, "data": None, "metadata": None, "filename": None,
             "mediaType": None},
    "Artifact": {"artifactId": None, "name": None, "description": None, "parts": "Part", "metadata": None,
                 "extensions": None},
    "TaskStatusUpdateEvent": {"taskId": None, "contextId": None, "status": "TaskStatus", "metadata": None},
    "TaskArtifactUpdateEvent": {"taskId": None, "contextId": None, "artifact": "Artifact", "append": None,
                                "lastChunk": None, "metadata": None},
    "StreamResponse": {TASK: "Task", MESSAGE: "Message", STATUS_UPDATE: "TaskStatusUpdateEvent",
                       ARTIFACT_UPDATE: "TaskArtifactUpdateEvent"},
    "SendMessageResponse": {TASK: "Task", MESSAGE: "Message"},
    "ListTasksResponse": {"tasks": "Task", "nextPageToken": None, "pageSize": None, "totalSize": None},
}
# The message each operation answers with (a stream: each frame).
ANSWER_TYPES = {SEND_MESSAGE: "SendMessageResponse", SEND_STREAMING_MESSAGE: "StreamResponse", GET_TASK: "Task",
                LIST_TASKS: "ListTasksResponse", CANCEL_TASK: "Task", SUBSCRIBE_TO_TASK: "StreamResponse"}


def folded(name: str) -> str:
    """A member name without case and underscores: `supported_interfaces`, `SupportedInterfaces` and
    `supportedInterfaces` fold alike (the one member ProtoJSON names supportedInterfaces)."""
    return name.replace("_", "").lower()


def error_name(code: int) -> str:
    return ERROR_NAMES.get(code, f"error {code}")


def is_terminal(state: str | None) -> bool:
    return state in TERMINAL_STATES


def is_interrupted(state: str | None) -> bool:
    return state in INTERRUPTED_STATES


# Which StreamResponse member a result is. Callers differ on a result that holds several, so each
# reading has its own name.

def stream_kind(result: Any) -> str | None:
    """The first member (in STREAM_RESULT_KINDS order) the result holds as an object, if any."""
    if isinstance(result, dict):
        for kind in STREAM_RESULT_KINDS:
            if isinstance(result.get(kind), dict):
                return kind
    return None


def sole_stream_kind(result: Any) -> str | None:
    """The member the result holds as an object when it holds exactly one such member, else None."""
    if not isinstance(result, dict):
        return None
    kinds = [k for k in STREAM_RESULT_KINDS if isinstance(result.get(k), dict)]
    return kinds[0] if len(kinds) == 1 else None


def stream_members(result: Any) -> list[str]:
    """Every member the result names, whatever its value (a StreamResponse names exactly one)."""
    return [k for k in STREAM_RESULT_KINDS if isinstance(result, dict) and k in result]


def required_schemes(card: Any) -> list[str]:
    """The names of the security schemes the card's securityRequirements ask for (§4.4.1, §7): each requirement is
    a SecurityRequirement ({"schemes": {name: {"list": [scope…]}}}), or in the 0.3 form ({name: [scope…]}) that the
    specification's own sample card (§8.5) still writes. [] when the card requires none."""
    requirements = card.get("securityRequirements") if isinstance(card, dict) else None
    names: set[str] = set()
    for requirement in requirements if isinstance(requirements, list) else ():
        if isinstance(requirement, dict):
            schemes = requirement.get("schemes")
            names.update(schemes if isinstance(schemes, dict) else (k for k in requirement if k != "schemes"))
    return sorted(names)


def extended_card_declared(card: Any) -> bool:
    caps = card.get("capabilities") if isinstance(card, dict) else None
    return isinstance(caps, dict) and caps.get("extendedAgentCard") is True
