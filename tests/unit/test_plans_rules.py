"""PLAN- rules on hand-made logs: each passes a correct log and fails a broken one with its ID."""

from __future__ import annotations

import pytest
from logs import artifact_update, frame_log, sse, status_update, task, unary

from streamcert.catalogue import Scenario
from streamcert.outcomes import Outcome
from streamcert.rules import RuleContext, judge
from streamcert.rules.plans.plancut import judge_cut

URI = "https://docs.nylorun.com/a2a/progress/v1"
E = "\U0001F600"
SENTINEL = "SENTINEL-X"
TS = ["2026-11-02T09:12:40.031Z", "2026-11-02T09:12:41.000Z", "2026-11-02T09:12:42.000Z"]
P1 = [{"label": "Inspect", "state": "active"}, {"label": "Build", "state": "pending"}]
P2 = [{"label": "Inspect", "state": "done", "note": "Node 22"}, {"label": "Build", "state": "active"}]


def plan_update(steps, ts=TS[0], **status_extra):
    upd = status_update("TASK_STATE_WORKING", ts=ts)
    upd["statusUpdate"]["metadata"] = {URI: {"steps": steps}}
    upd["statusUpdate"]["status"].update(status_extra)
    return upd


def said(text):
    return status_update("TASK_STATE_WORKING", text, ts=TS[2])


def script(*plans, say=True):
    steps = [{"status": f"found {SENTINEL}"}]
    for k, p in enumerate(plans, 1):
        steps.append({"plan": p})
        if say:
            steps.append({"say": f"R{k}: {{{{result}}}}"})
    return {"version": 1, "name": "t", "steps": steps + [{"finish": "done"}]}


def turn(*events):
    """A whole turn: the Task, the events, the terminal status (plans are judged on whole turns)."""
    return [{"task": task()}, *events, status_update("TASK_STATE_COMPLETED", "done", ts=TS[2])]


def test_a_stream_cut_before_the_end_of_the_turn_is_not_judged():
    cut = frame_log(sse("stream", [{"task": task()}, said("R1: Plan updated")]), script=script(P1))
    assert run(cut, "PLAN-001", "PLAN-010", "PLAN-012") == {}


def log_of(events, plans, *, get_plan=None, list_plan=None, notes=None):
    meta = lambda p: {"metadata": {URI: {"steps": p}}} if p is not None else {}  # noqa: E731
    return frame_log(
        sse("stream", [{"task": task()}] + events + [status_update("TASK_STATE_COMPLETED", "done", ts=TS[2])]),
        unary("get_task", task(state="TASK_STATE_COMPLETED", **meta(get_plan))),
        unary("list_tasks", {"tasks": [task(state="TASK_STATE_COMPLETED", **meta(list_plan))]}),
        script=script(*plans), notes=notes)


def run(log, *ids, sentinels=None):
    sc = Scenario("t", "plans", "", ids, log.script, {"sentinels": sentinels or []})
    return {f.req_id: f for f in judge(log, ids, RuleContext(scenario=sc))}


GOOD = [plan_update(P1, TS[0]), said("R1: Plan updated"), plan_update(P2, TS[1]), said("R2: Plan updated")]
ALL = ("PLAN-001", "PLAN-002", "PLAN-003", "PLAN-004", "PLAN-010", "PLAN-012", "PLAN-013", "PLAN-014", "PLAN-015")


def test_correct_log_passes_everything():
    found = run(log_of(GOOD, [P1, P2], get_plan=P2, list_plan=P2), *ALL, sentinels=[SENTINEL])
    assert {r: f.outcome for r, f in found.items()} == {r: Outcome.PASS for r in ALL}


def test_out_of_order_and_duplicate_updates_are_ordered_by_timestamp():
    events = [plan_update(P2, TS[1]), plan_update(P1, TS[0]), plan_update(P2, TS[1]),
              said("R1: Plan updated"), said("R2: Plan updated")]
    found = run(log_of(events, [P1, P2], get_plan=P2, list_plan=P2), "PLAN-001", "PLAN-002", "PLAN-012")
    assert all(f.outcome == Outcome.PASS for f in found.values()), found


def test_the_latest_plan_repeated_on_later_status_updates_is_no_extra_update():
    # progress/v1: updates may arrive more than once; a client keeps the plan of the latest. A server that
    # carries the latest plan again on its later status updates (here the one showing R2) sends no new plan.
    events = [plan_update(P1, TS[0]), said("R1: Plan updated"), plan_update(P2, TS[1]),
              plan_update(P2, TS[2]), said("R2: Plan updated")]
    found = run(log_of(events, [P1, P2], get_plan=P2, list_plan=P2), "PLAN-001", "PLAN-002", "PLAN-011")
    assert {r: f.outcome for r, f in found.items()} == {"PLAN-001": Outcome.PASS, "PLAN-002": Outcome.PASS}


