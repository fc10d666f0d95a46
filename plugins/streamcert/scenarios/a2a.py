"""Drivers for the A2A scenarios (profile `a2a`).

Labels written (read by streamcert.rules):
  card                      GET the agent card
  stream                    SendStreamingMessage carrying the script
  get_task, get_task_h0, get_task_h1
                            GetTask after the stream: no historyLength, 0, 1 (with extensions activated)
  send_1 … send_3           blocking SendMessage creating the tasks that ListTasks must show
  list_context, list_artifacts, list_page1, list_page2, list_status
                            ListTasks: by context, with includeArtifacts, paged by 2, by status
  subscribe, cancel         SubscribeToTask on the running task, then CancelTask
  setup_done, setup_stream  a completed task / a running one for the error cases
  get_unknown, send_unknown, cancel_terminal, send_terminal, subscribe_terminal, unknown_method,
  parse_error, invalid_params, bad_version, cross_context
                            one refused request each (A2A-ERR-)
  card_nostream, setup_nostream, stream_refused, subscribe_refused
                            the agent whose card declares streaming: false
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from ..catalogue import Scenario
from ..framelog import END_ERROR, Event, Exchange, FrameLog
from ..protocols import a2a
from ..protocols.script import SCRIPT_KEY, SCRIPT_VERSION
from ..wire.jsonrpc import A2AClient, Bounds
from . import Target, driver

UNSUPPORTED = "unsupported"  # log.notes key: {requirement id: reason}
UNREACHABLE = "unreachable"  # log.notes key: why the card could not be fetched at all (every requirement ERROR)


def user_message(text: str, *, script: dict[str, Any] | None = None, task_id: str | None = None,
                 context_id: str | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"messageId": str(uuid.uuid4()), "role": a2a.ROLE_USER, "parts": [{"text": text}]}
    if task_id:
        msg["taskId"] = task_id
    if context_id:
        msg["contextId"] = context_id
    if script is not None:
        msg["metadata"] = {SCRIPT_KEY: script}
    return msg


def make_script(name: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"version": SCRIPT_VERSION, "name": name, "steps": steps}


def task_ids(log_or_events: Any) -> tuple[str | None, str | None]:
    """(task id, context id) from the first result that names them."""
    events = log_or_events.data_events() if hasattr(log_or_events, "data_events") else log_or_events
    for ev in events:
        value = ev.payload
        result = value.get("result") if isinstance(value, dict) else None
        if not isinstance(result, dict):
            continue
        if isinstance(result.get("task"), dict):
            t = result["task"]
            return t.get("id"), t.get("contextId")
        for kind in ("statusUpdate", "artifactUpdate"):
            if isinstance(result.get(kind), dict):
                return result[kind].get("taskId"), result[kind].get("contextId")
    return None, None


def unary_task(ex) -> dict[str, Any] | None:
    value, _ = ex.json()
    result = value.get("result") if isinstance(value, dict) else None
    if isinstance(result, dict):
        return result.get("task", result) if "task" in result else result
    return None


def unsupported(log: FrameLog, req_ids: list[str], reason: str) -> None:
    log.notes.setdefault(UNSUPPORTED, {}).update({rid: reason for rid in req_ids})


def note_unreachable(log: FrameLog, card_ex: Exchange) -> None:
    """A card GET that got no HTTP answer: the target is unreachable, not lacking a feature."""
    if card_ex.end == END_ERROR or card_ex.status is None:
        log.notes[UNREACHABLE] = f"GET {card_ex.url}: {card_ex.error or 'no answer'}"


def client_for(target: Target, log: FrameLog, url: str | None = None, stream_limit: float | None = None) -> A2AClient:
    """The A2A client of a run on `target`: its limits, caps, credentials and the origins allowed them."""
    return A2AClient(url or target.a2a_url or "", log,
                     stream_limit=target.stream_limit if stream_limit is None else stream_limit,
                     timeout=target.timeout, headers=target.headers, bounds=Bounds.of(target),
                     allow_origins=target.allow_origins)


async def _open(target: Target, log: FrameLog, url: str | None = None) -> tuple[A2AClient, Any]:
    client = client_for(target, log, url)
    await client.__aenter__()
    card_ex = await client.get_card()
    note_unreachable(log, card_ex)
    card, _ = card_ex.json()
    client.use_card(card)
    return client, card


def declared_extensions(card: Any) -> list[str]:
    caps = card.get("capabilities") if isinstance(card, dict) else None
    exts = caps.get("extensions") if isinstance(caps, dict) else None
    return [e["uri"] for e in exts or [] if isinstance(e, dict) and isinstance(e.get("uri"), str)]


def streaming_declared(card: Any) -> bool:
    caps = card.get("capabilities") if isinstance(card, dict) else None
    return isinstance(caps, dict) and caps.get("streaming") is True


@driver("card")
async def card_only(target: Target, scenario: Scenario, log: FrameLog) -> None:
    client, _ = await _open(target, log)
    await client.__aexit__()


@driver("stream-task")
async def stream_task(target: Target, scenario: Scenario, log: FrameLog) -> None:
    """The seed's story: stream one scripted task to its end, then read it back."""
    client, card = await _open(target, log)
    try:
        if not streaming_declared(card):
            unsupported(log, list(scenario.requirements), "the card does not declare capabilities.streaming: true")
            return
        text = scenario.data.get("prompt", "Run the scenario")
        stream = await client.stream(a2a.SEND_STREAMING_MESSAGE,
                                     {"message": user_message(text, script=scenario.script)}, label="stream")
        task_id, _ = task_ids(stream)
        if not task_id:
            return
        exts = declared_extensions(card)
        await client.call(a2a.GET_TASK, {"id": task_id}, label="get_task", extensions=exts)
        await client.call(a2a.GET_TASK, {"id": task_id, "historyLength": 0}, label="get_task_h0")
        await client.call(a2a.GET_TASK, {"id": task_id, "historyLength": 1}, label="get_task_h1")
    finally:
        await client.__aexit__()


