"""The reference A2A client (reference/client/client.py): what it shows and what it sends, against the reference
server (both D3 readings, with and without streaming), against `streamcert replay` of the shipped cassettes
with the adversarial variations client cases use (chunks cut inside characters and lines, line ends, a BOM,
comments, a stream that stays open at a pause, a dropped answer), and each of its fault variants doing
the one thing it gets wrong."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import subprocess
import sys
import time
import uuid
from importlib import resources
from pathlib import Path

import httpx
import pytest

from streamcert.catalogue import load_scenario
from streamcert.framelog import END_CLIENT_STOP, END_RESET, Chunk, FrameLog
from streamcert.protocols import a2a, interactions_v1, progress_v1
from streamcert.protocols.script import SCRIPT_KEY
from streamcert.recordings.replay import ReplayServer
from streamcert.reference.agent.server import ReferenceServer
from streamcert.reference.client.client import CLOSE_GRACE_S, Client
from streamcert.reference.client.view import View

SHIPPED = Path(str(resources.files("streamcert.cassettes") / "reference"))
BOM = "\ufeff".encode()
ANSWER = {"env": "staging", "note": "café ☕ 🚀"}  # ix-question's recorded answer: its echo has 2-, 3- and 4-byte characters


def context(scenario: str, answers: list[dict] | None = None, **more) -> dict:
    script = load_scenario(scenario).script
    return {"message": {"role": a2a.ROLE_USER, "parts": [{"text": "Run the scenario"}],
                        "metadata": {SCRIPT_KEY: script}}, "answers": answers or [], **more}


QUESTION = [{"interaction": "question", "value": ANSWER}]


@pytest.fixture
def sent(monkeypatch) -> list[httpx.Request]:
    """Every request the client sends (in this process), in order."""
    requests: list[httpx.Request] = []
    original = httpx.AsyncClient.send

    async def send(self, request, **kwargs):
        requests.append(request)
        return await original(self, request, **kwargs)

    monkeypatch.setattr(httpx.AsyncClient, "send", send)
    return requests


def play(url: str, ctx: dict, fault: str | None = None, deadline: float = 20.0) -> tuple[dict, float]:
    """The client's view, and how long it took."""
    started = time.monotonic()
    view = asyncio.run(Client(url, ctx, fault, deadline).run())
    return view, time.monotonic() - started


def rpc(requests: list[httpx.Request]) -> list[dict]:
    return [json.loads(r.content) for r in requests if r.method == "POST"]


def messages(requests: list[httpx.Request]) -> list[dict]:
    return [body["params"]["message"] for body in rpc(requests) if "message" in body.get("params", {})]


# -- against the reference server ------------------------------------------------------------------------

def test_a_streamed_task_as_seed_001_tells_it(sent):
    with ReferenceServer() as server:
        view, took = play(server.url, context("stream-basic"))
    assert view["task"]["state"] == a2a.COMPLETED and view["task"]["id"] and view["task"]["contextId"]
    assert view["artifacts"] == [
        {"artifactId": "test-log", "name": "test-log.txt",
         "text": "collected 12 items\ntests/test_api.py ........\ntests/test_refunds.py ...F\n"
                 "FAILED tests/test_refunds.py::test_partial_refund - AssertionError\n1 failed, 11 passed in 0.42s\n"},
        {"artifactId": "summary", "name": "summary.json", "data": {"passed": 11, "failed": 1}}]
    assert view["statusText"] == "1 failed, 11 passed" and view["plan"] is None and view["interaction"] is None
    assert took < 5
    # What it sent: the card, then one SendStreamingMessage with a messageId of its own and no ids.
    card, stream = sent
    assert card.method == "GET" and card.url.path == a2a.CARD_PATH and card.headers[a2a.VERSION_HEADER] == "1.0"
    assert stream.headers[a2a.VERSION_HEADER] == "1.0" and stream.headers["accept"] == a2a.SSE_MEDIA_TYPE
    assert progress_v1.URI in stream.headers[a2a.EXTENSIONS_HEADER]
    body = json.loads(stream.content)
    assert body["method"] == a2a.SEND_STREAMING_MESSAGE
    message = body["params"]["message"]
    assert uuid.UUID(message["messageId"]).version == 4
    assert "taskId" not in message and "contextId" not in message and message["role"] == a2a.ROLE_USER


