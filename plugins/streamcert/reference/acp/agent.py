"""The reference ACP agent: `python -m streamcert.reference.acp [--fault NAME] [--protocol 1|2]`.

JSON-RPC 2.0 on stdin/stdout, one message per line; logs go to stderr only. It speaks protocol
version 2 (seed 002) by default and version 1 when the client asks for it (`--protocol 1`: it
speaks only 1). It plays the script of `session/prompt` `_meta` (docs/contracts.md §6 and the acp_plan steps
documented in streamcert.drivers.acp) and answers the prompt when the script ends.

Plans by version (specs/acp-plans.md): v2, and v1 when the client advertised `clientCapabilities.plan`,
send `plan_update {plan: {type, planId, …}}` and `plan_removed {planId}`; v1 without the capability
sends the stable `plan {entries}` for item plans (an empty one to remove it) and nothing for others.

As the suite's agent for ACP clients (drivers/acp_client.py), a client under test starts it:
`--script FILE` plays that script (a JSON object, docs/contracts.md §6) whatever the prompt carries, and
`--record FILE` appends every line it reads and writes to FILE, so the suite reads back what the
client was sent and what it asked (`Record`).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...protocols import acp
from ...protocols.script import SCRIPT_KEY
from ..faults import check_fault, fault_argument, subclass_variants, variant

if TYPE_CHECKING:
    from ...wire.inprocess import Program

AGENT_INFO = {"name": "streamcert-reference", "title": "streamcert reference ACP agent", "version": "0.1.0"}


class Agent:
    """The correct agent. Its fault variants (below) are subclasses that each override one thing."""

    fault: str | None = None  # the fault this agent runs (faults.FAULTS; None: the correct one)
    script: dict[str, Any] | None = None  # --script: played whatever session/prompt `_meta` carries
    out: Any = None  # where its lines go (None: sys.stdout as it is at the time of writing)
    err: Any = None  # where its logs go (None: sys.stderr)
    stopped: threading.Event | None = None  # played in the suite's process: set when the suite stops it

    def __init__(self, protocol: int = acp.LATEST) -> None:
        self.protocol = protocol
        self.version = protocol
        self.capable = False
        self.sessions: dict[str, str] = {}  # sessionId → cwd

    # -- the wire ----------------------------------------------------------------------------------
    def write(self, text: str) -> None:
        out = self.out or sys.stdout
        out.write(text)
        out.flush()

    def pause(self, seconds: float) -> None:
        """A script's sleep; played in the suite's process, cut short when the suite stops the agent (a stopped
        command's process is gone at once too)."""
        if self.stopped is None:
            time.sleep(seconds)
        elif self.stopped.wait(seconds):
            raise SystemExit(-signal.SIGTERM)  # what a signalled process would end with

    def log(self, text: str) -> None:
        print(f"[reference-acp] {text}", file=self.err or sys.stderr, flush=True)

    def emit(self, msg: dict[str, Any]) -> None:
        self.write(json.dumps(msg, ensure_ascii=False, separators=(",", ":")) + "\n")

    def update(self, session_id: str, update: dict[str, Any]) -> None:
        self.emit({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session_id, "update": update}})

    def close(self) -> None:
        """At the end of input: nothing is left to write."""

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
        asked = params.get("protocolVersion")
        self.version = asked if asked in acp.VERSIONS and asked <= self.protocol else self.protocol
        self.capable = self.plan_capability(params)
        self.log(f"initialize: asked {asked}, speaking {self.version}, plan capability {self.capable}")
        return {"protocolVersion": self.version, "agentCapabilities": {"loadSession": False},
                "authMethods": [], "agentInfo": AGENT_INFO}

    def plan_capability(self, params: dict[str, Any]) -> bool:
        """Whether the client advertised clientCapabilities.plan (v1: the unstable plan updates)."""
        return isinstance((params.get("clientCapabilities") or {}).get("plan"), dict)

    def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        sid = f"sess-{uuid.uuid4().hex[:12]}"
        self.sessions[sid] = str(params.get("cwd") or "/")
        return {"sessionId": sid}

    def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        sid = params.get("sessionId")
        if sid not in self.sessions:
            raise PromptFailed(f"unknown session {sid!r}")
        script = self.script if self.script is not None else (params.get("_meta") or {}).get(SCRIPT_KEY)
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
        pid, kind = spec.get("planId"), spec.get("type", "items")
        entries = self.entries_sent(pid, [dict(e) for e in spec.get("entries") or []])
        if entries is None:
            return
        if self.stable_form(kind):
            if kind == "items":  # the stable form has item plans only
                self.update(sid, {"sessionUpdate": acp.PLAN, "entries": [self.entry(e) for e in entries]})
            return
        plan: dict[str, Any] = {"type": kind, "planId": pid}
        if kind == "items":
            plan["entries"] = [self.entry(e) for e in entries]
        elif kind == "file":
            plan["uri"] = self.file_uri(sid, str(spec.get("path", "plan.md")))
        else:
            plan.update({k: v for k, v in spec.items() if k not in ("type", "planId", "path")})
        self.update(sid, {"sessionUpdate": acp.PLAN_UPDATE, "plan": self.plan_object(plan)})

    def remove(self, sid: str, pid: str) -> None:
        if not self.unstable:
            self.update(sid, {"sessionUpdate": acp.PLAN, "entries": []})
            return
        self.update(sid, {"sessionUpdate": acp.PLAN_REMOVED, "planId": pid})

    def stable_form(self, kind: str) -> bool:
        """v1 without the capability sends the stable `plan {entries}`."""
        return not self.unstable

    def entries_sent(self, pid: str, entries: list[dict]) -> list[dict] | None:
        """The entries an update of plan `pid` carries: all of them; None: the update is not sent."""
        return entries

    def entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        """One plan entry as sent."""
        return entry

    def file_uri(self, sid: str, path: str) -> str:
        return Path(self.sessions[sid], path).as_uri()

    def plan_object(self, plan: dict[str, Any]) -> dict[str, Any]:
        return plan


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
    agent.pause(max(0.0, float(ms)) / 1000)