@driver("list-tasks")
async def list_tasks(target: Target, scenario: Scenario, log: FrameLog) -> None:
    """Three tasks in one context (the second fails), then ListTasks every way the spec names."""
    client, _ = await _open(target, log)
    try:
        context_id = None
        for n, script in enumerate(scenario.data["scripts"], start=1):
            ex = await client.call(a2a.SEND_MESSAGE,
                                   {"message": user_message(f"task {n}", script=script, context_id=context_id)},
                                   label=f"send_{n}")
            task = unary_task(ex)
            if not isinstance(task, dict) or not task.get("contextId"):
                return
            context_id = task["contextId"]
        log.notes["context_id"] = context_id
        await client.call(a2a.LIST_TASKS, {"contextId": context_id}, label="list_context")
        await client.call(a2a.LIST_TASKS, {"contextId": context_id, "includeArtifacts": True},
                          label="list_artifacts")
        page1 = await client.call(a2a.LIST_TASKS, {"contextId": context_id, "pageSize": 2}, label="list_page1")
        value, _ = page1.json()
        token = value.get("result", {}).get("nextPageToken") if isinstance(value, dict) else None
        if isinstance(token, str) and token:
            await client.call(a2a.LIST_TASKS, {"contextId": context_id, "pageSize": 2, "pageToken": token},
                              label="list_page2")
        await client.call(a2a.LIST_TASKS, {"contextId": context_id, "status": a2a.FAILED}, label="list_status")
    finally:
        await client.__aexit__()


@driver("cancel-subscribe")
async def cancel_subscribe(target: Target, scenario: Scenario, log: FrameLog) -> None:
    """A long task: a second stream subscribes to it, then the task is canceled; both streams end."""
    client, card = await _open(target, log)
    try:
        if not streaming_declared(card):
            unsupported(log, list(scenario.requirements), "the card does not declare capabilities.streaming: true")
            return
        working = asyncio.Event()

        def on_main(ev: Event) -> None:
            value = ev.payload
            result = value.get("result") if isinstance(value, dict) else None
            if isinstance(result, dict) and isinstance(result.get("statusUpdate"), dict):
                if result["statusUpdate"].get("status", {}).get("state") == a2a.WORKING:
                    working.set()

        main = asyncio.create_task(client.stream(
            a2a.SEND_STREAMING_MESSAGE, {"message": user_message("long task", script=scenario.script)},
            label="stream", on_event=on_main))
        if not await _wait(working, main, target.timeout):
            await main
            return
        task_id, _ = task_ids(log.get("stream"))
        subscribed = asyncio.Event()
        sub = asyncio.create_task(client.stream(a2a.SUBSCRIBE_TO_TASK, {"id": task_id}, label="subscribe",
                                                on_event=lambda ev: subscribed.set()))
        await _wait(subscribed, sub, target.timeout)
        await client.call(a2a.CANCEL_TASK, {"id": task_id}, label="cancel")
        await asyncio.gather(main, sub)
        await client.call(a2a.GET_TASK, {"id": task_id}, label="get_task")
    finally:
        await client.__aexit__()


