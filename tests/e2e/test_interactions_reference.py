"""The reference agent plays ask, call and connect under interactions/v1 (seed 004) in both D3 modes.

Driven with plain httpx and a line-based reading of `data:` lines, independent of the suite's client,
parser and rules (those are tested against this agent, so it is checked by something else).
"""

from __future__ import annotations

import copy
import json
import threading
import uuid
from typing import Any

import httpx
import pytest
from logs import script

from streamcert.protocols import a2a, interactions_v1
from streamcert.reference.agent.options import Options
from streamcert.reference.agent.server import ReferenceServer

URI = interactions_v1.URI
RPC = "/a2a/jsonrpc"
EXT_HEADERS = {a2a.VERSION_HEADER: a2a.PROTOCOL_VERSION, a2a.EXTENSIONS_HEADER: URI}
PLAIN_HEADERS = {a2a.VERSION_HEADER: a2a.PROTOCOL_VERSION}
SENTINEL = "SENTINEL-in-the-args"


@pytest.fixture(scope="module", params=["close", "open"])
def server(request):
    with ReferenceServer(d3=request.param) as srv:
        srv.d3 = request.param
        yield srv


def rpc(server, method: str, params: dict[str, Any], headers=EXT_HEADERS) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.post(server.url + RPC, json=body, headers=headers, timeout=10).json()


def start(server, *steps, headers=EXT_HEADERS) -> dict[str, Any]:
    """A blocking SendMessage: it returns at the first pause (an interrupted state)."""
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "go"}],
               "metadata": {"urn:streamcert:script": script(*steps)}}
    return rpc(server, "SendMessage", {"message": message}, headers)["result"]["task"]


def answer(task: dict[str, Any], *, message_id: str | None = None, interaction_id: str | None = None,
           **value: Any) -> dict[str, Any]:
    meta = task["status"]["message"]["metadata"][URI]
    iid = interaction_id or meta["interactionId"]
    return {"messageId": message_id or str(uuid.uuid4()), "role": "ROLE_USER", "taskId": task["id"],
            "contextId": task["contextId"], "parts": [{"data": value}], "extensions": [URI],
            "metadata": {URI: {"interactionId": iid, **value}}}


def send(server, message: dict[str, Any], headers=EXT_HEADERS) -> dict[str, Any]:
    return rpc(server, "SendMessage", {"message": message}, headers)


def said(server, task_id: str) -> list[str]:
    task = rpc(server, "GetTask", {"id": task_id})["result"]
    return [m["parts"][0]["text"] for m in task.get("history", []) if m["role"] == "ROLE_AGENT"]


def interaction(task: dict[str, Any]) -> dict[str, Any]:
    return task["status"]["message"]["metadata"][URI]


# -- the open interaction ------------------------------------------------------------------------------

def test_question_pauses_with_the_interaction_and_its_answer_reaches_the_model(server):
    task = start(server, {"ask": "Which environment?"}, {"say": "Answer: {{result}}"}, {"finish": "done"})
    status = task["status"]
    assert status["state"] == a2a.INPUT_REQUIRED
    assert status["message"]["parts"] == [{"text": "Which environment?"}]
    assert status["message"]["extensions"] == [URI]
    meta = interaction(task)
    assert meta["kind"] == "question" and meta["prompt"] == "Which environment?" and meta["interactionId"]
    assert "detail" not in meta
    assert rpc(server, "GetTask", {"id": task["id"]})["result"]["status"] == status  # the same open interaction
    done = send(server, answer(task, value={"env": "staging", "emoji": "🚀"}))["result"]["task"]
    assert done["id"] == task["id"] and done["status"]["state"] == a2a.COMPLETED
    assert 'Answer: {"env": "staging", "emoji": "🚀"}' in said(server, task["id"])


