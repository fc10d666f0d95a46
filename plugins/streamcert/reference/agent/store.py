"""The task store: what GetTask and ListTasks read, fed by the same events the streams carry."""

from __future__ import annotations

import asyncio
import copy
import itertools
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ...protocols import a2a
from ..faults import switch, variant
from .clock import parse_timestamp
from .interactions import Ledger
from .options import Options


def json_copy(value: Any) -> Any:
    """A deep copy of JSON data (dicts, lists, strings, numbers, booleans, null), five times as fast as `copy.deepcopy`
    on a task: the store copies a task at every read (GetTask, each frame of a stream that carries the whole task),
    and `copy.deepcopy` there was the largest part of the reference's CPU in an embedded run. Anything else is copied
    by `copy.deepcopy`."""
    kind = type(value)
    if kind is dict:
        return {key: json_copy(item) for key, item in value.items()}
    if kind is list:
        return [json_copy(item) for item in value]
    if value is None or kind is str or kind is int or kind is float or kind is bool:
        return value
    return copy.deepcopy(value)


@dataclass
class TaskRecord:
    id: str
    context_id: str
    status: dict[str, Any]
    status_at: datetime
    seq: int  # order of the last status change; breaks ties between equal timestamps
    history: list[dict[str, Any]] = field(default_factory=list)
    artifacts: dict[str, dict[str, Any]] = field(default_factory=dict)  # in creation order
    subscribers: list[asyncio.Queue] = field(default_factory=list)
    # Messages sent to this task after the first; later steps (ask, call…) read answers here.
    inbox: asyncio.Queue = field(default_factory=asyncio.Queue)
    runner: asyncio.Task | None = None
    # interactions/v1: the open interaction and the answers taken, by messageId (interactions.py).
    interactions: Ledger = field(default_factory=Ledger)
    # The task's metadata (progress/v1: the latest plan under the extension URI).
    metadata: dict[str, Any] = field(default_factory=dict)
    first_plan: dict[str, Any] | None = None  # the first plan recorded, for the plan-stale-get fault

    @property
    def state(self) -> str:
        return self.status["state"]

    def snapshot(self, history_length: int | None = None, include_artifacts: bool = True) -> dict[str, Any]:
        """The Task as ProtoJSON. history_length: None all, 0 none, N the last N."""
        task: dict[str, Any] = {"id": self.id, "contextId": self.context_id,
                                "status": json_copy(self.status)}
        if include_artifacts and self.artifacts:
            task["artifacts"] = json_copy(list(self.artifacts.values()))
        if history_length != 0 and self.history:
            kept = self.history if history_length is None else self.history[-history_length:]
            task["history"] = json_copy(kept)
        if self.metadata:
            task["metadata"] = json_copy(self.metadata)
        return task


class TaskStore:
    def __init__(self, options: Options) -> None:
        self.options = options
        self._join = variant(options, join_parts, {ARTIFACTS_NOT_JOINED: _keep_last_chunk})
        self._tasks: dict[str, TaskRecord] = {}
        self._seq = itertools.count(1)

    def create(self, task_id: str, context_id: str, task_status: dict[str, Any]) -> TaskRecord:
        record = TaskRecord(task_id, context_id, task_status, parse_timestamp(task_status["timestamp"]),
                            next(self._seq))
        self._tasks[task_id] = record
        return record

    def get(self, task_id: str) -> TaskRecord | None:
        return self._tasks.get(task_id)

    def all(self) -> list[TaskRecord]:
        return list(self._tasks.values())

    def subscribe(self, record: TaskRecord, queue: asyncio.Queue | None = None) -> asyncio.Queue:
        """A new subscriber of the task's events (`queue`, or a plain queue)."""
        queue = asyncio.Queue() if queue is None else queue
        record.subscribers.append(queue)
        return queue

    def unsubscribe(self, record: TaskRecord, queue: asyncio.Queue) -> None:
        if queue in record.subscribers:
            record.subscribers.remove(queue)

    def publish(self, record: TaskRecord, result: dict[str, Any]) -> bool:
        """Apply one stream result to the task and fan it out. False when the task had already ended."""
        if a2a.is_terminal(record.state):
            return False
        self._apply(record, result)
        for queue in record.subscribers:
            queue.put_nowait(result)
        return True

    def _apply(self, record: TaskRecord, result: dict[str, Any]) -> None:
        if "statusUpdate" in result:
            self._set_status(record, result["statusUpdate"]["status"])
        elif "artifactUpdate" in result:
            self._add_artifact(record, result["artifactUpdate"])

    def _set_status(self, record: TaskRecord, task_status: dict[str, Any]) -> None:
        record.status = json_copy(task_status)
        if "timestamp" in task_status:  # absent only under the plan-no-timestamp fault
            record.status_at = parse_timestamp(task_status["timestamp"])
        record.seq = next(self._seq)
        if "message" in task_status:
            record.history.append(json_copy(task_status["message"]))

    def _add_artifact(self, record: TaskRecord, event: dict[str, Any]) -> None:
        incoming = json_copy(event["artifact"])
        stored = record.artifacts.get(incoming["artifactId"])
        if stored is None or not event.get("append"):
            record.artifacts[incoming["artifactId"]] = incoming
        else:
            self._join(stored["parts"], incoming["parts"])


def join_parts(parts: list[dict[str, Any]], more: list[dict[str, Any]]) -> None:
    """Append chunk parts; a text part right after a text part extends it, so the log reads whole."""
    for part in more:
        last = parts[-1] if parts else None
        if last is not None and _plain_text(last) and _plain_text(part):
            last["text"] += part["text"]
        else:
            parts.append(part)


def _plain_text(part: dict[str, Any]) -> bool:
    return set(part) == {"text"} and isinstance(part["text"], str)


# -- fault variants ---------------------------------------------------------------------------------
ARTIFACTS_NOT_JOINED = switch("artifacts-not-joined")


def _keep_last_chunk(parts: list[dict[str, Any]], more: list[dict[str, Any]]) -> None:
    """artifacts-not-joined: an appended chunk replaces the artifact's parts."""
    parts[:] = more
