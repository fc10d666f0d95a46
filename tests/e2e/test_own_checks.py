"""The fixtures a user's own tests use (docs/plugin.md): examples/test_own_checks.py run as a user runs it, its
agent started by its own fixture and handed to the plugin through `streamcert_target`; one scenario, driven once
for both the conformance check and the user's check on its capture. Plus the values an override may give."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from streamcert.running.own_checks import adopted_values

pytest_plugins = ["pytester"]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "test_own_checks.py"

COUNTING = '''
import json, streamcert.plugin, streamcert.drivers
from streamcert.reference.process import ReferenceProcess
played = []
started = ReferenceProcess.start
def start(self):
    played.append(["embedded reference started", None])
    return started(self)
ReferenceProcess.start = start
def counted(inner):
    def run(scenario_id, target):
        played.append([scenario_id, target.a2a_url])
        return inner(scenario_id, target)
    return run
def each_counted(inner):
    def run(scenario_id, targets):
        played.extend([scenario_id, target.a2a_url] for target in targets)
        return inner(scenario_id, targets)
    return run
streamcert.plugin.run_scenarios = each_counted(streamcert.plugin.run_scenarios)
streamcert.drivers.run_scenario = counted(streamcert.drivers.run_scenario)
def pytest_sessionfinish(session):
    with open("played.json", "w") as f:
        json.dump(played, f)
'''


def test_the_example_certifies_the_agent_its_fixture_started_and_drives_it_once(pytester):
    shutil.copy(EXAMPLE, pytester.path / "test_own_checks.py")
    pytester.makepyfile(counting=COUNTING)
    result = pytester.runpytest_subprocess("-p", "counting", "-p", "no:cacheprovider", "-p", "no:randomly",
                                           "test_own_checks.py", "--streamcert-report", "rep", timeout=120)
    result.assert_outcomes(passed=2)
    played = json.loads((pytester.path / "played.json").read_text())
    assert [sid for sid, _ in played] == ["stream-basic"], played  # one drive, shared by both; no embedded reference
    report = json.loads((pytester.path / "rep" / "compatibility.json").read_text("utf-8"))
    assert report["target"]["a2a"] == played[0][1] and report["target"]["embedded"] is False
    assert report["implementation"]["name"] == "streamcert reference agent"  # as its card names it
    judged = {e["id"]: e["status"] for e in report["requirements"] if "test_the_suite_certifies_it" in str(e["tests"])}
    assert judged and all(status == "PASS" for status in judged.values()), judged


def test_an_override_gives_a_url_or_run_options_by_name():
    assert adopted_values("http://127.0.0.1:9/") == {"a2a_url": "http://127.0.0.1:9"}
    assert adopted_values({"a2a_url": "http://127.0.0.1:9", "headers": ["A: 1"]})["headers"] == ["A: 1"]
    with pytest.raises(ValueError, match="no run option named url"):
        adopted_values({"url": "http://127.0.0.1:9"})
    with pytest.raises(Exception, match="not an http"):
        adopted_values("ftp://x")
    with pytest.raises(TypeError):
        adopted_values(41241)


class _Run:
    """What Captures reads of a run: its target, its captures, the bindings it certifies (none chosen here)."""

    def __init__(self, target):
        self.target, self.captures = target, {}

    def bindings(self):
        return None


def test_a_capture_is_driven_once_and_the_client_speaks_to_the_target_with_its_credentials(streamcert_reference):
    import asyncio

    from streamcert.running.own_checks import Captures
    from streamcert.targets import Target

    server = streamcert_reference()
    captures = Captures(_Run(Target(a2a_url=server.url, headers={"X-Team": "t1"})))
    log = captures("card")
    assert log.get("card").status == 200 and captures("card") is log  # the second call drives nothing
    assert captures("card", binding="http-json") is not log  # another binding: its own capture

    async def card_status():
        async with captures.client() as client:
            return (await client.get_card(label="own")), client

    exchange, client = asyncio.run(card_status())
    assert exchange.status == 200 and client.log.get("own") is exchange
    assert exchange.request_headers.get("X-Team") == "t1"  # the run's credentials go with the client
