"""A test agent on the `agent-client-protocol` SDK (PyPI, 0.12.x): plays the suite's script over stdio.

    python tests/peers/acp_sdk_agent.py        (the suite starts it: streamcert run --acp-cmd "…")

It is written the way the SDK's own examples suggest — an `acp.Agent` run by `acp.run_agent` on
stdin/stdout, session updates sent through the connection the SDK hands to `on_connect` — and plays
the script steps `status`, `acp_plan` (item plans; markdown and file plans when the client advertised
`clientCapabilities.plan`), `acp_plan_removed`, `sleep`, `finish`. It answers initialize with the
SDK's PROTOCOL_VERSION. Plans go as `plan_update`/`plan_removed` when the client advertised the
capability, else as the stable `plan`. It does not correct what the SDK puts on the wire.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import uuid
from pathlib import Path
from typing import Any

import acp
from acp import PROTOCOL_VERSION, plan_entry, run_agent, text_block, update_agent_message, update_plan
from acp.schema import (
    AgentCapabilities,
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PlanUpdateFile,
    PlanUpdateItems,
    PlanUpdateMarkdown,
    PromptResponse,
)

SCRIPT_KEY = "urn:streamcert:script"
log = logging.getLogger("acp-sdk-peer")


class ScriptAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.capable = False
        self.cwd: dict[str, str] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        self.capable = bool(client_capabilities is not None and getattr(client_capabilities, "plan", None) is not None)
        log.info("initialize: asked %s, capability %s", protocol_version, self.capable)
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=AgentCapabilities(),
                                  agent_info=Implementation(name="acp-sdk-peer", version="0.1.0"))

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kwargs: Any) -> NewSessionResponse:
        session_id = f"sdk-{uuid.uuid4().hex[:10]}"
        self.cwd[session_id] = cwd
        return NewSessionResponse(session_id=session_id)

    async def prompt(self, session_id: str, prompt: Any, **kwargs: Any) -> PromptResponse:
        # The SDK spreads the request's `_meta` keys into the keyword arguments.
        script = kwargs.get(SCRIPT_KEY) or {}
        for step in script.get("steps") or []:
            (name, arg), = step.items()
            if name in ("status", "say", "finish"):
                await self.conn.session_update(session_id, update_agent_message(text_block(str(arg))))
            elif name == "sleep":
                await asyncio.sleep(float(arg) / 1000)
            elif name == "acp_plan":
                await self.plan(session_id, arg)
            elif name == "acp_plan_removed":
                await self.conn.session_update(
                    session_id, AgentPlanRemovedUpdate(session_update="plan_removed", plan_id=arg)
                    if self.capable else update_plan([]))
            else:
                raise acp.RequestError.internal_error({"step": name})
            if name == "finish":
                break
        return PromptResponse(stop_reason="end_turn")

    async def plan(self, session_id: str, spec: dict[str, Any]) -> None:
        kind, pid = spec.get("type", "items"), spec["planId"]
        entries = [plan_entry(e["content"], priority=e["priority"], status=e["status"])
                   for e in spec.get("entries") or []]
        if not self.capable:
            if kind == "items":
                await self.conn.session_update(session_id, update_plan(entries))
            return
        if kind == "items":
            plan: Any = PlanUpdateItems(type="items", plan_id=pid, entries=entries)
        elif kind == "markdown":
            plan = PlanUpdateMarkdown(type="markdown", plan_id=pid, content=spec["content"])
        elif kind == "file":
            plan = PlanUpdateFile(type="file", plan_id=pid, uri=Path(self.cwd[session_id], spec["path"]).as_uri())
        else:
            return  # the SDK's models have no custom plan variant
        await self.conn.session_update(session_id, AgentPlanContentUpdate(session_update="plan_update", plan=plan))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO)
    asyncio.run(run_agent(ScriptAgent(), use_unstable_protocol=True))


if __name__ == "__main__":
    main()
