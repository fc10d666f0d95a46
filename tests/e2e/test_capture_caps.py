"""The capture's bounds and the causes findings name, against hostile servers on 127.0.0.1.

Each case drives `stream-basic` (or `card`) against a small A2A agent (tests/common/hostile.py underneath) that
plays the script correctly, with the one part the case breaks, and judges the log as a run does. The caps
are small here (a stream cap of 1 MiB, an event cap of 64 KiB), so that every bound is reached without big
transfers; the case of a 10 MiB card runs with the defaults. A cap reached leaves the requirements that
need what it cut ERROR with the cap's sentence (the figure measured, the cap, the option), never a blame
on the server; a cause (a reset, gzip, deep JSON, a silence, a redirect, another origin) is named.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import socket
import time
import uuid
from typing import Any

import pytest
from hostile import CARD_PATH, RPC_PATH, HostileServer, Request, card, head, response

from streamcert import limits
from streamcert.catalogue import load_scenario
from streamcert.contract.capture import OVERFLOW
from streamcert.drivers import Target, run_scenario
from streamcert.framelog import END_CLOSED, END_IDLE, END_RESET, END_TIME_LIMIT, FrameLog, json_depth
from streamcert.limits import KIB, MIB, show
from streamcert.outcomes import Outcome
from streamcert.rules import RuleContext, judge
from streamcert.wire.capture import WINDOW
from streamcert.wire.sse import SSEParser
from streamcert.wire.urls import Origins, carry, join, origin

P, F, E = Outcome.PASS, Outcome.FAIL, Outcome.ERROR
STAMP = "2026-11-30T10:00:00.000Z"
# The requirements of stream-basic that read the stream's frames.
FRAME_IDS = ["WIRE-002", "WIRE-003", "WIRE-004", "WIRE-006"] + [f"A2A-STREAM-{n:03d}" for n in range(1, 16)]


# -- an agent that plays the script, whose parts a case overrides ------------------------------------

def frame(result: dict[str, Any], rpc_id: Any) -> bytes:
    return b"data: " + json.dumps({"jsonrpc": "2.0", "id": rpc_id, "result": result}).encode() + b"\n\n"


class Agent:
    """Answers the card, SendStreamingMessage (the script played: statuses, artifacts, the end) and GetTask."""

    def __init__(self, extra_text: str | None = None) -> None:
        self.tasks: dict[str, dict[str, Any]] = {}
        self.extra_text = extra_text  # one more artifact ("extra"), streamed in one chunk

    async def __call__(self, request: Request, writer: asyncio.StreamWriter) -> None:
        base = "http://" + request.headers.get("host", "")
        if request.method == "GET" and request.path == CARD_PATH:
            await self.card(base, writer)
            return
        rpc = json.loads(request.body or b"{}")
        method, rpc_id, params = rpc.get("method"), rpc.get("id"), rpc.get("params") or {}
        if method == "SendStreamingMessage":
            task, results = self.play(params.get("message") or {})
            self.tasks[task["id"]] = task
            await self.stream(writer, [frame(r, rpc_id) for r in results])
        elif method == "GetTask" and params.get("id") in self.tasks:
            await self.unary(writer, self.read_back(self.tasks[params["id"]], params.get("historyLength")), rpc_id)
        else:
            writer.write(response({"jsonrpc": "2.0", "id": rpc_id, "error": {"code": -32001, "message": "no"}}))

    async def card(self, base: str, writer: asyncio.StreamWriter) -> None:
        writer.write(response(card(base)))

    async def stream(self, writer: asyncio.StreamWriter, frames: list[bytes]) -> None:
        writer.write(head(content_type="text/event-stream") + b"".join(frames))
        await writer.drain()

    async def unary(self, writer: asyncio.StreamWriter, result: Any, rpc_id: Any) -> None:
        writer.write(response({"jsonrpc": "2.0", "id": rpc_id, "result": result}))

    @staticmethod
    def read_back(task: dict[str, Any], history_length: Any) -> dict[str, Any]:
        history = task["history"]
        if history_length is not None:
            history = history[len(history) - history_length:] if history_length else []
        return dict(task, history=history)

    def play(self, message: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(the task as GetTask shows it at the end, the stream's results in order)."""
        tid, ctx = str(uuid.uuid4()), str(uuid.uuid4())
        ids = {"taskId": tid, "contextId": ctx}
        user = {k: v for k, v in dict(message, **ids).items() if k != "metadata"}
        steps = message.get("metadata", {}).get("urn:streamcert:script", {}).get("steps", [])
        results: list[dict[str, Any]] = [{"task": {"id": tid, "contextId": ctx, "history": [user],
                                                    "status": {"state": "TASK_STATE_SUBMITTED", "timestamp": STAMP}}}]
        artifacts, history = [], [user]

        def status(state: str, text: str) -> dict[str, Any]:
            msg = {"messageId": str(uuid.uuid4()), "role": "ROLE_AGENT", "parts": [{"text": text}], **ids}
            history.append(msg)
            return {"state": state, "message": msg, "timestamp": STAMP}

        final = None
        for step in steps:
            if "status" in step:
                results.append({"statusUpdate": dict(ids, status=status("TASK_STATE_WORKING", step["status"]))})
            elif "artifact" in step:
                art = step["artifact"]
                if "chunks" in art:
                    for n, text in enumerate(art["chunks"]):
                        piece = {"artifactId": art["artifactId"], "parts": [{"text": text}]}
                        if n == 0:
                            piece["name"] = art["name"]
                        results.append({"artifactUpdate": dict(ids, artifact=piece, append=n > 0,
                                                               lastChunk=n == len(art["chunks"]) - 1)})
                    artifacts.append({"artifactId": art["artifactId"], "name": art["name"],
                                      "parts": [{"text": "".join(art["chunks"])}]})
                else:
                    whole = {"artifactId": art["artifactId"], "name": art["name"],
                             "parts": [{"data": art["data"], "mediaType": "application/json"}]}
                    results.append({"artifactUpdate": dict(ids, artifact=whole, lastChunk=True)})
                    artifacts.append(whole)
            elif "finish" in step:
                final = status("TASK_STATE_COMPLETED", step["finish"])
        if self.extra_text is not None:
            extra = {"artifactId": "extra", "name": "extra.txt", "parts": [{"text": self.extra_text}]}
            results.insert(2, {"artifactUpdate": dict(ids, artifact=extra, lastChunk=True)})
            artifacts.append(extra)
        final = final or status("TASK_STATE_COMPLETED", "done")
        results.append({"statusUpdate": dict(ids, status=final)})
        task = {"id": tid, "contextId": ctx, "status": final, "artifacts": artifacts, "history": history}
        return task, results


