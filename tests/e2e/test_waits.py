"""Waits bounded by --timeout, not multiples of it (issue 25), against small hostile servers on 127.0.0.1.

A unary answer has the --timeout in all, however its bytes trickle; once a target has waited out the --timeout on
a kind of request (wire/unanswered.py), the next requests of that kind are still sent but given half a second, and say
why; an answer forgets the silence. The --timeout here is 2 s, so each case costs a few seconds.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from hostile import CARD_PATH, HostileServer, head, response

from streamcert.framelog import END_CLOSED, END_ERROR, END_TIME_LIMIT, FrameLog
from streamcert.protocols import bindings
from streamcert.rules.common.unary import no_answer
from streamcert.wire import unanswered
from streamcert.wire.a2a_client import A2AClient

TIMEOUT = 2.0
SLACK = 1.5  # seconds a loaded machine may add to a wait
SHORT = f"{unanswered.SHORT_S:g} s"  # the wait of a kind of request the target has not answered


@pytest.fixture(autouse=True)
def _fresh():
    unanswered.forget()
    yield
    unanswered.forget()


async def _trickle(request, writer):
    """Answers with a head, then one byte every 0.2 s, never ending."""
    writer.write(head())
    for _ in range(600):
        writer.write(b" ")
        await writer.drain()
        await asyncio.sleep(0.2)


async def _silent(request, writer):
    await asyncio.sleep(120)  # accepts, reads the request, never answers (cancelled when the server stops)


def _client(url: str, log: FrameLog, binding: str = bindings.JSONRPC) -> A2AClient:
    client = A2AClient(url, log, timeout=TIMEOUT, stream_limit=5.0, binding=binding)
    client.rpc_url = url + "/a2a"
    return client


async def _timed(coro):
    started = time.monotonic()
    ex = await coro
    return ex, time.monotonic() - started


def test_an_http_json_body_that_never_ends_holds_a_request_for_the_timeout_in_all():
    async def go():
        with HostileServer(_trickle) as server:
            async with _client(server.url, FrameLog(scenario="t"), bindings.HTTP_JSON) as client:
                return await _timed(client.call("GetTask", {"id": "t-1"}, label="get"))

    ex, took = asyncio.run(go())
    assert TIMEOUT - 0.2 <= took < TIMEOUT + SLACK, took  # was three times the --timeout
    assert ex.end == END_TIME_LIMIT and ex.status == 200
    assert ex.error.startswith("the body was still arriving after 2 s (") and "bytes received" in ex.error
    said = no_answer(ex, "GetTask")
    assert "could not be judged" in said and "still arriving" in said, said


def test_a_target_that_never_answers_costs_one_timeout_then_half_a_second_a_request_each_saying_why():
    async def go():
        with HostileServer(_silent) as server:
            async with _client(server.url, FrameLog(scenario="t")) as client:
                first = await _timed(client.call("GetTask", {"id": "x"}, label="first"))
                later = [await _timed(client.call(m, {"id": "x"}, label=f"later-{m}"))
                         for m in ("CancelTask", "GetTask", "ListTasks")]
                return first, later

    (first, took), later = asyncio.run(go())
    assert TIMEOUT - 0.2 <= took < TIMEOUT + SLACK
    assert first.end == END_ERROR and first.error == "no response headers within 2 s"
    for ex, took in later:
        assert took < unanswered.SHORT_S + SLACK, (ex.label, took)
        assert ex.end == END_ERROR and ex.error.startswith(f"no response headers within {SHORT} (given {SHORT}, not "
                                                           "the --timeout of 2 s: the target did not answer an "
                                                           "earlier POST to this URL, first: no response headers "
                                                           "within 2 s)")
        assert f"got no answer: no response headers within {SHORT} (given {SHORT}" in no_answer(ex, "X")


def test_a_target_that_answers_again_is_judged_and_waited_for_in_full():
    answering = {"on": False}

    async def handler(request, writer):
        if not answering["on"]:
            await asyncio.sleep(120)
        writer.write(response({"jsonrpc": "2.0", "id": request.json()["id"], "result": {"id": "x"}}))

    async def go():
        with HostileServer(handler) as server:
            async with _client(server.url, FrameLog(scenario="t")) as client:
                await client.call("GetTask", {"id": "x"}, label="silent")
                kind = unanswered.kind("POST", client.rpc_url)
                assert unanswered.shown(kind) is not None
                answering["on"] = True
                ex = await client.call("GetTask", {"id": "x"}, label="answered")  # sent, within the short wait
                return ex, unanswered.shown(kind)

    ex, after = asyncio.run(go())
    assert ex.end == END_CLOSED and ex.status == 200 and ex.error is None
    assert after is None  # the next request of the kind has the whole --timeout again


def test_a_silence_on_one_route_is_not_presumed_of_another():
    async def handler(request, writer):
        if request.path.endswith("/tasks"):
            await asyncio.sleep(120)  # ListTasks never answers; GetTask does, whatever its id
        writer.write(response({"id": "x"}))

    async def go():
        with HostileServer(handler) as server:
            async with _client(server.url, FrameLog(scenario="t"), bindings.HTTP_JSON) as client:
                listed = await client.call("ListTasks", {}, label="list")
                got = await client.call("GetTask", {"id": "a"}, label="get")
                kinds = (unanswered.kind("GET", client.rpc_url + "/tasks/b", "GetTask"),
                         unanswered.kind("GET", client.rpc_url + "/tasks", "ListTasks"))
                return listed, got, [unanswered.shown(k) for k in kinds]

    listed, got, (get_kind, list_kind) = asyncio.run(go())
    assert listed.end == END_ERROR and got.end == END_CLOSED and got.error is None
    assert get_kind is None and list_kind is not None and list_kind.label == "list"


def test_a_trickling_card_is_read_for_the_timeout_once_then_for_half_a_second():
    async def handler(request, writer):
        if request.path == CARD_PATH:
            await _trickle(request, writer)

    async def go():
        with HostileServer(handler) as server:
            timed = []
            for scenario in ("one", "two", "three"):  # a client per scenario, as the drivers open them
                async with _client(server.url, FrameLog(scenario=scenario)) as client:
                    timed.append(await _timed(client.get_card()))
            return timed

    (first, took), *later = asyncio.run(go())
    assert TIMEOUT - 0.2 <= took < TIMEOUT + SLACK and first.end == END_TIME_LIMIT
    assert "still arriving after 2 s" in first.error
    for ex, took in later:
        assert took < unanswered.SHORT_S + SLACK and ex.end == END_TIME_LIMIT
        assert f"still arriving after {SHORT}" in ex.error and "an earlier GET to this URL, card: the body" in ex.error


def test_a_stream_to_an_endpoint_shown_silent_is_given_half_a_second_to_begin_then_its_whole_limit():
    begun = {"on": False}

    async def handler(request, writer):
        if not begun["on"]:
            await asyncio.sleep(120)
        writer.write(head(content_type="text/event-stream"))
        await writer.drain()
        await asyncio.sleep(1.5)  # past the short wait, within the stream's limit: the stream is not cut there
        writer.write(b'data: {"jsonrpc": "2.0", "id": 1, "result": {}}\n\n')
        await writer.drain()

    async def go():
        with HostileServer(handler) as server:
            async with _client(server.url, FrameLog(scenario="t")) as client:
                await client.call("GetTask", {"id": "x"}, label="silent")
                stream = await _timed(client.stream("SendStreamingMessage", {}, label="stream"))
                begun["on"] = True
                later = await client.stream("SendStreamingMessage", {}, label="later")
                return stream, later

    (stream, took), later = asyncio.run(go())
    assert took < unanswered.SHORT_S + SLACK and stream.end == END_ERROR
    assert stream.error.startswith(f"no response headers within {SHORT} (given {SHORT}, not the stream limit of 5 s: "
                                   "the target did not answer an earlier POST to this URL, silent: "), stream.error
    assert later.end == END_CLOSED and len(later.data_events()) == 1 and later.error is None
