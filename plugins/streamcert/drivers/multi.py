"""The driver of the scenario with several clients on one task (profile `a2a`, rules/a2a/multistream.py).

Client A streams the scripted task. Once it works, client B subscribes to it twice: the first subscription
is held to the end, the second is closed by the client after its first event. Once the task has moved on
(a later status on a stream still open), client B sends the task a second message with a blocking
SendMessage (`returnImmediately: false`): it returns when the task pauses at the script's question. Client A
answers the question by SendStreamingMessage, whose stream carries the task to its end (whichever reading
of D3 the server takes, a stream does), and GetTask reads it back once every stream has ended.

Labels written:
  card          GET the agent card
  stream        SendStreamingMessage carrying the script (client A)
  subscribe_1   SubscribeToTask held to the end (client B)
  subscribe_2   SubscribeToTask the client closes after its first event (client B)
  follow_up     a second message to the working task: blocking SendMessage (client B)
  answer        the answer to the question, by SendStreamingMessage (client A), when the task paused
  get_task      GetTask once every stream has ended
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..catalogue import Scenario
from ..contract.labels.a2a import ANSWER, FOLLOW_UP, GET_TASK, STREAM, SUBSCRIBE_1, SUBSCRIBE_2
from ..framelog import Event, FrameLog
from ..protocols import a2a, bindings
from ..wire.clients import client_for
from . import Target, driver
from .a2a import _open, _wait, streaming_declared, task_ids, unary_task, unsupported, user_message


class Watch:
    """The status updates the held streams carried, counted as they arrive."""

    def __init__(self, binding: str) -> None:
        self.binding = binding
        self.updates = 0
        self.moved = asyncio.Event()  # the first status update arrived
        self.again = asyncio.Event()  # a second status update arrived: the task moved on

    def on_event(self, ev: Event) -> None:
        result = bindings.frame_answer(self.binding, ev.payload)[0]
        if isinstance(result, dict) and isinstance(result.get("statusUpdate"), dict):
            self.updates += 1
            (self.moved if self.updates == 1 else self.again).set()


@driver("multi-client")
async def multi_client(target: Target, scenario: Scenario, log: FrameLog) -> None:
    a, card = await _open(target, log)
    b = client_for(target, log, clock=a.clock)  # one clock: the two clients' arrival times are compared
    await b.__aenter__()
    b.use_card(card)
    held: list[asyncio.Task] = []
    try:
        if not streaming_declared(card):
            unsupported(log, list(scenario.requirements), "the card does not declare capabilities.streaming: true")
            return
        watch = Watch(a.binding)
        main = asyncio.create_task(a.stream(a2a.SEND_STREAMING_MESSAGE, {"message": user_message(
            scenario.data.get("prompt", "Two clients watch this task"), script=scenario.script)},
            label=STREAM, on_event=watch.on_event))
        held.append(main)
        task_id = context_id = None
        if await _wait(watch.moved, main, target.timeout):
            task_id, context_id = task_ids(log.get(STREAM))
        if not task_id:  # the stream showed no task at work: nothing to watch, it is judged as it came
            await main
            return
        opened = asyncio.Event()
        sub = asyncio.create_task(b.stream(a2a.SUBSCRIBE_TO_TASK, {"id": task_id}, label=SUBSCRIBE_1,
                                           on_event=lambda ev: opened.set()))
        held.append(sub)
        await _wait(opened, sub, target.timeout)
        # One subscriber leaves at once: the task and the other streams go on without it.
        await b.stream(a2a.SUBSCRIBE_TO_TASK, {"id": task_id}, label=SUBSCRIBE_2, until=lambda ev: not ev.is_comment)
        await _until(watch.again, (main, sub), target.timeout)
        follow = await b.call(a2a.SEND_MESSAGE, {
            "message": user_message("A second client adds a note", task_id=task_id, context_id=context_id),
            "configuration": {"returnImmediately": False}}, label=FOLLOW_UP)
        if _paused(unary_task(follow)):
            held.append(asyncio.create_task(a.stream(a2a.SEND_STREAMING_MESSAGE, {"message": user_message(
                scenario.data.get("answer", "main"), task_id=task_id, context_id=context_id)}, label=ANSWER)))
        await asyncio.gather(*held)
        held.clear()
        await a.call(a2a.GET_TASK, {"id": task_id}, label=GET_TASK)
    finally:
        for task in held:  # an early return leaves none open behind it
            task.cancel()
        await asyncio.gather(*held, return_exceptions=True)
        await b.__aexit__()
        await a.__aexit__()


async def _until(flag: asyncio.Event, tasks: tuple[asyncio.Task, ...], timeout: float) -> None:
    """Wait until `flag` is set, one of `tasks` has ended, or the timeout has passed."""
    waiter = asyncio.create_task(flag.wait())
    await asyncio.wait({waiter, *tasks}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()


def _paused(task: Any) -> bool:
    status = task.get("status") if isinstance(task, dict) else None
    return isinstance(status, dict) and a2a.is_interrupted(status.get("state"))
