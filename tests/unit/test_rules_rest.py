"""REST- rules on hand-made HTTP+JSON frame logs: each requirement both ways (a correct log passes, a broken
one fails with the right ID and a message that shows what came), and a log of another binding gives none."""

from __future__ import annotations

from typing import Any

import pytest
from logs import (
    A2A_JSON,
    REST_URL,
    error_info,
    frame_log,
    rest,
    rest_sse,
    rpc_error,
    status_body,
    status_update,
    stream_task,
    task,
    task_result,
    unary,
)

from streamcert.framelog import END_ERROR, Exchange
from streamcert.outcomes import Outcome
from streamcert.protocols import a2a, bindings
from streamcert.rules import RuleContext
from streamcert.rules import judge as judge_all

P, F, E, NS = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.NON_STRICT
REST_IDS = [f"REST-{n:03d}" for n in range(1, 7)]
UNKNOWN = {"id": "no-such-task"}


# -- HTTP+JSON exchanges ---------------------------------------------------------------------------------

def refused(label: str, op: str, code: int, *, status: int | None = None, **kw: Any) -> Exchange:
    """`op` refused with the A2A error `code`, at its §5.4 status unless `status` says otherwise."""
    http = status or bindings.forms_of(code)[1]
    return rest(label, op, kw.pop("answer", None) or status_body(code, http), status=http,
                params=kw.pop("params", UNKNOWN), **kw)


def sent_ok() -> list[Exchange]:
    """A correct run's answers: each operation once, and its refusals as §5.4 and §11.6 write them."""
    t = task(state="TASK_STATE_COMPLETED")
    return [
        rest("send", a2a.SEND_MESSAGE, task_result(state="TASK_STATE_COMPLETED")),
        rest_sse("stream", a2a.SEND_STREAMING_MESSAGE, [stream_task(), status_update("TASK_STATE_WORKING"),
                                                         status_update("TASK_STATE_COMPLETED")]),
        rest("get_task", a2a.GET_TASK, t, params={"id": "task-1", "historyLength": 1}),
        rest("list", a2a.LIST_TASKS, {"tasks": [t], "nextPageToken": "", "pageSize": 50, "totalSize": 1}),
        rest("cancel", a2a.CANCEL_TASK, {**t, "status": {"state": "TASK_STATE_CANCELED"}}, params={"id": "task-1"}),
        rest_sse("subscribe", a2a.SUBSCRIBE_TO_TASK, [stream_task(state="TASK_STATE_WORKING")],
                 params={"id": "task-1"}),
        refused("get_unknown", a2a.GET_TASK, a2a.TASK_NOT_FOUND),
        refused("cancel_terminal", a2a.CANCEL_TASK, a2a.TASK_NOT_CANCELABLE, params={"id": "task-1"}),
        refused("subscribe_terminal", a2a.SUBSCRIBE_TO_TASK, a2a.UNSUPPORTED_OPERATION, params={"id": "task-1"}),
        rest("invalid_params", a2a.SEND_MESSAGE, status_body(a2a.INVALID_PARAMS), status=400),
    ]


def judge(rid: str, *exchanges: Exchange) -> list:
    return [f for f in judge_all(frame_log(*exchanges), [rid], RuleContext()) if f.req_id == rid]


def one(rid: str, *exchanges: Exchange, outcome: Outcome) -> Any:
    found = judge(rid, *exchanges)
    worst = [f for f in found if f.outcome == outcome]
    assert worst and all(f.outcome in (outcome, P) for f in found), [(f.outcome, f.message) for f in found]
    return worst[0]


@pytest.mark.parametrize("rid", REST_IDS)
def test_a_correct_run_passes(rid: str) -> None:
    found = judge(rid, *sent_ok())
    assert found and all(f.outcome == P for f in found), [(f.outcome, f.message) for f in found]


@pytest.mark.parametrize("rid", REST_IDS)
def test_a_log_of_another_binding_gives_no_finding(rid: str) -> None:
    jsonrpc = [unary("get_unknown", error=rpc_error(a2a.TASK_NOT_FOUND, data=error_info()), status=404,
                     rpc_method=a2a.GET_TASK),
               unary("send", result={"jsonrpc": "2.0", "result": {}}, rpc_method=a2a.SEND_MESSAGE,
                     content_type="text/plain")]
    assert judge(rid, *jsonrpc) == []


