"""Every stream is judged (docs/streams.md): the stream rules read every task stream by what it is, an
interrupted-state scenario's streams must be valid task streams (A2A-INT-006), every open stream carries
the task on (A2A-INT-007), the reads agree with the streams (A2A-INT-008), and the new stream
requirements (A2A-STREAM-016 timestamps, -017 the 0.3 final member, -018 one Task first), each both ways
on hand-made logs; then the reference, and one fault, end to end."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
from logs import (
    artifact_update,
    frame_log,
    rpc_error,
    sse,
    status_update,
    stream_task,
    task,
    text_msg,
    unary,
)
from test_interactions_rules import Pause, find, ix_log, question
from test_interactions_rules import task as ix_task

from streamcert.catalogue import Scenario, load_catalogue, load_scenario
from streamcert.framelog import END_CLOSED, END_TIME_LIMIT
from streamcert.outcomes import Outcome
from streamcert.rules import RuleContext, judge
from streamcert.rules.a2a.everystream import STREAM_RULES
from streamcert.rules.common.streamview import StreamFrames, TaskStream

P, F, NS = Outcome.PASS, Outcome.FAIL, Outcome.NON_STRICT
SUB, WORK, DONE, ASK = "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_INPUT_REQUIRED"
SEND, SUBSCRIBE = "SendStreamingMessage", "SubscribeToTask"
TS = "2026-10-06T09:00:0{}.000Z"  # TS.format(n): n seconds after 09:00:00


def found(rid: str, log, scenario: str | None = None) -> list:
    ctx = RuleContext(scenario=load_scenario(scenario)) if scenario else RuleContext()
    return [f for f in judge(log, [rid], ctx) if f.req_id == rid]


def outcomes(rid: str, log) -> set[Outcome]:
    return {f.outcome for f in found(rid, log)}


def one(rid: str, log, outcome: Outcome, *words: str):
    got = [f for f in found(rid, log) if f.outcome != P] or found(rid, log)
    assert got and got[0].outcome == outcome, [(f.outcome, f.message) for f in found(rid, log)]
    for word in words:
        assert word in got[0].message, (word, got[0].message)
    return got[0]


def answer_params(task_id: str = "task-1") -> dict:
    return {"message": {"messageId": "a-1", "role": "ROLE_USER", "taskId": task_id, "parts": [{"text": "yes"}]}}


def test_the_catalogue_names_the_new_requirements():
    catalogue = load_catalogue()
    for rid, level in (("A2A-STREAM-016", "MUST"), ("A2A-STREAM-017", "SHOULD"), ("A2A-STREAM-018", "MUST"),
                       ("A2A-INT-006", "MUST"), ("A2A-INT-007", "MUST"), ("A2A-INT-008", "MUST")):
        assert catalogue[rid].level == level
    assert set(STREAM_RULES) <= set(catalogue)
    for sid in ("ix-question", "ix-question-plain", "ix-connection", "ix-truncation"):
        assert {"A2A-INT-006", "A2A-INT-007", "A2A-INT-008"} <= set(load_scenario(sid).requirements)


# -- by what a stream is, not by its label ---------------------------------------------------------------

def test_every_task_stream_is_read_whatever_its_label():
    log = frame_log(
        sse("stream", [stream_task(state=SUB), status_update(ASK)]),
        sse("watch", [stream_task(state=ASK)], rpc_method=SUBSCRIBE, t=1.0),
        sse("answer_1", [status_update(WORK), status_update(DONE)], params=answer_params(), t=2.0),
        sse("quick", [{"message": text_msg("hello")}], t=3.0),  # a message-only answer: no task stream
        sse("refused", [{"jsonrpc": "2.0", "id": 1, "error": rpc_error(-32004)}], rpc_method=SUBSCRIBE, t=4.0),
        unary("get_task", task(state=DONE), rpc_method="GetTask", t=5.0),
    )
    assert [s.label for s in StreamFrames.of(log, RuleContext()).streams] == ["stream", "watch", "answer_1"]
    f = one("A2A-STREAM-001", log, F, "answer_1 (a stream continuing task task-1)", "frame 1 is statusUpdate")
    assert f.evidence[0]["exchange"] == "answer_1"


# -- A2A-STREAM-018: the Task first only; -008: a final snapshot ------------------------------------------

def test_a_final_task_snapshot_before_the_close_passes_both_rules():
    log = frame_log(sse("stream", [stream_task(state=SUB), status_update(WORK), status_update(DONE),
                                   stream_task(state=DONE)]))
    for rid in ("A2A-STREAM-008", "A2A-STREAM-018"):
        assert one(rid, log, P).reading == "final Task snapshot before the close"


def test_a_task_in_the_middle_fails_a_task_stream_and_is_graded_on_a_subscription():
    items = [stream_task(state=SUB), status_update(WORK), stream_task(state=WORK), status_update(DONE)]
    one("A2A-STREAM-018", frame_log(sse("stream", items)), F, "frame 3")
    paused = [stream_task(state=ASK), status_update(WORK), stream_task(state=WORK), status_update(DONE)]
    f = one("A2A-STREAM-018", frame_log(sse("subscribe_1", paused, rpc_method=SUBSCRIBE)), NS, "frame 3")
    assert f.reading == "a Task snapshot in the middle of a subscription"
    after_terminal = [stream_task(state=SUB), status_update(DONE), stream_task(state=WORK)]  # not a snapshot
    one("A2A-STREAM-008", frame_log(sse("stream", after_terminal)), F, "after the terminal")


# -- A2A-STREAM-006: a subscription joining mid-artifact ------------------------------------------------

def joined_mid_artifact(aid: str = "a1", held: str = "a1") -> list:
    """A subscription whose Task holds artifact `held` begun ("Hel"), then a chunk appending to `aid`."""
    begun = {"artifactId": held, "name": "out", "parts": [{"text": "Hel"}]}
    return [stream_task(state=WORK, artifacts=[begun]), artifact_update(aid, text="lo", append=True, last=True),
            status_update(DONE)]


def test_a_subscription_joining_mid_artifact_extends_what_its_task_holds():
    log = frame_log(sse("subscribe", joined_mid_artifact(), rpc_method=SUBSCRIBE, params={"id": "task-1"}))
    for rid in ("A2A-STREAM-006", "A2A-STREAM-007"):
        one(rid, log, P)
    for rid in ("A2A-INT-006", "PLAN-018"):  # the profiles' "valid task streams" read the same rule
        assert outcomes(rid, log) == {P}, found(rid, log)
    built = TaskStream.from_exchange(log.exchanges[0]).artifacts["a1"]
    assert (built.text, built.name, built.chunks, built.last_chunk) == ("Hello", "out", 1, True)
    # a continuation (a streamed answer) is read the same way
    answer = frame_log(sse("answer_1", joined_mid_artifact(), params=answer_params()))
    one("A2A-STREAM-006", answer, P)


def test_an_append_to_an_artifact_neither_the_task_nor_a_chunk_started_fails():
    log = frame_log(sse("subscribe", joined_mid_artifact(aid="a2"), rpc_method=SUBSCRIBE, params={"id": "task-1"}))
    f = one("A2A-STREAM-006", log, F, "'a2'", "neither the stream's Task nor an earlier chunk")
    assert f.evidence[0]["frame"] == 2
    assert outcomes("A2A-INT-006", log) == {F}


# -- A2A-STREAM-016: the terminal status stamped last -----------------------------------------------------

def stamped(*pairs, label="stream", rpc_method=SEND, t=0.0):
    items = [stream_task(state=pairs[0][0], ts=pairs[0][1])]
    items += [status_update(state, ts=ts) for state, ts in pairs[1:]]
    return sse(label, items, rpc_method=rpc_method, t=t)


def test_016_passes_statuses_in_any_arrival_order_when_the_terminal_is_latest():
    # WORKING at :03 arrives before WORKING at :02 (out of order), the terminal at :04 is the latest: PASS
    log = frame_log(stamped((SUB, TS.format(1)), (WORK, TS.format(3)), (WORK, TS.format(2)), (DONE, TS.format(4))),
                    unary("get_task", task(state=DONE, ts=TS.format(4)), rpc_method="GetTask", t=5.0))
    assert one("A2A-STREAM-016", log, P, "1 terminal", "1 GetTask")
    equal = frame_log(stamped((SUB, TS.format(1)), (WORK, TS.format(2)), (DONE, TS.format(2))))
    one("A2A-STREAM-016", equal, P)
    unstamped = frame_log(sse("stream", [stream_task(state=SUB), status_update(DONE)]))
    untested = found("A2A-STREAM-016", unstamped)  # nothing stamped: nothing to compare, and it says so
    assert [(f.outcome, f.message) for f in untested] == [(Outcome.NOT_TESTED, "no terminal status streamed, nor "
                                                           "GetTask read after the streams, carried a timestamp")]


def test_016_fails_a_terminal_status_stamped_before_what_came_before_it():
    log = frame_log(stamped((SUB, TS.format(1)), (WORK, TS.format(3)), (DONE, TS.format(2))))
    f = one("A2A-STREAM-016", log, F, "the terminal TASK_STATE_COMPLETED is stamped 2026-10-06T09:00:02.000Z",
            "TASK_STATE_WORKING", "09:00:03.000Z")
    assert len(f.evidence) == 2


def test_016_reads_every_stream_of_the_task_and_getask_after_them():
    first = stamped((SUB, TS.format(1)), (ASK, TS.format(5)))
    answer = sse("answer_1", [stream_task(state=WORK, ts=TS.format(6)), status_update(DONE, ts=TS.format(4))],
                 params=answer_params(), t=1.0)
    one("A2A-STREAM-016", frame_log(first, answer), F, "earlier than the TASK_STATE_WORKING")
    fine = sse("answer_1", [stream_task(state=WORK, ts=TS.format(6)), status_update(DONE, ts=TS.format(7))],
               params=answer_params(), t=1.0)
    late_read = unary("get_final", task(state=DONE, ts=TS.format(3)), rpc_method="GetTask", t=9.0)
    one("A2A-STREAM-016", frame_log(first, fine, late_read), F, "GetTask's TASK_STATE_COMPLETED after the streams")
    during = unary("get_pause_1", task(state=ASK, ts=TS.format(1)), rpc_method="GetTask", t=0.5)
    one("A2A-STREAM-016", frame_log(first, during, fine), P)  # a read during the streams is not compared


def test_016_leaves_what_follows_a_terminal_status_to_008():
    # agent-framework's cancel: each stream carries CANCELED twice, the second stamped later; the subscription's
    # duplicate reaches the client, on its own connection, before the stream's first CANCELED. The duplicate is
    # A2A-STREAM-008's finding; the terminal status is stamped no earlier than anything before the task's end.
    CAN = "TASK_STATE_CANCELED"
    stream = stamped((SUB, TS.format(1)), (WORK, TS.format(1)), (CAN, TS.format(2)), (CAN, TS.format(3)), t=0.5)
    watch = stamped((WORK, TS.format(1)), (CAN, TS.format(2)), (CAN, TS.format(3)), label="subscribe",
                    rpc_method=SUBSCRIBE, t=0.4)
    duplicated = frame_log(stream, watch)
    assert one("A2A-STREAM-016", duplicated, P, "2 terminal")
    assert outcomes("A2A-STREAM-008", duplicated) == {F}
    # a status before the subscription's terminal, stamped later than the stream's terminal, is still compared
    late = stamped((WORK, TS.format(1)), (WORK, TS.format(4)), label="subscribe", rpc_method=SUBSCRIBE, t=0.4)
    one("A2A-STREAM-016", frame_log(stream, late), F, "the terminal TASK_STATE_CANCELED is stamped "
        "2026-10-06T09:00:02.000Z", "earlier than the TASK_STATE_WORKING streamed before it at 2026-10-06T09:00:04")


# -- A2A-STREAM-017: the 0.3 final member -----------------------------------------------------------------

def test_017_reports_the_final_member_without_failing():
    items = [stream_task(state=SUB), status_update(WORK), status_update(DONE)]
    one("A2A-STREAM-017", frame_log(sse("stream", items)), P, "none with a final member")
    flagged = copy.deepcopy(items)
    flagged[1]["statusUpdate"]["final"] = False
    flagged[2]["statusUpdate"]["final"] = True
    f = one("A2A-STREAM-017", frame_log(sse("stream", flagged)), NS, "2 status update(s)", "final: False")
    assert f.reading == "0.3 final member sent (1.0 clients ignore it)"


# -- TaskStream.merged: the task's streams read together -----------------------------------------------

def test_merged_streams_join_chunks_across_streams_and_count_copies_once():
    a = sse("stream", [stream_task(state=SUB), artifact_update("log", text="one ", name="log.txt"),
                       status_update(ASK)])
    b = sse("subscribe_1", [stream_task(state=ASK), artifact_update("log", text="two", append=True, last=True),
                            status_update(DONE, "done")], rpc_method=SUBSCRIBE, t=1.0, rpc_id=2)
    c = sse("answer_1", [artifact_update("log", text="two", append=True, last=True), status_update(DONE, "done")],
            params=answer_params(), t=1.0, rpc_id=3)  # the same events, in envelopes of other ids
    merged = TaskStream.merged([TaskStream.from_exchange(x) for x in (a, b, c)])
    assert merged.artifacts["log"].text == "one two" and merged.artifacts["log"].chunks == 2
    assert merged.last_state == DONE and merged.evidence(merged.last_status_event)["exchange"] in ("subscribe_1",
                                                                                                     "answer_1")


# -- A2A-INT-006: an interrupted-state scenario's streams are valid task streams --------------------------

def ix_run(log, *ids):
    """Each requirement's decisive finding: its first that is not a PASS, else its first."""
    scenario = Scenario(id="t", profile="interactions", title="", requirements=ids, script=log.script)
    out: dict = {}
    for f in judge(log, ids, RuleContext(scenario=scenario)):
        if f.req_id not in out or (out[f.req_id].outcome == P and f.outcome != P):
            out[f.req_id] = f
    return out