def drive(agent: Any, scenario: str = "stream-basic", url_suffix: str = "", **options: Any) -> tuple[FrameLog, dict]:
    """Play `scenario` against `agent`; (the log, the findings by requirement: the worst of each)."""
    options = {"stream_limit": 10.0, "timeout": 5.0, **options}
    with HostileServer(agent, lifetime=60) as server:
        log = run_scenario(scenario, Target(a2a_url=server.url + url_suffix, **options))
        log.notes["requests"] = [(r.method, r.target, dict(r.headers)) for r in server.requests]
    return log, judged(log, scenario)


def judged(log: FrameLog, scenario: str | None = None) -> dict[str, Any]:
    found = judge(log, load_scenario(scenario or log.scenario).requirements,
                  RuleContext(scenario=load_scenario(scenario or log.scenario)))
    worst: dict[str, Any] = {}
    for f in found:
        if f.req_id not in worst or f.outcome.rank > worst[f.req_id].outcome.rank:
            worst[f.req_id] = f
    return worst


def said(findings: dict[str, Any]) -> str:
    return "\n".join(f"{f.req_id} {f.outcome.value}: {f.message}" for f in findings.values())


def never_blamed_wrongly(findings: dict[str, Any]) -> None:
    text = said(findings)
    for words in ("harness fault", "RecursionError", "Traceback", "not JSON", "got no answer"):
        assert words not in text, text


# -- the agent as it is: every requirement it can meet passes -----------------------------------------

def test_the_agent_passes_the_stream_scenario():
    log, found = drive(Agent())
    bad = {r: f for r, f in found.items() if f.outcome not in (P, Outcome.NON_STRICT, Outcome.UNSUPPORTED)}
    assert not bad, said(bad)


