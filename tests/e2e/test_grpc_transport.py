"""The gRPC client transport (wire/grpc.py) against the reference's gRPC servers (reference/agent/grpc_server.py), on
127.0.0.1: what each call writes into the frame log (docs/bindings.md, "gRPC exchange"), and how every call
stays bounded."""

from __future__ import annotations

import asyncio
import base64
import json
import time
import uuid
from typing import Any

import httpx
import pytest

pytest.importorskip("grpc", reason="the grpc extra is not installed")

from streamcert.contract.capture import UNJUDGED
from streamcert.framelog import END_CLIENT_STOP, END_CLOSED, END_ERROR, END_IDLE, END_TIME_LIMIT, FrameLog
from streamcert.protocols import a2a, bindings  # noqa: E402
from streamcert.protocols import grpc_messages as g  # noqa: E402
from streamcert.protocols.script import SCRIPT_KEY  # noqa: E402
from streamcert.reference.agent.server import ReferenceServer  # noqa: E402
from streamcert.wire.bounds import Bounds  # noqa: E402
from streamcert.wire.capture import Clock  # noqa: E402
from streamcert.wire.grpc import GrpcTransport, grpc_target  # noqa: E402

VERSION = {"a2a-version": a2a.PROTOCOL_VERSION}
QUICK = {"version": 1, "name": "quick", "steps": [{"status": "working"}, {"finish": "done"}]}
LONG = {"version": 1, "name": "long", "steps": [{"status": "working"}, {"sleep": 30000}, {"finish": "done"}]}


def message(script: dict[str, Any] | None = QUICK, **extra: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"messageId": str(uuid.uuid4()), "role": a2a.ROLE_USER, "parts": [{"text": "go"}]}
    if script is not None:
        msg["metadata"] = {SCRIPT_KEY: script}
    return {"message": {**msg, **extra}}


