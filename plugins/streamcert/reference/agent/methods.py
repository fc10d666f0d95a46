"""The A2A methods of one hosted agent. A streaming method returns a Stream; app.py writes it as SSE."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...protocols import a2a, interactions_v1, progress_v1
from ..faults import switch
from . import auth
from . import params as p
from .agents import AgentSpec
from .capabilities import Handler, refusals
from .interactions import Admitted, Plain, Replay, admit, refused_but_taken, replay_of
from .listing import list_tasks
from .options import Options
from .player import play
from .push import PushConfigs
from .rpc import RpcError, invalid_params
from .run import Run
from .shapes import status, status_update
from .store import TaskRecord, TaskStore, json_copy


@dataclass
class Stream:
    """What a streaming method answers: an optional first frame, then the task's live events."""

    record: TaskRecord
    queue: asyncio.Queue | None
    first: dict[str, Any] | None
    origin: str = a2a.SEND_STREAMING_MESSAGE  # or SUBSCRIBE_TO_TASK
    answer: bool = False  # opened by a message to a task that exists (an answer, a follow-up)


def _by_json_names(method: str, handler: Handler, options: Options) -> Handler:
    async def read(params: dict[str, Any]) -> Any:
        return await handler(p.json_names(method, params, options))
    return read


def _settled(state: str) -> bool:
    # Blocking SendMessage returns at a terminal or an interrupted state.
    return a2a.is_terminal(state) or a2a.is_interrupted(state)