# -- sizes ------------------------------------------------------------------------------------------

class Flood(Agent):
    """The script's frames, with `n` artifact chunks of `size` bytes of one more artifact after the Task."""

    def __init__(self, n: int, size: int) -> None:
        super().__init__()
        self.n, self.size, self.sent = n, size, b""

    async def stream(self, writer: asyncio.StreamWriter, frames: list[bytes]) -> None:
        ids = json.loads(frames[0][6:])["result"]["task"]
        ids = {"taskId": ids["id"], "contextId": ids["contextId"]}
        chunks = [frame({"artifactUpdate": dict(ids, artifact={"artifactId": "flood", "parts": [
            {"text": f"{k:06d}" + "x" * (self.size - 6)}]}, append=k > 0, lastChunk=k == self.n - 1)}, 1)
            for k in range(self.n)]
        self.sent = b"".join(frames[:1] + chunks + frames[1:])
        writer.write(head(content_type="text/event-stream"))
        for start in range(0, len(self.sent), 256 * KIB):
            writer.write(self.sent[start:start + 256 * KIB])
            await writer.drain()


def test_a_stream_past_its_cap_is_kept_as_counts_a_hash_and_windows_and_left_unjudged():
    agent = Flood(400, 8 * KIB)
    log, found = drive(agent, max_stream_bytes=1 * MIB)
    stream = log.get("stream")
    assert stream.end == END_CLOSED  # read on to its end
    record = stream.notes[OVERFLOW]
    assert record["bytes"] == len(agent.sent) == stream.notes[OVERFLOW]["bytes"]
    assert record["sha256"] == hashlib.sha256(agent.sent).hexdigest()
    assert record["tail"] == agent.sent[-WINDOW:].decode()
    assert record["events"] == 400 + 9  # the Task, the script's 8 frames, the flood's 400
    assert record["kept_bytes"] == sum(c.length for c in stream.chunks) <= WINDOW
    assert 1 <= record["kept_events"] == len(stream.events) and stream.events[0].payload["result"]["task"]
    sentence = limits.MAX_STREAM.reached(f"a stream of {show(len(agent.sent), 'bytes')}", 1 * MIB)
    assert "reached the per-stream size cap of 1 MiB (raise it with --max-stream-bytes)" in sentence
    for rid in FRAME_IDS + ["A2A-TASK-001", "A2A-TASK-002", "A2A-TASK-003"]:
        assert found[rid].outcome == E and sentence in found[rid].message, (rid, found[rid].message)
    assert found["WIRE-001"].outcome == P  # its status and content type are judged: they came whole
    assert log.get("get_task") is not None  # the driver still read the task back (its id came in the head)
    never_blamed_wrongly(found)
    # The cassette says so, and an offline check judges it as the live run did.
    again = FrameLog.from_json(json.loads(json.dumps(log.to_json())))
    assert again.get("stream").notes[OVERFLOW]["sha256"] == record["sha256"]
    offline = judged(again)
    assert {r: (f.outcome, f.message) for r, f in offline.items()} == {r: (f.outcome, f.message) for r, f in found.items()}


def test_a_stream_below_its_cap_is_kept_whole_spooled_and_judged():
    agent = Flood(100, 8 * KIB)  # about 830 KiB: below the cap, past the capture's memory threshold
    log, found = drive(agent, max_stream_bytes=1 * MIB)
    stream = log.get("stream")
    assert OVERFLOW not in stream.notes and stream.unjudged is None
    assert any(c.spooled for c in stream.chunks) and stream.wire_bytes == agent.sent
    parser = SSEParser()  # the events parsed again from the spooled chunks are the live ones
    again = [ev for c in stream.chunks for ev in parser.feed(c.data, c.t)] + parser.finish()
    assert [(e.kind, e.data) for e in again] == [(e.kind, e.data) for e in stream.events]
    for rid in ("WIRE-002", "WIRE-006", "A2A-STREAM-001", "A2A-STREAM-006", "A2A-STREAM-009", "A2A-STREAM-013"):
        assert found[rid].outcome == P, found[rid].message


