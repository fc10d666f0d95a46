"""The reference agent's HTTP+JSON binding (reference/agent/rest.py), driven over real HTTP with plain httpx: every
route of A2A 1.0.1 §11.3, the query types of §11.5, the error form of §11.6, and each REST fault variant.

Independent of the suite's own client, as tests/e2e/test_reference.py is: the reference is what that client is
tested against.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from logs import script

from streamcert.framelog import END_CLOSED, Chunk, Event, Exchange, FrameLog
from streamcert.outcomes import Outcome
from streamcert.protocols import a2a, bindings
from streamcert.protocols.script import SCRIPT_KEY
from streamcert.reference.agent.server import ReferenceServer
from streamcert.reference.faults import FAULTS
from streamcert.rules import RuleContext, judge

REST = "/a2a/rest"
NO_STREAMING = "/agents/no-streaming"
HEADERS = {a2a.VERSION_HEADER: a2a.PROTOCOL_VERSION}
A2A_JSON = bindings.A2A_JSON_MEDIA_TYPE
SLOW = script({"status": "working"}, {"sleep": 5000}, {"finish": "too late"})
SHORT = script({"status": "one"}, {"sleep": 200}, {"artifact": {"artifactId": "a", "chunks": ["x", "y"]}},
               {"finish": "done"})


def message(steps: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"messageId": str(uuid.uuid4()), "role": a2a.ROLE_USER, "parts": [{"text": "go"}], **extra}
    if steps is not None:
        msg["metadata"] = {SCRIPT_KEY: steps}
    return msg


def call(base: str, method: str, path: str, body: Any = None, *, params: Any = None,
         headers: dict[str, str] | None = None, content: bytes | None = None, prefix: str = "") -> httpx.Response:
    return httpx.request(method, base + prefix + REST + path, json=body, params=params, content=content,
                         headers=HEADERS if headers is None else headers, timeout=10)


def answer(response: httpx.Response, status: int = 200) -> Any:
    """The JSON body of an answer that must have `status` and the binding's media type."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == A2A_JSON
    return response.json()


def status_error(code: int, message: str) -> dict[str, Any]:
    """google.rpc.Status JSON as the reference writes the error `code` (JSON-RPC number)."""
    grpc, http = bindings.forms_of(code)
    error: dict[str, Any] = {"code": http, "status": grpc, "message": message}
    if code in bindings.ERROR_FORMS:
        error["details"] = [{"@type": a2a.ERROR_INFO_TYPE, "reason": bindings.reason_of(code),
                             "domain": a2a.ERROR_DOMAIN}]
    return {"error": error}


def frames(response: httpx.Response) -> Iterator[Any]:
    """The data of each SSE event of a streamed answer, parsed."""
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith("data: "):
            data.append(line[6:])
        elif line == "" and data:
            yield json.loads("\n".join(data))
            data = []


def open_stream(client: httpx.Client, base: str, method: str, path: str, body: Any = None):
    return client.stream(method, base + REST + path, json=body, headers=HEADERS, timeout=10)


def streamed(base: str, method: str, path: str, body: Any = None) -> tuple[httpx.Response, list[Any]]:
    with httpx.Client() as client, open_stream(client, base, method, path, body) as response:
        return response, list(frames(response)) if response.status_code == 200 else []


@pytest.fixture(scope="module")
def server() -> Iterator[ReferenceServer]:
    with ReferenceServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def finished(server: ReferenceServer) -> dict[str, Any]:
    return answer(call(server.url, "POST", "/message:send", {"message": message(SHORT)}))["task"]


# -- the card -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("prefix", ["", NO_STREAMING])
def test_the_card_lists_http_json_right_after_jsonrpc(server: ReferenceServer, prefix: str) -> None:
    interfaces = httpx.get(server.url + prefix + a2a.CARD_PATH).json()["supportedInterfaces"]
    assert interfaces[:2] == [
        {"url": server.url + prefix + "/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": server.url + prefix + REST, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}]


# -- the routes -----------------------------------------------------------------------------------------