class Agent:
    def __init__(self, spec: AgentSpec, options: Options, runners: set[asyncio.Task]) -> None:
        self.spec, self.options, self.runners = spec, options, runners
        self.store = TaskStore(options)
        self._before_answer: dict[tuple[str, Any], dict[str, Any]] = {}  # (fault: retry-shows-before)
        operations: dict[str, Handler] = {
            a2a.SEND_MESSAGE: self.send_message,
            a2a.SEND_STREAMING_MESSAGE: self.send_streaming_message,
            a2a.GET_TASK: self.get_task,
            a2a.LIST_TASKS: self.list_tasks,
            a2a.CANCEL_TASK: self.cancel_task,
            a2a.SUBSCRIBE_TO_TASK: self.subscribe_to_task,
            **refusals(options),  # push notifications, the extended card: not declared, refused (§3.3.4)
        }
        # An agent whose card declares pushNotifications: true serves the four operations and takes a config
        # inline in SendMessage; any other ignores an inline one (push.py).
        self.push = PushConfigs(self.store, options, runners)
        if spec.push:
            operations.update(self.push.handlers())
        self.served_card: dict[str, Any] | None = None  # the public card as last served (app.py)
        if self.secured:  # its card declares extendedAgentCard: true (auth.py)
            operations[a2a.GET_EXTENDED_CARD] = self.get_extended_card
        # Every binding's request message is read by JSON names, a field's proto name taken for it (ProtoJSON)
        self.handlers: dict[str, Handler] = {method: _by_json_names(method, handler, options)
                                             for method, handler in operations.items()}

    @property
    def secured(self) -> bool:
        """Whether the agent requires its bearer token (auth.py): /agents/secured, or every agent under --auth."""
        return self.spec.secured or self.options.auth is not None

    async def get_extended_card(self, _params: dict[str, Any]) -> Any:
        if self.served_card is None:  # it extends the public card, which names the URLs the client reached
            raise RpcError(a2a.EXTENDED_CARD_NOT_CONFIGURED, "The extended agent card is made from the public one, "
                                                             "which has not been served yet")
        return auth.extended(self.served_card, self.options)

    # -- receiving a message ------------------------------------------------------------------------

    def _admit(self, params: dict[str, Any]) -> tuple[TaskRecord, dict[str, Any], bool, Plain | Admitted | Replay]:
        """(task, message, is_new, admission): a new task for a message without taskId, else the named
        task, with what the message is to its interactions (an answer, a retry of one, neither)."""
        message = p.message(params, self.options)
        if message.get("taskId"):
            record, admission = self._follow_up(message)
            _break_other_streams(record, self.options)
            return record, message, False, admission
        clock = self.options.clock
        task_id, context_id = _new_ids(message, self.options)
        record = self.store.create(task_id, context_id, status(a2a.SUBMITTED, clock.stamp(clock.now())))
        record.history.append(self._history_copy(message, record))
        return record, message, True, Plain()

    def _follow_up(self, message: dict[str, Any]) -> tuple[TaskRecord, Plain | Admitted | Replay]:
        record = self._task(message["taskId"])
        replay = replay_of(record.interactions, message, self.options)
        if replay is not None:  # a retry of an answer: answered once, not recorded again
            return record, replay
        if a2a.is_terminal(record.state):
            if _takes_answer_to_ended_task(message, self.options):
                return record, Plain()
            if _refuses_answer_to_ended_task_otherwise(message, self.options):
                raise invalid_params(f"Task {record.id} has ended: there is no interaction to answer")
            raise RpcError(a2a.UNSUPPORTED_OPERATION,
                           f"Task {record.id} is in terminal state {record.state}", case="send-terminal")
        given = message.get("contextId")
        # Our choice for a taskId of another context: InvalidParams (-32602), the request contradicts itself.
        if given and given != record.context_id and not CROSS_CONTEXT_ACCEPTED.on(self.options):
            raise invalid_params(f"Task {record.id} belongs to context {record.context_id}, not {given}")
        try:
            admission = admit(record.interactions, message, self.options)
        except RpcError:
            if (taken := refused_but_taken(record.interactions, message, self.options)) is not None:
                record.inbox.put_nowait(taken)  # (fault: wrong-id-taken)
            raise
        if isinstance(admission, Replay):
            return record, admission
        if isinstance(admission, Admitted) and RETRY_SHOWS_BEFORE.on(self.options):
            self._before_answer[record.id, message.get("messageId")] = record.snapshot()
        copy_ = self._history_copy(message, record)
        record.history.append(copy_)
        record.inbox.put_nowait(admission.answer if isinstance(admission, Admitted) else copy_)
        return record, admission

    def _history_copy(self, message: dict[str, Any], record: TaskRecord) -> dict[str, Any]:
        if HISTORY_IDS_MISSING.on(self.options):
            return _without_ids(message)
        copy_ = copy.deepcopy(message)
        return {"messageId": copy_.pop("messageId"), "contextId": record.context_id, "taskId": record.id,
                **{k: v for k, v in copy_.items() if k not in ("taskId", "contextId")}}

    def _start(self, record: TaskRecord, message: dict[str, Any]) -> None:
        runner = asyncio.get_running_loop().create_task(play(record, self.store, self.options, message, self.spec))
        record.runner = runner
        self.runners.add(runner)
        runner.add_done_callback(self.runners.discard)

    def _task(self, task_id: str, case: str | None = None) -> TaskRecord:
        """The task `task_id`, else TaskNotFoundError (`case`: which method asked, for the wrong-code faults)."""
        record = self.store.get(task_id)
        if record is None:
            raise RpcError(a2a.TASK_NOT_FOUND, f"No task with id {task_id!r}", case=case)
        return record

    def _require_streaming(self) -> None:
        if not _streams(self.spec, self.options):
            raise RpcError(a2a.UNSUPPORTED_OPERATION, "This agent does not stream (capabilities.streaming is false)",
                           case="streaming-off")

    # -- methods ------------------------------------------------------------------------------------

    async def send_message(self, params: dict[str, Any]) -> dict[str, Any]:
        config = p.configuration(params)
        history_length = p.history_length(config)
        immediately = p.optional_bool(config, "returnImmediately") or config.get("blocking") is False
        inline = self.push.inline_config(params, self.spec.push)
        record, message, new, admission = self._admit(params)
        if inline is not None:
            self.push.attach(record, inline)
        if isinstance(admission, Replay):
            before = self._before_answer.get((record.id, message.get("messageId")))
            if before is not None:  # (fault: retry-shows-before)
                return {"task": json_copy(before)}
            return json_copy(await asyncio.shield(admission.result))
        queue = self.store.subscribe(record)
        # An answer is taken while the task still shows its pause: wait for it to move on first.
        moved = not isinstance(admission, Admitted)
        try:
            if new:
                self._start(record, message)
            while not immediately and not (moved and _settled(record.state)):
                event = await queue.get()
                moved = moved or "statusUpdate" in event
                if _returns_early(event, self.options):
                    break
        finally:
            self.store.unsubscribe(record, queue)
        response = {"task": record.snapshot(history_length)}
        if isinstance(admission, Admitted) and not admission.result.done():
            admission.result.set_result(json_copy(response))
        return response

    async def send_streaming_message(self, params: dict[str, Any]) -> Stream:
        self._require_streaming()
        inline = self.push.inline_config(params, self.spec.push)
        record, message, new, admission = self._admit(params)
        if inline is not None:
            self.push.attach(record, inline)
        if isinstance(admission, Replay) and _shows_answered_pause(record):
            # A retry while the first answer has not moved the task yet: opened as the first answer's stream is.
            queue = self.store.subscribe(record, TaskOnMove(record, lambda _task: None, _keeps_update(self.options)))
            return Stream(record, queue, None, answer=True)
        if isinstance(admission, Admitted):
            # An answer is taken while the task still shows its pause: its stream opens with the Task as the
            # answer moves it on (a retry by SendMessage gets that Task), never with the pause it answered.
            def taken(task: dict[str, Any]) -> None:
                if not admission.result.done():
                    admission.result.set_result(json_copy(task))

            queue = self.store.subscribe(record, TaskOnMove(record, taken, _keeps_update(self.options)))
            return Stream(record, queue, None, answer=True)
        first = {"task": record.snapshot()}
        queue = self.store.subscribe(record)  # before the player starts, so no event is missed
        if new:
            self._start(record, message)
        return Stream(record, queue, first, answer=not new)

    async def get_task(self, params: dict[str, Any]) -> dict[str, Any]:
        record = self._task(p.task_id(params))
        task = record.snapshot(p.history_length(params))
        return _break_task(task, record, self.options)

    async def list_tasks(self, params: dict[str, Any]) -> dict[str, Any]:
        return _break_listing(list_tasks(self.store, params, self.options), self.options)

    async def cancel_task(self, params: dict[str, Any]) -> dict[str, Any]:
        record = self._task(p.task_id(params), case="cancel-unknown")
        if a2a.is_terminal(record.state):
            raise RpcError(a2a.TASK_NOT_CANCELABLE, f"Task {record.id} is already {record.state}")
        if CANCEL_IGNORED.on(self.options):
            return record.snapshot()
        if record.runner is not None:
            record.runner.cancel()
        Run(record, self.store, self.options).status(a2a.CANCELED)
        return record.snapshot()

    async def subscribe_to_task(self, params: dict[str, Any]) -> Stream:
        self._require_streaming()
        record = self._task(p.task_id(params), case="subscribe-unknown")
        if a2a.is_terminal(record.state):
            if SUBSCRIBE_TERMINAL_STREAMS.on(self.options):
                return Stream(record, None, {"task": record.snapshot()}, a2a.SUBSCRIBE_TO_TASK)
            raise RpcError(a2a.UNSUPPORTED_OPERATION, f"Task {record.id} is already {record.state}",
                           case="subscribe-terminal")
        if SUBSCRIBE_REFUSED.on(self.options):
            raise RpcError(a2a.UNSUPPORTED_OPERATION, "subscriptions are not served here (subscribe-refused fault)")
        first = {"task": record.snapshot()}
        stream = Stream(record, self.store.subscribe(record), first, a2a.SUBSCRIBE_TO_TASK)
        return _break_subscription(stream, self.options)