def _plan(agent: Agent, sid: str, spec: Any) -> None:
    if not isinstance(spec, dict) or not isinstance(spec.get("planId"), str):
        raise PromptFailed(f"acp_plan needs an object with a planId, got {json.dumps(spec)[:200]}")
    agent.plan(sid, spec)


def _removed(agent: Agent, sid: str, pid: Any) -> None:
    agent.remove(sid, str(pid))


STEPS = {"status": _say, "say": _say, "finish": _finish, "fail": _fail, "sleep": _sleep,
         "acp_plan": _plan, "acp_plan_removed": _removed}


def agent_for(fault: str | None = None, protocol: int = acp.LATEST) -> Agent:
    """The correct agent, or the variant that runs `fault`; UnknownFault for a name FAULTS does not declare."""
    check_fault(fault)
    return variant(fault, Agent, VARIANTS)(protocol)


class Record:
    """`--record FILE`: every line the agent reads ("in") and writes ("out") appended to FILE as one JSON
    object a line, `{"t": time.monotonic(), "pid": …, "in" | "out": the line without its end}`, between a
    `"start"` (the arguments) and an `"end"` (why it stopped). Opened in append mode, one write a line: a
    client that starts the agent twice leaves both runs, told apart by pid (played in a client's process,
    `run_id` tells them apart instead), and a killed agent leaves every line up to its death."""

    def __init__(self, path: str, run_id: Any = None) -> None:
        self.file = open(path, "a", encoding="utf-8", buffering=1)  # line-buffered: a line is on disk at once
        self.pid = os.getpid() if run_id is None else run_id

    def write(self, key: str, value: Any) -> None:
        self.file.write(json.dumps({"t": time.monotonic(), "pid": self.pid, key: value}, ensure_ascii=False) + "\n")

    def close(self) -> None:
        self.file.close()


