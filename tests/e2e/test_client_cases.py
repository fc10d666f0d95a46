"""Client cases (cases/client/client-*.json, docs/clients.md): what each case serves follows from its base recording
and its variations, and its expected view from what it serves; the replay server records what a client sends;
the driver runs a client as docs/contracts.md §7 says and records a client that answers, hangs, crashes or prints no JSON."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from processes import running

from streamcert.catalogue import Scenario, load_catalogue, load_scenario, scenario_ids
from streamcert.contract.client import HOLD, UNTERMINATED
from streamcert.contract.labels.client import SENT
from streamcert.drivers import client as client_driver
from streamcert.drivers import run_scenario
from streamcert.framelog import END_CLOSED, END_ERROR, END_TIME_LIMIT, FrameLog
from streamcert.protocols.interactions_v1 import URI as INTERACTIONS
from streamcert.protocols.progress_v1 import URI as PROGRESS
from streamcert.recordings import cassette, client_cases
from streamcert.recordings.replay import ReplayServer
from streamcert.rules import RuleContext, judge
from streamcert.targets import Target
from streamcert.wire.sse import SSEParser

CASES = client_cases.case_ids()
# The client faults of the design and the requirement each must be caught by (docs/clients.md).
FAULT_REQUIREMENTS = {"merge-plans": "CLIENT-001", "arrival-order": "CLIENT-002", "split-char-lost": "CLIENT-004",
                      "lastchunk-ends-stream": "CLIENT-006", "unknown-variant-gives-up": "CLIENT-010",
                      "waits-final-flag": "CLIENT-009", "bom-drops-first": "CLIENT-005",
                      "dispatches-unterminated": "CLIENT-005", "answers-first-pause-only": "CLIENT-008",
                      "new-id-on-retry": "CLIENT-012"}


def built(case_id: str) -> FrameLog:
    return client_cases.build(client_cases.load_case(case_id))


def events(ex) -> list:
    parser = SSEParser()
    out = []
    for c in ex.chunks:
        out += parser.feed(c.data, c.t)
    return out + parser.finish()


def data(ex) -> list:
    return [json.loads(ev.data) for ev in events(ex) if not ev.is_comment]


# -- the case files --------------------------------------------------------------------------------------------

def test_the_cases_are_client_scenarios():
    assert len(CASES) >= 20 and set(CASES) <= set(scenario_ids())
    catalogue = load_catalogue()
    for case_id in CASES:
        scenario = load_scenario(case_id)
        assert scenario.profile == "client" and scenario.data["driver"] == "client-case", case_id
        assert all(r.startswith("CLIENT-") and not r.startswith("CLIENT-ACP-") and r in catalogue
                   for r in scenario.requirements), case_id
        assert set(scenario.data["expected"]) == {"task", "artifacts", "plan", "interaction", "statusText"}, case_id


def test_every_client_requirement_has_a_case_and_every_fault_its_requirement():
    named = {r for case_id in CASES for r in load_scenario(case_id).requirements}
    wanted = {r for r in load_catalogue() if r.startswith("CLIENT-") and not r.startswith("CLIENT-ACP-")}
    assert wanted <= named, sorted(wanted - named)
    assert set(FAULT_REQUIREMENTS.values()) <= named


def _results(log: FrameLog) -> list[dict]:
    """Every result the case's POST answers serve, in order."""
    out = []
    for ex in log.exchanges:
        if ex.method == "POST" and ex.status is not None:
            values = data(ex) if ex.is_sse else [ex.json()[0]]
            out += [v["result"] for v in values if isinstance(v, dict) and isinstance(v.get("result"), dict)]
    return out