async def _wait(flag: asyncio.Event, task: asyncio.Task, timeout: float) -> bool:
    """Wait until `flag` is set; False if the task ended first or the timeout passed."""
    waiter = asyncio.create_task(flag.wait())
    done, _ = await asyncio.wait({waiter, task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    return flag.is_set()


@driver("errors")
async def errors(target: Target, scenario: Scenario, log: FrameLog) -> None:
    """One refused request per error the spec names."""
    client, card = await _open(target, log)
    try:
        done = await client.call(a2a.SEND_MESSAGE, {"message": user_message(
            "finish at once", script=scenario.data["done_script"])}, label="setup_done")
        task = unary_task(done) or {}
        done_id, done_ctx = task.get("id"), task.get("contextId")
        unknown = str(uuid.uuid4())
        await client.call(a2a.GET_TASK, {"id": unknown}, label="get_unknown")
        await client.call(a2a.SEND_MESSAGE, {"message": user_message("to nowhere", task_id=unknown)},
                          label="send_unknown")
        if done_id:
            await client.call(a2a.CANCEL_TASK, {"id": done_id}, label="cancel_terminal")
            await client.call(a2a.SEND_MESSAGE, {"message": user_message(
                "after the end", task_id=done_id, context_id=done_ctx)}, label="send_terminal")
            if streaming_declared(card):
                await client.stream(a2a.SUBSCRIBE_TO_TASK, {"id": done_id}, label="subscribe_terminal",
                                    limit=min(target.stream_limit, 5.0))
            else:
                unsupported(log, ["A2A-ERR-005"], "the card does not declare capabilities.streaming: true")
        await client.call("tasks/frobnicate", {}, label="unknown_method")
        await client.call(a2a.GET_TASK, None, label="parse_error", raw_body=b'{"jsonrpc": "2.0", "id": 7, "method": ')
        await client.call(a2a.SEND_MESSAGE, {}, label="invalid_params")
        await client.call(a2a.GET_TASK, {"id": done_id or unknown}, label="bad_version", version="99.0")
        if streaming_declared(card):
            # A task that is still running, for a message that names it with another context.
            setup = await client.stream(a2a.SEND_STREAMING_MESSAGE, {"message": user_message(
                "stay busy", script=scenario.data["busy_script"])}, label="setup_stream",
                until=lambda ev: True)
            busy_id, busy_ctx = task_ids(setup)
            if busy_id:
                await client.call(a2a.SEND_MESSAGE, {"message": user_message(
                    "wrong context", task_id=busy_id, context_id=f"{busy_ctx}-other")}, label="cross_context")
                await client.call(a2a.CANCEL_TASK, {"id": busy_id}, label="cleanup_cancel")
        else:
            unsupported(log, ["A2A-ERR-010"], "needs a running task, started here with a stream")
    finally:
        await client.__aexit__()


@driver("no-streaming")
async def no_streaming(target: Target, scenario: Scenario, log: FrameLog) -> None:
    """An agent whose card says streaming: false must refuse both streaming methods."""
    url = target.nostream_url
    if not url:
        client, card = await _open(target, log)
        await client.__aexit__()
        if streaming_declared(card):
            unsupported(log, list(scenario.requirements),
                        "the target declares streaming: true and no agent without streaming was given "
                        "(--sut-nostream-url)")
            return
        url = target.a2a_url
    client = client_for(target, log, url or "", stream_limit=min(target.stream_limit, 5.0))
    async with client:
        card_ex = await client.get_card(label="card_nostream")
        note_unreachable(log, card_ex)
        card, _ = card_ex.json()
        client.use_card(card)
        if streaming_declared(card):
            unsupported(log, list(scenario.requirements), f"the agent at {url} declares streaming: true")
            return
        setup = await client.call(a2a.SEND_MESSAGE, {"message": user_message(
            "finish at once", script=scenario.data["done_script"])}, label="setup_nostream")
        task = unary_task(setup) or {}
        await client.stream(a2a.SEND_STREAMING_MESSAGE, {"message": user_message(
            "please stream", script=scenario.script)}, label="stream_refused")
        await client.stream(a2a.SUBSCRIBE_TO_TASK, {"id": task.get("id") or str(uuid.uuid4())},
                            label="subscribe_refused")