def test_send_message_answers_the_response_message_itself(finished: dict[str, Any]) -> None:
    assert finished["status"]["state"] == a2a.COMPLETED
    assert [m["role"] for m in finished["history"]][0] == a2a.ROLE_USER
    assert finished["artifacts"][0]["parts"] == [{"text": "xy"}]


def test_send_streaming_message_streams_bare_stream_responses(server: ReferenceServer) -> None:
    response, events = streamed(server.url, "POST", "/message:stream", {"message": message(SHORT)})
    assert response.status_code == 200 and response.headers["content-type"] == a2a.SSE_MEDIA_TYPE
    assert [next(iter(e)) for e in events] == ["task", "statusUpdate", "artifactUpdate", "artifactUpdate",
                                               "statusUpdate"]
    assert all(len(e) == 1 for e in events)  # no jsonrpc, id, result
    assert events[-1]["statusUpdate"]["status"]["state"] == a2a.COMPLETED


def test_get_task_reads_history_length_from_the_query(server: ReferenceServer, finished: dict[str, Any]) -> None:
    path = f"/tasks/{finished['id']}"
    assert answer(call(server.url, "GET", path))["history"] == finished["history"]
    assert "history" not in answer(call(server.url, "GET", path, params={"historyLength": "0"}))
    last = answer(call(server.url, "GET", path, params={"historyLength": "1"}))["history"]
    assert last == finished["history"][-1:]


def test_list_tasks_reads_every_query_parameter_as_its_json_type(server: ReferenceServer,
                                                                  finished: dict[str, Any]) -> None:
    context = finished["contextId"]
    other = message(SHORT, contextId=context)
    second = answer(call(server.url, "POST", "/message:send", {"message": other}))["task"]
    query = {"contextId": context, "status": a2a.COMPLETED, "pageSize": "1", "includeArtifacts": "true",
             "historyLength": "0", "statusTimestampAfter": finished["status"]["timestamp"]}
    page = answer(call(server.url, "GET", "/tasks", params=query))
    assert [t["id"] for t in page["tasks"]] == [second["id"]] and page["totalSize"] == 2 and page["pageSize"] == 1
    assert "artifacts" in page["tasks"][0] and "history" not in page["tasks"][0]
    rest = answer(call(server.url, "GET", "/tasks", params={**query, "pageToken": page["nextPageToken"]}))
    assert [t["id"] for t in rest["tasks"]] == [finished["id"]] and rest["nextPageToken"] == ""
    plain = answer(call(server.url, "GET", "/tasks", params={"contextId": context, "includeArtifacts": "false"}))
    assert len(plain["tasks"]) == 2 and all("artifacts" not in t for t in plain["tasks"])


@pytest.mark.parametrize("query, said", [
    ({"pageSize": "ten"}, "pageSize must be an integer in decimal, got 'ten'"),
    ({"includeArtifacts": "yes"}, "includeArtifacts must be true or false, got 'yes'"),
    ({"pageSize": "0"}, "pageSize must be between 1 and 100, got 0"),
    ([("contextId", "a"), ("contextId", "b")], "contextId is given 2 times; it takes one value"),
])
def test_a_query_that_does_not_read_is_invalid_params(server: ReferenceServer, query: Any, said: str) -> None:
    assert answer(call(server.url, "GET", "/tasks", params=query), 400) == status_error(a2a.INVALID_PARAMS, said)


def test_cancel_task_cancels_and_ends_the_stream(server: ReferenceServer) -> None:
    with httpx.Client() as client, open_stream(client, server.url, "POST", "/message:stream",
                                               {"message": message(SLOW)}) as response:
        events = frames(response)
        task = next(events)["task"]
        assert next(events)["statusUpdate"]["status"]["state"] == a2a.WORKING
        canceled = answer(call(server.url, "POST", f"/tasks/{task['id']}:cancel"))
        rest = list(events)
    assert canceled["id"] == task["id"] and canceled["status"]["state"] == a2a.CANCELED
    assert [r["statusUpdate"]["status"]["state"] for r in rest] == [a2a.CANCELED]


