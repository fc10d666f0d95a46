"""CLIENT-ACP-: the rules both ways on hand-made runs (a client's view beside what the suite's agent
recorded), the suite's agent records exactly what it read and wrote, the reference ACP client passes
every case, each of its faults is caught on its own requirement, and a client that crashes, hangs, or
speaks another version than the case is a clear finding within the limit."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from typing import Any

import pytest
from logs import stdio

from streamcert.catalogue import Scenario, load_scenario, scenario_ids
from streamcert.drivers import run_scenario
from streamcert.drivers.acp_client import agent_command
from streamcert.framelog import END_TIME_LIMIT, FrameLog
from streamcert.outcomes import Outcome
from streamcert.reference.faults import FAULTS
from streamcert.rules import RuleContext, judge
from streamcert.targets import Target

PYTHON = shlex.quote(sys.executable)
CLIENT = f"{PYTHON} -m streamcert.reference.acp_client"
CASES = [s for s in scenario_ids() if load_scenario(s).profile == "acp-client"]
IDS = ("CLIENT-ACP-001", "CLIENT-ACP-002", "CLIENT-ACP-003")
SID = "sess-1"


# -- hand-made runs ---------------------------------------------------------------------------------------

def e(content: str, status: str = "pending", priority: str = "high") -> dict[str, Any]:
    return {"content": content, "priority": priority, "status": status}


def items(pid: str, *entries: dict[str, Any]) -> dict[str, Any]:
    return {"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": pid, "entries": list(entries)}}


def variant(pid: str, kind: str, **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "plan_update", "plan": {"type": kind, "planId": pid, **fields}}


def stable(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"sessionUpdate": "plan", "entries": list(entries)}


def removed(pid: str) -> dict[str, Any]:
    return {"sessionUpdate": "plan_removed", "planId": pid}


def shown(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"type": "items", "entries": list(entries)}


def run(updates: list[dict[str, Any]], view: Any, expected: dict[str, Any], *, version: int = 2,
        asked: int | None = None, capable: bool = True, context: dict[str, Any] | None = None,
        prompt_answer: dict[str, Any] | None = None, client_lines: list[str] | None = None,
        agent: bool = True, requests: int = 3) -> FrameLog:
    """A client's run: its stdout (the view as one JSON line), and the agent's record: the client's three
    requests, the agent's answers around `updates` (each a session/update `update`)."""
    asked = version if asked is None else asked
    caps: dict[str, Any] = {"plan": {}} if capable else {}
    sent = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": asked, "clientCapabilities": caps}},
            {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "/tmp/x", "mcpServers": []}},
            {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": SID, "prompt": []}}]
    lines = [{"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": version}},
             {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": SID}}]
    lines += [{"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": SID, "update": u}}
              for u in updates]
    lines.append(prompt_answer or {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}})
    sent, lines = sent[:requests], (lines if requests == 3 else lines[:requests])  # a client that stopped early
    out = client_lines if client_lines is not None else [json.dumps({"plans": view})]
    exchanges = [stdio("client", [], out)]
    if agent:
        exchanges.append(stdio("agent", [json.dumps(m) for m in sent], [json.dumps(m) for m in lines], status=None))
    context = context or {"protocolVersion": version, "plan_capability": capable}
    return FrameLog(scenario="acp-client-test", exchanges=exchanges,
                    notes={"acp_client_case": {"id": "acp-client-test", "context": context,
                                               "expected": {"plans": expected}}})


def outcomes(log: FrameLog) -> dict[str, Outcome]:
    return {f.req_id: f.outcome for f in judge(log, IDS, RuleContext())}


def finding(log: FrameLog, rid: str):
    found = [f for f in judge(log, [rid], RuleContext()) if f.req_id == rid]
    assert len(found) == 1, found
    return found[0]


A1, B1 = e("Inventory", "in_progress"), e("Port")
A2, C2 = e("Inventory", "completed"), e("Load-test", "in_progress", "medium")
UPDATES = [items("p", A1, B1), items("q", e("Review")), items("p", A2, C2)]
EXPECTED = {"p": shown(A2, C2), "q": shown(e("Review"))}


