"""The reference A2A client's view of one task (client.py says what it shows, point by point): the latest status
by timestamp, the artifacts joined per artifactId, the plan, the pause and its interaction; with the fault
variants that get one of those wrong."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from ...protocols import a2a, interactions_v1, progress_v1
from ..faults import switch

# -- the view ----------------------------------------------------------------------------------------

def _when(status: dict[str, Any]) -> datetime | None:
    """A status's timestamp, or None when it has none that reads as ISO 8601."""
    stamp = status.get("timestamp")
    if not isinstance(stamp, str):
        return None
    try:
        when = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _newer(at: datetime | None, shown: datetime | None, fault: str | None) -> bool:
    """Whether a status stamped `at` is newer than the one shown (stamped `shown`): by timestamp; a tie or
    a missing timestamp goes by arrival."""
    if ARRIVAL_ORDER.on(fault):
        return True
    return at is None or shown is None or at >= shown


@dataclass
class Latest:
    """One thing the view shows, taken from the newest status that carried it."""

    value: Any = None
    at: datetime | None = None
    taken: bool = False

    def offer(self, value: Any, at: datetime | None, fault: str | None) -> bool:
        if self.taken and not _newer(at, self.at, fault):
            return False
        self.value, self.taken = value, True
        self.at = at if at is not None else self.at
        return True


def _text(message: Any) -> str | None:
    """A message's text parts joined, or None when it has none."""
    parts = message.get("parts") if isinstance(message, dict) else None
    texts = [p["text"] for p in parts or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "".join(texts) if texts else None


def _plan(metadata: Any) -> list[dict[str, Any]] | None:
    """The progress/v1 plan a status carries, as the view shows it (label, state, note), or None."""
    value = metadata.get(progress_v1.URI) if isinstance(metadata, dict) else None
    steps = value.get("steps") if isinstance(value, dict) else None
    if not isinstance(steps, list):
        return None
    return [{k: step[k] for k in progress_v1.STEP_FIELDS if step.get(k) is not None}
            for step in steps if isinstance(step, dict)]


class Artifacts:
    """The task's artifacts, joined per artifactId, in the order they first appeared."""

    def __init__(self, fault: str | None) -> None:
        self.fault = fault
        self.parts: dict[str, list[dict[str, Any]]] = {}
        self.names: dict[str, str] = {}
        self.ended: set[str] = set()
        self.last: str | None = None  # the artifact written last

    def take(self, update: dict[str, Any]) -> None:
        artifact = update.get("artifact")
        artifact_id = artifact.get("artifactId") if isinstance(artifact, dict) else None
        if not isinstance(artifact_id, str):
            return
        artifact_id = _break_artifact_id(artifact_id, update, self)
        parts = [p for p in artifact.get("parts") or [] if isinstance(p, dict)]
        if update.get("append") is True and artifact_id in self.parts:
            if artifact_id not in self.ended:
                self.parts[artifact_id].extend(parts)
        else:  # a first chunk: a new artifact, or one that replaces the artifact of that id
            self.parts[artifact_id] = parts
            self.ended.discard(artifact_id)
        if isinstance(artifact.get("name"), str):
            self.names[artifact_id] = artifact["name"]
        if update.get("lastChunk") is True:
            self.ended.add(artifact_id)
        self.last = artifact_id

    def replace(self, artifacts: list[Any]) -> None:
        """The whole list, from a Task."""
        self.parts, self.names, self.ended, self.last = {}, {}, set(), None
        for artifact in artifacts:
            self.take({"artifact": artifact})

    def view(self) -> list[dict[str, Any]]:
        out = []
        for artifact_id, parts in self.parts.items():
            shown: dict[str, Any] = {"artifactId": artifact_id}
            if artifact_id in self.names:
                shown["name"] = self.names[artifact_id]
            texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
            data = [p["data"] for p in parts if "data" in p]
            if data and not texts:
                shown["data"] = data[0] if len(data) == 1 else data
            else:
                shown["text"] = "".join(texts)
            out.append(shown)
        return out


@dataclass(frozen=True)
class Pause:
    """An interrupted state not answered yet: what identifies it, and its interactions/v1 object."""

    key: str
    interaction: dict[str, Any] | None


class View:
    """What the client shows of its task, built from the frames it reads."""

    def __init__(self, fault: str | None = None) -> None:
        self.fault = fault
        self.task_id: str | None = None
        self.context_id: str | None = None
        self.status = Latest()  # the latest status (its state, and what identifies a pause)
        self.text = Latest()
        self.plan = Latest()
        self.interaction = Latest()
        self.artifacts = Artifacts(fault)
        self.seen: set[str] = set()  # the status updates taken (a copy delivered again changes nothing)
        self.waiting: list[tuple[str, dict[str, Any]]] = []  # updates that came before the Task named the task
        self.message_text: str | None = None  # a message-only answer
        self.error: str | None = None  # the last JSON-RPC error or transport failure (not in the contract)

    # -- which task ------------------------------------------------------------------------------
    def _ours(self, task_id: Any, context_id: Any) -> bool:
        if OTHER_TASK_FRAMES.on(self.fault):
            self.task_id, self.context_id = task_id, context_id or self.context_id
            return True
        return task_id == self.task_id and (context_id is None or self.context_id is None
                                            or context_id == self.context_id)

    def _adopt(self, task_id: Any, context_id: Any) -> None:
        self.task_id = task_id if isinstance(task_id, str) else None
        self.context_id = context_id if isinstance(context_id, str) else None
        waiting, self.waiting = self.waiting, []
        for kind, update in waiting:
            self._take_update(kind, update)

    # -- frames ----------------------------------------------------------------------------------
    def take(self, result: Any) -> None:
        """One StreamResponse (a stream's event, or SendMessage's result)."""
        kind = a2a.stream_kind(result)
        if kind == a2a.TASK:
            self.take_task(result[kind])
        elif kind in (a2a.STATUS_UPDATE, a2a.ARTIFACT_UPDATE):
            if self.task_id is None:
                self.waiting.append((kind, result[kind]))
            else:
                self._take_update(kind, result[kind])
        elif kind == a2a.MESSAGE and self.task_id is None:
            self.message_text = _text(result[kind])

    def take_task(self, task: Any) -> None:
        """A Task (a stream's first event, SendMessage's or GetTask's answer): it stands for the whole task."""
        if not isinstance(task, dict):
            return
        if self.task_id is None:
            self._adopt(task.get("id"), task.get("contextId"))
        elif not self._ours(task.get("id"), task.get("contextId")):
            return
        self._take_status(task.get("status"), task.get("metadata"))
        if isinstance(task.get("artifacts"), list):
            self.artifacts.replace(task["artifacts"])

    def _take_update(self, kind: str, update: dict[str, Any]) -> None:
        if not self._ours(update.get("taskId"), update.get("contextId")):
            return
        if kind == a2a.ARTIFACT_UPDATE:
            self.artifacts.take(update)
            return
        copy_key = json.dumps(update, sort_keys=True)
        if copy_key in self.seen and not ARRIVAL_ORDER.on(self.fault):
            return
        self.seen.add(copy_key)
        self._take_status(update.get("status"), update.get("metadata"))

    def _take_status(self, status: Any, metadata: Any) -> None:
        if not isinstance(status, dict):
            return
        at = _when(status)
        self.status.offer(status, at, self.fault)
        message = status.get("message")
        text = _text(message)
        if text is not None:
            self.text.offer(text, at, self.fault)
        interaction = interactions_v1.interaction_of(message)
        if interaction is not None:
            self.interaction.offer(interaction, at, self.fault)
        steps = _plan(metadata)
        if steps is not None:
            self.plan.offer(_break_plan(self.plan.value, steps, self.fault), at, self.fault)

    # -- what it comes to ------------------------------------------------------------------------
    @property
    def state(self) -> str | None:
        return self.status.value.get("state") if self.status.taken else None

    def terminal(self) -> bool:
        return a2a.is_terminal(self.state)

    def pause(self, answered: set[str]) -> Pause | None:
        """The interrupted state the task shows, unless it was answered already."""
        if not a2a.is_interrupted(self.state):
            return None
        status = self.status.value
        interaction = interactions_v1.interaction_of(status.get("message"))
        ix_id = interaction.get(interactions_v1.INTERACTION_ID) if interaction else None
        key = ix_id if isinstance(ix_id, str) else json.dumps(interactions_v1.status_key(status))
        return None if key in answered else Pause(key, interaction)

    def as_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "task": None if self.task_id is None else {"id": self.task_id, "contextId": self.context_id,
                                                       "state": self.state},
            "artifacts": self.artifacts.view(),
            "plan": self.plan.value if self.plan.taken else None,
            "interaction": _break_interaction(self.interaction.value, self.fault) if self.interaction.taken else None,
            "statusText": self.text.value if self.text.taken else (self.message_text or ""),
        }
        if self.error:
            shown["error"] = self.error  # for a person reading the report; not part of docs/contracts.md §7's view
        return shown


