"""A2A 1.0.1 push notifications (§3.1.7–3.1.10, §4.3, §13.2): the facts the push drivers and rules share."""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from . import a2a

# §4.3.3's request format shows the POST with this media type (the one A2A's HTTP bindings use).
A2A_JSON_MEDIA_TYPE = "application/a2a+json"
STREAM_RESPONSE_KINDS = (a2a.TASK, a2a.MESSAGE, a2a.STATUS_UPDATE, a2a.ARTIFACT_UPDATE)
# §4.3.3 / §13.2: "reasonable timeout for webhook requests (recommended: 10-30 seconds)".
TIMEOUT_RANGE_S = (10.0, 30.0)


def stream_response_kind(body: Any) -> str | None:
    """The one member a StreamResponse carries (§3.2.3: exactly one of the four), else None."""
    if not isinstance(body, dict):
        return None
    kinds = [k for k in STREAM_RESPONSE_KINDS if isinstance(body.get(k), dict)]
    return kinds[0] if len(kinds) == 1 and len(body) == 1 else None


def task_of(body: Any) -> str | None:
    """The task id a StreamResponse names (a Task's id, an update's taskId, a message's taskId)."""
    kind = stream_response_kind(body)
    if kind is None:
        return None
    inner = body[kind]
    return inner.get("id") if kind == a2a.TASK else inner.get("taskId")


def _state(body: Any) -> str | None:
    kind = stream_response_kind(body)
    if kind == a2a.STATUS_UPDATE or kind == a2a.TASK:
        status = body[kind].get("status")
        return status.get("state") if isinstance(status, dict) else None
    return None


def is_terminal_body(body: Any) -> bool:
    """A StreamResponse that puts its task in a terminal state (a status update, or a Task, in one)."""
    return a2a.is_terminal(_state(body))


def is_interrupted_body(body: Any) -> bool:
    """A StreamResponse that shows its task in an interrupted state (INPUT_REQUIRED, AUTH_REQUIRED)."""
    return a2a.is_interrupted(_state(body))


def is_internal_url(url: str) -> bool:
    """Whether a URL names a host §13.2 asks agents to refuse as a webhook: localhost, a loopback, private or
    link-local address (a host name other than localhost is not resolved: False)."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local