# -- CLIENT-ACP-001 -----------------------------------------------------------------------------------------

def test_each_plan_shown_as_its_latest_update_passes():
    assert outcomes(run(UPDATES, {"p": shown(A2, C2), "q": shown(e("Review"))}, EXPECTED)) == {
        "CLIENT-ACP-001": Outcome.PASS}


def test_a_merged_plan_fails_001_and_says_so():
    f = finding(run(UPDATES, {"p": shown(A2, B1, C2), "q": shown(e("Review"))}, EXPECTED), "CLIENT-ACP-001")
    assert f.outcome == Outcome.FAIL
    assert "from an earlier update (merged rather than replaced?)" in f.message
    assert {ev["exchange"] for ev in f.evidence} == {"client", "agent"}


@pytest.mark.parametrize("view", [
    {"p": shown(A1, B1), "q": shown(e("Review"))},  # an older state
    {"q": shown(e("Review"))},  # not shown
    {"p": shown(A2), "q": shown(e("Review"))},  # an entry lost
    {"p": shown(A2, {**C2, "status": "completed"}), "q": shown(e("Review"))},  # another status
    {"p": {"entries": [A2, C2]}, "q": shown(e("Review"))},  # no type: the expected type is compared
    {"p": shown(A2, C2), "q": shown(e("Review")), "r": shown(e("Invented"))},  # a plan never reported
], ids=["stale", "missing", "lost-entry", "other-status", "no-type", "never-reported"])
def test_a_plan_not_as_last_sent_fails_001(view):
    assert outcomes(run(UPDATES, view, EXPECTED))["CLIENT-ACP-001"] == Outcome.FAIL


def test_the_same_entries_in_another_order_are_non_strict():
    f = finding(run(UPDATES, {"p": shown(C2, A2), "q": shown(e("Review"))}, EXPECTED), "CLIENT-ACP-001")
    assert f.outcome == Outcome.NON_STRICT and "another order" in f.message


def test_extra_fields_of_a_shown_plan_are_not_compared():
    view = {"p": {**shown(A2, C2), "planId": "p", "title": "Port"}, "q": shown(e("Review"))}
    assert outcomes(run(UPDATES, view, EXPECTED))["CLIENT-ACP-001"] == Outcome.PASS


def test_the_v1_plan_is_the_one_plan_under_the_empty_key():
    updates = [stable(A1, B1), stable(A2, C2)]
    ok = run(updates, {"": {"entries": [A2, C2]}}, {"": {"entries": [A2, C2]}}, version=1, capable=False)
    assert outcomes(ok) == {"CLIENT-ACP-001": Outcome.PASS}
    elsewhere = run(updates, {"plan": {"entries": [A2, C2]}}, {"": {"entries": [A2, C2]}}, version=1, capable=False)
    f = finding(elsewhere, "CLIENT-ACP-001")
    assert f.outcome == Outcome.FAIL and "'' is not shown" in f.message


@pytest.mark.parametrize("view, want001, want003", [
    ({}, Outcome.PASS, Outcome.PASS),
    ({"": {"entries": []}}, Outcome.PASS, Outcome.PASS),  # v1 has no removal: an empty plan shown is the plan sent
    ({"": {"entries": [A2, C2]}}, Outcome.FAIL, Outcome.NON_STRICT),
], ids=["absent", "shown-empty", "kept"])
def test_an_empty_v1_plan_replaces_the_plan(view, want001, want003):
    log = run([stable(A1, B1), stable(A2, C2), stable()], view, {}, version=1, capable=False)
    assert outcomes(log) == {"CLIENT-ACP-001": want001, "CLIENT-ACP-003": want003}


# -- CLIENT-ACP-002 -----------------------------------------------------------------------------------------

BOARD = {"todo": ["changelog"]}
VARIANTS = [items("r", A1), variant("notes", "markdown", content="# Plan"), variant("doc", "file", uri="file:///srv/p.md"),
            variant("board", "_kanban", columns=BOARD), items("after", e("Tag")), items("r", A2)]