# -- fault variants: each a client that gets one thing wrong ---------------------------------------------
MERGE_PLANS = switch("merge-plans")
ARRIVAL_ORDER = switch("arrival-order")
ARTIFACTS_BY_ARRIVAL = switch("artifacts-by-arrival")
OTHER_TASK_FRAMES = switch("other-task-frames")
PROMPT_NOT_SHOWN = switch("prompt-not-shown")


def _break_plan(shown: list[dict[str, Any]] | None, steps: list[dict[str, Any]], fault: str | None) -> list:
    if not MERGE_PLANS.on(fault) or not shown:
        return steps
    merged = {step.get("label"): dict(step) for step in shown}  # kept in their first order, by label
    for step in steps:
        merged[step.get("label")] = {**merged.get(step.get("label"), {}), **step}
    return list(merged.values())


def _break_artifact_id(artifact_id: str, update: dict[str, Any], artifacts: Artifacts) -> str:
    if ARTIFACTS_BY_ARRIVAL.on(artifacts.fault) and update.get("append") is True and artifacts.last is not None:
        return artifacts.last
    return artifact_id


def _break_interaction(interaction: dict[str, Any], fault: str | None) -> dict[str, Any]:
    if PROMPT_NOT_SHOWN.on(fault):
        return {k: v for k, v in interaction.items() if k != interactions_v1.PROMPT}
    return interaction