@pytest.mark.parametrize("rid", REST_IDS)
def test_a_call_without_an_answer_is_not_judged(rid: str) -> None:
    lost = Exchange(label="get_task", method="GET", url=REST_URL + "/tasks/x", rpc_method=a2a.GET_TASK,
                    end=END_ERROR, error="ConnectError: refused", binding=bindings.HTTP_JSON)
    assert judge(rid, lost) == []


# -- REST-001 ---------------------------------------------------------------------------------------------

def test_subscribe_by_post_is_the_reading_reported() -> None:
    f = one("REST-001", *sent_ok(), outcome=P)
    assert "by POST" in f.reading and "§11.3.2" in f.reading
    assert "SubscribeToTask" in f.message and "GetTask" in f.message


def test_subscribe_served_by_get_after_a_405_passes_with_that_reading() -> None:
    sub = rest_sse("subscribe", a2a.SUBSCRIBE_TO_TASK, [stream_task(state="TASK_STATE_WORKING")],
                   params={"id": "task-1"})
    sub.method, sub.notes["route_retry"] = "GET", {"first": {"method": "POST", "status": 405}, "then": "GET"}
    f = one("REST-001", sub, outcome=P)
    assert "by GET (POST answered HTTP 405, then GET)" in f.reading and "google.api.http" in f.reading


@pytest.mark.parametrize("status, body, why", [
    (405, b"Method Not Allowed", "HTTP 405"),
    (501, b"", "HTTP 501"),
    (404, b'{"error":{"code":404,"message":"Not Found"}}', "HTTP 404 without an A2A ErrorInfo"),
    (404, b"<html>Not Found</html>", "HTTP 404 without an A2A ErrorInfo"),
])
def test_a_route_not_served_fails(status: int, body: bytes, why: str) -> None:
    ex = rest("subscribe", a2a.SUBSCRIBE_TO_TASK, params={"id": "task-1"}, status=status, body=body,
              content_type="text/plain")
    f = one("REST-001", *sent_ok()[:2], ex, outcome=F)
    assert why in f.message and "POST /a2a/rest/tasks/task-1:subscribe" in f.message
    assert (repr(body.decode())[:30] in f.message) if body else True
    assert f.evidence[0]["exchange"] == "subscribe" and f.evidence[0]["status"] == status


def test_a_get_retry_that_is_refused_too_fails_naming_both_tries() -> None:
    ex = rest("subscribe", a2a.SUBSCRIBE_TO_TASK, params={"id": "task-1"}, status=405, body=b"", method="GET",
              notes={"route_retry": {"first": {"method": "POST", "status": 405}, "then": "GET"}})
    f = one("REST-001", ex, outcome=F)
    assert "HTTP 405 without an A2A ErrorInfo (POST answered HTTP 405, then GET)" in f.message


def test_a_task_not_found_404_is_a_served_route() -> None:
    one("REST-001", refused("get_unknown", a2a.GET_TASK, a2a.TASK_NOT_FOUND), outcome=P)


@pytest.mark.parametrize("status", [501, 405])
def test_an_a2a_error_under_501_or_405_is_a_served_route_whose_status_rest_004_judges(status: int) -> None:
    ex = refused("subscribe_terminal", a2a.SUBSCRIBE_TO_TASK, a2a.UNSUPPORTED_OPERATION, status=status,
                 params={"id": "task-1"})
    one("REST-001", *sent_ok()[:2], ex, outcome=P)
    f = one("REST-004", ex, outcome=F)
    assert f"UnsupportedOperationError (ErrorInfo reason UNSUPPORTED_OPERATION) with HTTP {status}" in f.message


def test_a_501_without_an_a2a_error_info_is_not_served() -> None:
    ex = rest("subscribe", a2a.SUBSCRIBE_TO_TASK, status_body(a2a.METHOD_NOT_FOUND, 501), status=501,
              params={"id": "task-1"})
    f = one("REST-001", ex, outcome=F)
    assert "HTTP 501 without an A2A ErrorInfo" in f.message


# -- REST-002 ---------------------------------------------------------------------------------------------

def test_an_enveloped_answer_fails_showing_the_body() -> None:
    env = {"jsonrpc": "2.0", "id": None, "result": task(state="TASK_STATE_CANCELED")}
    f = one("REST-002", rest("cancel", a2a.CANCEL_TASK, env, params={"id": "task-1"}), outcome=F)
    assert "JSON-RPC envelope (jsonrpc, result)" in f.message and '"jsonrpc": "2.0"' in f.message
    assert "cancel (CancelTask, POST /a2a/rest/tasks/task-1:cancel)" in f.message