def test_question_takes_a_plain_text_reply(server):
    task = start(server, {"ask": "Ticket?"}, {"say": "T: {{result}}"}, {"finish": "done"}, headers=PLAIN_HEADERS)
    assert task["status"]["message"]["parts"][0] == {"text": "Ticket?"}  # the same message, read as text
    reply = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "taskId": task["id"],
             "contextId": task["contextId"], "parts": [{"text": "4821"}]}
    assert send(server, reply, PLAIN_HEADERS)["result"]["task"]["status"]["state"] == a2a.COMPLETED
    assert 'T: "4821"' in said(server, task["id"])


@pytest.mark.parametrize("fault", [None, "pause-text-for-questions-only"])
def test_a_plain_client_reads_an_approval_and_a_connection_as_text(fault):
    call = {"call": {"server": "github", "tool": "merge", "args": {}}}
    connect = {"connect": {"app": "Linear", "reason": "to file"}}
    with ReferenceServer(fault=fault) as srv:
        texts = [start(srv, step, {"finish": "done"}, headers=PLAIN_HEADERS)["status"]["message"]["parts"][0].get("text")
                 for step in (call, connect)]
    assert texts == ([None, None] if fault else ["Approve github / merge?", "Connect Linear: to file"])


@pytest.mark.parametrize("given,seen", [({"approved": True}, "github/create_pull_request: done"),
                                        ({"value": True}, "github/create_pull_request: done"),
                                        ({"approved": False}, "tool.denied")])
def test_approval_detail_never_carries_args_and_the_answer_decides(server, given, seen):
    call = {"server": "github", "tool": "create_pull_request", "args": {"title": SENTINEL}}
    task = start(server, {"call": call}, {"say": "R: {{result}}"}, {"finish": "done"})
    assert task["status"]["state"] == a2a.AUTH_REQUIRED
    meta = interaction(task)
    assert meta["kind"] == "approval" and meta["detail"] == {"server": "github", "tool": "create_pull_request"}
    assert meta["interactionId"].startswith("eff_")  # the held call's effect id
    listed = rpc(server, "ListTasks", {"contextId": task["contextId"]})["result"]
    got = rpc(server, "GetTask", {"id": task["id"]})["result"]
    for shown in (task["status"], got["status"], listed["tasks"][0]["status"]):
        assert SENTINEL not in json.dumps(shown)
    send(server, answer(task, **given))
    assert f"R: {seen}" in said(server, task["id"])


@pytest.mark.parametrize("fault,sent", [(None, {"title": SENTINEL}), ("approval-sends-other-args",
                                                                      {"title": SENTINEL, "draft": True})])
def test_an_echoing_call_reports_the_call_it_ran(fault, sent):
    call = {"server": "github", "tool": "create_pull_request", "args": {"title": SENTINEL}, "echo": True}
    with ReferenceServer(fault=fault) as srv:
        task = start(srv, {"call": call}, {"say": "R: {{result}}"}, {"finish": "done"})
        assert SENTINEL not in json.dumps(task["status"])
        send(srv, answer(task, approved=True))
        report = next(t for t in said(srv, task["id"]) if t.startswith("R: "))
    assert json.loads(report[3:]) == {"server": "github", "tool": "create_pull_request", "args": sent}


def test_text_never_approves(server):
    task = start(server, {"call": {"server": "s", "tool": "t", "args": {}}}, {"finish": "done"})
    reply = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "taskId": task["id"],
             "contextId": task["contextId"], "parts": [{"text": "yes"}]}
    assert send(server, reply)["error"]["code"] == a2a.UNSUPPORTED_OPERATION
    assert rpc(server, "GetTask", {"id": task["id"]})["result"]["status"] == task["status"]


@pytest.mark.parametrize("given,seen", [({"value": {"connected": True}}, "Connected: Linear"),
                                        ({"value": True}, "Connected: Linear"),
                                        ({"approved": True}, "Connected: Linear"),
                                        ({"value": {"connected": False}}, "Not connected: Linear"),
                                        ({"approved": False}, "Not connected: Linear"),
                                        ({"value": "yes"}, "Not connected: Linear")])
