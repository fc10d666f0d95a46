"""The embedded run plays the reference ACP agent and line renderer in its own process (reference/in_process.py,
wire/inprocess.py's `in_thread`: issue 29, no Python start-up per case), their input the lines the driver writes,
while a command a user gives keeps its process. The ACP- and LINE- rules see the same run either way: the same lines
each way, the same end and outcomes, faults included; one stopped at a limit, or one that crashes, is recorded as
the command would be."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import time

import pytest

from streamcert.catalogue import load_scenario
from streamcert.contract.capture import EXITED_AFTER, IN_PROCESS
from streamcert.drivers import load_driver, run_scenario
from streamcert.framelog import END_CLOSED, END_TIME_LIMIT, FrameLog
from streamcert.reference.faults import FAULTS
from streamcert.reference.in_process import programs
from streamcert.rules import RuleContext, judge
from streamcert.targets import Target, reference_command
from streamcert.wire.inprocess import in_thread

SESSION = re.compile(r"sess-[0-9a-f]{12}")  # the agent mints one for each session
# scenario → (Target field, reference program, profile, label of its run)
PROGRAMS = {"acp": ("acp_cmd", "acp", "acp", "agent"), "line": ("line_cmd", "line", "line", "line")}


def target(kind: str, fault: str | None, here: bool, **limits: float) -> Target:
    field, program, profile, _ = PROGRAMS[kind]
    played = Target(**{field: reference_command(program, fault)}, **{"timeout": 20.0, **limits})
    if here:
        played.in_process = programs(played, [profile])
        assert list(played.in_process) == [field]
    return played


def seen(log: FrameLog, kind: str) -> tuple:
    """What the rules read of the program's run, without its times, the session ids the agent minted and the
    temporary folder each ACP turn gives as its cwd."""
    ex = log.get(PROGRAMS[kind][3])
    notes = {k: v for k, v in ex.notes.items() if k not in (IN_PROCESS, EXITED_AFTER)}
    if "limit" in notes:  # the seconds it had run when stopped vary with the load
        notes["limit"] = {k: v for k, v in notes["limit"].items() if k != "figure"}
    cwd = log.notes["acp"]["cwd"] if kind == "acp" else "no cwd"

    def same(text: str) -> str:
        return SESSION.sub("SID", text.replace(cwd, "CWD"))

    return (ex.method, ex.url, [same(line) for line in ex.request_body], [same(e.data) for e in ex.events], ex.end,
            ex.status, notes)


def outcomes(log: FrameLog) -> list[tuple[str, str]]:
    scenario = load_scenario(log.scenario)
    return sorted((f.req_id, f.outcome.value) for f in judge(log, scenario.requirements, RuleContext(scenario=scenario)))


@pytest.mark.parametrize("kind, case_id, fault", [
    ("acp", "acp-v2-items", None),
    ("acp", "acp-v1-fallback", None),
    ("acp", "acp-v2-items", "acp-two-messages-per-line"),  # two messages on one line: the lines are the same
    ("acp", "acp-v2-variants", "acp-log-on-stdout"),
    ("line", "line-cases", None),
    ("line", "line-cases", "no-elapsed"),
])
def test_the_reference_program_in_process_is_judged_as_its_command_is(kind, case_id, fault):
    command, here = run_scenario(case_id, target(kind, fault, False)), run_scenario(case_id, target(kind, fault, True))
    label = PROGRAMS[kind][3]
    assert here.get(label).notes[IN_PROCESS] is True and IN_PROCESS not in command.get(label).notes
    assert seen(here, kind) == seen(command, kind)
    assert here.get(label).end == END_CLOSED and here.get(label).status == 0 and here.get(label).events
    assert outcomes(here) == outcomes(command)
    if fault:
        assert dict(outcomes(here))[FAULTS[fault].catches[0]] in ("FAIL", "NON_STRICT", "WARNING")


def test_only_the_reference_programs_own_commands_of_the_profiles_played_are_played_here():
    given = Target(acp_cmd=reference_command("acp"), line_cmd="python my_renderer.py",
                   client_cmd=reference_command("client", "split-char-lost"),
                   acp_client_cmd=reference_command("acp_client", "acp-log-on-stdout"))  # another program's fault
    assert list(programs(given, ["acp", "line", "client", "acp-client"])) == ["acp_cmd", "client_cmd"]
    assert programs(given, ["line", "a2a"]) == {}
    assert list(programs(Target(acp_cmd=reference_command("acp", "acp-diff-updates")), ["acp"])) == ["acp_cmd"]


STOP_AT = 3.0  # the stream limit: room for a command's Python start-up on a loaded machine, before the prompt


def stopped(here: bool) -> FrameLog:
    """An ACP turn whose script sleeps past the stream limit: the agent is stopped at it."""
    case = load_scenario("acp-v2-items")
    case = dataclasses.replace(case, script={**case.script, "steps": [{"sleep": 9000}, *case.script["steps"]]})
    log = FrameLog(scenario=case.id, target="", script=case.script)
    asyncio.run(load_driver("acp")(target("acp", None, here, stream_limit=STOP_AT), case, log))
    return log


def test_an_agent_stopped_at_its_limit_is_recorded_as_its_command_is():
    command = stopped(False)
    started = time.monotonic()
    here = stopped(True)
    assert time.monotonic() - started < STOP_AT + 3  # its sleep cut short as a stopped process's is, not waited out (9 s)
    assert seen(here, "acp") == seen(command, "acp")
    ex = here.get("agent")
    assert ex.end == END_TIME_LIMIT and ex.status is None and ex.notes["limit"]["cap"] == "stream_limit"
    assert [SESSION.sub("SID", line)[:40] for line in ex.request_body][-1].startswith('{"jsonrpc":"2.0","id":3')


def _crashes(stdin, out, err):
    for line in stdin:
        out.write(line.upper())
        raise RuntimeError("the renderer broke here")
    return 0


def _refuses(stdin, out, err):
    raise SystemExit("usage: no such option")


def test_a_program_in_a_thread_that_crashes_exits_1_with_its_traceback_and_a_system_exit_keeps_its_code():
    log = run_scenario("line-cases", Target(line_cmd="crashes", in_process={"line_cmd": in_thread(_crashes)}))
    ex = log.get("line")
    assert ex.end == END_CLOSED and ex.status == 1 and len(ex.events) == 1 and ex.events[0].data.startswith('{"PROGRESS"')
    assert "RuntimeError: the renderer broke here" in ex.notes["stderr"]
    log = run_scenario("line-cases", Target(line_cmd="refuses", in_process={"line_cmd": in_thread(_refuses)}))
    ex = log.get("line")
    assert ex.end == END_CLOSED and ex.status == 1 and ex.events == [] and ex.notes["stderr"] == "usage: no such option\n"