def test_the_plan_shown_is_the_latest_whole_plan(sent):
    with ReferenceServer() as server:
        view, _ = play(server.url, context("plan-replace"))
    last = [s for s in load_scenario("plan-replace").script["steps"] if "plan" in s][-1]["plan"]
    assert view["plan"] == last
    assert view["statusText"] == "Built and packaged"
    assert view["artifacts"] == [{"artifactId": "build-log", "name": "build.log",
                                  "text": "part 1 ok SENTINEL-RESULT-2f9e\npart 2 ok\n"}]


@pytest.mark.parametrize("d3", ["close", "open"])
def test_a_question_is_answered_whether_the_stream_closes_at_it_or_stays_open(d3, sent):
    with ReferenceServer(d3=d3) as server:
        view, took = play(server.url, context("ix-question", QUESTION))
    assert view["task"]["state"] == a2a.COMPLETED and view["statusText"] == "Deployed"
    assert view["interaction"]["prompt"] == "Which environment should I deploy to?"
    assert took < 5  # an open stream is not waited on: it has said all it will once it goes quiet
    first, answer = messages(sent)
    assert answer["taskId"] == view["task"]["id"] and answer["contextId"] == view["task"]["contextId"]
    assert answer["extensions"] == [interactions_v1.URI]
    assert answer["metadata"][interactions_v1.URI] == {"interactionId": view["interaction"]["interactionId"],
                                                       "value": ANSWER}
    assert answer["parts"] == [{"data": {"value": ANSWER}, "mediaType": "application/json"}]
    assert answer["messageId"] != first["messageId"] and uuid.UUID(answer["messageId"]).version == 4
    assert [b["method"] for b in rpc(sent)] == [a2a.SEND_STREAMING_MESSAGE] * 2
    assert all(r.headers[a2a.VERSION_HEADER] == "1.0" for r in sent)


def test_two_pauses_answered_in_order(sent):
    answers = [{"interaction": "approval", "approved": True}, {"interaction": "approval", "value": True}]
    with ReferenceServer(d3="open") as server:
        view, _ = play(server.url, context("ix-approval-granted", answers))
    assert view["task"]["state"] == a2a.COMPLETED and view["statusText"] == "Released"
    said = [m["metadata"][interactions_v1.URI] for m in messages(sent)[1:]]
    assert [{k: v for k, v in s.items() if k != "interactionId"} for s in said] == [{"approved": True}, {"value": True}]
    assert said[0]["interactionId"] != said[1]["interactionId"]


THREE_KINDS = [{"interaction": "approval", "approved": True}, {"interaction": "question", "value": "4.2.0"},
               {"interaction": "connection", "value": {"connected": True}}]


@pytest.mark.parametrize("d3", ["close", "open"])
def test_an_approval_a_question_and_a_connection_in_one_task_each_get_their_answer(d3, sent):
    with ReferenceServer(d3=d3) as server:
        view, took = play(server.url, context("ix-three-kinds", THREE_KINDS))
    assert view["task"]["state"] == a2a.COMPLETED and view["statusText"] == "Release prepared"
    assert view["interaction"]["kind"] == "connection" and took < 8
    said = [m["metadata"][interactions_v1.URI] for m in messages(sent)[1:]]
    assert [{k: v for k, v in s.items() if k != "interactionId"} for s in said] == \
        [{"approved": True}, {"value": "4.2.0"}, {"value": {"connected": True}}]
    assert len({s["interactionId"] for s in said}) == 3


def test_answers_first_pause_only_leaves_the_task_at_its_second_pause(sent):
    with ReferenceServer() as server:
        view, _ = play(server.url, context("ix-three-kinds", THREE_KINDS), fault="answers-first-pause-only")
    assert view["task"]["state"] == a2a.INPUT_REQUIRED and view["interaction"]["kind"] == "question"
    assert len(messages(sent)) == 2  # the task's first message and the approval's answer


def test_a_pause_with_nothing_left_to_answer_is_shown_as_it_is(sent):
    with ReferenceServer(d3="open") as server:
        view, took = play(server.url, context("ix-question"))
    assert view["task"]["state"] == a2a.INPUT_REQUIRED and took < 5
    assert view["statusText"] == view["interaction"]["prompt"] == "Which environment should I deploy to?"


