"""The phases script v1 could not produce before docs/script-extensions.md (queued, waiting_for_model,
loading_model, waiting_for_subagents, compacting, retrying, waiting_for_person plan, calls in parallel,
writing a call's arguments): the script's plan, the PROG- rules on hand-made streams both ways (each
agent's sequence on its own, PROG-016 the subagent form, PROG-017 the first-started call), and the
reference's progress route playing the steps."""

from __future__ import annotations

import json

import httpx
import pytest
from logs import frame_log, progress_sse, script

from streamcert.catalogue import Scenario
from streamcert.drivers import Target, run_scenario
from streamcert.outcomes import Outcome
from streamcert.protocols.script import SCRIPT_KEY
from streamcert.reference.agent.server import ReferenceServer
from streamcert.rules import RuleContext, judge
from streamcert.rules.progress.script_plan import plan_of

T0 = 1_795_000_000_000  # a since in Unix milliseconds


def item(progress, status="Working", agent=None):
    frame = {"status": status, "progress": progress}
    if agent is not None:
        frame["agent"] = agent
    return frame


def p(phase, since=T0, **data):
    return {"phase": phase, "since": since, **data}


def judged(req_id, items, steps, times=None):
    """(the worst outcome of req_id, its findings) on a progress stream of `items` played for `steps`."""
    sc = script(*steps)
    log = frame_log(progress_sse(items, times=times, script=sc), script=sc)
    scenario = Scenario(id="t", profile="progress", title="", requirements=(req_id,), script=sc)
    findings = judge(log, [req_id], RuleContext(scenario=scenario))
    assert findings, f"no finding for {req_id}"
    return max((f.outcome for f in findings), key=lambda o: o.rank), findings


# -- the script's plan ----------------------------------------------------------------------------------

def test_plan_of_the_waits():
    plan = plan_of(script(
        {"queued": {"ahead": 2, "ms": 300}}, {"queued": {"ahead": 1, "ms": 100}},  # the same prompt: one phase
        {"wait_model": {"model": "A", "reason": "slots", "ms": 100}},
        {"wait_model": {"model": "A", "reason": "busy", "ms": 100}},  # the same model: its reason is data
        {"wait_model": {"model": "B", "reason": "group", "ms": 100}},  # another model: another thing
        {"load_model": {"model": "B", "ms": 100}}, {"compact": 100},
        {"retry": {"reason": "503", "in": 5, "attempt": 1, "ms": 100}}, {"finish": "ok"}))
    shown = [(e.phase, e.match, round(e.offset_s, 3)) for e in plan.expected]
    assert shown == [("queued", {"ahead": 2}, 0.0), ("waiting_for_model", {"model": "A", "reason": "slots"}, 0.4),
                     ("waiting_for_model", {"model": "B", "reason": "group"}, 0.6), ("loading_model", {"model": "B"}, 0.7),
                     ("compacting", {}, 0.8), ("retrying", {"in": 5, "attempt": 1}, 0.9)]
    assert plan.end_s == pytest.approx(1.0) and plan.ending == "finish"


def test_plan_of_calls_in_parallel_shows_the_first_started_running():
    plan = plan_of(script({"think": 100}, {"tools": [
        {"name": "bash", "what": "bun test", "ms": 300},
        {"name": "read_file", "what": "src/app.ts", "at": 100, "ms": 400},
        {"name": "bash", "what": "tsc", "at": 150, "ms": 100}]}, {"finish": "ok"}))
    (pset,) = plan.parallel
    assert pset.shown == [0, 1]  # the third starts and ends while the first runs: never shown
    assert [(e.match, round(e.offset_s, 3)) for e in plan.expected[1:]] == [
        ({"tool": "bash", "what": "bun test"}, 0.1), ({"tool": "read_file"}, 0.4)]
    assert plan.end_s == pytest.approx(0.6)


