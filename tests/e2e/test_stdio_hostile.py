"""Subprocess targets that misbehave (issue 12), for the ACP agent and the line renderer: a wrapper
whose grandchild sleeps, a program that exits at once (or leaves a grandchild behind), one that writes
garbage, one that never answers, one that stops answering, one that is not found. Every run ends
within a bound close to the limit it hit (an exit: well under a second), the finding names the cause,
and no process of the program outlives the scenario."""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from processes import running

from streamcert import limits
from streamcert.catalogue import load_scenario
from streamcert.drivers import Target, run_scenario
from streamcert.framelog import END_CLOSED, END_TIME_LIMIT, Exchange, FrameLog
from streamcert.outcomes import Finding, Outcome
from streamcert.rules import RuleContext, judge
from streamcert.rules.acp.acpview import AcpTurn

LIMIT = 2.0  # start_limit and timeout of every run here
BOUND = LIMIT + 1.5  # a run cut at LIMIT ends by then: the kill's grace included, with room for a loaded machine
# A cause seen at once (an exit, a program not found, a size cap) is proven by a run that ends far inside limits
# it would otherwise have waited out: those runs get limits of LONG, and must end within AT_ONCE, a third of it.
# Both sit far above the second or two a loaded machine adds to starting a program, so load never decides them.
LONG = 30.0
AT_ONCE = LONG / 3
PY = shlex.quote(sys.executable)
AGENTS = f"{PY} {shlex.quote(str(Path(__file__).parents[1] / 'common' / 'stdio_agents.py'))}"
START_CAP = f"reached the start-up cap of {LIMIT:g} s (raise it with {limits.START.option})"
EXCHANGE_CAP = f"reached the per-exchange cap of {LIMIT:g} s (raise it with --timeout)"
SCENARIO = {"acp": "acp-v2-items", "line": "line-cases"}
LABEL = {"acp": "agent", "line": "line"}


@dataclass
class Played:
    log: FrameLog
    ex: Exchange
    found: dict[str, Finding]
    seconds: float

    def outcomes(self) -> set[Outcome]:
        return {f.outcome for f in self.found.values()}

    def message(self, req_id: str) -> str:
        return self.found[req_id].message


def play(profile: str, cmd: str, limit: float = LIMIT, **caps: int) -> Played:
    scenario = load_scenario(SCENARIO[profile])
    target = Target(start_limit=limit, timeout=limit, stream_limit=max(5.0, limit),
                    **{"acp_cmd" if profile == "acp" else "line_cmd": cmd}, **caps)
    began = time.monotonic()
    log = run_scenario(scenario.id, target)
    seconds = time.monotonic() - began
    found = {f.req_id: f for f in judge(log, scenario.requirements, RuleContext(scenario=scenario))}
    assert set(found) and not any("harness fault" in f.message or "Traceback" in f.message for f in found.values())
    return Played(log, log.get(LABEL[profile]), found, seconds)


def pids_in(path: Path) -> list[int]:
    pids = [int(p) for p in path.read_text().split()]
    assert pids, "the program did not record its processes"
    return pids


def assert_none_left(path: Path) -> None:
    left = [pid for pid in pids_in(path) if running(pid)]
    for pid in left:  # do not leave them to the next test either
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes of the program outlived the scenario: {left}"


def wrapper(pids: Path) -> str:
    """`sh -c 'sleep 1000; true'` (what `npx` or `uv run` do: the real program is a grandchild that
    holds the pipes), recording the pids of both."""
    return f"sh -c 'echo $$ > {pids}; sleep 1000 & echo $! >> {pids}; wait; true'"


# -- the ACP agent ------------------------------------------------------------------------------------

def test_acp_wrapper_whose_grandchild_sleeps_is_stopped_at_the_start_up_limit(tmp_path):
    run = play("acp", wrapper(tmp_path / "pids"))
    assert LIMIT <= run.seconds < BOUND, run.seconds
    assert run.outcomes() == {Outcome.ERROR}
    assert START_CAP in run.message("ACP-PLAN-003") and "did not answer initialize" in run.message("ACP-PLAN-003")
    assert "wrote nothing on stdout" in run.message("ACP-PLAN-001") and START_CAP in run.message("ACP-PLAN-001")
    assert len(run.message("ACP-PLAN-003")) <= 160  # the console shows that much of a message: the option too
    assert (run.ex.end, run.ex.status, run.ex.notes["limit"]["cap"]) == (END_TIME_LIMIT, None, "start_limit")
    assert_none_left(tmp_path / "pids")


