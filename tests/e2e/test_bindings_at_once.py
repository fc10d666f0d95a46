"""A suite run plays each A2A scenario over every binding it certifies at once (drivers.run_scenarios), and one
binding after the other with --streamcert-bindings-in-turn, or for the push scenarios when the run pins the webhook
receiver; the findings of the card scenario are the same either way (the scenarios with waits and timing were
compared against real SDKs both ways: docs/peers.md). Short scenarios, each run in a subprocess (a run in-process
would leave the modules it imports unloaded behind it)."""

from __future__ import annotations

import json

import pytest

from streamcert.protocols.grpc_messages import grpc_available
from streamcert.targets import REFERENCE_CARD_KEY

pytest_plugins = ["pytester"]

COUNTING = '''
import json, streamcert.plugin
calls = []
inner = streamcert.plugin.run_scenarios
def counted(scenario_id, targets):
    calls.append([t.binding for t in targets])
    return inner(scenario_id, targets)
streamcert.plugin.run_scenarios = counted
def pytest_sessionfinish(session):
    with open("calls.json", "w") as f:
        json.dump(calls, f)
'''


@pytest.mark.skipif(grpc_available() is not None, reason="the three bindings need the grpc extra")
def test_the_bindings_are_played_at_once_or_in_turn_with_the_same_findings(pytester, streamcert_reference):
    server = streamcert_reference()
    pytester.makepyfile(counting=COUNTING)
    bindings = ["jsonrpc", "http-json", "grpc"]
    seen = {}
    for mode, extra in (("at once", ()), ("in turn", ("--streamcert-bindings-in-turn",))):
        result = pytester.runpytest_subprocess(
            "-p", "counting", "--pyargs", "streamcert.suite", "-p", "no:cacheprovider", "-q",
            "--streamcert-url", server.url, "--streamcert-binding", "all", "--streamcert-scenario", "card",
            "--streamcert-card-key", REFERENCE_CARD_KEY, "--streamcert-report", f"rep-{mode}", *extra, timeout=120)
        assert result.parseoutcomes()["passed"] == 1, result.stdout.str()
        seen[mode] = json.loads((pytester.path / "calls.json").read_text())
        report = json.loads((pytester.path / f"rep-{mode}" / "compatibility.json").read_text("utf-8"))
        assert report["bindings"]["certified"] == bindings
        card = {e["id"]: e["bindings"] for e in report["requirements"] if e["id"].startswith("A2A-CARD-")}
        assert card and all(set(b.values()) == {"PASS"} for b in card.values()), card
        seen[mode + " findings"] = card
    assert seen["at once"] == [bindings]  # one call: the three plays together
    assert seen["in turn"] == [[b] for b in bindings]
    assert seen["at once findings"] == seen["in turn findings"]


@pytest.mark.skipif(grpc_available() is not None, reason="the three bindings need the grpc extra")
def test_the_push_plays_go_in_turn_when_the_run_pins_the_webhook_receiver(pytester, streamcert_reference):
    server = streamcert_reference()
    pytester.makepyfile(counting=COUNTING)
    seen = {}
    for mode, extra in (("own receivers", ()), ("pinned", ("--streamcert-push-receiver", "127.0.0.1:0"))):
        result = pytester.runpytest_subprocess(
            "-p", "counting", "--pyargs", "streamcert.suite", "-p", "no:cacheprovider", "-q",
            "--streamcert-url", server.url, "--streamcert-push-agent-url", server.agent_url("push"),
            "--streamcert-binding", "all", "--streamcert-scenario", "push-configs",
            "--streamcert-report", "rep", *extra, timeout=120)
        assert result.parseoutcomes()["passed"] == 1, result.stdout.str()
        seen[mode] = json.loads((pytester.path / "calls.json").read_text())
    assert seen["own receivers"] == [["jsonrpc", "http-json", "grpc"]]
    assert seen["pinned"] == [["jsonrpc"], ["http-json"], ["grpc"]]