def test_an_earlier_plan_sent_again_after_a_later_one_is_an_extra_update():
    events = [plan_update(P1, TS[0]), plan_update(P2, TS[1]), plan_update(P1, TS[2]),
              said("R1: Plan updated"), said("R2: Plan updated")]
    found = run(log_of(events, [P1, P2], get_plan=P1, list_plan=P1), "PLAN-001")
    assert found["PLAN-001"].outcome == Outcome.FAIL, found


@pytest.mark.parametrize("rid,events,get_plan,list_plan", [
    ("PLAN-001", [plan_update(P2, TS[1])], P2, P2),
    ("PLAN-002", [plan_update(P1, TS[0]), plan_update(P2[:1], TS[1])], P2[:1], P2[:1]),
    ("PLAN-003", [plan_update(P1, TS[0]), plan_update([{**P2[0], "state": "finished"}, P2[1]], TS[1])], P2, P2),
    ("PLAN-004", [plan_update(P1, TS[0]), plan_update([{**P2[0], "note": None}, P2[1]], TS[1])], P2, P2),
    ("PLAN-012", GOOD, P1, P2),
    ("PLAN-013", GOOD, P2, None),
    ("PLAN-014", [plan_update(P1, TS[0]), plan_update([{**P2[0], "note": f"saw {SENTINEL}"}, P2[1]], TS[1])],
     P2, P2),
])
def test_broken_log_fails(rid, events, get_plan, list_plan):
    found = run(log_of(events, [P1, P2], get_plan=get_plan, list_plan=list_plan), rid, sentinels=[SENTINEL])
    assert found[rid].outcome == Outcome.FAIL, found[rid]


def test_plan_without_timestamp_fails():
    upd = plan_update(P1)
    del upd["statusUpdate"]["status"]["timestamp"]
    assert run(log_of([upd], [P1], get_plan=P1), "PLAN-015")["PLAN-015"].outcome == Outcome.FAIL


def test_step_limit():
    many = [{"label": f"s{i}", "state": "pending"} for i in range(25)]
    ok = run(log_of([plan_update(many[:20])], [many], get_plan=many[:20]), "PLAN-005")["PLAN-005"]
    assert ok.outcome == Outcome.PASS
    kept21 = run(log_of([plan_update(many[:21])], [many], get_plan=many[:21]), "PLAN-005")["PLAN-005"]
    assert kept21.outcome == Outcome.FAIL
    last20 = run(log_of([plan_update(many[5:])], [many], get_plan=many[5:]), "PLAN-005")["PLAN-005"]
    assert last20.outcome == Outcome.FAIL


def test_tool_results_seen_through_say():
    wrong = [{"label": "x", "state": "finished"}]
    sc = script(P1, wrong)
    good = frame_log(sse("stream", turn(plan_update(P1), said("R1: Plan updated"),
                                    said("R2: Tool error: bad state"))), script=sc)
    found = run(good, "PLAN-010", "PLAN-011")
    assert found["PLAN-010"].outcome == found["PLAN-011"].outcome == Outcome.PASS
    accepted = frame_log(sse("stream", turn(plan_update(P1), said("R1: Plan updated"),
                                        plan_update(wrong, TS[1]), said("R2: Plan updated"))), script=sc)
    assert run(accepted, "PLAN-011")["PLAN-011"].outcome == Outcome.FAIL
    failed = frame_log(sse("stream", turn(said("R1: Tool error: too long"))), script=script(P1))
    assert run(failed, "PLAN-010")["PLAN-010"].outcome == Outcome.FAIL


@pytest.mark.parametrize("kind,rid", [("no-plan", "PLAN-016"), ("shadow", "PLAN-017")])
def test_agents_without_the_builtin_send_no_plan(kind, rid):
    quiet = frame_log(sse("stream", turn(said("R1: Tool error: unknown tool update_plan"))),
                      script=script(P1), notes={"plan_agent": kind})
    assert run(quiet, rid)[rid].outcome == Outcome.PASS
    loud = frame_log(sse("stream", turn(plan_update(P1), said("R1: Plan updated"))),
                     script=script(P1), notes={"plan_agent": kind})
    assert run(loud, rid)[rid].outcome == Outcome.FAIL


# -- the cut judge: (input, what was sent) → (MUST complaint?, SHOULD outcome) -----------------------