def test_an_event_past_its_cap_is_error_naming_the_cap_never_not_json():
    log, found = drive(Agent(extra_text="z" * (200 * KIB)), max_event_bytes=64 * KIB)
    stream = log.get("stream")
    size = stream.notes["oversize"][0][1]
    assert 200 * KIB < size < 201 * KIB
    sentence = limits.MAX_EVENT.reached(f"an event of {show(size, 'bytes')}", 64 * KIB)
    assert sentence.endswith("reached the per-event size cap of 64 KiB (raise it with --max-event-bytes)")
    for rid in FRAME_IDS:
        assert found[rid].outcome == E and sentence in found[rid].message, (rid, found[rid].message)
    assert all(len(e.data) < 64 * KIB for e in stream.events)  # the event was not kept
    never_blamed_wrongly(found)


def test_an_event_within_the_caps_is_judged_whole():
    text = "w" * (3 * MIB)
    log, found = drive(Agent(extra_text=text))
    stream = log.get("stream")
    assert any(len(e.data) > 3 * MIB for e in stream.events)
    for rid in ("WIRE-002", "A2A-STREAM-006", "A2A-STREAM-013", "A2A-TASK-003"):
        assert found[rid].outcome == P, found[rid].message


def test_a_line_without_an_end_past_the_event_cap_is_counted_not_held():
    class Endless(Agent):
        async def stream(self, writer, frames):
            writer.write(head(content_type="text/event-stream") + frames[0] + b"data: ")
            for _ in range(12):
                writer.write(b"y" * (256 * KIB))
                await writer.drain()

    started = time.monotonic()
    log, found = drive(Endless(), max_event_bytes=1 * MIB)
    assert time.monotonic() - started < 10
    stream = log.get("stream")
    assert stream.end == END_CLOSED and stream.notes["oversize"] == [[1, 3 * MIB + 6]]
    assert len(stream.discarded) < WINDOW + 100 and stream.discarded.endswith("bytes in all, past the per-event cap)")
    sentence = limits.MAX_EVENT.reached(f"an event of {show(3 * MIB + 6, 'bytes')}", 1 * MIB)
    for rid in ("WIRE-002", "WIRE-006", "A2A-STREAM-009"):
        assert found[rid].outcome == E and sentence in found[rid].message, found[rid].message
    assert "every block terminated" not in said(found)


def test_a_10_mib_card_is_within_the_defaults_and_judged_whole():
    class BigCard(Agent):
        async def card(self, base, writer):
            writer.write(response(card(base, description="d" * (10 * MIB)), cache_control="max-age=300",
                                  etag='"big-card"'))  # the caching headers A2A-CARD-007 asks for (a SHOULD)

    log, found = drive(BigCard(), scenario="card")
    assert log.get("card").size > 10 * MIB
    # an unsigned card: the signature requirements have nothing to verify (signatures are optional); this agent
    # answers a matching If-None-Match with the whole card again, which A2A-CARD-010 (a SHOULD) says; every other
    # card requirement is judged on the whole 10 MiB card and passes
    unsigned = {"A2A-CARD-008", "A2A-CARD-009"}
    expected = {r: Outcome.UNSUPPORTED if r in unsigned else P for r in load_scenario("card").requirements}
    assert {r: f.outcome for r, f in found.items()} == expected | {"A2A-CARD-010": Outcome.NON_STRICT}


def test_a_body_past_its_cap_is_error_naming_the_cap():
    body = json.dumps(card("http://127.0.0.1", description="d" * (300 * KIB))).encode()

    class BigCard(Agent):
        async def card(self, base, writer):
            writer.write(response(body))

    log, found = drive(BigCard(), scenario="card", max_body_bytes=128 * KIB)
    ex = log.get("card")
    assert ex.size <= WINDOW and ex.notes[OVERFLOW]["kept_bytes"] == ex.size
    sentence = limits.MAX_BODY.reached(f"a body of {show(len(body), 'bytes')}", 128 * KIB)
    assert sentence.endswith("reached the per-response size cap of 128 KiB (raise it with --max-body-bytes)")
    for rid in ("A2A-CARD-001", "A2A-CARD-002", "A2A-CARD-003", "A2A-CARD-004"):
        assert found[rid].outcome == E and sentence in found[rid].message, found[rid].message
    never_blamed_wrongly(found)


