"""One A2A task stream as a careful client knows it after reading it: the task, its statuses, its artifacts.

Pure and forgiving: it reads the data events of one exchange (SendStreamingMessage or
SubscribeToTask) and never raises on a malformed frame; frames it cannot place are kept in
`others` so a rule can still point at them. It judges nothing: the rules decide what is wrong.

    stream = TaskStream.from_exchange(log.get("stream"))   # or, as a rule's view: TaskStream.of(log, ctx)
    stream.task             # the first frame's Task object (None when frame 1 is not a Task)
    stream.task_id          # from the Task, else from the first status/artifact update
    stream.context_id
    stream.items            # every data frame in order, as StreamItem(event, kind, body, payload)
    stream.statuses         # [(event, statusUpdate)] in order
    stream.last_status      # the TaskStatus in force at the end (last statusUpdate, else the Task's)
    stream.last_state       # its state
    stream.last_status_message      # its message (None when the last status carries none)
    stream.last_message_streamed    # the last status message seen at all (an earlier one may be it)
    stream.artifacts        # artifactId -> StreamedArtifact (chunks joined), in order of first appearance
    stream.errors           # [(event, JSON-RPC error object)]
    stream.results()        # the StreamResponse objects in order (for comparing two streams)
    TaskStream.merged([a, b])   # several streams of one task read together (copies counted once)

A frame is classified only when its result holds exactly one StreamResponse member (one holding
several is A2A-STREAM-005's finding and is kept in `others`).

`StreamFrames` (at the end) is the other view of the same streams, for the rules on the sequence
itself: every task stream of a run, each frame with the StreamResponse member it holds first.

Joining artifact chunks: an artifact a Task frame holds that no chunk has built yet is taken as it
stands (the Task is the current state: a subscription may join mid-artifact); an artifactUpdate with
`append: true` adds its parts to the artifact of the same id; one without `append` starts the
artifact afresh (a later one replaces what came before, and `restarts` counts that). Text parts are
concatenated in order; data parts are kept as a list of JSON values; other parts (raw, url) are kept
as they came.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...contract.capture import NOT_SENT
from ...contract.labels.a2a import STREAM
from ...framelog import END_CLIENT_STOP, END_CLOSED, Event, Exchange, FrameLog
from ...protocols import a2a, bindings
from ..engine import RuleContext, Unjudgeable, answered, cannot_judge, ev_evidence, unjudged_entry
from .framewalk import ALIKE_KEPT, ALIKE_TEXT, Facts, alike_key, read_facts


@dataclass(slots=True)
class StreamItem:
    """One data frame of a stream, classified. Its payload is the event's (read again from the event's
    data when the exchange's parse budget did not keep it), so a view of a long stream does not hold
    every frame's objects at once."""

    event: Event
    kind: str | None  # "task" | "message" | "statusUpdate" | "artifactUpdate" | "error" | None
    binding: str = bindings.JSONRPC  # the binding its exchange went over: how its frame is read

    @property
    def payload(self) -> Any:
        """The whole parsed frame as it came: a JSON-RPC envelope, or a bare StreamResponse on the other
        bindings (None when the data is not JSON)."""
        return self.event.payload

    @property
    def body(self) -> Any:
        """result[kind], the error object, or the raw payload when kind is None."""
        if self.kind is None:
            return self.payload
        result, error = bindings.frame_answer(self.binding, self.payload)
        return error if self.kind == "error" else result[self.kind]

    @property
    def result(self) -> Any:
        return bindings.frame_answer(self.binding, self.payload)[0]


