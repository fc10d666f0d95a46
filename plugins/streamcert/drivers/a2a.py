"""Drivers for the A2A scenarios (profile `a2a`).

Labels written (read by streamcert.rules):
  card                      GET the agent card
  card_revalidated          GET the agent card again, with its ETag in If-None-Match (else its Last-Modified)
  stream                    SendStreamingMessage carrying the script
  get_task, get_task_h0, get_task_h1
                            GetTask after the stream: no historyLength, 0, 1 (with extensions activated)
  send_1 … send_3           blocking SendMessage creating the tasks that ListTasks must show
  list_context, list_artifacts, list_page1, list_page2, list_status
                            ListTasks: by context, with includeArtifacts, paged by 2, by status
  subscribe, cancel         SubscribeToTask on the running task, then CancelTask
  setup_done, setup_stream  a completed task / a running one for the error cases
  get_unknown, send_unknown, cancel_unknown, subscribe_unknown, cancel_terminal, send_terminal,
  subscribe_terminal, unknown_method, parse_error, invalid_params, bad_version, cross_context
                            one refused request each (A2A-ERR-)
  msg_no_role, msg_no_parts, msg_empty_parts, msg_no_message_id, msg_unknown_role, list_refused
                            messages without their required fields, then ListTasks of their context
  patch_version             GetTask with A2A-Version: 1.0.1
  no_version, empty_version GetTask without A2A-Version, and with it empty (read as 0.3)
  push_create, push_get, push_list, push_delete, extended_card
                            the operations of capabilities the card does not declare (A2A-ERR-013/014)
  unknown_member, unknown_member_get
                            SendMessage whose message has a member no Message has, then GetTask of its task
  invalid_jsonrpc, invalid_no_method, invalid_id_bool, invalid_id_object, notify_get, notify_unknown
                            invalid Request objects and notifications, sent as raw bodies (WIRE-008/009)
  id_stream                 a whole stream whose request id is "" (every request of `errors` takes its id
                            from ID_FORMS in turn)
  list_after                ListTasks with statusTimestampAfter: the status timestamp of a listed task
  send_other                a task in a context of its own, made before send_1
  list_proto_name           ListTasks with contextId named by its proto field name, context_id (not on gRPC)
  list_size_over, list_size_under
                            ListTasks with pageSize 150 and 0 (a2a.proto: 1 to 100)
  card_nostream, setup_nostream, stream_refused, subscribe_refused
                            the agent whose card declares streaming: false
  card_required, ext_not_activated
                            the agent whose card marks an extension required, and a message activating none
  card_secured, auth_send, unauth_send, unauth_list, extended_card, extended_unauth
                            the agent whose card requires credentials (the target's, or --secured-url's): a message
                            with the run's credentials and one without, ListTasks of the latter's context (with
                            them), GetExtendedAgentCard with and without them (A2A-AUTH-)
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import uuid
from collections.abc import Callable
from typing import Any, Iterator

from .. import card_keys
from ..catalogue import Scenario, load_scenario, scenario_ids
from ..contract.a2a import CARD_KEYS, CARD_KEYS_ERROR, CONTEXT_ID, UNPROBED
from ..contract.labels.a2a import (
    ANSWER_PREFIX,
    AUTH_SEND,
    BAD_VERSION,
    CANCEL,
    CANCEL_TERMINAL,
    CANCEL_UNKNOWN,
    CARD,
    CARD_NOSTREAM,
    CARD_REQUIRED,
    CARD_REVALIDATED,
    CARD_SECURED,
    CLEANUP_CANCEL,
    CROSS_CONTEXT,
    EMPTY_VERSION,
    EXT_NOT_ACTIVATED,
    EXTENDED_CARD,
    EXTENDED_UNAUTH,
    GET_TASK,
    GET_TASK_H0,
    GET_TASK_H1,
    GET_UNKNOWN,
    GET_UNKNOWN_MEMBER,
    ID_STREAM,
    INVALID_ID_BOOL,
    INVALID_ID_OBJECT,
    INVALID_JSONRPC,
    INVALID_NO_METHOD,
    INVALID_PARAMS,
    LIST_AFTER,
    LIST_ARTIFACTS,
    LIST_CONTEXT,
    LIST_PAGE1,
    LIST_PAGE2,
    LIST_PROTO_NAME,
    LIST_REFUSED,
    LIST_SIZE_OVER,
    LIST_SIZE_UNDER,
    LIST_STATUS,
    MSG_EMPTY_PARTS,
    MSG_NO_MESSAGE_ID,
    MSG_NO_PARTS,
    MSG_NO_ROLE,
    MSG_UNKNOWN_ROLE,
    NO_VERSION,
    NOTIFY_GET,
    NOTIFY_UNKNOWN,
    PARSE_ERROR,
    PATCH_VERSION,
    PROBE_PREFIX,
    SEND_OTHER,
    SEND_PREFIX,
    SEND_TERMINAL,
    SEND_UNKNOWN,
    SEND_UNKNOWN_MEMBER,
    SETUP_DONE,
    SETUP_NOSTREAM,
    SETUP_STREAM,
    STREAM,
    STREAM_PREFIX,
    STREAM_REFUSED,
    SUBSCRIBE,
    SUBSCRIBE_REFUSED,
    SUBSCRIBE_TERMINAL,
    SUBSCRIBE_UNKNOWN,
    UNAUTH_LIST,
    UNAUTH_SEND,
    UNKNOWN_METHOD_CALL,
)
from ..contract.labels.push import PUSH_CREATE, PUSH_DELETE, PUSH_GET, PUSH_LIST
from ..contract.run import CREDENTIALS, NOT_TESTED, UNREACHABLE, UNSUPPORTED
from ..framelog import END_ERROR, Event, Exchange, FrameLog
from ..protocols import a2a, bindings
from ..protocols.script import (
    CONTENT_STEPS,
    NEEDS_SCRIPT,
    NO_SCRIPT_NOTE,
    SCRIPT_KEY,
    SCRIPT_VERSION,
    named,
    plays,
    step_names,
)
from ..wire.a2a_client import A2AClient
from ..wire.clients import client_for
from . import Target, driver
from .binding_choice import grpc_missing
from .script_steps import SENDS_SCRIPT, NotDriven, learn


def user_message(text: str, *, script: dict[str, Any] | None = None, task_id: str | None = None,
                 context_id: str | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"messageId": str(uuid.uuid4()), "role": a2a.ROLE_USER, "parts": [{"text": text}]}
    if task_id:
        msg["taskId"] = task_id
    if context_id:
        msg["contextId"] = context_id
    if script is not None and SENDS_SCRIPT.get():
        msg["metadata"] = {SCRIPT_KEY: script}
    return msg


def make_script(name: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"version": SCRIPT_VERSION, "name": name, "steps": steps}


def task_ids(log_or_events: Any, binding: str | None = None) -> tuple[str | None, str | None]:
    """(task id, context id) from the first result that names them (an exchange's frames, read for its
    binding, or events of `binding`)."""
    events = log_or_events.data_events() if hasattr(log_or_events, "data_events") else log_or_events
    binding = getattr(log_or_events, "binding", None) or binding or bindings.JSONRPC
    for ev in events:
        result = bindings.frame_answer(binding, ev.payload)[0]
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
    result = bindings.read_answer(ex).result
    if isinstance(result, dict):
        return result.get("task", result) if "task" in result else result
    return None


def unsupported(log: FrameLog, req_ids: list[str], reason: str) -> None:
    log.notes.setdefault(UNSUPPORTED, {}).update({rid: reason for rid in req_ids})


def note_unreachable(log: FrameLog, card_ex: Exchange) -> None:
    """A card GET that got no HTTP answer: the target is unreachable, not lacking a feature."""
    if card_ex.end == END_ERROR or card_ex.status is None:
        log.notes[UNREACHABLE] = f"GET {card_ex.url}: {card_ex.error or 'no answer'}"


async def _open(target: Target, log: FrameLog, url: str | None = None) -> tuple[A2AClient, Any]:
    """A client of the agent at `url` (the target's) with its card read, and what its test agent plays learnt
    (script_steps.py: NotDriven when the scenario rests on a step it does not play)."""
    client = client_for(target, log, url)
    await client.__aenter__()
    card_ex = await client.get_card()
    note_unreachable(log, card_ex)
    card, _ = card_ex.json()
    client.use_card(card)
    if UNREACHABLE not in log.notes:
        try:
            await learn(client, card, target, log, load_scenario(log.scenario) if log.scenario in scenario_ids() else None)
        except NotDriven:
            await client.__aexit__()
            raise
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
    """The card, then one GetTask of an unknown id at every interface it declares (A2A-CARD-006). The keys the run
    trusts to verify the card's signatures go into the log (A2A-CARD-009), public parts only."""
    try:
        log.notes[CARD_KEYS] = card_keys.load_all(target.card_keys)
    except card_keys.CardKeyError as exc:  # a file changed since the command line read it
        log.notes[CARD_KEYS_ERROR] = str(exc)
    client, card = await _open(target, log)
    try:  # A2A-CARD-010: the card asked again with the validator it came with
        served = log.get(CARD)
        if served is not None and served.status == 200 and (validator := a2a.card_validator(served.response_headers)):
            await client.get_card(label=CARD_REVALIDATED, headers=dict([validator]))
    finally:
        await client.__aexit__()
    for binding, url in bindings.declared(card):
        if binding == bindings.GRPC and (why := grpc_missing()):
            log.notes.setdefault(UNPROBED, {})[binding] = why
            continue
        # the target's origin stays the client's: its credentials go to an interface elsewhere only when allowed
        probe = client_for(dataclasses.replace(target, binding=binding), log, stream_limit=min(target.stream_limit, 5.0))
        async with probe:
            probe.use_card(card)
            probe.rpc_url = url
            await probe.call(a2a.GET_TASK, {"id": str(uuid.uuid4())}, label=f"{PROBE_PREFIX}{binding}")


@driver("stream-task")
async def stream_task(target: Target, scenario: Scenario, log: FrameLog) -> None:
    """The seed's story: stream one scripted task to its end, then read it back."""
    client, card = await _open(target, log)
    try:
        if not streaming_declared(card):
            unsupported(log, list(scenario.requirements), "the card does not declare capabilities.streaming: true")
            return
        if target.prompts:  # judged as it is: each prompt's stream, its pauses answered with the run's answers
            stream = await _observed_streams(client, target)
        else:
            text = scenario.data.get("prompt", "Run the scenario")
            stream = await client.stream(a2a.SEND_STREAMING_MESSAGE,
                                         {"message": user_message(text, script=scenario.script)}, label=STREAM)
        task_id, _ = task_ids(stream)
        if not task_id:
            return
        exts = declared_extensions(card)
        await client.call(a2a.GET_TASK, {"id": task_id}, label=GET_TASK, extensions=exts)
        await client.call(a2a.GET_TASK, {"id": task_id, "historyLength": 0}, label=GET_TASK_H0)
        await client.call(a2a.GET_TASK, {"id": task_id, "historyLength": 1}, label=GET_TASK_H1)
    finally:
        await client.__aexit__()


async def _observed_streams(client: A2AClient, target: Target) -> Exchange:
    """`--prompt`: a stream for each prompt (the first labelled `stream`, the others `stream_2`, …); where one
    ends with its task paused for input, the next of the run's answers goes on the task, streamed (`answer_N`).
    Returns the first stream."""
    answers = iter(target.answers)
    first = None
    for n, prompt in enumerate(target.prompts, start=1):
        ex = await client.stream(a2a.SEND_STREAMING_MESSAGE, {"message": user_message(prompt)},
                                 label=STREAM if n == 1 else f"{STREAM_PREFIX}{n}")
        first = first or ex
        for turn in itertools.count(1):
            task_id, context_id = task_ids(ex)
            if not (task_id and _paused(ex)) or (answer := next(answers, None)) is None:
                break
            message = user_message(answer if isinstance(answer, str) else "", task_id=task_id, context_id=context_id)
            if not isinstance(answer, str):
                message["parts"] = [{"data": answer, "mediaType": "application/json"}]
            ex = await client.stream(a2a.SEND_STREAMING_MESSAGE, {"message": message}, label=f"{ANSWER_PREFIX}{n}_{turn}")
    return first


def _paused(ex: Exchange) -> bool:
    """Whether the last state a stream showed is an interrupted one (input or auth required)."""
    state = None
    for ev in ex.data_events():
        result = bindings.frame_answer(ex.binding or bindings.JSONRPC, ev.payload)[0]
        if isinstance(result, dict):
            holder = result.get("task") or result.get("statusUpdate")
            status = holder.get("status") if isinstance(holder, dict) else None
            state = status.get("state", state) if isinstance(status, dict) else state
    return a2a.is_interrupted(state)


@driver("list-tasks")
async def list_tasks(target: Target, scenario: Scenario, log: FrameLog) -> None:
    """A task in a context of its own, three tasks in one context (the second fails), then ListTasks every way
    the spec names, and with what it bounds or spells otherwise."""
    client, _ = await _open(target, log)
    try:
        # First, so that a filter ignored lists a task of another context (and it is never the context's newest)
        other = unary_task(await client.call(a2a.SEND_MESSAGE, {"message": user_message(
            "another context", script=scenario.data["other_script"])}, label=SEND_OTHER))
        context_id = None
        for n, script in enumerate(scenario.data["scripts"], start=1):
            ex = await client.call(a2a.SEND_MESSAGE,
                                   {"message": user_message(f"task {n}", script=script, context_id=context_id)},
                                   label=f"{SEND_PREFIX}{n}")
            task = unary_task(ex)
            if not isinstance(task, dict) or not task.get("contextId"):
                return
            context_id = task["contextId"]
        log.notes[CONTEXT_ID] = context_id
        whole = await client.call(a2a.LIST_TASKS, {"contextId": context_id}, label=LIST_CONTEXT)
        await client.call(a2a.LIST_TASKS, {"contextId": context_id, "includeArtifacts": True},
                          label=LIST_ARTIFACTS)
        page1 = await client.call(a2a.LIST_TASKS, {"contextId": context_id, "pageSize": 2}, label=LIST_PAGE1)
        listed = bindings.read_answer(page1).result
        token = listed.get("nextPageToken") if isinstance(listed, dict) else None
        if isinstance(token, str) and token:
            await client.call(a2a.LIST_TASKS, {"contextId": context_id, "pageSize": 2, "pageToken": token},
                              label=LIST_PAGE2)
        await client.call(a2a.LIST_TASKS, {"contextId": context_id, "status": a2a.FAILED}, label=LIST_STATUS)
        if (pivot := _middle_timestamp(whole)) is not None:
            await client.call(a2a.LIST_TASKS, {"contextId": context_id, "statusTimestampAfter": pivot},
                              label=LIST_AFTER)
        else:  # the timestamp is optional (A2A §4.1.2): without one there is nothing to filter by
            unsupported(log, ["A2A-TASK-013"], "no task ListTasks listed carries a status timestamp to filter by")
        await _proto_name_filter(client, log, context_id, other)
        for label, size in ((LIST_SIZE_OVER, a2a.LIST_PAGE_SIZE_MAX + 50), (LIST_SIZE_UNDER, 0)):
            await client.call(a2a.LIST_TASKS, {"contextId": context_id, "pageSize": size}, label=label)
    finally:
        await client.__aexit__()


async def _proto_name_filter(client: A2AClient, log: FrameLog, context_id: str, other: Any) -> None:
    """A2A-TASK-017: ListTasks with contextId named by its proto field name, context_id."""
    if client.binding == bindings.GRPC:  # a gRPC request names its fields by number (the catalogue: JSON bindings only)
        return
    if not isinstance(other, dict) or not other.get("id") or other.get("contextId") == context_id:
        unsupported(log, ["A2A-TASK-017"], "no task in another context could be made (send_other), so a filter "
                                           "ignored could not be told from one applied")
    else:
        await client.call(a2a.LIST_TASKS, {"context_id": context_id}, label=LIST_PROTO_NAME)


def _middle_timestamp(listed: Exchange) -> str | None:
    """The status timestamp of the middle task a ListTasks answer holds (newest first, that leaves an older
    task out and a newer one in), as the server wrote it: the filter must keep the task stamped exactly then."""
    result = bindings.read_answer(listed).result
    tasks = result.get("tasks") if isinstance(result, dict) else None
    stamps = [t["status"]["timestamp"] for t in tasks or [] if isinstance(t, dict) and isinstance(t.get("status"), dict)
              and isinstance(t["status"].get("timestamp"), str)]
    return stamps[len(stamps) // 2] if stamps else None


@driver("cancel-subscribe")
async def cancel_subscribe(target: Target, scenario: Scenario, log: FrameLog) -> None:
    """A long task: a second stream subscribes to it, then the task is canceled; both streams end."""
    client, card = await _open(target, log)
    try:
        if not streaming_declared(card):
            unsupported(log, list(scenario.requirements), "the card does not declare capabilities.streaming: true")
            return
        working = asyncio.Event()
        # Without a script, or from a test agent that does not play `status`, no WORKING update is promised: the
        # stream's first Task, not terminal, says the task runs (the script's `sleep` keeps it running).
        task_says_running = bool(target.prompts) or not plays(log.notes, "status")

        def on_main(ev: Event) -> None:
            result = bindings.frame_answer(client.binding, ev.payload)[0]
            if isinstance(result, dict) and isinstance(result.get("statusUpdate"), dict):
                if result["statusUpdate"].get("status", {}).get("state") == a2a.WORKING:
                    working.set()
            elif task_says_running and isinstance(result, dict) and isinstance(result.get("task"), dict):
                if not a2a.is_terminal(result["task"].get("status", {}).get("state")):
                    working.set()

        text = target.prompts[0] if target.prompts else "long task"
        main = asyncio.create_task(client.stream(
            a2a.SEND_STREAMING_MESSAGE, {"message": user_message(text, script=scenario.script)},
            label=STREAM, on_event=on_main))
        if not await _wait(working, main, target.timeout):
            await main
            return
        task_id, _ = task_ids(log.get(STREAM))
        subscribed = asyncio.Event()
        sub = asyncio.create_task(client.stream(a2a.SUBSCRIBE_TO_TASK, {"id": task_id}, label=SUBSCRIBE,
                                                on_event=lambda ev: subscribed.set()))
        await _wait(subscribed, sub, target.timeout)
        await client.call(a2a.CANCEL_TASK, {"id": task_id}, label=CANCEL)
        await asyncio.gather(main, sub)
        await client.call(a2a.GET_TASK, {"id": task_id}, label=GET_TASK)
    finally:
        await client.__aexit__()


async def _wait(flag: asyncio.Event, task: asyncio.Task, timeout: float) -> bool:
    """Wait until `flag` is set; False if the task ended first or the timeout passed."""
    waiter = asyncio.create_task(flag.wait())
    done, _ = await asyncio.wait({waiter, task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    return flag.is_set()


# The ids the requests of `errors` carry, in turn: every form JSON-RPC 2.0 §4 allows but null, which it
# discourages (WIRE-003): zero, the empty string, a string beyond ASCII, a negative number, the largest
# integer a double holds exactly, and a string that reads like a number.
ID_FORMS = (0, "", "ü-🦊 7", -1, 2**53 - 1, "0")
UNKNOWN_METHOD = "tasks/frobnicate"
# Messages that lack what A2A-ERR-012 requires, by label: (member dropped, member set).
FLAWED_MESSAGES = {
    MSG_NO_ROLE: ("role", None), MSG_NO_PARTS: ("parts", None), MSG_EMPTY_PARTS: (None, ("parts", [])),
    MSG_NO_MESSAGE_ID: ("messageId", None), MSG_UNKNOWN_ROLE: (None, ("role", "ROLE_SYSTEM")),
}


# What a binding cannot carry at all: a Role the enum does not name has no protobuf encoding (gRPC).
UNSAYABLE = {bindings.GRPC: (MSG_UNKNOWN_ROLE,)}


def _raw(value: Any) -> bytes:
    return json.dumps(value).encode("utf-8")


@driver("errors")
async def errors(target: Target, scenario: Scenario, log: FrameLog) -> None:
    """One refused request per error the spec names, each with an id of another form."""
    client, card = await _open(target, log)
    forms = itertools.cycle(ID_FORMS)
    try:
        done = await client.call(a2a.SEND_MESSAGE, {"message": user_message(
            "finish at once", script=scenario.data["done_script"])}, label=SETUP_DONE, rpc_id=next(forms))
        task = unary_task(done) or {}
        done_id, done_ctx = task.get("id"), task.get("contextId")
        await _flawed_messages(client, scenario, done_ctx, forms)
        unknown = str(uuid.uuid4())
        await client.call(a2a.GET_TASK, {"id": unknown}, label=GET_UNKNOWN, rpc_id=next(forms))
        await client.call(a2a.SEND_MESSAGE, {"message": user_message("to nowhere", task_id=unknown)},
                          label=SEND_UNKNOWN, rpc_id=next(forms))
        await client.call(a2a.CANCEL_TASK, {"id": unknown}, label=CANCEL_UNKNOWN, rpc_id=next(forms))
        if streaming_declared(card):
            await client.stream(a2a.SUBSCRIBE_TO_TASK, {"id": unknown}, label=SUBSCRIBE_UNKNOWN,
                                rpc_id=next(forms), limit=min(target.stream_limit, 5.0))
        if done_id:
            await client.call(a2a.CANCEL_TASK, {"id": done_id}, label=CANCEL_TERMINAL, rpc_id=next(forms))
            await client.call(a2a.SEND_MESSAGE, {"message": user_message(
                "after the end", task_id=done_id, context_id=done_ctx)}, label=SEND_TERMINAL, rpc_id=next(forms))
            if streaming_declared(card):
                await client.stream(a2a.SUBSCRIBE_TO_TASK, {"id": done_id}, label=SUBSCRIBE_TERMINAL,
                                    rpc_id=next(forms), limit=min(target.stream_limit, 5.0))
            else:
                unsupported(log, ["A2A-ERR-005"], "the card does not declare capabilities.streaming: true")
            await client.call(a2a.GET_TASK, {"id": done_id}, label=PATCH_VERSION, version="1.0.1",
                              rpc_id=next(forms))
        await _undeclared_capabilities(client, log, card, done_id or unknown, forms)
        await _unknown_member(client, log, scenario, forms)
        if client.binding == bindings.JSONRPC:  # JSON-RPC's own errors (A2A-ERR-006) and envelopes (WIRE-008/009)
            await client.call(UNKNOWN_METHOD, {}, label=UNKNOWN_METHOD_CALL, rpc_id=next(forms))
            await client.call(a2a.GET_TASK, None, label=PARSE_ERROR,
                              raw_body=b'{"jsonrpc": "2.0", "id": 7, "method": ')
        await client.call(a2a.SEND_MESSAGE, {}, label=INVALID_PARAMS, rpc_id=next(forms))
        await client.call(a2a.GET_TASK, {"id": done_id or unknown}, label=BAD_VERSION, version="99.0",
                          rpc_id=next(forms))
        # Without the service parameter, and with it empty: read as 0.3 (A2A-ERR-016)
        for label, version in ((NO_VERSION, None), (EMPTY_VERSION, "")):
            await client.call(a2a.GET_TASK, {"id": done_id or unknown}, label=label, version=version,
                              rpc_id=next(forms))
        if client.binding == bindings.JSONRPC:
            await _envelopes(client, {"id": done_id or unknown}, forms)
        # A task kept running by the busy script's sleep: an agent that does not sleep cannot make one
        busy_needs = [n for n in step_names(scenario.data["busy_script"]) if n not in CONTENT_STEPS]
        if idle := [n for n in busy_needs if not plays(log.notes, n)]:
            if log.notes.get(NO_SCRIPT_NOTE):
                log.notes.setdefault(NOT_TESTED, {})["A2A-ERR-010"] = NEEDS_SCRIPT
            else:
                unsupported(log, ["A2A-ERR-010"], f"the test agent does not play {named(idle)}")
        if streaming_declared(card):
            await client.stream(a2a.SEND_STREAMING_MESSAGE, {"message": user_message(
                "finish at once", script=scenario.data["done_script"])}, label=ID_STREAM, rpc_id="")
            # A task that is still running, for a message that names it with another context.
            setup = await client.stream(a2a.SEND_STREAMING_MESSAGE, {"message": user_message(
                "stay busy", script=scenario.data["busy_script"])}, label=SETUP_STREAM,
                until=lambda ev: True)
            busy_id, busy_ctx = task_ids(setup)
            if busy_id and not idle:
                await client.call(a2a.SEND_MESSAGE, {"message": user_message(
                    "wrong context", task_id=busy_id, context_id=f"{busy_ctx}-other")}, label=CROSS_CONTEXT,
                    rpc_id=next(forms))
                await client.call(a2a.CANCEL_TASK, {"id": busy_id}, label=CLEANUP_CANCEL)
        else:
            unsupported(log, ["A2A-ERR-010"], "needs a running task, started here with a stream")
    finally:
        await client.__aexit__()


# The push-notification-config operations, by label, with their request messages for a task (A2A-ERR-013); the
# config id is one no agent made, the webhook URL one that never resolves (.invalid, RFC 6761 §6.4).
PUSH_CONFIG_ID = "streamcert-no-such-config"
PUSH_URL = "https://push.invalid/streamcert"


def push_config_calls(task_id: str) -> dict[str, tuple[str, dict[str, Any]]]:
    return {
        PUSH_CREATE: (a2a.CREATE_PUSH_CONFIG, {"taskId": task_id, "url": PUSH_URL}),
        PUSH_GET: (a2a.GET_PUSH_CONFIG, {"taskId": task_id, "id": PUSH_CONFIG_ID}),
        PUSH_LIST: (a2a.LIST_PUSH_CONFIGS, {"taskId": task_id}),
        PUSH_DELETE: (a2a.DELETE_PUSH_CONFIG, {"taskId": task_id, "id": PUSH_CONFIG_ID}),
    }


def capability_declared(card: Any, name: str) -> bool:
    caps = card.get("capabilities") if isinstance(card, dict) else None
    return isinstance(caps, dict) and caps.get(name) is True


async def _undeclared_capabilities(client: A2AClient, log: FrameLog, card: Any, task_id: str,
                                   forms: Iterator[Any]) -> None:
    """A2A-ERR-013/014 (§3.3.4): the operations of a capability the card does not declare, each asked once."""
    if capability_declared(card, "pushNotifications"):
        unsupported(log, ["A2A-ERR-013"], "the card declares capabilities.pushNotifications: true")
    else:
        for label, (method, params) in push_config_calls(task_id).items():
            await client.call(method, params, label=label, rpc_id=next(forms))
    if capability_declared(card, "extendedAgentCard"):
        unsupported(log, ["A2A-ERR-014"], "the card declares capabilities.extendedAgentCard: true")
    else:
        await client.call(a2a.GET_EXTENDED_CARD, {}, label=EXTENDED_CARD, rpc_id=next(forms))


UNKNOWN_MEMBER = "streamcertUnknownMember"  # a member no Message has (A2A-ERR-015)


async def _unknown_member(client: A2AClient, log: FrameLog, scenario: Scenario, forms: Iterator[Any]) -> None:
    """A2A-ERR-015: SendMessage whose message (and its part) carry a member the Message (Part) does not have,
    then GetTask of the task it made: the member is ignored, never carried back."""
    if client.binding == bindings.GRPC:  # a protobuf message has no member by that name (the catalogue: JSON bindings
        return                          # only)
    message = user_message("finish at once", script=scenario.data["done_script"])
    message[UNKNOWN_MEMBER] = "ignore me"
    message["parts"][0][UNKNOWN_MEMBER] = "ignore me too"
    sent = await client.call(a2a.SEND_MESSAGE, {"message": message}, label=SEND_UNKNOWN_MEMBER, rpc_id=next(forms))
    task_id = (unary_task(sent) or {}).get("id")
    if task_id:
        await client.call(a2a.GET_TASK, {"id": task_id}, label=GET_UNKNOWN_MEMBER, rpc_id=next(forms))


async def _flawed_messages(client: A2AClient, scenario: Scenario, context_id: Any, forms: Iterator[Any]) -> None:
    """A2A-ERR-012: SendMessage with messages that lack a required member, in the setup task's context (so
    that ListTasks of it shows whether one started a task). Each carries the script that finishes at once:
    a server that takes one anyway ends it quickly."""
    context = context_id if isinstance(context_id, str) and context_id else None
    for label, (dropped, setting) in FLAWED_MESSAGES.items():
        if label in UNSAYABLE.get(client.binding, ()):
            continue
        message = user_message("refuse me", script=scenario.data["done_script"], context_id=context)
        if dropped:
            del message[dropped]
        if setting:
            message[setting[0]] = setting[1]
        await client.call(a2a.SEND_MESSAGE, {"message": message}, label=label, rpc_id=next(forms))
    if context:
        await client.call(a2a.LIST_TASKS, {"contextId": context}, label=LIST_REFUSED, rpc_id=next(forms))


async def _envelopes(client: A2AClient, params: dict[str, Any], forms: Iterator[Any]) -> None:
    """WIRE-008/009: Request objects that JSON-RPC 2.0 §4 does not allow, then notifications (no id), sent
    as raw bodies so that nothing mends them."""
    invalid = {
        INVALID_JSONRPC: {"jsonrpc": "1.0", "id": next(forms), "method": a2a.GET_TASK, "params": params},
        INVALID_NO_METHOD: {"jsonrpc": "2.0", "id": next(forms), "params": params},
        INVALID_ID_BOOL: {"jsonrpc": "2.0", "id": True, "method": a2a.GET_TASK, "params": params},
        INVALID_ID_OBJECT: {"jsonrpc": "2.0", "id": {"n": 1}, "method": a2a.GET_TASK, "params": params},
    }
    for label, body in invalid.items():
        await client.call(body.get("method", a2a.GET_TASK), None, label=label, raw_body=_raw(body))
    notifications = {NOTIFY_GET: (a2a.GET_TASK, params), NOTIFY_UNKNOWN: (UNKNOWN_METHOD, {})}
    for label, (method, values) in notifications.items():
        await client.call(method, None, label=label,
                          raw_body=_raw({"jsonrpc": "2.0", "method": method, "params": values}))


async def _twin(target: Target, scenario: Scenario, log: FrameLog, given: str | None, fits: Callable[[Any], Any],
                lacks: str) -> str | None:
    """The URL of the agent a scenario needs beside the target (one whose card is unlike the target's): `given`,
    else the target itself when its card `fits`, else None with every requirement of the scenario UNSUPPORTED
    for the reason `lacks`."""
    if given:
        return given
    client, card = await _open(target, log)
    await client.__aexit__()
    if not fits(card):
        unsupported(log, list(scenario.requirements), lacks)
        return None
    return target.a2a_url or ""


def required_extensions(card: Any) -> list[str]:
    """The URIs of the extensions the card marks required: true (A2A §4.6.1)."""
    caps = card.get("capabilities") if isinstance(card, dict) else None
    exts = caps.get("extensions") if isinstance(caps, dict) else None
    return [e["uri"] for e in exts or [] if isinstance(e, dict) and e.get("required") is True
            and isinstance(e.get("uri"), str)]


@driver("extension-required")
async def extension_required(target: Target, scenario: Scenario, log: FrameLog) -> None:
    """An agent whose card marks an extension required: true, sent a message that activates none (A2A-ERR-017)."""
    url = await _twin(target, scenario, log, target.required_ext_url, required_extensions,
                      "the target's card marks no extension required: true and no agent that does was given "
                      "(--required-ext-url)")
    if url is None:
        return
    client = client_for(target, log, url or "")
    async with client:
        card_ex = await client.get_card(label=CARD_REQUIRED)
        note_unreachable(log, card_ex)
        card, _ = card_ex.json()
        client.use_card(card)
        if not required_extensions(card):
            unsupported(log, list(scenario.requirements), f"the agent at {url} marks no extension required: true")
            return
        await client.call(a2a.SEND_MESSAGE, {"message": user_message("finish at once", script=scenario.script)},
                          label=EXT_NOT_ACTIVATED)


@driver("no-streaming")
async def no_streaming(target: Target, scenario: Scenario, log: FrameLog) -> None:
    """An agent whose card says streaming: false must refuse both streaming methods."""
    url = await _twin(target, scenario, log, target.nostream_url, lambda card: not streaming_declared(card),
                      "the target declares streaming: true and no agent without streaming was given "
                      "(--sut-nostream-url)")
    if url is None:
        return
    client = client_for(target, log, url or "", stream_limit=min(target.stream_limit, 5.0))
    async with client:
        card_ex = await client.get_card(label=CARD_NOSTREAM)
        note_unreachable(log, card_ex)
        card, _ = card_ex.json()
        if not isinstance(card, dict):  # no card: nothing is presumed of the agent (A2A-ERR-001 says why)
            return
        client.use_card(card)
        if streaming_declared(card):
            unsupported(log, list(scenario.requirements), f"the agent at {url} declares streaming: true")
            return
        setup = await client.call(a2a.SEND_MESSAGE, {"message": user_message(
            "finish at once", script=scenario.data["done_script"])}, label=SETUP_NOSTREAM)
        task = unary_task(setup) or {}
        await client.stream(a2a.SEND_STREAMING_MESSAGE, {"message": user_message(
            "please stream", script=scenario.script)}, label=STREAM_REFUSED)
        await client.stream(a2a.SUBSCRIBE_TO_TASK, {"id": task.get("id") or str(uuid.uuid4())},
                            label=SUBSCRIBE_REFUSED)


AUTH_IDS = ("A2A-AUTH-001", "A2A-AUTH-002", "A2A-AUTH-003")


def _secured(card: Any) -> bool:
    return bool(a2a.required_schemes(card)) or a2a.extended_card_declared(card)


@driver("security")
async def security(target: Target, scenario: Scenario, log: FrameLog) -> None:
    """An agent whose card requires credentials or declares the extended card (A2A §7, §3.1.11): the same message
    sent with the run's credentials and without them, whether the refused one made a task, and the extended card
    asked for both ways. A request goes without credentials only where the card requires some and the run has them;
    the credentials themselves never enter the log's notes (their header names do)."""
    url = await _twin(target, scenario, log, target.secured_url, _secured,
                      "the target's card requires no credentials and declares no extended card, and no agent whose "
                      "card does was given (--secured-url)")
    if url is None:
        return
    log.notes[CREDENTIALS] = sorted(target.headers)
    client = client_for(target, log, url or "")
    bare = client_for(target, log, url or "", credentials=False)
    async with client, bare:
        card_ex = await client.get_card(label=CARD_SECURED)
        note_unreachable(log, card_ex)
        card, _ = card_ex.json()
        if not isinstance(card, dict):
            return  # no card: A2A-CARD-001 says why
        client.use_card(card)
        bare.use_card(card)
        judged = bool(target.headers) and bool(a2a.required_schemes(card))
        if not a2a.required_schemes(card):
            unsupported(log, list(AUTH_IDS), "the card's securityRequirements require no credentials")
        elif judged:
            script = scenario.script
            await client.call(a2a.SEND_MESSAGE, {"message": user_message("served", script=script)}, label=AUTH_SEND)
            context_id = str(uuid.uuid4())  # a context of its own: a task the refused message made shows there
            await bare.call(a2a.SEND_MESSAGE, {"message": user_message("refused", script=script, context_id=context_id)},
                            label=UNAUTH_SEND)
            await client.call(a2a.LIST_TASKS, {"contextId": context_id}, label=UNAUTH_LIST)
        if not a2a.extended_card_declared(card):
            unsupported(log, ["A2A-AUTH-004", "A2A-AUTH-005"], "the card does not declare capabilities.extendedAgentCard")
            return
        await client.call(a2a.GET_EXTENDED_CARD, {}, label=EXTENDED_CARD)
        if judged:
            await bare.call(a2a.GET_EXTENDED_CARD, {}, label=EXTENDED_UNAUTH)