@pytest.mark.parametrize("case_id", CASES)
def test_a_case_names_every_requirement_a_stop_or_a_plan_mistake_is_blamed_on(case_id):
    # Issue 22: a view that is the stream up to the first lastChunk or interruption is CLIENT-006's or -008's in
    # every case where that explains it, and a plan taken wrong CLIENT-001's: a case whose stream offers the
    # chance names them, or the blame would go to the case's variation (rules/client/client.py, stop_of)
    results = _results(built(case_id))
    named = set(load_scenario(case_id).requirements)

    def status(r):
        return (r.get("statusUpdate") or r.get("task") or {}) if isinstance(r, dict) else {}

    cut = any((r.get("artifactUpdate") or {}).get("lastChunk") is True for r in results[:-1])
    paused = any((status(r).get("status") or {}).get("state") in ("TASK_STATE_INPUT_REQUIRED",
                                                                  "TASK_STATE_AUTH_REQUIRED") for r in results)
    planned = any(PROGRESS in (status(r).get("metadata") or {}) for r in results)
    wanted = {rid for rid, offered in (("CLIENT-006", cut), ("CLIENT-008", paused), ("CLIENT-001", planned))
              if offered}
    assert wanted <= named, f"{case_id} does not name {sorted(wanted - named)}"


@pytest.mark.parametrize("case_id", CASES)
def test_what_a_case_serves_is_what_its_file_says(case_id):
    case = client_cases.load_case(case_id)
    log = client_cases.build(case)
    assert client_cases.describe(log) == case["served"]
    assert [ex.label for ex in log.exchanges] == list(case["served"])


# An oracle of the view, written from the texts (docs/clients.md) apart from the reference client: it reads what a
# case serves, in the order served, and says what a client shows. A case's `expected` is written by hand from its
# `served` lines; this keeps the two from drifting apart.
def _oracle(log: FrameLog) -> dict:
    task, statuses, artifacts = None, [], {}
    for ex in log.exchanges:
        if ex.status is None:
            continue
        values = [json.loads(ev.data) for ev in ex.data_events()] if ex.is_sse else [ex.json()[0]]
        for value in values:
            result = value.get("result") if isinstance(value, dict) else None
            if not isinstance(result, dict):
                continue
            kind, item = next(iter(result.items())) if len(result) == 1 else ("task", result)
            if kind == "task":
                task = task or {"id": item["id"], "contextId": item["contextId"]}
                if (item["id"], item["contextId"]) == (task["id"], task["contextId"]):
                    statuses.append((item["status"], item.get("metadata") or {}))  # seed 000: its latest plan
                continue
            if task is None or (item.get("taskId"), item.get("contextId")) != (task["id"], task["contextId"]):
                continue  # another task's frame
            if kind == "statusUpdate":
                statuses.append((item["status"], item.get("metadata") or {}))
            elif kind == "artifactUpdate":
                art = item["artifact"]
                shown = artifacts.setdefault(art["artifactId"], {"artifactId": art["artifactId"], "name": None})
                if not item.get("append"):
                    shown.pop("text", None)
                shown["name"] = shown["name"] or art.get("name")
                for part in art["parts"]:
                    if "text" in part:
                        shown["text"] = shown.get("text", "") + part["text"]
                    else:
                        shown["data"] = part["data"]
    order = sorted(range(len(statuses)), key=lambda n: (statuses[n][0]["timestamp"], n))

    def latest(pick):
        found = [pick(*statuses[n]) for n in order if pick(*statuses[n]) is not None]
        return found[-1] if found else None

    def text(status, _):
        parts = (status.get("message") or {}).get("parts") or []
        texts = [p["text"] for p in parts if "text" in p]
        return "".join(texts) if texts else None

    def plan(_, metadata):
        steps = (metadata or {}).get(PROGRESS, {}).get("steps")
        return None if steps is None else [{k: s[k] for k in ("label", "state", "note") if k in s} for s in steps]

    def interaction(status, _):
        ix = ((status.get("message") or {}).get("metadata") or {}).get(INTERACTIONS)
        return None if ix is None else {"kind": ix["kind"], "prompt": ix["prompt"]}

    return {"task": {**task, "state": statuses[order[-1]][0]["state"]}, "artifacts": list(artifacts.values()),
            "plan": latest(plan), "interaction": latest(interaction), "statusText": latest(text)}


@pytest.mark.parametrize("case_id", CASES)
def test_the_expected_view_follows_from_what_is_served(case_id):
    expected = client_cases.load_case(case_id)["expected"]
    assert _oracle(built(case_id)) == expected  # 11.0 == 11 here as in the rules: JSON values


# -- the variations ----------------------------------------------------------------------------------------------

