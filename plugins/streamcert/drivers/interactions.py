"""The driver of the interrupted-state scenarios (profile `interactions`: A2A-INT-, IX-, IDEM-).

One scripted task pauses one or more times (ask, call, connect). At each pause the driver reads the
task back, opens a second stream on it (SubscribeToTask) before answering, so whichever reading of D3
the server takes, a stream carries the task on: the first stream if it stays open, the new one if
it closed at the pause. Then it does what the scenario's `pauses` list says and answers with a
blocking SendMessage.

Scenario data: `extension` (activate interactions/v1, default true), `prompt`, `sentinel` (a string
the script puts in a call's args), `pauses`: [{"answer": SPEC, "via": "send" | "stream", "before":
[ACTION…], "after": [ACTION…], "concurrent": bool, "activate": bool}], `after_end`: ["answer_terminal"].
`activate` (a run without the extension): this answer alone goes with interactions/v1 activated, as a
client does to answer what plain text cannot (an approval: text never approves). SPEC: {"value": V}
| {"approved": B} (through the extension) | {"text": T} | {"data": V} (a plain reply).
ACTIONs: text_reply, retry_prev, reuse_prev, wrong_id, stale (before an answer); retry (after it).

Answers go both ways a client sends them: by SendMessage ("via": "send", the default) and by
SendStreamingMessage on the same taskId ("via": "stream", as the official SDK's client resumes). An
answer also goes streamed when every stream has ended at the pause (the close reading of D3 for the
task stream and for the subscription): its own stream is then the one that carries the task on. A
streamed answer's retry (after) is sent by SendMessage while that stream is open.

Labels written (read by streamcert.rules.interactions.interactions and .idempotency):
  card, stream                  the card; SendStreamingMessage carrying the script
  get_pause_N, list_pause_N     GetTask / ListTasks (by contextId) at pause N (1-based)
  subscribe_N                   SubscribeToTask opened at pause N, before its answer (and before GetTask); none
                                after a subscription that carried nothing, not even its first event, until the
                                stream limit cut it (notes `silent_subscription`: its label): that one shows it,
                                and each later pause would wait the limit out again for nothing
  text_reply_N, get_after_text_N      a plain text reply at pause N, then GetTask
  retry_M, reuse_M              answer M sent again: same messageId and body / same messageId, other body
  get_after_retry_N             GetTask right after retry_M (M = N-1) at pause N
  wrong_id_N, stale_N           an answer naming no interaction / the interaction of pause N-1
  get_after_wrong_id_N, get_after_stale_N   GetTask right after each of them
  answer_N, answer_N_twin       the answer to pause N (the twin: the same request at the same moment): a
                                SendMessage, or a SendStreamingMessage (its stream carries the task on)
  get_ix_N                      GetTask with the extension activated, for an `activate` answer's interactionId
                                when a client without the extension was not shown it
  get_final, answer_terminal    GetTask after the streams ended; an answer to the ended task
log.notes: "interactions": {"extension": bool, "sentinel": str|None, "pauses": [{"stream": label,
"interactionId": id|None}], "activated": [label…] (requests sent with the extension in a run without it),
and "silent_subscription": label, when there was one}.
"""

from __future__ import annotations

import asyncio
import copy
import uuid
from typing import Any

from ..catalogue import Scenario
from ..contract.interactions import ACTIVATED, EXTENSION, INTERACTIONS, PAUSES, SENTINEL, SILENT_SUBSCRIPTION
from ..contract.labels.a2a import ANSWER_PREFIX, STREAM
from ..contract.labels.interactions import (
    ANSWER_TERMINAL,
    GET_AFTER_PREFIX,
    GET_AFTER_RETRY_PREFIX,
    GET_AFTER_TEXT_PREFIX,
    GET_FINAL,
    GET_IX_PREFIX,
    GET_PAUSE_PREFIX,
    LIST_PAUSE_PREFIX,
    RETRY_PREFIX,
    REUSE_PREFIX,
    STALE_PREFIX,
    SUBSCRIBE_PREFIX,
    TEXT_REPLY_PREFIX,
    TWIN_SUFFIX,
    WRONG_ID_PREFIX,
)
from ..framelog import END_TIME_LIMIT, Event, FrameLog
from ..protocols import a2a, bindings
from ..protocols.interactions_v1 import URI, interaction_of, status_key
from . import Target, driver
from .a2a import _open, declared_extensions, streaming_declared, unsupported, user_message