@pytest.mark.parametrize("method", bindings.SUBSCRIBE_METHODS)
def test_subscribe_is_served_by_post_and_by_get(server: ReferenceServer, method: str) -> None:
    with httpx.Client() as client, open_stream(client, server.url, "POST", "/message:stream",
                                               {"message": message(SHORT)}) as main:
        main_events = frames(main)
        task = next(main_events)["task"]
        assert next(main_events)["statusUpdate"]["status"]["state"] == a2a.WORKING
        with open_stream(client, server.url, method, f"/tasks/{task['id']}:subscribe") as sub:
            assert sub.status_code == 200 and sub.headers["content-type"] == a2a.SSE_MEDIA_TYPE
            sub_events = list(frames(sub))
        main_rest = list(main_events)
    assert sub_events[0]["task"]["id"] == task["id"] and sub_events[0]["task"]["status"]["state"] == a2a.WORKING
    assert sub_events[1:] == main_rest and main_rest[-1]["statusUpdate"]["status"]["state"] == a2a.COMPLETED


# -- errors ---------------------------------------------------------------------------------------------

def test_a2a_errors_are_google_rpc_status_with_their_http_status(server: ReferenceServer,
                                                                 finished: dict[str, Any]) -> None:
    done = finished["id"]
    not_found = status_error(a2a.TASK_NOT_FOUND, "No task with id 'nope'")
    assert answer(call(server.url, "GET", "/tasks/nope"), 404) == not_found
    assert answer(call(server.url, "POST", "/tasks/nope:cancel"), 404) == not_found
    assert answer(call(server.url, "POST", "/tasks/nope:subscribe"), 404) == not_found
    assert answer(call(server.url, "GET", "/tasks/nope:subscribe"), 404) == not_found
    assert answer(call(server.url, "POST", f"/tasks/{done}:cancel"), 400) == status_error(
        a2a.TASK_NOT_CANCELABLE, f"Task {done} is already {a2a.COMPLETED}")
    assert answer(call(server.url, "POST", f"/tasks/{done}:subscribe"), 400) == status_error(
        a2a.UNSUPPORTED_OPERATION, f"Task {done} is already {a2a.COMPLETED}")
    to_ended = {"message": message(taskId=done)}
    assert answer(call(server.url, "POST", "/message:send", to_ended), 400)["error"]["details"][0]["reason"] == \
        "UNSUPPORTED_OPERATION"


def test_a_percent_encoded_id_is_read_whole(server: ReferenceServer) -> None:
    assert answer(call(server.url, "GET", "/tasks/a%3Ab%2Fc"), 404)["error"]["message"] == "No task with id 'a:b/c'"
    assert answer(call(server.url, "POST", "/tasks/a%3Acancel:cancel"), 404)["error"]["message"] == \
        "No task with id 'a:cancel'"


def test_the_version_header_is_checked(server: ReferenceServer) -> None:
    refused = answer(call(server.url, "GET", "/tasks", headers={}), 400)
    assert refused["error"]["details"][0]["reason"] == "VERSION_NOT_SUPPORTED"
    assert refused["error"]["status"] == "FAILED_PRECONDITION"
    answer(call(server.url, "GET", "/tasks", headers={a2a.VERSION_HEADER: "1.0.1"}))


def test_generic_errors_carry_no_error_info(server: ReferenceServer) -> None:
    assert answer(call(server.url, "POST", "/message:send", content=b"{not json"), 400) == status_error(
        a2a.PARSE_ERROR, "The request body is not valid JSON")
    assert answer(call(server.url, "POST", "/message:send", content=b"[1]"), 400)["error"] == {
        "code": 400, "status": "INVALID_ARGUMENT",
        "message": "The request body must be a JSON object (the operation's request message)"}
    assert answer(call(server.url, "POST", "/message:send", {}), 400) == status_error(
        a2a.INVALID_PARAMS, "message must be an object")


