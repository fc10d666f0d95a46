"""Several clients on one task (scenario multi-client, rules/a2a/multistream.py), each requirement both ways on
hand-made logs: a second message leaves every open stream (A2A-TASK-014), a stream its client closes leaves
the task and the other streams (A2A-TASK-015), a blocking SendMessage returns at rest (A2A-TASK-016), and every
answer to SendStreamingMessage is judged as a stream, a streamed answer's too (WIRE-001)."""

from __future__ import annotations

from logs import frame_log, rpc_error, sse, stream_task, text_msg, unary
from logs import task as a_task

from streamcert.catalogue import load_catalogue, load_scenario
from streamcert.framelog import END_CLIENT_STOP, END_TIME_LIMIT
from streamcert.outcomes import Outcome
from streamcert.reference.faults import FAULTS
from streamcert.rules import RuleContext, judge

P, F = Outcome.PASS, Outcome.FAIL
WORK, ASK, DONE, CANCELED = "TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED", \
    "TASK_STATE_CANCELED"
TS = "2026-10-06T09:00:0{}.000Z"
SCENARIO = load_scenario("multi-client")


def _status(state: str, text: str, n: int) -> dict:
    return {"state": state, "message": text_msg(text, message_id=f"s{n}"), "timestamp": TS.format(n)}


def _update(status: dict) -> dict:
    return {"statusUpdate": {"taskId": "task-1", "contextId": "ctx-1", "status": status}}


A, B, C = _status(WORK, "Working", 1), _status(WORK, "Still working", 2), _status(WORK, "After the message", 3)
Q, GOING, END = _status(ASK, "Which branch?", 4), _status(WORK, "Going on", 5), _status(DONE, "Written", 6)


def _task(status: dict) -> dict:
    return {"task": {"id": "task-1", "contextId": "ctx-1", "status": status}}


def message(text: str, **config) -> dict:
    params = {"message": {"messageId": f"m-{text}", "role": "ROLE_USER", "taskId": "task-1", "contextId": "ctx-1",
                          "parts": [{"text": text}]}}
    if config:
        params["configuration"] = config
    return params


def stream(items=None, **kw):
    return sse("stream", items or [stream_task(state="TASK_STATE_SUBMITTED"), _update(A), _update(B), _update(C),
                                   _update(Q)], t=0.0, dt=0.5, **kw)


def subscribe_1(items=None, **kw):
    return sse("subscribe_1", items or [_task(A), _update(B), _update(C), _update(Q)], rpc_method="SubscribeToTask",
               params={"id": "task-1"}, t=0.9, dt=0.5, **kw)


def subscribe_2():
    return sse("subscribe_2", [_task(A)], rpc_method="SubscribeToTask", params={"id": "task-1"}, t=1.0,
               end=END_CLIENT_STOP)


def follow_up(state: str = ASK, t: float = 1.2, result=None, **config):
    config = config or {"returnImmediately": False}
    return unary("follow_up", result if result is not None else {"task": a_task(state=state)},
                 rpc_method="SendMessage", params=message("a note", **config), t=t)


def answer(items=None):
    return sse("answer", items or [_task(GOING), _update(END)], params=message("main"), t=3.5)


def get_task(state: str = DONE, t: float = 4.0):
    return unary("get_task", a_task(state=state), rpc_method="GetTask", params={"id": "task-1"}, t=t)


def played(*exchanges):
    """The scenario as a client sees it under the close reading of D3, with these exchanges put in instead."""
    default = {ex.label: ex for ex in (stream(), subscribe_1(), subscribe_2(), follow_up(), answer(), get_task())}
    default.update({ex.label: ex for ex in exchanges})
    return frame_log(*default.values(), scenario="multi-client", script=SCENARIO.script)


def one(rid: str, log, outcome: Outcome, *words: str):
    got = [f for f in judge(log, [rid], RuleContext(scenario=SCENARIO)) if f.req_id == rid]
    worst = [f for f in got if f.outcome != P] or got
    assert worst and worst[0].outcome == outcome, [(f.outcome, f.message) for f in got]
    for word in words:
        assert word in worst[0].message, (word, worst[0].message)
    return worst[0]