EXTENSION_PREFIXES = ("IX-", "IDEM-")
STREAMED = "stream"  # a pause's "via": its answer goes by SendStreamingMessage (else by SendMessage)


def _result(ev: Event, binding: str) -> dict[str, Any] | None:
    result = bindings.frame_answer(binding, ev.payload)[0]
    return result if isinstance(result, dict) else None


class Feed:
    """Events of every stream the driver has open, in arrival order, tagged with the stream's label."""

    def __init__(self, binding: str = bindings.JSONRPC) -> None:
        self.binding = binding  # how the frames are read
        self.queue: asyncio.Queue = asyncio.Queue()
        self.tasks: dict[str, asyncio.Task] = {}
        self.first: dict[str, asyncio.Event] = {}
        self.task: dict[str, Any] | None = None  # the first Task a stream carried: its ids are the task's

    def on_event(self, label: str):
        def put(ev: Event) -> None:
            self.first[label].set()
            self.queue.put_nowait((label, ev))
        return put

    def start(self, label: str, make) -> None:
        self.first[label] = asyncio.Event()
        task = asyncio.create_task(make(self.on_event(label)))
        task.add_done_callback(lambda _t: (self.first[label].set(), self.queue.put_nowait((label, None))))
        self.tasks[label] = task

    async def next_pause(self, seen: set) -> tuple[str, dict[str, Any]] | None:
        """The next interrupted statusUpdate not seen before, on any stream; None when all have ended."""
        while True:
            if self.queue.empty() and all(t.done() for t in self.tasks.values()):
                return None
            label, ev = await self.queue.get()
            result = _result(ev, self.binding) if ev is not None else None
            if result and isinstance(result.get("task"), dict) and self.task is None:
                self.task = result["task"]
            update = result.get("statusUpdate") if result else None
            status = update.get("status") if isinstance(update, dict) else None
            if isinstance(status, dict) and a2a.is_interrupted(status.get("state")):
                key = status_key(status)
                if key not in seen:
                    seen.add(key)
                    return label, update

    async def finish(self) -> None:
        if self.tasks:
            await asyncio.gather(*self.tasks.values(), return_exceptions=True)


def answer_message(spec: dict[str, Any], task_id: str, context_id: str | None,
                   interaction_id: str | None) -> dict[str, Any]:
    """The answer as seed 004 shows it (extension metadata and a data part), or a plain reply."""
    message: dict[str, Any] = {"messageId": f"answer-{uuid.uuid4()}", "role": a2a.ROLE_USER, "taskId": task_id}
    if context_id:
        message["contextId"] = context_id
    if "text" in spec:
        message["parts"] = [{"text": spec["text"]}]
    elif "data" in spec:
        message["parts"] = [{"data": spec["data"], "mediaType": "application/json"}]
    else:
        key = "approved" if "approved" in spec else "value"
        message["parts"] = [{"data": {key: spec[key]}, "mediaType": "application/json"}]
        message["extensions"] = [URI]
        message["metadata"] = {URI: {"interactionId": interaction_id, key: spec[key]}}
    return message


@driver("interactions")
async def interactions(target: Target, scenario: Scenario, log: FrameLog) -> None:
    data = scenario.data
    use_ext = data.get("extension", True)
    client, card = await _open(target, log)
    try:
        if not streaming_declared(card):
            unsupported(log, list(scenario.requirements), "the card does not declare capabilities.streaming: true")
            return
        if URI not in declared_extensions(card):
            ids = list(scenario.requirements) if use_ext else [
                r for r in scenario.requirements if r.startswith(EXTENSION_PREFIXES)]
            unsupported(log, ids, f"the card does not declare the {URI} extension (capabilities.extensions)")
            if use_ext:
                return
        await _play(client, target, scenario, log, [URI] if use_ext else [])
    finally:
        await client.__aexit__()


