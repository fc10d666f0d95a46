"""A2A-TASK- and A2A-ERR- rules on hand-made frame logs: every rule both ways, plus the edges
(missing exchange → no finding, transport failure → ERROR)."""

from __future__ import annotations

import copy

import pytest
from logs import (
    artifact_update,
    broken,
    error_info,
    frame_log,
    grpc_call,
    rest,
    rpc_error,
    sse,
    status_body,
    status_update,
    stream_task,
    task,
    task_result,
    text_msg,
    unary,
)

from streamcert.catalogue import load_catalogue, load_scenario
from streamcert.framelog import END_TIME_LIMIT
from streamcert.outcomes import Outcome
from streamcert.protocols import bindings
from streamcert.rules import RuleContext
from streamcert.rules import judge as judge_all
from streamcert.rules.a2a import errors as err_rules
from streamcert.rules.a2a import task as task_rules
from streamcert.rules.a2a import task_cancel as task_cancel_rules
from streamcert.rules.a2a import task_list as task_list_rules
from streamcert.rules.common.streamview import TaskStream

P, F, E, NS = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.NON_STRICT
SUB, WORK, DONE = "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"
FAILED, CANCELED = "TASK_STATE_FAILED", "TASK_STATE_CANCELED"

RULES = {}
for _mod in (task_rules, task_list_rules, task_cancel_rules, err_rules):
    for _fn in vars(_mod).values():
        for _rid in getattr(_fn, "req_ids", ()):
            RULES.setdefault(_rid, []).append(_fn)
# A2A-TASK-014..016 (several clients on one task) are rules/a2a/multistream.py's, proven in tests/unit/test_multistream.py
TASK_IDS = [f"A2A-TASK-{n:03d}" for n in (*range(1, 14), 17, 18)]
ERR_IDS = [f"A2A-ERR-{n:03d}" for n in range(1, 18)]


def judge(rid, log, ctx=None):
    """The findings the rules give for one requirement."""
    return [f for f in judge_all(log, [rid], ctx or RuleContext()) if f.req_id == rid]


def one(rid, log, expected, ctx=None):
    found = judge(rid, log, ctx)
    assert len(found) == 1, found
    f = found[0]
    assert f.outcome == expected, f"{rid}: {f.outcome} {f.message}"
    assert f.req_id == rid
    return f


def cites(f):
    """The finding's message ends with its requirement's source from the catalogue."""
    return f.message.endswith(f"[{load_catalogue()[f.req_id].source}]")


def test_every_requirement_has_a_rule():
    assert set(RULES) == set(TASK_IDS + ERR_IDS)


# -- the seed's stream, and the task read back ------------------------------------------------------

USER = text_msg("Run the unit tests", role="ROLE_USER")
CHUNKS = ["collected 12 items\n", "tests/test_api.py ........\n", "1 failed, 11 passed in 0.42s\n"]
SUMMARY = {"passed": 11, "failed": 1}


def seed_stream(end_state=DONE, end_text="1 failed, 11 passed", **kw):
    items = [
        stream_task(state=SUB, ts="2026-10-06T09:00:01.750Z", history=[USER]),
        status_update(WORK, "Checking out 9f3c2e1"),
        artifact_update("test-log", text=CHUNKS[0], name="test-log.txt"),
        artifact_update("test-log", text=CHUNKS[1], append=True),
        artifact_update("test-log", text=CHUNKS[2], append=True, last=True),
        artifact_update("summary", data=SUMMARY, name="summary.json", last=True),
        status_update(end_state, end_text),
    ]
    return sse("stream", items, **kw)


def read_back(state=DONE, text="1 failed, 11 passed", artifacts=None, history=None, **kw):
    if artifacts is None:
        artifacts = [
            {"artifactId": "test-log", "name": "test-log.txt", "parts": [{"text": "".join(CHUNKS)}]},
            {"artifactId": "summary", "name": "summary.json",
             "parts": [{"data": SUMMARY, "mediaType": "application/json"}]},
        ]
    if history is None:
        history = [USER, text_msg("Checking out 9f3c2e1"), text_msg("1 failed, 11 passed")]
    return task(state=state, text=text, artifacts=artifacts, history=history, **kw)


def stream_log(stream=None, get=None, h0=None, h1=None):
    h = read_back()["history"]
    return frame_log(
        seed_stream() if stream is None else stream,
        unary("get_task", read_back() if get is None else get, rpc_method="GetTask", t=5.0),
        unary("get_task_h0", task(state=DONE) if h0 is None else h0, rpc_method="GetTask"),
        unary("get_task_h1", task(state=DONE, history=h[-1:]) if h1 is None else h1, rpc_method="GetTask"),
    )


def test_task_stream_reads_the_seed_stream():
    view = TaskStream.from_exchange(seed_stream())
    assert view.task["id"] == "task-1" and view.task_id == "task-1" and view.context_id == "ctx-1"
    assert [s["status"]["state"] for _, s in view.statuses] == [WORK, DONE]
    assert view.last_state == DONE and view.terminal and view.closed
    assert view.last_status_message["parts"] == [{"text": "1 failed, 11 passed"}]
    assert list(view.artifacts) == ["test-log", "summary"]
    log_art = view.artifacts["test-log"]
    assert (log_art.text, log_art.name, log_art.chunks, log_art.last_chunk) == ("".join(CHUNKS), "test-log.txt", 3, True)
    assert view.artifacts["summary"].data == [SUMMARY] and view.artifacts["summary"].text is None
    assert len(view.items) == len(view.results()) == 7 and not view.errors and not view.others


def test_task_stream_restart_error_and_junk_frames():
    ex = sse("s", [artifact_update("a", text="x"), artifact_update("a", text="y"), "not json",
                   {"jsonrpc": "2.0", "id": 1, "error": rpc_error(-32603)}])
    view = TaskStream.from_exchange(ex)
    assert view.task is None and view.task_id == "task-1"
    assert view.artifacts["a"].text == "y" and view.artifacts["a"].restarts == 1
    assert len(view.errors) == 1 and len(view.others) == 1
    assert view.last_state is None and TaskStream.from_exchange(None).items == []


