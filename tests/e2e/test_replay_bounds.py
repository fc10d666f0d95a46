"""The replay server stays bounded whatever a client sends (issue 25): a request body past its cap is refused
with 413 as it arrives (before the bytes past the cap are read: a chunk's announced size is enough), recorded
as refused and reported against the client (ERROR naming the cap); a client that never reads is let go after
the write timeout."""

from __future__ import annotations

import socket
import sys
import time
from importlib import resources
from pathlib import Path

from client_logs import World, case_log, context

from streamcert.framelog import END_CLIENT_STOP, END_CLOSED, Chunk, Exchange, FrameLog
from streamcert.outcomes import Outcome
from streamcert.recordings import replay
from streamcert.rules import judge

SHIPPED = Path(str(resources.files("streamcert.cassettes") / "reference"))
MIB = 1024 * 1024


def _raw(url: str, data: bytes, *, read: bool = True, wait: float = 5.0) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=wait) as sock:
        sock.sendall(data)
        if not read:
            return b""
        got = b""
        while chunk := sock.recv(65536):
            got += chunk
        return got


def test_a_chunk_announced_past_the_cap_is_refused_with_413_before_it_is_read():
    record = FrameLog(scenario="client-test")
    with replay.ReplayServer([SHIPPED / "stream-basic.yaml"], pace="fast", record=record) as server:
        started = time.monotonic()
        # a chunk of 600 MiB announced, 1 KiB of it sent: nothing more comes, and the answer must not wait for it
        answer = _raw(server.url, b"POST /a2a/jsonrpc HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n"
                      + b"%x\r\n" % (600 * MIB) + b"x" * 1024)
        assert time.monotonic() - started < 3
        small = _raw(server.url, b"POST /a2a/jsonrpc HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n"
                     + (b"%x\r\n" % MIB + b"y" * MIB + b"\r\n") * 16 + b"1\r\nz")
        declared = _raw(server.url, b"POST /a2a/jsonrpc HTTP/1.1\r\nhost: x\r\ncontent-length: %d\r\n\r\n{"
                        % (replay.MAX_BODY + 1))
    for got, figure in ((answer, 600 * MIB), (small, 16 * MIB + 1), (declared, replay.MAX_BODY + 1)):
        assert got.startswith(b"HTTP/1.1 413 "), got[:200]
        assert b"connection: close" in got
        assert f"a request body of at least {figure} bytes, past the replay's cap of {replay.MAX_BODY} bytes".encode() \
            in got
    refused = [ex for ex in record.exchanges if ex.notes.get(replay.REFUSED)]
    assert [(ex.status, ex.end) for ex in refused] == [(413, END_CLOSED)] * 3
    assert refused[0].notes[replay.REFUSED].startswith("POST /a2a/jsonrpc: a request body of at least 629145600 bytes")


def test_a_client_that_never_reads_is_let_go_after_the_write_timeout(monkeypatch):
    monkeypatch.setattr(replay, "WRITE_TIMEOUT_S", 0.5)
    log = FrameLog.load(SHIPPED / "stream-basic.yaml")
    card = log.get("card")
    card.chunks = [Chunk(0.0, b'{"name": "' + b"n" * (32 * MIB) + b'"}')]  # far more than the socket buffers hold
    record = FrameLog(scenario="client-test")
    with replay.ReplayServer([log], pace="fast", record=record) as server:
        host, port = server.url.removeprefix("http://").split(":")
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect((host, int(port)))
            sock.sendall(b"GET /.well-known/agent-card.json HTTP/1.1\r\nhost: x\r\n\r\n")
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and not (record.exchanges and record.exchanges[0].t_end):
                time.sleep(0.05)
    assert record.exchanges and record.exchanges[0].end == END_CLIENT_STOP, "the connection is still held"


def test_a_refused_request_is_reported_against_the_client_naming_the_cap():
    w = World()
    why = f"POST /a2a/jsonrpc: a request body of at least 629145600 bytes, past the replay's cap of {replay.MAX_BODY} bytes"
    refused = Exchange(label="sent", method="POST", url="http://127.0.0.1:41241/a2a/jsonrpc", request_body=None,
                       status=413, t_sent=0.3, t_end=0.31, end=END_CLOSED,
                       notes={"served": None, replay.REFUSED: why})
    w.requests = [*w.requests, refused]
    ids = ("CLIENT-001", "CLIENT-002")
    found = judge(case_log(w), list(ids), context(*ids, w=w))
    errors = [f for f in found if f.outcome is Outcome.ERROR]
    assert {f.req_id for f in errors} == set(ids)
    assert all(f"request #3 (POST /a2a/jsonrpc): {why}" in f.message for f in errors)
    assert any(f.req_id == "CLIENT-001" and f.outcome is Outcome.PASS for f in found)  # what was judged stays judged


if sys.platform != "linux":  # SO_RCVBUF and the timing of a reset are Linux's
    del test_a_client_that_never_reads_is_let_go_after_the_write_timeout