def test_without_streaming_in_the_card_it_sends_message(sent):
    with ReferenceServer() as server:
        view, _ = play(server.agent_url("no-streaming"), context("ix-question", QUESTION))
    assert view["task"]["state"] == a2a.COMPLETED and view["statusText"] == "Deployed"
    assert {b["method"] for b in rpc(sent)} <= {a2a.SEND_MESSAGE, a2a.GET_TASK}
    assert all(r.headers["accept"] == a2a.JSON_MEDIA_TYPE for r in sent)
    first, answer = messages(sent)
    assert answer["taskId"] == view["task"]["id"] and answer["messageId"] != first["messageId"]


def test_a_server_that_never_closes_after_the_terminal_status_is_not_waited_for():
    with ReferenceServer(fault="no-close") as server:
        view, took = play(server.url, context("stream-basic"))
    assert view["task"]["state"] == a2a.COMPLETED and took < CLOSE_GRACE_S + 2


# -- against replayed cassettes, with the variations of client cases ---------------------------------------

def replayed(tmp_path: Path, base: str, edit=None, pace: str = "fast") -> ReplayServer:
    log = FrameLog.load(SHIPPED / f"{base}.yaml")
    if edit is not None:
        edit(log)
    return ReplayServer([log.save(tmp_path / f"{base}.yaml")], pace=pace)


def restream(log: FrameLog, cut) -> None:
    """Every stream's body rewritten and cut again by `cut(body) -> [piece, …]`."""
    for ex in log.exchanges:
        if ex.is_sse:
            t = ex.chunks[0].t if ex.chunks else ex.t_sent
            ex.chunks = [Chunk(t, piece) for piece in cut(b"".join(c.data for c in ex.chunks)) if piece]


def recorded_view(base: str | FrameLog) -> dict:
    """The view a client must show of a cassette (a shipped one by name), read from its recorded frames."""
    log = FrameLog.load(SHIPPED / f"{base}.yaml") if isinstance(base, str) else base
    view = View()
    for ex in log.exchanges:
        if ex.rpc_method == a2a.SEND_STREAMING_MESSAGE:
            for ev in ex.data_events():
                view.take(ev.payload["result"])
    return view.as_json()


@pytest.mark.parametrize("base,answers", [("stream-basic", []), ("plan-replace", []), ("ix-question", QUESTION)])
def test_a_replayed_cassette_shows_what_it_recorded(base, answers, tmp_path, sent):
    with replayed(tmp_path, base) as server:
        view, _ = play(server.url, context(base, answers))
    assert view == recorded_view(base)
    assert view["task"]["state"] == a2a.COMPLETED


def one_byte(body: bytes) -> list[bytes]:
    return [body[i:i + 1] for i in range(len(body))]


def inside_characters(body: bytes) -> list[bytes]:
    """Cut after the first byte of every multi-byte character (and nowhere else)."""
    cuts = [i + 1 for i, b in enumerate(body) if b >= 0xC0]
    return [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)])]


def line_ends(end: bytes):
    return lambda body: [body.replace(b"\n", end)]


def with_bom(body: bytes) -> list[bytes]:
    return [BOM[:2], BOM[2:] + body[:7], body[7:]]  # the BOM itself cut in two


def with_comments(body: bytes) -> list[bytes]:
    blocks = [block for block in body.split(b"\n\n") if block]
    noisy = b"".join(b"id: %d\n%s\n\n: keep-alive\n\n" % (n, block) for n, block in enumerate(blocks))
    return [b": ping\r\n" + noisy.replace(b"\n", b"\r\n")]


VARIATIONS = {"one-byte-chunks": one_byte, "cut-inside-characters": inside_characters, "crlf": line_ends(b"\r\n"),
              "cr": line_ends(b"\r"), "bom": with_bom, "comments-and-ids": with_comments}


@pytest.mark.parametrize("variation", VARIATIONS)
def test_the_view_survives_every_way_of_framing_the_stream(variation, tmp_path):
    with replayed(tmp_path, "ix-question", lambda log: restream(log, VARIATIONS[variation])) as server:
        view, _ = play(server.url, context("ix-question", QUESTION))
    assert view == recorded_view("ix-question")
    assert view["statusText"] == "Deployed"


