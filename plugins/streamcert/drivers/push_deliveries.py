"""The second driver of the push profile (A2A 1.0.1 §3.1.7, §3.1.10, §3.3.4, §4.3.3, §13.2): a config given
inline in SendStreamingMessage, deliveries across the task's pause and after the client drops the stream,
the config's authentication, webhooks that fail or answer slowly, screening of webhook URLs, Delete twice,
and an agent without push given an inline config.

Labels written (read by streamcert.rules.push.push_deliveries):
  card                        GET the push agent's card
  nopush_card, nopush_send    when the run names an A2A agent (--url) whose card does not declare
                              pushNotifications: its card, and a blocking SendMessage carrying an inline config
                              (webhook /hook/nopush)
  inline_task                 SendStreamingMessage carrying the script and an inline config (webhook /hook/inline,
                              a token, authentication Bearer WEBHOOK_CREDENTIALS), read to the task's pause
  push_create_retry           Create of a webhook under /fail/1/ (the receiver answers its first POST 503)
  push_create_wait            Create of a webhook under /slow/<wait_s>/ (each POST answered after wait_s)
  push_create_noscheme        Create whose authentication has credentials but no scheme (refused, §3.3.2)
  push_screen_<kind>          Create of a webhook URL an agent should refuse (§13.2): link_local, private,
                              scheme (ftp://), non_url; push_screen_<kind>_delete deletes one that was accepted
  push_create_d, push_delete_d, push_delete_d_again
                              a config made, deleted, and deleted again
                              (every Create here gives an id of its own: how an agent assigns ids is push-configs'
                              PUSH-001/002; here an agent giving every config without an id one id would have each
                              Create replace the inline config, and each Delete remove it)
  push_list_pause             List while the task waits at its pause
  push_get_inline             Get of the inline config (its id read from push_list_pause)
  stream_cut                  the answer, SendStreamingMessage on the task, dropped by the client after its first
                              event: the rest reaches the webhooks only
  webhook_1, webhook_2, …     every request the receiver got
log.notes["push"]: the webhook paths by label, the tokens, the inline authentication, the wait, whether the
deliveries settled.
"""

from __future__ import annotations

from typing import Any

from ..catalogue import Scenario
from ..contract.capture import ABANDONED
from ..contract.labels.push import (
    DELETE_SUFFIX,
    INLINE,
    INLINE_TASK,
    NOPUSH_CARD,
    NOPUSH_SEND,
    PUSH_CREATE_D,
    PUSH_CREATE_NOSCHEME,
    PUSH_CREATE_RETRY,
    PUSH_CREATE_WAIT,
    PUSH_DELETE_D,
    PUSH_DELETE_D_AGAIN,
    PUSH_GET_INLINE,
    PUSH_LIST_PAUSE,
    PUSH_SCREEN_PREFIX,
    STREAM_CUT,
)
from ..contract.push import AUTH, HOOK_PATHS, PUSH, SETTLED, TOKENS, WAIT_S
from ..framelog import FrameLog
from ..protocols import a2a, push
from ..scrub import WEBHOOK_CREDENTIALS
from ..wire.clients import client_for
from ..wire.push_receiver import PushReceiver
from . import Target, driver
from .a2a import capability_declared, task_ids, unary_task, unsupported, user_message
from .push import config_id, given_id, open_push_agent, webhook_tokens

AUTH_SCHEME = "Bearer"
NO_PUSH = "PUSH-029"  # judged on the --url agent, when its card does not declare push


