"""`streamcert replay`: recorded cassettes served as an A2A agent on 127.0.0.1. A client (httpx-sse here; the
a2a-sdk client in docs/cassettes.md) reads the recorded card, stream and answers, with the recorded chunking
and pacing, its own JSON-RPC ids, and a clear error for a request the cassette has no answer for."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import httpx
import pytest
from httpx_sse import connect_sse

from streamcert.framelog import Chunk, Event, Exchange, FrameLog
from streamcert.protocols.script import SCRIPT_KEY
from streamcert.recordings.replay import UNMATCHED, ReplayServer
from streamcert.recordings.replay_answers import id_spans, substituted

SHIPPED = resources.files("streamcert.cassettes") / "reference"


def cassette(name: str) -> Path:
    return Path(str(SHIPPED / f"{name}.yaml"))


def send(text: str = "go", rpc_id: object = "c-1", script: str | None = None) -> dict:
    message = {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}]}
    if script:
        message["metadata"] = {SCRIPT_KEY: {"version": 1, "name": script, "steps": []}}
    return {"jsonrpc": "2.0", "id": rpc_id, "method": "SendStreamingMessage", "params": {"message": message}}


def test_httpx_sse_reads_a_recorded_stream():
    recorded = FrameLog.load(cassette("stream-basic"))
    with ReplayServer([cassette("stream-basic")], pace="fast") as server, httpx.Client(timeout=10) as client:
        card = client.get(server.url + "/.well-known/agent-card.json").json()
        rpc = card["supportedInterfaces"][0]["url"]
        assert rpc.startswith(server.url + "/")  # the recorded server's URL now points here
        with connect_sse(client, "POST", rpc, json=send(rpc_id="client-7")) as source:
            frames = [json.loads(sse.data) for sse in source.iter_sse()]
        expected = [json.loads(ev.data) for ev in recorded.get("stream").data_events()]
        assert [f["result"] for f in frames] == [e["result"] for e in expected]
        assert {f["id"] for f in frames} == {"client-7"}  # the request's id, not the recorded one
        task_id = frames[0]["result"]["task"]["id"]
        got = client.post(rpc, json={"jsonrpc": "2.0", "id": 9, "method": "GetTask", "params": {"id": task_id}}).json()
        assert got["id"] == 9 and got["result"]["id"] == task_id
        for _ in range(2):  # the 2nd and 3rd recorded GetTask answers
            assert "result" in client.post(rpc, json={"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                                                      "params": {"id": task_id}}).json()
        extra = client.post(rpc, json={"jsonrpc": "2.0", "id": 4, "method": "GetTask", "params": {"id": task_id}}).json()
        assert extra["id"] == 4 and extra["error"]["code"] == UNMATCHED
        message = extra["error"]["message"]
        assert "GetTask #4 in scenario stream-basic" in message and "holds 3 GetTask answer(s)" in message


def paced_log(gaps: list[float], end: str = "closed") -> FrameLog:
    """A stream of len(gaps) frames, each `gap` seconds after the one before."""
    chunks, events, t = [], [], 0.01
    for n, gap in enumerate(gaps):
        t += gap
        data = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"n": n}}})
        chunks.append(Chunk(t, f"data: {data}\n\n".encode()))
        events.append(Event(n, t, data=data))
    ex = Exchange(label="stream", method="POST", url="http://127.0.0.1:1/a2a/jsonrpc", rpc_method="SendStreamingMessage",
                  request_body=send(rpc_id=1), status=200, response_headers={"content-type": "text/event-stream"},
                  t_sent=0.0, t_headers=0.005, t_end=t + 0.01, end=end, chunks=chunks, events=events,
                  notes={"streaming": True})
    return FrameLog(scenario="stream-basic", target="http://127.0.0.1:1", exchanges=[ex])


def arrivals(url: str) -> list[float]:
    started = time.monotonic()
    with httpx.Client(timeout=10) as client, connect_sse(client, "POST", url + "/a2a/jsonrpc", json=send()) as source:
        return [time.monotonic() - started for _ in source.iter_sse()]


def test_recorded_pacing_and_fast(tmp_path):
    path = paced_log([0.0, 0.3, 0.3, 0.3]).save(tmp_path / "paced.yaml")
    with ReplayServer([path]) as server:
        paced = arrivals(server.url)
    gaps = [b - a for a, b in zip(paced, paced[1:])]
    assert len(paced) == 4 and all(0.25 <= g <= 0.6 for g in gaps), gaps
    with ReplayServer([path], pace="fast") as server:
        fast = arrivals(server.url)
    # fast: every event at once. Measured from the first event: the first one's wait is the connection and the
    # request on this machine (0.31 s in a loaded run, where all four then came within 0.2 ms)
    assert len(fast) == 4 and fast[-1] - fast[0] < 0.25, fast


def test_a_recorded_reset_drops_the_connection(tmp_path):
    path = paced_log([0.0, 0.0], end="reset").save(tmp_path / "reset.yaml")
    with ReplayServer([path], pace="fast") as server, httpx.Client(timeout=10) as client:
        seen = []
        with pytest.raises(httpx.HTTPError):
            with connect_sse(client, "POST", server.url + "/a2a/jsonrpc", json=send()) as source:
                for sse in source.iter_sse():
                    seen.append(sse.data)
        assert len(seen) == 2  # what was recorded came, then the connection broke as it did


def test_which_scenario_a_request_is_for():
    paths = [cassette("stream-basic"), cassette("stream-fail")]
    with ReplayServer(paths, pace="fast") as server, httpx.Client(timeout=10) as client:
        rpc = server.url + "/a2a/jsonrpc"

        def first_frames(body: dict) -> list[dict]:
            with connect_sse(client, "POST", rpc, json=body) as source:
                return [json.loads(sse.data) for sse in source.iter_sse()]

        failed = first_frames(send(script="stream-fail"))
        assert failed[-1]["result"]["statusUpdate"]["status"]["state"] == "TASK_STATE_FAILED"
        task_id = failed[0]["result"]["task"]["id"]  # named by a later request: stream-fail's task
        got = client.post(rpc, json={"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task_id}}).json()
        assert got["result"]["status"]["state"] == "TASK_STATE_FAILED"
        unnamed = client.post(rpc, json=send()).json()
        assert unnamed["error"]["code"] == UNMATCHED and "give --scenario" in unnamed["error"]["message"]
        unknown = client.post(rpc, json=send(script="no-such")).json()
        assert "'no-such'" in unknown["error"]["message"]
    with ReplayServer(paths, pace="fast", scenario="stream-basic") as server:
        assert len(arrivals(server.url)) == 9  # --scenario: the request names none
        again = httpx.post(server.url + "/a2a/jsonrpc", json=send(), timeout=10).json()  # one stream was recorded
        assert "SendStreamingMessage #2 in scenario stream-basic (chosen: --scenario)" in again["error"]["message"]


def test_substituted_keeps_the_recorded_cuts():
    chunks = [b'data: {"id":1,', b'"x":1}\n\n', b'data: {"id":1}\n\n']
    out = substituted(chunks, id_spans(b"".join(chunks), 1, "abc"))
    assert b"".join(out) == b'data: {"id":"abc","x":1}\n\ndata: {"id":"abc"}\n\n'
    assert len(out) == 3 and out[1] == b'"x":1}\n\n'


def test_the_replay_command(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "streamcert", "replay", str(cassette("card")), "--pace", "fast"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), proc.stderr.read() if proc.poll() is not None else url
        card = httpx.get(url + "/.well-known/agent-card.json", timeout=10).json()
        assert card["supportedInterfaces"][0]["url"].startswith(url)
    finally:
        proc.terminate()
        proc.wait(10)
    assert proc.returncode == 0
    bad = subprocess.run([sys.executable, "-m", "streamcert", "replay", str(tmp_path / "none.yaml")],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "none.yaml" in bad.stderr