A121 = "a" * 121
NB = "c" * 118 + E + "cc"  # a non-BMP character last kept by the strict cut
COMB = "f" * 118 + "e\u0301" + "ff"  # the strict cut falls between a base and its combining mark
ACUTE = "e\u0301"  # one grapheme cluster, two code points


@pytest.mark.parametrize("raw,got,must_ok,should", [
    ("a" * 120, "a" * 120, True, Outcome.PASS),
    (A121, "a" * 119 + "…", True, Outcome.PASS),
    (A121, A121, False, None),  # not cut
    (A121, "a" * 120, False, None),  # no ellipsis
    (A121, "a" * 120 + "…", False, None),  # limit plus ellipsis: 121 however counted, over "at most 120"
    (NB, "c" * 118 + E + "…", True, Outcome.PASS),
    (NB, "c" * 118 + "\ud83d" + "…", False, None),  # lone surrogate
    (NB, "c" * 118 + "\ufffd" + "…", False, None),  # U+FFFD for the split character
    (NB, "c" * 118 + "…", True, Outcome.NON_STRICT),  # UTF-16 count: the pair dropped whole
    ("b" * 119 + E, "b" * 119 + "…", True, Outcome.NON_STRICT),  # within 120 code points, over in UTF-16
    ("b" * 119 + E, "b" * 119 + E, True, Outcome.PASS),  # within the limit in code points: unchanged (strict)
    (COMB, "f" * 118 + "e…", True, Outcome.PASS),  # strict cut between base and mark
    (COMB, "f" * 118 + "…", True, Outcome.PASS),  # grapheme-safe back-off
    (A121, "a" * 50 + "…", False, None),  # shorter than any reading's cut: changes what the agent wrote
    (ACUTE * 130, ACUTE * 119 + "…", True, Outcome.NON_STRICT),  # counted in grapheme clusters
    (ACUTE * 100, ACUTE * 100, True, Outcome.NON_STRICT),  # 200 code points, 100 clusters: within, kept whole
    (ACUTE * 100, ACUTE * 59 + "e…", True, Outcome.PASS),  # strict: 119 code points and …
    (ACUTE * 130, ACUTE * 118 + "…", False, None),  # 118 clusters: short under every counting
    (A121, "b" * 119 + "…", False, None),  # not a prefix
])
def test_judge_cut(raw, got, must_ok, should):
    complaint, length = judge_cut(raw, got, 120)
    assert (complaint is None) == must_ok, complaint
    if must_ok:
        assert length[0] == should, length


# -- PLAN-019: GetTask after a plan stream shows the task the stream delivered -------------------------

def read_back_log(get):
    chunks = [artifact_update("log", text="a\n", name="log.txt"), artifact_update("log", text="b\n", append=True,
                                                                                  last=True)]
    events = [{"task": task()}, plan_update(P1, TS[0]), *chunks, status_update("TASK_STATE_COMPLETED", "done",
                                                                               ts=TS[2])]
    return frame_log(sse("stream", events), unary("get_task", get, rpc_method="GetTask", t=1.0), script=script(P1))


def outcomes_019(log):
    sc = Scenario("t", "plans", "", ("PLAN-019",), log.script, {})
    return [(f.outcome, f.message) for f in judge(log, ["PLAN-019"], RuleContext(scenario=sc))]


def test_019_passes_a_read_back_with_the_streamed_state_and_artifacts():
    log = read_back_log(task(state="TASK_STATE_COMPLETED", artifacts=[
        {"artifactId": "log", "name": "log.txt", "parts": [{"text": "a\nb\n"}]}]))
    got = outcomes_019(log)
    assert got and all(o == Outcome.PASS for o, _ in got), got


def test_019_fails_a_read_back_in_another_state_or_without_the_artifacts():
    got = outcomes_019(read_back_log(task(state="TASK_STATE_WORKING")))
    assert [o for o, _ in got] == [Outcome.FAIL, Outcome.FAIL], got
    assert "GetTask returned state 'TASK_STATE_WORKING' but the stream ended in TASK_STATE_COMPLETED" in got[0][1]
    assert "artifact 'log' was streamed (2 chunk(s)) but GetTask has no artifact with that id" in got[1][1]


def test_019_fails_a_read_back_refused():
    log = read_back_log(None)
    log.exchanges[-1] = unary("get_task", error={"code": -32001, "message": "no such task"}, rpc_method="GetTask",
                              t=1.0)
    got = outcomes_019(log)
    assert got and got[0][0] == Outcome.FAIL and "GetTask (get_task) did not return the task" in got[0][1], got