def test_line_ends_bom_and_cuts_change_the_bytes_not_the_events():
    plain = data(built("client-basic").get("stream"))
    assert len(plain) == 9
    for case_id, check in [
        ("client-line-ends-crlf", lambda b: b.count(b"\r\n") == b.count(b"\n") == b.count(b"\r") > 0),
        ("client-line-ends-cr", lambda b: b"\n" not in b and b.count(b"\r") >= 18),
        ("client-line-ends-mixed", lambda b: b"\r\n" in b and b.replace(b"\r\n", b"").count(b"\n") > 0
         and b.replace(b"\r\n", b"").count(b"\r") > 0),
        ("client-bom", lambda b: b.startswith(b"\xef\xbb\xbfdata: ")),
        ("client-keepalives", lambda b: b.startswith(b": keep-alive\n\n") and b"\n:\n\n" in b),
        ("client-keepalives-ids", lambda b: b"\nid: ka-1\n\n" in b and b"\nretry: 2500\n\n" in b and b"id: e9\n" in b),
    ]:
        stream = built(case_id).get("stream")
        body = stream.wire_bytes
        assert check(body), case_id
        results = [d["result"] for d in data(stream)]
        if case_id == "client-bom":  # its Task carries a plan besides (the next test)
            results[0]["task"].pop("metadata")
        assert results == [_without_ids(d["result"], case_id) for d in plain], case_id


def test_after_the_bom_only_the_first_event_carries_the_plan():
    """A client that loses the first event (the BOM read into its field name) shows no plan: no later frame
    repeats it, though every one repeats the task's ids."""
    frames = data(built("client-bom").get("stream"))
    plan = frames[0]["result"]["task"]["metadata"][PROGRESS]
    assert [s["label"] for s in plan["steps"]] == [s["label"] for s in load_scenario("client-bom").data["expected"]["plan"]]
    assert all(PROGRESS not in json.dumps(f) for f in frames[1:])


def test_line_separators_stand_raw_and_end_no_line():
    stream = built("client-line-separators").get("stream")
    body = stream.wire_bytes
    assert all(body.count(ch.encode()) == 2 for ch in "\u2028\u2029\u0085")  # raw, not \uXXXX escapes
    assert len(data(stream)) == 9  # an event-stream reader: nine events, each one JSON value
    # A reader that ends lines as str.splitlines does cuts the two data lines inside their JSON strings.
    cut = [line[len("data: "):] for line in body.decode().splitlines() if line.startswith("data: ")]
    assert sum(1 for line in cut if not _is_json(line)) == 2


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _without_ids(result: dict, case_id: str) -> dict:
    """client-basic's result with the ids the other case gives."""
    name = {"client-line-ends-crlf": "ends-crlf", "client-line-ends-cr": "ends-cr", "client-line-ends-mixed":
            "ends-mixed", "client-bom": "bom", "client-keepalives": "keepalive", "client-keepalives-ids": "ka-ids"}
    return _renamed(result, name[case_id])


def test_the_stream_can_end_inside_its_last_event():
    # WHATWG HTML §9.2.6: the pending data is discarded at the end of the stream: the case serves the terminal
    # status's data line and its line end, no blank line, and an event-stream reader dispatches 8 events, not 9
    whole = built("client-basic").get("stream")
    stream = built("client-unterminated").get("stream")
    body = stream.wire_bytes
    assert body.endswith(b'"}}}}\n') and not body.endswith(b"\n\n") and body.count(b"\n\n") == 8
    assert [d["result"] for d in data(stream)] == [_renamed(d["result"], "unterminated") for d in data(whole)[:-1]]
    assert b"TASK_STATE_COMPLETED" in body.rsplit(b"\n\n", 1)[1]
    assert stream.notes[UNTERMINATED].startswith('data: {"jsonrpc":"2.0"')
    # without even the data line's own line end; and a stream whose last block is no event cannot end inside one
    case = {"id": "client-x", "base": "stream-basic", "variations": [{"kind": "unterminated", "line_end": False}]}
    assert client_cases.build(case).get("stream").wire_bytes.endswith(b'"}}}}')
    case["variations"].append({"kind": "keepalives"})
    with pytest.raises(client_cases.CaseError, match="not a data event"):
        client_cases.build(case)