def test_task_001_pass_and_fail():
    f = one("A2A-TASK-001", stream_log(), P)
    assert DONE in f.message
    f = one("A2A-TASK-001", stream_log(get=read_back(state=WORK)), F)
    assert WORK in f.message and DONE in f.message and cites(f) and f.evidence


def test_task_001_getask_error_is_a_failure_and_cut_stream_is_not_judged():
    log = stream_log()
    log.exchanges[1] = unary("get_task", error=rpc_error(-32001, "Task not found"), rpc_method="GetTask", t=5.0)
    assert "-32001" in one("A2A-TASK-001", log, F).message
    cut = seed_stream(end_state=WORK, end_text="still", end=END_TIME_LIMIT)
    assert judge("A2A-TASK-001", stream_log(stream=cut)) == []


def test_task_002_pass_fail_and_the_earlier_message_reading():
    one("A2A-TASK-002", stream_log(), P)
    f = one("A2A-TASK-002", stream_log(get=read_back(text="something else")), F)
    assert "something else" in f.message and "1 failed, 11 passed" in f.message
    # The last status carries no message: GetTask may drop it or keep the earlier one.
    quiet = seed_stream(end_text=None)
    one("A2A-TASK-002", stream_log(stream=quiet, get=read_back(text=None)), P)
    f = one("A2A-TASK-002", stream_log(stream=quiet, get=read_back(text="Checking out 9f3c2e1")), P)
    assert "any streamed status" in f.reading


def test_task_003_both_readings_pass():
    f = one("A2A-TASK-003", stream_log(), P)
    assert f.reading == "text as one joined part"
    chunked = read_back(artifacts=[
        {"artifactId": "test-log", "parts": [{"text": c} for c in CHUNKS]},
        {"artifactId": "summary", "parts": [{"data": SUMMARY}]},
    ])
    assert one("A2A-TASK-003", stream_log(get=chunked), P).reading == "text as the list of chunk parts"


@pytest.mark.parametrize("artifacts, says", [
    ([{"artifactId": "test-log", "parts": [{"text": CHUNKS[0]}]},
      {"artifactId": "summary", "parts": [{"data": SUMMARY}]}], "not the streamed chunks joined"),
    ([{"artifactId": "test-log", "parts": [{"text": "".join(CHUNKS)}]},
      {"artifactId": "summary", "parts": [{"data": {"passed": 12}}]}], "data"),
    ([{"artifactId": "test-log", "parts": [{"text": "".join(CHUNKS)}]}], "'summary'"),
    ([{"artifactId": "test-log", "parts": [{"text": "".join(CHUNKS)}]},
      {"artifactId": "summary", "parts": [{"data": SUMMARY}]},
      {"artifactId": "ghost", "parts": [{"text": "?"}]}], "never sent"),
])
def test_task_003_fails(artifacts, says):
    f = one("A2A-TASK-003", stream_log(get=read_back(artifacts=artifacts)), F)
    assert says in f.message and f.evidence


def test_task_004_pass():
    f = one("A2A-TASK-004", stream_log(), P)
    assert "historyLength" in f.message


@pytest.mark.parametrize("kw, says", [
    ({"h0": task(state=DONE, history=[USER])}, "historyLength 0"),
    ({"h1": task(state=DONE, history=[USER, USER])}, "returned 2 history messages"),
    ({"h1": task(state=DONE, history=[USER])}, "not the most recent"),
    ({"get": read_back(history=[text_msg("1 failed, 11 passed")])}, "lacks 1 message"),
])
def test_task_004_fails(kw, says):
    f = one("A2A-TASK-004", stream_log(**kw), F)
    assert says in f.message and "historyLength" in f.message


def test_task_004_a_task_still_at_work_may_have_moved_on_between_the_two_reads():
    # get_task saw the task WORKING; by get_task_h1 it had added a message: that newer one is the most recent
    later = text_msg("a message added after get_task read the task")
    working = read_back(state=WORK, history=[USER, text_msg("Checking out 9f3c2e1")])
    one("A2A-TASK-004", stream_log(get=working, h1=task(state=WORK, history=[later])), P)
    # ... but an older message than get_task's last is never the most recent one
    f = one("A2A-TASK-004", stream_log(get=working, h1=task(state=WORK, history=[USER])), F)
    assert "not the most recent" in f.message
    # ... and a terminal task adds none: a message get_task did not show is wrong then
    f = one("A2A-TASK-004", stream_log(h1=task(state=DONE, history=[later])), F)
    assert "not the most recent" in f.message


def test_task_004_empty_history_for_one_is_non_strict():
    f = one("A2A-TASK-004", stream_log(h1=task(state=DONE)), NS)
    assert "at most 1" in f.reading


# -- ListTasks ---------------------------------------------------------------------------------------

CTX = "ctx-L"
TS = {"t1": "2026-10-06T09:00:01.000Z", "t2": "2026-10-06T09:00:02.000Z", "t3": "2026-10-06T09:00:03.000Z"}
STATE = {"t1": DONE, "t2": FAILED, "t3": DONE}


def listed(tid, artifacts=False, **kw):
    extra = {"artifacts": [{"artifactId": f"out-{tid}", "parts": [{"text": f"result {tid}\n"}]}]} if artifacts else {}
    return {**task(tid, CTX, STATE[tid], ts=TS[tid], **extra), **kw}


def page(tids, token="", total=3, size=None, artifacts=False):
    return {"tasks": [listed(t, artifacts) if isinstance(t, str) else t for t in tids], "nextPageToken": token,
            "pageSize": size if size is not None else max(len(tids), 1), "totalSize": total}


def list_log(**over):
    base = {
        "list_context": page(["t3", "t2", "t1"], size=50),
        "list_artifacts": page(["t3", "t2", "t1"], size=50, artifacts=True),
        "list_page1": page(["t3", "t2"], token="p2", size=2),
        "list_page2": page(["t1"], size=2),
        "list_status": page(["t2"], total=1, size=50),
    }
    base.update(over)
    exs = [unary(f"send_{n}", task_result(tid, CTX, STATE[tid], ts=TS[tid], artifacts=listed(tid, True)["artifacts"]),
                 rpc_method="SendMessage") for n, tid in enumerate(["t1", "t2", "t3"], start=1)]
    for label, result in base.items():
        if result is not None:
            exs.append(result if not isinstance(result, dict) else unary(label, result, rpc_method="ListTasks"))
    return frame_log(*exs, scenario="list-tasks", notes={"context_id": CTX})