async def _play(client, target: Target, scenario: Scenario, log: FrameLog, exts: list[str]) -> None:
    data = scenario.data
    notes: dict[str, Any] = {EXTENSION: bool(exts), SENTINEL: data.get("sentinel"), PAUSES: [], ACTIVATED: []}
    log.notes[INTERACTIONS] = notes
    feed = Feed(client.binding)
    first = user_message(data.get("prompt", "Run the scenario"), script=scenario.script)
    feed.start(STREAM, lambda cb: client.stream(a2a.SEND_STREAMING_MESSAGE, {"message": first}, label=STREAM,
                                                  extensions=exts, on_event=cb))
    seen: set = set()
    sent: dict[int, dict[str, Any]] = {}  # answer N's message
    opened: dict[int, str | None] = {}  # interaction id of pause N
    task_id = context_id = None
    for n, pause in enumerate(data.get("pauses", []), start=1):
        found = await feed.next_pause(seen)
        if found is None:
            break
        label, update = found
        task_id, context_id = update.get("taskId"), update.get("contextId")
        if feed.task is not None:  # the Task's own ids, when the stream began with it
            task_id, context_id = feed.task.get("id") or task_id, feed.task.get("contextId") or context_id
        status = update.get("status")
        interaction = interaction_of(status.get("message") if isinstance(status, dict) else None) or {}
        opened[n] = interaction.get("interactionId") if isinstance(interaction.get("interactionId"), str) else None
        notes[PAUSES].append({"stream": label, "interactionId": opened[n]})
        if SILENT_SUBSCRIPTION not in notes:
            sub = f"{SUBSCRIBE_PREFIX}{n}"
            feed.start(sub, lambda cb, sub=sub, tid=task_id: client.stream(a2a.SUBSCRIBE_TO_TASK, {"id": tid},
                                                                           label=sub, extensions=exts, on_event=cb))
            await feed.first[sub].wait()
            reading = feed.tasks[sub]
            done = reading.done() and not reading.cancelled() and reading.exception() is None
            ex = reading.result() if done else None
            if getattr(ex, "end", None) == END_TIME_LIMIT and not ex.data_events():
                # The server's subscription carried nothing until the stream limit cut it (not even the Task it
                # starts with): that is shown, and the later pauses would only wait the limit out again.
                notes[SILENT_SUBSCRIPTION] = sub
        await client.call(a2a.GET_TASK, {"id": task_id}, label=f"{GET_PAUSE_PREFIX}{n}", extensions=exts)
        await client.call(a2a.LIST_TASKS, {"contextId": context_id}, label=f"{LIST_PAUSE_PREFIX}{n}", extensions=exts)
        await _before(client, pause.get("before", []), n, task_id, context_id, opened, sent, exts)
        answer_exts = exts
        if pause.get("activate") and not exts:
            answer_exts = [URI]
            if opened[n] is None:
                opened[n] = await _interaction_id(client, task_id, f"{GET_IX_PREFIX}{n}", notes)
        message = answer_message(pause["answer"], task_id, context_id, opened[n])
        sent[n] = message
        twins = [message, copy.deepcopy(message)] if pause.get("concurrent") else [message]
        labels = [f"{ANSWER_PREFIX}{n}", f"{ANSWER_PREFIX}{n}{TWIN_SUFFIX}"][:len(twins)]
        if answer_exts != exts:
            notes[ACTIVATED] += labels
        if pause.get("via") == STREAMED or all(t.done() for t in feed.tasks.values()):
            # Streamed: as the scenario says, or because every stream has ended (the close reading of D3,
            # a subscription closed or refused at the pause): the answer's own stream carries the task on.
            for m, lab in zip(twins, labels):
                feed.start(lab, lambda cb, m=m, lab=lab, exts_=answer_exts: client.stream(
                    a2a.SEND_STREAMING_MESSAGE, {"message": m}, label=lab, extensions=exts_, on_event=cb))
            await asyncio.gather(*(feed.first[lab].wait() for lab in labels))
        else:
            await asyncio.gather(*(client.call(a2a.SEND_MESSAGE, {"message": m}, label=lab, extensions=answer_exts)
                                   for m, lab in zip(twins, labels)))
        if "retry" in pause.get("after", []):
            await client.call(a2a.SEND_MESSAGE, {"message": copy.deepcopy(message)}, label=f"{RETRY_PREFIX}{n}",
                              extensions=exts)
    await feed.finish()
    if task_id is None:
        return
    await client.call(a2a.GET_TASK, {"id": task_id}, label=GET_FINAL, extensions=exts)
    if "answer_terminal" in data.get("after_end", []) and sent:
        last = max(sent)
        spec = data["pauses"][last - 1]["answer"]
        await client.call(a2a.SEND_MESSAGE, {"message": answer_message(spec, task_id, context_id, opened.get(last))},
                          label=ANSWER_TERMINAL, extensions=exts)