def test_a_path_no_route_serves_is_404_and_a_wrong_method_405(server: ReferenceServer) -> None:
    assert answer(call(server.url, "GET", "/tasks/x/artifacts"), 404) == {"error": {
        "code": 404, "status": "UNIMPLEMENTED", "message": "No HTTP+JSON route serves GET /tasks/x/artifacts"}}
    wrong = call(server.url, "DELETE", "/tasks/x")
    assert answer(wrong, 405) == {"error": {"code": 405, "status": "UNIMPLEMENTED",
                                            "message": "DELETE is not served here; this route takes GET"}}
    assert wrong.headers["allow"] == "GET"
    assert call(server.url, "GET", "/message:send").headers["allow"] == "POST"


@pytest.mark.parametrize("method, path, code", [
    ("POST", "/tasks/x/pushNotificationConfigs", a2a.PUSH_NOT_SUPPORTED),
    ("GET", "/tasks/x/pushNotificationConfigs", a2a.PUSH_NOT_SUPPORTED),
    ("GET", "/tasks/x/pushNotificationConfigs/c", a2a.PUSH_NOT_SUPPORTED),
    ("DELETE", "/tasks/x/pushNotificationConfigs/c", a2a.PUSH_NOT_SUPPORTED),
    ("GET", "/extendedAgentCard", a2a.UNSUPPORTED_OPERATION)])
def test_undeclared_capabilities_are_refused_at_their_routes(server: ReferenceServer, method: str, path: str,
                                                             code: int) -> None:
    """The card declares neither push notifications nor an extended card: served routes, refused (§3.3.4)."""
    body = {"url": "https://push.invalid/x"} if method == "POST" else None
    got = answer(call(server.url, method, path, body), 400)
    assert got["error"]["details"][0]["reason"] == bindings.reason_of(code)


def test_activated_extensions_are_echoed(server: ReferenceServer) -> None:
    uri = a2a.EXTENSIONS_HEADER
    declared = httpx.get(server.url + a2a.CARD_PATH).json()["capabilities"]["extensions"][0]["uri"]
    response = call(server.url, "GET", "/tasks/nope", headers={**HEADERS, uri: f"{declared}, urn:other"})
    assert response.headers[uri] == declared


def test_the_no_streaming_agent_refuses_streams(server: ReferenceServer, finished: dict[str, Any]) -> None:
    refused = call(server.url, "POST", "/message:stream", {"message": message()}, prefix=NO_STREAMING)
    assert answer(refused, 400)["error"]["details"][0]["reason"] == "UNSUPPORTED_OPERATION"


# -- fault variants -------------------------------------------------------------------------------------

def _setup(srv: ReferenceServer) -> str:
    """A completed task on `srv`: its id."""
    return answer(call(srv.url, "POST", "/message:send", {"message": message()}))["task"]["id"]


def test_fault_rest_subscribe_missing() -> None:
    with ReferenceServer(fault="rest-subscribe-missing") as srv:
        done = _setup(srv)
        for method in ("POST", "GET"):
            error = answer(call(srv.url, method, f"/tasks/{done}:subscribe"), 404)["error"]
            assert "details" not in error and error["status"] == "UNIMPLEMENTED"
        answer(call(srv.url, "GET", f"/tasks/{done}"))


def test_fault_rest_jsonrpc_envelope() -> None:
    with ReferenceServer(fault="rest-jsonrpc-envelope") as srv:
        with httpx.Client() as client, open_stream(client, srv.url, "POST", "/message:stream",
                                                   {"message": message(SLOW)}) as response:
            events = frames(response)
            task = next(events)["task"]  # streams stay bare
            next(events)
            wrapped = answer(call(srv.url, "POST", f"/tasks/{task['id']}:cancel"))
        assert set(wrapped) == {"jsonrpc", "id", "result"} and wrapped["result"]["status"]["state"] == a2a.CANCELED
        assert answer(call(srv.url, "GET", f"/tasks/{task['id']}"))["id"] == task["id"]


