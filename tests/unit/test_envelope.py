"""The JSON-RPC envelope (WIRE-003, WIRE-008, WIRE-009): the rules both ways on hand-made logs, what
a request is read from the request itself, and the reference's envelope over real HTTP with plain httpx
(its correct side and the fault variants that break it). Then the reference's side of the other rules of
issue 9's "envelope" list, with their faults: unknown tasks (A2A-ERR-002), a patch version (A2A-ERR-011),
messages without their required members (A2A-ERR-012), statusTimestampAfter (A2A-TASK-013) and the card
as ProtoJSON (A2A-CARD-005); the rules themselves are tested with the others of their profile."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from logs import broken, frame_log, rpc_error, sse, status_update, stream_task, task, unary

from streamcert.drivers.a2a import ID_FORMS
from streamcert.framelog import END_IDLE, FrameLog
from streamcert.outcomes import Outcome
from streamcert.protocols import a2a
from streamcert.reference.agent.server import ReferenceServer
from streamcert.rules import RuleContext, judge
from streamcert.rules.a2a.wire import expected_ids, is_notification, request_problem, same_id, sent

P, F, E, NS = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.NON_STRICT


def findings(rid: str, log: FrameLog):
    return [f for f in judge(log, [rid], RuleContext()) if f.req_id == rid]


def outcome(rid: str, log: FrameLog) -> Outcome | None:
    """The worst outcome the rules give `rid` on `log` (None: no finding)."""
    order = [P, NS, Outcome.WARNING, F, E]
    found = [f.outcome for f in findings(rid, log)]
    return max(found, key=order.index) if found else None


def one(rid: str, log: FrameLog, expected: Outcome, *words: str):
    found = findings(rid, log)
    assert len(found) == 1, [(f.outcome, f.message) for f in found]
    f = found[0]
    assert f.outcome == expected, f"{rid}: {f.outcome} {f.message}"
    for w in words:
        assert w in f.message, f"{w!r} not in {f.message!r}"
    return f


def raw_request(ex, body: Any):
    """`ex` as the driver records a request sent as raw bytes: the body kept as text."""
    ex.request_body = body if isinstance(body, str) else json.dumps(body)
    return ex


# -- what a request is ----------------------------------------------------------------------------------

def test_a_request_is_read_from_what_was_sent():
    ex = unary("get_task", {})
    assert sent(ex) == ({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {}}, True)
    assert sent(raw_request(unary("parse_error", {}), "{not json")) == (None, False)
    assert request_problem({"jsonrpc": "2.0", "id": 0, "method": "GetTask"}) is None
    assert request_problem({"jsonrpc": "2.0", "id": None, "method": "GetTask"}) is None
    assert "1.0" in request_problem({"jsonrpc": "1.0", "id": 1, "method": "GetTask"})
    assert "method" in request_problem({"jsonrpc": "2.0", "id": 1})
    assert "boolean" in request_problem({"jsonrpc": "2.0", "id": True, "method": "GetTask"})
    assert "object" in request_problem({"jsonrpc": "2.0", "id": {"n": 1}, "method": "GetTask"})
    assert "array" in request_problem([{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}])
    assert is_notification(raw_request(unary("n", {}), {"jsonrpc": "2.0", "method": "GetTask"}))
    assert not is_notification(raw_request(unary("n", {}), {"jsonrpc": "2.0", "id": None, "method": "GetTask"}))
    assert not is_notification(raw_request(unary("n", {}), {"jsonrpc": "1.0", "method": "GetTask"}))


def test_ids_compare_by_value_and_json_type():
    assert same_id(0, 0) and same_id("", "") and same_id(1, 1.0) and same_id(None, None)
    assert not same_id(0, "0") and not same_id(0, None) and not same_id("", None) and not same_id(1, True)
    assert expected_ids(raw_request(unary("x", {}), "{not json"))[0] == [None]
    assert expected_ids(raw_request(unary("x", {}), {"jsonrpc": "1.0", "id": 5, "method": "GetTask"}))[0] == [5, None]
    assert expected_ids(raw_request(unary("x", {}), {"jsonrpc": "2.0", "id": True, "method": "GetTask"}))[0] == [None]


# -- WIRE-003: every id form, every path -----------------------------------------------------------------

@pytest.mark.parametrize("rpc_id", ID_FORMS, ids=repr)
def test_wire_003_every_id_form_passes_on_result_error_and_stream(rpc_id):
    log = frame_log(
        unary("get_task", task(), rpc_id=rpc_id),
        unary("get_unknown", error=rpc_error(-32001), rpc_id=rpc_id),
        sse("stream", [stream_task(), status_update("TASK_STATE_COMPLETED")], rpc_id=rpc_id),
        sse("subscribe_unknown", [{"jsonrpc": "2.0", "id": rpc_id, "error": rpc_error(-32001)}],
            rpc_method="SubscribeToTask", rpc_id=rpc_id),
    )
    assert {f.outcome for f in findings("WIRE-003", log)} == {P}


@pytest.mark.parametrize("rpc_id", [0, ""], ids=repr)
def test_wire_003_a_falsy_id_answered_with_null_fails(rpc_id):
    ex = unary("get_task", task(), body={"jsonrpc": "2.0", "id": None, "result": task()}, rpc_id=rpc_id)
    one("WIRE-003", frame_log(ex), F, f"sent id {rpc_id!r}", "carries id None (null)")


def test_wire_003_a_number_echoed_as_a_string_fails():
    ex = unary("get_task", body={"jsonrpc": "2.0", "id": "9007199254740991", "result": {}}, rpc_id=2**53 - 1)
    one("WIRE-003", frame_log(ex), F, "'9007199254740991' (string)")


def test_wire_003_one_stream_event_with_another_id_fails():
    events = [stream_task(), {"jsonrpc": "2.0", "id": None, "result": status_update("TASK_STATE_COMPLETED")}]
    f = one("WIRE-003", frame_log(sse("id_stream", events, rpc_id="")), F, "sent id ''", "carries id None")
    assert f.evidence and f.evidence[0].get("frame") == 2


def test_wire_003_an_error_with_null_id_fails_when_the_id_was_readable():
    ex = unary("get_unknown", body={"jsonrpc": "2.0", "id": None, "error": rpc_error(-32001)}, rpc_id="ü-🦊 7")
    one("WIRE-003", frame_log(ex), F, "sent id 'ü-🦊 7'")


def test_wire_003_an_invalid_request_may_echo_its_id_or_answer_null():
    request = {"jsonrpc": "1.0", "id": 5, "method": "GetTask", "params": {}}
    echoed = raw_request(unary("invalid_jsonrpc", error=rpc_error(-32600), rpc_id=5), request)
    assert one("WIRE-003", frame_log(echoed), P).reading == "an invalid request's readable id echoed"
    null = raw_request(unary("invalid_jsonrpc", body={"jsonrpc": "2.0", "id": None, "error": rpc_error(-32600)}),
                       request)
    assert one("WIRE-003", frame_log(null), P).reading == "null for an invalid request whose id was readable"
    other = raw_request(unary("invalid_jsonrpc", error=rpc_error(-32600), rpc_id=6), request)
    one("WIRE-003", frame_log(other), F, "sent id 5 in an invalid request")


def test_wire_003_an_id_of_another_type_must_come_back_null():
    request = {"jsonrpc": "2.0", "id": True, "method": "GetTask", "params": {}}
    null = raw_request(unary("invalid_id_bool", body={"jsonrpc": "2.0", "id": None, "error": rpc_error(-32600)}),
                       request)
    one("WIRE-003", frame_log(null), P)
    echoed = raw_request(unary("invalid_id_bool", body={"jsonrpc": "2.0", "id": True, "error": rpc_error(-32600)}),
                         request)
    one("WIRE-003", frame_log(echoed), F, "carries id True (boolean)")
    request = {"jsonrpc": "2.0", "id": {"n": 1}, "method": "GetTask", "params": {}}
    null = raw_request(unary("invalid_id_object", body={"jsonrpc": "2.0", "id": None, "error": rpc_error(-32600)}),
                       request)
    one("WIRE-003", frame_log(null), P)
    echoed = raw_request(unary("invalid_id_object", body={"jsonrpc": "2.0", "id": {"n": 1},
                                                         "error": rpc_error(-32600)}), request)
    one("WIRE-003", frame_log(echoed), F, "carries id {'n': 1} (object)", "sent an invalid request")


def test_wire_003_leaves_notifications_and_non_jsonrpc_posts_alone():
    notification = raw_request(unary("notify_get", body=b""), {"jsonrpc": "2.0", "method": "GetTask"})
    progress = sse("progress", [{"phase": "thinking"}])
    progress.rpc_method, progress.request_body = None, {"urn:streamcert:script": {"version": 1, "steps": []}}
    assert findings("WIRE-003", frame_log(notification, progress)) == []


# -- WIRE-008: an invalid Request object gets -32600 -----------------------------------------------------

INVALID = {
    "invalid_jsonrpc": {"jsonrpc": "1.0", "id": 3, "method": "GetTask", "params": {}},
    "invalid_no_method": {"jsonrpc": "2.0", "id": 4, "params": {}},
    "invalid_id_bool": {"jsonrpc": "2.0", "id": True, "method": "GetTask", "params": {}},
    "invalid_id_object": {"jsonrpc": "2.0", "id": {"n": 1}, "method": "GetTask", "params": {}},
}


def invalid(label: str, **answer: Any):
    return raw_request(unary(label, rpc_method="GetTask", **answer), INVALID[label])


@pytest.mark.parametrize("label", sorted(INVALID))
def test_wire_008_minus_32600_passes(label):
    one("WIRE-008", frame_log(invalid(label, error=rpc_error(-32600))), P, "-32600 InvalidRequestError")


def test_wire_008_another_code_or_a_result_fails():
    f = one("WIRE-008", frame_log(invalid("invalid_no_method", error=rpc_error(-32601))), F,
            '"method" is missing', "-32601 MethodNotFoundError", "expected -32600")
    assert f.evidence
    one("WIRE-008", frame_log(invalid("invalid_jsonrpc", result=task())), F, '"jsonrpc" is "1.0"', "was accepted")


def test_wire_008_no_answer_is_error_and_a_valid_request_is_not_judged():
    ex = raw_request(broken("invalid_id_bool", "ReadTimeout: timed out", rpc_method="GetTask"),
                     INVALID["invalid_id_bool"])
    one("WIRE-008", frame_log(ex), E, "ReadTimeout")
    assert findings("WIRE-008", frame_log(unary("get_task", task()))) == []
    parse = raw_request(unary("parse_error", error=rpc_error(-32700)), "{not json")
    assert findings("WIRE-008", frame_log(parse)) == []  # not JSON: -32700, A2A-ERR-006


# -- WIRE-009: a notification gets no response -------------------------------------------------------------

NOTIFICATION = {"jsonrpc": "2.0", "method": "GetTask", "params": {"id": "t"}}


def notified(status: int = 204, body: Any = b"", **kw: Any):
    ex = unary("notify_get", body=body, status=status, rpc_method="GetTask", **kw)
    ex.chunks = [c for c in ex.chunks if c.data]
    return raw_request(ex, NOTIFICATION)


def test_wire_009_an_empty_answer_passes_and_an_error_status_is_non_strict():
    one("WIRE-009", frame_log(notified(204)), P, "HTTP 204, empty body")
    one("WIRE-009", frame_log(notified(200)), P, "HTTP 200")
    f = one("WIRE-009", frame_log(notified(400)), NS, "HTTP 400")
    assert "HTTP error status" in f.reading


def test_wire_009_a_response_object_fails():
    answered = notified(200, {"jsonrpc": "2.0", "id": None, "result": task()})
    f = one("WIRE-009", frame_log(answered), F, "a notification of GetTask", "JSON-RPC response", "no response")
    assert f.evidence
    error = notified(200, {"jsonrpc": "2.0", "id": None, "error": rpc_error(-32601)})
    one("WIRE-009", frame_log(error), F, "-32601")
    one("WIRE-009", frame_log(notified(200, b"ok", content_type="text/plain")), F, "a body: 'ok'")


def test_wire_009_no_answer_is_error_and_requests_with_an_id_are_not_judged():
    lost = raw_request(broken("notify_get", rpc_method="GetTask"), NOTIFICATION)
    one("WIRE-009", frame_log(lost), E, "connection refused")
    idle = notified(200)
    idle.end, idle.error = END_IDLE, "a silence of 10.0 s"
    one("WIRE-009", frame_log(idle), E, "did not end")
    null_id = raw_request(unary("x", task(), rpc_id=None), {**NOTIFICATION, "id": None})
    assert findings("WIRE-009", frame_log(null_id, unary("get_task", task()))) == []


def test_wire_005_leaves_the_empty_answer_to_a_notification_alone():
    assert findings("WIRE-005", frame_log(notified(204))) == []
    assert outcome("WIRE-005", frame_log(notified(204), unary("get_task", task()))) == P


# -- the reference, over HTTP ----------------------------------------------------------------------------

RPC = "/a2a/jsonrpc"
HEADERS = {a2a.VERSION_HEADER: a2a.PROTOCOL_VERSION, "Content-Type": "application/json"}
DONE = {"version": 1, "name": "done", "steps": [{"finish": "done"}]}


def post(base: str, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
    return httpx.post(base + RPC, content=content, headers={**HEADERS, **(headers or {})}, timeout=10)


def request(method: str, params: Any, rpc_id: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params}


def user_message(**extra: Any) -> dict[str, Any]:
    return {"messageId": "m-1", "role": a2a.ROLE_USER, "parts": [{"text": "go"}],
            "metadata": {"urn:streamcert:script": DONE}, **extra}


def events(response: httpx.Response) -> list[dict[str, Any]]:
    blocks = [b for b in response.text.replace("\r\n", "\n").split("\n\n") if b.startswith("data:")]
    return [json.loads("\n".join(line[5:].strip() for line in b.split("\n"))) for b in blocks]


@pytest.fixture(scope="module")
def server() -> Iterator[ReferenceServer]:
    with ReferenceServer() as srv:
        yield srv


@pytest.mark.parametrize("rpc_id", [*ID_FORMS, 1.5, None], ids=repr)
def test_the_reference_echoes_every_id_form(server, rpc_id):
    ok = post(server.url, request(a2a.LIST_TASKS, {}, rpc_id)).json()
    assert "result" in ok and same_id(ok["id"], rpc_id), ok
    refused = post(server.url, request(a2a.GET_TASK, {"id": "no-such-task"}, rpc_id)).json()
    assert refused["error"]["code"] == a2a.TASK_NOT_FOUND and same_id(refused["id"], rpc_id), refused
    streamed = post(server.url, request(a2a.SEND_STREAMING_MESSAGE, {"message": user_message()}, rpc_id),
                    {"Accept": a2a.SSE_MEDIA_TYPE})
    assert streamed.headers["content-type"] == a2a.SSE_MEDIA_TYPE
    frames = events(streamed)
    assert len(frames) >= 2 and all(same_id(f["id"], rpc_id) for f in frames), frames


def test_the_reference_refuses_invalid_requests_with_minus_32600(server):
    for label, body in INVALID.items():
        answer = post(server.url, body).json()
        assert answer["error"]["code"] == a2a.INVALID_REQUEST, (label, answer)
        readable = body.get("id") if isinstance(body.get("id"), int) and not isinstance(body["id"], bool) else None
        assert answer["id"] == readable, (label, answer)


def test_the_reference_does_not_answer_notifications(server):
    for body in (NOTIFICATION, {"jsonrpc": "2.0", "method": "tasks/frobnicate"}):
        response = post(server.url, body)
        assert response.status_code == 204 and response.content == b"", response.content


def _with(fault: str) -> ReferenceServer:
    return ReferenceServer(fault=fault)


def test_the_envelope_faults():
    with _with("falsy-id-null") as srv:
        assert post(srv.url, request(a2a.LIST_TASKS, {}, 0)).json()["id"] is None
        assert post(srv.url, request(a2a.LIST_TASKS, {}, "")).json()["id"] is None
        assert post(srv.url, request(a2a.LIST_TASKS, {}, "0")).json()["id"] == "0"
    with _with("error-id-null") as srv:
        assert post(srv.url, request(a2a.GET_TASK, {"id": "nope"}, 4)).json()["id"] is None
        assert post(srv.url, request(a2a.LIST_TASKS, {}, 4)).json()["id"] == 4
    with _with("invalid-id-echoed") as srv:
        assert post(srv.url, INVALID["invalid_id_bool"]).json()["id"] is True
        assert post(srv.url, INVALID["invalid_id_object"]).json()["id"] == {"n": 1}
        assert post(srv.url, request(a2a.GET_TASK, {"id": "nope"}, 4)).json()["id"] == 4
    with _with("jsonrpc-version-ignored") as srv:
        assert "result" in post(srv.url, {**request(a2a.LIST_TASKS, {}), "jsonrpc": "1.0"}).json()
    with _with("wrong-code-no-method") as srv:
        assert post(srv.url, INVALID["invalid_no_method"]).json()["error"]["code"] == a2a.METHOD_NOT_FOUND
        assert post(srv.url, INVALID["invalid_id_bool"]).json()["error"]["code"] == a2a.INVALID_REQUEST
    with _with("notification-answered") as srv:
        answer = post(srv.url, {"jsonrpc": "2.0", "method": a2a.LIST_TASKS, "params": {}}).json()
        assert answer["id"] is None and "result" in answer


# -- the reference's side of the other rules, and their faults ----------------------------------------

def send(base: str, message: dict[str, Any], rpc_id: Any = 1) -> dict[str, Any]:
    return post(base, request(a2a.SEND_MESSAGE, {"message": message}, rpc_id)).json()


def code(answer: dict[str, Any]) -> int | None:
    return answer.get("error", {}).get("code")


FLAWS = [{"role": None}, {"parts": None}, {"parts": []}, {"messageId": None}, {"role": "ROLE_SYSTEM"}]


def flawed(flaw: dict[str, Any], context_id: str) -> dict[str, Any]:
    return {k: v for k, v in {**user_message(contextId=context_id), **flaw}.items() if v is not None}


def test_the_reference_refuses_flawed_messages_and_starts_nothing(server):
    done = send(server.url, user_message())["result"]["task"]
    for flaw in FLAWS:
        assert code(send(server.url, flawed(flaw, done["contextId"]))) == a2a.INVALID_PARAMS, flaw
    listed = post(server.url, request(a2a.LIST_TASKS, {"contextId": done["contextId"]})).json()["result"]
    assert [t["id"] for t in listed["tasks"]] == [done["id"]]


def test_the_reference_serves_a_patch_version_and_names_unknown_tasks(server):
    done = send(server.url, user_message())["result"]["task"]
    patched = post(server.url, request(a2a.GET_TASK, {"id": done["id"]}), {a2a.VERSION_HEADER: "1.0.1"}).json()
    assert patched["result"]["id"] == done["id"]
    for method in (a2a.CANCEL_TASK, a2a.SUBSCRIBE_TO_TASK):
        assert code(post(server.url, request(method, {"id": "no-such-task"})).json()) == a2a.TASK_NOT_FOUND


def test_the_reference_filters_by_status_timestamp_inclusively(server):
    context = send(server.url, user_message())["result"]["task"]["contextId"]
    for _ in range(2):
        send(server.url, user_message(contextId=context))
    whole = post(server.url, request(a2a.LIST_TASKS, {"contextId": context})).json()["result"]["tasks"]
    middle = whole[1]["status"]["timestamp"]
    after = post(server.url, request(a2a.LIST_TASKS, {"contextId": context, "statusTimestampAfter": middle}))
    # the reference writes every timestamp alike (milliseconds, Z): as text they order as instants
    at_or_after = [t["id"] for t in whole if t["status"]["timestamp"] >= middle]
    assert [t["id"] for t in after.json()["result"]["tasks"]] == at_or_after and whole[1]["id"] in at_or_after


def test_the_reference_card_carries_a_oneof_as_protojson(server):
    card = httpx.get(server.url + a2a.CARD_PATH).json()
    assert list(card["securitySchemes"]["bearer"]) == ["httpAuthSecurityScheme"]
    assert "securityRequirements" not in card  # declared, never required


def test_the_faults_of_the_other_rules():
    with _with("wrong-code-cancel-unknown") as srv:
        assert code(post(srv.url, request(a2a.CANCEL_TASK, {"id": "nope"})).json()) == a2a.TASK_NOT_CANCELABLE
        assert code(post(srv.url, request(a2a.GET_TASK, {"id": "nope"})).json()) == a2a.TASK_NOT_FOUND
    with _with("wrong-code-subscribe-unknown") as srv:
        assert code(post(srv.url, request(a2a.SUBSCRIBE_TO_TASK, {"id": "nope"})).json()) == \
            a2a.UNSUPPORTED_OPERATION
    with _with("version-patch-refused") as srv:
        patched = post(srv.url, request(a2a.LIST_TASKS, {}), {a2a.VERSION_HEADER: "1.0.1"}).json()
        assert code(patched) == a2a.VERSION_NOT_SUPPORTED
        assert "result" in post(srv.url, request(a2a.LIST_TASKS, {})).json()
    with _with("message-role-defaulted") as srv:
        taken = send(srv.url, flawed({"role": "ROLE_SYSTEM"}, "ctx-x"))["result"]["task"]
        assert taken["history"][0]["role"] == a2a.ROLE_USER
        assert code(send(srv.url, flawed({"parts": None}, "ctx-x"))) == a2a.INVALID_PARAMS
    with _with("list-after-exclusive") as srv:
        task = send(srv.url, user_message())["result"]["task"]
        stamp = task["status"]["timestamp"]
        after = post(srv.url, request(a2a.LIST_TASKS, {"contextId": task["contextId"], "statusTimestampAfter": stamp}))
        assert after.json()["result"]["tasks"] == []
    with _with("card-oneof-internal") as srv:
        scheme = httpx.get(srv.url + a2a.CARD_PATH).json()["securitySchemes"]["bearer"]
        assert list(scheme) == ["scheme"] and list(scheme["scheme"]) == ["http_auth_security_scheme"]
    with _with("card-snake-case") as srv:
        assert "push_notifications" in httpx.get(srv.url + a2a.CARD_PATH).json()["capabilities"]