async def _interaction_id(client, task_id: str, label: str, notes: dict[str, Any]) -> str | None:
    """The open interaction's id, read by GetTask with the extension activated."""
    notes[ACTIVATED].append(label)
    ex = await client.call(a2a.GET_TASK, {"id": task_id}, label=label, extensions=[URI])
    result = bindings.read_answer(ex).result
    task = result.get("task", result) if isinstance(result, dict) else None
    status = task.get("status") if isinstance(task, dict) else None
    iid = (interaction_of(status.get("message")) or {}).get("interactionId") if isinstance(status, dict) else None
    return iid if isinstance(iid, str) else None


async def _before(client, actions: list[str], n: int, task_id: str, context_id: str | None,
                  opened: dict[int, str | None], sent: dict[int, dict[str, Any]], exts: list[str]) -> None:
    """The requests a scenario makes at pause N before answering it."""
    def send(message: dict[str, Any], label: str):
        return client.call(a2a.SEND_MESSAGE, {"message": message}, label=label, extensions=exts)

    for action in actions:
        if action == "text_reply":
            await send(answer_message({"text": "Yes, go ahead."}, task_id, context_id, None), f"{TEXT_REPLY_PREFIX}{n}")
            await client.call(a2a.GET_TASK, {"id": task_id}, label=f"{GET_AFTER_TEXT_PREFIX}{n}", extensions=exts)
        elif action == "retry_prev" and n - 1 in sent:
            await send(copy.deepcopy(sent[n - 1]), f"{RETRY_PREFIX}{n - 1}")
            await client.call(a2a.GET_TASK, {"id": task_id}, label=f"{GET_AFTER_RETRY_PREFIX}{n}", extensions=exts)
        elif action == "reuse_prev" and n - 1 in sent:
            other = copy.deepcopy(sent[n - 1])
            other["parts"] = [{"data": {"value": "a different answer"}, "mediaType": "application/json"}]
            other["metadata"][URI] = {**other["metadata"][URI], "value": "a different answer"}
            await send(other, f"{REUSE_PREFIX}{n - 1}")
        elif action == "wrong_id":
            await send(answer_message({"value": "to nothing"}, task_id, context_id,
                                      f"ix-not-an-interaction-{uuid.uuid4()}"), f"{WRONG_ID_PREFIX}{n}")
            await client.call(a2a.GET_TASK, {"id": task_id}, label=f"{GET_AFTER_PREFIX}{WRONG_ID_PREFIX}{n}",
                              extensions=exts)
        elif action == "stale" and n - 1 in opened:
            await send(answer_message({"value": "too late"}, task_id, context_id, opened[n - 1]), f"{STALE_PREFIX}{n}")
            await client.call(a2a.GET_TASK, {"id": task_id}, label=f"{GET_AFTER_PREFIX}{STALE_PREFIX}{n}", extensions=exts)
