"""The nylorun A2A extension interactions/v1 (seed 004): approval, question and connection in the
interrupted states, answered by a message on the same task; and the readers of its metadata shape.

The open interaction sits in the status message's metadata[URI] as {interactionId, kind, prompt,
detail?}; an answer carries {interactionId, approved | value} there.
"""

from __future__ import annotations

from typing import Any

from . import a2a

URI = "https://docs.nylorun.com/a2a/interactions/v1"

APPROVAL, QUESTION, CONNECTION = "approval", "question", "connection"
KINDS = (APPROVAL, QUESTION, CONNECTION)
STATE_OF = {APPROVAL: a2a.AUTH_REQUIRED, QUESTION: a2a.INPUT_REQUIRED, CONNECTION: a2a.AUTH_REQUIRED}

# Metadata members: of the open interaction, then of an answer.
INTERACTION_ID, KIND, PROMPT, DETAIL = "interactionId", "kind", "prompt", "detail"
APPROVED, VALUE = "approved", "value"

DENIED = "tool.denied"  # what the model sees when a person denies a held call
# request_connection: the prompt a person sees, and what the model sees after the answer.
CONNECT_PROMPT = "Connect {app}: {reason}"
CONNECTED, NOT_CONNECTED = "Connected: {app}", "Not connected: {app}"

# request_connection cuts the app and the reason to these many characters (code points). Whether a
# cut ends in the ellipsis is not said for these fields.
APP_MAX, REASON_MAX = 80, 280
LIMITS = {"app": APP_MAX, "reason": REASON_MAX}
ELLIPSIS = "…"


def interaction_of(message: Any) -> dict[str, Any] | None:
    """The extension's object in a message's metadata, if it is an object."""
    meta = message.get("metadata") if isinstance(message, dict) else None
    value = meta.get(URI) if isinstance(meta, dict) else None
    return value if isinstance(value, dict) else None


def status_key(status: dict[str, Any]) -> Any:
    """What tells one status from its copies on other streams: its message's id, else state and time."""
    message = status.get("message")
    if isinstance(message, dict) and message.get("messageId"):
        return message["messageId"]
    return (status.get("state"), status.get("timestamp"))
