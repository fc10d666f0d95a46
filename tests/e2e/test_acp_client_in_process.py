"""The embedded run plays the reference ACP client, and the reference agent it starts, in its own process
(reference/acp_client/in_process.py, wire/inprocess.py: issue 29, no Python start-up per case for either), while a
client given by --acp-client-cmd keeps its process per case (docs/clients.md). The CLIENT-ACP- rules see the same run
either way: the same view, the same lines between client and agent, the same record of how each ended, the same
outcomes; a client stopped at its limit is recorded, with its agent, as a stopped process group is."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import time

import pytest

from streamcert.catalogue import load_scenario
from streamcert.contract.capture import IN_PROCESS
from streamcert.drivers import load_driver, run_scenario
from streamcert.framelog import END_CLIENT_STOP, END_CLOSED, END_TIME_LIMIT, FrameLog
from streamcert.reference.acp_client.in_process import in_process, in_process_for
from streamcert.reference.faults import FAULTS
from streamcert.rules import RuleContext, judge
from streamcert.targets import Target, reference_command

pytest_plugins = ["pytester"]


def target(fault: str | None, here: bool, **limits: float) -> Target:
    played = Target(acp_client_cmd=reference_command("acp_client", fault), **{"timeout": 20.0, **limits})
    if here:
        played.in_process["acp_client_cmd"] = in_process(fault)
    return played


SESSION = re.compile(r"sess-[0-9a-f]{12}")  # the agent mints one for each session


def seen(log: FrameLog) -> dict:
    """What the rules read of an ACP client case, without its times and the session id its agent minted."""
    client, agent = log.get("client"), log.get("agent")
    if agent is not None:
        agent = dataclasses.replace(agent, request_body=[SESSION.sub("SID", line) for line in agent.request_body],
                                    events=[dataclasses.replace(e, data=SESSION.sub("SID", e.data)) for e in agent.events])
    return {
        "client": (client.method, client.url, client.request_body, client.end, client.status,
                   (client.notes.get("limit") or {}).get("cap"), client.notes.get("partial_line"),
                   client.notes.get("stderr")),
        "view": [json.loads(e.data) for e in client.events],
        "agent": None if agent is None else (agent.method, agent.url.split(" --script")[0], agent.request_body,
                                             [e.data for e in agent.events], agent.end, agent.notes),
    }


def outcomes(log: FrameLog) -> list[tuple[str, str]]:
    scenario = load_scenario(log.scenario)
    return sorted((f.req_id, f.outcome.value) for f in judge(log, scenario.requirements, RuleContext(scenario=scenario)))


@pytest.mark.parametrize("case_id, fault", [
    ("acp-client-v2-items", None),  # two item plans, updated in turn
    ("acp-client-v1-fallback-removed", None),  # v1 without the capability: the stable plan, emptied
    ("acp-client-v2-custom-values", "acp-drops-custom"),  # a fault: caught the same way
    ("acp-client-v2-removed", "acp-keeps-removed"),
])
def test_the_reference_acp_client_in_process_is_judged_as_its_command_is(case_id, fault):
    command, here = run_scenario(case_id, target(fault, False)), run_scenario(case_id, target(fault, True))
    assert here.get("client").notes[IN_PROCESS] is True and IN_PROCESS not in command.get("client").notes
    assert seen(here) == seen(command)
    assert here.get("client").end == END_CLOSED and here.get("agent").end == END_CLOSED
    assert outcomes(here) == outcomes(command)
    if fault:
        assert dict(outcomes(here))[FAULTS[fault].catches[0]] in ("FAIL", "NON_STRICT", "WARNING")


def test_only_the_reference_acp_clients_own_command_is_played_in_process():
    faults = [f.name for f in FAULTS.values() if f.target == "acp_client"]
    assert faults and all(in_process_for(reference_command("acp_client", f)) is not None for f in [None, *faults])
    for other in (reference_command("acp_client", "acp-log-on-stdout"), reference_command("acp"),
                  reference_command("client"), reference_command("acp_client") + " --limit 5", "python my.py", None):
        assert in_process_for(other) is None, other


STOP_AT = 3.0  # the stream limit: room for a command's Python start-up on a loaded machine, before the prompt


def stopped(here: bool) -> FrameLog:
    """A case whose agent sleeps past the stream limit: the client is stopped at it, its agent with it."""
    case = load_scenario("acp-client-v2-items")
    script = {**case.script, "steps": [{"sleep": 9000}, *case.script["steps"]]}
    case = dataclasses.replace(case, script=script)
    log = FrameLog(scenario=case.id, target="", script=script)
    asyncio.run(load_driver("acp-client-case")(target(None, here, stream_limit=STOP_AT), case, log))
    return log


def test_a_client_stopped_at_its_limit_is_recorded_with_its_agent_as_a_stopped_process_group_is():
    command = stopped(False)
    started = time.monotonic()
    here = stopped(True)
    assert time.monotonic() - started < STOP_AT + 3  # the agent's sleep cut short as a stopped process group's is (9 s)
    for log in (command, here):
        client, agent = log.get("client"), log.get("agent")
        assert client.end == END_TIME_LIMIT and client.status is None and client.events == []
        assert client.notes["limit"]["cap"] == "stream_limit"
        assert agent.end == END_CLIENT_STOP and agent.notes["ended"].startswith("no end recorded")
        assert [json.loads(line)["method"] for line in agent.request_body] == ["initialize", "session/new",
                                                                              "session/prompt"]
    assert seen(here)["agent"] == seen(command)["agent"]


RECORDS = """
import json
def test_records(streamcert_capture):
    log = streamcert_capture("acp-client-v2-items")
    ex, agent = log.get("client"), log.get("agent")
    with open("client.json", "w") as f:
        json.dump({"url": ex.url, "in_process": ex.notes.get("in_process"), "status": ex.status,
                   "agent": agent.end, "view": [e.data for e in ex.events]}, f)
"""


def test_the_embedded_run_plays_its_acp_client_in_process_and_a_given_command_as_a_process(pytester):
    pytester.makepyfile(test_records=RECORDS)
    args = ("-p", "no:cacheprovider", "-p", "no:randomly", "test_records.py", "--streamcert-profile", "acp-client")
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=1)
    embedded = json.loads((pytester.path / "client.json").read_text())
    assert {k: embedded[k] for k in ("url", "in_process", "status", "agent")} == {
        "url": reference_command("acp_client"), "in_process": True, "status": 0, "agent": END_CLOSED}
    given = reference_command("acp_client")  # the same program, given as a command: a process per case, as any other
    pytester.runpytest_subprocess(*args, f"--streamcert-acp-client-cmd={given}").assert_outcomes(passed=1)
    as_given = json.loads((pytester.path / "client.json").read_text())
    assert {k: as_given[k] for k in ("url", "in_process", "status", "agent")} == {
        "url": given, "in_process": None, "status": 0, "agent": END_CLOSED}
    assert as_given["view"] == embedded["view"] and len(embedded["view"]) == 1