@pytest.mark.parametrize("d3", ["close", "open"])
def test_006_007_008_pass_a_correct_log(d3):
    got = ix_run(ix_log(question(), question(2, "green")), "A2A-INT-006", "A2A-INT-007", "A2A-INT-008")
    assert {r: f.outcome for r, f in got.items()} == {r: P for r in got} and len(got) == 3


def streamed_answer(log, n: int, items: list) -> None:
    """Replace answer n (a SendMessage) with a SendStreamingMessage whose stream carries `items`."""
    old = find(log, f"answer_{n}")
    log.exchanges[log.exchanges.index(old)] = sse(f"answer_{n}", items, t=old.t_sent,
                                                  params=old.request_body["params"])


def test_006_fails_an_answer_stream_that_does_not_begin_with_the_task():
    log = ix_log(question())
    sub = find(log, "subscribe_1")
    rest = [ev.payload["result"] for ev in sub.data_events()][1:]
    log.exchanges[log.exchanges.index(sub)] = sse("subscribe_1", [{"task": ix_task(ASK)}], t=1.1,
                                                  rpc_method=SUBSCRIBE)
    streamed_answer(log, 1, rest)  # the continuation begins with the WORKING statusUpdate
    f = ix_run(log, "A2A-INT-006")["A2A-INT-006"]
    assert f.outcome == F and "A2A-STREAM-001 (A task stream opens with the Task object" in f.message
    assert "answer_1 (a stream continuing task" in f.message and f.evidence[0]["exchange"] == "answer_1"
    streamed_answer(log, 1, [{"task": ix_task(WORK)}] + rest)
    assert ix_run(log, "A2A-INT-006")["A2A-INT-006"].outcome == P


