"""The stream's view of a task: what a careful client knows after reading one A2A task stream.

Pure and forgiving: it reads the data events of one exchange (SendStreamingMessage or
SubscribeToTask) and never raises on a malformed frame; frames it cannot place are kept in
`others` so a rule can still point at them. It judges nothing: the rules decide what is wrong.

    view = StreamView.from_exchange(log.get("stream"))
    view.task             # the first frame's Task object (None when frame 1 is not a Task)
    view.task_id          # from the Task, else from the first status/artifact update
    view.context_id
    view.items            # every data frame in order, as StreamItem(event, kind, body, payload)
    view.statuses         # [(event, statusUpdate)] in order
    view.last_status      # the TaskStatus in force at the end (last statusUpdate, else the Task's)
    view.last_state       # its state
    view.last_status_message      # its message (None when the last status carries none)
    view.last_message_streamed    # the last status message seen at all (an earlier one may be it)
    view.artifacts        # artifactId -> ArtifactView (chunks joined), in order of first appearance
    view.errors           # [(event, JSON-RPC error object)]
    view.results()        # the StreamResponse objects in order (for comparing two streams)

Joining artifact chunks: an artifactUpdate with `append: true` adds its parts to the artifact of
the same id; one without `append` starts the artifact afresh (a later one replaces what came
before, and `restarts` counts that). Text parts are concatenated in order; data parts are kept as
a list of JSON values; other parts (raw, url) are kept as they came.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .. import a2a
from ..framelog import Event, Exchange


@dataclass
class StreamItem:
    """One data frame of a stream, classified."""

    event: Event
    kind: str | None  # "task" | "message" | "statusUpdate" | "artifactUpdate" | "error" | None
    body: Any  # result[kind], the error object, or the raw payload when kind is None
    payload: Any  # the whole parsed JSON-RPC envelope (None when the data is not JSON)

    @property
    def result(self) -> Any:
        return self.payload.get("result") if isinstance(self.payload, dict) else None


@dataclass
class ArtifactView:
    """One artifact as its streamed chunks build it."""

    artifact_id: str
    name: str | None = None
    parts: list[dict[str, Any]] = field(default_factory=list)  # every part of the current build, in order
    chunks: int = 0  # artifactUpdate frames in the current build
    last_chunk: bool = False  # the last frame seen for it set lastChunk: true
    restarts: int = 0  # frames without `append` after the first (each restarted the artifact)
    events: list[Event] = field(default_factory=list)  # every frame for this id

    @property
    def text_parts(self) -> list[str]:
        return [p["text"] for p in self.parts if isinstance(p.get("text"), str)]

    @property
    def text(self) -> str | None:
        """The text parts concatenated (None when the artifact has no text part)."""
        parts = self.text_parts
        return "".join(parts) if parts else None

    @property
    def data(self) -> list[Any]:
        """The values of the data parts, in order."""
        return [p["data"] for p in self.parts if "data" in p]

    @property
    def others(self) -> list[dict[str, Any]]:
        return [p for p in self.parts if not isinstance(p.get("text"), str) and "data" not in p]


@dataclass
class StreamView:
    exchange: Exchange | None = None
    items: list[StreamItem] = field(default_factory=list)
    task: dict[str, Any] | None = None
    task_event: Event | None = None
    task_id: str | None = None
    context_id: str | None = None
    statuses: list[tuple[Event, dict[str, Any]]] = field(default_factory=list)
    artifacts: dict[str, ArtifactView] = field(default_factory=dict)
    errors: list[tuple[Event, dict[str, Any]]] = field(default_factory=list)
    others: list[StreamItem] = field(default_factory=list)  # frames that are no StreamResponse

    # -- building --------------------------------------------------------------------------------
    @classmethod
    def from_exchange(cls, ex: Exchange | None) -> StreamView:
        view = cls(exchange=ex)
        if ex is None:
            return view
        for ev in ex.data_events():
            view._add(ev)
        return view

    def _add(self, ev: Event) -> None:
        payload = ev.payload
        item = StreamItem(ev, None, payload, payload)
        if isinstance(payload, dict) and isinstance(payload.get("error"), dict):
            item.kind, item.body = "error", payload["error"]
            self.errors.append((ev, payload["error"]))
        elif isinstance(payload, dict) and isinstance(payload.get("result"), dict):
            result = payload["result"]
            kinds = [k for k in a2a.STREAM_RESULT_KINDS if isinstance(result.get(k), dict)]
            if len(kinds) == 1:
                item.kind, item.body = kinds[0], result[kinds[0]]
        self.items.append(item)
        if item.kind is None or item.kind == "error":
            if item.kind is None:
                self.others.append(item)
            return
        body = item.body
        if item.kind == "task":
            if self.task is None and len(self.items) == 1:
                self.task, self.task_event = body, ev
            self._ids(body.get("id"), body.get("contextId"))
        elif item.kind == "statusUpdate":
            self.statuses.append((ev, body))
            self._ids(body.get("taskId"), body.get("contextId"))
        elif item.kind == "artifactUpdate":
            self._ids(body.get("taskId"), body.get("contextId"))
            self._artifact(ev, body)

    def _ids(self, task_id: Any, context_id: Any) -> None:
        if self.task_id is None and isinstance(task_id, str):
            self.task_id = task_id
        if self.context_id is None and isinstance(context_id, str):
            self.context_id = context_id

    def _artifact(self, ev: Event, update: dict[str, Any]) -> None:
        art = update.get("artifact")
        if not isinstance(art, dict) or not isinstance(art.get("artifactId"), str):
            return
        aid = art["artifactId"]
        view = self.artifacts.get(aid)
        if view is None:
            view = self.artifacts[aid] = ArtifactView(aid)
        elif update.get("append") is not True:
            view.restarts += 1
            view.parts, view.chunks = [], 0
        if isinstance(art.get("name"), str):
            view.name = art["name"]
        view.parts.extend(p for p in art.get("parts") or [] if isinstance(p, dict))
        view.chunks += 1
        view.last_chunk = update.get("lastChunk") is True
        view.events.append(ev)

    # -- reading ---------------------------------------------------------------------------------
    @property
    def events(self) -> list[Event]:
        return [item.event for item in self.items]

    def results(self) -> list[Any]:
        """The JSON-RPC `result` of every data frame, in order (None for an error or bad frame)."""
        return [item.result for item in self.items]

    @property
    def last_status_event(self) -> Event | None:
        if self.statuses:
            return self.statuses[-1][0]
        return self.task_event

    @property
    def last_status(self) -> dict[str, Any] | None:
        """The TaskStatus in force at the end: the last statusUpdate's, else the first Task's."""
        for _, update in reversed(self.statuses):
            if isinstance(update.get("status"), dict):
                return update["status"]
        if self.task and isinstance(self.task.get("status"), dict):
            return self.task["status"]
        return None

    @property
    def last_state(self) -> str | None:
        status = self.last_status
        state = status.get("state") if status else None
        return state if isinstance(state, str) else None

    @property
    def last_status_message(self) -> dict[str, Any] | None:
        status = self.last_status
        msg = status.get("message") if status else None
        return msg if isinstance(msg, dict) else None

    @property
    def last_message_streamed(self) -> dict[str, Any] | None:
        """The last status message carried by any status (the Task's first status included)."""
        for _, update in reversed(self.statuses):
            status = update.get("status")
            if isinstance(status, dict) and isinstance(status.get("message"), dict):
                return status["message"]
        status = self.task.get("status") if self.task else None
        if isinstance(status, dict) and isinstance(status.get("message"), dict):
            return status["message"]
        return None

    @property
    def terminal(self) -> bool:
        return a2a.is_terminal(self.last_state)

    @property
    def closed(self) -> bool:
        return self.exchange is not None and self.exchange.end == "closed"