def test_a_stream_that_stays_open_at_the_pause_is_answered(tmp_path, sent):
    def keep_open(log: FrameLog) -> None:
        log.get("stream").end = END_CLIENT_STOP  # the replay holds it open after its last chunk

    with replayed(tmp_path, "ix-question", keep_open) as server:
        view, took = play(server.url, context("ix-question", QUESTION))
    assert view == recorded_view("ix-question") and took < 5


def drop_first_answer(log: FrameLog) -> None:
    """The answer's connection is dropped before anything comes back; the next answer is the recorded one."""
    answer = log.get("answer_1")
    dropped = copy.copy(answer)
    dropped.label, dropped.status, dropped.end, dropped.chunks, dropped.events = "dropped", None, END_RESET, [], []
    log.exchanges.insert(log.exchanges.index(answer), dropped)


@pytest.mark.parametrize("retry", [True, False])
def test_an_answer_whose_connection_dropped_is_sent_again_with_its_messageid(retry, tmp_path, sent):
    with replayed(tmp_path, "ix-question", drop_first_answer) as server:
        view, _ = play(server.url, context("ix-question", QUESTION, retry=retry))
    answers = messages(sent)[1:]
    if retry:
        assert len(answers) == 2 and answers[0] == answers[1]  # the same message, messageId included
        assert view == recorded_view("ix-question")
    else:
        assert len(answers) == 1 and view["task"]["state"] == a2a.INPUT_REQUIRED


# -- the view, frame by frame ----------------------------------------------------------------------------

TASK, CTX = "task-1", "ctx-1"


def status(state: str, stamp: str | None, text: str | None = None, plan: list | None = None,
           task: str = TASK, ctx: str = CTX, **meta) -> dict:
    st: dict = {"state": state}
    if stamp:
        st["timestamp"] = f"2026-11-30T10:00:{stamp}Z"
    if text is not None:
        st["message"] = {"messageId": f"m-{text}", "role": a2a.ROLE_AGENT, "parts": [{"text": text}]}
    update: dict = {"taskId": task, "contextId": ctx, "status": st}
    if plan is not None:
        meta[progress_v1.URI] = {"steps": plan}
    if meta:
        update["metadata"] = meta
    return {"statusUpdate": update}


def chunk(artifact_id: str, text: str, append: bool = False, last: bool = False, task: str = TASK) -> dict:
    update: dict = {"taskId": task, "contextId": CTX, "artifact": {"artifactId": artifact_id, "parts": [{"text": text}]}}
    if append:
        update["append"] = True
    if last:
        update["lastChunk"] = True
    return {"artifactUpdate": update}


START = {"task": {"id": TASK, "contextId": CTX, "status": {"state": a2a.SUBMITTED,
                                                         "timestamp": "2026-11-30T10:00:00.000Z"}}}
PLAN_A = [{"label": "Inspect", "state": "active"}, {"label": "Build", "state": "pending"}]
PLAN_B = [{"label": "Inspect", "state": "done", "note": "ok"}, {"label": "Build", "state": "active"}]
PLAN_C = [{"label": "Build", "state": "done"}]


def view_of(frames: list[dict], fault: str | None = None) -> dict:
    view = View(fault)
    for frame in frames:
        view.take(frame)
    return view.as_json()


def test_status_updates_are_ordered_by_timestamp_and_copies_change_nothing():
    frames = [START, status(a2a.WORKING, "03.000", "third", PLAN_C), status(a2a.WORKING, "01.000", "first", PLAN_A),
              status(a2a.WORKING, "02.000", "second", PLAN_B), status(a2a.WORKING, "01.000", "first", PLAN_A)]
    view = view_of(frames)
    assert view["plan"] == PLAN_C and view["statusText"] == "third"
    arrival = view_of(frames, "arrival-order")
    assert arrival["plan"] == PLAN_A and arrival["statusText"] == "first"


def test_the_plan_is_replaced_whole_never_merged():
    frames = [START, status(a2a.WORKING, "01.000", None, PLAN_B), status(a2a.WORKING, "02.000", None, PLAN_C)]
    assert view_of(frames)["plan"] == PLAN_C
    assert view_of(frames, "merge-plans")["plan"] == [{"label": "Inspect", "state": "done", "note": "ok"},
                                                      {"label": "Build", "state": "done"}]