@pytest.mark.parametrize("cmd,named", [("true", "exited with status 0"),
                                       ("sh -c 'echo boom >&2; exit 3'", "exited with status 3")])
def test_acp_program_that_exits_at_once_is_named_at_once(cmd, named):
    run = play("acp", cmd, limit=LONG)
    assert run.seconds < AT_ONCE, run.seconds
    assert run.outcomes() == {Outcome.ERROR}
    for rid in ("ACP-PLAN-001", "ACP-PLAN-003"):
        assert named in run.message(rid), run.message(rid)
    if "boom" in cmd:
        assert "stderr: 'boom'" in run.message("ACP-PLAN-003")


def test_acp_exit_is_not_held_by_a_grandchild_that_keeps_the_pipes(tmp_path):
    run = play("acp", f"sh -c 'sleep 1000 & echo $! > {tmp_path / 'pids'}; exit 3'", limit=LONG)
    assert run.seconds < AT_ONCE, run.seconds
    assert "exited with status 3" in run.message("ACP-PLAN-003")
    assert_none_left(tmp_path / "pids")


@pytest.mark.parametrize("then,named,limit,bound", [("", "exited with status 0", LONG, AT_ONCE),
                                                    ("; sleep 1000", START_CAP, LIMIT, BOUND)])
def test_acp_garbage_on_stdout_is_named_line_by_line(then, named, limit, bound):
    run = play("acp", f"sh -c 'echo hello; echo \"{{not json\"{then}'", limit=limit)
    assert run.seconds < bound, run.seconds
    assert run.found["ACP-PLAN-001"].outcome == Outcome.FAIL
    assert "'hello': not a JSON-RPC 2.0 message" in run.message("ACP-PLAN-001")
    assert run.found["ACP-PLAN-003"].outcome == Outcome.ERROR
    assert "line 1 not JSON: 'hello'" in run.message("ACP-PLAN-003") and named in run.message("ACP-PLAN-003")


def test_acp_agent_that_stops_answering_is_cut_at_the_per_exchange_limit():
    run = play("acp", f"{AGENTS} init-then-hang")
    assert LIMIT <= run.seconds < BOUND, run.seconds
    assert run.found["ACP-PLAN-001"].outcome == Outcome.PASS and run.found["ACP-PLAN-002"].outcome == Outcome.PASS
    # initialize answered, session/new never: the suite's own limit stopped it, so nothing is blamed
    assert run.found["ACP-PLAN-003"].outcome == Outcome.ERROR
    assert "session/new was never answered" in run.message("ACP-PLAN-003")
    assert "--timeout" in run.message("ACP-PLAN-003")
    ended = AcpTurn.read(run.ex).ended
    assert EXCHANGE_CAP in ended, ended
    assert run.ex.notes["limit"]["awaiting"] == "the answer to session/new"


def test_acp_agent_that_exits_during_the_scenario_is_named_at_once():
    run = play("acp", f"{AGENTS} init-then-exit", limit=LONG)
    assert run.seconds < AT_ONCE, run.seconds  # a Python program's start included
    assert run.found["ACP-PLAN-003"].outcome == Outcome.FAIL
    assert (run.ex.end, run.ex.status) == (END_CLOSED, 3)
    ended = AcpTurn.read(run.ex).ended
    assert "exited with status 3" in ended and "out of tea" in ended, ended


def test_acp_program_not_found_is_error_at_once():
    run = play("acp", "/nonexistent/acp-agent --stdio", limit=LONG)
    assert run.seconds < AT_ONCE
    assert run.outcomes() == {Outcome.ERROR}
    assert "could not be started" in run.message("ACP-PLAN-003") and "No such file" in run.message("ACP-PLAN-003")


def test_acp_flood_of_short_lines_is_cut_at_the_size_cap():
    """`yes`: each line counts for more than its two bytes (what keeping it costs), so a flood of short
    lines is bounded in memory as a long line is."""
    run = play("acp", "sh -c 'yes & wait'", max_stream_bytes=4 * limits.MIB, limit=LONG)
    assert run.seconds < AT_ONCE, run.seconds
    assert run.found["ACP-PLAN-001"].outcome == Outcome.FAIL and "'y': not a JSON-RPC" in run.message("ACP-PLAN-001")
    assert "reached the per-stream size cap of 4 MiB (raise it with --max-stream-bytes)" in run.message("ACP-PLAN-003")
    assert len(run.ex.events) < 4 * limits.MIB // 1024 + 256 * 1024 // 2  # at most one read past the cap