@dataclass
class StreamedArtifact:
    """One artifact as its streamed chunks build it."""

    artifact_id: str
    name: str | None = None
    chunks: int = 0  # artifactUpdate frames in the current build
    last_chunk: bool = False  # the last frame seen for it set lastChunk: true
    restarts: int = 0  # frames without `append` after the first (each restarted the artifact)
    events: list[Event] = field(default_factory=list)  # every frame for this id
    # Every part of the current build, in order; a part that is {"text": T} and nothing else is kept as T
    # (a flood of one-token chunks costs its texts, not a dict for each).
    held: list[dict[str, Any] | str] = field(default_factory=list, repr=False)

    def add(self, parts: list[Any]) -> None:
        held = self.held
        for p in parts:
            if isinstance(p, dict):
                text = p.get("text")
                held.append(text if len(p) == 1 and isinstance(text, str) else p)

    @property
    def parts(self) -> list[dict[str, Any]]:
        """Every part of the current build, in order."""
        return [{"text": p} if isinstance(p, str) else p for p in self.held]

    @property
    def text_parts(self) -> list[str]:
        return [p if isinstance(p, str) else p["text"] for p in self.held
                if isinstance(p, str) or isinstance(p.get("text"), str)]

    @property
    def text(self) -> str | None:
        """The text parts concatenated (None when the artifact has no text part)."""
        parts = self.text_parts
        return "".join(parts) if parts else None

    @property
    def data_parts(self) -> list[dict[str, Any]]:
        """The data parts, in order."""
        return [p for p in self.held if not isinstance(p, str) and "data" in p]

    @property
    def data(self) -> list[Any]:
        """The values of the data parts, in order."""
        return [p["data"] for p in self.data_parts]

    @property
    def others(self) -> list[dict[str, Any]]:
        return [p for p in self.held if not isinstance(p, str) and not isinstance(p.get("text"), str)
                and "data" not in p]


@dataclass
class TaskStream:
    """One task stream, read frame by frame into what it says of the task."""

    exchange: Exchange | None = None
    items: list[StreamItem] = field(default_factory=list)
    task: dict[str, Any] | None = None
    task_event: Event | None = None
    task_id: str | None = None
    context_id: str | None = None
    statuses: list[tuple[Event, dict[str, Any]]] = field(default_factory=list)
    artifacts: dict[str, StreamedArtifact] = field(default_factory=dict)
    errors: list[tuple[Event, dict[str, Any]]] = field(default_factory=list)
    others: list[StreamItem] = field(default_factory=list)  # frames that are no StreamResponse
    owners: dict[int, Exchange] = field(default_factory=dict, repr=False)  # merged: the exchange of each frame

    # -- building --------------------------------------------------------------------------------
    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> TaskStream:
        """The stream the scenario opened with SendStreamingMessage. An answer that is no event stream
        leaves nothing to read here (A2A-STREAM-015 and WIRE-001 say what it was)."""
        ex = answered(log, STREAM)
        if not ex.is_stream:
            raise Unjudgeable()
        return cls.from_exchange(ex)

    @classmethod
    def from_exchange(cls, ex: Exchange | None) -> TaskStream:
        """The stream `ex` carried, read once per events list (every view asking for it shares it)."""
        if ex is None:
            return cls()
        def read() -> TaskStream:  # the walk kept it beside the events; read again only for a list changed since
            stream = cls(exchange=ex)
            for ev in ex.data_events():
                stream.add(ev)
            return stream

        frame_facts(ex)
        return ex.derived("_task_stream", read)

    def add(self, ev: Event) -> None:
        """Read one more frame into the stream."""
        binding = self.exchange.binding if self.exchange is not None else bindings.JSONRPC
        result, error = bindings.frame_answer(binding, ev.payload)
        self.take(ev, result, error, a2a.sole_stream_kind(result))

    def take(self, ev: Event, result: Any, error: Any, sole: str | None) -> None:
        """Read one more frame into the stream, as `frame_answer` read it (`result`, `error`), with the one
        StreamResponse member its result holds as an object (`sole`, None when it holds none or several)."""
        binding = self.exchange.binding if self.exchange is not None else bindings.JSONRPC
        item = StreamItem(ev, None, binding)
        body: Any = None
        if error is not None:
            item.kind = "error"
            self.errors.append((ev, error))
        elif sole is not None:
            item.kind, body = sole, result[sole]
        self.items.append(item)
        if item.kind is None or item.kind == "error":
            if item.kind is None:
                self.others.append(item)
            return
        if item.kind == "task":
            if self.task is None and len(self.items) == 1:
                self.task, self.task_event = body, ev
            elif self.owners and isinstance(body.get("status"), dict):
                # merged streams: a later stream's Task (a subscription's, a streamed answer's) is a status too
                self.statuses.append((ev, {"taskId": body.get("id"), "contextId": body.get("contextId"),
                                           "status": body["status"]}))
            self._ids(body.get("id"), body.get("contextId"))
            self._held_artifacts(ev, body)
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

    def _held_artifacts(self, ev: Event, task: dict[str, Any]) -> None:
        """The artifacts a Task holds that no chunk has built yet: the Task is the task's current state (A2A
        §3.1.6), so a subscription joining mid-artifact builds on what its Task shows (no chunk counted)."""
        artifacts = task.get("artifacts")
        for art in artifacts if isinstance(artifacts, list) else []:
            if isinstance(art, dict) and isinstance(art.get("artifactId"), str) and art["artifactId"] not in self.artifacts:
                built = self.artifacts[art["artifactId"]] = StreamedArtifact(art["artifactId"])
                built.name = art.get("name") if isinstance(art.get("name"), str) else None
                built.add(art.get("parts") or [])
                built.events.append(ev)

    def _artifact(self, ev: Event, update: dict[str, Any]) -> None:
        art = update.get("artifact")
        if not isinstance(art, dict) or not isinstance(art.get("artifactId"), str):
            return
        aid = art["artifactId"]
        built = self.artifacts.get(aid)
        if built is None:
            built = self.artifacts[aid] = StreamedArtifact(aid)
        elif update.get("append") is not True:
            built.restarts += 1
            built.held, built.chunks = [], 0
        if isinstance(art.get("name"), str):
            built.name = art["name"]
        built.add(art.get("parts") or [])
        built.chunks += 1
        built.last_chunk = update.get("lastChunk") is True
        built.events.append(ev)

    @classmethod
    def merged(cls, streams: Sequence[TaskStream]) -> TaskStream:
        """What the task's several streams (the first, a subscription, a streamed answer) say of it together:
        their frames in arrival order, a frame that several streams carried counted once (as many times as
        the stream that carried it most), so chunks joined across streams build each artifact once. The
        frames keep the exchange that carried them (`evidence`). One stream: that stream."""
        if len(streams) == 1:
            return streams[0]

        def same(item: StreamItem) -> str:  # a copy on another stream differs in its envelope's id only
            return json.dumps(item.result if item.kind is not None else item.event.data, sort_keys=True)

        most: dict[str, int] = {}
        for stream in streams:
            counts: dict[str, int] = {}
            for item in stream.items:
                counts[same(item)] = counts.get(same(item), 0) + 1
            for key, n in counts.items():
                most[key] = max(most.get(key, 0), n)
        timeline = sorted(((item.event.t, i, item, stream.exchange) for i, stream in enumerate(streams)
                           for item in stream.items), key=lambda entry: (entry[0], entry[1]))
        out = cls(exchange=streams[-1].exchange if streams else None)
        taken: dict[str, int] = {}
        for _, _, item, ex in timeline:
            key = same(item)
            if taken.get(key, 0) < most[key]:
                taken[key] = taken.get(key, 0) + 1
                out.owners[id(item.event)] = ex
                out.add(item.event)
        return out

    # -- reading ---------------------------------------------------------------------------------
    def evidence(self, ev: Event, note: str = "") -> dict[str, Any]:
        """One frame of this stream as evidence, named by the exchange that carried it."""
        return ev_evidence(self.owners.get(id(ev), self.exchange), ev, note)

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
        return self.exchange is not None and self.exchange.end == END_CLOSED