VARIANTS_EXPECTED = {"r": shown(A2), "notes": {"type": "markdown", "content": "# Plan"},
                     "doc": {"type": "file", "uri": "file:///srv/p.md"}, "board": {"type": "_kanban", "columns": BOARD},
                     "after": shown(e("Tag"))}


def test_variants_shown_as_sent_pass_002():
    view = {k: {**v, "planId": k} for k, v in VARIANTS_EXPECTED.items()}
    assert outcomes(run(VARIANTS, view, VARIANTS_EXPECTED)) == {"CLIENT-ACP-001": Outcome.PASS,
                                                                "CLIENT-ACP-002": Outcome.PASS}


def test_variants_ignored_pass_002_with_the_reading():
    f = finding(run(VARIANTS, {"r": shown(A2), "after": shown(e("Tag"))}, VARIANTS_EXPECTED), "CLIENT-ACP-002")
    assert f.outcome == Outcome.PASS
    assert "markdown plan 'notes' ignored" in f.reading and "_kanban plan 'board' ignored" in f.reading


@pytest.mark.parametrize("view", [
    {**VARIANTS_EXPECTED, "notes": {"type": "markdown", "content": ""}},  # a variant shown with other content
    {**VARIANTS_EXPECTED, "after": None},  # the plan after the variants: the client gave up
    {k: v for k, v in VARIANTS_EXPECTED.items() if k != "after"},
    {**VARIANTS_EXPECTED, "r": shown(A1)},  # an older state of a plan updated after the variants
], ids=["variant-altered", "after-null", "after-missing", "stale-after"])
def test_a_variant_altered_or_the_rest_lost_fails_002(view):
    assert outcomes(run(VARIANTS, view, VARIANTS_EXPECTED))["CLIENT-ACP-002"] == Outcome.FAIL


CUSTOM = [items("m", e("Snapshot", "completed"), e("Migrate", "_blocked"), e("Index", "pending", "_stretch"))]
CUSTOM_EXPECTED = {"m": shown(e("Snapshot", "completed"), e("Migrate", "_blocked"), e("Index", "pending", "_stretch"))}


def test_entries_with_custom_values_kept_pass_002():
    assert outcomes(run(CUSTOM, CUSTOM_EXPECTED, CUSTOM_EXPECTED)) == {"CLIENT-ACP-002": Outcome.PASS}


def test_a_custom_value_shown_as_null_is_the_generic_reading():
    view = {"m": shown(e("Snapshot", "completed"), {**e("Migrate"), "status": None}, e("Index", "pending", "_stretch"))}
    f = finding(run(CUSTOM, view, CUSTOM_EXPECTED), "CLIENT-ACP-002")
    assert f.outcome == Outcome.PASS and "'Migrate' status '_blocked' shown as null" in f.reading


@pytest.mark.parametrize("view", [
    {"m": shown(e("Snapshot", "completed"), e("Index", "pending", "_stretch"))},  # dropped (the SDK's way)
    {"m": shown(e("Snapshot", "completed"), e("Migrate", "pending"), e("Index", "pending", "_stretch"))},  # relabelled
    {"m": shown(e("Snapshot", "completed"), e("Migrate", "_blocked"), e("Index", "pending", "medium"))},
], ids=["dropped", "status-relabelled", "priority-relabelled"])
def test_an_entry_with_a_custom_value_dropped_or_relabelled_fails_002(view):
    f = finding(run(CUSTOM, view, CUSTOM_EXPECTED), "CLIENT-ACP-002")
    assert f.outcome == Outcome.FAIL


def test_cancelled_is_known_in_v2_and_judged_by_001():
    plans = {"p": shown(e("Inventory", "cancelled"))}
    assert outcomes(run([items("p", e("Inventory", "cancelled"))], plans, plans)) == {"CLIENT-ACP-001": Outcome.PASS}
    f = finding(run([items("p", e("Inventory", "cancelled"))], {"p": shown()}, plans), "CLIENT-ACP-001")
    assert f.outcome == Outcome.FAIL