def test_006_judged_alone_in_a_fresh_process_runs_the_stream_rules_it_names():
    """A run of the interactions profile alone (or a `check`) imports only the rule modules of what it judges: the
    stream rules A2A-INT-006 runs must be loaded by it, or a broken stream would pass (a stream rule not
    registered gives no finding). Found by the meta-test once its runs played in processes of their own."""
    here = Path(__file__).resolve().parent
    script = f"""
import sys
sys.path[:0] = [{str(here)!r}, {str(here.parent / "common")!r}]
from test_streams_everywhere import ASK, find, ix_log, ix_run, ix_task, question, sse, streamed_answer
assert "streamcert.rules.a2a.stream" not in sys.modules, "the stream rules were loaded before the judgement"
log = ix_log(question())
sub = find(log, "subscribe_1")
rest = [ev.payload["result"] for ev in sub.data_events()][1:]
log.exchanges[log.exchanges.index(sub)] = sse("subscribe_1", [{{"task": ix_task(ASK)}}], t=1.1,
                                              rpc_method="SubscribeToTask")
streamed_answer(log, 1, rest)
f = ix_run(log, "A2A-INT-006")["A2A-INT-006"]
print(f.outcome.value, f.message)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("FAIL") and "A2A-STREAM-001" in done.stdout, done.stdout


def test_006_fails_a_subscription_at_a_pause_that_is_refused_or_leaves_out_the_task():
    log = ix_log(question())
    sub = find(log, "subscribe_1")
    items = [ev.payload["result"] for ev in sub.data_events()]
    log.exchanges[log.exchanges.index(sub)] = sse("subscribe_1", items[1:], t=1.1, rpc_method=SUBSCRIBE)
    f = ix_run(log, "A2A-INT-006")["A2A-INT-006"]
    assert f.outcome == F and "A2A-STREAM-001" in f.message and "A2A-TASK-011" in f.message
    refused = unary("subscribe_1", error=rpc_error(-32603, "busy"), rpc_method=SUBSCRIBE, t=1.1,
                    params={"id": "task-1"})
    log.exchanges[log.exchanges.index(find(log, "subscribe_1"))] = refused
    f = ix_run(log, "A2A-INT-006")["A2A-INT-006"]
    assert f.outcome == F and "A2A-TASK-011" in f.message and "application/json instead of an event stream" in f.message


def test_006_keeps_to_streams_and_reports_weaker_readings_as_its_own_outcome():
    log = ix_log(question())
    # a unary answer with the wrong id is WIRE-003's, not a stream's
    bad_id = unary("get_pause_1", ix_task(ASK, question().message), rpc_method="GetTask", rpc_id=99, t=1.0)
    bad_id.request_body["id"] = 1
    log.exchanges[log.exchanges.index(find(log, "get_pause_1"))] = bad_id
    assert ix_run(log, "A2A-INT-006")["A2A-INT-006"].outcome == P
    first = find(log, "stream")
    items = [ev.payload["result"] for ev in first.data_events()]
    items[1]["statusUpdate"]["final"] = False
    log.exchanges[0] = sse("stream", items)
    f = ix_run(log, "A2A-INT-006")["A2A-INT-006"]
    assert f.outcome == NS and "A2A-STREAM-017: 0.3 final member sent" in (f.reading or "")
    assert "weaker reading(s): A2A-STREAM-017" in f.message


def test_006_reports_a_task_in_the_middle_of_a_subscription_visibly():
    log = ix_log(question())
    sub = find(log, "subscribe_1")
    items = [ev.payload["result"] for ev in sub.data_events()]
    items.insert(2, {"task": ix_task(WORK)})  # the Task again after the first update
    log.exchanges[log.exchanges.index(sub)] = sse("subscribe_1", items, t=sub.t_sent, rpc_method=SUBSCRIBE)
    f = ix_run(log, "A2A-INT-006")["A2A-INT-006"]
    assert f.outcome == NS and f.reading == "A2A-STREAM-018: a Task snapshot in the middle of a subscription"
    assert "subscribe_1: SubscribeToTask sent the Task again in the middle of the stream (frame 3)" in f.message
    assert f.evidence and f.evidence[0]["exchange"] == "subscribe_1"
    assert ix_run(ix_log(question()), "A2A-INT-006")["A2A-INT-006"].outcome == P


def twin_answered_as_it_is(same_id: bool = True):
    """A question answered by a streamed answer and its twin (the same request at the same moment, streamed
    too), the twin answered with the Task as it is (still working) and closed."""
    log = ix_log(question())
    sub = find(log, "subscribe_1")
    rest = [ev.payload["result"] for ev in sub.data_events()][1:]
    log.exchanges[log.exchanges.index(sub)] = sse("subscribe_1", [{"task": ix_task(ASK)}], t=1.1,
                                                  rpc_method=SUBSCRIBE)
    streamed_answer(log, 1, [{"task": ix_task(WORK)}] + rest)
    params = copy.deepcopy(find(log, "answer_1").request_body["params"])
    if not same_id:
        params["message"]["messageId"] = "another-message"
    twin = sse("answer_1_twin", [{"task": ix_task(WORK)}], t=find(log, "answer_1").t_sent + 0.001, params=params)
    log.exchanges.insert(log.exchanges.index(find(log, "answer_1")) + 1, twin)
    return log


def test_a_repeated_message_streamed_is_answered_once_like_by_send_message():
    log = twin_answered_as_it_is()
    got = ix_run(log, "A2A-STREAM-009", "A2A-INT-006", "A2A-INT-007", "IDEM-003")
    assert {rid: f.outcome for rid, f in got.items()} == dict.fromkeys(got, P) and len(got) == 4
    twin = [f for f in found("A2A-STREAM-009", log) if "answer_1_twin" in f.message]
    assert twin and twin[0].reading == "a repeated messageId answered once: the Task as it is, then the close"
    assert "repeats the messageId of answer_1" in twin[0].message
    assert got["A2A-INT-007"].reading == twin[0].reading
    # the same stream for a message that repeats nothing ends a task stream early
    other = twin_answered_as_it_is(same_id=False)
    one("A2A-STREAM-009", other, F, "answer_1_twin", "without a terminal state")
    assert ix_run(other, "A2A-INT-007")["A2A-INT-007"].outcome == F
    # a repeat whose stream goes on past the Task is a task stream like any other: it must reach the end
    log = twin_answered_as_it_is()
    i = log.exchanges.index(find(log, "answer_1_twin"))
    log.exchanges[i] = sse("answer_1_twin", [{"task": ix_task(WORK)}, {"statusUpdate": {
        "taskId": "task-1", "contextId": "ctx-1", "status": {"state": WORK}}}], t=log.exchanges[i].t_sent,
        params=log.exchanges[i].request_body["params"])
    one("A2A-STREAM-009", log, F, "answer_1_twin")


def test_int003_reads_the_answers_stream_not_a_duplicate_that_opened_later():
    # Two identical answers streamed at once: the twin's stream may open on the task as the first answer left
    # it (already at the next pause); the answer's own stream opens with the Task in WORKING.
    log = ix_log(question(), question(2, "green"))
    sub = find(log, "subscribe_1")
    items = [ev.payload["result"] for ev in sub.data_events()]
    log.exchanges[log.exchanges.index(sub)] = sse("subscribe_1", items[:1], t=1.1, rpc_method=SUBSCRIBE)
    later = {"task": ix_task(ASK, question(2, "green").message)}
    twin = sse("answer_1_twin", [later], t=1.15, params=find(log, "answer_1").request_body["params"])
    log.exchanges.insert(log.exchanges.index(find(log, "answer_1")), twin)
    streamed_answer(log, 1, [{"task": ix_task(WORK)}] + items[2:])
    assert ix_run(log, "A2A-INT-003")["A2A-INT-003"].outcome == P


# -- A2A-INT-007: every open stream carries the task on ---------------------------------------------------

def pause_log(*exchanges):
    return frame_log(*exchanges, script={"version": 1, "name": "t", "steps": [{"ask": "Q?"}, {"finish": "done"}]},
                     notes={"interactions": {"extension": False, "pauses": []}})


ASKED = {"statusUpdate": {"taskId": "task-1", "contextId": "ctx-1",
                          "status": {"state": ASK, "message": text_msg("Q?", message_id="q"), "timestamp": TS.format(1)}}}
MOVED = status_update(WORK, ts=TS.format(2))
ENDED = {"statusUpdate": {"taskId": "task-1", "contextId": "ctx-1",
                          "status": {"state": DONE, "message": text_msg("done", message_id="d"), "timestamp": TS.format(3)}}}


def answer_sent(t: float, label: str = "answer_1", result=None, **kw):
    return unary(label, result if result is not None else {"task": task(state=DONE)}, rpc_method="SendMessage",
                 params=answer_params(), t=t, **kw)


def test_007_accepts_both_readings_of_d3():
    closes = pause_log(sse("stream", [stream_task(state=SUB), ASKED], t=0.0),
                       sse("answer_1", [stream_task(state=WORK), ENDED], params=answer_params(), t=1.0))
    assert one("A2A-INT-007", closes, P, "stream (closed at TASK_STATE_INPUT_REQUIRED)")
    stays = pause_log(sse("stream", [stream_task(state=SUB), ASKED, MOVED, ENDED], t=0.0, dt=0.5),
                      answer_sent(1.2))
    one("A2A-INT-007", stays, P, "stream (closed at TASK_STATE_COMPLETED)")


def test_007_fails_a_stream_a_second_message_ended_before_a_state_at_rest():
    broken = sse("answer_1", [stream_task(state=WORK)], params=answer_params(), t=1.0, dt=0.5)
    retry = answer_sent(1.2, label="retry_1")
    log = pause_log(sse("stream", [stream_task(state=SUB), ASKED]), broken, retry)
    one("A2A-INT-007", log, F, "answer_1 closed at TASK_STATE_WORKING", "after retry_1 (SendMessage)")


def test_007_fails_a_stream_that_stays_open_and_carries_nothing_after_the_answer():
    silent = sse("stream", [stream_task(state=SUB), ASKED], t=0.0, end=END_TIME_LIMIT)
    silent.t_end = 6.0
    log = pause_log(silent, answer_sent(1.0), unary("get_final", task(state=DONE), rpc_method="GetTask", t=7.0))
    one("A2A-INT-007", log, F, "stream stayed open at TASK_STATE_INPUT_REQUIRED after answer_1", "was cut")
    closes_at_end = sse("stream", [stream_task(state=SUB), ASKED], t=0.0, end=END_CLOSED)
    closes_at_end.t_end = 3.0  # open past the answer, closed when the task ended: not the close reading either
    log = pause_log(closes_at_end, answer_sent(1.0))
    one("A2A-INT-007", log, F, "carried nothing more until it closed")


def test_007_fails_a_stream_that_misses_an_event_another_stream_carried():
    first = sse("stream", [stream_task(state=SUB), ASKED, ENDED], t=0.0, dt=1.0)  # open all along, no WORKING
    paused = {"task": {"id": "task-1", "contextId": "ctx-1", "status": ASKED["statusUpdate"]["status"]}}
    sub = sse("subscribe_1", [paused, MOVED, ENDED], rpc_method=SUBSCRIBE, t=0.5, dt=0.8)
    log = pause_log(first, sub)
    one("A2A-INT-007", log, F, "stream was open when subscribe_1 carried TASK_STATE_WORKING", "never carried it")


# -- A2A-INT-008: the reads agree with the streams ---------------------------------------------------------

def test_008_compares_get_task_after_the_streams_and_list_tasks_at_each_pause():
    log = ix_log(question())
    final = find(log, "get_final")
    log.exchanges[log.exchanges.index(final)] = unary("get_final", ix_task(WORK), rpc_method="GetTask", t=50.0)
    f = ix_run(log, "A2A-INT-008")["A2A-INT-008"]
    assert f.outcome == F and "GetTask returned state 'TASK_STATE_WORKING'" in f.message
    log = ix_log(question())
    listed = find(log, "list_pause_1")
    other = Pause(1, "question", "Q", "Something else?", {"value": 1}, "", "")
    log.exchanges[log.exchanges.index(listed)] = unary("list_pause_1", {"tasks": [ix_task(ASK, other.message)]},
                                                       rpc_method="ListTasks", t=1.05)
    f = ix_run(log, "A2A-INT-008")["A2A-INT-008"]
    assert f.outcome == F and "list_pause_1: the task at pause 1 shows status message text 'Something else?'" in f.message
    log.exchanges[log.exchanges.index(find(log, "list_pause_1"))] = unary(
        "list_pause_1", {"tasks": []}, rpc_method="ListTasks", t=1.05)
    assert "does not list task task-1" in ix_run(log, "A2A-INT-008")["A2A-INT-008"].message


def test_008_compares_artifacts_built_across_the_streams():
    log = ix_log(question())
    sub = find(log, "subscribe_1")
    items = [ev.payload["result"] for ev in sub.data_events()]
    chunk = {"artifactUpdate": {"taskId": "task-1", "contextId": "ctx-1", "lastChunk": True,
                                "artifact": {"artifactId": "notes", "parts": [{"text": "deployed"}]}}}
    log.exchanges[log.exchanges.index(sub)] = sse("subscribe_1", items[:-1] + [chunk, items[-1]], t=1.1,
                                                  rpc_method=SUBSCRIBE)
    f = ix_run(log, "A2A-INT-008")["A2A-INT-008"]
    assert f.outcome == F and "artifact 'notes' was streamed" in f.message
    final = find(log, "get_final")
    value, _ = final.json()
    value["result"]["artifacts"] = [{"artifactId": "notes", "parts": [{"text": "deployed"}]}]
    log.exchanges[log.exchanges.index(final)] = unary("get_final", value["result"], rpc_method="GetTask", t=50.0)
    assert ix_run(log, "A2A-INT-008")["A2A-INT-008"].outcome == P


# -- end to end: the reference, broken and not ----------------------------------------------------------

def play(scenario: str, **server):
    from streamcert.drivers import run_scenario
    from streamcert.reference.agent.server import ReferenceServer
    from streamcert.run_options import target_of

    with ReferenceServer(**server) as srv:
        log = run_scenario(scenario, target_of({"a2a_url": srv.url, "stream_limit": 5.0}))
    s = load_scenario(scenario)
    return log, {f.req_id: f for f in judge(log, s.requirements, RuleContext(scenario=s)) if f.outcome != P}


@pytest.mark.parametrize("d3", ["close", "open"])
def test_the_reference_passes_with_answers_both_ways(d3):
    log, bad = play("ix-question-plain", d3=d3)
    assert bad == {}
    answers = {ex.label: ex.rpc_method for ex in log.exchanges if ex.label in ("answer_1", "answer_2")}
    if d3 == "open":  # a stream is open at each pause: the scenario's own choice of way
        assert answers == {"answer_1": "SendMessage", "answer_2": SEND}
    else:  # every stream closed at the pause, the subscription included: the answer's stream carries on
        assert answers == {"answer_1": SEND, "answer_2": SEND}
        assert [ev.payload["result"].keys() for ev in log.get("subscribe_1").data_events()] == [{"task"}]


def test_interactions_alone_fails_a_broken_stream():
    # status-first breaks the task stream's opening: the interactions profile's own requirement fails
    _, bad = play("ix-question", fault="status-first")
    assert bad["A2A-INT-006"].outcome == F and "A2A-STREAM-001" in bad["A2A-INT-006"].message