# -- frame by frame ------------------------------------------------------------------------------------
# The sequence rules read each frame by the StreamResponse member its result holds first, so that a
# result holding several members is blamed once, by A2A-STREAM-005, and read as its first member elsewhere.

TASK_STREAM_METHODS = (a2a.SEND_STREAMING_MESSAGE, a2a.SUBSCRIBE_TO_TASK)  # the methods that open one
TASK_KINDS = (a2a.TASK, a2a.STATUS_UPDATE, a2a.ARTIFACT_UPDATE)  # what only a task stream carries


class FrameList(Sequence):
    """(event, kind, body) for every data event of an exchange, as a list reads them. It holds the events and
    their facts (framewalk.Facts, read in the one walk over the exchange's frames), and takes a body from the
    event's payload only when asked (see StreamItem): the rules on a whole stream read `facts`."""

    def __init__(self, events: list[Event], facts: list[Any], binding: str = bindings.JSONRPC) -> None:
        self.events = events
        self.facts = facts
        self.binding = binding

    def _frame(self, ev: Event, kind: str | None) -> tuple[Event, str | None, Any]:
        result = bindings.frame_answer(self.binding, ev.payload)[0]
        return ev, kind, result[kind] if kind else result

    def __len__(self) -> int:
        return len(self.events)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._frame(ev, f.kind) for ev, f in zip(self.events[i], self.facts[i])]
        return self._frame(self.events[i], self.facts[i].kind)

    def __iter__(self) -> Iterator[tuple[Event, str | None, Any]]:
        frame = self._frame
        for ev, f in zip(self.events, self.facts):
            yield frame(ev, f.kind)

    @property
    def members(self) -> list[int]:
        """For each frame, how many StreamResponse members its result names (-1: no result at all)."""
        return [f.members for f in self.facts]

    @property
    def kinds(self) -> list[tuple[Event, str | None]]:
        """(event, kind) of every frame, without reading a body."""
        return [(ev, f.kind) for ev, f in zip(self.events, self.facts)]

    def kind(self, i: int) -> str | None:
        return self.facts[i].kind

    def has_kind(self, *kinds: str) -> bool:
        return any(f.kind in kinds for f in self.facts)

    def facts_of(self, *kinds: str) -> Iterator[tuple[Event, Any]]:
        """(event, facts) of the frames of these kinds (no payload read again)."""
        for ev, f in zip(self.events, self.facts):
            if f.kind in kinds:
                yield ev, f

    def of_kind(self, *kinds: str) -> Iterator[tuple[Event, str | None, Any]]:
        """The frames of these kinds only, with their bodies (those frames' payloads read again)."""
        frame = self._frame
        for ev, f in zip(self.events, self.facts):
            if f.kind in kinds:
                yield frame(ev, f.kind)


