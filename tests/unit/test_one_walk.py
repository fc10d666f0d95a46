"""The one walk over a stream's frames (rules/common/framewalk.py, issue 29): judging a long stream with every stream rule
parses each event about once, whatever its exchange's parse budget keeps; alike frames share one record of facts
and are told apart by every member a rule reads; the stream read in the walk is the stream read frame by frame."""

from __future__ import annotations

import json

import pytest
from logs import artifact_update, frame_log, script, sse, status_update, stream_task
from test_parse_cache import parses  # noqa: F401  (the fixture counting the frame log's JSON reads)

from streamcert.catalogue import load_scenario
from streamcert.framelog import ParseBudget
from streamcert.outcomes import Outcome
from streamcert.rules import RuleContext, judge
from streamcert.rules.a2a.everystream import STREAM_RULES
from streamcert.rules.common.framewalk import alike_key, read_facts
from streamcert.rules.common.streamview import TaskStream, frame_facts

P, F = Outcome.PASS, Outcome.FAIL


def flood(n: int, *extra: dict, budget: int = 0):
    """A stream: the Task, `n` appended text chunks of one artifact (the first starts it), `extra` results, the
    terminal status; its events share a parse budget of `budget` bytes (0: no parse kept with its event)."""
    chunks = [artifact_update("a1", text=f"chunk {i} ", append=i > 0) for i in range(n)]
    ex = sse("stream", [stream_task(), *chunks, *extra, status_update("TASK_STATE_COMPLETED")])
    shared = ParseBudget(budget)
    for ev in ex.events:
        ev._budget = shared
    return ex


def test_judging_a_long_stream_with_every_stream_rule_parses_each_event_about_once(parses):  # noqa: F811
    ex = flood(10_000)
    scenario = load_scenario("stream-basic")
    log = frame_log(ex, script=script({"status": "working"}, {"finish": "done"}))
    wanted = sorted(set(scenario.requirements) | set(STREAM_RULES) | {"A2A-INT-006"})
    found = {f.req_id: f for f in judge(log, wanted, RuleContext(scenario=scenario))}
    events = len(ex.events)
    assert parses["n"] <= 1.2 * events, f"{parses['n']} parses for {events} events"
    # the rules judged the stream (not a log they could not read): the sequence, the envelope, the names
    for rid in ("A2A-STREAM-001", "A2A-STREAM-004", "A2A-STREAM-005", "A2A-STREAM-006", "A2A-STREAM-007",
                "A2A-STREAM-013", "WIRE-002", "WIRE-003", "WIRE-004", "WIRE-010"):
        assert found[rid].outcome == P, (rid, found[rid].message)
    assert "10002 events" in found["WIRE-002"].message and "10000 artifact chunks" in found["A2A-STREAM-006"].message


def test_alike_frames_share_one_record_of_facts():
    ex = flood(1_000)
    facts = frame_facts(ex)
    assert len(facts) == len(ex.data_events())
    assert len({id(f) for f in facts[2:-1]}) == 1  # the appended chunks differ only in their texts
    assert facts[1] != facts[2]  # the first chunk starts the artifact, the next ones append