class _RecordedStdout:
    """stdout as the agent writes it, each whole line also recorded as "out" (whoever writes it: the
    line is recorded as it goes out, not as the agent meant it)."""

    def __init__(self, out: Any, record: Record) -> None:
        self.out, self.record, self.pending = out, record, ""

    def write(self, text: str) -> int:
        written = self.out.write(text)
        *lines, self.pending = (self.pending + text).split("\n")
        for line in lines:
            self.record.write("out", line)
        return written

    def flush(self) -> None:
        self.out.flush()

    def close_record(self) -> None:
        if self.pending:  # written without a line end
            self.record.write("partial", self.pending)


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m streamcert.reference.acp")
    parser.add_argument("--fault", type=fault_argument("acp"), metavar="NAME",
                        help="run this fault variant (`streamcert serve --list-faults`: the ACP- ones)")
    parser.add_argument("--protocol", type=int, choices=acp.VERSIONS, default=acp.LATEST,
                        help="the latest protocol version spoken (default 2)")
    parser.add_argument("--script", metavar="FILE", help="play the script in FILE (JSON), whatever the prompt carries")
    parser.add_argument("--record", metavar="FILE", help="append every line read and written to FILE (JSON lines)")
    return parser


def main(argv: list[str] | None = None) -> int:
    return run(sys.argv[1:] if argv is None else argv, sys.stdin, sys.stdout, sys.stderr)


def run(argv: list[str], lines: Iterable[str], out: Any, err: Any, run_id: Any = None,
        stopped: threading.Event | None = None) -> int:
    """The agent the command line `argv` asks for, answering `lines` (its input, each with its line end) on `out`
    until they end, its logs on `err`: the command's run (`main`), or one played in the suite's process (`in_process`;
    the reference ACP client's, reference/acp_client/in_process.py, with `run_id` for its record), whose sleeps
    end when `stopped` is set."""
    args = parser().parse_args(argv)
    agent = agent_for(args.fault, args.protocol)
    agent.err, agent.stopped = err, stopped
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            agent.script = json.load(f)
    if not args.record:
        agent.out = out
        return serve(agent, args, lines)
    record = Record(args.record, run_id)
    record.write("start", argv)
    agent.out = stdout = _RecordedStdout(out, record)
    why = "its input closed"
    try:
        return serve(agent, args, lines, record)
    except BaseException as exc:  # recorded, then raised as it was
        why = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        if stopped is None or not stopped.is_set():  # a stopped agent records no end, as a killed process leaves none
            stdout.close_record()
            record.write("end", why)
        record.close()


def in_process(fault: str | None = None) -> Program:
    """The program `targets.reference_command("acp", fault)` runs, played in the suite's process (reference/in_process.py,
    wire/inprocess.py): `run` in a thread, on the lines the suite writes. (Imported here: the command does not need
    the suite's wire.)"""
    from ...wire.inprocess import in_thread

    check_fault(fault)
    argv = ["--fault", fault] if fault else []
    return in_thread(lambda stdin, out, err: run(argv, stdin, out, err, stopped=stdin.stopped))


def serve(agent: Agent, args: argparse.Namespace, lines: Iterable[str], record: Record | None = None) -> int:
    """Answer `lines` until they end."""
    agent.log(f"ready (protocol {args.protocol}, fault {args.fault or 'none'})")
    for raw in lines:
        if record is not None:
            record.write("in", raw.removesuffix("\n"))
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
    agent.close()
    return 0


# -- fault variants: each an agent that gets one thing wrong ----------------------------------------
VARIANTS, _variant = subclass_variants()


@_variant("acp-log-on-stdout")
class _LogOnStdout(Agent):
    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        self.write("reference ACP agent starting\n")
        return super().initialize(params)


@_variant("acp-two-messages-per-line")
class _TwoMessagesPerLine(Agent):
    """The first session/update is held and written on one line with the message after it."""

    def __init__(self, protocol: int = acp.LATEST) -> None:
        super().__init__(protocol)
        self.held = ""

    def emit(self, msg: dict[str, Any]) -> None:
        line = json.dumps(msg, ensure_ascii=False, separators=(",", ":"))
        if msg.get("method") == "session/update" and not self.held:
            self.held = line
            return
        self.write(self.held + line + "\n")
        self.held = ""

    def close(self) -> None:
        if self.held:  # a message still waiting for a line-mate goes out on its own
            self.write(self.held + "\n")