@pytest.mark.parametrize("rid", [f"A2A-TASK-00{n}" for n in range(5, 10)])
def test_list_rules_pass(rid):
    one(rid, list_log(), P)


SNAKE_TASK = {"id": "t1", "context_id": CTX, "status": {"state": DONE}}


@pytest.mark.parametrize("rid", ["A2A-TASK-005", "A2A-TASK-006", "A2A-TASK-007", "A2A-TASK-008", "A2A-TASK-009",
                                 "A2A-TASK-013"])
def test_lists_never_asked_say_why(rid):
    # the driver lists by the context of the tasks it made: a task without contextId stops it, and each rule says so
    snake = frame_log(unary("send_1", {"task": SNAKE_TASK}, rpc_method="SendMessage"), scenario="list-tasks")
    f = one(rid, snake, E)
    assert "ListTasks was not asked: send_1 (SendMessage) returned a task without contextId" in f.message
    assert "it carries context_id: ProtoJSON writes contextId, WIRE-010" in f.message and f.evidence
    lost = frame_log(broken("send_1", rpc_method="SendMessage"), scenario="list-tasks")
    assert "ListTasks was not asked: SendMessage (send_1) got no answer" in one(rid, lost, E).message
    assert judge(rid, frame_log(scenario="list-tasks")) == []  # the driver never got to SendMessage: nothing to say


def test_task_005_fails():
    bad = page(["t3", "t2", "t1"])
    del bad["nextPageToken"]
    assert "nextPageToken is missing" in one("A2A-TASK-005", list_log(list_context=bad), F).message
    f = one("A2A-TASK-005", list_log(list_context=page(["t3", "t2"])), F)
    assert "t1" in f.message and "not listed" in f.message
    bad = page(["t3", "t2", "t1"])
    bad["totalSize"] = "3"
    assert "totalSize is not an integer" in one("A2A-TASK-005", list_log(list_context=bad), F).message


def test_task_006_order():
    f = one("A2A-TASK-006", list_log(list_context=page(["t1", "t2", "t3"])), F)
    assert "t2" in f.message and "newest first" in f.message
    no_ts = listed("t2")
    del no_ts["status"]["timestamp"]
    f = one("A2A-TASK-006", list_log(list_context=page(["t3", no_ts, "t1"])), NS)
    assert "t2 (no timestamp)" in f.message and f.reading


def test_task_007_artifacts():
    f = one("A2A-TASK-007", list_log(list_context=page(["t3", "t2", "t1"], artifacts=True)), F)
    assert "list_context (no includeArtifacts) carries artifacts" in f.message
    f = one("A2A-TASK-007", list_log(list_artifacts=page(["t3", "t2", "t1"])), F)
    assert "includeArtifacts: true" in f.message and "out-t1" in f.message
    empty = page([listed("t3", artifacts=[]), "t2", "t1"])
    empty["tasks"][0]["artifacts"] = []
    assert "empty array" in one("A2A-TASK-007", list_log(list_context=empty), P).reading


def test_task_007_falls_back_to_the_script_for_expected_artifacts():
    log = list_log(list_artifacts=page(["t3", "t2", "t1"]))
    for ex in log.all("send_1") + log.all("send_2") + log.all("send_3"):
        ex.chunks[0].data = ex.chunks[0].data.replace(b'"artifacts"', b'"notArtifacts"')
    one("A2A-TASK-007", log, P)  # nothing to expect without the scenario
    ctx = RuleContext(scenario=load_scenario("list-tasks"))
    f = one("A2A-TASK-007", log, F, ctx)
    assert "its script (send_1) produces ['out-1']" in f.message


@pytest.mark.parametrize("over, says", [
    ({"list_page1": page(["t3", "t2", "t1"], token="p2", size=2)}, "returned 3 tasks"),
    ({"list_page2": page(["t1"], token="p3")}, "not \"\""),
    ({"list_page2": page(["t2", "t1"])}, "on both pages"),
    ({"list_page2": page(["t1"], total=5)}, "totalSize 5"),
    ({"list_page1": page(["t3", "t2"], token=""), "list_page2": None}, "do not fit a page of 2"),
    ({"list_context": page(["t3", "t2", "t1"], token="more")}, "every task on one page"),
])
def test_task_008_fails(over, says):
    f = one("A2A-TASK-008", list_log(**over), F)
    assert says in f.message and cites(f)


def test_task_008_page1_faults_show_without_page2():
    f = one("A2A-TASK-008", list_log(list_page1=page(["t3", "t2", "t1"], token="p2"), list_page2=None), F)
    assert "returned 3 tasks" in f.message


def test_task_009_fails():
    stranger = {**listed("t1"), "id": "t9", "contextId": "ctx-other"}
    f = one("A2A-TASK-009", list_log(list_context=page(["t3", "t2", "t1", stranger])), F)
    assert "another context" in f.message and "t9" in f.message
    f = one("A2A-TASK-009", list_log(list_status=page(["t3", "t2"])), F)
    assert "TASK_STATE_FAILED returned" in f.message and "t3" in f.message
    f = one("A2A-TASK-009", list_log(list_status=page([])), F)
    assert "lacks the failed task(s) ['t2']" in f.message


def after_log(tids=("t3", "t2"), pivot=TS["t2"], answer=None):
    """list_log with list_after: ListTasks of the context filtered by statusTimestampAfter `pivot`."""
    ex = unary("list_after", page(list(tids), total=len(tids)), error=answer, rpc_method="ListTasks",
               params={"contextId": CTX, "statusTimestampAfter": pivot})
    return list_log(list_after=ex)


def test_task_013_the_filter_is_inclusive():
    f = one("A2A-TASK-013", after_log(["t3", "t2"]), P)
    assert "2 task(s)" in f.message and "1 stamped exactly then" in f.message
    f = one("A2A-TASK-013", after_log(["t3"]), F)
    assert "lacks task(s) ['t2']" in f.message and "not inclusive" in f.message and cites(f) and f.evidence
    f = one("A2A-TASK-013", after_log(["t3", "t2", "t1"]), F)
    assert "stamped before it" in f.message and "t1" in f.message
    stranger = {**listed("t3"), "id": "t9"}
    assert "t9" in one("A2A-TASK-013", after_log(["t3", "t2", stranger]), F).message