def test_a_frame_unlike_its_neighbours_is_judged_on_its_own_members():
    # Among 200 alike chunks: one whose member is misspelt, one appended after the lastChunk, one whose part holds
    # two contents, one with the 0.3 final flag on a status; each rule blames that frame alone.
    odd = artifact_update("a1", text="x", append=True)
    odd["artifactUpdate"]["artifact"]["artifact_id"] = odd["artifactUpdate"]["artifact"].pop("artifactId")
    last = artifact_update("a1", text="last", append=True, last=True)
    after = artifact_update("a1", text="after", append=True)
    two = artifact_update("a1", text="y", append=True)
    two["artifactUpdate"]["artifact"]["parts"][0]["data"] = {"text": "z"}
    flagged = status_update("TASK_STATE_WORKING")
    flagged["statusUpdate"]["final"] = False
    ex = flood(200, odd, two, flagged, last, after)
    log = frame_log(ex)
    found = {f.req_id: f for f in judge(log, ["WIRE-010", "A2A-STREAM-007", "A2A-STREAM-013", "A2A-STREAM-017"],
                                        RuleContext())}
    frame = {name: ex.frame_number(ex.data_events()[i]) for name, i in
             (("odd", 201), ("two", 202), ("flagged", 203), ("after", 205))}
    assert found["WIRE-010"].outcome == F and [e["frame"] for e in found["WIRE-010"].evidence] == [frame["odd"]]
    assert "artifact_id (ProtoJSON writes artifactId)" in found["WIRE-010"].message
    assert found["A2A-STREAM-007"].outcome == F
    assert [e["frame"] for e in found["A2A-STREAM-007"].evidence] == [frame["after"]]
    assert found["A2A-STREAM-013"].outcome == F
    assert [e["frame"] for e in found["A2A-STREAM-013"].evidence] == [frame["two"]]
    assert found["A2A-STREAM-017"].outcome == Outcome.NON_STRICT
    assert [e["frame"] for e in found["A2A-STREAM-017"].evidence] == [frame["flagged"]]


@pytest.mark.parametrize("a, b, alike", [
    ('{"parts":[{"text":"one"}]}', '{"parts":[{"text":"two, longer"}]}', True),
    ('{"parts":[{"text":"one"}]}', '{"parts": [{ "text" : "two"}]}', False),  # other white space: other keys
    ('{"parts":[{"text":"o\\"ne"}]}', '{"parts":[{"text":"two"}]}', True),  # an escaped quote inside the text
    ('{"parts":[{"text":"one"}],"role":"ROLE_AGENT"}', '{"parts":[{"text":"one"}],"role":"agent"}', False),
    ('{"parts":[{"text":"one"}]}', '{"parts":[{"data":"one"}]}', False),
])
def test_the_alike_key_leaves_out_only_the_text_members(a, b, alike):
    assert (alike_key(a) == alike_key(b)) is alike


@pytest.mark.parametrize("data", [
    '{"note":"see \\"text\\": \\"x\\""}',  # "text" written inside another string
    '{"\\"text":"x"}',  # a key ending in a quote and text
])
def test_a_text_member_that_is_not_one_for_certain_gives_no_key(data):
    json.loads(data)
    assert alike_key(data) in (None, data)  # nothing left out of the key


@pytest.mark.parametrize("frame", [
    {"jsonrpc": "2.0", "id": 1, "result": artifact_update("a1", text="t", append=True)},
    {"jsonrpc": "2.0", "id": 1, "result": status_update("TASK_STATE_WORKING", "t")},
    {"jsonrpc": "2.0", "id": 1, "result": stream_task(text="t")},
])
def test_facts_do_not_read_the_text_members(frame):
    other = json.loads(json.dumps(frame).replace('"t"', '"another text"'))
    assert other != frame and alike_key(json.dumps(frame)) == alike_key(json.dumps(other))
    result = frame["result"]
    assert read_facts("jsonrpc", frame, None, result) == read_facts("jsonrpc", other, None, other["result"])


def test_the_stream_read_in_the_walk_is_the_stream_read_frame_by_frame():
    ex = flood(50, artifact_update("a2", data={"k": 1}, name="data"))
    walked = TaskStream.from_exchange(ex)
    by_frame = TaskStream(exchange=ex)
    for ev in ex.data_events():
        by_frame.add(ev)
    assert walked is not by_frame
    assert [(i.event, i.kind) for i in walked.items] == [(i.event, i.kind) for i in by_frame.items]
    assert {k: (a.text, a.data, a.chunks, a.last_chunk) for k, a in walked.artifacts.items()} == \
        {k: (a.text, a.data, a.chunks, a.last_chunk) for k, a in by_frame.artifacts.items()}
    assert walked.last_state == by_frame.last_state == "TASK_STATE_COMPLETED"
