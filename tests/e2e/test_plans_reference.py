"""The reference's update_plan (seed 000): the plan sent after limits, the results the model sees,
and the three agents (with the tool, without, with its own tool of that name)."""

from __future__ import annotations

import pytest

from streamcert.catalogue import load_scenario
from streamcert.drivers import Target, run_scenario
from streamcert.outcomes import Outcome
from streamcert.reference.agent.options import Options
from streamcert.reference.agent.plans import ToolError, apply_limits, check_shape, cut
from streamcert.reference.agent.server import ReferenceServer
from streamcert.rules import RuleContext, judge
from streamcert.rules.plans.planview import ordered, read_back

E = "\U0001F600"


@pytest.mark.parametrize("n,want", [(119, 119), (120, 120), (121, 120), (200, 120)])
def test_label_cut_to_exactly_the_limit(n, want):
    got = apply_limits([{"label": "a" * n, "state": "done"}], Options())[0]["label"]
    assert len(got) == want and (n <= 120 or got.endswith("…"))


def test_cut_counts_code_points_and_keeps_non_bmp_whole():
    text = "c" * 118 + E + "cc"
    assert cut(text, 120) == "c" * 118 + E + "…"
    assert cut("b" * 119 + E, 120) == "b" * 119 + E  # 120 code points (121 UTF-16 units): not cut


def test_steps_past_the_20th_dropped():
    steps = [{"label": f"s{i}", "state": "pending"} for i in range(25)]
    assert [s["label"] for s in apply_limits(steps, Options())] == [f"s{i}" for i in range(20)]


@pytest.mark.parametrize("steps", [{"label": "x", "state": "done"}, ["x"], [{"state": "done"}],
                                   [{"label": "x", "state": "finished"}], [{"label": 1, "state": "done"}],
                                   [{"label": "x", "state": "done", "note": 3}]])
def test_wrong_shape_is_a_tool_error(steps):
    with pytest.raises(ToolError):
        check_shape(steps, Options())


@pytest.fixture(scope="module")
def server():
    with ReferenceServer() as srv:
        yield srv


@pytest.mark.parametrize("sid", ["plan-replace", "plan-limits", "plan-wrong-shape", "plan-no-tool", "plan-shadow"])
def test_reference_passes_the_plan_scenarios(server, sid):
    scenario = load_scenario(sid)
    agents = {"no_plan_url": server.agent_url("no-plan"), "plan_shadow_url": server.agent_url("plan-shadow")}
    log = run_scenario(sid, Target(a2a_url=server.url, stream_limit=5.0, **agents))
    found = judge(log, scenario.requirements, RuleContext(scenario=scenario))
    assert {f.req_id for f in found} == set(scenario.requirements)
    assert all(f.outcome == Outcome.PASS for f in found), [f for f in found if f.outcome != Outcome.PASS]


@pytest.mark.parametrize("sid,option", [("plan-no-tool", "--no-plan-url"), ("plan-shadow", "--plan-shadow-url")])
def test_the_other_agents_are_found_only_where_they_are_named(server, sid, option):
    scenario = load_scenario(sid)
    log = run_scenario(sid, Target(a2a_url=server.url, stream_limit=5.0))
    found = judge(log, scenario.requirements, RuleContext(scenario=scenario))
    assert found and all(f.outcome == Outcome.UNSUPPORTED and option in f.message for f in found), found


def test_reference_plans_are_replaced_and_read_back(server):
    log = run_scenario("plan-replace", Target(a2a_url=server.url, stream_limit=5.0))
    plans = [p["steps"] for _, _, p in ordered(log.get("stream"))]
    asked = [s["plan"] for s in log.script["steps"] if "plan" in s]
    assert plans == asked
    assert [p for _, _, p in read_back(log)] == [{"steps": asked[-1]}] * 2


def test_card_without_the_extension_is_unsupported(server):
    from streamcert.reference.agent.agents import AgentSpec
    bare = AgentSpec(name="", title="bare", description="no extensions", extensions=(), plan=True)
    with ReferenceServer(agents=(bare,)) as srv:
        scenario = load_scenario("plan-replace")
        log = run_scenario("plan-replace", Target(a2a_url=srv.url, stream_limit=5.0))
        found = judge(log, scenario.requirements, RuleContext(scenario=scenario))
    assert {f.outcome for f in found} == {Outcome.UNSUPPORTED}