# -- CLIENT-ACP-003 -----------------------------------------------------------------------------------------

REMOVALS = [items("a", A1), items("b", B1), variant("s", "markdown", content="x"), removed("a"), removed("s"),
            items("c", e("Spike")), removed("c")]


def test_removed_plans_not_shown_pass_003():
    assert outcomes(run(REMOVALS, {"b": shown(B1)}, {"b": shown(B1)})) == {
        "CLIENT-ACP-001": Outcome.PASS, "CLIENT-ACP-003": Outcome.PASS}


def test_a_removed_plan_still_shown_is_non_strict_003():
    f = finding(run(REMOVALS, {"b": shown(B1), "s": {"type": "markdown", "content": "x"}}, {"b": shown(B1)}),
                "CLIENT-ACP-003")
    assert f.outcome == Outcome.NON_STRICT and "'s' is still shown" in f.message and "plan_removed" in f.message


def test_a_plan_reported_again_after_removal_is_001s():
    updates = [items("a", A1), removed("a"), items("a", A2)]
    log = run(updates, {"a": shown(A2)}, {"a": shown(A2)})
    assert outcomes(log) == {"CLIENT-ACP-001": Outcome.PASS}


# -- no view, another session ---------------------------------------------------------------------------------

@pytest.mark.parametrize("change, words", [
    ({"client_lines": []}, "printed no final view"),
    ({"client_lines": ["starting", "done"]}, "printed no final view"),
    ({"client_lines": ['{"plan": []}']}, "has no `plans` object"),
    ({"agent": False}, "never started the suite's agent"),
    ({"requests": 0}, "no session began"),
    ({"requests": 2}, "never sent session/prompt"),
    ({"prompt_answer": {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "unknown step"}}},
     "could not play the case's script"),
], ids=["no-stdout", "no-json", "no-plans", "no-agent", "no-initialize", "no-prompt", "script-failed"])
def test_no_view_is_error_on_every_requirement(change, words):
    found = judge(run(UPDATES, {}, EXPECTED, **change), IDS, RuleContext())
    assert found and all(f.outcome == Outcome.ERROR for f in found), found
    assert words in found[0].message


def test_a_turn_the_client_cut_short_is_judged_and_said():
    log = run(UPDATES, {"p": shown(A1, B1), "q": shown(e("Review"))}, EXPECTED)
    agent = log.get("agent")
    agent.events.pop()  # the prompt never answered: the client ended the agent mid-turn
    f = finding(log, "CLIENT-ACP-001")
    assert f.outcome == Outcome.FAIL and "before the prompt was answered" in f.message


def test_a_client_cut_at_the_limit_is_error_naming_the_limit():
    log = run(UPDATES, {}, EXPECTED, client_lines=[])
    client = log.get("client")
    client.status, client.end = None, END_TIME_LIMIT
    client.notes["limit"] = {"cap": "timeout", "figure": 10.0, "limit": 10.0, "awaiting": "the client's final view"}
    f = finding(log, "CLIENT-ACP-001")
    assert f.outcome == Outcome.ERROR and "per-exchange limit" in f.message


def test_the_pretty_printed_view_is_read_whole():
    pretty = json.dumps({"plans": EXPECTED}, indent=2).split("\n")
    assert outcomes(run(UPDATES, None, EXPECTED, client_lines=pretty)) == {"CLIENT-ACP-001": Outcome.PASS}


@pytest.mark.parametrize("kw, words", [
    ({"version": 2, "context": {"protocolVersion": 1, "plan_capability": False}}, "needs ACP protocol version 1"),
    ({"version": 1, "capable": True, "context": {"protocolVersion": 1, "plan_capability": False}},
     "without clientCapabilities.plan"),
], ids=["version", "capability"])
def test_another_session_than_the_case_is_unsupported(kw, words):
    found = judge(run(UPDATES, EXPECTED, EXPECTED, **kw), IDS, RuleContext())
    assert found and all(f.outcome == Outcome.UNSUPPORTED for f in found), found
    assert words in found[0].message