def test_a_status_without_a_message_leaves_the_text_and_a_plan_update_the_state():
    frames = [START, status(a2a.WORKING, "01.000", "working on it"), status(a2a.WORKING, "02.000", None, PLAN_A)]
    assert view_of(frames)["statusText"] == "working on it"


def test_artifacts_are_joined_per_id_and_lastchunk_ends_only_its_artifact():
    frames = [START, chunk("a", "A1"), chunk("b", "B1"), chunk("a", "A2", append=True),
              chunk("b", "B2", append=True, last=True), chunk("a", "A3", append=True, last=True),
              chunk("b", "late", append=True), status(a2a.COMPLETED, "01.000", "done")]
    view = view_of(frames)
    assert view["artifacts"] == [{"artifactId": "a", "text": "A1A2A3"}, {"artifactId": "b", "text": "B1B2"}]
    assert view["task"]["state"] == a2a.COMPLETED
    assert view_of(frames, "artifacts-by-arrival")["artifacts"] != view["artifacts"]


def test_frames_of_another_task_or_context_are_not_shown():
    frames = [status(a2a.WORKING, "00.500", "early"), START, status(a2a.WORKING, "01.000", "ours"),
              status(a2a.WORKING, "02.000", "theirs", task="task-2"),
              status(a2a.WORKING, "03.000", "other context", ctx="ctx-2"), chunk("x", "not ours", task="task-2")]
    view = view_of(frames)
    assert view["task"] == {"id": TASK, "contextId": CTX, "state": a2a.WORKING}
    assert view["statusText"] == "ours" and view["artifacts"] == []
    assert view_of(frames, "other-task-frames")["task"]["id"] == "task-2"


def test_unknown_metadata_and_plan_variants_are_tolerated():
    odd_plan = [{"label": "Inspect", "state": "paused", "owner": "x"}, {"label": "Build", "state": "done"}, "junk"]
    frames = [START, status(a2a.WORKING, "01.000", "one", PLAN_A, **{"urn:example:other": {"x": 1}}),
              status(a2a.WORKING, "02.000", "two", odd_plan)]
    view = view_of(frames)
    assert view["plan"] == [{"label": "Inspect", "state": "paused"}, {"label": "Build", "state": "done"}]
    assert view["statusText"] == "two"


def test_the_interaction_shown_is_the_last_with_its_prompt():
    ix = {"interactionId": "i-1", "kind": "question", "prompt": "Which one?"}
    pause = status(a2a.INPUT_REQUIRED, "01.000", "Which one?")
    pause["statusUpdate"]["status"]["message"]["metadata"] = {interactions_v1.URI: ix}
    frames = [START, pause, status(a2a.WORKING, "02.000", "Answer: a"), status(a2a.COMPLETED, "03.000", "Done")]
    assert view_of(frames)["interaction"] == ix
    assert view_of(frames, "prompt-not-shown")["interaction"] == {"interactionId": "i-1", "kind": "question"}


# -- the faults that change what it does on the wire or when it finishes ----------------------------------

def accented(log: FrameLog) -> None:
    """stream-basic with 2-, 3- and 4-byte characters in its first artifact, cut inside each of them."""
    restream(log, lambda body: inside_characters(body.replace(b"collected 12 items", "café ☕ 🚀".encode())))


def test_split_char_lost_loses_characters_cut_between_chunks(tmp_path):
    with replayed(tmp_path, "stream-basic", accented) as server:
        good, _ = play(server.url, context("stream-basic"))
    with replayed(tmp_path, "stream-basic", accented) as server:
        view, _ = play(server.url, context("stream-basic"), fault="split-char-lost")
    assert good["artifacts"][0]["text"].startswith("café ☕ 🚀\n")
    assert view["artifacts"][0]["text"].startswith("caf  \n")
    assert {**view, "artifacts": []} == {**good, "artifacts": []}


def test_bom_drops_first_loses_the_task_and_so_everything(tmp_path):
    with replayed(tmp_path, "stream-basic", lambda log: restream(log, with_bom)) as server:
        view, _ = play(server.url, context("stream-basic"), fault="bom-drops-first")
    assert view["task"] is None and view["artifacts"] == []