def read_frames(ex: Exchange) -> FrameList:
    """(event, kind, body) for every data event: kind is the first StreamResponse member the result holds
    (None when it holds none), body that member's object (the whole result when kind is None). Read in the one
    walk over the exchange's frames (framewalk), once per events list."""
    return ex.derived("_frames", lambda: FrameList(ex.data_events(), frame_facts(ex), ex.binding))


@dataclass
class Frames:
    """One task stream, frame by frame (see `read_frames`). `repeats`: the message request this stream's
    SendStreamingMessage repeats, when the stream answered it once (see `answered_once`)."""

    exchange: Exchange
    results: FrameList
    _states: list[tuple[Event, Any]] | None = field(default=None, repr=False)
    repeats: Exchange | None = None

    @property
    def label(self) -> str:
        return self.exchange.label

    def evidence(self, ev: Event, note: str = "") -> dict[str, Any]:
        return ev_evidence(self.exchange, ev, note)

    @property
    def states(self) -> list[tuple[Event, Any]]:
        """Every task state the stream showed (the Task's and each statusUpdate's), in order."""
        if self._states is None:
            self._states = [(ev, f.state) for ev, f in self.results.facts_of(*STATE_KINDS) if f.state]
        return self._states

    @property
    def terminal(self) -> tuple[Event, str] | None:
        """The first terminal state the stream showed, and its frame."""
        return next(((ev, state) for ev, state in self.states if a2a.is_terminal(state)), None)


STATE_KINDS = (a2a.TASK, a2a.STATUS_UPDATE)


def is_task_stream(ex: Exchange, frames: FrameList) -> bool:
    """Whether an event stream answering SendStreamingMessage or SubscribeToTask is a task stream, by
    what it carries, whatever the driver called it: any Task, statusUpdate or artifactUpdate (or no data
    event at all, which a task stream cannot be either). Left out: a message-only answer (§3.1.2 item 1:
    one Message, nothing else) and a refusal (only JSON-RPC errors), which other requirements judge."""
    if ex.rpc_method not in TASK_STREAM_METHODS:
        return False
    if not frames:
        return ex.end not in (END_CLIENT_STOP,)  # a driver that stopped at once saw nothing to judge
    return frames.has_kind(*TASK_KINDS)


# -- a repeated message, answered once ---------------------------------------------------------------------
# One reading, shared by the stream rules (A2A-STREAM-009), A2A-INT-007 and the idempotency rules: a message
# whose messageId the server already took is answered once. By SendMessage the answer to the repeat is the
# first answer's response, the task as it is, or a refusal (IDEM-001); by SendStreamingMessage, the task as it
# is is a stream that carries the Task, as it is, and closes: the repeat starts nothing, so its stream need not
# carry the task on to a terminal state (the first message's streams do).
REPEAT_ANSWERED_ONCE = "a repeated messageId answered once: the Task as it is, then the close"
MESSAGE_METHODS = (a2a.SEND_MESSAGE, a2a.SEND_STREAMING_MESSAGE)