def test_connection_prompt_and_answers(server, given, seen):
    task = start(server, {"connect": {"app": "Linear", "reason": "to file the bug"}}, {"say": "{{result}}"},
                 {"finish": "done"})
    assert task["status"]["state"] == a2a.AUTH_REQUIRED
    meta = interaction(task)
    assert meta["prompt"] == "Connect Linear: to file the bug"
    assert meta["detail"] == {"app": "Linear", "reason": "to file the bug"}
    send(server, answer(task, **given))
    assert seen in said(server, task["id"])


LONG_APP, LONG_REASON = "x" + "🚀" * 100, "🚀 Because: " + "e\u0301" * 200 + " and a plain tail" * 6


def test_connection_cuts_app_and_reason_in_code_points(server):
    task = start(server, {"connect": {"app": LONG_APP, "reason": LONG_REASON}}, {"finish": "done"})
    detail = interaction(task)["detail"]
    assert detail == {"app": LONG_APP[:80], "reason": LONG_REASON[:280]}  # no "…": the reference's reading
    assert interaction(task)["prompt"] == f"Connect {LONG_APP[:80]}: {LONG_REASON[:280]}"


@pytest.mark.parametrize("fault,app,reason", [
    ("connection-reason-uncut", LONG_APP[:80], LONG_REASON),
    ("connection-cut-plus-ellipsis", LONG_APP[:80] + "…", LONG_REASON[:280] + "…")])
def test_the_cut_faults_send_past_the_limit(fault, app, reason):
    with ReferenceServer(fault=fault) as broken:
        task = start(broken, {"connect": {"app": LONG_APP, "reason": LONG_REASON}}, {"finish": "done"})
    assert interaction(task)["detail"] == {"app": app, "reason": reason}


def test_the_approved_false_fault_connects():
    with ReferenceServer(fault="connection-approved-false-connects") as broken:
        task = start(broken, {"connect": {"app": "Linear", "reason": "to file"}}, {"say": "{{result}}"},
                     {"finish": "done"})
        send(broken, answer(task, approved=False))
        assert "Connected: Linear" in said(broken, task["id"])


# -- answers: ids, retries, refusals -----------------------------------------------------------------------

def two_questions(server) -> dict[str, Any]:
    return start(server, {"ask": "Q1?"}, {"say": "First: {{result}}"}, {"ask": "Q2?"}, {"say": "Second: {{result}}"},
                 {"finish": "done"})


def test_retry_answers_once_and_other_answers_are_refused(server):
    task = two_questions(server)
    first = answer(task, value="blue")
    at_q2 = send(server, first)["result"]
    assert at_q2["task"]["status"]["state"] == a2a.INPUT_REQUIRED
    assert send(server, first)["result"] == at_q2  # the same result, and the second question still open
    q2 = rpc(server, "GetTask", {"id": task["id"]})["result"]
    assert interaction(q2)["prompt"] == "Q2?"
    other = {**first, "metadata": {URI: {**first["metadata"][URI], "value": "red"}}}
    assert send(server, other)["error"]["code"] == a2a.INVALID_PARAMS  # same messageId, another body
    assert send(server, answer(q2, interaction_id="nope", value=1))["error"]["code"] == a2a.INVALID_PARAMS
    stale = answer(q2, interaction_id=interaction(task)["interactionId"], value=1)
    assert send(server, stale)["error"]["code"] == a2a.INVALID_PARAMS
    assert rpc(server, "GetTask", {"id": task["id"]})["result"]["status"] == q2["status"]
    send(server, answer(q2, value="green"))
    assert said(server, task["id"]).count('First: "blue"') == 1 and 'Second: "green"' in said(server, task["id"])
    late = send(server, answer(q2, value="again"))
    assert late["error"]["code"] == a2a.UNSUPPORTED_OPERATION  # the task has ended