def test_an_enveloped_stream_event_fails_naming_its_frame() -> None:
    items = [stream_task(), {"jsonrpc": "2.0", "id": 1, "result": status_update("TASK_STATE_WORKING")}, "{cut"]
    f = one("REST-002", rest_sse("stream", a2a.SEND_STREAMING_MESSAGE, items), outcome=F)
    assert f.message.startswith("2 event(s)") and "frame 2 is a JSON-RPC envelope" in f.message
    assert [e["frame"] for e in f.evidence] == [2, 3] and "jsonrpc" in f.evidence[0]["data"]


@pytest.mark.parametrize("frame, why", [
    (task(state="TASK_STATE_WORKING"), "a bare Task (id, status)"),
    (status_update("TASK_STATE_COMPLETED")["statusUpdate"], "a bare TaskStatusUpdateEvent (taskId, status)"),
    ({"note": "hello"}, "an object without its StreamResponse wrapper"),
])
def test_a_stream_event_that_is_no_stream_response_fails(frame: Any, why: str) -> None:
    items = [stream_task(), frame, status_update("TASK_STATE_COMPLETED")]
    f = one("REST-002", rest_sse("stream", a2a.SEND_STREAMING_MESSAGE, items), outcome=F)
    assert f"frame 2 is {why}" in f.message and "none of task, message, statusUpdate, artifactUpdate" in f.message
    assert [e["frame"] for e in f.evidence] == [2]


def test_stream_events_each_a_stream_response_pass() -> None:
    items = [stream_task(), {"artifactUpdate": {"taskId": "task-1", "contextId": "ctx-1",
                                                "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}},
             {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}},
             status_update("TASK_STATE_COMPLETED")]
    f = one("REST-002", rest_sse("stream", a2a.SEND_STREAMING_MESSAGE, items), outcome=P)
    assert "4 event(s), each a StreamResponse object" in f.message


@pytest.mark.parametrize("body, why", [(b"", "an empty body"), (b"[1]", "a JSON list"),
                                       (b"<html>ok</html>", "not JSON")])
def test_a_success_that_is_no_response_message_fails(body: bytes, why: str) -> None:
    f = one("REST-002", rest("get_task", a2a.GET_TASK, params={"id": "t"}, body=body), outcome=F)
    assert why in f.message


def test_an_error_under_a_success_status_is_not_rest_002s() -> None:
    ex = rest("get_unknown", a2a.GET_TASK, status_body(a2a.TASK_NOT_FOUND), params=UNKNOWN)
    assert judge("REST-002", ex) == []


# -- REST-003 ---------------------------------------------------------------------------------------------

def test_application_json_is_non_strict() -> None:
    ex = rest("get_task", a2a.GET_TASK, task(), params={"id": "task-1"}, content_type="application/json")
    f = one("REST-003", *sent_ok(), ex, outcome=NS)
    assert "Content-Type application/json" in f.message and "application/json" in f.reading


def test_another_media_type_fails() -> None:
    ex = refused("get_unknown", a2a.GET_TASK, a2a.TASK_NOT_FOUND, content_type="text/plain")
    f = one("REST-003", *sent_ok(), ex, outcome=F)
    assert "get_unknown" in f.message and "Content-Type text/plain" in f.message and "\"NOT_FOUND\"" in f.message


def test_a2a_json_with_parameters_passes() -> None:
    one("REST-003", rest("send", a2a.SEND_MESSAGE, task_result(), content_type=A2A_JSON + "; charset=utf-8"),
        outcome=P)


# -- REST-004 ---------------------------------------------------------------------------------------------

def test_an_error_with_another_status_fails() -> None:
    ex = refused("cancel_terminal", a2a.CANCEL_TASK, a2a.TASK_NOT_CANCELABLE, status=409, params={"id": "t"})
    f = one("REST-004", *sent_ok(), ex, outcome=F)
    assert "TaskNotCancelableError (ErrorInfo reason TASK_NOT_CANCELABLE) with HTTP 409" in f.message
    assert "maps it to HTTP 400" in f.message and '"reason":"TASK_NOT_CANCELABLE"' in f.message


def test_an_error_answered_200_fails() -> None:
    ex = rest("get_unknown", a2a.GET_TASK, status_body(a2a.TASK_NOT_FOUND), params=UNKNOWN)
    f = one("REST-004", ex, outcome=F)
    assert "with HTTP 200; §5.4 maps it to HTTP 404" in f.message


def test_a_refusal_streamed_under_200_fails_but_a_later_error_frame_is_not_judged() -> None:
    first = rest_sse("subscribe_unknown", a2a.SUBSCRIBE_TO_TASK, [status_body(a2a.TASK_NOT_FOUND)], params=UNKNOWN)
    f = one("REST-004", first, outcome=F)
    assert "in an event stream under HTTP 200" in f.message and f.evidence[0]["frame"] == 1
    later = rest_sse("stream", a2a.SEND_STREAMING_MESSAGE, [stream_task(), status_body(a2a.INVALID_AGENT_RESPONSE)])
    assert judge("REST-004", later) == []


def test_an_error_without_error_info_is_not_rest_004s() -> None:
    ex = refused("cancel_terminal", a2a.CANCEL_TASK, a2a.TASK_NOT_CANCELABLE, params={"id": "t"},
                 answer={"error": {"code": 400, "message": "no"}}, status=409)
    assert judge("REST-004", ex) == []


# -- REST-005 ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("answer, why", [
    ({"error": {"code": -32001, "message": "x", "details": error_info()}}, "error.code is -32001, not the HTTP "
                                                                            "status 404"),
    ({"code": 404, "message": "x"}, "no `error` object"),
    ({"error": {"code": "404", "message": "x"}}, "error.code is \"404\", not an integer"),
    ({"error": {"code": 404}}, "error.message is missing"),
    ({"error": {"code": 404, "message": "x", "details": {"reason": "TASK_NOT_FOUND"}}}, "error.details is"),
    ({"error": {"code": 404, "message": "x", "details": [{"reason": "TASK_NOT_FOUND"}]}},
     "error.details[0] is {\"reason\":\"TASK_NOT_FOUND\"}, not an object with @type"),
])
def test_an_error_body_that_is_not_google_rpc_status_fails(answer: Any, why: str) -> None:
    ex = rest("get_unknown", a2a.GET_TASK, answer, status=404, params=UNKNOWN)
    f = one("REST-005", *sent_ok(), ex, outcome=F)
    assert why in f.message and "get_unknown (GetTask, GET /a2a/rest/tasks/no-such-task) answered HTTP 404" \
        in f.message


