"""The ACP driver against the reference ACP agent (a subprocess): every scenario passes in the
version it asks for; an agent that speaks only v1 makes the v2 scenarios UNSUPPORTED on their
version-specific requirements; the agent logs to stderr only."""

from __future__ import annotations

import json
import shlex
import sys

import pytest

from streamcert.catalogue import load_scenario, scenario_ids
from streamcert.drivers import Target, run_scenario
from streamcert.drivers.acp import VERSION_FREE
from streamcert.outcomes import Outcome
from streamcert.rules import RuleContext, judge

AGENT = f"{shlex.quote(sys.executable)} -m streamcert.reference.acp"
ACP_SCENARIOS = [s for s in scenario_ids() if load_scenario(s).profile == "acp"]


def certify(sid: str, cmd: str):
    scenario = load_scenario(sid)
    log = run_scenario(sid, Target(acp_cmd=cmd, stream_limit=5.0))
    return log, {f.req_id: f for f in judge(log, scenario.requirements, RuleContext(scenario=scenario))}


def test_the_four_scenarios_are_there():
    assert set(ACP_SCENARIOS) == {"acp-v2-items", "acp-v2-variants", "acp-v1-capability", "acp-v1-fallback"}


@pytest.mark.parametrize("sid", ACP_SCENARIOS)
def test_reference_passes_in_the_scenario_version(sid):
    log, found = certify(sid, AGENT)
    scenario = load_scenario(sid)
    assert set(found) == set(scenario.requirements)
    assert {r: f.message for r, f in found.items() if f.outcome != Outcome.PASS} == {}
    init = json.loads(log.get("agent").events[0].data)
    assert init["result"]["protocolVersion"] == scenario.data["acp"]["protocolVersion"]


def test_plans_take_the_form_of_the_version():
    forms = {}
    for sid in ACP_SCENARIOS:
        log, _ = certify(sid, AGENT)
        kinds = set()
        for ev in log.get("agent").events:
            update = (json.loads(ev.data).get("params") or {}).get("update") or {}
            if str(update.get("sessionUpdate", "")).startswith("plan"):
                kinds.add(update["sessionUpdate"])
        forms[sid] = kinds
    assert forms["acp-v1-fallback"] == {"plan"}
    assert forms["acp-v1-capability"] == {"plan_update", "plan_removed"}
    assert forms["acp-v2-variants"] == {"plan_update", "plan_removed"}
    assert forms["acp-v2-items"] == {"plan_update"}


def test_v1_only_agent_makes_v2_scenarios_unsupported():
    _, found = certify("acp-v2-items", AGENT + " --protocol 1")
    for rid, f in found.items():
        want = Outcome.PASS if rid in VERSION_FREE else Outcome.UNSUPPORTED
        assert f.outcome == want, (rid, f.message)
    assert "protocolVersion 1" in found["ACP-PLAN-020"].message


def test_reference_logs_to_stderr_only():
    log, _ = certify("acp-v1-fallback", AGENT)
    agent = log.get("agent")
    assert "reference-acp" in agent.notes.get("stderr", "")
    assert all(ev.data.startswith('{"jsonrpc":"2.0"') for ev in agent.events)


def test_fault_is_seen_on_the_wire():
    log, found = certify("acp-v2-variants", AGENT + " --fault acp-relative-file-uri")
    assert found["ACP-PLAN-026"].outcome == Outcome.FAIL
    assert '"uri":"plans/release-4.2.md"' in "".join(ev.data for ev in log.get("agent").events)


def test_unstartable_agent_is_error():
    _, found = certify("acp-v2-items", "/nonexistent/acp-agent")
    assert found and all(f.outcome == Outcome.ERROR for f in found.values())