def test_two_identical_answers_at_once_have_one_effect(server):
    task = two_questions(server)
    message = answer(task, value="eu-west")
    results: list[dict[str, Any]] = []
    gate = threading.Barrier(2)

    def go() -> None:
        gate.wait()
        results.append(send(server, message))
    threads = [threading.Thread(target=go) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert [r["result"] for r in results][0] == [r["result"] for r in results][1]
    now = rpc(server, "GetTask", {"id": task["id"]})["result"]
    assert interaction(now)["prompt"] == "Q2?"  # the twin did not answer the second question
    assert said(server, task["id"]).count('First: "eu-west"') == 1


# -- D3: the stream at an interrupted state ------------------------------------------------------------------

def stream_events(response: httpx.Response):
    for line in response.iter_lines():
        if line.startswith("data:"):
            yield json.loads(line[5:])["result"]


def test_stream_closes_or_stays_open_at_the_pause_as_configured(server):
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "go"}],
               "metadata": {"urn:streamcert:script": script({"ask": "Q?"}, {"say": "A: {{result}}"},
                                                           {"finish": "done"})}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": message}}
    with httpx.stream("POST", server.url + RPC, json=body, headers=EXT_HEADERS, timeout=10) as response:
        events = stream_events(response)
        task = next(events)["task"]
        states = []
        for result in events:
            states.append(result["statusUpdate"]["status"]["state"])
            if states[-1] == a2a.INPUT_REQUIRED:
                break
        paused = rpc(server, "GetTask", {"id": task["id"]})["result"]
        if server.d3 == "close":
            assert list(events) == []  # the server closed the stream at the pause
            send(server, answer(paused, value=1))
        else:
            send(server, answer(paused, value=1))
            rest = [r["statusUpdate"]["status"]["state"] for r in events]
            assert rest[0] == a2a.WORKING and rest[-1] == a2a.COMPLETED


def test_d3_reading_is_checked():
    with pytest.raises(ValueError):
        Options(d3="sometimes")


def test_serve_takes_the_d3_reading():
    from streamcert.cli import build_parser

    assert build_parser().parse_args(["serve", "--d3", "open"]).d3 == "open"
    assert build_parser().parse_args(["serve"]).d3 == "close"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--d3", "sometimes"])


# -- the streams of a paused task: a subscription, an answer's own stream --------------------------------

def open_stream(server, method: str, params: dict[str, Any]):
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return httpx.stream("POST", server.url + RPC, json=body, headers=EXT_HEADERS, timeout=10)


def test_a_subscription_at_a_pause_closes_after_its_task_or_carries_the_task_on(server):
    task = start(server, {"ask": "Q?"}, {"say": "A: {{result}}"}, {"finish": "done"})
    with open_stream(server, "SubscribeToTask", {"id": task["id"]}) as response:
        events = stream_events(response)
        first = next(events)["task"]
        assert first["status"]["state"] == a2a.INPUT_REQUIRED
        if server.d3 == "close":  # the task is at an interrupted state: the close reading ends the stream there
            assert list(events) == []
            return
        send(server, answer(task, value=1))
        rest = [r["statusUpdate"]["status"]["state"] for r in events]
        assert rest[0] == a2a.WORKING and rest[-1] == a2a.COMPLETED


def test_a_streamed_answer_opens_with_the_task_it_moved_on_and_a_retry_gets_that_task(server):
    task = start(server, {"ask": "Q?"}, {"say": "A: {{result}}"}, {"sleep": 300}, {"finish": "done"})
    message = answer(task, value="blue")
    with open_stream(server, "SendStreamingMessage", {"message": message}) as response:
        events = stream_events(response)
        first = next(events)["task"]
        retried = send(server, copy.deepcopy(message))["result"]["task"]
        rest = [r["statusUpdate"]["status"] for r in events]
    # the Task the answer moved on: working, the interaction no longer open
    assert first["status"]["state"] == a2a.WORKING and "message" not in first["status"]
    assert retried == first  # a retry with the same messageId gets the first answer's response
    assert [s["state"] for s in rest] == [a2a.WORKING, a2a.COMPLETED]
    assert rest[0]["message"]["parts"] == [{"text": 'A: "blue"'}]
