"""The reference ACP client: `python -m streamcert.reference.acp_client [--fault NAME] [--limit S]`.

What a client under `--acp-client-cmd` does (docs/clients.md, ACP clients): it starts the agent
command of `STREAMCERT_AGENT_CMD` on stdio, asks `initialize` in the protocol version of
`STREAMCERT_CONTEXT` (`protocolVersion`, with `clientCapabilities.plan` when `plan_capability` is
true), opens a session (`session/new`, its cwd the current directory), sends one `session/prompt`
(the context's `prompt`), keeps the plans the agent reports until the prompt is answered, and prints
its final view as one JSON line, `{"plans": {planId: plan}}`, then exits 0.

Plans (seed 002; specs/acp-plans.md): a `plan_update` replaces plan `planId` whole, whatever its type
(items, markdown, file, a custom `_` one: kept as sent); `plan_removed` drops it; the v1 `plan
{entries}`, which has no id, is the one plan under the key "" (an empty one drops it: v1 has no
removal, and a plan without entries shows nothing). Entries are kept as sent, values it does not know
included. Requests the agent makes are refused (-32601), a permission request cancelled.

Every wait is bounded: the whole run ends within `--limit` seconds (default 30), the agent is ended
when the turn is over. An agent that cannot be started, exits or refuses a request ends the run with
status 1 and a line on stderr, and no view.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from ...protocols import acp
from ..faults import check_fault, fault_argument, subclass_variants, variant

AGENT_CMD = "STREAMCERT_AGENT_CMD"
CONTEXT = "STREAMCERT_CONTEXT"
CLIENT_INFO = {"name": "streamcert-reference-client", "title": "streamcert reference ACP client", "version": "0.1.0"}
LIMIT_S = 30.0  # the whole run, by default
EXIT_GRACE_S = 2.0  # for the agent to exit once its input is closed


class Failed(Exception):
    """The run cannot go on: the agent could not be started, exited, refused or did not answer."""


def log(text: str) -> None:
    print(f"[reference-acp-client] {text}", file=sys.stderr, flush=True)


class Plans:
    """The plans the client shows, by planId ("" for the v1 `plan`). Its fault variants (below) are
    subclasses that each override one thing."""

    fault: str | None = None  # the fault this client runs (faults.FAULTS; None: the correct one)

    def __init__(self, version: int = acp.LATEST) -> None:
        self.version = version  # the protocol version the agent answered
        self.shown: dict[str, dict[str, Any]] = {}

    def update(self, update: dict[str, Any]) -> None:
        """One session/update: plans change on the three plan kinds, nothing else does."""
        kind = update.get("sessionUpdate")
        if kind == acp.PLAN:
            entries = update.get("entries")
            if isinstance(entries, list):
                self.single(entries)
        elif kind == acp.PLAN_UPDATE:
            plan = update.get("plan")
            if isinstance(plan, dict) and isinstance(plan.get("planId"), str):
                self.replace(plan["planId"], plan)
        elif kind == acp.PLAN_REMOVED and isinstance(update.get("planId"), str):
            self.remove(update["planId"])

    def single(self, entries: list[Any]) -> None:
        """The v1 `plan`: the one plan, replaced whole; an empty one leaves nothing to show."""
        if entries:
            self.replace("", {"entries": entries})
        else:
            self.remove("")

    def replace(self, pid: str, plan: dict[str, Any]) -> None:
        if isinstance(plan.get("entries"), list):
            plan = {**plan, "entries": self.entries_kept(pid, plan["entries"])}
        self.shown[pid] = plan

    def entries_kept(self, pid: str, entries: list[Any]) -> list[Any]:
        """The entries shown for an update of plan `pid`: all of them, as sent."""
        return entries

    def remove(self, pid: str) -> None:
        self.shown.pop(pid, None)

    def view(self) -> dict[str, Any]:
        return {"plans": self.shown}


class Lines:
    """The agent as the client speaks to it: JSON-RPC lines out (`send`), its lines in through `lines` (None once its
    output ended), every wait bounded by the run's deadline; `log` takes the client's diagnostics. `Agent` is a
    subprocess; in_process.py's `InProcessAgent` the reference agent played in the client's process."""

    def __init__(self, deadline: float, say: Callable[[str], None] = log) -> None:
        self.deadline = deadline
        self.log = say
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.next_id = 0

    def send(self, msg: dict[str, Any]) -> None:
        raise NotImplementedError

    def status(self) -> int | None:
        """Its exit status, None while it runs."""
        raise NotImplementedError

    def end(self) -> None:
        """Close its input, give it a moment to exit, then stop it."""
        raise NotImplementedError

    def request(self, method: str, params: dict[str, Any], on_update: Any) -> dict[str, Any]:
        """The result of one request; session/update notifications met meanwhile go to `on_update`."""
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            msg = self.receive(f"the answer to {method}")
            if msg.get("method") == "session/update":
                update = (msg.get("params") or {}).get("update")
                if isinstance(update, dict):
                    on_update(update)
            elif isinstance(msg.get("method"), str) and "id" in msg:
                self.send(_refusal(msg))
            elif msg.get("id") == rid:
                if "result" not in msg:
                    raise Failed(f"{method} was refused: {json.dumps(msg.get('error'))[:300]}")
                result = msg["result"]
                return result if isinstance(result, dict) else {}

    def receive(self, awaiting: str) -> dict[str, Any]:
        """The next message the agent writes (a line that is not one is skipped, with a note)."""
        while True:
            left = self.deadline - time.monotonic()
            try:
                line = self.lines.get(timeout=max(left, 0.0)) if left > 0 else self.lines.get_nowait()
            except queue.Empty:
                raise Failed(f"no {awaiting} within the run's limit") from None
            if line is None:
                raise Failed(f"the agent ended its output (status {self.status()}) before {awaiting}")
            try:
                msg = json.loads(line)
            except ValueError:
                self.log(f"not a JSON-RPC message, skipped: {line.strip()[:200]!r}")
                continue
            if isinstance(msg, dict):
                return msg


class Agent(Lines):
    """The agent subprocess, its lines read by a thread."""

    def __init__(self, command: str, deadline: float, say: Callable[[str], None] = log) -> None:
        super().__init__(deadline, say)
        try:
            self.proc = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         text=True, encoding="utf-8", errors="replace")
        except (OSError, ValueError) as exc:
            raise Failed(f"the agent {command!r} could not be started: {exc}") from None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(msg, ensure_ascii=False, separators=(",", ":")) + "\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise Failed(f"the agent stopped reading: {exc}") from None

    def status(self) -> int | None:
        return self.proc.poll()

    def end(self) -> None:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=EXIT_GRACE_S)


def _refusal(request: dict[str, Any]) -> dict[str, Any]:
    if request["method"] == "session/request_permission":
        return {"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": {"outcome": "cancelled"}}}
    return {"jsonrpc": "2.0", "id": request["id"],
            "error": {"code": -32601, "message": f"the reference client does not offer {request['method']}"}}


def read_context(text: str | None) -> dict[str, Any]:
    try:
        context = json.loads(text or "{}")
    except ValueError:
        raise Failed(f"{CONTEXT} is not JSON: {text[:200]!r}") from None
    if not isinstance(context, dict):
        raise Failed(f"{CONTEXT} is not a JSON object")
    return context


def session(make_plans: Any, command: str, context: dict[str, Any], limit: float,
            start: Callable[[str, float], Lines] = Agent) -> Plans:
    """One session with the agent `start(command, deadline)` starts: initialize, session/new, one prompt turn; the
    plans it left shown."""
    version = context.get("protocolVersion", acp.LATEST)
    caps: dict[str, Any] = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
    if context.get("plan_capability"):
        caps["plan"] = {}
    agent = start(command, time.monotonic() + limit)
    plans: Plans | None = None

    def on_update(update: dict[str, Any]) -> None:
        if plans is not None:
            plans.update(update)

    try:
        init = agent.request("initialize", {"protocolVersion": version, "clientCapabilities": caps,
                                            "clientInfo": CLIENT_INFO}, on_update)
        answered = init.get("protocolVersion")
        plans = make_plans(answered if answered in acp.VERSIONS else version)
        sid = agent.request("session/new", {"cwd": os.getcwd(), "mcpServers": []}, on_update).get("sessionId")
        if not isinstance(sid, str):
            raise Failed("session/new answered without a sessionId")
        prompt = context.get("prompt")
        if isinstance(prompt, str) or prompt is None:
            prompt = [{"type": "text", "text": prompt or "Go ahead"}]
        agent.request("session/prompt", {"sessionId": sid, "prompt": prompt}, on_update)
    finally:
        agent.end()
    return plans


def plans_for(fault: str | None = None) -> Any:
    """The correct client's plans, or the variant that runs `fault`, as a factory of the protocol version."""
    check_fault(fault)
    return variant(fault, Plans, VARIANTS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m streamcert.reference.acp_client")
    parser.add_argument("--fault", type=fault_argument("acp_client"), metavar="NAME",
                        help="run this fault variant (`streamcert serve --list-faults`)")
    parser.add_argument("--limit", type=float, default=LIMIT_S, metavar="SECONDS",
                        help=f"the whole run ends within this many seconds (default {LIMIT_S:g})")
    args = parser.parse_args(argv)
    status, view = play(plans_for(args.fault), os.environ, args.limit, log, Agent)
    if view is not None:
        print(view, flush=True)
    return status


def play(make_plans: Any, env: Mapping[str, str], limit: float, say: Callable[[str], None],
         start: Callable[[str, float], Lines]) -> tuple[int, str | None]:
    """The client's run in the environment `env`: its exit status and the line of its final view (None: none, the
    reason said to `say`)."""
    command = env.get(AGENT_CMD, "")
    try:
        if not command.strip():
            raise Failed(f"{AGENT_CMD} is not set: no agent to start")
        plans = session(make_plans, command, read_context(env.get(CONTEXT)), limit, start)
    except Failed as exc:
        say(str(exc))
        return 1, None
    return 0, json.dumps(plans.view(), ensure_ascii=False, separators=(",", ":"))


# -- fault variants: each a client that gets one thing wrong -------------------------------------------
VARIANTS, _variant = subclass_variants()


@_variant("acp-merge-entries")
class _MergeEntries(Plans):
    """An update of a plan is merged into what it shows: entries matched by content are updated, the
    others kept, new ones added at the end (an empty v1 `plan` then changes nothing)."""

    def single(self, entries: list[Any]) -> None:
        self.replace("", {"entries": entries})

    def entries_kept(self, pid: str, entries: list[Any]) -> list[Any]:
        before = (self.shown.get(pid) or {}).get("entries") or []
        new = {_content(e): e for e in entries}
        merged = [new.pop(_content(e), e) for e in before]
        return merged + list(new.values())


@_variant("acp-drops-custom")
class _DropsCustom(Plans):
    """Entries whose status or priority is not listed for the protocol version are dropped, without a word."""

    def entries_kept(self, pid: str, entries: list[Any]) -> list[Any]:
        statuses = acp.STATUSES.get(self.version, acp.STATUSES[acp.LATEST])
        return [e for e in entries if isinstance(e, dict) and e.get("status") in statuses
                and e.get("priority") in acp.PRIORITIES]


@_variant("acp-keeps-removed")
class _KeepsRemoved(Plans):
    """plan_removed, and an empty v1 `plan`, change nothing: the plan stays shown as it was."""

    def single(self, entries: list[Any]) -> None:
        if entries:
            super().single(entries)

    def remove(self, pid: str) -> None:
        pass


def _content(entry: Any) -> str:
    return json.dumps(entry.get("content") if isinstance(entry, dict) else entry)