def test_the_scenario_and_its_requirements():
    catalogue = load_catalogue()
    for rid in ("A2A-TASK-014", "A2A-TASK-015", "A2A-TASK-016"):
        assert catalogue[rid].level == "MUST" and catalogue[rid].profile == "a2a"
        assert rid in SCENARIO.requirements
        assert any(rid in fault.catches for fault in FAULTS.values()), rid
    assert "WIRE-001" in SCENARIO.requirements and "WIRE-001" in FAULTS["answer-stream-json"].catches


def test_the_scenario_as_a_correct_server_plays_it_passes():
    log = played()
    for rid, words in (("A2A-TASK-014", ("stream (closed at TASK_STATE_INPUT_REQUIRED)", "answer (closed at "
                                                                                        "TASK_STATE_COMPLETED)")),
                       ("A2A-TASK-015", ("subscribe_2 closed by the client at TASK_STATE_WORKING",
                                         "went on to TASK_STATE_COMPLETED")),
                       ("A2A-TASK-016", ("follow_up (blocking SendMessage) returned the task in "
                                         "TASK_STATE_INPUT_REQUIRED",)),
                       ("WIRE-001", ())):
        one(rid, log, P, *words)


def test_the_open_reading_of_d3_passes_too():
    whole = [_update(B), _update(C), _update(Q), _update(GOING), _update(END)]
    log = played(stream([stream_task(state="TASK_STATE_SUBMITTED"), _update(A)] + whole),
                 subscribe_1([_task(A)] + whole), answer([_task(GOING), _update(END)]))
    for rid in ("A2A-TASK-014", "A2A-TASK-015", "A2A-TASK-016"):
        one(rid, log, P)


# -- A2A-TASK-014 ------------------------------------------------------------------------------------------

def test_014_fails_the_open_streams_a_second_message_ended():
    # the official JavaScript SDK's way: a message to the working task ends the task's open stream
    log = played(stream([stream_task(state="TASK_STATE_SUBMITTED"), _update(A), _update(B)]),
                 subscribe_1([_task(A), _update(B)]), follow_up(t=1.4))
    one("A2A-TASK-014", log, F, "stream closed at TASK_STATE_WORKING", "follow_up (SendMessage) reached the task")


def test_014_fails_an_open_stream_that_misses_a_status_another_carried():
    log = played(subscribe_1([_task(A), _update(C), _update(Q)]))  # B never reaches the subscription
    one("A2A-TASK-014", log, F, "subscribe_1 was open when stream carried TASK_STATE_WORKING", "never carried it")


# -- A2A-TASK-015 ------------------------------------------------------------------------------------------

def test_015_fails_a_task_canceled_when_a_client_closed_its_stream():
    canceled = _status(CANCELED, "Canceled", 2)
    log = played(stream([stream_task(state="TASK_STATE_SUBMITTED"), _update(A), _update(canceled)]),
                 subscribe_1([_task(A), _update(canceled)]), follow_up(result={"task": a_task(state=CANCELED)}),
                 get_task(CANCELED))
    one("A2A-TASK-015", log, F, "showed the task TASK_STATE_CANCELED", "after the client closed subscribe_2",
        "no CancelTask was sent")


def test_015_leaves_a_cancel_the_run_asked_for_alone():
    canceled = _status(CANCELED, "Canceled", 2)
    cancel = unary("cancel", a_task(state=CANCELED), rpc_method="CancelTask", params={"id": "task-1"}, t=1.1)
    log = played(stream([stream_task(state="TASK_STATE_SUBMITTED"), _update(A), _update(canceled)]),
                 subscribe_1([_task(A), _update(canceled)]), follow_up(result={"task": a_task(state=CANCELED)}),
                 get_task(CANCELED), cancel)
    one("A2A-TASK-015", log, P, "went on to TASK_STATE_CANCELED")


def test_015_fails_another_stream_that_ends_with_the_closed_one():
    # stream ends at WORKING right after subscribe_2 closed, before any other request reached the task
    log = played(stream([stream_task(state="TASK_STATE_SUBMITTED"), _update(A)]), follow_up(t=2.0))
    one("A2A-TASK-015", log, F, "stream closed at TASK_STATE_WORKING", "after the client closed subscribe_2",
        "other streams open")


