"""The embedded reference agent, driven over real HTTP with plain httpx.

Deliberately independent of the suite's own client and SSE parser: the reference is what those are
tested against, so it must be checked by something else.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from logs import script

from streamcert.catalogue import load_catalogue
from streamcert.protocols import a2a, interactions_v1, progress_v1
from streamcert.protocols.script import SCRIPT_KEY
from streamcert.reference.agent.app import create_app
from streamcert.reference.agent.server import ReferenceServer
from streamcert.reference.faults import FAULTS, describe_faults

RPC = "/a2a/jsonrpc"
NO_STREAMING = "/agents/no-streaming"
HEADERS = {a2a.VERSION_HEADER: a2a.PROTOCOL_VERSION}
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
LOG_CHUNKS = [
    "collected 12 items\n",
    "tests/test_api.py ........ [66%]\n",
    "tests/test_refund.py ..F. [100%]\n",
    "FAILED tests/test_refund.py::test_partial_refund\n",
    "1 failed, 11 passed in 2.31s\n",
]
STREAM_BASIC = {"version": 1, "name": "stream-basic", "steps": [
    {"status": "Checking out 9f3c2e1 and starting the suite"},
    {"artifact": {"artifactId": "test-log", "name": "test-log.txt", "chunks": LOG_CHUNKS}},
    {"artifact": {"artifactId": "summary", "name": "summary.json", "data": {"passed": 11, "failed": 1}}},
    {"finish": "1 failed, 11 passed"},
]}


def message(text: str = "Run the unit tests for payments-api at commit 9f3c2e1",
            steps: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"messageId": str(uuid.uuid4()), "role": a2a.ROLE_USER, "parts": [{"text": text}]}
    if steps is not None:
        msg["metadata"] = {SCRIPT_KEY: steps}
    msg.update(extra)
    return msg


def post(base: str, method: str, params: Any = None, rpc_id: Any = 1,
         headers: dict[str, str] | None = None) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": params or {}}
    return httpx.post(base + RPC, json=body, headers=HEADERS if headers is None else headers, timeout=10)


def call(base: str, method: str, params: Any = None, **kw: Any) -> dict[str, Any]:
    response = post(base, method, params, **kw)
    assert response.headers["content-type"] == "application/json"
    return response.json()


def result(base: str, method: str, params: Any = None) -> Any:
    body = call(base, method, params)
    assert "error" not in body, body
    return body["result"]


def error_code(body: dict[str, Any]) -> int:
    assert "result" not in body, body
    return body["error"]["code"]


def frames(text: str) -> list[Any]:
    """The events of a whole LF-only SSE body: parsed JSON for data events, "ping" for comments."""
    out: list[Any] = []
    for block in text.split("\n\n"):
        if not block:
            continue
        if block.startswith(":"):
            out.append("ping")
            continue
        data = "\n".join(line[6:] for line in block.split("\n") if line.startswith("data: "))
        out.append(json.loads(data))
    return out


def iter_frames(response: httpx.Response) -> Iterator[Any]:
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith(":"):
            yield "ping"
        elif line.startswith("data: "):
            data.append(line[6:])
        elif line == "" and data:
            yield json.loads("\n".join(data))
            data = []


def stream(base: str, msg: dict[str, Any], rpc_id: Any = 1) -> tuple[httpx.Response, list[Any]]:
    body = {"jsonrpc": "2.0", "id": rpc_id, "method": a2a.SEND_STREAMING_MESSAGE, "params": {"message": msg}}
    response = httpx.post(base + RPC, json=body, headers=HEADERS, timeout=10)
    is_sse = response.headers.get("content-type") == a2a.SSE_MEDIA_TYPE
    return response, frames(response.text) if is_sse else []


def results(events: list[Any]) -> list[dict[str, Any]]:
    return [event["result"] for event in events if event != "ping"]


@pytest.fixture(scope="module")
def server() -> Iterator[ReferenceServer]:
    with ReferenceServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def basic_run(server: ReferenceServer) -> tuple[httpx.Response, list[dict[str, Any]]]:
    response, events = stream(server.url, message(steps=STREAM_BASIC), rpc_id=7)
    return response, events


# -- agent card ------------------------------------------------------------------------------------


def test_card_has_every_required_field(server: ReferenceServer) -> None:
    response = httpx.get(server.url + a2a.CARD_PATH)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    card = response.json()
    for key in ("name", "description", "version", "supportedInterfaces", "capabilities",
                "defaultInputModes", "defaultOutputModes", "skills"):
        assert key in card, key
    interfaces = card["supportedInterfaces"]
    assert [i["protocolBinding"] for i in interfaces] == ["JSONRPC", "HTTP+JSON", "GRPC"]
    assert interfaces[:2] == [
        {"url": server.url + RPC, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": server.url + "/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}]
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", interfaces[2]["url"]) and interfaces[2]["protocolVersion"] == "1.0"
    caps = card["capabilities"]
    assert caps["streaming"] is True and caps["pushNotifications"] is False
    assert [e["uri"] for e in caps["extensions"]] == [progress_v1.URI, interactions_v1.URI]
    assert all(e["required"] is False and e["description"] for e in caps["extensions"])
    skill = card["skills"][0]
    assert skill["id"] and skill["name"] and skill["description"] and skill["tags"]


def test_no_streaming_agent_has_its_own_card(server: ReferenceServer) -> None:
    card = httpx.get(server.url + NO_STREAMING + a2a.CARD_PATH).json()
    assert card["capabilities"]["streaming"] is False
    assert card["supportedInterfaces"][0]["url"] == server.url + NO_STREAMING + RPC


# -- the streamed task of seed 001 -----------------------------------------------------------------


def test_stream_basic_frames(basic_run: tuple[httpx.Response, list[Any]]) -> None:
    response, events = basic_run
    assert response.status_code == 200
    assert response.headers["content-type"] == a2a.SSE_MEDIA_TYPE
    assert all(e["jsonrpc"] == "2.0" and e["id"] == 7 and set(e) == {"jsonrpc", "id", "result"} for e in events)
    res = results(events)
    assert all(len(r) == 1 for r in res)  # exactly one of task, message, statusUpdate, artifactUpdate
    assert [next(iter(r)) for r in res] == ["task", "statusUpdate"] + ["artifactUpdate"] * 6 + ["statusUpdate"]
    task = res[0]["task"]
    uuid.UUID(task["id"]), uuid.UUID(task["contextId"])
    assert task["status"]["state"] == a2a.SUBMITTED and TIMESTAMP.fullmatch(task["status"]["timestamp"])
    (copy_,) = task["history"]
    assert copy_["taskId"] == task["id"] and copy_["contextId"] == task["contextId"]
    for r in res[1:]:
        body = next(iter(r.values()))
        assert (body["taskId"], body["contextId"]) == (task["id"], task["contextId"])
    working = res[1]["statusUpdate"]["status"]
    assert working["state"] == a2a.WORKING and TIMESTAMP.fullmatch(working["timestamp"])
    assert working["message"]["role"] == a2a.ROLE_AGENT
    assert working["message"]["parts"] == [{"text": "Checking out 9f3c2e1 and starting the suite"}]
    chunks = [r["artifactUpdate"] for r in res[2:7]]
    assert [c["artifact"]["parts"][0]["text"] for c in chunks] == LOG_CHUNKS
    assert "append" not in chunks[0] and all(c["append"] is True for c in chunks[1:])
    assert [c.get("lastChunk", False) for c in chunks] == [False] * 4 + [True]
    assert chunks[0]["artifact"]["name"] == "test-log.txt" and all("name" not in c["artifact"] for c in chunks[1:])
    summary = res[7]["artifactUpdate"]
    assert summary["lastChunk"] is True and summary["artifact"]["name"] == "summary.json"
    assert summary["artifact"]["parts"] == [{"data": {"passed": 11, "failed": 1}, "mediaType": "application/json"}]
    done = res[8]["statusUpdate"]["status"]
    assert done["state"] == a2a.COMPLETED and done["message"]["parts"] == [{"text": "1 failed, 11 passed"}]


def test_get_task_agrees_with_the_stream(server: ReferenceServer, basic_run: Any) -> None:
    task_id = results(basic_run[1])[0]["task"]["id"]
    task = result(server.url, a2a.GET_TASK, {"id": task_id})
    assert task["status"]["state"] == a2a.COMPLETED
    assert task["status"]["message"] == results(basic_run[1])[-1]["statusUpdate"]["status"]["message"]
    log, summary = task["artifacts"]
    assert log == {"artifactId": "test-log", "name": "test-log.txt", "parts": [{"text": "".join(LOG_CHUNKS)}]}
    assert summary["parts"][0]["data"] == {"passed": 11, "failed": 1}
    assert [m["role"] for m in task["history"]] == [a2a.ROLE_USER, a2a.ROLE_AGENT, a2a.ROLE_AGENT]
    assert "history" not in result(server.url, a2a.GET_TASK, {"id": task_id, "historyLength": 0})
    last = result(server.url, a2a.GET_TASK, {"id": task_id, "historyLength": 1})["history"]
    assert last == [task["status"]["message"]]


def test_list_tasks(server: ReferenceServer, basic_run: Any) -> None:
    first = results(basic_run[1])[0]["task"]
    other = result(server.url, a2a.SEND_MESSAGE, {"message": message(contextId="ctx-other")})["task"]
    listed = result(server.url, a2a.LIST_TASKS, {})
    assert set(listed) == {"tasks", "nextPageToken", "pageSize", "totalSize"}
    assert listed["nextPageToken"] == "" and listed["pageSize"] == 50
    ids = [t["id"] for t in listed["tasks"]]
    assert first["id"] in ids and ids.index(other["id"]) < ids.index(first["id"])  # newest first
    stamps = [t["status"]["timestamp"] for t in listed["tasks"]]
    assert stamps == sorted(stamps, reverse=True)
    assert all("artifacts" not in t for t in listed["tasks"])
    with_artifacts = result(server.url, a2a.LIST_TASKS, {"contextId": first["contextId"], "includeArtifacts": True})
    assert [t["id"] for t in with_artifacts["tasks"]] == [first["id"]] and with_artifacts["tasks"][0]["artifacts"]
    by_state = result(server.url, a2a.LIST_TASKS, {"status": a2a.FAILED})
    assert by_state["tasks"] == [] and by_state["totalSize"] == 0
    seen, token = [], ""
    while True:
        page = result(server.url, a2a.LIST_TASKS, {"pageSize": 1, "pageToken": token, "historyLength": 0})
        assert len(page["tasks"]) == 1 and page["totalSize"] == len(ids) and "history" not in page["tasks"][0]
        seen.append(page["tasks"][0]["id"])
        token = page["nextPageToken"]
        if not token:
            break
    assert seen == ids


def test_list_tasks_rejects_bad_page_size(server: ReferenceServer) -> None:
    for size in (0, 101, "5"):
        assert error_code(call(server.url, a2a.LIST_TASKS, {"pageSize": size})) == a2a.INVALID_PARAMS


def test_blocking_send_and_return_immediately(server: ReferenceServer) -> None:
    done = result(server.url, a2a.SEND_MESSAGE, {"message": message(steps=STREAM_BASIC)})["task"]
    assert done["status"]["state"] == a2a.COMPLETED and len(done["artifacts"]) == 2
    early = result(server.url, a2a.SEND_MESSAGE, {"message": message(steps=script({"sleep": 50}, {"finish": "ok"})),
                                                  "configuration": {"returnImmediately": True}})["task"]
    assert early["status"]["state"] == a2a.SUBMITTED


def test_no_script_and_unknown_step(server: ReferenceServer) -> None:
    plain = result(server.url, a2a.SEND_MESSAGE, {"message": message()})["task"]
    assert plain["status"]["state"] == a2a.COMPLETED
    assert plain["status"]["message"]["parts"][0]["text"] == "No script: nothing to do"
    odd = result(server.url, a2a.SEND_MESSAGE, {"message": message(steps=script({"status": "hi"}, {"dance": 1}))})
    status = odd["task"]["status"]
    assert status["state"] == a2a.FAILED and "'dance'" in status["message"]["parts"][0]["text"]
    unfinished = result(server.url, a2a.SEND_MESSAGE, {"message": message(steps=script({"status": "hi"}))})
    assert unfinished["task"]["status"]["state"] == a2a.FAILED


def test_follow_up_message_is_recorded(server: ReferenceServer) -> None:
    started = result(server.url, a2a.SEND_MESSAGE, {
        "message": message(steps=script({"sleep": 300}, {"finish": "ok"})),
        "configuration": {"returnImmediately": True}})["task"]
    follow = message("more", taskId=started["id"], contextId=started["contextId"])
    done = result(server.url, a2a.SEND_MESSAGE, {"message": follow})["task"]
    assert done["status"]["state"] == a2a.COMPLETED
    assert follow["messageId"] in [m["messageId"] for m in done["history"]]


# -- cancel and subscribe --------------------------------------------------------------------------


def open_stream(client: httpx.Client, base: str, method: str, params: dict[str, Any],
                timeout: httpx.Timeout | float = 10):
    body = {"jsonrpc": "2.0", "id": 3, "method": method, "params": params}
    return client.stream("POST", base + RPC, json=body, headers=HEADERS, timeout=timeout)


def test_cancel_ends_the_stream(server: ReferenceServer) -> None:
    slow = script({"status": "working"}, {"sleep": 5000}, {"finish": "too late"})
    with httpx.Client() as client, open_stream(client, server.url, a2a.SEND_STREAMING_MESSAGE,
                                               {"message": message(steps=slow)}) as response:
        events = iter_frames(response)
        task = next(events)["result"]["task"]
        assert next(events)["result"]["statusUpdate"]["status"]["state"] == a2a.WORKING
        canceled = result(server.url, a2a.CANCEL_TASK, {"id": task["id"]})
        assert canceled["status"]["state"] == a2a.CANCELED
        rest = [e["result"] for e in events]
    assert [r["statusUpdate"]["status"]["state"] for r in rest] == [a2a.CANCELED]
    assert result(server.url, a2a.GET_TASK, {"id": task["id"]})["status"]["state"] == a2a.CANCELED


def test_subscribe_sees_the_task_then_the_same_events(server: ReferenceServer) -> None:
    steps = script({"status": "one"}, {"sleep": 150}, {"artifact": {"artifactId": "a", "chunks": ["x", "y"]}},
                   {"finish": "done"})
    with httpx.Client() as client, open_stream(client, server.url, a2a.SEND_STREAMING_MESSAGE,
                                               {"message": message(steps=steps)}) as main:
        main_events = iter_frames(main)
        task = next(main_events)["result"]["task"]
        assert next(main_events)["result"]["statusUpdate"]["status"]["state"] == a2a.WORKING
        with open_stream(client, server.url, a2a.SUBSCRIBE_TO_TASK, {"id": task["id"]}) as sub:
            sub_results = [e["result"] for e in iter_frames(sub)]
        main_results = [e["result"] for e in main_events]
    assert sub_results[0]["task"]["id"] == task["id"]
    assert sub_results[0]["task"]["status"]["state"] == a2a.WORKING
    assert sub_results[1:] == main_results
    assert main_results[-1]["statusUpdate"]["status"]["state"] == a2a.COMPLETED


# -- errors ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished(server: ReferenceServer) -> dict[str, Any]:
    return result(server.url, a2a.SEND_MESSAGE, {"message": message()})["task"]


def raw(base: str, content: bytes, headers: dict[str, str] | None = None) -> dict[str, Any]:
    response = httpx.post(base + RPC, content=content, headers={**HEADERS, **(headers or {})})
    assert response.headers["content-type"] == "application/json"
    return response.json()


def test_protocol_errors(server: ReferenceServer) -> None:
    parse = raw(server.url, b"{not json")
    assert error_code(parse) == a2a.PARSE_ERROR and parse["id"] is None
    assert error_code(raw(server.url, b"[]")) == a2a.INVALID_REQUEST
    assert error_code(raw(server.url, b'{"jsonrpc": "1.0", "id": 1, "method": "GetTask"}')) == a2a.INVALID_REQUEST
    unknown = call(server.url, "message/stream", {}, rpc_id="abc")
    assert error_code(unknown) == a2a.METHOD_NOT_FOUND and unknown["id"] == "abc"


@pytest.mark.parametrize("params", [
    {},
    {"message": "hello"},
    {"message": {"role": a2a.ROLE_USER, "parts": [{"text": "x"}]}},
    {"message": {"messageId": "m", "role": a2a.ROLE_USER}},
    {"message": {"messageId": "m", "role": a2a.ROLE_USER, "parts": []}},
    {"message": {"messageId": "m", "role": "user", "parts": [{"text": "x"}]}},
    {"message": {"messageId": "m", "role": a2a.ROLE_USER, "parts": [{"kind": "text", "text": 3}]}},
    {"message": {"messageId": 5, "role": a2a.ROLE_USER, "parts": [{"text": "x"}]}},
])
def test_invalid_message_params(server: ReferenceServer, params: dict[str, Any]) -> None:
    assert error_code(call(server.url, a2a.SEND_MESSAGE, params)) == a2a.INVALID_PARAMS


def test_task_errors(server: ReferenceServer, finished: dict[str, Any]) -> None:
    assert error_code(call(server.url, a2a.GET_TASK, {"id": "no-such-task"})) == a2a.TASK_NOT_FOUND
    assert error_code(call(server.url, a2a.GET_TASK, {"id": 12})) == a2a.INVALID_PARAMS
    assert error_code(call(server.url, a2a.GET_TASK, {"id": finished["id"], "historyLength": -1})) == \
        a2a.INVALID_PARAMS
    assert error_code(call(server.url, a2a.CANCEL_TASK, {"id": finished["id"]})) == a2a.TASK_NOT_CANCELABLE
    late = message(taskId=finished["id"], contextId=finished["contextId"])
    assert error_code(call(server.url, a2a.SEND_MESSAGE, {"message": late})) == a2a.UNSUPPORTED_OPERATION
    assert error_code(call(server.url, a2a.SEND_MESSAGE, {"message": message(taskId="nope")})) == a2a.TASK_NOT_FOUND
    sub = post(server.url, a2a.SUBSCRIBE_TO_TASK, {"id": finished["id"]})
    assert sub.headers["content-type"] == "application/json"
    assert error_code(sub.json()) == a2a.UNSUPPORTED_OPERATION


def test_cross_context_task_id_is_rejected(server: ReferenceServer) -> None:
    running = result(server.url, a2a.SEND_MESSAGE, {
        "message": message(steps=script({"sleep": 300}, {"finish": "ok"})),
        "configuration": {"returnImmediately": True}})["task"]
    wrong = message(taskId=running["id"], contextId="some-other-context")
    assert error_code(call(server.url, a2a.SEND_MESSAGE, {"message": wrong})) == a2a.INVALID_PARAMS


def test_error_data_is_error_info(server: ReferenceServer) -> None:
    error = call(server.url, a2a.GET_TASK, {"id": "no-such-task"})["error"]
    assert error["data"] == [{"@type": a2a.ERROR_INFO_TYPE, "reason": "TASK_NOT_FOUND", "domain": a2a.ERROR_DOMAIN}]


@pytest.mark.parametrize("version", [None, "", "0.3", "2.0", "1"])
def test_unsupported_version(server: ReferenceServer, version: str | None) -> None:
    headers = {} if version is None else {a2a.VERSION_HEADER: version}
    assert error_code(call(server.url, a2a.LIST_TASKS, {}, headers=headers)) == a2a.VERSION_NOT_SUPPORTED


def test_patch_version_is_accepted(server: ReferenceServer) -> None:
    assert "result" in call(server.url, a2a.LIST_TASKS, {}, headers={a2a.VERSION_HEADER: "1.0.1"})


def test_extensions_are_echoed(server: ReferenceServer) -> None:
    asked = f"{interactions_v1.URI}, https://example.com/unknown/v1"
    response = post(server.url, a2a.LIST_TASKS, {}, headers={**HEADERS, a2a.EXTENSIONS_HEADER: asked})
    assert response.headers[a2a.EXTENSIONS_HEADER] == interactions_v1.URI
    assert a2a.EXTENSIONS_HEADER not in post(server.url, a2a.LIST_TASKS, {}).headers


def test_no_streaming_agent_refuses_streams(server: ReferenceServer, finished: dict[str, Any]) -> None:
    base = server.url + NO_STREAMING
    refused = post(base, a2a.SEND_STREAMING_MESSAGE, {"message": message()})
    assert refused.headers["content-type"] == "application/json"
    assert error_code(refused.json()) == a2a.UNSUPPORTED_OPERATION
    task = result(base, a2a.SEND_MESSAGE, {"message": message()})["task"]
    assert task["status"]["state"] == a2a.COMPLETED
    assert error_code(call(base, a2a.SUBSCRIBE_TO_TASK, {"id": task["id"]})) == a2a.UNSUPPORTED_OPERATION
    # The agents keep separate stores.
    assert error_code(call(base, a2a.GET_TASK, {"id": finished["id"]})) == a2a.TASK_NOT_FOUND


def test_required_extension_agent_refuses_a_request_that_does_not_activate_it(server: ReferenceServer) -> None:
    base = server.url + "/agents/required-extension"
    card = httpx.get(base + a2a.CARD_PATH).json()
    assert {e["uri"]: e["required"] for e in card["capabilities"]["extensions"]} == {
        progress_v1.URI: True, interactions_v1.URI: False}
    refused = call(base, a2a.SEND_MESSAGE, {"message": message()})
    assert error_code(refused) == a2a.EXTENSION_SUPPORT_REQUIRED and progress_v1.URI in refused["error"]["message"]
    other = post(base, a2a.GET_TASK, {"id": "nope"}, headers={**HEADERS, a2a.EXTENSIONS_HEADER: interactions_v1.URI})
    assert error_code(other.json()) == a2a.EXTENSION_SUPPORT_REQUIRED  # another extension is not the one required
    served = post(base, a2a.GET_TASK, {"id": "nope"}, headers={**HEADERS, a2a.EXTENSIONS_HEADER: progress_v1.URI})
    assert error_code(served.json()) == a2a.TASK_NOT_FOUND  # activated: the request is served
    # the root agent requires none
    assert all(e["required"] is False for e in httpx.get(server.url + a2a.CARD_PATH).json()["capabilities"]["extensions"])


def test_reference_reads_a_proto_field_name_on_both_json_bindings(server: ReferenceServer) -> None:
    mine = result(server.url, a2a.SEND_MESSAGE, {"message": message()})["task"]
    result(server.url, a2a.SEND_MESSAGE, {"message": message()})  # another context
    listed = result(server.url, a2a.LIST_TASKS, {"context_id": mine["contextId"], "page_size": 5})
    assert [t["id"] for t in listed["tasks"]] == [mine["id"]] and listed["pageSize"] == 5
    rest = httpx.get(server.url + "/a2a/rest/tasks", params={"context_id": mine["contextId"], "page_size": "5"},
                     headers=HEADERS, timeout=10).json()
    assert [t["id"] for t in rest["tasks"]] == [mine["id"]] and rest["pageSize"] == 5
    both = call(server.url, a2a.LIST_TASKS, {"context_id": mine["contextId"], "contextId": mine["contextId"]})
    assert error_code(both) == a2a.INVALID_PARAMS


# -- options ---------------------------------------------------------------------------------------


def test_deterministic_runs_are_byte_identical() -> None:
    bodies = []
    for _ in range(2):
        with ReferenceServer(deterministic=True) as srv:
            msg = {"messageId": "5bc8fbbc-bde5-4099-8164-d8399f767c45", "role": a2a.ROLE_USER,
                   "parts": [{"text": "Run the unit tests"}], "metadata": {SCRIPT_KEY: STREAM_BASIC}}
            bodies.append(stream(srv.url, msg)[0].content)
    assert bodies[0] == bodies[1]
    res = results(frames(bodies[0].decode()))
    stamps = [r[k]["status"]["timestamp"] for r in res for k in ("task", "statusUpdate") if k in r]
    assert stamps == ["2026-10-06T09:00:01.750Z", "2026-10-06T09:00:02.000Z", "2026-10-06T09:00:02.250Z"]


def test_keepalive_pings() -> None:
    with ReferenceServer(keepalive=0.05) as srv:
        _, events = stream(srv.url, message(steps=script({"status": "wait"}, {"sleep": 300}, {"finish": "ok"})))
    assert events[0] == "ping"  # a comment before the first event, as a server pinging on a timer may send
    data = [i for i, e in enumerate(events) if e != "ping"]
    assert "ping" in events[data[0]:data[-1]]  # and between events
    assert results(events)[-1]["statusUpdate"]["status"]["state"] == a2a.COMPLETED


# -- fault variants --------------------------------------------------------------------------------


def test_every_requirement_is_caught_by_a_fault() -> None:
    catalogue = load_catalogue()
    a2a_ids = {rid for rid, req in catalogue.items() if req.profile == "a2a"}
    # 57, then REST-001..006, GRPC-001..004 and A2A-CARD-006 (issue 15); A2A-ERR-013..015, A2A-CARD-007,
    # A2A-TASK-017..018, A2A-ERR-016..017, A2A-TASK-014..016, WIRE-010 (issue 21), A2A-CARD-008..010,
    # A2A-AUTH-001..005 (issue 27)
    assert len(a2a_ids) == 88
    caught = {rid for fault in FAULTS.values() for rid in fault.catches}
    assert sorted(a2a_ids - caught) == []
    named = caught | {rid for fault in FAULTS.values() for rid in fault.also}
    assert sorted(named - set(catalogue)) == []  # no typos
    for name, fault in FAULTS.items():
        assert name == fault.name and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name)
        # a fault that breaks nothing the text forbids (a legal variation, close-after-error) catches nothing and
        # names the scenarios it plays, where the meta-test checks that nothing is blamed
        assert fault.description and (fault.catches or fault.plays) and not set(fault.catches) & set(fault.also)
    assert len(describe_faults()) == len(FAULTS)


def test_every_fault_builds_and_unknown_faults_are_refused() -> None:
    for name in FAULTS:
        create_app(fault=name)
    with pytest.raises(ValueError, match="unknown fault"):
        create_app(fault="no-such-fault")


def fault_run(fault: str, steps: dict[str, Any] = STREAM_BASIC) -> tuple[httpx.Response, list[Any]]:
    with ReferenceServer(fault=fault) as srv:
        return stream(srv.url, message(steps=steps))


def test_fault_status_first() -> None:
    assert "statusUpdate" in results(fault_run("status-first")[1])[0]


def test_fault_timestamps() -> None:
    stamp = results(fault_run("offset-timestamps")[1])[1]["statusUpdate"]["status"]["timestamp"]
    assert stamp.endswith("+00:00")
    stamp = results(fault_run("second-timestamps")[1])[1]["statusUpdate"]["status"]["timestamp"]
    assert re.fullmatch(r".*:\d\dZ", stamp)


def test_fault_v03_names() -> None:
    res = results(fault_run("v03-names")[1])
    assert res[1]["statusUpdate"]["status"]["state"] == "working"
    assert res[1]["statusUpdate"]["status"]["message"]["role"] == "agent"
    assert res[2]["artifactUpdate"]["artifact"]["parts"][0]["kind"] == "text"


def test_fault_drop_chunk_and_append_first() -> None:
    chunks = [r["artifactUpdate"] for r in results(fault_run("drop-chunk")[1]) if "artifactUpdate" in r]
    assert len(chunks) == 5  # four of the log, one summary
    first = [r for r in results(fault_run("append-first")[1]) if "artifactUpdate" in r][0]
    assert first["artifactUpdate"]["append"] is True


def test_fault_no_stream_answers_json() -> None:
    response, _ = fault_run("no-stream")
    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["task"]["status"]["state"] == a2a.COMPLETED


def test_fault_unterminated_last_block() -> None:
    response, _ = fault_run("unterminated-last-block", script({"finish": "ok"}))
    assert response.content.endswith(b"}\n") and not response.content.endswith(b"\n\n")


def test_fault_no_close_holds_the_stream() -> None:
    with ReferenceServer(fault="no-close") as srv, httpx.Client() as client:
        params = {"message": message(steps=script({"finish": "ok"}))}
        timeout = httpx.Timeout(10, read=0.5)
        with open_stream(client, srv.url, a2a.SEND_STREAMING_MESSAGE, params, timeout) as response:
            events = iter_frames(response)
            assert next(events)["result"]["task"]
            assert next(events)["result"]["statusUpdate"]["status"]["state"] == a2a.COMPLETED
            with pytest.raises(httpx.ReadTimeout):  # the correct server would have ended the body
                next(events)


def test_error_faults() -> None:
    with ReferenceServer(fault="version-ignored") as srv:
        assert "result" in call(srv.url, a2a.LIST_TASKS, {}, headers={})
    with ReferenceServer(fault="html-error") as srv:
        response = post(srv.url, a2a.GET_TASK, {"id": "nope"})
        assert response.status_code == 500 and response.headers["content-type"].startswith("text/html")
    with ReferenceServer(fault="wrong-code-not-found") as srv:
        assert error_code(call(srv.url, a2a.GET_TASK, {"id": "nope"})) == a2a.INTERNAL_ERROR
    with ReferenceServer(fault="streaming-not-refused") as srv:
        response = post(srv.url + NO_STREAMING, a2a.SEND_STREAMING_MESSAGE, {"message": message()})
        assert response.headers["content-type"] == a2a.SSE_MEDIA_TYPE


def test_card_faults() -> None:
    with ReferenceServer(fault="card-404") as srv:
        assert httpx.get(srv.url + a2a.CARD_PATH).status_code == 404
    with ReferenceServer(fault="extension-no-uri") as srv:
        card = httpx.get(srv.url + a2a.CARD_PATH).json()
        assert "uri" not in card["capabilities"]["extensions"][0]
