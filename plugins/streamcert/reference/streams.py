"""Writing a Stream as text/event-stream: one `data:` event per JSON-RPC response, close after terminal.

The stream fault variants are applied here, each in one place.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from .. import a2a
from . import rpc
from .methods import Stream
from .options import NO_CLOSE_HOLD_S, Options
from .shapes import artifact_update, event_state, status_update, to_v03
from .store import TaskStore

PING = b": ping\n\n"
OTHER_CONTEXT = "00000000-0000-4000-8000-0000000fffff"  # for the wrong-context fault


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


async def results(stream: Stream, store: TaskStore, options: Options) -> AsyncIterator[dict[str, Any] | None]:
    """The stream's results up to and including the terminal status; None marks a keep-alive."""
    receiver = _Receiver(stream.queue, options.keepalive) if stream.queue is not None else None
    # The interrupted-streams-silent fault: after a pause (or opened on a paused task) a stream goes quiet.
    quiet_after_pause = options.has("interrupted-streams-silent")
    closes_at_pause = options.d3 == "close" and not quiet_after_pause  # D3: the "close" reading
    silent = quiet_after_pause and a2a.is_interrupted(stream.record.state)
    try:
        if stream.first is not None:
            yield stream.first
            if a2a.is_terminal(event_state(stream.first)):
                return
        while receiver is not None:
            result = await receiver.next()
            if not silent:
                yield result
            if result is not None and a2a.is_terminal(event_state(result)):
                return
            # A pause is a statusUpdate in an interrupted state (never the first Task of a stream).
            paused = result is not None and "statusUpdate" in result and a2a.is_interrupted(event_state(result))
            if paused and closes_at_pause:
                return
            silent = silent or (paused and quiet_after_pause)
    finally:
        if receiver is not None:
            receiver.close()
            store.unsubscribe(stream.record, stream.queue)


def _shape(result: dict[str, Any], stream: Stream, options: Options) -> dict[str, Any]:
    """The result as this server variant writes it (the correct server: unchanged)."""
    own = stream.origin == a2a.SEND_STREAMING_MESSAGE  # the task stream faults leave SubscribeToTask alone
    if "task" in result and own and options.has("status-first"):
        task = result["task"]
        result = status_update(task["id"], task["contextId"], task["status"])
    if "statusUpdate" in result and options.has("wrong-context"):
        result = {"statusUpdate": {**result["statusUpdate"], "contextId": OTHER_CONTEXT}}
    if "artifactUpdate" in result and options.has("two-kinds"):
        result = {**result, "statusUpdate": {"taskId": stream.record.id, "contextId": stream.record.context_id,
                                             "status": stream.record.status}}
    if options.has("v03-names"):
        result = to_v03(result)
    return result


def encode(result: dict[str, Any], rpc_id: Any, options: Options, index: int, last: bool,
           damage: bool = False) -> bytes:
    """One SSE event. `damage`: this frame may be broken by the frame faults (frame 2 of a task stream)."""
    envelope = result if options.has("bare-result") else rpc.response(rpc_id, options, result=result)
    if damage and options.has("result-and-error"):
        envelope["error"] = {"code": a2a.INTERNAL_ERROR, "message": "result-and-error fault"}
    data = rpc.dumps(envelope)
    if damage and options.has("bad-json-frame"):
        data = data[:-1]
    if damage and options.has("bad-utf8"):
        cut = data.find(b'"text":"') + len(b'"text":"') if b'"text":"' in data else 1
        data = data[:cut] + b"\xff" + data[cut:]
    ending = b"\n" if last and options.has("unterminated-last-block") else b"\n\n"
    return b"data: " + data + ending


async def sse_body(stream: Stream, rpc_id: Any, store: TaskStore, options: Options) -> AsyncIterator[bytes]:
    index = 0
    own = stream.origin == a2a.SEND_STREAMING_MESSAGE  # frame faults break the task stream, not subscribers
    async with aclosing(results(stream, store, options)) as source:
        async for result in source:
            if result is None:
                yield PING
                continue
            index += 1
            terminal = a2a.is_terminal(event_state(result))
            last = terminal and not (own and options.has("event-after-terminal"))
            damage = own and index == 2 and not terminal
            yield encode(_shape(result, stream, options), rpc_id, options, index, last, damage)
            if index == 2 and options.has("close-early"):
                return
    if own and options.has("event-after-terminal"):
        late = artifact_update(stream.record.id, stream.record.context_id,
                               {"artifactId": "late-note", "parts": [{"text": "written after the end"}]},
                               last_chunk=True)
        yield encode(late, rpc_id, options, index + 1, last=True)
    if options.has("no-close"):
        await asyncio.sleep(NO_CLOSE_HOLD_S)


async def drain(stream: Stream, store: TaskStore, options: Options) -> None:
    """Consume a stream without writing it (the `no-stream` fault answers JSON at the end)."""
    async with aclosing(results(stream, store, options)) as source:
        async for _ in source:
            pass
