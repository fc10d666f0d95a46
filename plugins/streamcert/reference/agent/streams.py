"""Writing a Stream as text/event-stream: one `data:` event per JSON-RPC response, close after terminal.

The correct writer comes first; the stream fault variants follow it, chosen at one point each.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import aclosing
from datetime import timedelta
from typing import Any

from starlette.responses import StreamingResponse

from ...protocols import a2a
from ..faults import switch
from . import rpc
from .clock import format_timestamp, parse_timestamp
from .methods import HANG_UP, Stream
from .options import Options
from .run import Run
from .shapes import artifact_update, event_state, status_update, to_v03
from .store import TaskStore

PING = b": ping\n\n"
Results = AsyncIterator[dict[str, Any] | None]  # None marks a keep-alive


class _Receiver:
    """Reads a subscriber queue; with a keep-alive period, yields None when nothing came in time."""

    def __init__(self, queue: asyncio.Queue, keepalive: float | None) -> None:
        self.queue, self.keepalive = queue, keepalive
        self.pending: asyncio.Future | None = None

    async def next(self) -> dict[str, Any] | None:
        if self.keepalive is None:
            return await self.queue.get()
        if self.pending is None:  # one getter survives timeouts, so no event is ever lost
            self.pending = asyncio.ensure_future(self.queue.get())
        done, _ = await asyncio.wait({self.pending}, timeout=self.keepalive)
        if not done:
            return None
        result, self.pending = self.pending.result(), None
        return result

    def close(self) -> None:
        if self.pending is not None:
            self.pending.cancel()


def results(stream: Stream, store: TaskStore, options: Options) -> Results:
    """The stream's results up to and including the terminal status; None marks a keep-alive.
    At an interrupted state the stream closes, or goes on under the "open" reading of conflict D3. Under
    the close reading a stream that opens on a paused task (a SubscribeToTask at a pause) closes after its
    Task: the task is at an interrupted state (A2A §11.7)."""
    if INTERRUPTED_STREAMS_SILENT.on(options):
        return _quiet_after_pause(stream, _results(stream, store, options.keepalive, close_at_pause=False))
    if MESSAGE_ENDS_STREAMS.on(options):
        return _until_hung_up(_results(stream, store, options.keepalive, close_at_pause=options.d3 == "close"))
    if DISCONNECT_CANCELS.on(options):
        return _cancel_when_left(stream, store, options,
                                 _results(stream, store, options.keepalive, close_at_pause=options.d3 == "close"))
    return _results(stream, store, options.keepalive, close_at_pause=options.d3 == "close")


async def _results(stream: Stream, store: TaskStore, keepalive: float | None, close_at_pause: bool) -> Results:
    receiver = _Receiver(stream.queue, keepalive) if stream.queue is not None else None
    try:
        if stream.first is not None:
            yield stream.first
            if a2a.is_terminal(event_state(stream.first)):
                return
            if close_at_pause and a2a.is_interrupted(event_state(stream.first)):
                return
        while receiver is not None:
            result = await receiver.next()
            yield result
            if result is not None and a2a.is_terminal(event_state(result)):
                return
            if close_at_pause and _is_pause(result):
                return
    finally:
        if receiver is not None:
            receiver.close()
            store.unsubscribe(stream.record, stream.queue)


def _is_pause(result: dict[str, Any] | None) -> bool:
    # A pause is a statusUpdate in an interrupted state (never the first Task of a stream).
    return result is not None and "statusUpdate" in result and a2a.is_interrupted(event_state(result))


# The rpc_id a stream of the HTTP+JSON binding is written with (rest.py): each event's data is the
# StreamResponse itself, with no JSON-RPC envelope (A2A §11.7).
NO_ENVELOPE: Any = object()


def _framed(result: dict[str, Any], rpc_id: Any, options: Options) -> dict[str, Any]:
    """What one event carries: the result in its JSON-RPC response, or (NO_ENVELOPE) the result itself."""
    return dict(result) if rpc_id is NO_ENVELOPE else rpc.response(rpc_id, options, result=result)


def encode(result: dict[str, Any], rpc_id: Any, options: Options) -> bytes:
    """One SSE event: the result in its JSON-RPC response (bare when `rpc_id` is NO_ENVELOPE)."""
    return b"data: " + rpc.dumps(_framed(result, rpc_id, options)) + b"\n\n"


def sse_response(stream: Stream, rpc_id: Any, store: TaskStore, options: Options,
                 headers: dict[str, str]) -> StreamingResponse:
    """The event-stream response of a stream, on either HTTP binding (`rpc_id` NO_ENVELOPE: bare frames)."""
    # Content-Type set by hand: Starlette would append "; charset=utf-8" to a text/ media type.
    headers = {**headers, "content-type": a2a.SSE_MEDIA_TYPE, "cache-control": "no-cache"}
    return StreamingResponse(sse_body(stream, rpc_id, store, options), headers=headers)


def sse_body(stream: Stream, rpc_id: Any, store: TaskStore, options: Options) -> AsyncIterator[bytes]:
    """The stream as SSE: one event per result, a `: ping` comment per keep-alive (with a keep-alive period, one
    before the first event too)."""
    if any(fault.on(options) for fault in WRITER_FAULTS):
        return _broken_sse_body(stream, rpc_id, store, options)
    return _sse_body(stream, rpc_id, store, options)


async def _sse_body(stream: Stream, rpc_id: Any, store: TaskStore, options: Options) -> AsyncIterator[bytes]:
    if options.keepalive is not None:
        yield PING  # as a server that pings on a timer may, before the first event: a comment is no event
    async with aclosing(results(stream, store, options)) as source:
        async for result in source:
            yield PING if result is None else encode(result, rpc_id, options)


async def drained(stream: Stream, store: TaskStore, options: Options) -> dict[str, Any] | None:
    """(faults: no-stream, answer-stream-json) the stream consumed without writing it, and its final Task as the
    answer to write as JSON instead ({"task": …}); None when the stream is to be written as one."""
    if not (NO_STREAM.on(options) or (ANSWER_STREAM_JSON.on(options) and stream.answer)):
        return None
    async with aclosing(results(stream, store, options)) as source:
        async for _ in source:
            pass
    return {"task": stream.record.snapshot()}


# -- fault variants ---------------------------------------------------------------------------------
INTERRUPTED_STREAMS_SILENT = switch("interrupted-streams-silent")
NO_STREAM = switch("no-stream")  # a stream is drained and answered as its final Task, as JSON (both HTTP bindings)
MESSAGE_ENDS_STREAMS = switch("message-ends-streams")
DISCONNECT_CANCELS = switch("disconnect-cancels")
# A SendStreamingMessage to a task that exists (an answer, a follow-up) is answered as JSON (both HTTP bindings).
ANSWER_STREAM_JSON = switch("answer-stream-json")
# What a result says (the task stream's faults leave SubscribeToTask alone).
STATUS_FIRST = switch("status-first")
WRONG_CONTEXT = switch("wrong-context")
TWO_KINDS = switch("two-kinds")
V03_NAMES = switch("v03-names")
# How a result is framed: every frame, or frame 2 of a task stream when it is not the terminal one.
BARE_RESULT = switch("bare-result")
RESULT_AND_ERROR = switch("result-and-error")
BAD_JSON_FRAME = switch("bad-json-frame")
BAD_UTF8 = switch("bad-utf8")
UNTERMINATED_LAST_BLOCK = switch("unterminated-last-block")
# When the stream ends.
CLOSE_EARLY = switch("close-early")
EVENT_AFTER_TERMINAL = switch("event-after-terminal")
NO_CLOSE = switch("no-close")
# What a status carries: the 0.3 final member; a terminal status stamped an hour before it was recorded.
FINAL_FLAG = switch("final-flag")
TERMINAL_STAMPED_EARLY = switch("terminal-stamped-early")
# The task stream sends the Task again after its first status update.
TASK_AGAIN_MID_STREAM = switch("task-again-mid-stream")
WRITER_FAULTS = (STATUS_FIRST, WRONG_CONTEXT, TWO_KINDS, V03_NAMES, BARE_RESULT, RESULT_AND_ERROR, BAD_JSON_FRAME,
                 BAD_UTF8, UNTERMINATED_LAST_BLOCK, CLOSE_EARLY, EVENT_AFTER_TERMINAL, NO_CLOSE, FINAL_FLAG,
                 TERMINAL_STAMPED_EARLY, TASK_AGAIN_MID_STREAM)

OTHER_CONTEXT = "00000000-0000-4000-8000-0000000fffff"  # wrong-context's contextId
EARLY_BY = timedelta(hours=1)  # terminal-stamped-early: how much earlier the terminal status is stamped
# How long no-close holds a stream open after the terminal status. The suite's tolerance is 2 s; a
# client that leaves earlier ends the hold.
NO_CLOSE_HOLD_S = 30.0


async def _until_hung_up(source: Results) -> Results:
    """message-ends-streams: a stream ends, whatever state its task is in, when a message to the task hangs it
    up (methods.HANG_UP)."""
    async with aclosing(source):
        async for result in source:
            if result is HANG_UP:
                return
            yield result


async def _cancel_when_left(stream: Stream, store: TaskStore, options: Options, source: Results) -> Results:
    """disconnect-cancels: a stream its client leaves before the task has ended cancels the task."""
    ended = False
    try:
        async with aclosing(source):
            async for result in source:
                yield result
        ended = True
    finally:
        record = stream.record
        if not ended and not a2a.is_terminal(record.state):
            if record.runner is not None:
                record.runner.cancel()
            Run(record, store, options).status(a2a.CANCELED)


async def _quiet_after_pause(stream: Stream, source: Results) -> Results:
    """interrupted-streams-silent: a stream that has shown a pause, or was opened on a paused task,
    carries nothing more (its opening Task aside) and closes at the end."""
    silent = a2a.is_interrupted(stream.record.state)
    async with aclosing(source):
        async for result in source:
            opening = result is not None and result is stream.first
            if opening or not silent:
                yield result
            silent = silent or _is_pause(result)


async def _broken_sse_body(stream: Stream, rpc_id: Any, store: TaskStore,
                           options: Options) -> AsyncIterator[bytes]:
    """sse_body as the stream-writing faults write it."""
    own = _own(stream)  # these faults break the task stream, not subscribers nor an answer's stream
    index = 0
    async with aclosing(results(stream, store, options)) as source:
        async for result in source:
            if result is None:
                yield PING
                continue
            index += 1
            terminal = a2a.is_terminal(event_state(result))
            yield _broken_event(_shape(result, stream, options), rpc_id, options, last=terminal,
                                damage=own and index == 2 and not terminal)
            if index == 2 and CLOSE_EARLY.on(options):
                return
            if index == 2 and own and not terminal and TASK_AGAIN_MID_STREAM.on(options):
                yield encode({"task": stream.record.snapshot()}, rpc_id, options)
    if own and EVENT_AFTER_TERMINAL.on(options):
        late = artifact_update(stream.record.id, stream.record.context_id,
                               {"artifactId": "late-note", "parts": [{"text": "written after the end"}]},
                               last_chunk=True)
        yield encode(late, rpc_id, options)
    if NO_CLOSE.on(options):
        await asyncio.sleep(NO_CLOSE_HOLD_S)


def _own(stream: Stream) -> bool:
    """The task stream a new task opens with (the one the stream-writing faults break)."""
    return stream.origin == a2a.SEND_STREAMING_MESSAGE and not stream.answer


def _shape(result: dict[str, Any], stream: Stream, options: Options) -> dict[str, Any]:
    """The result as the shape faults write it."""
    own = _own(stream)
    if "statusUpdate" in result and FINAL_FLAG.on(options):
        update = result["statusUpdate"]
        result = {"statusUpdate": {**update, "final": a2a.is_terminal(update["status"]["state"])}}
    if "statusUpdate" in result and TERMINAL_STAMPED_EARLY.on(options) and a2a.is_terminal(event_state(result)):
        update = result["statusUpdate"]
        # an hour before it was recorded: earlier than every status the run saw before it, on every stream
        early = format_timestamp(parse_timestamp(update["status"]["timestamp"]) - EARLY_BY)
        result = {"statusUpdate": {**update, "status": {**update["status"], "timestamp": early}}}
    if "task" in result and own and STATUS_FIRST.on(options):
        task = result["task"]
        result = status_update(task["id"], task["contextId"], task["status"])
    if "statusUpdate" in result and WRONG_CONTEXT.on(options):
        result = {"statusUpdate": {**result["statusUpdate"], "contextId": OTHER_CONTEXT}}
    if "artifactUpdate" in result and TWO_KINDS.on(options):
        result = {**result, "statusUpdate": {"taskId": stream.record.id, "contextId": stream.record.context_id,
                                             "status": stream.record.status}}
    if V03_NAMES.on(options):
        result = to_v03(result)
    return result


def _broken_event(result: dict[str, Any], rpc_id: Any, options: Options, last: bool, damage: bool) -> bytes:
    """One SSE event as the framing faults write it. `damage`: frame 2 of a task stream, not terminal."""
    envelope = dict(result) if BARE_RESULT.on(options) else _framed(result, rpc_id, options)
    if damage and RESULT_AND_ERROR.on(options):
        envelope["error"] = {"code": a2a.INTERNAL_ERROR, "message": "result-and-error fault"}
    data = rpc.dumps(envelope)
    if damage and BAD_JSON_FRAME.on(options):
        data = data[:-1]
    if damage and BAD_UTF8.on(options):
        cut = data.find(b'"text":"') + len(b'"text":"') if b'"text":"' in data else 1
        data = data[:cut] + b"\xff" + data[cut:]
    ending = b"\n" if last and UNTERMINATED_LAST_BLOCK.on(options) else b"\n\n"
    return b"data: " + data + ending