def test_plan_of_subagents_gives_each_its_own_plan():
    plan = plan_of(script({"subagents": [
        {"id": "a", "steps": [{"think": 100}, {"finish": "ok"}]},
        {"id": "b", "steps": [{"think": 300}, {"subagents": [{"id": "c", "steps": [{"compact": 50}]}]},
                              {"stop": "steps"}]}]}, {"write": {"tokens": 5, "ms": 100}}, {"stop": "budget"}))
    assert [(e.phase, e.match) for e in plan.expected] == [("waiting_for_subagents", {"running": 2}), ("writing", {}),
                                                           ("stopped", {"reason": "budget"})]
    assert plan.expected[1].offset_s == pytest.approx(0.35)  # after the longest subagent (b: 300 + c's 50)
    assert sorted(plan.subagents) == ["a", "b", "c"]
    assert plan.subagents["b"].ending == "stop" and plan.subagents["a"].ending == "finish"


# -- PROG-015: each new step shows its phase and data, both ways ----------------------------------------

NEW_STEPS = [
    ({"queued": {"ahead": 2, "ms": 200}}, p("queued", ahead=2), p("queued", ahead=3)),
    ({"queued": {"ms": 200}}, p("queued"), p("reading_prompt")),
    ({"wait_model": {"model": "Qwen3 8B", "reason": "slots", "ms": 100}},
     p("waiting_for_model", model="Qwen3 8B", reason="slots"), p("waiting_for_model", model="Qwen3 8B", reason="busy")),
    ({"wait_model": {"model": "Qwen3 8B", "reason": "group", "ms": 100}},
     p("waiting_for_model", model="Qwen3 8B", reason="group"), p("waiting_for_model", model="Llama", reason="group")),
    ({"load_model": {"model": "Qwen3 8B", "ms": 100}}, p("loading_model", model="Qwen3 8B"), p("loading_model")),
    ({"compact": 100}, p("compacting"), p("thinking")),
    ({"retry": {"reason": "503", "in": 5, "attempt": 2, "ms": 100}},
     p("retrying", reason="503", **{"in": 5}, attempt=2), p("retrying", reason="503", **{"in": 30}, attempt=2)),
    ({"retry": {"reason": "503", "in": 5, "attempt": 2, "ms": 100}},
     p("retrying", reason="503", **{"in": 5}), p("retrying", reason="503", **{"in": 5}, attempt=1)),
    ({"propose_plan": "1. fix"}, p("waiting_for_person", what="plan"), p("waiting_for_person", what="approval")),
    ({"write_call": {"tool": "bash", "tokens": 30, "ms": 100}}, p("writing", rate=12.5), p("thinking")),
    ({"subagents": [{"id": "a", "steps": []}, {"id": "b", "steps": []}]},
     p("waiting_for_subagents", running=2), p("waiting_for_subagents", running=0)),
]


@pytest.mark.parametrize("step,good,wrong", NEW_STEPS, ids=[f"{next(iter(s))}-{n}" for n, (s, _, _) in enumerate(NEW_STEPS)])
def test_each_new_step_shows_its_phase_and_data(step, good, wrong):
    steps = [{"think": 100}, step, {"finish": "ok"}]
    thinking = item(p("thinking", T0 - 100))
    assert judged("PROG-015", [thinking, item(good), item(None)], steps)[0] == Outcome.PASS
    worst, findings = judged("PROG-015", [thinking, item(wrong), item(None)], steps)
    assert worst == Outcome.FAIL and "step 2" in findings[0].message


def test_an_optional_field_left_out_does_not_disagree():
    steps = [{"queued": {"ahead": 2, "ms": 200}}, {"retry": {"reason": "x", "in": 5, "attempt": 3, "ms": 100}}]
    items = [item(p("queued")), item(p("retrying", T0 + 200, reason="x", **{"in": 5})), item(None)]
    assert judged("PROG-015", items, steps)[0] == Outcome.PASS


# -- each agent's sequence on its own ------------------------------------------------------------------

SUBAGENTS = [{"think": 100},
             {"subagents": [{"id": "tests", "steps": [{"think": 100}, {"tool": {"name": "bash", "what": "bun test",
                                                                                 "ms": 200}}, {"finish": "ok"}]},
                            {"id": "docs", "steps": [{"think": 100}, {"stop": "steps"}]}]},
             {"write": {"tokens": 10, "ms": 100}}, {"stop": "budget"}]


