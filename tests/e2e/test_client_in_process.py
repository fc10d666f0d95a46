"""The embedded run plays the reference client in its own process (reference/client.in_process, wire/inprocess.py:
issue 29, no Python start-up per case), while a client given by --client-cmd keeps its process per case
(docs/clients.md). The client rules see the same run either way: the same view, the same requests, the same
record of how it ended, the same outcomes; a program that hangs or crashes in the process is recorded as a
command that does."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import time

import pytest

from streamcert.catalogue import load_scenario
from streamcert.contract.capture import IN_PROCESS
from streamcert.drivers import run_scenario
from streamcert.framelog import END_CLOSED, END_TIME_LIMIT, FrameLog
from streamcert.recordings.replay import SENT
from streamcert.reference.client.client import in_process, in_process_for
from streamcert.reference.faults import FAULTS
from streamcert.rules import RuleContext, judge
from streamcert.targets import Target, reference_command

pytest_plugins = ["pytester"]

MINTED = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}")  # the client's uuid4 ids


def played(case_id: str, fault: str | None, here: bool) -> FrameLog:
    target = Target(client_cmd=reference_command("client", fault), timeout=20)
    if here:
        target.in_process["client_cmd"] = in_process(fault)
    return run_scenario(case_id, target)


def seen(log: FrameLog) -> dict:
    """What the rules read of a client run, without what differs between two runs of one client anyway (the ids
    it mints, the times, the port of the case's replay server)."""
    ex = log.get("client")
    url = log.notes["client_case"]["url"]
    return {
        "client": (ex.method, ex.url, ex.request_body, ex.end, ex.status, ex.notes["returncode"],
                   ex.notes.get("limit"), ex.notes.get("partial_line"), ex.notes["stderr_tail"].replace(url, "URL")),
        "view": [json.loads(e.data) for e in ex.events],
        "sent": [(s.method, s.url.replace(url, ""), s.rpc_method, sorted(s.request_headers),
                  MINTED.sub("MINTED", json.dumps(s.request_body, sort_keys=True)), s.status, s.notes.get("answer"))
                 for s in log.all(SENT)],
    }


def outcomes(log: FrameLog) -> list[tuple[str, str]]:
    scenario = load_scenario(log.scenario)
    return sorted((f.req_id, f.outcome.value) for f in judge(log, scenario.requirements, RuleContext(scenario=scenario)))


@pytest.mark.parametrize("case_id, fault", [
    ("client-three-kinds", None),  # three pauses, each answered from the context
    ("client-retry", None),  # a dropped answer sent again: the retry's note on stderr
    ("client-no-streaming", None),  # SendMessage and GetTask polling
    ("client-utf8-split", "split-char-lost"),  # a fault: caught the same way
])
def test_the_reference_client_in_process_is_judged_as_its_command_is(case_id, fault):
    command, here = played(case_id, fault, False), played(case_id, fault, True)
    assert here.get("client").notes[IN_PROCESS] is True and IN_PROCESS not in command.get("client").notes
    assert seen(here) == seen(command)
    assert outcomes(here) == outcomes(command)
    if fault:
        assert dict(outcomes(here))[FAULTS[fault].catches[0]] in ("FAIL", "NON_STRICT", "WARNING")


def test_only_the_reference_clients_own_command_is_played_in_process():
    client_faults = [f.name for f in FAULTS.values() if f.target == "client"]
    assert in_process_for(reference_command("client")) is not None
    assert all(in_process_for(reference_command("client", f)) is not None for f in client_faults)
    server_fault = next(f.name for f in FAULTS.values() if f.target == "server")
    for other in (reference_command("client", server_fault), reference_command("line"), "python my_client.py",
                  reference_command("client") + " --deadline 5", None, ""):
        assert in_process_for(other) is None, other


async def _hangs(env, stdin, out, err):
    out("thinking\n")
    await asyncio.sleep(60)
    return 0


async def _crashes(env, stdin, out, err):
    err("about to break\n")
    raise RuntimeError("the client broke here")


def test_an_in_process_program_that_hangs_is_cut_at_its_limit_and_one_that_crashes_exits_1():
    started = time.monotonic()
    log = run_scenario("client-basic", Target(client_cmd="hangs", in_process={"client_cmd": _hangs}, timeout=1.0))
    ex = log.get("client")
    assert ex.end == END_TIME_LIMIT and ex.status is None and ex.notes["returncode"] is None
    assert ex.notes["limit"]["cap"] == "timeout" and [e.data for e in ex.events] == ["thinking"]
    assert time.monotonic() - started < 1.0 + 3
    log = run_scenario("client-basic", Target(client_cmd="crashes", in_process={"client_cmd": _crashes}, timeout=5))
    ex = log.get("client")
    assert ex.end == END_CLOSED and ex.status == 1 and ex.url == "crashes"
    assert "about to break" in ex.notes["stderr_tail"] and "RuntimeError: the client broke here" in ex.notes["stderr_tail"]
    assert {o for _, o in outcomes(log)} == {"ERROR"}  # no view: every requirement says why, none passes


RECORDS = """
import json
def test_records(streamcert_capture):
    ex = streamcert_capture("client-basic").get("client")
    with open("client.json", "w") as f:
        json.dump({"url": ex.url, "in_process": ex.notes.get("in_process"), "status": ex.status}, f)
"""


def test_the_embedded_run_plays_its_client_in_process_and_a_given_command_as_a_process(pytester):
    # In a subprocess: pytester's in-process run restores sys.modules after it, and httpcore first imported inside
    # (httpx imports it lazily) would come back as a second copy whose exceptions httpx no longer maps.
    pytester.makepyfile(test_records=RECORDS)
    args = ("-p", "no:cacheprovider", "-p", "no:randomly", "test_records.py", "--streamcert-profile", "client")
    pytester.runpytest_subprocess(*args).assert_outcomes(passed=1)
    embedded = json.loads((pytester.path / "client.json").read_text())
    assert embedded == {"url": reference_command("client"), "in_process": True, "status": 0}
    given = reference_command("client")  # the same program, given as a command: a process per case, as any other
    pytester.runpytest_subprocess(*args, f"--streamcert-client-cmd={given}").assert_outcomes(passed=1)
    assert json.loads((pytester.path / "client.json").read_text()) == {"url": given, "in_process": None, "status": 0}
    assert shlex.split(given)[1:] == ["-m", "streamcert.reference.client"]