# -- encodings ----------------------------------------------------------------------------------------

def test_a_gzip_stream_is_judged_after_decoding_and_named():
    class Gzipped(Agent):
        async def stream(self, writer, frames):
            writer.write(head(content_type="text/event-stream", content_encoding="gzip")
                         + gzip.compress(b"".join(frames)))

    log, found = drive(Gzipped())
    stream = log.get("stream")
    assert stream.notes["content_encoding"] == "gzip" and len(stream.data_events()) == 9
    for rid in ("WIRE-002", "WIRE-006", "A2A-STREAM-001", "A2A-STREAM-009", "A2A-STREAM-014"):
        assert found[rid].outcome == P, found[rid].message


def test_a_gzip_bomb_stops_at_the_decompressed_cap_and_names_gzip():
    bomb = gzip.compress(b" " * (16 * MIB))

    class Bomb(Agent):
        async def card(self, base, writer):
            writer.write(head(content_length=len(bomb), content_encoding="gzip") + bomb)

    log, found = drive(Bomb(), scenario="card", max_decompressed_bytes=1 * MIB)
    message = found["A2A-CARD-001"].message
    assert found["A2A-CARD-001"].outcome == E
    assert "Content-Encoding: gzip" in message and "Accept-Encoding: identity" in message
    assert message.endswith("that decodes to more than 1 MiB reached the decompressed size cap of 1 MiB "
                            "(raise it with --max-decompressed-bytes)")
    assert len(log.get("card").body) <= 1 * MIB


def test_an_encoding_the_suite_cannot_decode_is_named():
    class Brotli(Agent):
        async def card(self, base, writer):
            writer.write(head(content_length=5, content_encoding="br") + b"\x1b\x00\x00\x00\x00")

    _, found = drive(Brotli(), scenario="card")
    assert found["A2A-CARD-001"].outcome == E
    assert "Content-Encoding: br" in found["A2A-CARD-001"].message and "does not decode" in found["A2A-CARD-001"].message


# -- how a stream ends ------------------------------------------------------------------------------

def test_a_reset_mid_stream_is_named_and_the_frames_received_are_judged():
    class Reset(Agent):
        async def stream(self, writer, frames):
            self.sent = frames[0] + frames[1] + b'data: {"jsonrpc": "2.0", "id": 1, "res'
            writer.write(head(content_type="text/event-stream") + self.sent)
            await writer.drain()
            # SO_LINGER on, 0 s: the close sends a RST instead of a FIN
            writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
            writer.transport.abort()

    agent = Reset()
    log, found = drive(agent)
    stream = log.get("stream")
    reset = f"the connection was reset after {len(agent.sent)} bytes"
    assert (stream.end, stream.error) == (END_RESET, reset)
    assert len(stream.data_events()) == 2
    for rid in ("A2A-STREAM-001", "A2A-STREAM-002", "A2A-STREAM-004", "WIRE-002", "WIRE-003"):
        assert found[rid].outcome == P, found[rid].message
    assert found["A2A-STREAM-009"].outcome == F and reset in found["A2A-STREAM-009"].message
    assert found["WIRE-006"].outcome == P and "every block terminated" not in found["WIRE-006"].message
    assert reset in found["WIRE-006"].message
    never_blamed_wrongly(found)


def test_an_idle_gap_is_named_with_the_gap_measured():
    class Silent(Agent):
        async def stream(self, writer, frames):
            writer.write(head(content_type="text/event-stream") + frames[0])
            await writer.drain()
            await asyncio.sleep(30)  # cancelled when the server stops

    started = time.monotonic()
    log, found = drive(Silent(), idle_limit=0.4)
    assert time.monotonic() - started < 5
    stream = log.get("stream")
    assert stream.end == END_IDLE and 0.35 <= stream.notes["idle_s"] < 2
    assert stream.error.startswith(f"a silence of {stream.notes['idle_s']:.1f} s after ")
    assert stream.error.endswith("reached the idle-gap cap of 0.4 s (raise it with --idle-limit)")
    assert found["A2A-STREAM-009"].outcome == E and stream.error in found["A2A-STREAM-009"].message
    assert found["A2A-STREAM-001"].outcome == P