def delegated(tests_end=None, docs=None, main=None, tests_agent="tests", docs_agent="docs"):
    """A legal stream of SUBAGENTS, with parts replaceable: the subagent 'tests' finishes, 'docs' is stopped
    by its step limit, the main agent by its budget."""
    tests_end = [item(None, agent=tests_agent)] if tests_end is None else tests_end
    docs = docs if docs is not None else [
        item(p("thinking", T0 + 100), agent=docs_agent), item(p("stopped", T0 + 200, reason="steps"), agent=docs_agent)]
    main = main if main is not None else [
        item(p("writing", T0 + 300)), item(p("stopped", T0 + 400, reason="budget"))]
    items = [item(p("thinking")), item(p("waiting_for_subagents", T0 + 100, running=2)),
             item(p("thinking", T0 + 100), agent=tests_agent), docs[0],
             item(p("running_tool", T0 + 200, tool="bash", what="bun test"), agent=tests_agent), *docs[1:],
             item(p("waiting_for_subagents", T0 + 100, running=1)), *tests_end, *main]
    times = [0.0, 0.1, 0.1, 0.1, 0.2, 0.2, 0.2, 0.3, 0.3, 0.4][:len(items)]
    times += [times[-1] + 0.01 * k for k in range(1, len(items) - len(times) + 1)]
    return items, times


@pytest.mark.parametrize("req_id", ["PROG-001", "PROG-002", "PROG-003", "PROG-004", "PROG-007", "PROG-008", "PROG-011",
                                    "PROG-012", "PROG-013", "PROG-014", "PROG-015", "PROG-016"])
def test_a_legal_stream_with_subagents_passes(req_id):
    items, times = delegated()
    worst, findings = judged(req_id, items, SUBAGENTS, times)
    assert worst == Outcome.PASS, [f.message for f in findings]


def test_each_subagent_is_judged_on_its_own_and_named():
    items, times = delegated()
    _, findings = judged("PROG-015", items, SUBAGENTS, times)
    assert sorted(f.message.split(":")[0] for f in findings) == [
        "subagent 'docs'", "subagent 'tests'", "the main agent"]


def test_running_counts_down_with_since_kept():
    items, times = delegated()
    assert judged("PROG-007", items, SUBAGENTS, times)[0] == Outcome.PASS
    renewed = [frame if (frame["progress"] or {}).get("running") != 1 or "agent" in frame
               else item(p("waiting_for_subagents", T0 + 300, running=1)) for frame in items]
    worst, findings = judged("PROG-007", renewed, SUBAGENTS, times)
    assert worst == Outcome.FAIL and "waiting_for_subagents: since changed" in findings[0].message


def test_a_subagent_that_finishes_ends_with_null():
    items, times = delegated(tests_end=[])
    worst, findings = judged("PROG-013", items, SUBAGENTS, times)
    assert worst == Outcome.FAIL and any(f.message.startswith("subagent 'tests'") for f in findings
                                         if f.outcome == Outcome.FAIL)


def test_a_stopped_subagent_stays_stopped():
    docs = [item(p("thinking", T0 + 100), agent="docs"), item(p("stopped", T0 + 200, reason="steps"), agent="docs"),
            item(None, agent="docs")]
    items, times = delegated(docs=docs)
    worst, findings = judged("PROG-012", items, SUBAGENTS, times)
    assert worst == Outcome.FAIL and "subagent 'docs'" in [f for f in findings if f.outcome == Outcome.FAIL][0].message


def test_a_subagents_since_is_judged_within_its_own_sequence():
    # the subagents begin with the since of the main agent's phase, and interleave with it: legal
    items, times = delegated()
    assert judged("PROG-008", items, SUBAGENTS, times)[0] == Outcome.PASS
    back = [item(p("thinking", T0 + 100), agent="docs"), item(p("stopped", T0 + 50, reason="steps"), agent="docs")]
    items, times = delegated(docs=back)
    worst, findings = judged("PROG-008", items, SUBAGENTS, times)
    assert worst == Outcome.FAIL and findings[0].message.startswith("subagent 'docs'")