def _shows_answered_pause(record: TaskRecord) -> bool:
    """The task still shows the pause of an interaction already answered (the answer taken, not yet moved on)."""
    message = record.status.get("message")
    interaction = interactions_v1.interaction_of(message)
    return a2a.is_interrupted(record.state) and interaction is not None and \
        interaction.get("interactionId") in record.interactions.closed


class TaskOnMove(asyncio.Queue):
    """The events of a stream opened by an answer: the status update that moves the task on from its pause
    comes as the Task as it is then (the stream's first frame; `taken` is told it), the rest as they come."""

    def __init__(self, record: TaskRecord, taken: Callable[[dict[str, Any]], None], keep_update: bool = False):
        super().__init__()
        self.record, self.taken, self.keep_update = record, taken, keep_update
        self.moved = False

    def put_nowait(self, result: dict[str, Any]) -> None:
        if not self.moved and "statusUpdate" in result:
            self.moved = True
            task = {"task": self.record.snapshot()}  # the store has just applied the update
            self.taken(task)
            if not self.keep_update:
                result = task
        super().put_nowait(result)


# -- fault variants: what each changes in a method ---------------------------------------------------
CLIENT_IDS = switch("client-ids")
HISTORY_IDS_MISSING = switch("history-ids-missing")
ANSWER_TERMINAL_ACCEPTED = switch("answer-terminal-accepted")
ANSWER_TERMINAL_WRONG_CODE = switch("answer-terminal-wrong-code")
CROSS_CONTEXT_ACCEPTED = switch("cross-context-accepted")
STREAMING_NOT_REFUSED = switch("streaming-not-refused")
STREAM_REFUSED = switch("stream-refused")
HISTORY_LENGTH_IGNORED = switch("history-length-ignored")
PAUSE_MESSAGE_DROPPED_GET = switch("pause-message-dropped-get")
GET_TASK_INTERACTION_DROPPED = switch("get-task-interaction-dropped")
PLAN_STALE_GET = switch("plan-stale-get")
PLAN_TASK_STALE_GET = switch("plan-task-stale-get")
STALE_TASK = switch("stale-task")
WRONG_STATUS_MESSAGE = switch("wrong-status-message")
CANCEL_IGNORED = switch("cancel-ignored")
SUBSCRIBE_TERMINAL_STREAMS = switch("subscribe-terminal-streams")
SUBSCRIBE_NO_TASK = switch("subscribe-no-task")
SECOND_STREAM_DIVERGES = switch("second-stream-diverges")
RETRY_SHOWS_BEFORE = switch("retry-shows-before")
ANSWER_STREAM_STATUS_FIRST = switch("answer-stream-status-first")
MESSAGE_ENDS_STREAMS = switch("message-ends-streams")
LIST_STATUS_MESSAGE_DROPPED = switch("list-status-message-dropped")
SUBSCRIBE_REFUSED = switch("subscribe-refused")
BLOCKING_RETURNS_EARLY = switch("blocking-returns-early")
# message-ends-streams: what a message to a task puts in the queues of its open streams (streams.py ends
# a stream there)
HANG_UP: dict[str, Any] = {"hangUp": True}