def unterminated(tail: bytes):
    """The stream's last event without its blank line: its data line ended by `tail` (b"": not ended)."""
    def cut(body: bytes) -> list[bytes]:
        assert body.endswith(b"\n\n")
        return [body[:-2] + tail]
    return lambda log: restream(log, cut)


@pytest.mark.parametrize("tail", [b"\n", b"", b"\r"], ids=["line-ended", "no-line-end", "cr"])
def test_an_event_the_stream_ends_inside_is_never_dispatched(tail, tmp_path):
    # WHATWG HTML §9.2.6: at the end of the stream the pending data is discarded; stream-basic's last event is
    # its terminal status, so the task shows as the frames before it left it
    with replayed(tmp_path, "stream-basic", unterminated(tail)) as server:
        view, took = play(server.url, context("stream-basic"))
    whole = recorded_view("stream-basic")
    assert view["task"]["state"] == a2a.WORKING and view["statusText"] == "Checking out 9f3c2e1 and starting the suite"
    assert view["artifacts"] == whole["artifacts"] and took < 5


@pytest.mark.parametrize("tail", [b"\n", b"", b"\r"], ids=["line-ended", "no-line-end", "cr"])
def test_dispatches_unterminated_shows_the_event_the_stream_ended_inside(tail, tmp_path):
    with replayed(tmp_path, "stream-basic", unterminated(tail)) as server:
        view, _ = play(server.url, context("stream-basic"), fault="dispatches-unterminated")
    assert view == recorded_view("stream-basic")  # as if the blank line had come: TASK_STATE_COMPLETED
    with replayed(tmp_path, "stream-basic") as server:  # a stream whose every event is ended: no difference
        assert play(server.url, context("stream-basic"), fault="dispatches-unterminated")[0] == recorded_view("stream-basic")


def test_lastchunk_ends_stream_stops_at_the_first_finished_artifact(tmp_path):
    with replayed(tmp_path, "stream-basic") as server:
        view, _ = play(server.url, context("stream-basic"), fault="lastchunk-ends-stream")
    assert view["task"]["state"] == a2a.WORKING and [a["artifactId"] for a in view["artifacts"]] == ["test-log"]


def test_waits_final_flag_waits_past_the_close(tmp_path):
    with replayed(tmp_path, "stream-basic") as server:
        good, quick = play(server.url, context("stream-basic"))
    with replayed(tmp_path, "stream-basic") as server:
        view, slow = play(server.url, context("stream-basic"), fault="waits-final-flag")
    with replayed(tmp_path, "stream-basic") as server:
        _, bounded = play(server.url, context("stream-basic"), fault="waits-final-flag", deadline=1)
    assert view == good and quick < 1 and 2.5 <= slow < 4 and bounded < 1.5


def test_unknown_variant_gives_up_at_the_first_unknown_metadata(tmp_path):
    def odd(log: FrameLog) -> None:
        body = b"".join(c.data for c in log.get("stream").chunks)
        body = body.replace(b'"statusUpdate":{', b'"statusUpdate":{"metadata":{"urn:example:x":1},', 1)
        log.get("stream").chunks = [Chunk(0.0, body)]

    with replayed(tmp_path, "stream-basic", odd) as server:
        good, _ = play(server.url, context("stream-basic"))
    with replayed(tmp_path, "stream-basic", odd) as server:
        view, _ = play(server.url, context("stream-basic"), fault="unknown-variant-gives-up")
    assert good == recorded_view("stream-basic")
    assert view["task"]["state"] == a2a.SUBMITTED and view["artifacts"] == []


def test_new_id_on_retry_sends_the_answer_again_under_another_id(tmp_path, sent):
    with replayed(tmp_path, "ix-question", drop_first_answer) as server:
        play(server.url, context("ix-question", QUESTION, retry=True), fault="new-id-on-retry")
    first, second = messages(sent)[1:]
    assert first["messageId"] != second["messageId"] and {**first, "messageId": ""} == {**second, "messageId": ""}


