"""A2A 1.0 objects as ProtoJSON dicts (camelCase, enum names as strings)."""

from __future__ import annotations

from typing import Any

from ...protocols import a2a


def agent_message(message_id: str, task_id: str, context_id: str, text: str) -> dict[str, Any]:
    return {"messageId": message_id, "role": a2a.ROLE_AGENT, "parts": [{"text": text}],
            "taskId": task_id, "contextId": context_id}


def status(state: str, timestamp: str, message: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"state": state}
    if message is not None:
        out["message"] = message
    out["timestamp"] = timestamp
    return out


def status_update(task_id: str, context_id: str, task_status: dict[str, Any]) -> dict[str, Any]:
    return {"statusUpdate": {"taskId": task_id, "contextId": context_id, "status": task_status}}


def artifact_update(task_id: str, context_id: str, artifact: dict[str, Any],
                    append: bool = False, last_chunk: bool = False) -> dict[str, Any]:
    event: dict[str, Any] = {"taskId": task_id, "contextId": context_id, "artifact": artifact}
    if append:
        event["append"] = True
    if last_chunk:
        event["lastChunk"] = True
    return {"artifactUpdate": event}


def event_state(result: dict[str, Any]) -> str | None:
    """The task state a stream result announces (a Task or a statusUpdate), else None."""
    body = result.get("statusUpdate") or result.get("task")
    return body["status"]["state"] if body else None


# 0.3 spellings, for the `v03-names` fault only.
_V03_STATES = {state: state.removeprefix("TASK_STATE_").lower().replace("_", "-") for state in a2a.TASK_STATES}
_V03_ROLES = {a2a.ROLE_USER: "user", a2a.ROLE_AGENT: "agent"}


def to_v03(value: Any) -> Any:
    """Rewrite states, roles and parts into their 0.3 shapes, recursively."""
    if isinstance(value, list):
        return [to_v03(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {key: to_v03(item) for key, item in value.items()}
    if out.get("state") in _V03_STATES:
        out["state"] = _V03_STATES[out["state"]]
    if out.get("role") in _V03_ROLES:
        out["role"] = _V03_ROLES[out["role"]]
    if isinstance(value.get("parts"), list):
        out["parts"] = [_v03_part(part) for part in out["parts"]]
    return out


def _v03_part(part: Any) -> Any:
    if not isinstance(part, dict):
        return part
    kind = next((k for k in a2a.PART_CONTENT_FIELDS if k in part), "text")
    return {"kind": "file" if kind in ("raw", "url") else kind, **part}