def test_task_013_compares_to_the_nanosecond():
    # a filter a nanosecond after t2: t2 is before it, whatever a microsecond clock would say
    one("A2A-TASK-013", after_log(["t3"], pivot="2026-10-06T09:00:02.000000001Z"), P)
    one("A2A-TASK-013", after_log(["t3", "t2"], pivot="2026-10-06T09:00:02.000000001Z"), F)
    one("A2A-TASK-013", after_log(["t3", "t2"], pivot="2026-10-06T09:00:02.000000Z"), P)
    one("A2A-TASK-013", after_log(["t3", "t2"], pivot="2026-10-06T11:00:02+02:00"), P)


def test_task_013_a_refused_filter_fails_and_nothing_to_filter_gives_no_finding():
    f = one("A2A-TASK-013", after_log([], answer=rpc_error(-32602, "unknown field")), F)
    assert "-32602" in f.message
    assert judge("A2A-TASK-013", list_log()) == []
    no_ts = page([listed("t3"), {**listed("t2"), "status": {"state": FAILED}}, "t1"])
    # a task listed without a timestamp is not judged either way
    one("A2A-TASK-013", after_log(["t3", "t2"], pivot=TS["t3"]), F)
    log = after_log(["t3", "t2"], pivot=TS["t3"])
    log.exchanges[[e.label for e in log.exchanges].index("list_context")] = unary(
        "list_context", no_ts, rpc_method="ListTasks")
    one("A2A-TASK-013", log, P)


# -- CancelTask and SubscribeToTask ------------------------------------------------------------------

def cancel_log(main=None, sub=None, cancel=None, get=None):
    main = main or sse("stream", [stream_task(state=SUB), status_update(WORK, "Working on a long job"),
                                  status_update(CANCELED)])
    sub = sub or sse("subscribe", [stream_task(state=WORK, text="Working on a long job"), status_update(CANCELED)],
                     rpc_method="SubscribeToTask")
    exs = [main, sub, cancel or unary("cancel", task(state=CANCELED), rpc_method="CancelTask"),
           get or unary("get_task", task(state=CANCELED), rpc_method="GetTask")]
    return frame_log(*exs, scenario="cancel-subscribe")


@pytest.mark.parametrize("rid", ["A2A-TASK-010", "A2A-TASK-011", "A2A-TASK-012"])
def test_cancel_rules_pass(rid):
    one(rid, cancel_log(), P)


def test_task_010_fails():
    f = one("A2A-TASK-010", cancel_log(cancel=unary("cancel", task(state=WORK))), F)
    assert "CancelTask returned the task in state 'TASK_STATE_WORKING'" in f.message
    done = sse("stream", [stream_task(), status_update(WORK), status_update(DONE)])
    assert "ended at TASK_STATE_COMPLETED" in one("A2A-TASK-010", cancel_log(main=done), F).message
    open_ = sse("stream", [stream_task(), status_update(WORK), status_update(CANCELED)], end=END_TIME_LIMIT)
    assert "did not close" in one("A2A-TASK-010", cancel_log(main=open_), F).message
    refused = unary("cancel", error=rpc_error(-32002, "not cancelable"))
    assert "-32002" in one("A2A-TASK-010", cancel_log(cancel=refused), F).message
    accepted = unary("cancel", body=b"", status=202, rpc_method="CancelTask")
    f = one("A2A-TASK-010", cancel_log(cancel=accepted), F)
    assert "CancelTask (cancel) did not return the task: an empty body (HTTP 202)" in f.message and f.evidence
    assert "GetTask after the cancel" in one("A2A-TASK-010", cancel_log(get=unary("get_task", task(state=DONE))),
                                             F).message


def test_task_010_a_cancel_that_races_the_tasks_end_is_no_failure():
    """The task completed before CancelTask reached it: TaskNotCancelableError is the right answer (A2A §3.1.5):
    NOT_TESTED, saying so. A refusal while the task was still at work stays a FAIL."""
    done = sse("stream", [stream_task(state=SUB), status_update(WORK), status_update(DONE)], dt=0.01)  # DONE at 0.02
    refused = unary("cancel", error=rpc_error(-32002, "not cancelable"), rpc_method="CancelTask", t=0.05)
    refused.request_body["params"] = {"id": "task-1"}
    after = unary("get_task", task(state=DONE), rpc_method="GetTask", t=0.1)
    sub = sse("subscribe", [stream_task(state=DONE)], rpc_method="SubscribeToTask", t=0.1)
    f = one("A2A-TASK-010", cancel_log(main=done, sub=sub, cancel=refused, get=after), Outcome.NOT_TESTED)
    assert "ended by itself (TASK_STATE_COMPLETED" in f.message and "not exercised" in f.message
    # refused at 0.05 while the task was at work: its stream shows it working after the refusal, then done
    late = sse("stream", [stream_task(state=SUB), status_update(WORK), status_update(WORK, "still here"),
                          status_update(DONE)], dt=0.5)
    refused = copy.deepcopy(refused)
    assert "-32002" in one("A2A-TASK-010", cancel_log(main=late, sub=sub, cancel=refused, get=after), F).message
    # refused, and the task seen ended only long after the refusal (GetTask at 6 s): no sign it had ended first
    quiet = sse("stream", [stream_task(state=SUB)], end=END_TIME_LIMIT)
    working = sse("subscribe", [stream_task(state=WORK)], rpc_method="SubscribeToTask", end=END_TIME_LIMIT)
    refused = copy.deepcopy(refused)
    assert _ended_first(cancel_log(main=quiet, sub=working, cancel=refused,
                                   get=unary("get_task", task(state=DONE), t=0.5)), refused) == (0.52, DONE)
    one("A2A-TASK-010", cancel_log(main=copy.deepcopy(quiet), sub=copy.deepcopy(working), cancel=refused,
                                   get=unary("get_task", task(state=DONE), t=6.0)), F)


def _ended_first(log, cancel):
    from streamcert.rules.a2a.task_cancel import RACE_S
    from streamcert.rules.a2a.task_cancel import _ended_first as ended_first

    return ended_first(log, cancel, RACE_S)


