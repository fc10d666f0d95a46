"""The driver of the push profile (A2A 1.0.1 §3.1.7–3.1.10, §4.3.3): the suite's webhook receiver
(wire/push_receiver.py) listens while one task runs with configs on it.

Labels written (read by streamcert.rules.push.push):
  card                      GET the agent card
  push_task                 SendStreamingMessage carrying the script, read to the task's pause (the script asks
                            first, so nothing happens before the configs are made, however slow the machine)
  stream                    the answer to the pause, SendStreamingMessage on the task, read to its end: the events
                            the webhooks must get
  push_create_slow          Create, a webhook under /slow/<s>/ that answers each POST after <s> seconds
  push_create_a, push_create_b
                            two Creates without an id, on webhooks /hook/a and /hook/b, each with a token
  push_create_c, push_delete_c
                            a Create on /hook/c deleted at once, before the task's first update
                            (the slow one and c are given ids of their own, so an agent that gives every config
                            without an id one id — PUSH-002's departure — has its Delete of c remove c alone)
  push_create_nourl         a Create without url (refused, §3.3.2)
  push_list                 List after the task ended
  push_get                  Get of the config push_create_a made
  push_get_unknown, push_delete_unknown
                            Get and Delete of a config id no Create made
  push_get_deleted          Get of the config push_delete_c deleted
  push_list_unknown_task, push_create_unknown_task
                            List and Create on a task id no task has
  webhook_1, webhook_2, …   every request the receiver got (its own exchanges, in arrival order)
log.notes["push"]: the webhook paths by config label, the tokens given, the script's span and the slow delay.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..catalogue import Scenario
from ..contract.labels.a2a import STREAM
from ..contract.labels.push import (
    PUSH_CREATE_A,
    PUSH_CREATE_B,
    PUSH_CREATE_C,
    PUSH_CREATE_NOURL,
    PUSH_CREATE_SLOW,
    PUSH_CREATE_UNKNOWN_TASK,
    PUSH_DELETE_C,
    PUSH_DELETE_UNKNOWN,
    PUSH_GET,
    PUSH_GET_DELETED,
    PUSH_GET_UNKNOWN,
    PUSH_LIST,
    PUSH_LIST_UNKNOWN_TASK,
    PUSH_TASK,
)
from ..contract.push import HOOK_PATHS, PUSH, SETTLED, SLOW_DELAY_S, TOKENS
from ..framelog import FrameLog
from ..protocols import a2a, push
from ..wire.a2a_client import A2AClient
from ..wire.push_receiver import PushReceiver
from . import Target, driver
from .a2a import _open, capability_declared, task_ids, unary_task, unsupported, user_message

HOOKS = {PUSH_CREATE_SLOW: "/slow/{delay}/s", PUSH_CREATE_A: "/hook/a", PUSH_CREATE_B: "/hook/b",
         PUSH_CREATE_C: "/hook/c"}
ID_GIVEN = (PUSH_CREATE_SLOW, PUSH_CREATE_C)  # configs whose id the suite gives (the others: PUSH-001/002)
NO_SUCH_CONFIG = "streamcert-no-such-config"


def webhook_tokens(hooks: dict[str, str]) -> dict[str, str]:
    """A token of the suite's own for each config label, new each run (its last word names the config)."""
    return {label: f"streamcert-{label.rsplit('_', 1)[-1]}-{uuid.uuid4().hex[:8]}" for label in hooks}


def given_id() -> str:
    """A config id of the suite's own, unique to the run: a UUID, so that a recording
    compared with a later run reads it as an id wherever it is echoed (an error's message too), never as a change."""
    return str(uuid.uuid4())


def config_id(ex: Any) -> str | None:
    """The id of the config a Create answered, or None."""
    result = unary_task(ex)
    value = result.get("id") if isinstance(result, dict) else None
    return value if isinstance(value, str) and value else None


