"""The ``agent-client-protocol`` (0.12.x) Python SDK's client side under the suite's ACP client contract.

Run by ``streamcert run --acp-client-cmd "python tests/peers/acp_sdk_client.py" --profile acp-client``
from a venv holding ``agent-client-protocol~=0.12.0`` (the ``peer-acp-sdk-client`` tox env). It reads
``STREAMCERT_AGENT_CMD`` (the suite's ACP agent), ``STREAMCERT_CASE`` and ``STREAMCERT_CONTEXT``, and
prints its final view as one JSON line: ``{"plans": {planId: plan}}`` (the v1 single plan under ``""``).
Logs go to stderr.

What the SDK does (what is being certified):
- ``acp.spawn_agent_process`` starts the agent and binds its stdio to a ``ClientSideConnection``;
- ``initialize`` (the case's protocol version, capped at the SDK's ``PROTOCOL_VERSION``) /
  ``new_session`` / ``prompt`` (a script given in the context rides in ``_meta`` through the keyword
  arguments, the SDK's way of writing ``_meta``);
- every ``session/update`` is read, validated and turned into the SDK's models (``AgentPlanUpdate``,
  ``AgentPlanContentUpdate``, ``AgentPlanRemovedUpdate``) before it reaches ``session_update`` below:
  what the client can show of a plan is what those models kept.

What the adapter does itself, as the minimum a typical app would (not the SDK's finding): it keeps one
plan per planId, replacing it whole on each update and dropping it on ``plan_removed`` or on an empty
v1 ``plan`` (the SDK keeps no plan state), and shows each plan as the model dumps it back to JSON.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shlex
import sys
from typing import Any

import acp
from acp.schema import (
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
    AgentPlanUpdate,
    ClientCapabilities,
    Implementation,
    PlanCapabilities,
)

SCRIPT_KEY = "urn:streamcert:script"
V1_PLAN = ""  # the key of the one v1 plan, which has no planId

log = logging.getLogger("acp-sdk-client")


def _dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class PlanClient:
    """The SDK's ``Client`` interface: only session updates matter here; the rest is refused."""

    def __init__(self) -> None:
        self.plans: dict[str, Any] = {}

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if isinstance(update, AgentPlanUpdate):  # v1 stable: the one plan, whole; an empty one removes it
            if update.entries:
                self.plans[V1_PLAN] = {"entries": [_dump(e) for e in update.entries]}
            else:
                self.plans.pop(V1_PLAN, None)
        elif isinstance(update, AgentPlanContentUpdate):
            plan = _dump(update.plan)
            self.plans[plan.get("planId", V1_PLAN)] = plan
        elif isinstance(update, AgentPlanRemovedUpdate):
            self.plans.pop(update.plan_id, None)
        else:
            log.info("session update %s: not a plan", getattr(update, "session_update", type(update).__name__))

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise acp.RequestError.method_not_found("session/request_permission")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.info("extension notification %s ignored", method)


def _prompt(context: dict[str, Any]) -> list[Any]:
    """The context's prompt: a text, or content blocks (the SDK validates them into its models)."""
    prompt = context.get("prompt")
    if isinstance(prompt, list):
        return prompt
    return [acp.text_block(prompt or "Go ahead")]


def _meta(context: dict[str, Any]) -> dict[str, Any]:
    """The prompt's ``_meta``: the context's script, if it gives one (the suite's agent may play its own)."""
    script = context.get("script")
    return {SCRIPT_KEY: script} if script is not None else {}


async def run(agent_cmd: str, context: dict[str, Any]) -> dict[str, Any]:
    client = PlanClient()
    program, *args = shlex.split(agent_cmd)
    # ACP: a client asks for the latest version it supports. The SDK's models are those of its
    # PROTOCOL_VERSION (1 in 0.12, with the unstable plan operations), so a case that asks for a later
    # version gets that one: the agent then speaks v1 and the suite reports the case UNSUPPORTED.
    version = min(int(context.get("protocolVersion", acp.PROTOCOL_VERSION)), acp.PROTOCOL_VERSION)
    # {} asks for plan_update/plan_removed (unstable in v1), when the case says so.
    plan_capability = PlanCapabilities() if context.get("plan_capability") else None
    async with acp.spawn_agent_process(client, program, *args, use_unstable_protocol=True) as (conn, _process):
        init = await conn.initialize(protocol_version=version,
                                     client_capabilities=ClientCapabilities(plan=plan_capability),
                                     client_info=Implementation(name="acp-sdk-client", version="0.1.0"))
        log.info("agent answered protocol version %s", init.protocol_version)
        session = await conn.new_session(cwd=os.getcwd(), mcp_servers=[])
        answer = await conn.prompt(session_id=session.session_id, prompt=_prompt(context), **_meta(context))
        log.info("prompt answered: %s", answer.stop_reason)
    return {"plans": client.plans}


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="[acp-sdk-client] %(name)s: %(message)s")
    context = json.loads(os.environ.get("STREAMCERT_CONTEXT") or "{}")
    log.info("case %s", os.environ.get("STREAMCERT_CASE", "?"))
    view = asyncio.run(run(os.environ["STREAMCERT_AGENT_CMD"], context))
    print(json.dumps(view, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