@pytest.mark.parametrize("fault,check", [
    ("no-version-header", lambda reqs, msgs: all(a2a.VERSION_HEADER not in r.headers for r in reqs)),
    ("stream-accept-json", lambda reqs, msgs: reqs[1].headers["accept"] == a2a.JSON_MEDIA_TYPE),
    ("new-task-with-task-id", lambda reqs, msgs: msgs[0]["taskId"].startswith("task-")),
    ("answer-reuses-id", lambda reqs, msgs: msgs[1]["messageId"] == msgs[0]["messageId"]),
    ("answer-without-extension", lambda reqs, msgs: "extensions" not in msgs[1]),
])
def test_the_faults_on_what_it_sends(fault, check, tmp_path, sent):
    with replayed(tmp_path, "ix-question") as server:
        play(server.url, context("ix-question", QUESTION), fault=fault)
    assert check(sent, messages(sent))


def test_approval_as_text_answers_an_approval_in_words_and_a_question_as_before(tmp_path, sent):
    answers = [{"interaction": "approval", "approved": True}, {"interaction": "approval", "approved": False}]
    with ReferenceServer() as server:
        play(server.url, context("ix-approval-granted", answers[:1] * 2), fault="approval-as-text")
    for msg in messages(sent)[1:]:
        assert msg["parts"] == [{"text": "yes"}] and interactions_v1.APPROVED not in msg["metadata"][interactions_v1.URI]
    sent.clear()
    with replayed(tmp_path, "ix-question") as server:
        play(server.url, context("ix-question", QUESTION), fault="approval-as-text")
    assert messages(sent)[1]["metadata"][interactions_v1.URI]["value"] == ANSWER  # a question: unchanged


def test_posts_to_origin_sends_its_requests_to_streamcert_url_not_the_cards_interface(sent):
    with ReferenceServer() as server:
        view, _ = play(server.url, context("stream-basic"))
        good = [str(r.url) for r in sent if r.method == "POST"]
        sent.clear()
        play(server.url, context("stream-basic"), fault="posts-to-origin")
    assert good and all(url.endswith("/a2a/jsonrpc") for url in good)
    assert [str(r.url) for r in sent if r.method == "POST"] == [server.url]


def test_streams_regardless_streams_to_an_agent_that_does_not(sent):
    with ReferenceServer() as server:
        play(server.agent_url("no-streaming"), context("stream-basic"), fault="streams-regardless")
    assert rpc(sent)[0]["method"] == a2a.SEND_STREAMING_MESSAGE


def test_d3_close_ends_answers_nothing_when_the_stream_closes_at_the_pause(sent):
    with ReferenceServer() as server:
        view, _ = play(server.url, context("ix-question", QUESTION), fault="d3-close-ends")
    assert view["task"]["state"] == a2a.INPUT_REQUIRED and len(messages(sent)) == 1


# -- the command -----------------------------------------------------------------------------------------

def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})


def test_the_command_prints_one_json_line_and_exits_0():
    with ReferenceServer() as server:
        env = {"STREAMCERT_URL": server.url, "STREAMCERT_CASE": "c-1",
               "STREAMCERT_CONTEXT": json.dumps(context("ix-question", QUESTION))}
        by_module = run("-m", "streamcert.reference.client", env=env)
        by_cli = run("-m", "streamcert", "client", server.url, env={**env, "STREAMCERT_URL": ""})
    for proc in (by_module, by_cli):
        assert proc.returncode == 0, proc.stderr
        lines = proc.stdout.splitlines()
        assert len(lines) == 1 and json.loads(lines[0])["statusText"] == "Deployed"


def test_the_command_refuses_a_fault_it_does_not_have():
    proc = run("-m", "streamcert.reference.client", "--fault", "nope", env={"STREAMCERT_URL": "http://127.0.0.1:9"})
    assert proc.returncode == 2 and "unknown fault 'nope'" in proc.stderr
    proc = run("-m", "streamcert", "client", "--fault", "stale-task")
    assert proc.returncode == 2 and "breaks the reference server, not the reference A2A client" in proc.stderr


def test_no_agent_there_is_a_clear_error_not_a_hang():
    proc = run("-m", "streamcert.reference.client", "--deadline", "5", env={"STREAMCERT_URL": "http://127.0.0.1:9"})
    assert proc.returncode == 1 and proc.stdout == "" and "could not read the card" in proc.stderr
