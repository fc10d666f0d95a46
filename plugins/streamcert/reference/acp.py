"""The reference ACP agent: `python -m streamcert.reference.acp [--fault NAME] [--protocol 1|2]`.

JSON-RPC 2.0 on stdin/stdout, one message per line; logs go to stderr only. It speaks protocol
version 2 (seed 002) by default and version 1 when the client asks for it (`--protocol 1`: it
speaks only 1). It plays the script of `session/prompt` `_meta` (DESIGN §6 and the acp_plan steps
documented in streamcert.scenarios.acp) and answers the prompt when the script ends.

Plans by version (specs/acp-plans.md): v2, and v1 when the client advertised `clientCapabilities.plan`,
send `plan_update {plan: {type, planId, …}}` and `plan_removed {planId}`; v1 without the capability
sends the stable `plan {entries}` for item plans (an empty one to remove it) and nothing for others.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from .. import acp
from .faults import FAULTS

AGENT_INFO = {"name": "streamcert-reference", "title": "streamcert reference ACP agent", "version": "0.1.0"}


def log(text: str) -> None:
    print(f"[reference-acp] {text}", file=sys.stderr, flush=True)


class Agent:
    def __init__(self, fault: str | None = None, protocol: int = acp.LATEST) -> None:
        self.fault = fault
        self.protocol = protocol
        self.version = protocol
        self.capable = False
        self.sessions: dict[str, str] = {}  # sessionId → cwd
        self.held = ""  # acp-two-messages-per-line: a message waiting for the next on its line
        self.reported: dict[str, list[dict]] = {}  # planId → entries last sent (acp-diff-updates)
        self.first_plan: str | None = None
        self.withheld: set[str] = set()  # plans never sent (acp-plan-not-reported): nor their removal

    def has(self, name: str) -> bool:
        return self.fault == name

    # -- the wire ----------------------------------------------------------------------------------
    def emit(self, msg: dict[str, Any]) -> None:
        line = json.dumps(msg, ensure_ascii=False, separators=(",", ":"))
        if self.has("acp-two-messages-per-line") and msg.get("method") == "session/update" and not self.held:
            self.held = line  # the next message is written on the same line
            return
        sys.stdout.write(self.held + line + "\n")
        self.held = ""
        sys.stdout.flush()

    def update(self, session_id: str, update: dict[str, Any]) -> None:
        if self.has("acp-wrong-session-id"):
            session_id = "sess-other"
        self.emit({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "update": update}})

    # -- methods -----------------------------------------------------------------------------------
    def handle(self, msg: dict[str, Any]) -> None:
        method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if not isinstance(method, str):
            return  # an answer to a request this agent never makes
        handler = {"initialize": self.initialize, "session/new": self.new_session,
                   "session/prompt": self.prompt}.get(method)
        if handler is None:
            if rid is not None:
                self.emit({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"unknown method {method}"}})
            return
        try:
            result = handler(params)
        except PromptFailed as exc:
            self.emit({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": str(exc)}})
            return
        if rid is not None:
            self.emit({"jsonrpc": "2.0", "id": rid, "result": result})

    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.has("acp-log-on-stdout"):
            sys.stdout.write("reference ACP agent starting\n")
        asked = params.get("protocolVersion")
        self.version = asked if asked in acp.VERSIONS and asked <= self.protocol else self.protocol
        self.capable = isinstance((params.get("clientCapabilities") or {}).get("plan"), dict)
        if self.has("acp-unstable-without-capability"):
            self.capable = True
        log(f"initialize: asked {asked}, speaking {self.version}, plan capability {self.capable}")
        return {"protocolVersion": self.version, "agentCapabilities": {"loadSession": False},
                "authMethods": [], "agentInfo": AGENT_INFO}

    def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        sid = f"sess-{uuid.uuid4().hex[:12]}"
        self.sessions[sid] = str(params.get("cwd") or "/")
        return {"sessionId": sid}

    def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        sid = params.get("sessionId")
        if sid not in self.sessions:
            raise PromptFailed(f"unknown session {sid!r}")
        script = (params.get("_meta") or {}).get(acp.SCRIPT_KEY)
        steps = script.get("steps") if isinstance(script, dict) else [{"finish": "Nothing to do."}]
        for step in steps or []:
            name = next(iter(step), None) if isinstance(step, dict) and len(step) == 1 else None
            play = STEPS.get(name)
            if play is None:
                raise PromptFailed(f"unknown script step {json.dumps(step)[:200]}")
            if play(self, sid, step[name]) == "end":
                break
        return {"stopReason": "end_turn"}

    # -- plans -------------------------------------------------------------------------------------
    @property
    def unstable(self) -> bool:
        return self.version >= 2 or self.capable

    def plan(self, sid: str, spec: dict[str, Any]) -> None:
        spec = dict(spec)
        pid, kind = spec.get("planId"), spec.get("type", "items")
        if self.first_plan is None:
            self.first_plan = pid
        if self.has("acp-plan-not-reported") and pid == self.first_plan:
            self.withheld.add(pid)
            return
        if self.has("acp-first-update-only") and pid in self.reported:
            return
        entries = [dict(e) for e in spec.get("entries") or []]
        sent = self.diff(pid, entries) if self.has("acp-diff-updates") else entries
        self.reported[pid] = entries
        if not self.unstable or (self.has("acp-v2-plan-form") and self.version >= 2 and kind == "items"):
            if kind == "items":
                self.update(sid, {"sessionUpdate": acp.PLAN, "entries": self.break_entries(sent)})
            return
        plan: dict[str, Any] = {"type": kind, "planId": pid}
        if kind == "items":
            plan["entries"] = self.break_entries(sent)
        elif kind == "file":
            rel = str(spec.get("path", "plan.md"))
            plan["uri"] = rel if self.has("acp-relative-file-uri") else Path(self.sessions[sid], rel).as_uri()
        else:
            plan.update({k: v for k, v in spec.items() if k not in ("type", "planId", "path")})
        if self.has("acp-custom-type-no-underscore") and kind.startswith("_"):
            plan["type"] = kind[1:]
        if self.has("acp-no-plan-id") and kind.startswith("_"):
            del plan["planId"]
        self.update(sid, {"sessionUpdate": acp.PLAN_UPDATE, "plan": plan})

    def remove(self, sid: str, pid: str) -> None:
        if pid in self.withheld:
            return
        self.reported.pop(pid, None)
        if not self.unstable:
            self.update(sid, {"sessionUpdate": acp.PLAN, "entries": []})
            return
        if self.has("acp-remove-unknown-plan"):
            pid = f"{pid}-unknown"
        self.update(sid, {"sessionUpdate": acp.PLAN_REMOVED, "planId": pid})

    def diff(self, pid: str, entries: list[dict]) -> list[dict]:
        """acp-diff-updates: only the entries that changed since the last update of this plan."""
        before = self.reported.get(pid)
        return entries if before is None else [e for e in entries if e not in before]

    def break_entries(self, entries: list[dict]) -> list[dict]:
        out = []
        for e in entries:
            e = dict(e)
            if self.has("acp-entry-missing-priority"):
                e.pop("priority", None)
            if self.has("acp-unknown-status") and str(e.get("status", "")).startswith("_"):
                e["status"] = e["status"][1:]
            if self.has("acp-unknown-priority") and str(e.get("priority", "")).startswith("_"):
                e["priority"] = e["priority"][1:]
            out.append(e)
        return out


class PromptFailed(Exception):
    """The turn ends in error: the prompt is answered with a JSON-RPC error carrying this text."""


def _say(agent: Agent, sid: str, text: Any) -> None:
    agent.update(sid, {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": str(text)}})


def _finish(agent: Agent, sid: str, text: Any) -> str:
    _say(agent, sid, text)
    return "end"


def _fail(agent: Agent, sid: str, text: Any) -> None:
    raise PromptFailed(str(text))


def _sleep(agent: Agent, sid: str, ms: Any) -> None:
    time.sleep(max(0.0, float(ms)) / 1000)


def _plan(agent: Agent, sid: str, spec: Any) -> None:
    if not isinstance(spec, dict) or not isinstance(spec.get("planId"), str):
        raise PromptFailed(f"acp_plan needs an object with a planId, got {json.dumps(spec)[:200]}")
    agent.plan(sid, spec)


def _removed(agent: Agent, sid: str, pid: Any) -> None:
    agent.remove(sid, str(pid))


STEPS = {"status": _say, "say": _say, "finish": _finish, "fail": _fail, "sleep": _sleep,
         "acp_plan": _plan, "acp_plan_removed": _removed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m streamcert.reference.acp")
    parser.add_argument("--fault", choices=sorted(n for n, f in FAULTS.items() if f.target == "acp"))
    parser.add_argument("--protocol", type=int, choices=acp.VERSIONS, default=acp.LATEST,
                        help="the latest protocol version spoken (default 2)")
    args = parser.parse_args(argv)
    agent = Agent(fault=args.fault, protocol=args.protocol)
    log(f"ready (protocol {args.protocol}, fault {args.fault or 'none'})")
    for raw in sys.stdin:
        raw = raw.strip()
        if not raw:
            continue
        try:
            msg = json.loads(raw)
        except ValueError:
            agent.emit({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        if isinstance(msg, dict):
            agent.handle(msg)
    if agent.held:  # a message still waiting for a line-mate goes out on its own at the end
        sys.stdout.write(agent.held + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