def message_id(ex: Exchange) -> Any:
    """The messageId of a SendMessage or SendStreamingMessage request (None for another request)."""
    params = ex.params if ex.rpc_method in MESSAGE_METHODS else None
    message = params.get("message") if isinstance(params, dict) else None
    return message.get("messageId") if isinstance(message, dict) else None


def task_as_it_is(ex: Exchange, frames: FrameList) -> bool:
    """A stream that carried one data event, a Task, and was closed by the server."""
    return ex.end == END_CLOSED and len(frames) == 1 and frames.kind(0) == a2a.TASK


def answered_once(ex: Exchange, frames: FrameList, log: FrameLog) -> Exchange | None:
    """The message request `ex` (a SendStreamingMessage answered with the Task as it is, then closed)
    repeats: another SendMessage or SendStreamingMessage of the log with the same messageId, sent before
    `ex`'s answer began (so the server may have taken it first: two sent at the same moment may come in
    either order), that the server took with a result, and whose own answer is not such a stream. None when
    `ex` is no such repeat (a message sent later with its messageId repeats `ex`, not the other way)."""
    mid = message_id(ex)
    if ex.rpc_method != a2a.SEND_STREAMING_MESSAGE or not isinstance(mid, str) or not task_as_it_is(ex, frames):
        return None
    answered = ex.t_headers if ex.t_headers is not None else ex.t_sent
    for other in log.exchanges:
        if other is ex or message_id(other) != mid or other.status is None or other.t_sent > answered:
            continue
        read = bindings.read_answer(other)
        repeat_too = other.is_stream and task_as_it_is(other, read_frames(other))
        if read.error is None and read.result is not None and not repeat_too:
            return other
    return None


@dataclass
class StreamFrames:
    """Every task stream the scenario opened (SendStreamingMessage, SubscribeToTask: the first stream, a
    subscription, a streamed answer) that answered with an event stream, frame by frame; a stream that
    cannot be judged (`cannot_judge`), or was not sent (another origin), is `unjudged` instead."""

    streams: list[Frames]
    unjudged: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> StreamFrames:
        streams, unjudged = [], []
        for ex in log.exchanges:
            if ex.rpc_method not in TASK_STREAM_METHODS:
                continue
            if ex.notes.get(NOT_SENT):
                unjudged.append(unjudged_entry(ex, ex.error or "not sent"))
            elif ex.is_stream and ex.status is not None:
                if why := cannot_judge(ex):
                    unjudged.append(unjudged_entry(ex, why))
                elif is_task_stream(ex, frames := read_frames(ex)):
                    streams.append(Frames(ex, frames, repeats=answered_once(ex, frames, log)))
        return cls(streams, unjudged)


# -- the one walk over a stream's frames (framewalk.py says what it reads of each) ------------------------------

def frame_facts(ex: Exchange) -> list[Facts]:
    """One Facts per data event of `ex`, in order: the events are walked once per events list, each parsed once
    (its parse kept only as its exchange's parse budget says), and the exchange's TaskStream is read in the same
    walk (TaskStream.from_exchange gives it)."""
    return ex.derived("_facts", lambda: _walk(ex))


def _walk(ex: Exchange) -> list[Facts]:
    binding, out = ex.binding, []
    alike: dict[str, tuple[Facts, str | None]] = {}
    shared: dict[Facts, Facts] = {}
    stream = TaskStream(exchange=ex)
    answer = bindings.frame_answer
    for ev in ex.data_events():
        value, error = ev.json()
        result, answer_error = answer(binding, value)
        data = ev.data
        key = alike_key(data) if error is None and len(data) <= ALIKE_TEXT else None
        known = alike.get(key) if key is not None else None
        if known is None:
            known = read_facts(binding, value, error, result)
            try:
                known = (shared.setdefault(known[0], known[0]), known[1])
            except TypeError:  # an unhashable id or member value: kept as it is
                pass
            if key is not None and len(alike) < ALIKE_KEPT:
                alike[key] = known
        out.append(known[0])
        stream.take(ev, result, answer_error, known[1])
    ex.derived("_task_stream", lambda: stream)
    return out