def test_task_011_fails():
    no_task = sse("subscribe", [status_update(WORK), status_update(CANCELED)], rpc_method="SubscribeToTask")
    assert "not the Task" in one("A2A-TASK-011", cancel_log(sub=no_task), F).message
    cut = sse("subscribe", [stream_task(state=WORK), status_update(WORK)], end=END_TIME_LIMIT,
              rpc_method="SubscribeToTask")
    f = one("A2A-TASK-011", cancel_log(sub=cut), F)
    assert "not a terminal (or, per D3, interrupted) status" in f.message and "did not close" in f.message


def test_task_012_fails():
    other = sse("subscribe", [stream_task(state=WORK), status_update(CANCELED, "bye")])
    f = one("A2A-TASK-012", cancel_log(sub=other), F)
    assert "differs" in f.message and "bye" in f.message
    lonely = sse("subscribe", [stream_task(state=WORK)])
    assert "no event after its Task" in one("A2A-TASK-012", cancel_log(sub=lonely), F).message


def test_subscribe_answered_without_a_stream():
    # A refusal as application/json is a finding about what came (FAIL), never a harness fault (ERROR);
    # A2A-TASK-012 has no stream to compare and leaves it to A2A-TASK-011.
    refused = unary("subscribe", error=rpc_error(-32004, "not now"), rpc_method="SubscribeToTask",
                    params={"id": "task-1"})
    f = one("A2A-TASK-011", cancel_log(sub=refused), F)
    assert "application/json instead of an event stream" in f.message and "-32004" in f.message and f.evidence
    assert judge("A2A-TASK-012", cancel_log(sub=refused)) == []
    as_json = unary("subscribe", task(state=WORK), rpc_method="SubscribeToTask")
    assert "a result" in one("A2A-TASK-011", cancel_log(sub=as_json), F).message
    only_error = sse("subscribe", [{"jsonrpc": "2.0", "id": 1, "error": rpc_error(-32603)}],
                     rpc_method="SubscribeToTask")
    assert "only an error" in one("A2A-TASK-011", cancel_log(sub=only_error), F).message
    empty = unary("subscribe", body=b"", rpc_method="SubscribeToTask")
    # an empty body the server sent whole is an answer (not the stream): FAIL, never ERROR
    assert "an empty body (HTTP 200)" in one("A2A-TASK-011", cancel_log(sub=empty), F).message
    # -32004 for a task that ended before the request reached it (nothing shows it alive after): A2A-ERR-005's
    ended = cancel_log(sub=refused, main=sse("stream", [stream_task(state=SUB), status_update(CANCELED)]))
    ended.exchanges[1].t_sent = ended.exchanges[1].t_end = 1.0
    assert judge("A2A-TASK-011", ended) == []


def test_task_011_accepts_the_close_at_an_interrupted_state():
    # D3 on subscriptions: a SubscribeToTask opened at a pause may close after its Task (the close reading).
    paused = sse("subscribe", [stream_task(state="TASK_STATE_INPUT_REQUIRED")], rpc_method="SubscribeToTask")
    f = one("A2A-TASK-011", cancel_log(sub=paused), P)
    assert f.reading == "D3: closes at an interrupted state"
    stays = sse("subscribe", [stream_task(state="TASK_STATE_INPUT_REQUIRED")], rpc_method="SubscribeToTask",
                end=END_TIME_LIMIT)
    assert "did not close" in one("A2A-TASK-011", cancel_log(sub=stays), F).message
    ended = cancel_log()
    ended.exchanges.append(sse("subscribe_late", [], rpc_method="SubscribeToTask", t=9.0, params={"id": "task-1"}))
    assert [f.outcome for f in judge("A2A-TASK-011", ended)] == [P]  # one on an ended task is A2A-ERR-005's


def test_task_010_a_refused_cancel_is_the_finding_even_when_the_stream_is_lost():
    lost = broken("stream", "ReadTimeout: timed out")
    assert "ReadTimeout" in one("A2A-TASK-010", cancel_log(main=lost), E).message
    refused = unary("cancel", error=rpc_error(-32002, "not cancelable"))
    assert "-32002" in one("A2A-TASK-010", cancel_log(main=lost, cancel=refused), F).message


# -- errors ----------------------------------------------------------------------------------------

ERR_CASES = {  # rid: [(label, code that passes, rpc method)]
    "A2A-ERR-002": [("get_unknown", -32001, "GetTask"), ("send_unknown", -32001, "SendMessage"),
                    ("cancel_unknown", -32001, "CancelTask"), ("subscribe_unknown", -32001, "SubscribeToTask")],
    "A2A-ERR-003": [("cancel_terminal", -32002, "CancelTask")],
    "A2A-ERR-004": [("send_terminal", -32004, "SendMessage")],
    "A2A-ERR-005": [("subscribe_terminal", -32004, "SubscribeToTask")],
    "A2A-ERR-006": [("unknown_method", -32601, "tasks/frobnicate"), ("parse_error", -32700, "GetTask")],
    "A2A-ERR-007": [("invalid_params", -32602, "SendMessage")],
    "A2A-ERR-008": [("bad_version", -32009, "GetTask")],
    "A2A-ERR-013": [("push_create", -32003, "CreateTaskPushNotificationConfig"),
                    ("push_get", -32003, "GetTaskPushNotificationConfig"),
                    ("push_list", -32003, "ListTaskPushNotificationConfigs"),
                    ("push_delete", -32003, "DeleteTaskPushNotificationConfig")],
    "A2A-ERR-014": [("extended_card", -32004, "GetExtendedAgentCard")],
}


def refused(label, code, method, data=True):
    return unary(label, error=rpc_error(code, "no", error_info() if data else None), rpc_method=method)


GOOD_MESSAGE = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "refuse me"}], "contextId": "ctx-1"}
FLAWED = {"msg_no_role": {"role": None}, "msg_no_parts": {"parts": None}, "msg_empty_parts": {"parts": []},
          "msg_no_message_id": {"messageId": None}, "msg_unknown_role": {"role": "ROLE_SYSTEM"}}


def flawed(label, **answer):
    """SendMessage of a message that lacks what FLAWED[label] says (None: the member left out)."""
    msg = {k: v for k, v in {**GOOD_MESSAGE, **FLAWED[label]}.items() if v is not None}
    answer = answer or {"error": rpc_error(-32602, "invalid", error_info("INVALID_PARAMS"))}
    return unary(label, rpc_method="SendMessage", params={"message": msg}, **answer)