@_variant("acp-wrong-session-id")
class _WrongSessionId(Agent):
    def update(self, session_id: str, update: dict[str, Any]) -> None:
        super().update("sess-other", update)


@_variant("acp-unstable-without-capability")
class _UnstableWithoutCapability(Agent):
    def plan_capability(self, params: dict[str, Any]) -> bool:
        return True


@_variant("acp-v2-plan-form")
class _V2PlanForm(Agent):
    def stable_form(self, kind: str) -> bool:
        return super().stable_form(kind) or (self.version >= 2 and kind == "items")


@_variant("acp-no-plan-id")
class _NoPlanId(Agent):
    def plan_object(self, plan: dict[str, Any]) -> dict[str, Any]:
        if plan["type"].startswith("_"):
            del plan["planId"]
        return plan


@_variant("acp-custom-type-no-underscore")
class _CustomTypeNoUnderscore(Agent):
    def plan_object(self, plan: dict[str, Any]) -> dict[str, Any]:
        plan["type"] = plan["type"].removeprefix("_")
        return plan


@_variant("acp-entry-missing-priority")
class _EntryMissingPriority(Agent):
    def entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in entry.items() if k != "priority"}


def _no_underscore(entry: dict[str, Any], key: str) -> dict[str, Any]:
    if str(entry.get(key, "")).startswith("_"):
        return {**entry, key: entry[key][1:]}
    return entry


@_variant("acp-unknown-status")
class _UnknownStatus(Agent):
    def entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        return _no_underscore(entry, "status")


@_variant("acp-unknown-priority")
class _UnknownPriority(Agent):
    def entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        return _no_underscore(entry, "priority")


@_variant("acp-priority-reset")
class _PriorityReset(Agent):
    def entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        return {**entry, "priority": "medium"}


@_variant("acp-relative-file-uri")
class _RelativeFileUri(Agent):
    def file_uri(self, sid: str, path: str) -> str:
        return path


class _Remembers(Agent):
    """An agent that keeps the entries it last sent of each plan (until the plan is removed)."""

    def __init__(self, protocol: int = acp.LATEST) -> None:
        super().__init__(protocol)
        self.reported: dict[str, list[dict]] = {}  # planId → entries last sent

    def remove(self, sid: str, pid: str) -> None:
        self.reported.pop(pid, None)
        super().remove(sid, pid)


@_variant("acp-diff-updates")
class _DiffUpdates(_Remembers):
    def entries_sent(self, pid: str, entries: list[dict]) -> list[dict] | None:
        before, self.reported[pid] = self.reported.get(pid), entries
        return entries if before is None else [e for e in entries if e not in before]


@_variant("acp-first-update-only")
class _FirstUpdateOnly(_Remembers):
    def entries_sent(self, pid: str, entries: list[dict]) -> list[dict] | None:
        if pid in self.reported:
            return None
        self.reported[pid] = entries
        return entries


@_variant("acp-remove-unknown-plan")
class _RemoveUnknownPlan(Agent):
    def remove(self, sid: str, pid: str) -> None:
        super().remove(sid, f"{pid}-unknown")


@_variant("acp-plan-not-reported")
class _PlanNotReported(Agent):
    """The first plan of the script is never sent, nor its removal."""

    def __init__(self, protocol: int = acp.LATEST) -> None:
        super().__init__(protocol)
        self.first_plan: str | None = None

    def entries_sent(self, pid: str, entries: list[dict]) -> list[dict] | None:
        if self.first_plan is None:
            self.first_plan = pid
        return None if pid == self.first_plan else entries

    def remove(self, sid: str, pid: str) -> None:
        if pid != self.first_plan:
            super().remove(sid, pid)
