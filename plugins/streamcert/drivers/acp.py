"""Driver for the ACP scenarios (profile `acp`): one prompt turn with an agent on stdio.

The suite starts `target.acp_cmd` (the embedded run's reference agent is played in the suite's process instead,
`target.in_process["acp_cmd"]`, wire/inprocess.py, recorded the same way), sends `initialize` (the scenario's
protocolVersion, with or without `clientCapabilities.plan`), `session/new` (an absolute temporary cwd, no MCP servers) and
`session/prompt` carrying the script in `_meta` (docs/contracts.md §6), then reads every line until the prompt
is answered. Requests the agent makes of the client are answered: `session/request_permission` with
the first allowing option, anything else with -32601.

Limits (the agent is stopped at the first one reached, and its run records which, wire/stdio.py):
`initialize` must be answered within `target.start_limit` of the start (a wrapper such as `npx` may
install first), `session/new` within `target.timeout`, and the whole run, the prompt turn included,
ends within `target.stream_limit` of the start. An agent that exits is not waited for.

Script steps for ACP plans (an additive extension of docs/contracts.md §6):
  {"acp_plan": {"planId": P, "type": "items", "entries": [{"content", "priority", "status"}, …]}}
  {"acp_plan": {"planId": P, "type": "markdown", "content": MD}}
  {"acp_plan": {"planId": P, "type": "file", "path": REL}}   the URI is REL made absolute under the cwd
  {"acp_plan": {"planId": P, "type": "_custom", …}}          a custom variant, its fields as given
  {"acp_plan_removed": P}
The agent reports the plan's whole new state (v2 and v1 with the capability: plan_update /
plan_removed; v1 without: a `plan` with the entries of an items plan, an empty `plan` to remove it).
`status`, `sleep`, `finish` and `fail` work as in §6 (agent_message_chunk; the prompt answered
end_turn; the prompt answered with a JSON-RPC error).

Labels written:
  agent      the agent's whole run (wire/stdio.py): request_body the lines sent, events its stdout lines
log.notes["acp"]: {"requested_version", "plan_capability", "cwd"}.
"""

from __future__ import annotations

import tempfile
from typing import Any

from .. import limits
from ..catalogue import Scenario
from ..contract.acp import ACP
from ..contract.labels.acp import AGENT
from ..contract.run import UNREACHABLE
from ..framelog import FrameLog
from ..protocols import acp
from ..protocols.script import SCRIPT_KEY
from ..wire.inprocess import command_peer
from ..wire.jsonlines import read_lines
from ..wire.stdio import StdioPeer
from . import Target, driver
from .a2a import make_script, unsupported

# Judged whatever version the agent answers; the rest need the scenario's version.
VERSION_FREE = ("ACP-PLAN-001", "ACP-PLAN-002", "ACP-PLAN-003")
CLIENT_INFO = {"name": "streamcert", "title": "streamcert conformance suite", "version": "0.1.0"}


class _Session:
    """Requests to the agent, one at a time, answering what it asks of the client meanwhile."""

    def __init__(self, peer: StdioPeer, stream_limit: float) -> None:
        self.peer = peer
        self.stream_limit = stream_limit  # seconds from the agent's start to the end of the run
        self.next_id = 0
        self.seen = 0  # stdout lines read so far

    async def request(self, method: str, params: dict[str, Any], cap: limits.Cap,
                      seconds: float) -> dict[str, Any] | None:
        """The agent's answer to one request, within `seconds` (the limit `cap`) and the stream limit;
        None if it exits or writes no answer in time (then it is stopped at the limit reached)."""
        self.next_id += 1
        rid = self.next_id
        await self.peer.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        bound = self.peer.bound(cap, seconds, self.stream_limit)
        while True:
            ev = await self.peer.expect(lambda _e: True, bound, f"the answer to {method}", start=self.seen)
            if ev is None:
                return None
            self.seen = ev.index + 1
            # A broken line may still hold the answer; the rules judge the line, the driver reads on.
            for msg in read_lines([ev.data])[0].messages:
                if isinstance(msg.get("method"), str) and "id" in msg:
                    await self.peer.send(_answer(msg))
                elif msg.get("id") == rid and "method" not in msg:
                    return msg


def _answer(request: dict[str, Any]) -> dict[str, Any]:
    if request["method"] == "session/request_permission":
        options = (request.get("params") or {}).get("options") or []
        allow = [o for o in options if isinstance(o, dict) and str(o.get("kind", "")).startswith("allow")]
        chosen = (allow or [o for o in options if isinstance(o, dict)] or [None])[0]
        if chosen is not None:
            outcome = {"outcome": "selected", "optionId": chosen.get("optionId")}
        else:
            outcome = {"outcome": "cancelled"}
        return {"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": outcome}}
    return {"jsonrpc": "2.0", "id": request["id"],
            "error": {"code": -32601, "message": f"the suite's client does not offer {request['method']}"}}


@driver("acp")
async def acp_turn(target: Target, scenario: Scenario, log: FrameLog) -> None:
    cfg = scenario.data.get("acp", {})
    version = int(cfg.get("protocolVersion", acp.LATEST))
    capable = bool(cfg.get("plan_capability", True))
    script = scenario.script or make_script(scenario.id, [{"finish": "done"}])
    log.target = target.acp_cmd or ""
    with tempfile.TemporaryDirectory(prefix="streamcert-acp-") as cwd:
        log.notes[ACP] = {"requested_version": version, "plan_capability": capable, "cwd": cwd}
        peer = command_peer(target.acp_cmd or "", target.in_process.get("acp_cmd"), log, label=AGENT,
                            max_bytes=target.max_stream_bytes, max_line=target.max_event_bytes)
        await peer.start()
        if not peer.started:
            log.notes[UNREACHABLE] = f"the agent could not be started: {peer.ex.error}"
            return
        session = _Session(peer, target.stream_limit)
        try:
            caps: dict[str, Any] = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
            if capable:
                caps["plan"] = {}
            init = await session.request("initialize", {"protocolVersion": version, "clientCapabilities": caps,
                                                        "clientInfo": CLIENT_INFO},
                                         limits.START, target.start_limit)
            answered = ((init or {}).get("result") or {}).get("protocolVersion")
            if init is None or "result" not in init:
                return
            if answered != version:
                unsupported(log, [r for r in scenario.requirements if r not in VERSION_FREE],
                            f"the scenario needs ACP protocol version {version}; the agent answered "
                            f"initialize with protocolVersion {answered!r}")
            new = await session.request("session/new", {"cwd": cwd, "mcpServers": []}, limits.EXCHANGE, target.timeout)
            session_id = ((new or {}).get("result") or {}).get("sessionId")
            if not isinstance(session_id, str):
                return
            await session.request("session/prompt", {
                "sessionId": session_id,
                "prompt": [{"type": "text", "text": scenario.data.get("prompt", scenario.title or scenario.id)}],
                "_meta": {SCRIPT_KEY: script},
            }, limits.STREAM, target.stream_limit)  # the turn streams: it has what is left of the stream limit
        finally:
            await peer.close()