def _renamed(result: dict, name: str) -> dict:
    text = json.dumps(result).replace("task-basic", f"task-{name}").replace("ctx-basic", f"ctx-{name}")
    return json.loads(text)


def test_rechunking_cuts_inside_characters_and_lines():
    stream = built("client-utf8-split").get("stream")
    chunks = [c.data for c in stream.chunks]
    body = b"".join(chunks)
    wide = [ch for ch in body.decode() if len(ch.encode()) > 1]
    assert wide and sum(1 for c in chunks if c and c[-1] >= 0xC0) == len(wide)  # each ends after a lead byte
    assert all(b.t - a.t == pytest.approx(0.02) for a, b in zip(stream.chunks, stream.chunks[1:]))
    crlf = built("client-line-ends-crlf").get("stream")
    assert any(c.data.endswith(b"\r") for c in crlf.chunks)  # a CRLF cut between its CR and its LF
    assert any(c.data.startswith(b"ta: {") for c in crlf.chunks)  # a field name cut
    one = built("client-utf8-bytes")
    assert all(c.length == 1 for ex in one.exchanges if ex.is_sse for c in ex.chunks)


def test_ids_timestamps_and_floats():
    base = cassette.load(client_cases.reference_dir() / "stream-basic.yaml")
    task = base.get("stream").data_events()[0].payload["result"]["task"]
    log = built("client-number-float")
    served = b"".join(ex.wire_bytes for ex in log.exchanges)
    assert task["id"].encode() not in served and task["contextId"].encode() not in served
    assert b'"data":{"passed":11.0,"failed":1.0}' in served
    stamps = [f["result"].get("statusUpdate", f["result"].get("task"))["status"]["timestamp"]
              for f in data(log.get("stream")) if "artifactUpdate" not in f["result"]]
    assert stamps == ["2026-11-02T09:00:00.000Z", "2026-11-02T09:00:01.000Z", "2026-11-02T09:00:02.000Z"]
    # D3 open: a status sent on both streams (and in SendMessage's answer) keeps one stamp
    open_ = built("client-d3-open")
    first = [f["result"]["statusUpdate"]["status"] for f in data(open_.get("stream"))[3:]]
    answer = [f["result"].get("statusUpdate", f["result"].get("task"))["status"] for f in data(open_.get("answer_1"))]
    assert [s["timestamp"] for s in first] == [s["timestamp"] for s in answer]
    assert open_.get("retry_1").json()[0]["result"]["task"]["status"]["timestamp"] == first[0]["timestamp"]


def test_hold_drop_and_the_base_left_alone():
    path = client_cases.reference_dir() / "d3-open" / "ix-question.yaml"
    before = path.read_bytes()
    log = built("client-d3-open")
    assert path.read_bytes() == before
    stream = log.get("stream")
    hold = stream.notes[HOLD]
    held = b"".join(c.data for c in stream.chunks[:hold["chunk"]])
    assert held.count(b"\n\n") == 3 and b"TASK_STATE_INPUT_REQUIRED" in held  # the frames up to the pause
    assert hold["until"] == [["rpc SendStreamingMessage", 2], ["rpc SendMessage", 1]]
    retry = built("client-retry")
    assert [ex.label for ex in retry.exchanges] == ["card", "stream", "answer_1_dropped", "answer_1", "answer_2"]
    dropped = retry.get("answer_1_dropped")
    assert dropped.status is None and dropped.end == END_ERROR and not dropped.chunks
    assert client_cases.describe(built("client-d3-open")) == client_cases.describe(log)  # the same every time


def test_a_case_that_cannot_be_built_says_why():
    case = {"id": "client-x", "base": "stream-basic", "variations": [{"kind": "shuffle"}]}
    with pytest.raises(client_cases.CaseError, match="variation 1 has kind 'shuffle'"):
        client_cases.build(case)
    case["variations"] = [{"kind": "move", "frame": 12, "before": 1}]
    with pytest.raises(client_cases.CaseError, match="frames 1 to 9, not 12"):
        client_cases.build(case)
    case["variations"] = [{"kind": "text", "frame": 8, "text": "x"}]  # summary.json: a data chunk
    with pytest.raises(client_cases.CaseError, match="frame 8 has no text"):
        client_cases.build(case)
    case["variations"] = [{"kind": "text", "frame": 1, "text": "x"}]
    with pytest.raises(client_cases.CaseError, match="frame 1 is a task, not an update"):
        client_cases.build(case)
    with pytest.raises(client_cases.CaseError, match="no base recording"):
        client_cases.build({"id": "client-x", "base": "nothing-here"})