def _new_ids(message: dict[str, Any], options: Options) -> tuple[str, str]:
    """The new task's id and, unless the message names one, its context id: minted by the server."""
    if CLIENT_IDS.on(options):  # nothing minted: empty strings
        return "", message.get("contextId") or ""
    clock = options.clock
    return clock.new_id(), message.get("contextId") or clock.new_id()


def _without_ids(message: dict[str, Any]) -> dict[str, Any]:
    """history-ids-missing: the server's copy of the client message, without taskId and contextId."""
    copy_ = copy.deepcopy(message)
    copy_.pop("taskId", None)
    copy_.pop("contextId", None)
    return copy_


def _takes_answer_to_ended_task(message: dict[str, Any], options: Options) -> bool:
    """answer-terminal-accepted: an interactions/v1 answer to an ended task is taken (and changes nothing)."""
    return ANSWER_TERMINAL_ACCEPTED.on(options) and interactions_v1.URI in (message.get("metadata") or {})


def _refuses_answer_to_ended_task_otherwise(message: dict[str, Any], options: Options) -> bool:
    """answer-terminal-wrong-code: an interactions/v1 answer to an ended task is refused with -32602."""
    return ANSWER_TERMINAL_WRONG_CODE.on(options) and interactions_v1.URI in (message.get("metadata") or {})


