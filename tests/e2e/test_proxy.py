"""`streamcert proxy` between a client (httpx here) and the embedded reference: what passes reaches the client as it
arrives, the card keeps the client on the proxy, and the cassettes it writes on stop are judged as `check` judges
them (PASS on the reference, the requirement a fault variant breaks FAILed), with the client's credentials scrubbed."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest
import vcr
from logs import TASK_ID, card_get, sse, status_update, task, task_result, unary

from streamcert import cli
from streamcert.framelog import FrameLog
from streamcert.protocols import bindings
from streamcert.protocols.script import SCRIPT_KEY
from streamcert.reference.agent.server import ReferenceServer
from streamcert.running.proxy import GONE, rewrite_card
from streamcert.running.proxy_logs import Filing

SECRET = "proxy-secret-7Qx9"
START_S = 30.0  # a loaded machine may take this long to import and print the first line


def _proxy(upstream: str, tmp: Path, *extra: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "streamcert", "proxy", "--upstream", upstream, "--record",
                             str(tmp / "rec"), "--report", str(tmp / "rep"), "--stream-limit", "5", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp)
    first: list[str] = []
    reader = threading.Thread(target=lambda: first.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(START_S)
    if not (first and first[0].startswith("http://127.0.0.1:")):
        proc.kill()
        raise AssertionError(f"the proxy printed no URL first: {first} {proc.communicate()}")
    return proc, first[0].split()[0]


def _message(steps: list[dict]) -> dict:
    return {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"text": "go"}],
            "metadata": {SCRIPT_KEY: {"version": 1, "name": "proxied", "steps": steps}}}


def _stream(url: str, steps: list[dict], headers: dict[str, str] | None = None) -> list[tuple[float, dict]]:
    """(arrival time, frame) of every event of one SendStreamingMessage, read as the bytes come."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": _message(steps)}}
    frames = []
    with httpx.stream("POST", url, json=body, timeout=20, headers={
            "Accept": "text/event-stream", "A2A-Version": "1.0", **(headers or {})}) as answer:
        assert answer.status_code == 200
        for line in answer.iter_lines():
            if line.startswith("data:"):
                frames.append((time.monotonic(), json.loads(line[5:])))
    return frames


def _ended(proc: subprocess.Popen) -> tuple[str, str]:
    """What the proxy printed once it has ended (killed if it has not within a minute: never left running)."""
    try:
        return proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise


def _stop(proc: subprocess.Popen) -> tuple[int, str]:
    proc.send_signal(signal.SIGTERM)
    out, err = _ended(proc)
    assert "Traceback" not in err, err
    return proc.returncode, out


def _requirements(report_dir: Path) -> dict[str, str]:
    report = json.loads((report_dir / "compatibility.json").read_text())
    return {r["id"]: r["status"] for r in report["requirements"]}


def test_proxy_forwards_as_it_arrives_records_scrubbed_and_judges_on_sigterm(tmp_path):
    with ReferenceServer() as ref:
        proc, here = _proxy(ref.url, tmp_path)
        try:
            card = httpx.get(here + "/.well-known/agent-card.json", timeout=20).json()
            served = dict(bindings.declared(card))
            assert served[bindings.JSONRPC].startswith(here + "/")  # the client stays on the proxy
            assert served[bindings.HTTP_JSON].startswith(here + "/")
            auth = {"Authorization": f"Bearer {SECRET}"}
            frames = _stream(served[bindings.JSONRPC], [{"status": "one"}, {"sleep": 800}, {"finish": "done"}], auth)
            task_id = frames[0][1]["result"]["task"]["id"]
            # the first event came before the upstream slept: nothing was held back until the end
            assert frames[-1][0] - frames[0][0] >= 0.5, [t for t, _ in frames]
            got = httpx.post(served[bindings.JSONRPC], timeout=20, headers={"A2A-Version": "1.0", **auth},
                             json={"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": task_id}})
            assert got.json()["result"]["id"] == task_id
            rest = httpx.get(f"{served[bindings.HTTP_JSON]}/tasks/{task_id}", headers={"A2A-Version": "1.0"},
                             params={"historyLength": 0}, timeout=20)
            assert rest.json()["id"] == task_id
            with httpx.stream("POST", served[bindings.JSONRPC], timeout=20, headers={"A2A-Version": "1.0"}, json={
                    "jsonrpc": "2.0", "id": 3, "method": "SendStreamingMessage", "params": {"message": _message(
                        [{"status": "one"}, {"sleep": 4000}, {"finish": "done"}])}}) as answer:
                next(answer.iter_lines())  # the client leaves after the first line
        finally:
            code, out = _stop(proc)
    assert code == 0, out
    assert "no departure in the recordings" in out
    cassettes = sorted((tmp_path / "rec").glob("*.yaml"))
    assert [p.name for p in cassettes] == ["card.yaml", "task-001.yaml", "task-002.yaml", "task-003.yaml"]
    assert all(SECRET not in p.read_text() for p in cassettes)
    task = FrameLog.load(tmp_path / "rec" / "task-001.yaml")
    assert [ex.label for ex in task.exchanges] == ["card", "stream", "get_task"]
    sent = {k.lower(): v for k, v in task.get("stream").request_headers.items()}
    assert "authorization" in sent and SECRET not in sent["authorization"]
    assert task.get("card").json()[0]["supportedInterfaces"][0]["url"].startswith(ref.url)  # as the upstream sent it
    over_rest = FrameLog.load(tmp_path / "rec" / "task-002.yaml")  # the same task read over HTTP+JSON: a log of its own
    assert [(ex.label, ex.rpc_method, ex.binding) for ex in over_rest.exchanges[1:]] == [
        ("get_task_more_1", "GetTask", "http-json")] and over_rest.notes["binding"] == "http-json"
    assert over_rest.exchanges[1].params == {"id": task_id, "historyLength": "0"}
    left = FrameLog.load(tmp_path / "rec" / "task-003.yaml").get("stream")  # the upstream saw the client leave
    assert left.end == "client_stop" and left.error == GONE
    statuses = _requirements(tmp_path / "rep")
    assert {statuses[r] for r in ("WIRE-002", "A2A-STREAM-001", "A2A-STREAM-009", "A2A-TASK-001",
                                  "A2A-CARD-001")} == {"PASS"}
    assert statuses["A2A-STREAM-014"] == "NOT_TESTED"  # a proxied client's script is not what the suite asked for
    # what the proxy wrote, `streamcert check` judges alike, and plain vcrpy replays
    assert cli.main(["check", *map(str, cassettes), "--report", str(tmp_path / "check")]) == 0
    assert _requirements(tmp_path / "check") == statuses
    recorded = task.get("get_task")
    with vcr.use_cassette(str(tmp_path / "rec" / "task-001.yaml"), record_mode="none",
                          match_on=["method", "uri", "body"]):
        assert httpx.post(recorded.url, json=recorded.request_body).json()["result"]["id"] == task_id