def test_a_block_cut_at_the_time_limit_is_not_called_terminated():
    class Open(Agent):
        async def stream(self, writer, frames):
            writer.write(head(content_type="text/event-stream") + frames[0] + b"data: {\"half")
            await writer.drain()
            await asyncio.sleep(30)

    log, found = drive(Open(), stream_limit=0.5)
    assert log.get("stream").end == END_TIME_LIMIT
    message = found["WIRE-006"].message
    assert found["WIRE-006"].outcome == P and "every block terminated" not in message
    assert "cut short by the suite's per-stream time limit" in message


# -- JSON nested deep -----------------------------------------------------------------------------------

DEEP = b"[" * 100_000 + b"]" * 100_000


def test_json_nested_deep_in_an_event_is_a_finding_about_the_json():
    class DeepEvent(Agent):
        async def stream(self, writer, frames):
            writer.write(head(content_type="text/event-stream") + frames[0] + b"data: " + DEEP + b"\n\n")

    log, found = drive(DeepEvent())
    sentence = ("frame 2 is JSON nested 100000 levels deep; the suite's JSON reader stops at 128 levels "
                "(RFC 8259 §9 lets a parser limit nesting)")
    for rid in FRAME_IDS:
        assert found[rid].outcome == E and sentence in found[rid].message, (rid, found[rid].message)
    never_blamed_wrongly(found)
    json.dumps(log.to_json())  # the cassette holds it as text: nothing walks into it


def test_json_nested_deep_in_a_unary_answer_is_a_finding_about_the_json():
    class DeepAnswer(Agent):
        async def unary(self, writer, result, rpc_id):
            writer.write(response(b'{"jsonrpc": "2.0", "id": 1, "result": {"x": ' + DEEP + b"}}"))

    log, found = drive(DeepAnswer())
    sentence = "the body is JSON nested 100002 levels deep; the suite's JSON reader stops at 128 levels"
    for rid in ("A2A-TASK-001", "A2A-TASK-002", "A2A-TASK-003", "A2A-TASK-004", "WIRE-003", "WIRE-005"):
        assert found[rid].outcome == E and sentence in found[rid].message, (rid, found[rid].message)
    assert found["A2A-STREAM-001"].outcome == P
    never_blamed_wrongly(found)


def test_the_depth_the_reader_stops_at_is_the_one_said_and_every_walker_follows_it():
    from deepdiff import DeepDiff

    from streamcert.framelog import MAX_JSON_DEPTH, read_json
    from streamcert.running.offline import shape_of

    deepest = '{"a": ' * (MAX_JSON_DEPTH - 1) + "[1, 2]" + "}" * (MAX_JSON_DEPTH - 1)
    value, complaint = read_json(deepest)
    assert complaint is None and value == json.loads(deepest)
    other, _ = read_json(deepest.replace("[1, 2]", "[1, 3]"))
    assert DeepDiff(shape_of({"body": [value]}), shape_of({"body": [other]}), verbose_level=2)  # no RecursionError
    assert json.loads(json.dumps(value)) == value
    deeper = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
    assert read_json(deeper) == (None, f"JSON nested {MAX_JSON_DEPTH + 1} levels deep; the suite's JSON reader "
                                       f"stops at {MAX_JSON_DEPTH} levels (RFC 8259 §9 lets a parser limit nesting)")
    assert read_json(deeper.encode())[1] == read_json(deeper)[1]
    wide = "[" + ", ".join(["[1]"] * 1000) + "]"  # many brackets, two levels: read as it is
    assert read_json(wide)[1] is None
    assert json_depth('[{"a": "[[[[", "b\\"[": [1]}]') == 3


# -- redirects, URLs and origins ----------------------------------------------------------------------

def test_a_redirect_names_its_location_and_is_not_followed():
    async def redirect(request, writer):
        writer.write(response(b"", 307, location="http://127.0.0.1:9/elsewhere"))

    log, found = drive(redirect, scenario="card")
    assert found["A2A-CARD-001"].outcome == E
    assert "answered HTTP 307 redirecting to http://127.0.0.1:9/elsewhere; the suite does not follow redirects" \
        in found["A2A-CARD-001"].message
    assert [target for _, target, _ in log.notes["requests"]] == [CARD_PATH]