# -- the replay server's record --------------------------------------------------------------------------------

def _message(text: str = "go", message_id: str = "m-1", **more) -> dict:
    return {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}], **more}


def _rpc(method: str, rpc_id: object, message: dict) -> dict:
    return {"jsonrpc": "2.0", "id": rpc_id, "method": method, "params": {"message": message}}


def test_the_replay_records_what_it_is_sent_and_what_it_answers():
    record = FrameLog(scenario="record")
    with ReplayServer([built("client-retry")], pace="fast", record=record) as server, \
            httpx.Client(timeout=10) as http:
        rpc = http.get(server.url + "/.well-known/agent-card.json").json()["supportedInterfaces"][0]["url"]
        http.post(rpc, json=_rpc("SendStreamingMessage", 1, _message()), headers={"A2A-Version": "1.0"})
        with pytest.raises(httpx.TransportError):
            http.post(rpc, json=_rpc("SendStreamingMessage", 2, _message(message_id="a-1")))
        http.post(rpc, json=_rpc("SendStreamingMessage", 3, _message(message_id="a-1")))
        http.post(rpc, content=b"not json", headers={"content-type": "application/json"})
    sent = record.all(SENT)
    assert [(s.method, s.rpc_method, s.status, s.end) for s in sent] == [
        ("GET", None, 200, END_CLOSED), ("POST", "SendStreamingMessage", 200, END_CLOSED),
        ("POST", "SendStreamingMessage", None, END_ERROR), ("POST", "SendStreamingMessage", 200, END_CLOSED),
        ("POST", None, 404, END_CLOSED)]
    assert [s.notes.get("answer") for s in sent] == ["card", "stream", "answer_1_dropped", "answer_1", None]
    assert [s.notes["served"] for s in sent] == ["closed", "closed", "error", "closed", None]
    assert "several" not in sent[4].notes["unmatched"] and sent[4].request_body == "not json"
    assert sent[1].request_headers["a2a-version"] == "1.0" and sent[1].request_body["id"] == 1
    assert sent[1].response_headers["content-type"] == "text/event-stream"
    assert sent[2].request_body["params"]["message"]["messageId"] == sent[3].request_body["params"]["message"]["messageId"]
    times = [(s.t_sent, s.t_end) for s in sent]
    assert all(a <= b for a, b in times) and [a for a, _ in times] == sorted(a for a, _ in times)


@pytest.mark.parametrize("case_id", ["client-basic", "client-no-streaming"])
def test_the_card_is_served_at_the_origin_and_rpc_only_at_the_interface_it_declares(case_id):
    # Issue 22: STREAMCERT_URL is an origin; no-streaming's recording served its agent under /agents/no-streaming,
    # and an SDK that read the card at the origin, as A2A places it, got 404 there
    log = built(case_id)
    record = FrameLog(scenario="record")
    body = _rpc("SendMessage" if case_id == "client-no-streaming" else "SendStreamingMessage", 1, _message())
    with ReplayServer([log], pace="fast", record=record, interfaces=client_cases.interface_paths(log)) as server, \
            httpx.Client(timeout=10) as http:
        card = http.get(server.url + "/.well-known/agent-card.json")
        rpc = card.json()["supportedInterfaces"][0]["url"]
        assert card.status_code == 200 and rpc.startswith(server.url + "/")
        under = http.get(server.url + "/agents/no-streaming/.well-known/agent-card.json")
        at_origin = http.post(server.url, json=body, headers={"A2A-Version": "1.0"})
        elsewhere = http.post(server.url + "/a2a/other", json=body, headers={"A2A-Version": "1.0"})
        right = http.post(rpc, json=body, headers={"A2A-Version": "1.0"})
    assert (under.status_code, at_origin.status_code, elsewhere.status_code, right.status_code) == (404, 404, 404, 200)
    assert "not an interface URL the agent card declares" in record.all(SENT)[2].notes["unmatched"]
    assert client_cases.interface_paths(log) == {urlsplit(rpc).path}
    if case_id == "client-no-streaming":
        assert urlsplit(rpc).path == "/agents/no-streaming/a2a/jsonrpc"