async def open_push_agent(target: Target, scenario: Scenario, log: FrameLog) -> A2AClient | None:
    """A client of the push agent with its card read; None (the client closed, the scenario's requirements
    UNSUPPORTED) when its card does not declare pushNotifications."""
    client, card = await _open(target, log, target.push_agent_url)
    if capability_declared(card, "pushNotifications"):
        return client
    unsupported(log, list(scenario.requirements), "the card does not declare capabilities.pushNotifications: true "
                                                  "(A2A-ERR-013 judges its refusals)")
    await client.__aexit__()
    return None


@driver("push")
async def push_configs(target: Target, scenario: Scenario, log: FrameLog) -> None:
    client = await open_push_agent(target, scenario, log)
    if client is None:
        return
    try:
        delay = float(scenario.data.get("slow_delay_s", 1.5))
        hooks = {label: path.format(delay=f"{delay:g}") for label, path in HOOKS.items()}
        tokens = webhook_tokens(hooks)
        log.notes[PUSH] = {HOOK_PATHS: hooks, TOKENS: tokens, SLOW_DELAY_S: delay}
        async with PushReceiver(log, client.clock, bind=target.push_receiver, public_url=target.push_url,
                                max_body=target.max_body_bytes, idle=target.idle_limit) as rx:
            first = await client.stream(a2a.SEND_STREAMING_MESSAGE, {"message": user_message(
                "Run the scenario", script=scenario.script)}, label=PUSH_TASK,
                until=lambda ev: a2a.INPUT_REQUIRED in ev.data)
            task_id, context_id = task_ids(first)
            if not task_id:
                return
            made: dict[str, str | None] = {}
            for label in hooks:
                given = {"id": given_id()} if label in ID_GIVEN else {}
                ex = await client.call(a2a.CREATE_PUSH_CONFIG, {"taskId": task_id, **given, "url": rx.url(hooks[label]),
                                                                "token": tokens[label]}, label=label)
                made[label] = config_id(ex)
            if made[PUSH_CREATE_C]:
                await client.call(a2a.DELETE_PUSH_CONFIG, {"taskId": task_id, "id": made[PUSH_CREATE_C]},
                                  label=PUSH_DELETE_C)
            await client.call(a2a.CREATE_PUSH_CONFIG, {"taskId": task_id, "token": "streamcert-no-url"},
                              label=PUSH_CREATE_NOURL)
            # The answer moves the task on; its stream carries the events the webhooks are compared with.
            await client.stream(a2a.SEND_STREAMING_MESSAGE, {"message": user_message(
                "Yes", task_id=task_id, context_id=context_id)}, label=STREAM)
            # Wait (bounded) for each kept webhook's terminal delivery; the slow one is not waited for.
            kept = [hooks[PUSH_CREATE_A], hooks[PUSH_CREATE_B]]
            settled = await rx.settle(lambda _got: all(any(push.is_terminal_body(ex.request_body)
                                                           for ex in rx.at(path)) for path in kept), target.timeout)
            log.notes[PUSH][SETTLED] = settled
            await client.call(a2a.LIST_PUSH_CONFIGS, {"taskId": task_id}, label=PUSH_LIST)
            if made[PUSH_CREATE_A]:
                await client.call(a2a.GET_PUSH_CONFIG, {"taskId": task_id, "id": made[PUSH_CREATE_A]},
                                  label=PUSH_GET)
            await client.call(a2a.GET_PUSH_CONFIG, {"taskId": task_id, "id": NO_SUCH_CONFIG}, label=PUSH_GET_UNKNOWN)
            await client.call(a2a.DELETE_PUSH_CONFIG, {"taskId": task_id, "id": NO_SUCH_CONFIG},
                              label=PUSH_DELETE_UNKNOWN)
            if made[PUSH_CREATE_C]:
                await client.call(a2a.GET_PUSH_CONFIG, {"taskId": task_id, "id": made[PUSH_CREATE_C]},
                                  label=PUSH_GET_DELETED)
            unknown = str(uuid.uuid4())
            await client.call(a2a.LIST_PUSH_CONFIGS, {"taskId": unknown}, label=PUSH_LIST_UNKNOWN_TASK)
            await client.call(a2a.CREATE_PUSH_CONFIG, {"taskId": unknown, "url": rx.url("/hook/none")},
                              label=PUSH_CREATE_UNKNOWN_TASK)
    finally:
        await client.__aexit__()