def test_a_subagents_fields_and_names_are_judged_like_the_main_agents():
    docs = [item(p("retrying", T0 + 100, reason="503"), agent="docs"),
            item(p("stopped", T0 + 200, reason="steps"), agent="docs")]
    items, times = delegated(docs=docs)
    worst, findings = judged("PROG-003", items, SUBAGENTS, times)
    assert worst == Outcome.FAIL and "subagent 'docs': retrying without its field 'in'" in findings[0].message
    docs = [item(p("delegating", T0 + 100), agent="docs"), docs[1]]
    items, times = delegated(docs=docs)
    assert judged("PROG-001", items, SUBAGENTS, times)[0] == Outcome.FAIL


def test_pacing_binds_each_agents_progress_on_its_own():
    # two agents each sending four data-only updates a second: eight frames a second on the stream, legal
    steps = [{"subagents": [{"id": "a", "steps": [{"write": {"tokens": 100, "ms": 3000}}]},
                            {"id": "b", "steps": [{"write": {"tokens": 100, "ms": 3000}}]}]}]
    items, times = [item(p("waiting_for_subagents", running=2))], [0.0]
    for agent in ("a", "b"):
        items.append(item(p("writing", T0), agent=agent))
        times.append(0.01)
    for k in range(1, 12):
        for n, agent in enumerate(("a", "b")):
            items.append(item(p("writing", T0, rate=float(k)), agent=agent))
            times.append(0.25 * k + 0.01 * n)
    items += [item(None, agent="a"), item(None, agent="b"), item(None)]
    times += [3.0, 3.0, 3.01]
    worst, findings = judged("PROG-009", items, steps, times)
    assert worst == Outcome.PASS, findings[0].message
    # one agent sending eight a second fails, and is named
    fast = [item(p("writing", T0, rate=float(k)), agent="a") for k in range(1, 17)]
    worst, findings = judged("PROG-009", items[:3] + fast + items[-3:], steps,
                             [0.0, 0.01, 0.01] + [0.125 * k for k in range(1, 17)] + [3.0, 3.0, 3.01])
    assert worst == Outcome.FAIL and findings[0].message.startswith("subagent 'a'")


# -- PROG-016: the subagent form -------------------------------------------------------------------------

def test_subagents_beside_the_chats_progress_with_agent_is_one_reading():
    items, times = delegated()
    worst, findings = judged("PROG-016", items, SUBAGENTS, times)
    assert worst == Outcome.PASS and findings[0].reading.startswith("subagents' progress in /api/v2")
    assert "reading taken: subagents' progress in /api/v2" in findings[0].message


def own_only(during=()):
    """SUBAGENTS as a server that passes on in /api/v2 the chat's own progress alone (the subagents' travel on
    the link and the tree): the main agent waits while they run; `during` adds frames while it waits."""
    items = [item(p("thinking")), item(p("waiting_for_subagents", T0 + 100, running=2)), *during,
             item(p("waiting_for_subagents", T0 + 100, running=1)), item(p("writing", T0 + 400)),
             item(p("stopped", T0 + 500, reason="budget"))]
    times = [0.0, 0.1, *[0.15 + 0.01 * k for k in range(len(during))], 0.2, 0.4, 0.5]
    return items, times


def test_the_chats_own_progress_alone_is_the_other_reading():
    items, times = own_only()
    worst, findings = judged("PROG-016", items, SUBAGENTS, times)
    assert worst == Outcome.PASS, findings[0].message
    assert findings[0].reading.startswith("/api/v2 carries the chat's own progress")
    assert "reading taken: /api/v2 carries the chat's own progress" in findings[0].message


def test_subagent_frames_without_agent_fail():
    items, times = delegated()
    merged = [{k: v for k, v in frame.items() if k != "agent"} for frame in items]
    worst, findings = judged("PROG-016", merged, SUBAGENTS, times)
    assert worst == Outcome.FAIL and "neither reading holds" in findings[0].message
    assert "'tests'" in findings[0].message and "the chat's progress shows" in findings[0].message
    # one subagent's phase passed on as the main agent's, without agent: neither reading either
    items, times = own_only(during=[item(p("running_tool", T0 + 200, tool="bash", what="bun test"))])
    worst, findings = judged("PROG-016", items, SUBAGENTS, times)
    assert worst == Outcome.FAIL and "'running_tool'" in findings[0].message