def test_a_held_stream_goes_on_once_the_answer_comes():
    record = FrameLog(scenario="record")
    got: list[str] = []
    with ReplayServer([built("client-d3-open")], pace="fast", record=record) as server, \
            httpx.Client(timeout=10) as http:
        rpc = server.url + "/a2a/jsonrpc"

        def read() -> None:
            with http.stream("POST", rpc, json=_rpc("SendStreamingMessage", 1, _message())) as answer:
                got.extend(line for line in answer.iter_lines() if line.startswith("data:"))

        reader = threading.Thread(target=read)
        reader.start()
        deadline = time.monotonic() + 5
        while len(got) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)
        assert len(got) == 3 and reader.is_alive()  # open, and silent, at the interrupted state
        http.post(rpc, json=_rpc("SendStreamingMessage", 2, _message("blue", "a-1")))
        reader.join(5)
    assert not reader.is_alive() and len(got) == 6 and "TASK_STATE_COMPLETED" in got[-1]
    assert [s.end for s in record.all(SENT)] == [END_CLOSED, END_CLOSED]


# -- the driver, with tiny clients -------------------------------------------------------------------------------

FIXED_CLIENT = """
import json, os, httpx
url, ctx = os.environ["STREAMCERT_URL"], json.loads(os.environ["STREAMCERT_CONTEXT"])
h = {"A2A-Version": "1.0"}
rpc = httpx.get(url + "/.well-known/agent-card.json", headers=h).json()["supportedInterfaces"][0]["url"]
body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": dict(ctx["message"], messageId="m-1")}}
with httpx.stream("POST", rpc, json=body, headers={**h, "Accept": "text/event-stream"}) as r:
    r.read()
print("working")
print(json.dumps({"task": {"id": "task-basic"}, "env": {k: os.environ[k] for k in
      ("STREAMCERT_URL", "STREAMCERT_CASE", "STREAMCERT_CONTEXT")}}))
"""
HANGING_CLIENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print(child.pid, flush=True)
time.sleep(60)
"""
CRASHING_CLIENT = "import sys; sys.stderr.write('Traceback: the client broke here\\n'); sys.exit(3)"
SILENT_CLIENT = "print('all done, no JSON')"


def client(tmp_path: Path, source: str, name: str = "client.py") -> str:
    path = tmp_path / name
    path.write_text(source, "utf-8")
    return f"{sys.executable} {path}"


def test_a_client_run_is_recorded_as_the_design_says(tmp_path):
    started = time.monotonic()
    log = run_scenario("client-basic", Target(client_cmd=client(tmp_path, FIXED_CLIENT), timeout=10))
    took = time.monotonic() - started
    labels = [ex.label for ex in log.exchanges]
    assert labels == ["client", "sent", "sent", "served", "served"]
    run = log.get("client")
    case = client_cases.load_case("client-basic")
    assert run.method == "STDIO" and run.request_body == {"case": "client-basic", "context": case["context"]}
    assert run.end == END_CLOSED and run.status == 0 and run.notes["returncode"] == 0
    view = json.loads(run.events[-1].data)
    assert view["env"] == {"STREAMCERT_URL": log.notes["client_case"]["url"], "STREAMCERT_CASE": "client-basic",
                           "STREAMCERT_CONTEXT": json.dumps(case["context"], ensure_ascii=False)}
    note = log.notes["client_case"]
    assert {k: note[k] for k in ("id", "base", "variations", "context", "expected")} == \
        {k: case[k] for k in ("id", "base", "variations", "context", "expected")}
    assert note["pace"] == "fast" and note["streaming"] is True and note["limit_s"] == 10
    card, stream = log.all(SENT)
    assert card.method == "GET" and stream.rpc_method == "SendStreamingMessage"
    assert stream.request_headers["accept"] == "text/event-stream" and stream.notes["answer"] == "stream"
    assert run.t_sent < card.t_sent < stream.t_sent <= log.notes["stream_closed_at"] <= run.t_end
    assert [ex.notes["served_as"] for ex in log.all("served")] == ["card", "stream"]
    assert took < 5, took


def _judged(case_id: str, fault: str | None = None) -> dict[str, str]:
    """The reference client (or a fault variant) run on a case and judged: requirement → worst outcome."""
    cmd = f"{sys.executable} -m streamcert.reference.client" + (f" --fault {fault}" if fault else "")
    scenario = load_scenario(case_id)
    log = run_scenario(case_id, Target(client_cmd=cmd, timeout=20))
    order = ["PASS", "NON_STRICT", "WARNING", "FAIL", "ERROR"]
    worst: dict[str, str] = {}
    for f in judge(log, scenario.requirements, RuleContext(scenario=scenario)):
        if order.index(f.outcome.value) >= order.index(worst.get(f.req_id, "PASS")):
            worst[f.req_id] = f.outcome.value
    return worst


def test_three_pauses_of_three_kinds_answered_each_from_the_context():
    # client-three-kinds: an approval, a question and a connection in one task, each stream closing at its pause
    case = client_cases.load_case("client-three-kinds")
    assert [line.split(" interaction ")[1].split()[0] for lines in case["served"].values() for line in lines
            if " interaction " in line] == ["approval", "question", "connection"]
    assert [a["interaction"] for a in case["context"]["answers"]] == ["approval", "question", "connection"]
    right = _judged("client-three-kinds")
    assert set(right.values()) == {"PASS"} and set(right) == set(load_scenario("client-three-kinds").requirements)
    # a client that answers the approval and then stops: the view is the stream up to the question, CLIENT-008's
    stopped = _judged("client-three-kinds", "answers-first-pause-only")
    assert {rid: o for rid, o in stopped.items() if o != "PASS"} == {"CLIENT-008": "NON_STRICT"}


def test_a_hanging_client_is_stopped_at_its_limit_with_its_group(tmp_path):
    started = time.monotonic()
    log = run_scenario("client-basic", Target(client_cmd=client(tmp_path, HANGING_CLIENT), timeout=1.0))
    took = time.monotonic() - started
    run = log.get("client")
    assert run.end == END_TIME_LIMIT and run.status is None and run.notes["returncode"] is None
    assert run.notes["limit"]["cap"] == "timeout" and run.notes["limit"]["limit"] == 1.0
    assert not running(int(run.events[0].data))  # the client's own child went with it (its process group)
    assert log.all(SENT) == [] and log.notes["stream_closed_at"] is None
    assert took < 1.0 + 4, took  # the limit, SIGTERM's grace, the pipes' grace


def test_a_crashing_and_a_silent_client_are_recorded_as_such(tmp_path):
    log = run_scenario("client-basic", Target(client_cmd=client(tmp_path, CRASHING_CLIENT), timeout=5))
    run = log.get("client")
    assert run.end == END_CLOSED and run.notes["returncode"] == 3 and not run.events
    assert "the client broke here" in run.notes["stderr_tail"]
    log = run_scenario("client-basic", Target(client_cmd=client(tmp_path, SILENT_CLIENT), timeout=5))
    run = log.get("client")
    assert run.notes["returncode"] == 0 and [e.data for e in run.events] == ["all done, no JSON"]
    log = run_scenario("client-basic", Target(client_cmd="/nonexistent/client --go", timeout=5))
    run = log.get("client")
    assert run.end == END_ERROR and "nonexistent" in run.error and run.notes["returncode"] is None


def test_a_case_that_cannot_be_built_runs_nothing(tmp_path):
    scenario = Scenario(id="client-x", profile="client", title="", requirements=(), script=None,
                        data={"id": "client-x", "base": "nothing-here", "context": {}, "expected": {}})
    log = FrameLog(scenario="client-x")
    asyncio.run(client_driver.client_case(Target(client_cmd=client(tmp_path, SILENT_CLIENT)), scenario, log))
    assert "no base recording" in log.notes["case_error"] and log.exchanges == []