def test_015_leaves_a_stream_a_later_message_ended_to_014():
    log = played(stream([stream_task(state="TASK_STATE_SUBMITTED"), _update(A), _update(B)]),
                 subscribe_1([_task(A), _update(B)]), follow_up(t=1.4))
    one("A2A-TASK-015", log, P)
    one("A2A-TASK-014", log, F)


def test_015_fails_a_task_that_stood_still_after_the_close():
    still = stream([stream_task(state="TASK_STATE_SUBMITTED"), _update(A)], end=END_TIME_LIMIT)
    sub = subscribe_1([_task(A)], end=END_TIME_LIMIT)
    log = frame_log(still, sub, subscribe_2(), scenario="multi-client", script=SCENARIO.script)
    one("A2A-TASK-015", log, F, "after the client closed subscribe_2 at TASK_STATE_WORKING",
        "nothing showed the task go on")


def test_015_needs_a_stream_the_client_closed():
    log = frame_log(stream(), subscribe_1(), answer(), get_task(), scenario="multi-client")
    assert not [f for f in judge(log, ["A2A-TASK-015"]) if f.req_id == "A2A-TASK-015"]


# -- A2A-TASK-016 ------------------------------------------------------------------------------------------

def test_016_fails_a_blocking_send_that_returns_the_task_working():
    one("A2A-TASK-016", played(follow_up(WORK)), F, "follow_up (blocking SendMessage, returnImmediately false) "
                                                    "returned the task in TASK_STATE_WORKING")


def test_016_reads_an_unset_returnimmediately_as_blocking():
    send = unary("follow_up", {"task": a_task(state=WORK)}, rpc_method="SendMessage", params=message("a note"), t=1.2)
    one("A2A-TASK-016", played(send), F, "TASK_STATE_WORKING")
    one("A2A-TASK-016", played(follow_up(DONE)), P, "TASK_STATE_COMPLETED")


def test_016_leaves_what_blocking_does_not_govern_alone():
    quick = follow_up(WORK, returnImmediately=True)  # non-blocking: WORKING is what it returns
    direct = follow_up(result={"message": text_msg("noted")})  # a direct Message: returnImmediately has no effect
    refused = unary("follow_up", error=rpc_error(-32004, "busy"), rpc_method="SendMessage",
                    params=message("a note", returnImmediately=False), t=1.2)
    for send in (quick, direct, refused):
        log = frame_log(send)
        assert not [f for f in judge(log, ["A2A-TASK-016"]) if f.req_id == "A2A-TASK-016"], send.label


# -- WIRE-001: a streamed answer is judged as a stream ------------------------------------------------------

def test_wire_001_fails_a_streamed_answer_answered_as_json_while_the_other_streams_stay_open():
    whole = [_update(B), _update(C), _update(Q), _update(GOING), _update(END)]
    as_json = unary("answer", {"task": a_task(state=DONE)}, rpc_method="SendStreamingMessage",
                    params=message("main"), t=3.5)
    as_json.notes["streaming"] = True  # sent as a streaming request, answered as a unary one
    log = played(stream([stream_task(state="TASK_STATE_SUBMITTED"), _update(A)] + whole),
                 subscribe_1([_task(A)] + whole), as_json)
    one("WIRE-001", log, F, "answer (SendStreamingMessage) answered HTTP 200 with Content-Type application/json")
    for rid in ("A2A-TASK-014", "A2A-TASK-015"):  # nothing else shows it: the other streams carried the task on
        one(rid, log, P)


def test_wire_001_accepts_a_streamed_answer_refused_as_json():
    refused = unary("answer", error=rpc_error(-32004, "the task has ended"), rpc_method="SendStreamingMessage",
                    params=message("main"), t=3.5)
    refused.notes["streaming"] = True
    found = [f for f in judge(played(refused), ["WIRE-001"]) if f.req_id == "WIRE-001"]
    assert found and all(f.outcome == P for f in found), [(f.outcome, f.message) for f in found]
    assert not [f for f in found if f.message.startswith("answer")]  # a refusal is the answer's requirement's