def test_acp_endless_line_is_cut_at_the_per_event_cap():
    run = play("acp", "sh -c 'tr \"\\000\" x < /dev/zero'", max_event_bytes=1 * limits.MIB, limit=LONG)
    assert run.seconds < AT_ONCE, run.seconds
    assert run.outcomes() == {Outcome.ERROR}
    assert "reached the per-event size cap of 1 MiB (raise it with --max-event-bytes)" in run.message("ACP-PLAN-001")
    assert "on stdout with no line end: 'xxxx" in run.message("ACP-PLAN-003")
    assert len(run.ex.notes["partial_line"]) <= 4096 and run.ex.notes["partial_line_bytes"] > 1 * limits.MIB


@pytest.mark.skipif(not shutil.which("setsid"), reason="needs setsid(1)")
def test_acp_pipes_held_by_a_grandchild_outside_the_group_do_not_hold_the_run(tmp_path):
    """A grandchild that left the group (its own session): the run still ends at its limit, and the
    grandchild with it (the mark in its environment, wire/descendants.py)."""
    pids = tmp_path / "pids"
    run = play("acp", f"sh -c 'setsid sleep 1000 & echo $! > {pids}; wait'")
    assert LIMIT <= run.seconds < BOUND, run.seconds
    assert START_CAP in run.message("ACP-PLAN-003")
    assert_none_left(pids)


# -- a client command: every process it started ends with the run -----------------------------------------

SETSID_GRANDCHILD = """
import os, subprocess, sys, time
sleeper = "import os, sys, time; os.setsid(); open(sys.argv[1], 'a').write(f'{os.getpid()} '); time.sleep(60)"
subprocess.Popen([sys.executable, "-c", sleeper, sys.argv[1]], stdin=subprocess.DEVNULL,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
while not os.path.exists(sys.argv[1]):  # once it has left the session
    time.sleep(0.01)
""" + "{then}"
DAEMON = """
import os, sys, time
if os.fork() == 0:  # a daemon: fork, setsid, fork again, every standard stream closed
    os.setsid()
    if os.fork() == 0:
        os.closerange(0, 3)
        with open(sys.argv[1], "a") as out:
            out.write(f"{os.getpid()} ")
        time.sleep(60)
    os._exit(0)
os.wait()
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
""" + "{then}"


@pytest.mark.parametrize("source", [SETSID_GRANDCHILD, DAEMON], ids=["setsid-grandchild", "daemon"])
@pytest.mark.parametrize("then", ["print('{}')", "import time; time.sleep(60)"], ids=["exits", "hangs"])
def test_a_client_commands_descendants_that_left_its_session_end_with_the_scenario(tmp_path, source, then):
    script, pids = tmp_path / "client.py", tmp_path / "pids"
    script.write_text(source.replace("{then}", then), "utf-8")
    began = time.monotonic()
    run_scenario("client-basic", Target(client_cmd=f"{PY} {script} {pids}", timeout=LIMIT, stream_limit=5.0))
    assert time.monotonic() - began < BOUND + 2  # the client's own limit, then the group's and the marked ones' ends
    assert_none_left(pids)


# -- a program's long output is held once (issue 25: a client view cut at 65 MiB peaked at 324 MiB) ----------

def test_a_long_output_is_kept_on_disk_past_the_spool_size_and_its_lines_decoded_once(tmp_path):
    """stdout past SPOOL_AFTER bytes goes to the spool (framelog.Spool), not to memory: the lines hold it
    decoded, and the chunks read the same bytes back (the cassette and the rules still see every byte)."""
    from streamcert.limits import SPOOL_AFTER

    line = '{"task": {"text": "' + "v" * (3 * limits.MIB) + '"}}'
    script = tmp_path / "client.py"
    script.write_text(f"import sys\nsys.stdout.write({line!r} + '\\n')\n", "utf-8")
    log = run_scenario("client-basic", Target(client_cmd=f"{PY} {script}", timeout=LONG, stream_limit=LONG))
    ex = log.get("client")
    assert ex.end == END_CLOSED and ex.events[-1].data == line
    assert ex.wire_bytes == (line + "\n").encode()
    in_memory = sum(c.length for c in ex.chunks if not c.spooled)
    assert in_memory <= SPOOL_AFTER < sum(c.length for c in ex.chunks), in_memory