def test_fault_rest_unwrapped_events() -> None:
    with ReferenceServer(fault="rest-unwrapped-events") as srv:
        response, events = streamed(srv.url, "POST", "/message:stream", {"message": message(SHORT)})
        assert response.status_code == 200 and len(events) == 5
        assert {"id", "contextId", "status"} <= set(events[0])  # the Task itself
        assert {"taskId", "status"} <= set(events[1]) and {"taskId", "artifact"} <= set(events[2])
        assert not any(set(e) & set(a2a.STREAM_RESULT_KINDS) for e in events)
        assert "task" in answer(call(srv.url, "POST", "/message:send", {"message": message()}))  # unary: untouched


def test_fault_rest_cancel_accepted_empty() -> None:
    with ReferenceServer(fault="rest-cancel-accepted-empty") as srv:
        with httpx.Client() as client, open_stream(client, srv.url, "POST", "/message:stream",
                                                   {"message": message(SLOW)}) as response:
            events = frames(response)
            task = next(events)["task"]
            accepted = call(srv.url, "POST", f"/tasks/{task['id']}:cancel")
            assert accepted.status_code == 202 and accepted.content == b""
            assert [e for e in events][-1]["statusUpdate"]["status"]["state"] == a2a.CANCELED
        done = _setup(srv)
        answer(call(srv.url, "POST", f"/tasks/{done}:cancel"), 400)  # a refusal is still google.rpc.Status


def test_fault_rest_json_content_type() -> None:
    with ReferenceServer(fault="rest-json-content-type") as srv:
        done = call(srv.url, "POST", "/message:send", {"message": message()}).json()["task"]["id"]
        for response in (call(srv.url, "GET", f"/tasks/{done}"), call(srv.url, "GET", "/tasks/nope")):
            assert response.headers["content-type"] == a2a.JSON_MEDIA_TYPE


def test_fault_rest_wrong_error_status() -> None:
    with ReferenceServer(fault="rest-wrong-error-status") as srv:
        done = _setup(srv)
        error = answer(call(srv.url, "POST", f"/tasks/{done}:cancel"), 409)["error"]
        assert error["code"] == 409 and error["details"][0]["reason"] == "TASK_NOT_CANCELABLE"
        answer(call(srv.url, "GET", "/tasks/nope"), 404)


def test_fault_rest_status_jsonrpc_code() -> None:
    with ReferenceServer(fault="rest-status-jsonrpc-code") as srv:
        error = answer(call(srv.url, "GET", "/tasks/nope"), 404)["error"]
        assert error["code"] == a2a.TASK_NOT_FOUND and error["details"][0]["reason"] == "TASK_NOT_FOUND"


def test_fault_rest_no_errorinfo() -> None:
    with ReferenceServer(fault="rest-no-errorinfo") as srv:
        done = _setup(srv)
        error = answer(call(srv.url, "POST", f"/tasks/{done}:cancel"), 400)["error"]
        assert "details" not in error and error["status"] == "FAILED_PRECONDITION"
        assert answer(call(srv.url, "GET", "/tasks/nope"), 404) == status_error(a2a.TASK_NOT_FOUND,
                                                                                "No task with id 'nope'")


def test_the_shared_faults_act_on_http_json_too() -> None:
    with ReferenceServer(fault="no-stream") as srv:
        streamed_as_json = answer(call(srv.url, "POST", "/message:stream", {"message": message()}))
        assert streamed_as_json["task"]["status"]["state"] == a2a.COMPLETED
    with ReferenceServer(fault="wrong-code-not-found") as srv:
        assert answer(call(srv.url, "GET", "/tasks/nope"), 500)["error"]["status"] == "INTERNAL"
    with ReferenceServer(fault="version-ignored") as srv:
        answer(call(srv.url, "GET", "/tasks", headers={}))


def test_the_card_faults_still_do_what_they_say() -> None:
    with ReferenceServer(fault="card-no-jsonrpc") as srv:
        interfaces = httpx.get(srv.url + a2a.CARD_PATH).json()["supportedInterfaces"]
        assert [i["protocolBinding"] for i in interfaces] == ["GRPC"]
    with ReferenceServer(fault="card-old-version") as srv:
        interfaces = httpx.get(srv.url + a2a.CARD_PATH).json()["supportedInterfaces"]
        assert {i["protocolVersion"] for i in interfaces} == {"0.3"} and interfaces[0]["protocolBinding"] == "JSONRPC"