def errors_log(**over):
    exs = [unary("setup_done", task_result(state=DONE), rpc_method="SendMessage")]
    for label in FLAWED:
        exs.append(over.get(label) or flawed(label))
    exs.append(over.get("list_refused") or unary("list_refused", {"tasks": [task(state=DONE)], "nextPageToken": ""},
                                                 rpc_method="ListTasks"))
    for cases in ERR_CASES.values():
        for label, code, method in cases:
            exs.append(over.get(label) or refused(label, code, method))
    exs.append(over.get("patch_version") or unary("patch_version", task(state=DONE), rpc_method="GetTask"))
    exs.append(over.get("cross_context") or refused("cross_context", -32602, "SendMessage"))
    return frame_log(*exs, scenario="errors")


@pytest.mark.parametrize("rid", sorted(ERR_CASES) + ["A2A-ERR-009", "A2A-ERR-010", "A2A-ERR-011", "A2A-ERR-012"])
def test_error_rules_pass(rid):
    one(rid, errors_log(), P)


@pytest.mark.parametrize("rid, label, code, method", [
    (rid, *case) for rid, cases in ERR_CASES.items() for case in cases])
def test_error_rules_fail_on_another_code(rid, label, code, method):
    f = one(rid, errors_log(**{label: refused(label, -32603, method)}), F)
    assert "-32603 InternalError" in f.message and str(code) in f.message and f.evidence


@pytest.mark.parametrize("rid, label, method", [
    (rid, cases[0][0], cases[0][2]) for rid, cases in ERR_CASES.items()])
def test_error_rules_fail_when_accepted(rid, label, method):
    f = one(rid, errors_log(**{label: unary(label, task(state=DONE), rpc_method=method)}), F)
    assert "was accepted" in f.message


@pytest.mark.parametrize("rid, label, method", [
    ("A2A-ERR-013", "push_list", "ListTaskPushNotificationConfigs"),
    ("A2A-ERR-014", "extended_card", "GetExtendedAgentCard")])
def test_undeclared_capability_answered_as_a_missing_method_fails_on_every_binding(rid, label, method):
    """-32601, HTTP 404 without an ErrorInfo, gRPC UNIMPLEMENTED: the operation is one the agent has (§3.3.4)."""
    f = one(rid, errors_log(**{label: refused(label, -32601, method, data=False)}), F)
    assert "-32601 MethodNotFoundError" in f.message
    params = {"taskId": "t-1"} if label.startswith("push") else {}
    lacking = rest(label, method, status_body(-32601, 404), params=params, status=404)
    assert "MethodNotFoundError" in one(rid, errors_log(**{label: lacking}), F).message
    absent = grpc_call(label, method, status=("UNIMPLEMENTED", "no such method", []))
    one(rid, errors_log(**{label: absent}), F)


@pytest.mark.parametrize("rid, label, method, code", [
    ("A2A-ERR-013", "push_get", "GetTaskPushNotificationConfig", -32003),
    ("A2A-ERR-014", "extended_card", "GetExtendedAgentCard", -32004)])
def test_undeclared_capability_refused_in_each_binding_form_passes(rid, label, method, code):
    params = {"taskId": "t-1", "id": "c-1"} if label.startswith("push") else {}
    one(rid, errors_log(**{label: rest(label, method, status_body(code), params=params, status=400)}), P)
    grpc_form = grpc_call(label, method, status=("FAILED_PRECONDITION", "no", error_info(bindings.reason_of(code))))
    one(rid, errors_log(**{label: grpc_form}), P)
    # ExtendedAgentCardNotConfiguredError is the answer of an agent that declares the card
    if rid == "A2A-ERR-014":
        one(rid, errors_log(extended_card=refused("extended_card", -32007, method)), F)


UNKNOWN = "streamcertUnknownMember"
SENT_ODD = {"messageId": "m-odd", "role": "ROLE_USER", "parts": [{"text": "hi", UNKNOWN: "x"}], UNKNOWN: "x"}


def odd_log(kept_in=(), get=True, send_answer=None):
    """SendMessage of SENT_ODD, then GetTask of its task; `kept_in`: the labels whose task history echoes it."""
    def answered(label):
        copy_ = dict(SENT_ODD) if label in kept_in else {k: v for k, v in SENT_ODD.items() if k != UNKNOWN}
        if label not in kept_in:
            copy_["parts"] = [{"text": "hi"}]
        return task(state=DONE, history=[copy_])
    sent = send_answer or unary("unknown_member", {"task": answered("unknown_member")}, rpc_method="SendMessage",
                                params={"message": SENT_ODD})
    exs = [sent]
    if get:
        exs.append(unary("unknown_member_get", answered("unknown_member_get"), rpc_method="GetTask"))
    return frame_log(*exs, scenario="errors")


def test_err_015_an_unknown_member_ignored_passes_kept_is_non_strict():
    assert "ignored" in one("A2A-ERR-015", odd_log(), P).message
    f = one("A2A-ERR-015", odd_log(kept_in=("unknown_member_get",)), NS)
    assert "the member was kept, not ignored" in f.message and len(f.evidence) == 1
    one("A2A-ERR-015", odd_log(kept_in=("unknown_member",), get=False), NS)


def test_err_015_refused_or_getask_failing_is_non_strict_never_fail():
    refused_ = unary("unknown_member", error=rpc_error(-32602, "unknown field", None), rpc_method="SendMessage",
                     params={"message": SENT_ODD})
    assert "SHOULD be ignored" in one("A2A-ERR-015", odd_log(send_answer=refused_, get=False), NS).message
    log = odd_log()
    log.exchanges[1] = unary("unknown_member_get", error=rpc_error(-32603, "has no field named", None),
                             rpc_method="GetTask")
    assert "GetTask of its task did not return it" in one("A2A-ERR-015", log, NS).message