def test_some_subagents_with_agent_and_others_nowhere_fail():
    items, times = delegated()
    kept = [(frame, t) for frame, t in zip(items, times) if frame.get("agent") != "docs"]
    worst, findings = judged("PROG-016", [f for f, _ in kept], SUBAGENTS, [t for _, t in kept])
    assert worst == Outcome.FAIL and "'docs'" in findings[0].message and "while others do" in findings[0].message


@pytest.mark.parametrize("bad", [None, 7, ""])
def test_an_agent_that_is_not_an_id_fails(bad):
    items, times = delegated()
    items[2] = {**items[2], "agent": bad}
    worst, findings = judged("PROG-016", items, SUBAGENTS, times)
    assert worst == Outcome.FAIL


def test_the_main_agents_progress_carries_no_agent():
    items, times = delegated()
    labelled = [frame if "agent" in frame else {**frame, "agent": "main"} for frame in items]
    worst, findings = judged("PROG-016", labelled, SUBAGENTS, times)
    assert worst == Outcome.FAIL and any("main agent" in f.message for f in findings)


def test_subagents_the_runtime_names_itself_are_matched_by_their_steps():
    items, times = delegated(tests_agent="agent-7", docs_agent="agent-8")
    worst, findings = judged("PROG-016", items, SUBAGENTS, times)
    assert worst == Outcome.PASS and "'tests' as 'agent-7'" in findings[0].message
    assert judged("PROG-013", items, SUBAGENTS, times)[0] == Outcome.PASS  # agent-7 is judged as 'tests'


# -- PROG-017: with calls in parallel, the one that started first -----------------------------------------

PARALLEL = [{"tools": [{"name": "bash", "what": "bun test", "ms": 300},
                       {"name": "read_file", "what": "src/app.ts", "at": 100, "ms": 400},
                       {"name": "bash", "what": "tsc", "at": 150, "ms": 100}]}, {"finish": "ok"}]
A = p("running_tool", T0, tool="bash", what="bun test")
B = p("running_tool", T0 + 300, tool="read_file", what="src/app.ts")


def test_the_first_started_call_shows():
    assert judged("PROG-017", [item(A), item(B), item(None)], PARALLEL, [0.0, 0.3, 0.5])[0] == Outcome.PASS
    # the same call shown again with a new since counts once (that since is PROG-007's)
    again = [item(A), item({**A, "since": T0 + 100}), item(B), item(None)]
    assert judged("PROG-017", again, PARALLEL, [0.0, 0.1, 0.3, 0.5])[0] == Outcome.PASS


def test_the_last_started_call_fails():
    late = [item(A), item({**B, "since": T0 + 100}), item(p("running_tool", T0 + 150, tool="bash", what="tsc")),
            item({**B, "since": T0 + 250}), item(None)]
    worst, findings = judged("PROG-017", late, PARALLEL, [0.0, 0.1, 0.15, 0.25, 0.5])
    assert worst == Outcome.FAIL and "'bash' 'tsc'" in findings[0].message


def test_a_call_shown_before_its_turn_fails():
    early = [item({**B, "since": T0 + 100}), item(None)]
    worst, _ = judged("PROG-017", [item(A), *early], PARALLEL, [0.0, 0.1, 0.5])
    assert worst == Outcome.PASS  # A then B: the order is right (PROG-011 judges B's time)
    worst, findings = judged("PROG-017", [item(B), item(A), item(None)], PARALLEL, [0.0, 0.1, 0.5])
    assert worst == Outcome.FAIL and "showed 'read_file' 'src/app.ts', 'bash' 'bun test';" in findings[0].message


def test_no_set_shown_is_not_judged_here():
    sc = script(*PARALLEL)
    log = frame_log(progress_sse([item(p("thinking")), item(None)], script=sc), script=sc)
    findings = judge(log, ["PROG-017"], RuleContext(scenario=Scenario("t", "progress", "", ("PROG-017",), sc)))
    assert findings == []


