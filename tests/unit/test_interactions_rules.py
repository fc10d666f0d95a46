"""Rules A2A-INT-, IX-, IDEM- on hand-made logs: each passes a correct log and fails a broken one."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from logs import frame_log, rpc_error, sse, unary

from streamcert.catalogue import Scenario, load_catalogue
from streamcert.outcomes import Outcome
from streamcert.rules import RuleContext, judge
from streamcert.rules.interactions.ixtruncation import judge_cut
from streamcert.rules.interactions.ixview import Interruptions

URI = "https://docs.nylorun.com/a2a/interactions/v1"
TID, CTX = "task-1", "ctx-1"
SENTINEL = "SENTINEL-xyz"
STATE = {"question": "TASK_STATE_INPUT_REQUIRED", "approval": "TASK_STATE_AUTH_REQUIRED",
         "connection": "TASK_STATE_AUTH_REQUIRED"}


def agent_msg(mid: str, text: str, meta: dict | None = None, ext: bool = True) -> dict[str, Any]:
    msg: dict[str, Any] = {"messageId": mid, "role": "ROLE_AGENT", "parts": [{"text": text}], "taskId": TID,
                           "contextId": CTX}
    if meta is not None:
        msg["metadata"] = {URI: meta}
        if ext:
            msg["extensions"] = [URI]
    return msg


def upd(state: str, message: dict | None = None, ts: str = "2026-10-06T09:00:01.750Z") -> dict[str, Any]:
    status: dict[str, Any] = {"state": state, "timestamp": ts}
    if message is not None:
        status["message"] = message
    return {"statusUpdate": {"taskId": TID, "contextId": CTX, "status": status}}


def task(state: str, message: dict | None = None, history: list | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": TID, "contextId": CTX, "status": {"state": state}}
    if message is not None:
        out["status"]["message"] = message
    if history is not None:
        out["history"] = history
    return out


class Pause:
    """One pausing step, its interrupted status, the answer sent and the report the model makes."""

    def __init__(self, n: int, kind: str, arg: Any, prompt: str, answer: dict, say: str, said: str,
                 detail: dict | None = None) -> None:
        self.n, self.kind, self.arg, self.say, self.said = n, kind, arg, say, said
        meta = {"interactionId": f"ix-{n}", "kind": kind, "prompt": prompt}
        if detail is not None:
            meta["detail"] = detail
        self.meta = meta
        self.message = agent_msg(f"pause-{n}", prompt, meta)
        self.answer = answer

    def step(self) -> dict[str, Any]:
        return {{"question": "ask", "approval": "call", "connection": "connect"}[self.kind]: self.arg}

    def update(self) -> dict[str, Any]:
        return upd(STATE[self.kind], self.message)

    def answer_message(self) -> dict[str, Any]:
        message = {"messageId": f"answer-{self.n}", "role": "ROLE_USER", "taskId": TID, "contextId": CTX}
        if "text" in self.answer:
            message["parts"] = [{"text": self.answer["text"]}]
        else:
            message["parts"] = [{"data": self.answer}]
            message["extensions"] = [URI]
            message["metadata"] = {URI: {"interactionId": self.meta["interactionId"], **self.answer}}
        return message


def question(n: int = 1, value: Any = "blue", said: str | None = None, say: str = "A{n}: {{result}}") -> Pause:
    say = say.replace("{n}", str(n))
    seen = json.dumps(value) if said is None else said
    return Pause(n, "question", f"Question {n}?", f"Question {n}?", {"value": value}, say,
                 say.replace("{{result}}", seen))


def approval(n: int = 1, approved: bool = True, said: str | None = None) -> Pause:
    arg = {"server": "github", "tool": "merge", "args": {"x": SENTINEL}}
    seen = said if said is not None else ("github/merge: done" if approved else "tool.denied")
    return Pause(n, "approval", arg, "Approve github / merge?", {"approved": approved}, f"R{n}: {{{{result}}}}",
                 f"R{n}: {seen}", {"server": "github", "tool": "merge"})


def connection(n: int = 1, value: Any = None, said: str | None = None, app: str = "Linear",
               reason: str = "to file", cut: tuple[str, str] | None = None) -> Pause:
    value = {"connected": True} if value is None else value
    capp, creason = cut or (app, reason)
    yes = value is True or (isinstance(value, dict) and value.get("connected") is True)
    seen = said if said is not None else (f"Connected: {capp}" if yes else f"Not connected: {capp}")
    return Pause(n, "connection", {"app": app, "reason": reason}, f"Connect {capp}: {creason}", {"value": value},
                 f"C{n}: {{{{result}}}}", f"C{n}: {seen}", {"app": capp, "reason": creason})


def ix_log(*pauses: Pause, d3: str = "close", extension: bool = True, sentinel: str | None = None,
           final: str = "TASK_STATE_COMPLETED", after: list | None = None):
    """The log the interactions driver writes when every pause is answered as the pause says."""
    steps = []
    for p in pauses:
        steps += [p.step(), {"say": p.say}]
    steps.append({"finish": "done"})
    script = {"version": 1, "name": "t", "steps": steps}
    segments: list[list[dict]] = [[{"task": task("TASK_STATE_SUBMITTED")}, upd("TASK_STATE_WORKING")]]
    for p in pauses:
        segments[-1].append(p.update())
        segments.append([upd("TASK_STATE_WORKING", ts=f"2026-10-06T09:00:0{p.n + 1}.000Z"),
                         upd("TASK_STATE_WORKING", agent_msg(f"say-{p.n}", p.said))])
    segments[-1].append(upd(final, agent_msg("final", "done"), ts="2026-10-06T09:00:09.000Z"))  # stamped last
    exchanges = []
    if d3 == "open":
        exchanges.append(sse("stream", [e for seg in segments for e in seg], t=0.0))
    else:
        exchanges.append(sse("stream", segments[0], t=0.0))
    history = []
    for p in pauses:
        t = float(p.n)
        paused = task(STATE[p.kind], p.message)
        exchanges.append(unary("get_pause_{}".format(p.n), paused, rpc_method="GetTask", t=t))
        exchanges.append(unary(f"list_pause_{p.n}", {"tasks": [paused]}, rpc_method="ListTasks", t=t + 0.05))
        if d3 == "close":
            exchanges.append(sse(f"subscribe_{p.n}", [{"task": paused}] + segments[p.n], t=t + 0.1,
                                 rpc_method="SubscribeToTask"))
        nxt = pauses[p.n].message if p.n < len(pauses) else agent_msg("final", "done")
        state = STATE[pauses[p.n].kind] if p.n < len(pauses) else final
        ex = unary(f"answer_{p.n}", {"task": task(state, nxt)}, rpc_method="SendMessage", t=t + 0.2,
                   params={"message": p.answer_message()})
        exchanges.append(ex)
        history += [p.message, p.answer_message(), agent_msg(f"say-{p.n}", p.said)]
    exchanges += after or []
    exchanges.append(unary("get_final", task(final, agent_msg("final", "done"), history), rpc_method="GetTask",
                           t=50.0))
    log = frame_log(*exchanges, script=script,
                    notes={"interactions": {"extension": extension, "sentinel": sentinel, "pauses": []}})
    return log


def run(log, *ids: str):
    scenario = Scenario(id="t", profile="interactions", title="", requirements=ids, script=log.script)
    return {f.req_id: f for f in judge(log, ids, RuleContext(scenario=scenario))}


def outcome_of(log, rid: str) -> Outcome:
    return run(log, rid)[rid].outcome


def find(log, label: str):
    return next(ex for ex in log.exchanges if ex.label == label)


def set_result(log, label: str, result: Any = None, error: dict | None = None) -> None:
    """Replace the answer of one exchange (keeps its request)."""
    old = find(log, label)
    new = unary(label, result, error=error, rpc_method=old.rpc_method, t=old.t_sent,
                params=(old.request_body or {}).get("params"))
    log.exchanges[log.exchanges.index(old)] = new


# -- A2A-INT- -----------------------------------------------------------------------------------------------

CORE = ("A2A-INT-001", "A2A-INT-002", "A2A-INT-003", "A2A-INT-004", "IX-001", "IX-002", "IX-005", "IX-008")


@pytest.mark.parametrize("d3", ["close", "open"])
def test_a_correct_question_log_passes(d3):
    found = run(ix_log(question(), d3=d3), *CORE)
    assert {r: f.outcome for r, f in found.items()} == {r: Outcome.PASS for r in CORE}
    reading = "closes at the interrupted state" if d3 == "close" else "stays open"
    assert found["A2A-INT-002"].reading == f"D3: the stream {reading}"


def test_int001_fails_when_the_ask_never_pauses():
    log = ix_log(question())
    stream = find(log, "stream")
    log.exchanges[0] = sse("stream", [{"task": task("TASK_STATE_SUBMITTED")}, upd("TASK_STATE_WORKING")],
                           end="time_limit")
    del stream
    for ex in [e for e in log.exchanges if e.label.startswith("subscribe_")]:
        log.exchanges.remove(ex)
    assert outcome_of(log, "A2A-INT-001") == Outcome.FAIL


def test_int001_fails_when_the_text_is_not_the_question():
    p = question()
    p.message["parts"] = [{"text": "something else"}]
    assert outcome_of(ix_log(p), "A2A-INT-001") == Outcome.FAIL


def test_int002_fails_when_no_stream_carries_the_task_on():
    log = ix_log(question())
    i = log.exchanges.index(find(log, "subscribe_1"))
    log.exchanges[i] = unary("subscribe_1", error=rpc_error(-32004), rpc_method="SubscribeToTask", t=1.1)
    log.exchanges.remove(find(log, "get_final"))
    assert outcome_of(log, "A2A-INT-002") == Outcome.FAIL


def _answered_by_a_stream_of(task_id: str):
    """A question log whose subscription closes at the pause and whose answer goes by SendStreamingMessage,
    its stream carrying task `task_id` on (another task: a server that starts a new task for every message)."""
    log = ix_log(question())
    sub = find(log, "subscribe_1")
    paused = sub.data_events()[0].payload["result"]
    log.exchanges[log.exchanges.index(sub)] = sse("subscribe_1", [paused], t=sub.t_sent, rpc_method="SubscribeToTask")
    old = find(log, "answer_1")
    moved = [{"task": {**task("TASK_STATE_WORKING"), "id": task_id}},
             {"statusUpdate": {**upd("TASK_STATE_WORKING")["statusUpdate"], "taskId": task_id}},
             {"statusUpdate": {**upd("TASK_STATE_COMPLETED", agent_msg("final", "done"))["statusUpdate"],
                               "taskId": task_id}}]
    log.exchanges[log.exchanges.index(old)] = sse("answer_1", moved, t=old.t_sent, params=old.request_body["params"])
    return log


def test_int002_reads_only_the_status_updates_of_its_own_task():
    assert outcome_of(_answered_by_a_stream_of(TID), "A2A-INT-002") == Outcome.PASS
    f = run(_answered_by_a_stream_of("task-new"), "A2A-INT-002")["A2A-INT-002"]
    assert f.outcome == Outcome.FAIL and f"no stream carried task {TID} on" in f.message


def test_the_pauses_and_the_task_going_on_are_read_from_the_own_tasks_frames():
    for tid, pauses, went_on in ((TID, 2, True), ("task-new", 1, False)):
        log = _answered_by_a_stream_of(tid)
        answer = find(log, "answer_1")
        asked = {"statusUpdate": {**question(2, "green").update()["statusUpdate"], "taskId": tid}}
        log.exchanges[log.exchanges.index(answer)] = sse(
            "answer_1", [ev.payload["result"] for ev in answer.data_events()][:2] + [asked], t=answer.t_sent,
            params=answer.request_body["params"])
        log.exchanges.remove(find(log, "get_final"))
        view = Interruptions.of(log)
        assert len(view.pauses) == pauses and view.continued(view.pauses[0]) is went_on


def test_int003_fails_when_the_task_does_not_return_to_working():
    log = ix_log(question())
    sub = find(log, "subscribe_1")
    items = [ev.payload["result"] for ev in sub.data_events()]
    items[1] = upd("TASK_STATE_SUBMITTED", ts="2026-10-06T09:00:02.000Z")
    log.exchanges[log.exchanges.index(sub)] = sse("subscribe_1", items, t=1.1, rpc_method="SubscribeToTask")
    assert outcome_of(log, "A2A-INT-003") == Outcome.FAIL


def test_int003_fails_when_the_answer_names_another_task():
    log = ix_log(question())
    set_result(log, "answer_1", {"task": {**task("TASK_STATE_COMPLETED"), "id": "task-2"}})
    assert outcome_of(log, "A2A-INT-003") == Outcome.FAIL


def test_int004_and_ix005_fail_when_get_task_shows_another_pause():
    log = ix_log(question())
    set_result(log, "get_pause_1", task("TASK_STATE_INPUT_REQUIRED"))
    found = run(log, "A2A-INT-004", "IX-005")
    assert found["A2A-INT-004"].outcome == Outcome.FAIL and found["IX-005"].outcome == Outcome.FAIL
    log = ix_log(question())
    other = copy.deepcopy(question().message)
    other["metadata"][URI]["interactionId"] = "ix-other"
    set_result(log, "get_pause_1", task("TASK_STATE_INPUT_REQUIRED", other))
    found = run(log, "A2A-INT-004", "IX-005")
    assert found["A2A-INT-004"].outcome == Outcome.PASS and found["IX-005"].outcome == Outcome.FAIL


def test_int005_answer_to_an_ended_task():
    refused = unary("answer_terminal", error=rpc_error(-32004), rpc_method="SendMessage", t=60.0)
    found = run(ix_log(question(), after=[refused]), "A2A-INT-005")["A2A-INT-005"]
    assert found.outcome == Outcome.PASS and "-32004" in found.message
    accepted = unary("answer_terminal", {"task": task("TASK_STATE_COMPLETED")}, rpc_method="SendMessage", t=60.0)
    assert outcome_of(ix_log(question(), after=[accepted]), "A2A-INT-005") == Outcome.FAIL
    other = unary("answer_terminal", error=rpc_error(-32602), rpc_method="SendMessage", t=60.0)
    found = run(ix_log(question(), after=[other]), "A2A-INT-005")["A2A-INT-005"]
    assert found.outcome == Outcome.FAIL and "-32602" in found.message


def test_a_failure_says_what_was_seen_and_cites_the_catalogue_source():
    p = approval()
    del p.meta["detail"]["tool"]
    found = run(ix_log(p), "IX-003")["IX-003"]
    assert found.outcome == Outcome.FAIL
    assert 'the held call is {"server": "github", "tool": "merge"}' in found.message
    assert found.message.endswith(f"[{load_catalogue()['IX-003'].source}]") and "004_" not in found.message


def test_several_offenders_make_one_finding_that_shows_the_first():
    log = ix_log(approval(1, said="tool.denied"), approval(2, said="tool.denied"))
    found = judge(log, ["IX-006"], RuleContext())
    assert len(found) == 1 and found[0].outcome == Outcome.FAIL
    assert found[0].message.startswith("2 approved call(s) the model saw denied; the first: answer 1:")
    assert len(found[0].evidence) == 2


# -- IX- -------------------------------------------------------------------------------------------------------

def test_ix001_fails_an_approval_in_input_required():
    p = approval()
    log = ix_log(p)
    assert outcome_of(log, "IX-001") == Outcome.PASS
    p.kind = "question"  # the status goes out in INPUT_REQUIRED, the script still holds a call
    log = ix_log(p)
    log.script["steps"][0] = {"call": p.arg}
    assert outcome_of(log, "IX-001") == Outcome.FAIL


@pytest.mark.parametrize("breakage", ["no-extensions", "prompt-differs", "no-id"])
def test_ix002_fails_a_broken_interaction(breakage):
    p = question()
    if breakage == "no-extensions":
        del p.message["extensions"]
    elif breakage == "prompt-differs":
        p.meta["prompt"] = "Other?"
    else:
        p.meta["interactionId"] = ""
    assert outcome_of(ix_log(p), "IX-002") == Outcome.FAIL


def test_ix003_fails_a_detail_without_the_tool():
    assert outcome_of(ix_log(approval()), "IX-003") == Outcome.PASS
    p = approval()
    del p.meta["detail"]["tool"]
    assert outcome_of(ix_log(p), "IX-003") == Outcome.FAIL
    p = approval()
    p.meta["detail"]["server"] = "gitlab"
    found = run(ix_log(p), "IX-003")["IX-003"]
    assert found.outcome == Outcome.FAIL and "gitlab" in found.message


def test_ix003_an_absent_detail_passes_it_is_optional():
    p = approval()
    del p.meta["detail"]
    found = run(ix_log(p), "IX-003")["IX-003"]
    assert found.outcome == Outcome.PASS and found.reading == "detail left out (optional)"
    p.meta["interactionId"] = ""
    assert outcome_of(ix_log(p), "IX-003") == Outcome.FAIL


def test_ix003_a_reason_is_the_runtimes_neither_required_nor_compared():
    p = approval()
    p.arg["reason"] = "Opens the release pull request"  # a reason beside the call: its absence is no error
    found = run(ix_log(p), "IX-003")["IX-003"]
    assert found.outcome == Outcome.PASS and found.reading == "detail without a reason"
    p.meta["detail"]["reason"] = "the policy holds every write"  # a reason of the runtime's own policy
    found = run(ix_log(p), "IX-003")["IX-003"]
    assert found.outcome == Outcome.PASS and found.reading == "detail with a reason"


def test_ix004_searches_everything_but_the_users_own_messages():
    log = ix_log(approval(approved=False), sentinel=SENTINEL)
    user = {"messageId": "u", "role": "ROLE_USER", "parts": [{"text": "go"}], "metadata": {"script": SENTINEL}}
    get = find(log, "get_pause_1")
    value, _ = get.json()
    set_result(log, "get_pause_1", {**value["result"], "history": [user]})
    assert outcome_of(log, "IX-004") == Outcome.PASS
    p = approval(approved=False)
    p.meta["detail"]["args"] = {"x": SENTINEL}
    assert outcome_of(ix_log(p, sentinel=SENTINEL), "IX-004") == Outcome.FAIL


def test_ix006_and_ix007_read_the_models_view():
    assert outcome_of(ix_log(approval(approved=True)), "IX-006") == Outcome.PASS
    assert outcome_of(ix_log(approval(approved=True, said="tool.denied")), "IX-006") == Outcome.FAIL
    assert outcome_of(ix_log(approval(approved=False)), "IX-007") == Outcome.PASS
    assert outcome_of(ix_log(approval(approved=False, said="github/merge: done")), "IX-007") == Outcome.FAIL


def _echoed(args: dict, server: str = "github") -> Pause:
    p = approval(said=json.dumps({"server": server, "tool": "merge", "args": args}))
    p.arg["echo"] = True
    return p


def test_ix015_the_approved_call_runs_as_held():
    found = run(ix_log(_echoed({"x": SENTINEL})), "IX-015")["IX-015"]
    assert found.outcome == Outcome.PASS
    found = run(ix_log(_echoed({"x": SENTINEL, "draft": True})), "IX-015")["IX-015"]
    assert found.outcome == Outcome.FAIL and '"draft": true' in found.message
    assert outcome_of(ix_log(_echoed({"x": SENTINEL}, server="gitlab")), "IX-015") == Outcome.FAIL


def test_ix015_judges_only_an_approved_echoed_call():
    assert "IX-015" not in run(ix_log(approval()), "IX-015")  # no echo asked
    p = approval(said="github/merge: done")
    p.arg["echo"] = True  # a result that is not the echo: nothing to judge, no blame
    assert "IX-015" not in run(ix_log(p), "IX-015")
    denied = approval(approved=False)
    denied.arg["echo"] = True
    assert "IX-015" not in run(ix_log(denied), "IX-015")


def test_ix008_compares_the_value_as_json():
    assert outcome_of(ix_log(question(value={"a": 1}, said='{"a":1}')), "IX-008") == Outcome.PASS
    assert outcome_of(ix_log(question(value={"a": 1}, said="{'a': 1}")), "IX-008") == Outcome.FAIL
    text = question(value=None)
    text.answer = {"text": "4821"}
    text.said = "A1: 4821"
    assert outcome_of(ix_log(text), "IX-008") == Outcome.PASS


def test_ix009_connections():
    log = ix_log(connection(1), connection(2, value=True, app="Slack"), connection(3, value={"connected": False}))
    assert outcome_of(log, "IX-009") == Outcome.PASS
    assert outcome_of(ix_log(connection(value=True, said="Not connected: Linear")), "IX-009") == Outcome.FAIL
    p = connection()
    p.meta["prompt"] = "Connect to Linear"
    assert outcome_of(ix_log(p), "IX-009") == Outcome.FAIL


def test_ix009_a_connection_declined_with_approved_false():
    declined = connection(value=False)
    declined.answer = {"approved": False}  # approved: true or false is read the same way
    log = ix_log(declined)
    assert json.loads(json.dumps(find(log, "answer_1").params))["message"]["metadata"][URI]["approved"] is False
    assert outcome_of(log, "IX-009") == Outcome.PASS
    connected = connection(value=False, said="Connected: Linear")
    connected.answer = {"approved": False}
    found = run(ix_log(connected), "IX-009")["IX-009"]
    assert found.outcome == Outcome.FAIL and "Not connected: Linear" in found.message


def test_ix010_cuts():
    app = "x" + "🚀" * 100
    assert judge_cut(app, app[:80], 80)[0] == "strict"
    assert judge_cut(app, app[:79] + "…", 80)[0] == "strict"
    assert judge_cut(app, "x" + "🚀" * 39 + "\ufffd", 80)[0] == "bad"  # split inside a pair
    assert judge_cut(app, "x" + "🚀" * 39, 80)[0] == "utf16"  # 79 units: the next pair does not fit
    reason = "🚀 Because: " + "e\u0301" * 200
    assert judge_cut(reason, reason[:278] + "…", 280)[0] == "utf16"  # 280 UTF-16 units, … included
    # 279 code points is both 280 UTF-16 units and a back-off from a cut between e and its mark: it passes
    assert judge_cut(reason, reason[:279], 280)[0] == "strict"
    assert judge_cut(reason, reason[:200], 280)[0] == "bad"
    # grapheme clusters: the reason is 211 clusters (411 code points), so kept whole is one reading,
    # and a cut to 280 clusters of a longer one another
    assert judge_cut(reason, reason, 280)[0] == "graphemes"
    longer = "Because: " + "e\u0301" * 300
    assert judge_cut(longer, longer[:9 + 2 * 271], 280)[0] == "graphemes"
    assert judge_cut(longer, longer[:9 + 2 * 250], 280)[0] == "bad"
    graphemes = connection(app=app, cut=(app[:80], reason), reason=reason)
    found = run(ix_log(graphemes), "IX-010")["IX-010"]
    assert found.outcome == Outcome.NON_STRICT and "grapheme clusters" in found.message
    ok = connection(app=app, cut=(app[:80], "to file"))
    assert outcome_of(ix_log(ok), "IX-010") == Outcome.PASS
    wide = connection(app="y" + "🚀" * 100, cut=("y" + "🚀" * 39 + "\ufffd", "to file"))
    assert outcome_of(ix_log(wide), "IX-010") == Outcome.FAIL
    utf16 = connection(app="🚀" * 100, cut=("🚀" * 40, "to file"))
    found = run(ix_log(utf16), "IX-010")["IX-010"]
    assert found.outcome == Outcome.NON_STRICT and "UTF-16" in found.message


def test_ix010_the_limit_plus_the_ellipsis_fails_as_plan006_does():
    app = "x" + "🚀" * 100
    verdict, seen = judge_cut(app, app[:80] + "…", 80)
    assert verdict == "bad" and "81 code points" in seen
    reason = "🚀 Because: " + "e\u0301" * 200 + " and a plain tail" * 6  # over 280 clusters too
    assert judge_cut(reason, reason[:280], 280)[0] == "strict"
    assert judge_cut(reason, reason[:279] + "…", 280)[0] == "strict"
    # 281 code points and 282 UTF-16 units; 147 clusters is no cut to 280 clusters either
    verdict, seen = judge_cut(reason, reason[:280] + "…", 280)
    assert verdict == "bad" and "281 code points" in seen
    plus = connection(app=app, reason=reason, cut=(app[:80] + "…", reason[:280] + "…"))
    found = run(ix_log(plus), "IX-010")["IX-010"]
    assert found.outcome == Outcome.FAIL and "at most" in found.message
    plus = connection(app=app, reason=reason, cut=(app[:79] + "…", reason[:279] + "…"))
    found = run(ix_log(plus), "IX-010")["IX-010"]
    assert found.outcome == Outcome.PASS and found.reading == "code points, ending in …"


def test_ix010_a_reason_not_cut_fails():
    reason = "🚀 Because: " + "e\u0301" * 200 + " and a plain tail" * 6
    verdict, seen = judge_cut(reason, reason, 280)
    assert verdict == "bad" and "not cut" in seen
    uncut = connection(app="Linear", reason=reason, cut=("Linear", reason))
    assert outcome_of(ix_log(uncut), "IX-010") == Outcome.FAIL
    cut = connection(app="Linear", reason=reason, cut=("Linear", reason[:280]))
    assert outcome_of(ix_log(cut), "IX-010") == Outcome.PASS


def _text_reply(result=None, error=None, after_state="TASK_STATE_AUTH_REQUIRED", after_message=None):
    p = approval()
    reply = unary("text_reply_1", result, error=error, rpc_method="SendMessage", t=1.15)
    after = unary("get_after_text_1", task(after_state, after_message or p.message), rpc_method="GetTask", t=1.16)
    return ix_log(p, after=[reply, after])


def test_ix011_text_never_approves():
    assert outcome_of(_text_reply(error=rpc_error(-32004)), "IX-011") == Outcome.PASS
    assert outcome_of(_text_reply(error=rpc_error(-32602)), "IX-011") == Outcome.FAIL
    assert outcome_of(_text_reply(result={"task": task("TASK_STATE_WORKING")}), "IX-011") == Outcome.FAIL
    assert outcome_of(_text_reply(error=rpc_error(-32004), after_state="TASK_STATE_WORKING"), "IX-011") \
        == Outcome.FAIL
    other = approval(2).message  # the same state, another open interaction
    found = run(_text_reply(error=rpc_error(-32004), after_message=other), "IX-011")["IX-011"]
    assert found.outcome == Outcome.FAIL and '"ix-2"' in found.message


@pytest.mark.parametrize("rid,label", [("IX-012", "wrong_id_2"), ("IX-013", "stale_2")])
def test_ix012_ix013_answers_to_no_open_interaction(rid, label):
    refused = unary(label, error=rpc_error(-32602), rpc_method="SendMessage", t=2.15)
    found = run(ix_log(question(1), question(2), after=[refused]), rid)[rid]
    assert found.outcome == Outcome.PASS and "-32602" in found.reading
    taken = unary(label, {"task": task("TASK_STATE_WORKING")}, rpc_method="SendMessage", t=2.15)
    assert outcome_of(ix_log(question(1), question(2), after=[taken]), rid) == Outcome.FAIL


@pytest.mark.parametrize("rid,label", [("IX-012", "wrong_id_2"), ("IX-013", "stale_2")])
def test_ix012_ix013_the_task_stays_where_it_was(rid, label):
    refused = unary(label, error=rpc_error(-32602), rpc_method="SendMessage", t=2.15)
    stayed = unary(f"get_after_{label}", task("TASK_STATE_INPUT_REQUIRED", question(2).message), rpc_method="GetTask",
                   t=2.16)
    found = run(ix_log(question(1), question(2), after=[refused, stayed]), rid)[rid]
    assert found.outcome == Outcome.PASS and "stayed where it was" in found.message
    moved = unary(f"get_after_{label}", task("TASK_STATE_WORKING"), rpc_method="GetTask", t=2.16)
    found = run(ix_log(question(1), question(2), after=[refused, moved]), rid)[rid]
    assert found.outcome == Outcome.FAIL and "TASK_STATE_WORKING" in found.message


def test_ix013_is_not_blamed_for_a_move_made_before_it():
    wrong = unary("wrong_id_2", error=rpc_error(-32602), rpc_method="SendMessage", t=2.15)
    moved = unary("get_after_wrong_id_2", task("TASK_STATE_WORKING"), rpc_method="GetTask", t=2.16)
    stale = unary("stale_2", error=rpc_error(-32602), rpc_method="SendMessage", t=2.17)
    still = unary("get_after_stale_2", task("TASK_STATE_WORKING"), rpc_method="GetTask", t=2.18)
    found = run(ix_log(question(1), question(2), after=[wrong, moved, stale, still]), "IX-012", "IX-013")
    assert found["IX-012"].outcome == Outcome.FAIL and found["IX-013"].outcome == Outcome.PASS


def test_ix014_plain_client():
    p = question()
    del p.message["metadata"]
    found = run(ix_log(p, extension=False), "IX-014")["IX-014"]
    assert found.outcome == Outcome.PASS and found.reading == "metadata left off for that client"
    p.message["parts"] = [{"data": {"q": 1}}]
    assert outcome_of(ix_log(p, extension=False), "IX-014") == Outcome.FAIL


def test_ix014_an_approval_and_a_connection_to_a_plain_client():
    found = run(ix_log(approval(1), connection(2), extension=False), "IX-014")["IX-014"]
    assert found.outcome == Outcome.PASS and "(approval, connection)" in found.message
    wrong = connection(2)
    wrong.message["parts"] = [{"text": "Connect Linear"}]  # not Connect <app>: <reason>
    found = run(ix_log(approval(1), wrong, extension=False), "IX-014")["IX-014"]
    assert found.outcome == Outcome.FAIL and "'Connect Linear: to file'" in found.message
    data_only = approval(1)
    data_only.message["parts"] = [{"data": data_only.meta}]  # the prompt only in a data part
    assert outcome_of(ix_log(data_only, connection(2), extension=False), "IX-014") == Outcome.FAIL


def test_ix014_a_pause_first_seen_with_the_extension_is_judged_as_get_task_showed_it():
    log = ix_log(approval(1), connection(2), extension=False)
    log.notes["interactions"]["activated"] = ["subscribe_1"]  # (pause 2 first arrives on it)
    found = run(log, "IX-014")["IX-014"]
    assert found.outcome == Outcome.PASS and "(approval, connection)" in found.message
    hidden = agent_msg("pause-2", "", None)
    hidden["parts"] = [{"data": {"prompt": "Connect Linear: to file"}}]
    set_result(log, "get_pause_2", task(STATE["connection"], hidden))
    found = run(log, "IX-014")["IX-014"]
    assert found.outcome == Outcome.FAIL and found.evidence[0]["exchange"] == "get_pause_2"


# -- IDEM- -----------------------------------------------------------------------------------------------------

def _retry_log(retry_result=None, retry_error=None, reuse_error=None, moved=False, says_twice=False):
    q1, q2 = question(1), question(2)
    log = ix_log(q1, q2)
    first, _ = find(log, "answer_1").json()
    retry = unary("retry_1", first["result"] if retry_result is None and retry_error is None else retry_result,
                  error=retry_error, rpc_method="SendMessage", t=2.12, params={"message": q1.answer_message()})
    after = unary("get_after_retry_2", task("TASK_STATE_WORKING" if moved else "TASK_STATE_INPUT_REQUIRED",
                                            None if moved else q2.message), rpc_method="GetTask", t=2.13)
    extra = [retry, after]
    if reuse_error is not None:
        extra.append(unary("reuse_1", error=reuse_error, rpc_method="SendMessage", t=2.14))
    log.exchanges[log.exchanges.index(find(log, "answer_2")):0] = extra
    if says_twice:
        final = find(log, "get_final")
        value, _ = final.json()
        value["result"]["history"].append(agent_msg("say-again", q1.said))
        set_result(log, "get_final", value["result"])
    return log


def test_idem001_retry_gets_the_same_result():
    found = run(_retry_log(reuse_error=rpc_error(-32602)), "IDEM-001")["IDEM-001"]
    assert found.outcome == Outcome.PASS and found.reading == "the first answer's response again"
    assert "-32602" in found.measured["different_body"]
    other = {"task": {**task("TASK_STATE_COMPLETED"), "id": "task-9"}}
    assert outcome_of(_retry_log(retry_result=other), "IDEM-001") == Outcome.FAIL


def test_idem001_a_refused_retry_answered_once():
    # "a retry with the same id answers once": refusing the retry is one defensible reading (reported).
    found = run(_retry_log(retry_error=rpc_error(-32602)), "IDEM-001")["IDEM-001"]
    assert found.outcome == Outcome.PASS and found.reading == "a refusal" and "-32602" in found.message


def test_idem001_the_task_before_the_answer_is_a_second_answer():
    now = {"task": task("TASK_STATE_WORKING")}  # moved on since the answer: the task as it is now
    found = run(_retry_log(retry_result=now), "IDEM-001")["IDEM-001"]
    assert found.outcome == Outcome.PASS and found.reading == "the task as it is now"
    before = {"task": task("TASK_STATE_INPUT_REQUIRED", question(1).message)}  # pause 1 still open
    found = run(_retry_log(retry_result=before), "IDEM-001")["IDEM-001"]
    assert found.outcome == Outcome.FAIL and "before the answer" in found.message


def test_idem002_retry_has_no_second_effect():
    assert outcome_of(_retry_log(), "IDEM-002") == Outcome.PASS
    assert outcome_of(_retry_log(moved=True), "IDEM-002") == Outcome.FAIL
    assert outcome_of(_retry_log(says_twice=True), "IDEM-002") == Outcome.FAIL


def _twin_log(twin_error=None, second_said=None):
    q1, q2 = question(1, value="eu-west"), question(2, value="b", said=second_said)
    log = ix_log(q1, q2)
    first, _ = find(log, "answer_1").json()
    twin = unary("answer_1_twin", None if twin_error else first["result"], error=twin_error,
                 rpc_method="SendMessage", t=1.2, params={"message": q1.answer_message()})
    log.exchanges.insert(log.exchanges.index(find(log, "answer_1")) + 1, twin)
    return log


def test_idem003_concurrent_answers_have_one_effect():
    found = run(_twin_log(), "IDEM-003")["IDEM-003"]
    assert found.outcome == Outcome.PASS and found.reading == "both answered with a result"
    assert "refused" in run(_twin_log(twin_error=rpc_error(-32602)), "IDEM-003")["IDEM-003"].reading
    assert outcome_of(_twin_log(second_said='"eu-west"'), "IDEM-003") == Outcome.FAIL


def _concurrent_answers_log(twin_moved: bool = True):
    """Pause 1 answered twice at the same moment by SendStreamingMessage (ix-concurrent), the subscription closed
    at the pause. The server took answer_1_twin as the answer (it reached it first) and answer_1 as its retry,
    whose stream shows the task as the answer left it, at pause 2; the twin's stream carries the task on (or,
    `twin_moved` False, shows pause 2 too: no stream saw the task work again)."""
    q1, q2 = question(1, value="eu-west"), question(2, value="b")
    log = ix_log(q1, q2)
    sub = find(log, "subscribe_1")
    items = [ev.payload["result"] for ev in sub.data_events()]  # the Task at pause 1, working, said, pause 2
    log.exchanges[log.exchanges.index(sub)] = sse("subscribe_1", items[:1], t=1.1, rpc_method="SubscribeToTask")
    answer = find(log, "answer_1")
    params = answer.request_body["params"]
    at_pause_2 = {"task": task(STATE["question"], q2.message)}
    log.exchanges[log.exchanges.index(answer)] = sse("answer_1", [at_pause_2], t=1.25, params=params)
    moved = [{"task": task("TASK_STATE_WORKING")}, *items[2:]] if twin_moved else [at_pause_2]
    log.exchanges.insert(log.exchanges.index(find(log, "answer_1")) + 1, sse("answer_1_twin", moved, t=1.2,
                                                                             params=params))
    return log


def test_int002_and_int003_read_whichever_of_two_identical_answers_the_server_took():
    """Seen beside a heavy job: the reference took the twin first, and answer_1's stream (its retry) opened at
    the next pause; A2A-INT-002 and -003 read answer_1 alone and blamed the reference."""
    found = run(_concurrent_answers_log(), "A2A-INT-002", "A2A-INT-003")
    assert {r: f.outcome for r, f in found.items()} == {"A2A-INT-002": Outcome.PASS, "A2A-INT-003": Outcome.PASS}
    found = run(_concurrent_answers_log(twin_moved=False), "A2A-INT-002", "A2A-INT-003")
    assert {r: f.outcome for r, f in found.items()} == {"A2A-INT-002": Outcome.FAIL, "A2A-INT-003": Outcome.FAIL}
    assert "after answer 1: TASK_STATE_INPUT_REQUIRED" in found["A2A-INT-003"].message


def test_int002_accepts_a_streaming_answer_that_carries_the_task_on():
    log = ix_log(question())
    sub = find(log, "subscribe_1")
    items = [ev.payload["result"] for ev in sub.data_events()]
    log.exchanges[log.exchanges.index(sub)] = sse("subscribe_1", items[:1], t=1.1, rpc_method="SubscribeToTask")
    answer = find(log, "answer_1")
    log.exchanges[log.exchanges.index(answer)] = sse("answer_1", items, t=1.2,
                                                     params=answer.request_body["params"])
    found = run(log, "A2A-INT-002", "A2A-INT-003", "IX-008")
    assert {r: f.outcome for r, f in found.items()} == {r: Outcome.PASS for r in found} and len(found) == 3