# -- the suite's agent: its record is exact ---------------------------------------------------------------------

def test_the_agent_records_every_line_it_read_and_wrote(tmp_path):
    script = {"version": 1, "name": "t", "steps": [{"acp_plan": {"planId": "p", "type": "items", "entries": [A1]}},
                                                    {"acp_plan_removed": "p"}, {"finish": "done"}]}
    (tmp_path / "s.json").write_text(json.dumps(script))
    proc = subprocess.Popen(shlex.split(agent_command(tmp_path / "s.json", tmp_path / "r.jsonl")), text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    sent, out = [], []

    def ask(method: str, params: dict[str, Any]) -> None:
        sent.append(json.dumps({"jsonrpc": "2.0", "id": len(sent) + 1, "method": method, "params": params}))
        proc.stdin.write(sent[-1] + "\n")
        proc.stdin.flush()

    try:
        ask("initialize", {"protocolVersion": 2, "clientCapabilities": {}})
        out.append(proc.stdout.readline())
        ask("session/new", {"cwd": "/tmp", "mcpServers": []})
        out.append(proc.stdout.readline())
        ask("session/prompt", {"sessionId": json.loads(out[-1])["result"]["sessionId"], "prompt": []})
        stdout, _ = proc.communicate(timeout=30)  # closes its input: the agent ends
    finally:
        proc.kill()
    out += stdout.splitlines(keepends=True)
    record = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [r["in"] for r in record if "in" in r] == sent
    assert [r["out"] + "\n" for r in record if "out" in r] == out
    assert "start" in record[0] and record[-1]["end"] == "its input closed"
    assert len({r["pid"] for r in record}) == 1 and [r["t"] for r in record] == sorted(r["t"] for r in record)
    kinds = [json.loads(line)["params"]["update"]["sessionUpdate"] for line in out if "session/update" in line]
    assert kinds == ["plan_update", "plan_removed", "agent_message_chunk"]  # the script, not the prompt's _meta


# -- against the reference ACP client ---------------------------------------------------------------------------

def certify(sid: str, cmd: str, **target: Any):
    scenario = load_scenario(sid)
    log = run_scenario(sid, Target(acp_client_cmd=cmd, **{"stream_limit": 5.0, **target}))
    return log, {f.req_id: f for f in judge(log, scenario.requirements, RuleContext(scenario=scenario))}


def test_the_cases_cover_every_form_and_requirement():
    assert set(CASES) == {"acp-client-v2-items", "acp-client-v2-variants", "acp-client-v2-custom-values",
                          "acp-client-v2-removed", "acp-client-v1-capability", "acp-client-v1-fallback",
                          "acp-client-v1-fallback-removed"}
    covered = {r for s in CASES for r in load_scenario(s).requirements}
    assert covered == set(IDS)
    for sid in CASES:
        scenario = load_scenario(sid)
        assert scenario.data["driver"] == "acp-client-case" and scenario.data["expected"]["plans"] is not None


@pytest.mark.parametrize("sid", CASES)
def test_the_reference_client_passes_every_case(sid):
    log, found = certify(sid, CLIENT)
    scenario = load_scenario(sid)
    assert set(found) == set(scenario.requirements)
    assert {r: f.message for r, f in found.items() if f.outcome != Outcome.PASS} == {}
    agent = log.get("agent")
    assert agent.notes["ended"] == "its input closed" and agent.notes["agent_runs"] == 1
    sent = [json.loads(line) for line in agent.request_body]
    init = sent[0]["params"]
    assert init["protocolVersion"] == scenario.data["context"]["protocolVersion"]
    assert ("plan" in init["clientCapabilities"]) == scenario.data["context"]["plan_capability"]


@pytest.mark.parametrize("fault, sid, rid, outcome", [
    ("acp-merge-entries", "acp-client-v2-items", "CLIENT-ACP-001", Outcome.FAIL),
    ("acp-merge-entries", "acp-client-v1-fallback", "CLIENT-ACP-001", Outcome.FAIL),
    ("acp-drops-custom", "acp-client-v2-custom-values", "CLIENT-ACP-002", Outcome.FAIL),
    ("acp-keeps-removed", "acp-client-v2-removed", "CLIENT-ACP-003", Outcome.NON_STRICT),
])
def test_each_fault_is_caught_on_its_requirement(fault, sid, rid, outcome):
    assert rid in FAULTS[fault].catches
    _, found = certify(sid, f"{CLIENT} --fault {fault}")
    assert found[rid].outcome == outcome, found[rid].message
    assert all(f.outcome == Outcome.PASS for r, f in found.items() if r != rid), found


def test_a_client_that_drops_custom_entries_passes_where_there_are_none():
    _, found = certify("acp-client-v2-items", f"{CLIENT} --fault acp-drops-custom")  # cancelled is listed in v2
    assert found["CLIENT-ACP-001"].outcome == Outcome.PASS


def test_a_crashing_client_is_error_with_its_status_and_stderr():
    crash = f"{PYTHON} -c \"import sys; print('out of tea', file=sys.stderr); sys.exit(3)\""
    _, found = certify("acp-client-v2-items", crash)
    f = found["CLIENT-ACP-001"]
    assert f.outcome == Outcome.ERROR
    assert "exited with status 3" in f.message and "out of tea" in f.message


def test_a_hanging_client_is_stopped_at_the_limit():
    hang = f"{PYTHON} -c \"import time; time.sleep(60)\""
    started = time.monotonic()
    log, found = certify("acp-client-v2-items", hang, timeout=1.0)
    assert time.monotonic() - started < 10
    f = found["CLIENT-ACP-001"]
    assert f.outcome == Outcome.ERROR and "per-exchange limit" in f.message, f.message
    assert log.get("client").end == END_TIME_LIMIT


def test_a_client_that_asks_another_version_makes_the_case_unsupported():
    v2 = json.dumps({"protocolVersion": 2, "plan_capability": True})
    _, found = certify("acp-client-v1-fallback", f"env STREAMCERT_CONTEXT={shlex.quote(v2)} {CLIENT}")
    f = found["CLIENT-ACP-001"]
    assert f.outcome == Outcome.UNSUPPORTED and "needs ACP protocol version 1" in f.message


def test_the_client_is_given_the_case_and_never_the_environment_in_the_log():
    log, _ = certify("acp-client-v1-fallback", CLIENT)
    body = log.get("client").request_body
    assert body == {"case": "acp-client-v1-fallback", "context": load_scenario("acp-client-v1-fallback").data["context"]}
    assert log.notes["acp_client_case"]["expected"] == load_scenario("acp-client-v1-fallback").data["expected"]


def test_a_scenario_object_is_enough_for_the_view():
    # The expected view may come from the scenario when the log has no case note (a cassette of an older run).
    log = run(UPDATES, EXPECTED, EXPECTED)
    case = log.notes.pop("acp_client_case")
    sc = Scenario(id="x", profile="acp-client", title="", requirements=IDS, script=None,
                  data={"context": case["context"], "expected": case["expected"]})
    found = judge(log, IDS, RuleContext(scenario=sc))
    assert {f.req_id: f.outcome for f in found} == {"CLIENT-ACP-001": Outcome.PASS}


def test_a_cassette_of_a_case_is_judged_the_same(tmp_path):
    from streamcert.recordings.cassette import load

    scenario = load_scenario("acp-client-v2-removed")
    log, found = certify(scenario.id, f"{CLIENT} --fault acp-keeps-removed")
    log.save(tmp_path / "case.yaml")
    again = judge(load(tmp_path / "case.yaml"), scenario.requirements, RuleContext(scenario=scenario))
    assert [(f.req_id, f.outcome, f.message) for f in again] == [(f.req_id, f.outcome, f.message)
                                                                  for f in found.values()]
    assert found["CLIENT-ACP-003"].outcome == Outcome.NON_STRICT
