"""ACP-PLAN- rules, both ways, on hand-made agent runs (stdout lines as the driver records them)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from logs import script as agent_script

from streamcert.catalogue import Scenario
from streamcert.framelog import Event, Exchange, FrameLog
from streamcert.outcomes import Outcome
from streamcert.rules import RuleContext, judge

SID = "sess-1"


def e(content: str, status: str = "pending", priority: str = "high") -> dict[str, Any]:
    return {"content": content, "priority": priority, "status": status}


def items(pid: str, *entries: dict[str, Any]) -> dict[str, Any]:
    return {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": pid, "entries": list(entries)}}


def stable(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"sessionUpdate": "plan", "entries": list(entries)}


def note(update: dict[str, Any], sid: str = SID) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": sid, "update": update}}


def agent_run(updates: list[Any], *, version: int = 2, asked: int = 2, capable: bool = True,
              stop: Any = "end_turn", raw: list[str] | None = None) -> FrameLog:
    """An agent run: the three requests the driver writes, the agent's answers around `updates`
    (each a session/update `update`, a whole message dict with "jsonrpc", or a raw str line)."""
    caps: dict[str, Any] = {"plan": {}} if capable else {}
    sent = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": asked, "clientCapabilities": caps}},
            {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp/x", "mcpServers": []}},
            {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": SID, "prompt": []}}]
    lines = [json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": version}}),
             json.dumps({"jsonrpc": "2.0", "id": 2, "result": {"sessionId": SID}})]
    for u in updates:
        if isinstance(u, str):
            lines.append(u)
        else:
            lines.append(json.dumps(u if "jsonrpc" in u else note(u)))
    lines += raw or []
    lines.append(json.dumps({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": stop}}))
    ex = Exchange(label="agent", method="STDIO", url="agent", request_body=[json.dumps(m) for m in sent], status=0,
                  events=[Event(index=i, t=0.01 * i, data=line) for i, line in enumerate(lines)])
    return FrameLog(scenario="acp-test", exchanges=[ex])


def script(*steps: dict[str, Any]) -> RuleContext:
    """The context of a run that played these steps."""
    sc = Scenario(id="acp-test", profile="acp", title="", requirements=(), script=agent_script(*steps, name="acp-test"))
    return RuleContext(scenario=sc)


def plan_step(pid: str, *entries: dict[str, Any], kind: str = "items") -> dict[str, Any]:
    return {"acp_plan": {"planId": pid, "type": kind, "entries": list(entries)}}


def outcome_of(log: FrameLog, rid: str, ctx: RuleContext | None = None) -> Outcome | None:
    found = [f for f in judge(log, [rid], ctx or RuleContext()) if f.req_id == rid]
    assert len(found) <= 1
    return found[0].outcome if found else None


A = e("Inventory", "completed")
B = e("Port", "in_progress")
TWO_STATES = script(plan_step("p", e("Inventory"), e("Port")), plan_step("p", A, B))


# -- stdio discipline -------------------------------------------------------------------------------

def test_clean_lines_pass_stdio_rules():
    log = agent_run([items("p", A, B)])
    assert outcome_of(log, "ACP-PLAN-001") == Outcome.PASS
    assert outcome_of(log, "ACP-PLAN-002") == Outcome.PASS


def test_log_line_on_stdout_fails_001_only():
    log = agent_run(["starting agent v0.3", items("p", A, B)])
    assert outcome_of(log, "ACP-PLAN-001") == Outcome.FAIL
    assert outcome_of(log, "ACP-PLAN-002") == Outcome.PASS


def test_a_line_nested_deeper_than_the_reader_goes_is_not_blamed():
    deep = '{"jsonrpc": "2.0", "method": "session/update", "params": ' + "[" * 100_000 + "]" * 100_000 + "}"
    log = agent_run([deep, items("p", A, B)])
    assert outcome_of(log, "ACP-PLAN-001") == Outcome.ERROR  # RFC 8259 §9: a parser may limit nesting
    assert outcome_of(log, "ACP-PLAN-002") == Outcome.PASS


def test_json_that_is_not_jsonrpc_fails_001():
    assert outcome_of(agent_run(['{"level": "info", "msg": "hi"}']), "ACP-PLAN-001") == Outcome.FAIL


def test_two_messages_on_one_line_fail_002_and_are_still_read():
    two = json.dumps(note(items("p", e("Inventory"), e("Port")))) + json.dumps(note(items("p", A, B)))
    log = agent_run([two])
    assert outcome_of(log, "ACP-PLAN-002") == Outcome.FAIL
    assert outcome_of(log, "ACP-PLAN-001") == Outcome.PASS
    assert outcome_of(log, "ACP-PLAN-027", TWO_STATES) == Outcome.PASS  # both messages were recovered


def test_pretty_printed_message_fails_002():
    pretty = json.dumps(note(items("p", A)), indent=1).split("\n")
    log = agent_run(pretty)
    assert outcome_of(log, "ACP-PLAN-002") == Outcome.FAIL
    assert outcome_of(log, "ACP-PLAN-001") == Outcome.PASS


def test_last_line_without_line_end_fails_002():
    log = agent_run([])
    log.exchanges[0].notes["partial_line"] = '{"jsonrpc":"2.0"'
    assert outcome_of(log, "ACP-PLAN-002") == Outcome.FAIL


# -- the turn ---------------------------------------------------------------------------------------

def test_turn_served_passes_and_error_answer_counts():
    assert outcome_of(agent_run([items("p", A)]), "ACP-PLAN-003") == Outcome.PASS
    log = agent_run([])
    log.exchanges[0].events[-1].data = json.dumps({"jsonrpc": "2.0", "id": 3,
                                                   "error": {"code": -32603, "message": "step failed"}})
    assert outcome_of(log, "ACP-PLAN-003") == Outcome.PASS


@pytest.mark.parametrize("broken", ["stop", "session", "version"])
def test_turn_served_fails(broken):
    if broken == "stop":
        log = agent_run([], stop="done")
    elif broken == "session":
        log = agent_run([note(items("p", A), sid="other")])
    else:
        log = agent_run([], version="2")
    assert outcome_of(log, "ACP-PLAN-003") == Outcome.FAIL


def test_no_answer_to_initialize_is_error():
    log = agent_run([])
    log.exchanges[0].events = []
    assert outcome_of(log, "ACP-PLAN-003") == Outcome.ERROR
    assert outcome_of(log, "ACP-PLAN-021") == Outcome.ERROR


# -- forms by version -------------------------------------------------------------------------------

def test_v1_without_capability_allows_stable_plan_only():
    assert outcome_of(agent_run([stable(A)], version=1, asked=1, capable=False), "ACP-PLAN-010") == Outcome.PASS
    bad = agent_run([items("p", A)], version=1, asked=1, capable=False)
    assert outcome_of(bad, "ACP-PLAN-010") == Outcome.FAIL
    removed = agent_run([{"sessionUpdate": "plan_removed", "planId": "p"}], version=1, asked=1, capable=False)
    assert outcome_of(removed, "ACP-PLAN-010") == Outcome.FAIL


def test_v1_with_capability_allows_plan_update():
    assert outcome_of(agent_run([items("p", A)], version=1, asked=1), "ACP-PLAN-010") == Outcome.PASS


def test_v1_gate_not_judged_in_v2():
    assert outcome_of(agent_run([items("p", A)], capable=False), "ACP-PLAN-010") is None


def test_v2_plan_form_fails_020():
    assert outcome_of(agent_run([items("p", A)]), "ACP-PLAN-020") == Outcome.PASS
    assert outcome_of(agent_run([stable(A)]), "ACP-PLAN-020") == Outcome.FAIL
    assert outcome_of(agent_run([stable(A)], version=1, asked=1), "ACP-PLAN-020") is None


# -- shapes -----------------------------------------------------------------------------------------

def test_plan_id_and_type_required():
    custom = {"sessionUpdate": "plan_update", "plan": {"type": "_kanban", "planId": "b", "columns": {}}}
    assert outcome_of(agent_run([custom]), "ACP-PLAN-021") == Outcome.PASS
    no_id = {"sessionUpdate": "plan_update", "plan": {"type": "_kanban", "columns": {}}}
    assert outcome_of(agent_run([no_id]), "ACP-PLAN-021") == Outcome.FAIL
    no_type = {"sessionUpdate": "plan_update", "plan": {"planId": "b", "entries": []}}
    assert outcome_of(agent_run([no_type]), "ACP-PLAN-021") == Outcome.FAIL


def test_entry_fields_required():
    assert outcome_of(agent_run([items("p", A, B)]), "ACP-PLAN-022") == Outcome.PASS
    assert outcome_of(agent_run([items("p", {"content": "x", "status": "pending"})]), "ACP-PLAN-022") == Outcome.FAIL
    assert outcome_of(agent_run([stable({"priority": "high", "status": "pending"})], version=1, asked=1,
                                capable=False), "ACP-PLAN-022") == Outcome.FAIL
    bad_list = {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": {}}}
    assert outcome_of(agent_run([bad_list]), "ACP-PLAN-022") == Outcome.FAIL


def test_status_values_by_version():
    assert outcome_of(agent_run([items("p", e("x", "cancelled"), e("y", "_blocked"))]), "ACP-PLAN-023") == Outcome.PASS
    assert outcome_of(agent_run([items("p", e("x", "blocked"))]), "ACP-PLAN-023") == Outcome.FAIL
    assert outcome_of(agent_run([items("p", e("x", "_"))]), "ACP-PLAN-023") == Outcome.FAIL
    v1 = agent_run([items("p", e("x", "cancelled"))], version=1, asked=1)
    assert outcome_of(v1, "ACP-PLAN-023") == Outcome.FAIL


def test_priority_values():
    assert outcome_of(agent_run([items("p", e("x", priority="_stretch"))]), "ACP-PLAN-024") == Outcome.PASS
    assert outcome_of(agent_run([items("p", e("x", priority="urgent"))]), "ACP-PLAN-024") == Outcome.FAIL


def test_plan_types():
    md = {"sessionUpdate": "plan_update", "plan": {"type": "markdown", "planId": "m", "content": "# x"}}
    custom = {"sessionUpdate": "plan_update", "plan": {"type": "_kanban", "planId": "k"}}
    assert outcome_of(agent_run([md, custom]), "ACP-PLAN-025") == Outcome.PASS
    reserved = {"sessionUpdate": "plan_update", "plan": {"type": "kanban", "planId": "k"}}
    assert outcome_of(agent_run([reserved]), "ACP-PLAN-025") == Outcome.FAIL


@pytest.mark.parametrize("uri,want", [("file:///tmp/x/plan.md", Outcome.PASS), ("https://example.org/p.md", Outcome.PASS),
                                      ("plans/plan.md", Outcome.FAIL), ("file:plan.md", Outcome.FAIL),
                                      ("/tmp/x/plan.md", Outcome.FAIL)])
def test_file_uri_absolute(uri, want):
    update = {"sessionUpdate": "plan_update", "plan": {"type": "file", "planId": "f", "uri": uri}}
    assert outcome_of(agent_run([update]), "ACP-PLAN-026") == want


# -- against the script -----------------------------------------------------------------------------

def test_complete_lists_pass_and_diff_fails():
    good = agent_run([items("p", e("Inventory"), e("Port")), items("p", A, B)])
    assert outcome_of(good, "ACP-PLAN-027", TWO_STATES) == Outcome.PASS
    diff = agent_run([items("p", e("Inventory"), e("Port")), items("p", A)])
    assert outcome_of(diff, "ACP-PLAN-027", TWO_STATES) == Outcome.FAIL
    wrong_status = agent_run([items("p", e("Inventory"), e("Port")), items("p", A, e("Port", "pending"))])
    assert outcome_of(wrong_status, "ACP-PLAN-027", TWO_STATES) == Outcome.FAIL
    wrong_priority = agent_run([items("p", e("Inventory"), e("Port")), items("p", A, e("Port", "in_progress", "low"))])
    assert outcome_of(wrong_priority, "ACP-PLAN-027", TWO_STATES) == Outcome.FAIL


def test_complete_lists_a_priority_the_script_left_out_may_be_filled_in():
    bare = {"content": "Inventory", "status": "pending"}
    ctx = script(plan_step("p", bare))
    assert outcome_of(agent_run([items("p", e("Inventory", priority="medium"))]), "ACP-PLAN-027", ctx) == Outcome.PASS


def test_complete_lists_v1_stable_with_empty_removal():
    ctx = script(plan_step("p", e("Inventory"), e("Port")), plan_step("p", A, B), {"acp_plan_removed": "p"})
    good = agent_run([stable(e("Inventory"), e("Port")), stable(A, B), stable()], version=1, asked=1, capable=False)
    assert outcome_of(good, "ACP-PLAN-027", ctx) == Outcome.PASS
    diff = agent_run([stable(e("Inventory"), e("Port")), stable(B)], version=1, asked=1, capable=False)
    assert outcome_of(diff, "ACP-PLAN-027", ctx) == Outcome.FAIL


def test_removal_must_name_live_plan():
    removed = {"sessionUpdate": "plan_removed", "planId": "p"}
    assert outcome_of(agent_run([items("p", A), removed]), "ACP-PLAN-028") == Outcome.PASS
    assert outcome_of(agent_run([items("p", A), {"sessionUpdate": "plan_removed", "planId": "q"}]),
                      "ACP-PLAN-028") == Outcome.FAIL
    assert outcome_of(agent_run([items("p", A), removed, removed]), "ACP-PLAN-028") == Outcome.FAIL
    assert outcome_of(agent_run([removed]), "ACP-PLAN-028") == Outcome.FAIL


def test_plans_reported_and_updated():
    ctx = script(plan_step("p", e("Inventory"), e("Port")), plan_step("p", A, B), plan_step("q", e("Other")))
    all_sent = agent_run([items("p", e("Inventory"), e("Port")), items("p", A, B), items("q", e("Other"))])
    assert outcome_of(all_sent, "ACP-PLAN-030", ctx) == Outcome.PASS
    assert outcome_of(all_sent, "ACP-PLAN-031", ctx) == Outcome.PASS
    missing = agent_run([items("p", e("Inventory"), e("Port")), items("p", A, B)])
    assert outcome_of(missing, "ACP-PLAN-030", ctx) == Outcome.NON_STRICT
    once = agent_run([items("p", e("Inventory"), e("Port")), items("q", e("Other"))])
    assert outcome_of(once, "ACP-PLAN-031", ctx) == Outcome.NON_STRICT
    assert outcome_of(once, "ACP-PLAN-030", ctx) == Outcome.PASS


def test_batch_array_is_a_message_in_v2_not_in_v1():
    batch = json.dumps([note(items("p", A)), note(items("p", A, B))])
    assert outcome_of(agent_run([batch]), "ACP-PLAN-001") == Outcome.PASS
    assert outcome_of(agent_run([batch], version=1, asked=1), "ACP-PLAN-001") == Outcome.FAIL
    assert outcome_of(agent_run([batch], version=1, asked=1), "ACP-PLAN-010") == Outcome.PASS  # still read