def test_a_query_in_the_base_url_stays_after_the_paths_on_every_request():
    log, found = drive(Agent(), url_suffix="?api_key=K3y&region=eu")
    targets = [target for _, target, _ in log.notes["requests"]]
    assert targets[0] == CARD_PATH + "?api_key=K3y&region=eu"
    assert targets[1:] and all(t == RPC_PATH + "?api_key=K3y&region=eu" for t in targets[1:])
    assert found["A2A-STREAM-001"].outcome == P and found["A2A-TASK-001"].outcome == P


def test_urls_join_before_the_query_and_origins_compare_scheme_host_and_port():
    assert join("http://h:1/agent/?k=1", "/x") == "http://h:1/agent/x?k=1"
    assert join("http://h:1", "/x") == "http://h:1/x"
    assert origin("HTTP://Host/x?q") == "http://host:80" == origin("http://host:80/y")
    assert origin("https://h/") == "https://h:443" != origin("http://h/")
    assert carry("http://h:1/rpc?a=2", "http://u:p@h:1/?a=1&b=3") == "http://u:p@h:1/rpc?a=2&b=3"
    origins = Origins.of("http://h:1?k=1", {}, ["http://other:2/"])
    assert origins.passage("http://h:1/rpc").url == "http://h:1/rpc?k=1"
    assert origins.passage("http://other:2/rpc").credentials
    refused = origins.passage("http://third:3/rpc")
    assert refused.refused and "allow it with --allow-origin http://third:3" in refused.refused
    followed = Origins.of("http://h:1", {}).passage("http://third:3/rpc")
    assert not followed.refused and "no credentials were given" in followed.note


class Elsewhere(Agent):
    """A card whose JSON-RPC interface is on another server (another port of the same host)."""

    def __init__(self, other: str) -> None:
        super().__init__()
        self.other = other

    async def card(self, base, writer):
        writer.write(response(card(base, rpc_url=self.other + RPC_PATH)))


def _elsewhere(**options: Any) -> tuple[FrameLog, dict, list[Request]]:
    with HostileServer(Agent(), lifetime=60) as other:
        log, found = drive(Elsewhere(other.url), **options)
        return log, found, list(other.requests)


def test_credentials_are_not_sent_to_another_origin_unless_allowed():
    log, found, reached = _elsewhere(headers={"Authorization": "Bearer S3cret-T0ken"})
    assert reached == []
    other = origin(log.get("stream").url)
    why = log.get("stream").error
    assert why.startswith(f"not sent: {other} is another origin than the target ") and \
        why.endswith(f"allow it with --allow-origin {other}")
    for rid in FRAME_IDS:
        assert found[rid].outcome == E and why in found[rid].message, (rid, found[rid].message)


def test_an_allowed_origin_gets_the_credentials():
    with HostileServer(Agent(), lifetime=60) as other:
        log, found = drive(Elsewhere(other.url), headers={"Authorization": "Bearer S3cret-T0ken"},
                           allow_origins=(other.url,))
        reached = list(other.requests)
    assert reached and all(r.headers.get("authorization") == "Bearer S3cret-T0ken" for r in reached)
    assert found["A2A-STREAM-001"].outcome == P and "allowed by --allow-origin" in log.get("stream").notes["origin"]


def test_without_credentials_another_origin_is_followed_and_noted():
    log, found, reached = _elsewhere()
    assert reached and found["A2A-STREAM-001"].outcome == P
    assert "no credentials were given" in log.get("stream").notes["origin"]


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_the_decoder_gives_what_was_encoded_and_no_more_than_its_limit(coding):
    import zlib

    from streamcert.framelog import ContentDecoder

    raw = bytes(range(256)) * 4096  # 1 MiB
    encoded = gzip.compress(raw) if coding == "gzip" else zlib.compress(raw)
    whole = ContentDecoder(coding, 2 * MIB)
    assert b"".join(piece for k in range(0, len(encoded), 1000) for piece in whole.feed(encoded[k:k + 1000])) == raw
    capped = ContentDecoder(coding, 100 * KIB)
    assert b"".join(capped.feed(encoded)) == raw[:100 * KIB] and capped.over
