"""Driver for the ACP client cases (profile `acp-client`, cases/client/acp-client-*.json): the suite plays
the agent, the client under test (`target.acp_client_cmd`) starts it and shows the plans it reports.

The suite's agent is the reference ACP agent (`python -m streamcert.reference.acp`, the program the
`acp` profile certifies in both protocol versions), started by the client from `STREAMCERT_AGENT_CMD`
with `--script FILE` (the case's script, played whatever the prompt carries: the client needs to know
nothing of scripts) and `--record FILE` (every line it read and wrote, read back here: what the client
was sent is known exactly, not assumed). The client is run once (the embedded run's reference client is played
in the suite's process instead, `target.in_process["acp_client_cmd"]`, with the agent it starts: wire/inprocess.py,
reference/acp_client/in_process.py; recorded the same way), in the environment of docs/contracts.md §7 as
docs/clients.md extends it for ACP:

  STREAMCERT_AGENT_CMD  the command that starts the suite's agent on stdio
  STREAMCERT_CASE       the case id
  STREAMCERT_CONTEXT    JSON: {"protocolVersion": 1 | 2, "plan_capability": bool, "prompt": TEXT}

and prints its final view `{"plans": {planId: plan}}` (the v1 plan, which has no planId, under "") as
one JSON object on stdout. Its stdin is closed at once. It has the script's sleeps plus
`target.timeout` to finish, and never more than `target.stream_limit`; then its process group (the
agent with it) is stopped.

Labels written:
  client   the client's run (wire/stdio.py): events its stdout lines; request_body {"case", "context"}
           (never the environment)
  agent    the suite's agent as the client ran it, from its record: request_body the lines the client
           wrote to it, events the lines it wrote (their times on this log's clock), status None;
           end closed if it recorded its end (its input closed), else client_stop (the client, or the
           suite stopping the client, ended it); notes["agent_runs"] how many times the client started
           it (the run judged is the last one that was sent session/prompt), notes["ended"] why it ended
log.notes["acp_client_case"]: {"id", "context", "expected"}.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from pathlib import Path
from typing import Any

from .. import limits
from ..catalogue import Scenario
from ..contract.acp import ACP_CLIENT_CASE, AGENT_RUNS, ENDED
from ..contract.capture import PARTIAL_LINE
from ..contract.labels.acp import AGENT, CLIENT
from ..contract.run import UNREACHABLE
from ..framelog import END_CLIENT_STOP, END_CLOSED, Chunk, Event, Exchange, FrameLog
from ..targets import reference_command
from ..wire import activity
from ..wire.capture import Clock
from ..wire.inprocess import command_peer
from . import Target, driver
from .a2a import make_script

# docs/contracts.md §7's variables, and the one ACP adds
AGENT_CMD, CASE, CONTEXT = "STREAMCERT_AGENT_CMD", "STREAMCERT_CASE", "STREAMCERT_CONTEXT"


def script_seconds(script: dict[str, Any]) -> float:
    """How long the script keeps the agent busy by design: its sleep steps."""
    total = 0.0
    for step in script.get("steps") or []:
        if isinstance(step, dict) and isinstance(step.get("sleep"), (int, float)):
            total += max(0.0, float(step["sleep"])) / 1000
    return total


def agent_command(script_file: Path, record_file: Path) -> str:
    return (f"{reference_command('acp')} --script {shlex.quote(str(script_file))} "
            f"--record {shlex.quote(str(record_file))}")


@driver("acp-client-case")
async def acp_client_case(target: Target, scenario: Scenario, log: FrameLog) -> None:
    context = scenario.data.get("context") or {}
    script = scenario.script or make_script(scenario.id, [{"finish": "done"}])
    log.target = target.acp_client_cmd or ""
    log.notes[ACP_CLIENT_CASE] = {"id": scenario.id, "context": context, "expected": scenario.data.get("expected") or {}}
    seconds = script_seconds(script) + target.timeout
    cap, limit = (limits.EXCHANGE, seconds) if seconds < target.stream_limit else (limits.STREAM, target.stream_limit)
    clock = Clock()
    with tempfile.TemporaryDirectory(prefix="streamcert-acp-client-") as folder:
        script_file, record_file = Path(folder, "script.json"), Path(folder, "record.jsonl")
        script_file.write_text(json.dumps(script, ensure_ascii=False), "utf-8")
        command = agent_command(script_file, record_file)
        env = {**os.environ, AGENT_CMD: command, CASE: scenario.id, CONTEXT: json.dumps(context, ensure_ascii=False)}
        kept = {"label": CLIENT, "clock": clock, "env": env, "max_bytes": target.max_stream_bytes,
                "max_line": target.max_event_bytes}
        peer = command_peer(target.acp_client_cmd or "", target.in_process.get("acp_client_cmd"), log, **kept)
        await peer.start()
        peer.ex.request_body = {"case": scenario.id, "context": context}
        if not peer.started:
            log.notes[UNREACHABLE] = f"the client could not be started: {peer.ex.error}"
            return
        try:
            await peer.end_input()
            activity.waiting(log.scenario, peer.ex, limit, "the client's final view")
            if not await peer.wait_exit(limit):
                await peer.stop(cap, round(limit, 3), "the client's final view")
        finally:
            await peer.close()
        agent = read_record(record_file, command, clock)
        if agent is not None:
            log.add(agent)


def read_record(path: Path, command: str, clock: Clock) -> Exchange | None:
    """The agent's run as an exchange (see the labels above); None if the client never started it."""
    runs: dict[int, list[dict[str, Any]]] = {}
    try:
        text = path.read_text("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    for raw in text.splitlines():
        try:
            item = json.loads(raw)
        except ValueError:
            continue  # a line cut short by a kill
        if isinstance(item, dict) and isinstance(item.get("t"), (int, float)):
            runs.setdefault(item.get("pid"), []).append(item)
    if not runs:
        return None
    prompted = [pid for pid, items in runs.items() if any(_is_prompt(i.get("in")) for i in items)]
    items = runs[(prompted or list(runs))[-1]]
    ex = Exchange(label=AGENT, method="STDIO", url=command, request_body=[], t_sent=items[0]["t"] - clock.origin)
    ended = None
    for item in items:
        t = item["t"] - clock.origin
        if isinstance(item.get("in"), str):
            ex.request_body.append(item["in"])
        elif isinstance(item.get("out"), str):
            ex.events.append(Event(index=len(ex.events), t=t, data=item["out"]))
            ex.chunks.append(Chunk(t, (item["out"] + "\n").encode("utf-8")))
        elif isinstance(item.get("partial"), str):
            ex.notes[PARTIAL_LINE] = item["partial"]
        elif "end" in item:
            ended = str(item["end"])
        ex.t_end = t
    ex.end = END_CLOSED if ended is not None else END_CLIENT_STOP
    ex.notes[ENDED] = ended or "no end recorded: it was stopped (by the client, or with the client's process group)"
    ex.notes[AGENT_RUNS] = len(runs)
    return ex


def _is_prompt(line: Any) -> bool:
    if not isinstance(line, str) or "session/prompt" not in line:
        return False
    try:
        msg = json.loads(line)
    except ValueError:
        return False
    return isinstance(msg, dict) and msg.get("method") == "session/prompt"