@driver("push-deliveries")
async def push_deliveries(target: Target, scenario: Scenario, log: FrameLog) -> None:
    client = await open_push_agent(target, scenario, log)
    if client is None:
        return
    try:
        wait = float(scenario.data.get("wait_s", 1.5))
        hooks = {INLINE: "/hook/inline", PUSH_CREATE_RETRY: "/fail/1/r", PUSH_CREATE_WAIT: f"/slow/{wait:g}/w",
                 NOPUSH_SEND: "/hook/nopush", PUSH_CREATE_D: "/hook/d"}
        tokens = webhook_tokens(hooks)
        auth = {"scheme": AUTH_SCHEME, "credentials": WEBHOOK_CREDENTIALS}
        notes: dict[str, Any] = {HOOK_PATHS: hooks, TOKENS: tokens, AUTH: dict(auth), WAIT_S: wait}
        log.notes[PUSH] = notes
        async with PushReceiver(log, client.clock, bind=target.push_receiver, public_url=target.push_url,
                                max_body=target.max_body_bytes, idle=target.idle_limit) as rx:
            await _without_push(target, log, rx.url(hooks[NOPUSH_SEND]), tokens[NOPUSH_SEND], client.clock)
            inline = {"url": rx.url(hooks[INLINE]), "token": tokens[INLINE], "authentication": auth}
            first = await client.stream(a2a.SEND_STREAMING_MESSAGE, {
                "message": user_message("Run the scenario", script=scenario.script),
                "configuration": {"taskPushNotificationConfig": inline}}, label=INLINE_TASK,
                until=lambda ev: a2a.INPUT_REQUIRED in ev.data)
            task_id, context_id = task_ids(first)
            if not task_id:
                return

            async def create(label: str, config: dict[str, Any]) -> str | None:
                return config_id(await client.call(a2a.CREATE_PUSH_CONFIG, {"taskId": task_id, "id": given_id(),
                                                                            **config}, label=label))

            for label in (PUSH_CREATE_RETRY, PUSH_CREATE_WAIT):
                await create(label, {"url": rx.url(hooks[label]), "token": tokens[label]})
            await create(PUSH_CREATE_NOSCHEME, {"url": rx.url("/hook/noscheme"),
                                                  "authentication": {"credentials": "streamcert-no-scheme"}})
            for kind, url in screened(rx.port).items():
                made = await create(f"{PUSH_SCREEN_PREFIX}{kind}", {"url": url})
                if made:  # accepted: deleted at once, before the task moves on and anything is sent
                    await client.call(a2a.DELETE_PUSH_CONFIG, {"taskId": task_id, "id": made},
                                      label=f"{PUSH_SCREEN_PREFIX}{kind}{DELETE_SUFFIX}")
            made_d = await create(PUSH_CREATE_D, {"url": rx.url(hooks[PUSH_CREATE_D])})
            if made_d:
                for label in (PUSH_DELETE_D, PUSH_DELETE_D_AGAIN):
                    await client.call(a2a.DELETE_PUSH_CONFIG, {"taskId": task_id, "id": made_d}, label=label)
            listed = unary_task(await client.call(a2a.LIST_PUSH_CONFIGS, {"taskId": task_id},
                                                  label=PUSH_LIST_PAUSE))
            inline_id = next((c.get("id") for c in (listed or {}).get("configs") or []
                              if isinstance(c, dict) and c.get("url") == inline["url"]), None)
            if isinstance(inline_id, str) and inline_id:
                await client.call(a2a.GET_PUSH_CONFIG, {"taskId": task_id, "id": inline_id}, label=PUSH_GET_INLINE)
            # The answer moves the task on; the client drops its stream after the first event.
            await client.stream(a2a.SEND_STREAMING_MESSAGE, {"message": user_message(
                "Yes", task_id=task_id, context_id=context_id)}, label=STREAM_CUT, until=lambda _ev: True)

            def settled(_got: Any) -> bool:
                ends = all(any(push.is_terminal_body(ex.request_body) for ex in rx.at(hooks[label]))
                           for label in (INLINE, PUSH_CREATE_RETRY))
                slow = rx.at(hooks[PUSH_CREATE_WAIT])
                return ends and bool(slow) and (slow[0].status is not None or ABANDONED in slow[0].notes)

            notes[SETTLED] = await rx.settle(settled, target.timeout)
    finally:
        await client.__aexit__()


def screened(port: int) -> dict[str, str]:
    """The webhook URLs an agent should refuse (§13.2), by kind; none of them is ever reached by the suite."""
    return {"link_local": "http://169.254.169.254/latest/meta-data/", "private": "http://10.255.255.1/hook",
            "scheme": f"ftp://127.0.0.1:{port}/hook", "non_url": "not a url"}


async def _without_push(target: Target, log: FrameLog, url: str, token: str, clock: Any) -> None:
    """A blocking SendMessage with an inline config to the run's A2A agent, when its card does not declare push
    (§3.3.4): it may refuse the config or ignore it, but its webhook must get nothing."""
    if not target.a2a_url or target.a2a_url == target.push_agent_url:
        unsupported(log, [NO_PUSH], "the run names no A2A agent (--url) besides the push agent")
        return
    async with client_for(target, log, target.a2a_url, clock=clock) as other:
        card, _ = (await other.get_card(label=NOPUSH_CARD)).json()
        if capability_declared(card, "pushNotifications"):
            unsupported(log, [NO_PUSH], "the --url agent's card declares pushNotifications too")
            return
        other.use_card(card)
        await other.call(a2a.SEND_MESSAGE, {"message": user_message("Hello"),
                                            "configuration": {"taskPushNotificationConfig": {"url": url,
                                                                                             "token": token}}},
                         label=NOPUSH_SEND)