# -- the REST rules on the reference's own answers --------------------------------------------------------

def _exchange(label: str, op: str, response: httpx.Response) -> Exchange:
    """A frame-log exchange of a whole answer, as the capture would record it (events parsed for a stream)."""
    body = response.content
    events = []
    if response.headers.get("content-type") == a2a.SSE_MEDIA_TYPE:
        blocks = [b for b in body.decode("utf-8").split("\n\n") if b.startswith("data: ")]
        events = [Event(index=i, t=0.01 * i, data=b[len("data: "):]) for i, b in enumerate(blocks)]
    return Exchange(label=label, method=response.request.method, url=str(response.request.url), rpc_method=op,
                    status=response.status_code, response_headers={k.lower(): v for k, v in response.headers.items()},
                    t_end=0.1, end=END_CLOSED, chunks=[Chunk(0.05, body)] if body else [], events=events,
                    binding=bindings.HTTP_JSON)


def rest_run(fault: str | None) -> FrameLog:
    """Every route once on a reference server running `fault`, and the refusals the errors scenario asks."""
    log = FrameLog(scenario="rest-routes")
    with ReferenceServer(fault=fault) as srv, httpx.Client(headers=HEADERS, timeout=10) as client:
        base = srv.url + REST

        def add(label: str, op: str, method: str, path: str, body: Any = None, **kw: Any) -> httpx.Response:
            response = client.request(method, base + path, json=body, **kw)
            log.add(_exchange(label, op, response))
            return response

        done = add("send", a2a.SEND_MESSAGE, "POST", "/message:send", {"message": message()}).json()["task"]["id"]
        add("stream", a2a.SEND_STREAMING_MESSAGE, "POST", "/message:stream", {"message": message(SHORT)})
        add("get_task", a2a.GET_TASK, "GET", f"/tasks/{done}", params={"historyLength": "1"})
        add("list", a2a.LIST_TASKS, "GET", "/tasks", params={"pageSize": "2"})
        with client.stream("POST", base + "/message:stream", json={"message": message(SHORT)}) as short:
            live = _task_id(next(frames(short)))
            add("subscribe", a2a.SUBSCRIBE_TO_TASK, "POST", f"/tasks/{live}:subscribe")  # to the task's end
        with client.stream("POST", base + "/message:stream", json={"message": message(SLOW)}) as slow:
            running = _task_id(next(frames(slow)))
            add("cancel", a2a.CANCEL_TASK, "POST", f"/tasks/{running}:cancel")
        add("subscribe_terminal", a2a.SUBSCRIBE_TO_TASK, "POST", f"/tasks/{done}:subscribe")
        add("get_unknown", a2a.GET_TASK, "GET", "/tasks/no-such-task")
        add("cancel_terminal", a2a.CANCEL_TASK, "POST", f"/tasks/{done}:cancel")
    return log


def _task_id(first: dict[str, Any]) -> str:
    """The id of the Task a stream begins with (under rest-unwrapped-events the Task comes bare)."""
    return first["task"]["id"] if "task" in first else first["id"]


REST_FAULT_NAMES = [name for name, fault in FAULTS.items() if fault.binding == bindings.HTTP_JSON]
REST_IDS = [f"REST-{n:03d}" for n in range(1, 7)]


@pytest.mark.parametrize("fault", [None, *REST_FAULT_NAMES])
def test_the_rest_rules_catch_each_rest_fault_and_pass_the_reference(fault: str | None) -> None:
    findings = judge(rest_run(fault), REST_IDS, RuleContext())
    flagged = {f.req_id for f in findings if f.outcome not in (Outcome.PASS, Outcome.UNSUPPORTED)}
    expected = set(FAULTS[fault].catches) & set(REST_IDS) if fault else set()
    assert flagged == expected, [(f.req_id, f.outcome.value, f.message) for f in findings if f.req_id in flagged]
    assert {f.req_id for f in findings} == set(REST_IDS)  # every requirement judged
