"""The capture transport and the A2A client against a real socket: a tiny Starlette app under uvicorn.

The server paces its chunks with short sleeps; those sleeps are the only ones here. Timing bounds are
generous: lower bounds come from the server's sleeps, upper bounds are never tighter than a second.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from streamcert.framelog import END_CLIENT_STOP, END_CLOSED, END_ERROR, END_TIME_LIMIT, FrameLog
from streamcert.wire.a2a_client import A2AClient
from streamcert.wire.capture import CHUNKS, T_HEADERS, CaptureTransport, Clock

GAP = 0.05  # the server's sleep between chunks

# The paced stream: three events, the second split across two chunks, a comment before the third.
PACED = [
    b'data: {"n": 0}\r\n\r\n',
    b'data: {"n": ',
    b'1}\r\n\r\n',
    b': ping\r\n\r\ndata: {"n": 2}\r\n\r\n',
]
PACED_BODY = b"".join(PACED)
# Where each event is completed in PACED_BODY (the CR that ends its line / blank line) and where it
# starts: (kind, start offset, completing offset).
PACED_EVENTS = [
    ("event", 0, PACED_BODY.index(b"\r\n\r\n") + 2),
    ("event", len(PACED[0]), len(PACED[0]) + len(PACED[1]) + PACED[2].index(b"\r\n\r\n") + 2),
    ("comment", PACED_BODY.index(b": ping"), PACED_BODY.index(b": ping") + len(b": ping")),
    ("event", PACED_BODY.index(b'data: {"n": 2}'), len(PACED_BODY) - 2),
]

SEEN: list[dict] = []  # what the server saw of each request


async def rpc(request: Request):
    body = await request.json()
    SEEN.append({"path": request.url.path, "method": body.get("method"),
                 "headers": request.headers, "extensions": request.headers.getlist("a2a-extensions")})
    method = body.get("method")
    if method == "Paced":
        async def paced():
            for k, chunk in enumerate(PACED):
                if k:
                    await asyncio.sleep(GAP)
                yield chunk
        return StreamingResponse(paced(), media_type="text/event-stream")
    if method == "Endless":
        async def endless():
            n = 0
            while True:
                yield f'data: {{"n": {n}}}\r\n\r\n'.encode()
                n += 1
                await asyncio.sleep(GAP)
        return StreamingResponse(endless(), media_type="text/event-stream")
    if method == "Silent":
        async def silent():  # one event, then nothing at all, never closing
            yield b'data: {"n": 0}\n\n'
            await asyncio.sleep(30)
        return StreamingResponse(silent(), media_type="text/event-stream")
    # Anything else: a plain JSON answer (also to a streaming call).
    return JSONResponse({"jsonrpc": "2.0", "id": body.get("id"),
                         "error": {"code": -32601, "message": "Method not found"}}, status_code=400)


app = Starlette(routes=[Route("/a2a/jsonrpc", rpc, methods=["POST"])])


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.005)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(5)
    sock.close()


@pytest.fixture
def closed_port_url() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
    port = sock.getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    sock.close()


def run_client(base_url: str, fn, **kwargs):
    async def go():
        log = FrameLog(scenario="capture-test")
        async with A2AClient(base_url, log, **kwargs) as client:
            return await fn(client)
    return asyncio.run(go())


def chunk_at(chunks, offset: int) -> int:
    """Index of the chunk holding byte `offset` of the body."""
    end = 0
    for k, chunk in enumerate(chunks):
        end += len(chunk.data)
        if offset < end:
            return k
    raise AssertionError(f"offset {offset} beyond the body")


# -- the transport alone --------------------------------------------------------------------------
def test_capture_transport_stamps_chunks(base_url):
    async def go():
        clock = Clock()
        async with httpx.AsyncClient(transport=CaptureTransport(clock)) as client:
            t0 = clock()
            async with client.stream("POST", base_url + "/a2a/jsonrpc", json={"method": "Paced"}) as resp:
                parts = [part async for part in resp.aiter_raw()]
                return t0, resp.extensions[T_HEADERS], resp.extensions[CHUNKS], parts

    t0, t_headers, chunks, parts = asyncio.run(go())
    assert b"".join(c.data for c in chunks) == PACED_BODY == b"".join(parts)
    assert [c.data for c in chunks] == parts  # recorded as the reader got them, nothing dropped
    times = [c.t for c in chunks]
    assert 0 <= t0 <= t_headers <= times[0]
    assert times == sorted(times)
    assert times[-1] - times[0] >= 0.8 * GAP * (len(PACED) - 1)


# -- the client: timing ---------------------------------------------------------------------------
def test_stream_chunks_and_event_times(base_url):
    ex = run_client(base_url, lambda c: c.stream("Paced", {}, label="stream"))
    assert ex.end == END_CLOSED and ex.error is None and ex.status == 200 and ex.is_sse
    assert ex.body == PACED_BODY
    times = [c.t for c in ex.chunks]
    assert ex.t_sent <= ex.t_headers <= times[0] <= times[-1] <= ex.t_end
    assert all(a < b for a, b in itertools.pairwise(times)), times

    assert [(e.kind, e.data) for e in ex.events] == [
        ("event", '{"n": 0}'), ("event", '{"n": 1}'), ("comment", "ping"), ("event", '{"n": 2}')]
    assert ex.discarded is None
    for ev, (kind, start, done) in zip(ex.events, PACED_EVENTS):
        assert ev.kind == kind
        first, last = ex.chunks[chunk_at(ex.chunks, start)], ex.chunks[chunk_at(ex.chunks, done)]
        assert ev.t >= first.t
        assert ev.t == last.t, (ev, done)
    # The split event really was split: its first byte came a server sleep before it was complete.
    split = ex.events[1]
    assert split.t - ex.chunks[chunk_at(ex.chunks, PACED_EVENTS[1][1])].t >= 0.8 * GAP


def test_gaps_follow_the_server_sleeps(base_url):
    ex = run_client(base_url, lambda c: c.stream("Paced", {}, label="stream"))
    # Time at which each server chunk's last byte arrived.
    ends, offset = [], 0
    for chunk in PACED:
        offset += len(chunk)
        ends.append(ex.chunks[chunk_at(ex.chunks, offset - 1)].t)
    gaps = [b - a for a, b in itertools.pairwise(ends)]
    assert all(0.8 * GAP <= g < 1.0 for g in gaps), gaps
    data = ex.data_events()
    assert all(0.8 * GAP <= b.t - a.t < 1.0 for a, b in itertools.pairwise(data))


# -- the client: headers --------------------------------------------------------------------------
def test_version_header_is_always_sent(base_url):
    async def go(c):
        await c.stream("Paced", {}, label="stream")
        await c.call("Other", {}, label="unary")
        await c.stream("Paced", {}, label="stream-ext", extensions=["urn:a"])
    SEEN.clear()
    run_client(base_url, go)
    assert len(SEEN) == 3
    for seen in SEEN:
        assert seen["headers"].getlist("a2a-version") == ["1.0"]


def test_extensions_are_one_comma_separated_header(base_url):
    SEEN.clear()
    ex = run_client(base_url, lambda c: c.stream("Paced", {}, label="stream",
                                                  extensions=["urn:one", "https://x.test/two/v1"]))
    assert SEEN[-1]["extensions"] == ["urn:one,https://x.test/two/v1"]
    assert ex.request_headers["A2A-Extensions"] == "urn:one,https://x.test/two/v1"
    assert SEEN[-1]["headers"]["accept"] == "text/event-stream"


def test_no_extensions_header_without_extensions(base_url):
    SEEN.clear()
    run_client(base_url, lambda c: c.stream("Paced", {}, label="stream"))
    assert SEEN[-1]["extensions"] == []


# -- the client: how a stream ends ----------------------------------------------------------------
def test_endless_stream_is_cut_at_the_limit(base_url):
    limit = 0.3
    t0 = time.monotonic()
    ex = run_client(base_url, lambda c: c.stream("Endless", {}, label="stream", limit=limit))
    elapsed = time.monotonic() - t0
    assert ex.end == END_TIME_LIMIT
    assert ex.error is None
    assert elapsed < limit + 0.5
    assert ex.t_end - ex.t_sent >= 0.9 * limit
    assert len(ex.data_events()) >= 2
    assert ex.notes["limit_s"] == limit


def test_a_silent_stream_is_cut_at_the_limit_not_by_the_read_timeout(base_url):
    # The unary timeout (0.2 s) is shorter than the stream limit (0.8 s): a stream that stays open
    # and silent is a stream the server did not close, not a target that gave no answer.
    ex = run_client(base_url, lambda c: c.stream("Silent", {}, label="stream", limit=0.8), timeout=0.2)
    assert ex.end == END_TIME_LIMIT, (ex.end, ex.error)
    assert ex.error is None
    assert ex.t_end - ex.t_sent >= 0.75
    assert [e.data for e in ex.data_events()] == ['{"n": 0}']


def test_until_stops_the_stream(base_url):
    ex = run_client(base_url, lambda c: c.stream("Endless", {}, label="stream", limit=5.0,
                                                  until=lambda ev: ev.payload == {"n": 2}))
    assert ex.end == END_CLIENT_STOP
    assert [e.payload for e in ex.data_events()] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert ex.t_end - ex.t_sent < 1.0 + 2 * GAP


def test_on_event_sees_every_event(base_url):
    got = []

    async def on_event(ev):
        got.append(ev.data)

    ex = run_client(base_url, lambda c: c.stream("Paced", {}, label="stream", on_event=on_event))
    # every data event, in order; a comment (a keep-alive) stays in the log but is no event to a driver
    assert got == [e.data for e in ex.events if not e.is_comment]
    assert any(e.is_comment for e in ex.events) and got


def test_unreachable_url_is_an_error(closed_port_url):
    ex = run_client(closed_port_url, lambda c: c.stream("Paced", {}, label="stream", limit=3.0))
    assert ex.end == END_ERROR
    assert ex.error and "Connect" in ex.error
    assert ex.status is None and ex.events == []


def test_non_sse_answer_to_a_stream_is_read_as_a_body(base_url):
    ex = run_client(base_url, lambda c: c.stream("NoSuchMethod", {}, label="stream"))
    assert ex.end == END_CLOSED and ex.error is None
    assert ex.status == 400
    assert ex.media_type == "application/json" and not ex.is_sse
    assert ex.events == []
    assert ex.first_bytes(16) == ex.body[:16].decode() and ex.first_bytes().startswith('{"jsonrpc"')
    value, err = ex.json()
    assert err is None and value["error"]["code"] == -32601
    assert json.loads(ex.body)["id"] == ex.rpc_id


# -- a connection the server drops ---------------------------------------------------------------------------

def test_a_request_the_server_dropped_on_a_reused_connection_is_sent_again_and_judged():
    from streamcert.reference.agent.server import ReferenceServer

    unknown = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "no-such-task"}}
    headers = {"A2A-Version": "1.0"}
    with ReferenceServer(fault="close-after-error") as srv:
        with httpx.Client() as plain:  # the fault bites: a client that never resends loses the next request
            assert plain.post(srv.url + "/a2a/jsonrpc", json=unknown, headers=headers).json()["error"]
            # met as the end of the connection, or as a reset when the close found the request unread (which one
            # is the kernel's race, not the server's choice)
            with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)) as lost:
                plain.post(srv.url + "/a2a/jsonrpc", json=unknown, headers=headers)
            said = str(lost.value).lower()
            assert any(w in said for w in ("without sending a response", "reset", "broken pipe")), said

        async def calls(client: A2AClient) -> list:
            return [await client.call("GetTask", {"id": "no-such-task"}, label=f"get_{n}") for n in range(4)]

        log = FrameLog(scenario="dropped")
        exchanges = asyncio.run(_with_client(srv.url, log, calls))
    assert [(ex.status, ex.end, ex.json()[0]["error"]["code"]) for ex in exchanges] == [(200, END_CLOSED, -32001)] * 4
    assert "retried" not in exchanges[0].notes
    # the dropped request met the close as the end of the connection, or as a reset (the server closed it with the
    # request unread): either way before any byte of answer
    met = [said for ex in exchanges[1:] for said in ex.notes["retried"]]
    assert len(met) == 3 and all(any(w in said.lower() for w in ("without sending a response", "reset", "broken pipe"))
                                for said in met), met


def test_a_request_dropped_on_a_connection_opened_for_it_is_not_sent_again():
    from hostile import HostileServer

    async def drop(request, writer):
        return  # closed without a byte of answer

    with HostileServer(drop) as server:
        log = FrameLog(scenario="dropped")
        ex = asyncio.run(_with_client(server.url, log, lambda c: c.call("GetTask", {"id": "t"}, label="get")))
        assert len(server.requests) == 1
    assert ex.end == END_ERROR and "without sending a response" in ex.error and "retried" not in ex.notes


def test_connection_close_is_honoured_without_a_resend():
    from hostile import HostileServer, response

    async def answer(request, writer):
        writer.write(response({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "no"}}))

    with HostileServer(answer) as server:  # every answer says Connection: close and ends its connection
        log = FrameLog(scenario="closing")

        async def calls(client: A2AClient) -> list:
            return [await client.call("GetTask", {"id": "t"}, label=f"get_{n}") for n in range(3)]

        exchanges = asyncio.run(_with_client(server.url, log, calls))
        assert len(server.requests) == 3
    assert all(ex.status == 200 and ex.end == END_CLOSED and "retried" not in ex.notes for ex in exchanges)


async def _with_client(url: str, log: FrameLog, fn):
    async with A2AClient(url, log) as client:
        client.rpc_url = url + "/a2a/jsonrpc"
        return await fn(client)