def grpc_url(server: ReferenceServer, agent: str = "") -> str:
    card = httpx.get(server.agent_url(agent) + a2a.CARD_PATH, timeout=10).json()
    urls = [i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC"]
    assert len(urls) == 1 and card["supportedInterfaces"][-1]["protocolBinding"] == "GRPC", card
    return urls[0]


@pytest.fixture(scope="module")
def server():
    with ReferenceServer() as srv:
        yield srv


@pytest.fixture(scope="module")
def url(server):
    return grpc_url(server)


def run(coro_fn, **transport: Any):
    """Run `coro_fn(transport, log)` on a fresh loop with a fresh transport, bounded; the log."""
    log = FrameLog("grpc-test")

    async def main():
        async with GrpcTransport(Clock(), log, **{"timeout": 5.0, "stream_limit": 5.0, **transport}) as t:
            async with asyncio.timeout(30):
                await coro_fn(t, log)

    asyncio.run(main())
    return log


def payloads(ex) -> list[Any]:
    return [json.loads(e.data) for e in ex.events]


def test_targets():
    assert grpc_target("http://127.0.0.1:5001") == ("127.0.0.1:5001", False)
    assert grpc_target("grpc://localhost:7/ignored/path") == ("localhost:7", False)
    assert grpc_target("https://agent.example") == ("agent.example:443", True)
    assert grpc_target("grpcs://[::1]:9") == ("[::1]:9", True)
    assert grpc_target("127.0.0.1:5001") == ("127.0.0.1:5001", False)
    with pytest.raises(ValueError):
        grpc_target("ftp://host:1")


def test_unary_call(url):
    async def go(t, log):
        await t.call(a2a.SEND_MESSAGE, message(), label="send", target_url=url, metadata=VERSION, streaming=False)

    ex = run(go).get("send")
    assert (ex.binding, ex.method, ex.rpc_method, ex.status, ex.end) == ("grpc", "POST", a2a.SEND_MESSAGE, 200, END_CLOSED)
    assert ex.url == url + "/lf.a2a.v1.A2AService/SendMessage"
    assert ex.request_headers == {"a2a-version": "1.0"}
    assert ex.request_body["message"]["role"] == "ROLE_USER"
    assert ex.response_headers["content-type"] == "application/grpc"
    assert ex.notes["grpc_status"] == {"code": "OK", "message": "", "details": []}
    assert "streaming" not in ex.notes
    [answer] = payloads(ex)
    assert answer["task"]["status"]["state"] == a2a.COMPLETED
    # the raw message is kept beside its ProtoJSON, stamped
    [chunk] = ex.chunks
    assert g.decode("SendMessageResponse", chunk.data) == answer
    assert ex.t_sent <= ex.t_headers <= ex.events[0].t == chunk.t <= ex.t_end


def test_stream(url):
    seen: list[int] = []

    async def go(t, log):
        async def on_event(ev):  # an awaitable callback is awaited
            seen.append(ev.index)

        await t.call(a2a.SEND_STREAMING_MESSAGE, message(), label="stream", target_url=url, metadata=VERSION,
                     streaming=True, on_event=on_event)

    ex = run(go).get("stream")
    frames = payloads(ex)
    assert ex.end == END_CLOSED and ex.notes["streaming"] is True and ex.notes["limit_s"] == 5.0
    assert ex.notes["grpc_status"]["code"] == "OK"
    assert a2a.stream_kind(frames[0]) == a2a.TASK
    assert frames[-1]["statusUpdate"]["status"]["state"] == a2a.COMPLETED
    assert seen == list(range(len(frames))) and len(ex.chunks) == len(frames)
    assert [e.t for e in ex.events] == sorted(e.t for e in ex.events)
    assert ex.is_stream


def test_error_with_details(url):
    async def go(t, log):
        await t.call(a2a.GET_TASK, {"id": "no-such-task"}, label="get", target_url=url, metadata=VERSION,
                     streaming=False)
        sent = await t.call(a2a.SEND_MESSAGE, message(), label="done", target_url=url, metadata=VERSION,
                            streaming=False)
        task_id = json.loads(sent.events[0].data)["task"]["id"]
        await t.call(a2a.CANCEL_TASK, {"id": task_id}, label="cancel", target_url=url, metadata=VERSION,
                     streaming=False)
        await t.call(a2a.GET_TASK, {"id": task_id}, label="old", target_url=url, metadata={}, streaming=False)

    log = run(go)
    ex = log.get("get")
    assert (ex.status, ex.end, ex.events) == (200, END_CLOSED, [])
    assert ex.notes["grpc_status"] == {"code": "NOT_FOUND", "message": "No task with id 'no-such-task'", "details": [
        {"@type": a2a.ERROR_INFO_TYPE, "reason": "TASK_NOT_FOUND", "domain": a2a.ERROR_DOMAIN}]}
    raw = base64.b64decode(ex.notes["trailers"][g.STATUS_DETAILS_KEY])
    assert g.status_details(raw)[0] == 5
    assert bindings.grpc_error(ex.notes)["code"] == a2a.TASK_NOT_FOUND
    cancel = log.get("cancel").notes["grpc_status"]
    assert (cancel["code"], cancel["details"][0]["reason"]) == ("FAILED_PRECONDITION", "TASK_NOT_CANCELABLE")
    old = log.get("old").notes["grpc_status"]  # no a2a-version: read as 0.3, which the reference does not speak
    assert (old["code"], old["details"][0]["reason"]) == ("FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED")


def test_extensions_are_echoed_in_the_initial_metadata(server, url):
    card = httpx.get(server.url + a2a.CARD_PATH, timeout=10).json()
    uri = card["capabilities"]["extensions"][0]["uri"]

    async def go(t, log):
        await t.call(a2a.SEND_STREAMING_MESSAGE, message(), label="ext", target_url=url, streaming=True,
                     metadata={**VERSION, "A2A-Extensions": f"{uri},https://example.com/unknown"})

    ex = run(go).get("ext")
    assert ex.request_headers["a2a-extensions"].startswith(uri)
    assert ex.response_headers["a2a-extensions"] == uri


def test_until_stops_the_stream(url):
    async def go(t, log):
        await t.call(a2a.SEND_STREAMING_MESSAGE, message(LONG), label="until", target_url=url, metadata=VERSION,
                     streaming=True, until=lambda ev: "statusUpdate" in ev.data)

    started = time.monotonic()
    ex = run(go).get("until")
    assert time.monotonic() - started < 5
    assert ex.end == END_CLIENT_STOP and "grpc_status" not in ex.notes
    assert [a2a.stream_kind(f) for f in payloads(ex)] == [a2a.TASK, a2a.STATUS_UPDATE]


def test_a_stream_is_cut_at_its_limit(url):
    async def go(t, log):
        await t.call(a2a.SEND_STREAMING_MESSAGE, message(LONG), label="cut", target_url=url, metadata=VERSION,
                     streaming=True, limit=0.5)

    started = time.monotonic()
    ex = run(go).get("cut")
    assert time.monotonic() - started < 3
    assert ex.end == END_TIME_LIMIT and ex.notes["limit_s"] == 0.5 and "grpc_status" not in ex.notes
    assert len(ex.events) == 2 and ex.t_end - ex.t_sent >= 0.5


def test_a_silent_stream_ends_at_the_idle_limit(url):
    async def go(t, log):
        await t.call(a2a.SEND_STREAMING_MESSAGE, message(LONG), label="idle", target_url=url, metadata=VERSION,
                     streaming=True)

    ex = run(go, bounds=Bounds(idle=0.4)).get("idle")
    assert ex.end == END_IDLE and "--idle-limit" in ex.error and ex.notes["idle_s"] >= 0.4


def test_an_unreachable_port_fails_at_once():
    async def go(t, log):
        await t.call(a2a.GET_TASK, {"id": "t"}, label="nowhere", target_url="http://127.0.0.1:1", metadata=VERSION,
                     streaming=False)
        await t.call(a2a.SUBSCRIBE_TO_TASK, {"id": "t"}, label="nowhere-stream", target_url="127.0.0.1:1",
                     metadata=VERSION, streaming=True)

    started = time.monotonic()
    log = run(go)
    assert time.monotonic() - started < 3
    for ex in log.exchanges:
        assert (ex.status, ex.end, ex.events) == (None, END_ERROR, [])
        assert "no gRPC connection to 127.0.0.1:1" in ex.error and "UNAVAILABLE" in ex.error


def test_a_request_protobuf_cannot_express_is_not_sent(url):
    async def go(t, log):
        await t.call(a2a.LIST_TASKS, {"status": "working"}, label="bad", target_url=url, metadata=VERSION,
                     streaming=False)
        await t.call("FrobnicateTask", {}, label="other", target_url=url, metadata=VERSION, streaming=False)
        await t.call(a2a.GET_TASK, {"id": "t"}, label="scheme", target_url="ws://127.0.0.1:1", metadata=VERSION,
                     streaming=False)

    log = run(go)
    bad = log.get("bad")
    assert (bad.end, bad.status, bad.notes["not_sent"]) == (END_ERROR, None, True)
    assert "working" in bad.error and bad.request_body == {"status": "working"}
    assert "not an A2AService method" in log.get("other").error
    assert "scheme 'ws'" in log.get("scheme").error


def test_message_size_is_bounded(url):
    async def go(t, log):
        await t.call(a2a.SEND_MESSAGE, message(), label="big", target_url=url, metadata=VERSION, streaming=False)

    ex = run(go, bounds=Bounds(max_event=64)).get("big")
    assert ex.end == END_CLIENT_STOP and ex.events == []
    assert ex.notes[UNJUDGED]["cap"] == "max_event_bytes" and ex.notes[UNJUDGED]["limit"] == 64
    assert "--max-event-bytes" in ex.unjudged


def test_the_exchange_survives_a_cassette(url):
    async def go(t, log):
        await t.call(a2a.SEND_STREAMING_MESSAGE, message(), label="stream", target_url=url, metadata=VERSION,
                     streaming=True)

    log = run(go)
    again = FrameLog.from_json(json.loads(json.dumps(log.to_json())))
    ex, back = log.get("stream"), again.get("stream")
    assert back.binding == "grpc" and [e.data for e in back.events] == [e.data for e in ex.events]
    assert [c.data for c in back.chunks] == [c.data for c in ex.chunks] and back.notes == ex.notes


# -- the gRPC faults of the reference ----------------------------------------------------------------

def faulty(fault: str, go) -> FrameLog:
    with ReferenceServer(fault=fault) as srv:
        target = grpc_url(srv)
        return run(lambda t, log: go(t, log, target))


def test_fault_unimplemented_subscribe():
    async def go(t, log, target):
        await t.call(a2a.SUBSCRIBE_TO_TASK, {"id": "t"}, label="sub", target_url=target, metadata=VERSION,
                     streaming=True)

    ex = faulty("grpc-unimplemented-subscribe", go).get("sub")
    assert ex.notes["grpc_status"]["code"] == "UNIMPLEMENTED" and not ex.is_stream


def test_fault_garbage_message():
    async def go(t, log, target):
        await t.call(a2a.SEND_STREAMING_MESSAGE, message(), label="stream", target_url=target, metadata=VERSION,
                     streaming=True)

    ex = faulty("grpc-garbage-message", go).get("stream")
    assert ex.end == END_CLOSED and ex.events[1].data == "" and ex.events[0].data and ex.events[2].data
    [bad] = ex.notes["undecodable"]
    assert bad["i"] == 1 and "StreamResponse" in bad["error"]


def test_fault_wrong_status_and_no_errorinfo():
    async def go(t, log, target):
        await t.call(a2a.GET_TASK, {"id": "nope"}, label="get", target_url=target, metadata=VERSION, streaming=False)
        sent = await t.call(a2a.SEND_MESSAGE, message(), label="done", target_url=target, metadata=VERSION,
                            streaming=False)
        await t.call(a2a.CANCEL_TASK, {"id": json.loads(sent.events[0].data)["task"]["id"]}, label="cancel",
                     target_url=target, metadata=VERSION, streaming=False)

    wrong = faulty("grpc-wrong-status", go)
    status = wrong.get("get").notes["grpc_status"]
    assert (status["code"], status["details"][0]["reason"]) == ("FAILED_PRECONDITION", "TASK_NOT_FOUND")
    bare = faulty("grpc-no-errorinfo", go)
    assert bare.get("cancel").notes["grpc_status"]["code"] == "FAILED_PRECONDITION"
    assert bare.get("cancel").notes["grpc_status"]["details"] == []
    assert bare.get("get").notes["grpc_status"]["details"][0]["reason"] == "TASK_NOT_FOUND"  # only the one error


def test_fault_card_phantom_grpc():
    async def go(t, log, target):
        await t.call(a2a.GET_TASK, {"id": "nope"}, label="probe", target_url=target, metadata=VERSION,
                     streaming=False)

    ex = faulty("card-phantom-grpc", go).get("probe")
    assert ex.end == END_ERROR and "no gRPC connection" in ex.error


def test_every_hosted_agent_has_its_own_grpc_server(server):
    urls = {grpc_url(server, ""), grpc_url(server, "no-streaming")}
    assert len(urls) == 2

    async def go(t, log):
        await t.call(a2a.SEND_STREAMING_MESSAGE, message(), label="refused", target_url=grpc_url(server, "no-streaming"),
                     metadata=VERSION, streaming=True)

    status = run(go).get("refused").notes["grpc_status"]
    assert (status["code"], status["details"][0]["reason"]) == ("FAILED_PRECONDITION", "UNSUPPORTED_OPERATION")


def test_the_grpc_servers_stop_with_the_app():
    with ReferenceServer() as srv:
        target = grpc_url(srv)

    async def go(t, log):
        await t.call(a2a.GET_TASK, {"id": "t"}, label="after", target_url=target, metadata=VERSION, streaming=False)

    ex = run(go).get("after")
    assert ex.end == END_ERROR and "no gRPC connection" in ex.error


def test_a_member_no_message_has_is_ignored_so_grpc_still_reads_the_task(server, url):
    """A2A §5.7, §5.1: a JSON request's unknown members are not stored, so the task it made reads back over
    gRPC (GetTask, unfiltered ListTasks) as over JSON-RPC, without them."""
    sent = message(streamcertUnknownMember="x")
    sent["message"]["parts"][0]["streamcertUnknownMember"] = "y"
    rpc = httpx.post(server.url + "/a2a/jsonrpc", timeout=10, headers={"A2A-Version": "1.0"},
                     json={"jsonrpc": "2.0", "id": 1, "method": a2a.SEND_MESSAGE, "params": sent}).json()
    task_id = rpc["result"]["task"]["id"]
    assert "streamcertUnknownMember" not in json.dumps(rpc["result"])

    async def go(t, log):
        await t.call(a2a.GET_TASK, {"id": task_id}, label="get", target_url=url, metadata=VERSION, streaming=False)
        await t.call(a2a.LIST_TASKS, {}, label="list", target_url=url, metadata=VERSION, streaming=False)

    log = run(go)
    for label in ("get", "list"):
        assert log.get(label).notes["grpc_status"]["code"] == "OK", log.get(label).notes
    [got] = payloads(log.get("get"))
    assert got["id"] == task_id and "streamcertUnknownMember" not in json.dumps(got)


def test_undeclared_capabilities_are_refused_not_unimplemented(url):
    """A2A §3.3.4, §5.4: the push-config methods and GetExtendedAgentCard are served, and refused."""
    async def go(t, log):
        await t.call(a2a.CREATE_PUSH_CONFIG, {"taskId": "t", "url": "https://push.invalid/x"}, label="push",
                     target_url=url, metadata=VERSION, streaming=False)
        await t.call(a2a.GET_EXTENDED_CARD, {}, label="card", target_url=url, metadata=VERSION, streaming=False)

    log = run(go)
    for label, reason in (("push", "PUSH_NOTIFICATION_NOT_SUPPORTED"), ("card", "UNSUPPORTED_OPERATION")):
        status = log.get(label).notes["grpc_status"]
        assert status["code"] == "FAILED_PRECONDITION" and status["details"][0]["reason"] == reason, status


# -- a transport failure is named as one --------------------------------------------------------------------

@pytest.mark.parametrize("mode, streaming", [("flag", False), ("compressed", False), ("compressed", True),
                                             ("short", False), ("short", True)])
def test_garbage_frames_are_a_transport_failure_not_the_servers_status(mode, streaming):
    """A frame grpcio cannot read ends the call with a status of grpcio's own (INTERNAL "Compression bit set…",
    UNKNOWN "Stream removed…") or with no message at all: an ERROR naming the transport failure, never the
    server's InternalError."""
    from grpc_garbage import GarbageGrpc

    from streamcert.rules.engine import Unjudgeable, answered

    with GarbageGrpc(mode) as garbage:
        log = run(lambda t, log: t.call("SubscribeToTask" if streaming else "GetTask", {"id": "t-1"}, label="call",
                                        target_url=garbage.url, metadata=VERSION, streaming=streaming))
    ex = log.get("call")
    assert ex.end == END_ERROR and ex.error.startswith("gRPC transport failure: ") and ex.notes["transport_failure"]
    assert "grpc_status" not in ex.notes and bindings.grpc_error(ex.notes) is None
    with pytest.raises(Unjudgeable, match="gRPC transport failure"):
        answered(log, "call")


def test_a_status_the_server_sent_is_still_its_own():
    from grpc_garbage import GarbageGrpc

    with GarbageGrpc("status13") as garbage:
        log = run(lambda t, log: t.call("GetTask", {"id": "t-1"}, label="call", target_url=garbage.url,
                                        metadata=VERSION, streaming=False))
    ex = log.get("call")
    assert ex.end == END_CLOSED and ex.notes["grpc_status"]["code"] == "INTERNAL" and "transport_failure" not in ex.notes
    assert bindings.grpc_error(ex.notes)["code"] == a2a.INTERNAL_ERROR


def test_a_stream_whose_status_never_comes_is_cut_at_the_idle_gap_and_its_messages_judged():
    """Issue 25: every message came, the status (trailers) never does: the stream ends at the idle gap, says so,
    and its messages are judged (never "got no answer")."""
    from grpc_garbage import GarbageGrpc

    from streamcert.rules.common.unary import no_answer

    started = time.monotonic()
    with GarbageGrpc("notrailers") as garbage:
        log = run(lambda t, log: t.call("SubscribeToTask", {"id": "t-1"}, label="call", target_url=garbage.url,
                                        metadata=VERSION, streaming=True), timeout=2.0, bounds=Bounds(idle=1.0))
    ex = log.get("call")
    assert time.monotonic() - started < 1.0 + 2.5
    assert ex.end == END_IDLE and "a silence of" in ex.error and "grpc_status" not in ex.notes
    assert [e.data for e in ex.events] == ["{}"]  # the empty message: a StreamResponse with every field default
    assert no_answer(ex, "SubscribeToTask") is None


def test_a_unary_call_whose_status_never_comes_ends_at_the_timeout_its_message_judged_and_later_ones_in_half_a_second():
    """Issue 25: the headers and the message came, the status never does. The call ends at the --timeout in all,
    saying the status did not come, and its message is judged (never "got no answer"). The next calls of the method
    wait half a second."""
    from grpc_garbage import GarbageGrpc

    from streamcert.rules.common.unary import no_answer
    from streamcert.wire import unanswered

    unanswered.forget()
    timed = []

    async def calls(t, log):
        for n in range(3):
            started = time.monotonic()
            await t.call("GetTask", {"id": "t-1"}, label=f"call{n}", target_url=garbage.url, metadata=VERSION,
                         streaming=False)
            timed.append(time.monotonic() - started)

    try:
        with GarbageGrpc("notrailers-task") as garbage:
            log = run(calls, timeout=2.0, bounds=Bounds(idle=10.0))
    finally:
        unanswered.forget()
    first, *later = log.exchanges
    assert 1.8 <= timed[0] < 2.0 + 2.5 and all(t < unanswered.SHORT_S + 2.0 for t in timed[1:]), timed
    assert first.end == END_TIME_LIMIT and first.error.startswith("the call's status (its trailers) did not come "
                                                                  "within 2 s: its message came")
    assert [e.data for e in first.events] == ['{"id":"t-1"}'] and no_answer(first, "GetTask") is None
    for ex in later:
        short = f"{unanswered.SHORT_S:g} s"
        assert ex.end == END_TIME_LIMIT and f"within {short}" in ex.error
        assert f"(given {short}, not the --timeout" in ex.error