def test_an_html_error_page_fails() -> None:
    ex = rest("get_unknown", a2a.GET_TASK, status=500, body=b"<html><h1>Error</h1></html>", params=UNKNOWN,
              content_type="text/html")
    f = one("REST-005", ex, outcome=F)
    assert "not JSON" in f.message and "<html><h1>Error" in f.message


# -- REST-006 ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("details, why", [
    (None, "no error.details"),
    ([{"@type": "type.googleapis.com/google.rpc.BadRequest"}], "no ErrorInfo"),
    (error_info(domain="example.com"), "domain \"example.com\""),
    (error_info(reason="TaskNotCancelable"), "reason \"TaskNotCancelable\", which names no A2A error"),
])
def test_an_a2a_refusal_without_its_error_info_fails(details: Any, why: str) -> None:
    body = {"error": {"code": 400, "message": "cannot", **({"details": details} if details else {})}}
    ex = refused("cancel_terminal", a2a.CANCEL_TASK, a2a.TASK_NOT_CANCELABLE, params={"id": "t"}, answer=body)
    f = one("REST-006", *sent_ok(), ex, outcome=F)
    assert why in f.message and "cancel_terminal (CancelTask, POST /a2a/rest/tasks/t:cancel) answered HTTP 400" \
        in f.message and '"message":"cannot"' in f.message


def test_a_generic_error_needs_no_error_info() -> None:
    ex = rest("invalid_params", a2a.SEND_MESSAGE, {"error": {"code": 400, "message": "no message"}}, status=400)
    assert judge("REST-006", ex) == []


def test_a_refusal_whose_route_is_not_served_is_rest_001s_not_rest_006s() -> None:
    ex = rest("subscribe_terminal", a2a.SUBSCRIBE_TO_TASK, {"error": {"code": 404, "message": "Not Found"}},
              params={"id": "t"}, status=404)
    assert judge("REST-006", ex) == []
    one("REST-001", ex, outcome=F)