def test_a_line_the_per_line_cap_cut_is_let_go_at_once_but_its_size_said():
    """Past the per-line cap only the line's start is kept (its first PARTIAL_WINDOW bytes): the rest is let go
    when the cap is reached, not held until the program ends, and the size it had is still said (a whole run:
test_acp_endless_line_is_cut_at_the_per_event_cap)."""
    from streamcert.wire.stdio import PARTIAL_WINDOW, StdioPeer

    peer = StdioPeer("a-program", FrameLog("client-basic"), label="client", max_line=1 * limits.MIB)
    for _ in range(5):
        peer._received(1, b"x" * (256 * 1024))
    assert peer.ex.notes["limit"]["cap"] == limits.MAX_EVENT.field
    assert len(peer._buffer) == PARTIAL_WINDOW
    peer._received(1, b"x" * (256 * 1024))  # read no more once cut
    assert len(peer._buffer) == PARTIAL_WINDOW and peer._cut_line == 5 * 256 * 1024  # what close() says


# -- the line renderer -------------------------------------------------------------------------------

def test_line_wrapper_whose_grandchild_sleeps_is_stopped_at_the_start_up_limit(tmp_path):
    run = play("line", wrapper(tmp_path / "pids"))
    assert LIMIT <= run.seconds < BOUND, run.seconds
    assert run.outcomes() == {Outcome.ERROR}
    assert START_CAP in run.message("LINE-001") and "drew 0 line(s)" in run.message("LINE-001")
    assert len(run.message("LINE-001")) <= 160
    assert_none_left(tmp_path / "pids")


def test_line_renderer_that_reads_and_never_answers_is_stopped_at_the_start_up_limit(tmp_path):
    pids = tmp_path / "pids"
    run = play("line", f"sh -c 'echo $$ > {pids}; cat > /dev/null; sleep 1000'")
    assert LIMIT <= run.seconds < BOUND, run.seconds
    assert run.outcomes() == {Outcome.ERROR}
    assert START_CAP in run.message("LINE-001")
    assert_none_left(pids)


@pytest.mark.parametrize("cmd,named", [("true", "exited with status 0"),
                                       ("sh -c 'echo boom >&2; exit 3'", "exited with status 3")])
def test_line_renderer_that_exits_at_once_fails_its_cases_naming_the_exit(cmd, named):
    run = play("line", cmd, limit=LONG)
    assert run.seconds < AT_ONCE, run.seconds
    assert run.found["LINE-001"].outcome == Outcome.FAIL  # a renderer must draw a line per input (docs/contracts.md §7)
    assert named in run.message("LINE-001") and "wrote 0 line(s)" in run.message("LINE-001")
    if "boom" in cmd:
        assert "stderr: 'boom'" in run.message("LINE-001")


def test_line_exit_is_not_held_by_a_grandchild_that_keeps_the_pipes(tmp_path):
    run = play("line", f"sh -c 'sleep 1000 & echo $! > {tmp_path / 'pids'}; exit 3'", limit=LONG)
    assert run.seconds < AT_ONCE, run.seconds
    assert "exited with status 3" in run.message("LINE-001")
    assert_none_left(tmp_path / "pids")


def test_line_garbage_is_blamed_case_by_case():
    run = play("line", "sh -c 'while read line; do echo garbage; done'", limit=LONG)
    assert run.seconds < AT_ONCE, run.seconds
    assert run.found["LINE-001"].outcome == Outcome.FAIL and "got 'garbage'" in run.message("LINE-001")
    assert run.found["LINE-014"].outcome == Outcome.PASS  # the same input drew the same (wrong) line


def test_line_renderer_that_stops_answering_is_cut_at_the_per_exchange_limit():
    run = play("line", "sh -c 'read line; echo Thinking; sleep 1000'")
    assert LIMIT <= run.seconds < BOUND, run.seconds
    assert run.found["LINE-001"].outcome == Outcome.FAIL
    assert EXCHANGE_CAP in run.message("LINE-001") and "wrote 1 line(s)" in run.message("LINE-001")
    assert run.ex.notes["limit"]["awaiting"].startswith("the line for input 2 of ")


def test_line_program_not_found_is_error_at_once():
    run = play("line", "/nonexistent/renderer", limit=LONG)
    assert run.seconds < AT_ONCE
    assert run.outcomes() == {Outcome.ERROR} and "No such file" in run.message("LINE-001")