def _streams(spec: AgentSpec, options: Options) -> bool:
    """Whether the agent streams: as its card says (capabilities.streaming), unless a fault says otherwise."""
    if STREAM_REFUSED.on(options):
        return False
    return spec.streaming or STREAMING_NOT_REFUSED.on(options)


def _break_task(task: dict[str, Any], record: TaskRecord, options: Options) -> dict[str, Any]:
    """What each GetTask fault changes in the Task answered."""
    if HISTORY_LENGTH_IGNORED.on(options):
        task = record.snapshot()
    paused_with_message = a2a.is_interrupted(record.state) and "message" in task["status"]
    if PAUSE_MESSAGE_DROPPED_GET.on(options) and paused_with_message:
        del task["status"]["message"]
    if GET_TASK_INTERACTION_DROPPED.on(options) and paused_with_message:
        task["status"]["message"].pop("metadata", None)
    if PLAN_STALE_GET.on(options) and record.first_plan is not None:
        task["metadata"][progress_v1.URI] = copy.deepcopy(record.first_plan)
    if PLAN_TASK_STALE_GET.on(options) and progress_v1.URI in record.metadata:
        task["status"]["state"] = a2a.WORKING
        task.pop("artifacts", None)
    if STALE_TASK.on(options) and a2a.is_terminal(record.state):
        task["status"]["state"] = a2a.WORKING
    if WRONG_STATUS_MESSAGE.on(options):
        first = next((m for m in record.history if m.get("role") == a2a.ROLE_AGENT), None)
        if first is not None:
            task["status"]["message"] = copy.deepcopy(first)
    return task


def _returns_early(event: dict[str, Any], options: Options) -> bool:
    """blocking-returns-early: a blocking SendMessage returns at the next status update, the task still working."""
    return BLOCKING_RETURNS_EARLY.on(options) and "statusUpdate" in event


def _keeps_update(options: Options) -> bool:
    """answer-stream-status-first: a streamed answer's stream opens with the status update that moves the
    task on, without the Task."""
    return ANSWER_STREAM_STATUS_FIRST.on(options)


def _break_other_streams(record: TaskRecord, options: Options) -> None:
    """message-ends-streams: a message taken on a task (an answer, a retry, a follow-up) ends the task's open
    streams at once, whatever state the task is in."""
    if MESSAGE_ENDS_STREAMS.on(options):
        for queue in record.subscribers:
            queue.put_nowait(HANG_UP)


def _break_listing(listing: dict[str, Any], options: Options) -> dict[str, Any]:
    """list-status-message-dropped: ListTasks leaves out each task's status message."""
    if LIST_STATUS_MESSAGE_DROPPED.on(options):
        for task in listing.get("tasks", []):
            task.get("status", {}).pop("message", None)
    return listing


def _break_subscription(stream: Stream, options: Options) -> Stream:
    """What each SubscribeToTask fault changes in the stream it opens."""
    if SUBSCRIBE_NO_TASK.on(options):
        stream.first = None
    if SECOND_STREAM_DIVERGES.on(options):
        # A fresh copy of the current state (new timestamp, no message): the task stream never carried it.
        fresh = status(stream.record.state, options.clock.stamp(options.clock.now()))
        stream.queue.put_nowait(status_update(stream.record.id, stream.record.context_id, fresh))
    return stream