def test_err_005_error_on_the_stream_is_accepted_a_stream_is_not():
    ev = {"jsonrpc": "2.0", "id": 1, "error": rpc_error(-32004, "terminal", error_info())}
    f = one("A2A-ERR-005", errors_log(subscribe_terminal=sse("subscribe_terminal", [ev])), P)
    assert f.reading == "error as a single SSE event"
    assert one("A2A-ERR-005", errors_log(), P).reading == "error as application/json"
    streamed = sse("subscribe_terminal", [stream_task(state=DONE)])
    assert "was streamed" in one("A2A-ERR-005", errors_log(subscribe_terminal=streamed), F).message
    f = one("A2A-ERR-005", errors_log(subscribe_terminal=sse("subscribe_terminal", [ev, stream_task()])), F)
    assert "followed by 1 more event" in f.message


def test_err_006_parse_error_not_json():
    f = one("A2A-ERR-006", errors_log(parse_error=unary("parse_error", body=b"<html>oops</html>")), F)
    assert "not JSON" in f.message and "a body that is not JSON" in f.message


def test_err_007_invalid_request_is_the_other_reading():
    f = one("A2A-ERR-007", errors_log(invalid_params=refused("invalid_params", -32600, "SendMessage")), P)
    assert "-32600" in f.reading


def test_err_009_missing_details_is_non_strict():
    f = one("A2A-ERR-009", errors_log(bad_version=refused("bad_version", -32009, "GetTask", data=False)), NS)
    assert "bad_version" in f.message and "no error.data" in f.message
    wrong = unary("get_unknown", error=rpc_error(-32001, "x", error_info(domain="example.com")))
    assert "example.com" in one("A2A-ERR-009", errors_log(get_unknown=wrong), NS).message
    assert judge("A2A-ERR-009", frame_log(unary("get_task", task()))) == []


def test_err_010_any_error_passes_acceptance_fails():
    f = one("A2A-ERR-010", errors_log(cross_context=refused("cross_context", -32001, "SendMessage")), P)
    assert "-32001" in f.reading
    f = one("A2A-ERR-010", errors_log(cross_context=unary("cross_context", task_result(state=WORK))), F)
    assert "was accepted" in f.message and "another context" in f.message


def test_err_002_names_each_method_and_takes_the_error_as_one_event():
    f = one("A2A-ERR-002", errors_log(), P)
    for what in ("GetTask", "SendMessage", "CancelTask on an unknown id", "SubscribeToTask on an unknown id"):
        assert what in f.message
    assert f.reading == "error as application/json"
    ev = {"jsonrpc": "2.0", "id": 1, "error": rpc_error(-32001, "no task", error_info())}
    sub = sse("subscribe_unknown", [ev], rpc_method="SubscribeToTask")
    assert one("A2A-ERR-002", errors_log(subscribe_unknown=sub), P).reading == "error as a single SSE event"
    f = one("A2A-ERR-002", errors_log(cancel_unknown=refused("cancel_unknown", -32002, "CancelTask")), F)
    assert "CancelTask on an unknown id got error -32002 TaskNotCancelableError" in f.message
    streamed = sse("subscribe_unknown", [stream_task(state=WORK)], rpc_method="SubscribeToTask")
    assert "was streamed" in one("A2A-ERR-002", errors_log(subscribe_unknown=streamed), F).message


def test_err_009_standard_errors_need_no_details():
    bare = {label: refused(label, code, method, data=False) for label, code, method in ERR_CASES["A2A-ERR-006"]}
    bare["invalid_params"] = refused("invalid_params", -32602, "SendMessage", data=False)
    f = one("A2A-ERR-009", errors_log(**bare), P)
    assert "standard JSON-RPC error(s) not judged" in f.message
    only_standard = frame_log(*bare.values())
    assert judge("A2A-ERR-009", only_standard) == []  # no A2A-specific error: nothing to judge
    f = one("A2A-ERR-009", errors_log(**bare, get_unknown=refused("get_unknown", -32001, "GetTask", data=False)), NS)
    assert "1 of" in f.message and "get_unknown" in f.message and "unknown_method" not in f.message.split(";")[0]


def test_err_011_a_patch_number_is_served():
    assert "was served as 1.0" in one("A2A-ERR-011", errors_log(), P).message
    f = one("A2A-ERR-011", errors_log(patch_version=refused("patch_version", -32009, "GetTask")), F)
    assert "-32009 VersionNotSupportedError" in f.message and cites(f)
    f = one("A2A-ERR-011", errors_log(patch_version=unary("patch_version", {"tasks": []}, rpc_method="GetTask")), F)
    assert "did not return the task" in f.message
    assert judge("A2A-ERR-011", frame_log()) == []


def test_err_012_each_flaw_refused_and_nothing_started():
    f = one("A2A-ERR-012", errors_log(), P)
    for says in ("has no role", "has no parts", "an empty parts list", "has no messageId", "'ROLE_SYSTEM'"):
        assert says in f.message
    assert "no task started" in f.reading


@pytest.mark.parametrize("label", sorted(FLAWED))
def test_err_012_a_flawed_message_taken_or_refused_otherwise_fails(label):
    f = one("A2A-ERR-012", errors_log(**{label: flawed(label, result=task_result(state=DONE))}), F)
    assert "was accepted" in f.message and label in str(f.evidence)
    f = one("A2A-ERR-012", errors_log(**{label: flawed(label, error=rpc_error(-32600))}), F)
    assert "-32600 InvalidRequestError" in f.message and "expected -32602" in f.message


def test_err_012_a_refused_message_that_started_a_task_fails():
    started = {"tasks": [task(state=DONE), task("task-9", state=WORK)], "nextPageToken": ""}
    f = one("A2A-ERR-012", errors_log(list_refused=unary("list_refused", started, rpc_method="ListTasks")), F)
    assert "['task-9']" in f.message and "started one" in f.message
    # a ListTasks that ignores its filter lists other contexts' tasks: no refused message started those
    unfiltered = {"tasks": [task(state=DONE), task("task-9", "ctx-other", state=WORK)], "nextPageToken": ""}
    one("A2A-ERR-012", errors_log(list_refused=unary("list_refused", unfiltered, rpc_method="ListTasks")), P)
    unlisted = unary("list_refused", error=rpc_error(-32601), rpc_method="ListTasks")
    f = one("A2A-ERR-012", errors_log(list_refused=unlisted), P)
    assert "could not be seen" in f.reading and "-32601" in f.reading