# -- the reference plays the steps ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def reference():
    with ReferenceServer() as server:
        yield Target(progress_url=server.url + "/progress", stream_limit=5.0)


def _frames(reference, name):
    return [ev.payload for ev in run_scenario(name, reference).get("progress").data_events()]


def test_route_plays_the_waits(reference):
    shown = [f["progress"] for f in _frames(reference, "progress-waits")]
    queued = [s for s in shown if s and s["phase"] == "queued"]
    assert [q["ahead"] for q in queued] == [2, 1] and queued[0]["since"] == queued[1]["since"]
    models = [(s["model"], s["reason"]) for s in shown if s and s["phase"] == "waiting_for_model"]
    assert models == [("Qwen3 8B", "slots"), ("Llama 3.3 70B", "group"), ("Llama 3.3 70B", "busy")]
    retries = [s for s in shown if s and s["phase"] == "retrying"]
    assert [(r["reason"], r["in"], r["attempt"]) for r in retries] == [("503 Service Unavailable", 5, 1),
                                                                       ("503 Service Unavailable", 10, 2)]
    assert any(s and s["phase"] == "compacting" for s in shown) and shown[-1] is None


def test_route_sends_each_subagents_progress_with_its_agent(reference):
    frames = _frames(reference, "progress-subagents")
    by_agent: dict = {}
    for f in frames:
        by_agent.setdefault(f.get("agent"), []).append(f["progress"])
    assert set(by_agent) == {None, "tests", "docs"}
    assert by_agent["tests"][-1] is None and by_agent["docs"][-1]["reason"] == "steps"
    assert [s["running"] for s in by_agent[None] if s and s["phase"] == "waiting_for_subagents"] == [2, 1]
    assert by_agent[None][-1] == {**by_agent[None][-1], "phase": "stopped", "reason": "budget"}
    assert all(f["status"] == "Delegating" for f in frames)


def test_route_shows_the_first_started_of_calls_in_parallel(reference):
    shown = [f["progress"] for f in _frames(reference, "progress-parallel")]
    assert [s["phase"] for s in shown[:3]] == ["thinking", "waiting_for_person", "writing"]
    assert shown[1]["what"] == "plan"
    assert [s["what"] for s in shown if s["phase"] == "running_tool"] == ["bun test", "src/app.ts"]
    assert shown[-1]["phase"] == "stopped" and shown[-1]["reason"] == "steps"


@pytest.mark.parametrize("steps,reason", [
    ([{"wait_model": {"model": "m", "reason": "tired", "ms": 0}}], "wait_model.reason is one of busy, slots, group"),
    ([{"retry": {"reason": "x", "ms": 0}}], "retry.in must be an integer"),
    ([{"tools": [{"name": "a", "ms": 10}, {"name": "b", "at": 50, "ms": 10}]}], "not in parallel"),
    ([{"subagents": [{"id": "a", "steps": []}, {"id": "a", "steps": []}]}], "is used twice"),
])
def test_route_fails_a_turn_whose_new_step_is_wrong(reference, steps, reason):
    frames = run_scenario_with(reference, steps)
    last = frames[-1]["progress"]
    assert last["phase"] == "failed" and reason in last["reason"]


def test_route_fails_a_subagent_that_sets_the_chats_status(reference):
    frames = run_scenario_with(reference, [{"subagents": [{"id": "a", "steps": [{"status": "mine"}]}]}])
    sub = [f["progress"] for f in frames if f.get("agent") == "a"]
    assert sub[-1]["phase"] == "failed" and "main agent's step" in sub[-1]["reason"]
    assert frames[-1] == {"status": "", "progress": None}  # the main agent goes on and finishes


def run_scenario_with(target, steps):
    """The frames of the route playing `steps`."""
    body = {SCRIPT_KEY: script(*steps)}
    with httpx.Client(timeout=5.0) as client, client.stream("POST", target.progress_url, json=body) as answer:
        text = "".join(answer.iter_text())
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