def test_proxy_fails_the_requirement_a_fault_variant_breaks(tmp_path):
    """Over HTTP+JSON, from a client that never reads the card (the proxy read it at start)."""
    with ReferenceServer(fault="close-early") as ref:
        proc, here = _proxy(ref.url, tmp_path, "--max-exchanges", "1")
        rest = dict(bindings.declared(httpx.get(ref.url + "/.well-known/agent-card.json").json()))[bindings.HTTP_JSON]
        steps = [{"status": "one"}, {"status": "two"}, {"finish": "done"}]
        with httpx.stream("POST", here + rest[len(ref.url):] + "/message:stream", json={"message": _message(steps)},
                          headers={"A2A-Version": "1.0"}, timeout=20) as answer:
            answer.read()
        out, err = _ended(proc)  # it stops by itself after one exchange
    assert proc.returncode == 1, (out, err)
    assert "departures in the recordings: " in out and "A2A-STREAM-009" in out
    assert _requirements(tmp_path / "rep")["A2A-STREAM-009"] == "FAIL"
    stream = FrameLog.load(tmp_path / "rec" / "task-001.yaml").get("stream")
    assert (stream.rpc_method, stream.binding) == ("SendStreamingMessage", "http-json")


def test_card_rewritten_only_at_the_upstream_origin():
    card = {"supportedInterfaces": [
        {"url": "http://up:1/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "http://up:1/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        {"url": "http://up:1", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
        {"url": "http://up:10/a2a/jsonrpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "http://elsewhere/x", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}
    urls = [i["url"] for i in rewrite_card(card, "http://up:1", "http://127.0.0.1:9")["supportedInterfaces"]]
    assert urls == ["http://127.0.0.1:9/a2a/jsonrpc", "http://127.0.0.1:9/a2a/rest", "http://up:1",
                    "http://up:10/a2a/jsonrpc", "http://elsewhere/x"]


@pytest.mark.parametrize("operation", ["GetTask", "CancelTask", "SubscribeToTask", "SendMessage",
                                       "SendStreamingMessage", "ListTasks", "GetExtendedAgentCard",
                                       "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
                                       "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig"])
def test_rest_operation_reads_back_every_route(operation):
    params = {"id": "t/1", "taskId": "t 2"}
    method, path, _, _ = bindings.rest_route(operation, params)
    op, ids = bindings.rest_operation(method, path)
    assert op == operation
    assert all(params[k] == v for k, v in ids.items())
    assert bindings.rest_operation("PUT", path) == (None, {}) or operation == "SendMessage"


def test_filing_labels_a_task_as_the_driver_does_and_keeps_a_mid_stream_get_task_apart():
    t1 = {"id": TASK_ID}
    stream = sse("SendStreamingMessage", [task_result(), status_update("TASK_STATE_COMPLETED")], t=1.0)
    during = unary("GetTask", task(), rpc_method="GetTask", params=t1, t=1.005)
    after = [unary("GetTask", task(), rpc_method="GetTask", params={**t1, **h}, t=2.0 + n)
             for n, h in enumerate(({}, {"historyLength": 0}, {"historyLength": 1}, {}))]
    listed = unary("ListTasks", {"tasks": []}, rpc_method="ListTasks", params={}, t=6.0)
    filing = Filing("http://up:1")
    for ex in (card_get(t=0.5), stream, during, *after, listed):
        filing.add(ex)
    (_, card), (_, log), (_, loose) = filing.logs()
    assert [ex.label for ex in log.exchanges] == ["card", "stream", "get_task_more_1", "get_task", "get_task_h0",
                                                  "get_task_h1", "get_task_more_2"]
    assert [ex.label for ex in loose.exchanges] == ["ListTasks_1"]
    assert log.notes["no_script"] is True and log.scenario == "stream-basic" and card.scenario == "card"