def nostream_log(stream_ans=None, sub_ans=None, card_streaming=False, setup=True):
    card = {"name": "x", "capabilities": {"streaming": card_streaming}}
    exs = [unary("card_nostream", body=card)]
    if setup:
        exs.append(unary("setup_nostream", task_result(state=DONE), rpc_method="SendMessage"))
    exs.append(stream_ans or sse("stream_refused", [{"jsonrpc": "2.0", "id": 1, "error": rpc_error(-32004)}]))
    sub = sub_ans or unary("subscribe_refused", error=rpc_error(-32004), rpc_method="SubscribeToTask")
    sub.request_body = {"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask",
                        "params": {"id": "task-1" if setup else "random-id"}}
    exs.append(sub)
    return frame_log(*exs, scenario="no-streaming")


def test_err_001():
    f = one("A2A-ERR-001", nostream_log(), P)
    assert "a single SSE event" in f.reading and "application/json" in f.reading
    streamed = sse("stream_refused", [stream_task(), status_update(DONE)])
    f = one("A2A-ERR-001", nostream_log(stream_ans=streamed), F)
    assert "SendStreamingMessage was streamed (2 event(s)" in f.message and "-32004" in f.message
    not_found = unary("subscribe_refused", error=rpc_error(-32001))
    assert "-32001" in one("A2A-ERR-001", nostream_log(sub_ans=not_found), F).message
    f = one("A2A-ERR-001", nostream_log(sub_ans=copy.deepcopy(not_found), setup=False), NS)
    assert "TaskNotFoundError accepted" in f.reading
    assert judge("A2A-ERR-001", nostream_log(card_streaming=True)) == []


@pytest.mark.parametrize("card_ex", [
    unary("card_nostream", body=b"<html>not a card</html>"), unary("card_nostream", body=b"[1, 2]"),
    unary("card_nostream", body={"error": "down"}, status=503)], ids=["html", "array", "503"])
def test_err_001_never_presumes_streaming_false_of_a_card_it_could_not_read(card_ex):
    """A stream was served, but the card that would say streaming: false could not be read: nothing is
    presumed of the agent, so ERROR naming the card, not FAIL."""
    log = nostream_log(stream_ans=sse("stream_refused", [stream_task(), status_update(DONE)]))
    log.exchanges[0] = card_ex
    f = one("A2A-ERR-001", log, E)
    assert "could not be read" in f.message and "not known" in f.message


def test_err_001_a_card_silent_on_streaming_is_read_as_the_text_says():
    """'Without capabilities.streaming: true' (A2A §8): a readable card that does not state it is judged."""
    log = nostream_log(stream_ans=sse("stream_refused", [stream_task(), status_update(DONE)]))
    log.exchanges[0] = unary("card_nostream", body={"name": "x", "capabilities": {}})
    one("A2A-ERR-001", log, F)


# -- the edges: nothing to judge, and no answer ------------------------------------------------------

@pytest.mark.parametrize("rid", TASK_IDS + ERR_IDS)
def test_empty_log_gives_no_finding(rid):
    assert judge(rid, frame_log()) == []


BROKEN = {  # rid: (log builder, label to break)
    "A2A-TASK-001": (stream_log, "get_task"), "A2A-TASK-002": (stream_log, "stream"),
    "A2A-TASK-003": (stream_log, "get_task"), "A2A-TASK-004": (stream_log, "get_task_h1"),
    "A2A-TASK-005": (list_log, "list_context"), "A2A-TASK-006": (list_log, "list_context"),
    "A2A-TASK-007": (list_log, "list_artifacts"), "A2A-TASK-008": (list_log, "list_page2"),
    "A2A-TASK-009": (list_log, "list_status"), "A2A-TASK-010": (cancel_log, "cancel"),
    "A2A-TASK-011": (cancel_log, "subscribe"), "A2A-TASK-012": (cancel_log, "stream"),
    "A2A-ERR-001": (nostream_log, "stream_refused"), "A2A-ERR-002": (errors_log, "send_unknown"),
    "A2A-ERR-003": (errors_log, "cancel_terminal"), "A2A-ERR-004": (errors_log, "send_terminal"),
    "A2A-ERR-005": (errors_log, "subscribe_terminal"), "A2A-ERR-006": (errors_log, "parse_error"),
    "A2A-ERR-007": (errors_log, "invalid_params"), "A2A-ERR-008": (errors_log, "bad_version"),
    "A2A-ERR-010": (errors_log, "cross_context"), "A2A-ERR-011": (errors_log, "patch_version"),
    "A2A-ERR-012": (errors_log, "msg_no_role"), "A2A-TASK-013": (after_log, "list_after"),
    "A2A-ERR-013": (errors_log, "push_get"), "A2A-ERR-014": (errors_log, "extended_card"),
    "A2A-ERR-015": (odd_log, "unknown_member_get"),
}


@pytest.mark.parametrize("rid", sorted(BROKEN))
def test_transport_failure_gives_error(rid):
    build, label = BROKEN[rid]
    log = build()
    i = next(i for i, ex in enumerate(log.exchanges) if ex.label == label)
    old = log.exchanges[i]
    log.exchanges[i] = broken(label, "ReadTimeout: timed out", rpc_method=old.rpc_method)
    log.exchanges[i].t_sent = old.t_sent
    f = one(rid, log, E)
    assert "ReadTimeout" in f.message and label in f.message


def test_unary_body_cut_at_the_time_limit_is_no_answer():
    log = stream_log()
    log.exchanges[1].end, log.exchanges[1].chunks[0].data = END_TIME_LIMIT, b'{"jsonrpc": "2.0", "res'
    assert "time limit" in one("A2A-TASK-001", log, E).message


def test_err_009_ignores_exchanges_without_answer():
    log = errors_log()
    log.exchanges.append(broken("late"))
    one("A2A-ERR-009", log, P)


@pytest.mark.parametrize("rid", ["A2A-TASK-001", "A2A-TASK-002", "A2A-TASK-003"])
def test_missing_readback_is_not_tested_saying_why(rid):
    found = judge(rid, frame_log(seed_stream()))
    assert [f.outcome for f in found] == [Outcome.NOT_TESTED]
    assert "no GetTask of task" in found[0].message and "once its streams had ended" in found[0].message


def test_missing_history_reads_give_no_finding():
    assert judge("A2A-TASK-004", frame_log(seed_stream())) == []
