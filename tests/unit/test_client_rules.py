"""CLIENT- rules, both ways, on hand-made client cases (tests/common/client_logs.py): a right client passes, a broken
one fails with the requirement it breaks, and no other; a client with no view is ERROR, never a harness fault."""

from __future__ import annotations

import copy
import json
import time

import pytest
from client_logs import (
    CTX,
    HEADERS,
    PLAN_1,
    PLAN_2,
    PLAN_3,
    TID,
    TS,
    World,
    answer_message,
    basic_frames,
    card_sent,
    case_log,
    client,
    context,
    question_world,
    sent,
    status_update,
    user_message,
)
from logs import agent_card, task, text_msg

from streamcert.catalogue import load_catalogue
from streamcert.framelog import END_CLIENT_STOP, END_ERROR, END_TIME_LIMIT, MAX_JSON_DEPTH, Chunk
from streamcert.outcomes import Outcome
from streamcert.protocols import interactions_v1, progress_v1
from streamcert.rules import judge
from streamcert.rules.client.compare import carried_lost, characters_lost

ALL = tuple(f"CLIENT-{n:03d}" for n in range(1, 21))
# A requirement not met: FAIL for a MUST, NON_STRICT for a SHOULD (docs/contracts.md §3: a SHOULD not met never FAILs).
MISSED = {rid: Outcome.FAIL if load_catalogue()[rid].level == "MUST" else Outcome.NON_STRICT for rid in ALL}


def outcomes(log, *ids, w: World | None = None) -> dict[str, Outcome]:
    """Each requirement's outcome (the worst of its findings); absent: no finding."""
    order = [Outcome.PASS, Outcome.NON_STRICT, Outcome.WARNING, Outcome.FAIL, Outcome.ERROR]
    worst: dict[str, Outcome] = {}
    for f in judge(log, ids, context(*ids, w=w)):
        if f.req_id not in worst or order.index(f.outcome) > order.index(worst[f.req_id]):
            worst[f.req_id] = f.outcome
    return worst


def findings(log, rid, w=None):
    return [f for f in judge(log, [rid], context(rid, w=w)) if f.req_id == rid]


def view(**changes):
    v = World().expected
    v.update(copy.deepcopy(changes))
    return v


# -- a right client ---------------------------------------------------------------------------------------

def test_a_right_client_passes_every_requirement_its_case_exercises():
    w = World()
    got = outcomes(case_log(w), *ALL, w=w)
    assert set(got.values()) == {Outcome.PASS}, got
    # not exercised by this case: no disorder, no interruption, no interaction, no retry, no unknown parts
    assert set(got) == set(ALL) - {"CLIENT-002", "CLIENT-008", "CLIENT-011", "CLIENT-012", "CLIENT-013", "CLIENT-019"}


def test_the_view_compares_as_json_values_with_extra_keys_and_any_order():
    shown = view()
    shown["artifacts"] = [dict(shown["artifacts"][1], data={"passed": 11.0, "failed": 1}, description="x"),
                          dict(shown["artifacts"][0], parts=[])]
    shown["task"]["kind"] = "task"
    shown["extra"] = {"anything": True}
    shown["plan"] = [dict(step, note=None) for step in shown["plan"]]  # a note left null equals one left out
    w = World()
    assert outcomes(case_log(w, shown), "CLIENT-001", "CLIENT-003", "CLIENT-007", w=w) == \
        dict.fromkeys(("CLIENT-001", "CLIENT-003", "CLIENT-007"), Outcome.PASS)


def test_a_number_is_not_a_boolean_nor_a_string():
    shown = view()
    shown["artifacts"][1]["data"] = {"failed": True, "passed": "11"}
    assert outcomes(case_log(World(), shown), "CLIENT-003") == {"CLIENT-003": MISSED["CLIENT-003"]}


# -- CLIENT-001, -002: the plan -------------------------------------------------------------------------------

def test_001_a_merged_plan_fails_and_names_the_steps():
    merged = [PLAN_2[0], *PLAN_3]  # the older step kept beside the latest plan
    [f] = findings(case_log(World(), view(plan=merged)), "CLIENT-001")
    assert f.outcome == Outcome.FAIL and "Check out 9f3c2e1" in f.message and f.evidence[0]["exchange"] == "client"


def test_001_an_older_plan_without_disorder_is_not_the_latest():
    w = World()
    assert outcomes(case_log(w, view(plan=PLAN_2)), "CLIENT-001", "CLIENT-002", w=w) == {"CLIENT-001": MISSED["CLIENT-001"]}


def test_001_an_ellipsis_written_as_three_stops_is_a_reading():
    w = World()
    w.frames[-1] = status_update("TASK_STATE_COMPLETED", "1 failed, 11 passed", TS[3],
                                 [{"label": "Run the whole sui…", "state": "done"}])
    w.expected["plan"] = [{"label": "Run the whole sui…", "state": "done"}]
    [f] = findings(case_log(w, view(plan=[{"label": "Run the whole sui...", "state": "done"}])), "CLIENT-001", w)
    assert f.outcome == Outcome.PASS and "three full stops" in f.reading


def disordered() -> World:
    """The latest plan (and status) arrives first; an older update arrives after it, and once more."""
    w = World()
    frames = basic_frames()
    completed, older = frames[7], frames[6]
    w.frames = [*frames[:6], completed, older, older]
    return w


def test_002_the_last_arrival_shown_instead_of_the_latest_stamp_fails_002_only():
    w = disordered()
    arrival = view(plan=PLAN_2, statusText="Writing the summary")
    got = outcomes(case_log(w, arrival), "CLIENT-001", "CLIENT-002", "CLIENT-006", w=w)
    assert got == {"CLIENT-002": MISSED["CLIENT-002"]}, got  # the plan and text are an update's whole: not merged, not cut
    message = findings(case_log(w, arrival), "CLIENT-002", w)[0].message
    # the note says where the shown value came from, so it stands beside it, not beside the expected one
    assert 'shown "Writing the summary" (what the task\'s own frame 8, 9 carried, not the latest), expected' in message


def test_002_an_older_plan_that_did_not_arrive_late_is_not_002s():
    w = disordered()
    got = outcomes(case_log(w, view(plan=PLAN_1)), "CLIENT-001", "CLIENT-002", w=w)
    assert got == {"CLIENT-001": MISSED["CLIENT-001"]}, got


def test_002_the_latest_by_timestamp_passes():
    w = disordered()
    assert outcomes(case_log(w), "CLIENT-001", "CLIENT-002", w=w) == \
        {"CLIENT-001": Outcome.PASS, "CLIENT-002": Outcome.PASS}


def test_002_updates_stamped_alike_either_plan_is_the_latest():
    w = disordered()
    twin = status_update("TASK_STATE_WORKING", "Also latest", TS[3], PLAN_1)
    w.frames.insert(7, twin)
    [f] = findings(case_log(w, view(plan=PLAN_1)), "CLIENT-002", w)
    assert f.outcome == Outcome.PASS and "stamped alike" in f.reading


def test_002_a_stream_in_order_does_not_exercise_it():
    assert findings(case_log(World()), "CLIENT-002") == []


# -- CLIENT-003, -004, -005, -006: artifacts and the stream's text ---------------------------------------

def test_003_chunks_not_joined_fail():
    shown = view()
    shown["artifacts"][0]["text"] = "1 failed — naïve ✓\n"  # only the last chunk
    [f] = findings(case_log(World(), shown), "CLIENT-003")
    assert f.outcome == MISSED["CLIENT-003"] and "artifacts[test-log].text" in f.message


def test_003_each_chunk_shown_as_an_artifact_of_its_own_fails():
    shown = view()
    shown["artifacts"] = [{"artifactId": "test-log", "name": "test-log.txt", "text": t} for t in ("a", "b")] + \
        shown["artifacts"][1:]
    assert findings(case_log(World(), shown), "CLIENT-003")[0].outcome == MISSED["CLIENT-003"]


def test_004_a_lost_character_is_blamed_on_004_not_on_003():
    w = World(variations=[{"kind": "rechunk", "split": "utf8"}])
    shown = view()
    shown["artifacts"][0]["text"] = shown["artifacts"][0]["text"].replace("ï", "")
    got = outcomes(case_log(w, shown), "CLIENT-003", "CLIENT-004", w=w)
    assert got == {"CLIENT-004": MISSED["CLIENT-004"]}, got
    assert outcomes(case_log(w), "CLIENT-003", "CLIENT-004", w=w) == \
        {"CLIENT-003": Outcome.PASS, "CLIENT-004": Outcome.PASS}


def test_005_a_first_event_lost_after_a_bom_is_blamed_on_005_not_on_007():
    w = World(variations=[{"kind": "bom"}])
    shown = view(task={"id": None, "contextId": None, "state": "TASK_STATE_COMPLETED"})
    assert outcomes(case_log(w, shown), "CLIENT-005", "CLIENT-007", w=w) == {"CLIENT-005": MISSED["CLIENT-005"]}


def test_006_a_client_that_stops_at_the_first_last_chunk_fails_006_only():
    shown = stopped_at_last_chunk()
    got = outcomes(case_log(World(), shown), "CLIENT-001", "CLIENT-003", "CLIENT-006")
    assert got == {"CLIENT-006": MISSED["CLIENT-006"]}, got  # the summary began after it; the plan came after it
    [f] = findings(case_log(World(), shown), "CLIENT-006")
    assert "artifacts[summary]" in f.message and "(and 1 more)" in f.message and f.measured["differences"] == 4


def stopped_at_last_chunk() -> dict:
    shown = view(task={"id": TID, "contextId": CTX, "state": "TASK_STATE_WORKING"}, statusText="Checking out 9f3c2e1",
                 plan=PLAN_1)
    shown["artifacts"] = shown["artifacts"][:1]
    return shown


def test_006_a_stop_at_the_last_chunk_is_006s_even_where_the_case_rewrites_lines():
    w = World(variations=[{"kind": "bom"}])
    got = outcomes(case_log(w, stopped_at_last_chunk()), "CLIENT-001", "CLIENT-003", "CLIENT-005", "CLIENT-006", w=w)
    assert got == {"CLIENT-006": MISSED["CLIENT-006"]}, got


VIEW_IDS = tuple(f"CLIENT-{n:03d}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 10, 13))


def late_copy_frames() -> list:
    """basic_frames with the first plan update delivered again after the summary (a late copy: a disorder)."""
    frames = basic_frames()
    return [*frames[:6], copy.deepcopy(frames[1]), *frames[6:]]


def variant_frames() -> list:
    """basic_frames whose second plan carries members and a state progress/v1 does not know."""
    frames = basic_frames()
    upd = frames[6]["statusUpdate"]
    upd["metadata"] = {progress_v1.URI: {"steps": [dict(PLAN_2[0], durationMs=5), dict(PLAN_2[1], state="paused")],
                                         "format": "tree"}, "https://example.com/ext/v9": {"x": 1}}
    return frames


@pytest.mark.parametrize("variations,frames", [
    ([{"kind": "line_ends", "value": "crlf"}, {"kind": "rechunk", "split": "lines"}], basic_frames),
    ([{"kind": "rechunk", "split": "utf8"}], basic_frames),
    ([{"kind": "duplicate", "frame": 2, "before": 7}], late_copy_frames),
    ([{"kind": "plans"}], variant_frames),
], ids=["crlf", "utf8", "late-copy", "unknown-plan"])
def test_006_a_stop_at_the_first_last_chunk_is_006s_whatever_else_the_case_varies(variations, frames):
    # Issue 22: such a client was blamed on CLIENT-005 (crlf), -004 (utf8), -002 (a late copy of the plan it
    # shows), -010 (unknown plan): the view is the stream up to frame 5 exactly, which only the stop explains.
    w = World(frames=frames(), variations=variations)
    got = outcomes(case_log(w, stopped_at_last_chunk()), *VIEW_IDS, w=w)
    assert {rid: o for rid, o in got.items() if o != Outcome.PASS} == {"CLIENT-006": MISSED["CLIENT-006"]}, got
    [f] = findings(case_log(w, stopped_at_last_chunk()), "CLIENT-006", w)
    assert "up to frame 5 (the first lastChunk, of artifact test-log) and nothing after" in f.message
    # blame cites no frame the client never read: the plan it shows is frame 2's, never the late copy's
    assert "frame 2" in f.message and not any(f"frame {n}" in f.message for n in range(6, 10)), f.message


def test_008_a_stop_at_the_interruption_is_008s_even_where_the_case_does_not_list_it_first():
    w = question_world()
    w.variations = [{"kind": "line_ends", "value": "cr"}]
    shown = dict(w.expected, task={"id": TID, "contextId": CTX, "state": "TASK_STATE_INPUT_REQUIRED"},
                 statusText="Which colour?")
    got = outcomes(case_log(w, shown), *VIEW_IDS, w=w)
    assert {rid: o for rid, o in got.items() if o != Outcome.PASS} == {"CLIENT-008": MISSED["CLIENT-008"]}, got


def test_a_stop_is_blamed_only_when_the_view_is_exactly_the_stream_up_to_it():
    # the stop's view with another part wrong too: no stop explains it, the parts are judged one by one
    w = World(variations=[{"kind": "line_ends", "value": "crlf"}])
    shown = stopped_at_last_chunk()
    shown["task"]["id"] = "task-other"
    got = outcomes(case_log(w, shown), *VIEW_IDS, w=w)
    assert got["CLIENT-007"] == MISSED["CLIENT-007"], got


@pytest.mark.parametrize("plan", [None, [], {"steps": PLAN_3}], ids=["null", "empty", "the-object"])
def test_001_a_plan_taken_from_the_wrong_key_is_001s_not_010s(plan):
    # the rest of the view is right (the stream was read to its end): the plan was taken wrong
    w = World(frames=variant_frames(), variations=[{"kind": "plans"}])
    got = outcomes(case_log(w, view(plan=plan)), *VIEW_IDS, w=w)
    assert {rid: o for rid, o in got.items() if o != Outcome.PASS} == {"CLIENT-001": MISSED["CLIENT-001"]}, got


def test_001_an_update_skipped_for_its_text_is_001s_not_005s():
    # a client that drops an update whose text it showed already keeps an older plan: nothing of the line ends
    frames = basic_frames()
    frames[7]["statusUpdate"]["status"]["message"] = text_msg("Writing the summary", message_id="m-x")
    w = World(frames=frames, variations=[{"kind": "line_ends", "value": "crlf"}],
              expected=view(statusText="Writing the summary"))
    got = outcomes(case_log(w, dict(w.expected, plan=PLAN_2)), *VIEW_IDS, w=w)
    assert {rid: o for rid, o in got.items() if o != Outcome.PASS} == {"CLIENT-001": MISSED["CLIENT-001"]}, got


def test_010_a_variant_plan_left_for_the_plain_one_before_it_stays_010s():
    frames = variant_frames()
    frames[7]["statusUpdate"].pop("metadata")  # the variant plan is the latest
    w = World(frames=frames, variations=[{"kind": "plans"}],
              expected=view(plan=[dict(PLAN_2[0]), dict(PLAN_2[1], state="paused")]))
    named = ("CLIENT-010", "CLIENT-001", "CLIENT-003", "CLIENT-007")  # as client-unknown-plan names them
    got = outcomes(case_log(w, view(plan=PLAN_1)), *named, w=w)
    assert {rid: o for rid, o in got.items() if o != Outcome.PASS} == {"CLIENT-010": MISSED["CLIENT-010"]}, got


def test_005_a_client_that_read_nothing_is_005s_not_006s():
    w = World(variations=[{"kind": "line_ends", "value": "cr"}])
    shown = {"task": None, "artifacts": [], "plan": None, "interaction": None, "statusText": None}
    got = outcomes(case_log(w, shown), "CLIENT-001", "CLIENT-003", "CLIENT-005", "CLIENT-006", "CLIENT-007", w=w)
    assert got == {"CLIENT-005": MISSED["CLIENT-005"]}, got


def test_005_an_event_the_stream_ended_inside_shown_is_005s_alone():
    # client-unterminated: the terminal status is the block no blank line ended, so the stream as served (its
    # events) stops at frame 7 and the task is expected WORKING, with frame 7's text and plan
    w = World(frames=basic_frames()[:-1], variations=[{"kind": "unterminated"}])
    w.expected = view(task={"id": TID, "contextId": CTX, "state": "TASK_STATE_WORKING"},
                      statusText="Writing the summary", plan=PLAN_2)

    def played(shown=None):
        log = case_log(w, shown)
        stream = next(ex for ex in log.all("served") if ex.notes["served_as"] == "stream")
        last = json.dumps({"jsonrpc": "2.0", "id": 1, "result": basic_frames()[-1]})
        stream.chunks.append(Chunk(stream.t_end, f"data: {last}\n".encode()))  # and no blank line: no event
        return log

    named = ("CLIENT-001", "CLIENT-003", "CLIENT-005", "CLIENT-006", "CLIENT-007")
    assert set(outcomes(played(), *named, w=w).values()) == {Outcome.PASS}
    dispatched = outcomes(played(view()), *named, w=w)  # the view with the unterminated event taken: plan too
    assert {rid: o for rid, o in dispatched.items() if o != Outcome.PASS} == {"CLIENT-005": MISSED["CLIENT-005"]}
    [f] = findings(played(view()), "CLIENT-005", w)
    assert "plan: shown" in f.message and "the block the stream ended inside carried" in f.message


def test_001_a_merge_in_a_case_that_splits_characters_is_001s_not_004s():
    w = World(variations=[{"kind": "rechunk", "split": "utf8"}])
    got = outcomes(case_log(w, view(plan=[PLAN_2[0], *PLAN_3])), "CLIENT-001", "CLIENT-004", w=w)
    assert got == {"CLIENT-001": MISSED["CLIENT-001"]}, got


def test_004_characters_shown_as_replacement_are_004s():
    w = World(variations=[{"kind": "rechunk", "split": "utf8"}])
    shown = view()
    shown["artifacts"][0]["text"] = shown["artifacts"][0]["text"].replace("✓", "\ufffd\ufffd")
    shown["plan"] = [dict(PLAN_3[0], label="Run the suite")]
    got = outcomes(case_log(w, shown), "CLIENT-001", "CLIENT-003", "CLIENT-004", w=w)
    assert got == {"CLIENT-001": Outcome.PASS, "CLIENT-004": MISSED["CLIENT-004"]}, got


def test_006_without_frames_after_a_last_chunk_is_not_exercised():
    w = World()
    w.frames = [f for f in w.frames if "artifactUpdate" not in f or not f["artifactUpdate"].get("lastChunk")]
    assert findings(case_log(w), "CLIENT-006", w) == []


# -- CLIENT-007: the task's ids ------------------------------------------------------------------------------

def test_007_another_task_id_shown_fails():
    shown = view(task={"id": "task-other", "contextId": CTX, "state": "TASK_STATE_COMPLETED"})
    assert findings(case_log(World(), shown), "CLIENT-007")[0].outcome == MISSED["CLIENT-007"]


def test_007_a_foreign_frame_shown_is_blamed_on_007_not_on_the_status_part():
    w = World(variations=[{"kind": "foreign"}])
    w.frames.insert(7, status_update("TASK_STATE_FAILED", "Someone else's task failed", TS[3], tid="task-other",
                                     ctx="ctx-other"))
    shown = view(statusText="Someone else's task failed")
    got = outcomes(case_log(w, shown), "CLIENT-006", "CLIENT-007", w=w)
    assert got == {"CLIENT-007": MISSED["CLIENT-007"]}, got  # 006's part differs only there: no finding of its own
    assert "frame 8, of another task or context" in findings(case_log(w, shown), "CLIENT-007", w)[0].message


# -- CLIENT-008, -011, -013: interruptions and answers -------------------------------------------------------

@pytest.mark.parametrize("closes", [True, False], ids=["D3-closes", "D3-stays-open"])
def test_008_goes_on_after_an_interruption_both_ways(closes):
    w = question_world(closes=closes)
    [f] = findings(case_log(w), "CLIENT-008", w)
    assert f.outcome == Outcome.PASS and ("closes" if closes else "stays open") in f.reading


def test_008_a_client_that_stops_at_the_interruption_fails():
    w = question_world()
    shown = dict(w.expected, task={"id": TID, "contextId": CTX, "state": "TASK_STATE_INPUT_REQUIRED"})
    assert findings(case_log(w, shown), "CLIENT-008", w)[0].outcome == MISSED["CLIENT-008"]


def test_008_without_an_interruption_is_not_exercised():
    assert findings(case_log(World()), "CLIENT-008") == []


def test_011_a_right_answer_passes():
    w = question_world()
    assert outcomes(case_log(w), "CLIENT-011", "CLIENT-013", w=w) == \
        {"CLIENT-011": Outcome.PASS, "CLIENT-013": Outcome.PASS}


def approval_world(answer: dict) -> World:
    """question_world, the interaction an approval (TASK_STATE_AUTH_REQUIRED), answered with `answer`."""
    w = question_world(answers=[sent(message=answer, answer="answer_1", t=0.5)])
    status = w.frames[1]["statusUpdate"]["status"]
    status["state"] = "TASK_STATE_AUTH_REQUIRED"
    status["message"]["metadata"][interactions_v1.URI].update(kind="approval", prompt="Approve shell / rm?")
    w.expected["interaction"] = {"kind": "approval", "prompt": "Approve shell / rm?"}
    return w


def approval_answer(parts: list, **under_uri) -> dict:
    msg = answer_message()
    msg["parts"] = parts
    msg["metadata"][interactions_v1.URI] = {"interactionId": "ix-1", **under_uri}
    return msg


@pytest.mark.parametrize("parts,under_uri,outcome", [
    ([{"data": {"approved": False}}], {"approved": False}, Outcome.PASS),
    ([{"text": "yes"}], {"value": True}, Outcome.PASS),
    ([{"data": {"approved": True}}], {}, Outcome.NON_STRICT),
    ([{"text": "no"}], {}, Outcome.FAIL),
    ([{"text": "approved"}], {"approved": "yes"}, Outcome.FAIL),
], ids=["approved", "boolean-value", "data-part-only", "text-only", "approved-not-boolean"])
def test_019_an_approval_is_answered_by_a_boolean_approved_and_text_never_approves(parts, under_uri, outcome):
    w = approval_world(approval_answer(parts, **under_uri))
    [f] = findings(case_log(w), "CLIENT-019", w)
    assert f.outcome == outcome, f.message
    if outcome == Outcome.FAIL:
        assert "approval" in f.message and "answer #3" in f.message


@pytest.mark.parametrize("parts,under_uri,outcome", [
    ([{"data": {"value": "blue"}}], {"value": "blue"}, Outcome.PASS), ([{"text": "blue"}], {}, Outcome.PASS),
    ([{"data": {"colour": "blue"}}], {}, Outcome.PASS), ([], {}, Outcome.FAIL)],
    ids=["value", "text-part", "data-part", "nothing"])
def test_019_a_question_is_answered_by_a_value_or_a_data_or_text_part(parts, under_uri, outcome):
    w = question_world(answers=[sent(message=approval_answer(parts, **under_uri), answer="answer_1", t=0.5)])
    [f] = findings(case_log(w), "CLIENT-019", w)
    assert f.outcome == outcome, f.message


def test_019_without_an_answer_sent_gives_no_finding():
    assert findings(case_log(World()), "CLIENT-019") == []


def test_020_every_request_at_the_interface_the_card_declares():
    w = World()
    [f] = findings(case_log(w), "CLIENT-020", w)
    assert f.outcome == Outcome.PASS and "all 2 request(s)" in f.message


@pytest.mark.parametrize("where,word", [
    ("http://127.0.0.1:41241/", "sent to /,"), ("http://127.0.0.1:41241/agents/x/a2a/jsonrpc", "/agents/x/a2a/jsonrpc"),
    ("http://127.0.0.1:41241/agents/x/.well-known/agent-card.json", "reads an agent card at /agents/x/")],
    ids=["origin", "another-path", "card-under-a-path"])
def test_020_a_request_elsewhere_fails(where, word):
    w = World()
    if "agent-card" in where:
        w.requests[0].url = where
    else:
        w.requests[1].url = where
    [f] = findings(case_log(w), "CLIENT-020", w)
    assert f.outcome == Outcome.FAIL and word in f.message, f.message


@pytest.mark.parametrize("broken,word", [
    (dict(tid=None), "taskId"), (dict(ctx="ctx-other"), "contextId"),
    (dict(interaction_id="ix-0"), "interactionId"), (dict(listed=False), "not listed")])
def test_011_an_answer_off_the_task_or_unlisted_fails(broken, word):
    w = question_world(answers=[sent(message=answer_message(**broken), answer="answer_1", t=0.5)])
    [f] = findings(case_log(w), "CLIENT-011", w)
    assert f.outcome == MISSED["CLIENT-011"] and word in f.message


def test_011_the_extension_in_the_header_only_is_non_strict():
    headers = dict(HEADERS, **{"a2a-extensions": "https://docs.nylorun.com/a2a/interactions/v1"})
    w = question_world(answers=[sent(message=answer_message(listed=False), answer="answer_1", headers=headers)])
    assert findings(case_log(w), "CLIENT-011", w)[0].outcome == Outcome.NON_STRICT


def test_no_answer_at_all_is_008s_a_client_that_did_not_go_on():
    w = question_world(answers=[])
    stopped = dict(w.expected, task={"id": TID, "contextId": CTX, "state": "TASK_STATE_INPUT_REQUIRED"},
                   statusText="Which colour?")
    got = outcomes(case_log(w, stopped), "CLIENT-008", "CLIENT-011", "CLIENT-013", w=w)
    assert got == {"CLIENT-008": MISSED["CLIENT-008"], "CLIENT-013": Outcome.PASS}, got


def test_013_a_prompt_not_shown_fails():
    w = question_world()
    shown = dict(w.expected, interaction={"kind": "question", "prompt": "Which colour"})
    assert findings(case_log(w, shown), "CLIENT-013", w)[0].outcome == MISSED["CLIENT-013"]


# -- CLIENT-012, -016: messageIds ----------------------------------------------------------------------------

def retried(second_id: str) -> World:
    first = sent(message=answer_message(), answer="answer_1_dropped", served=END_ERROR, t=0.5)
    again = sent(message=answer_message(message_id=second_id), answer="answer_1", t=0.9)
    return question_world(answers=[first, again], retry=True)


def test_012_a_retry_with_the_same_message_id_passes_and_is_no_second_message():
    w = retried("answer:ix-1")
    assert outcomes(case_log(w), "CLIENT-012", "CLIENT-016", w=w) == \
        {"CLIENT-012": Outcome.PASS, "CLIENT-016": Outcome.PASS}


def test_012_a_retry_with_a_new_message_id_fails_012_only():
    w = retried("answer:ix-1:again")
    got = outcomes(case_log(w), "CLIENT-011", "CLIENT-012", "CLIENT-016", w=w)
    assert got == {"CLIENT-011": Outcome.PASS, "CLIENT-012": MISSED["CLIENT-012"], "CLIENT-016": Outcome.PASS}, got


def test_012_without_a_retry_is_not_exercised():
    w = question_world()
    assert findings(case_log(w), "CLIENT-012", w) == []


@pytest.mark.parametrize("mid,word", [(None, "not a non-empty string"), ("", "not a non-empty string"),
                                      (7, "not a non-empty string"), (TID, "an id it was given")])
def test_016_a_missing_or_given_message_id_fails(mid, word):
    w = question_world(answers=[sent(message=answer_message(message_id=mid), answer="answer_1", t=0.5)])
    [f] = findings(case_log(w), "CLIENT-016", w)
    assert f.outcome == Outcome.FAIL and word in f.message


def test_016_one_id_on_two_different_messages_fails():
    w = question_world(answers=[sent(message=answer_message(message_id="5bc8fbbc-bde5"), answer="answer_1")])
    [f] = findings(case_log(w), "CLIENT-016", w)
    assert f.outcome == Outcome.FAIL and "different messages" in f.message


# -- CLIENT-014, -015, -017, -018: the requests ------------------------------------------------------------

def with_request(**kw) -> World:
    return World(requests=[card_sent(), sent(**kw)])


def test_014_version_missing_fails_a_patch_number_is_non_strict():
    no_version = {k: v for k, v in HEADERS.items() if k != "a2a-version"}
    assert findings(case_log(with_request(headers=no_version)), "CLIENT-014")[0].outcome == Outcome.FAIL
    patch = dict(HEADERS, **{"a2a-version": "1.0.1"})
    assert findings(case_log(with_request(headers=patch)), "CLIENT-014")[0].outcome == Outcome.NON_STRICT
    old = dict(HEADERS, **{"a2a-version": "0.3"})
    assert findings(case_log(with_request(headers=old)), "CLIENT-014")[0].outcome == Outcome.FAIL


def test_014_the_version_as_a_request_parameter_is_a_reading():
    no_version = {k: v for k, v in HEADERS.items() if k != "a2a-version"}
    w = with_request(headers=no_version, url=sent().url + "?A2A-Version=1.0")
    [f] = findings(case_log(w), "CLIENT-014", w)
    assert f.outcome == Outcome.PASS and "request parameter" in f.reading


def test_014_header_names_match_in_any_case():
    headers = {"A2A-VERSION": "1.0", "Accept": "text/event-stream"}
    assert findings(case_log(with_request(headers=headers)), "CLIENT-014")[0].outcome == Outcome.PASS


@pytest.mark.parametrize("accept,outcome", [
    ("text/event-stream", Outcome.PASS), ("application/json, text/event-stream;q=0.9", Outcome.PASS),
    ("*/*", Outcome.NON_STRICT), ("application/json", Outcome.NON_STRICT), (None, Outcome.NON_STRICT)])  # a SHOULD
def test_015_accept_on_a_streaming_request(accept, outcome):
    headers = {k: v for k, v in HEADERS.items() if k != "accept"}
    if accept is not None:
        headers["accept"] = accept
    assert findings(case_log(with_request(headers=headers)), "CLIENT-015")[0].outcome == outcome


def test_015_a_send_message_is_not_exercised():
    w = with_request(method="SendMessage")
    assert findings(case_log(w), "CLIENT-015", w) == []


@pytest.mark.parametrize("ids,outcome", [
    ({"taskId": "task-mine"}, Outcome.FAIL), ({"contextId": "ctx-mine"}, Outcome.NON_STRICT),
    ({"taskId": "", "contextId": None}, Outcome.PASS)])
def test_017_ids_on_the_message_that_starts_the_task(ids, outcome):
    w = with_request(message=user_message(**ids))
    assert findings(case_log(w), "CLIENT-017", w)[0].outcome == outcome


def test_017_an_id_the_case_gave_is_not_blamed():
    w = with_request(message=user_message(contextId="ctx-given"))
    w.context["message"]["contextId"] = "ctx-given"
    assert findings(case_log(w), "CLIENT-017", w)[0].outcome == Outcome.PASS


def test_018_streaming_where_the_card_says_false_fails():
    w = World(card=agent_card(capabilities={"streaming": False}))
    [f] = findings(case_log(w), "CLIENT-018", w)
    assert f.outcome == MISSED["CLIENT-018"] and "capabilities.streaming false" in f.message


def test_018_a_view_broken_by_a_request_the_card_refuses_is_018s():
    w = World(card=agent_card(capabilities={"streaming": False}))
    shown = {"task": None, "artifacts": [], "plan": None, "interaction": None, "statusText": None}
    got = outcomes(case_log(w, shown), "CLIENT-003", "CLIENT-007", "CLIENT-018", w=w)
    assert got == {"CLIENT-018": MISSED["CLIENT-018"]}


def test_018_streaming_without_reading_the_card_fails():
    w = World(requests=[sent()])
    assert findings(case_log(w), "CLIENT-018", w)[0].outcome == MISSED["CLIENT-018"]


def test_018_send_message_where_the_card_streams_is_a_reading():
    w = with_request(method="SendMessage")
    [f] = findings(case_log(w), "CLIENT-018", w)
    assert f.outcome == Outcome.PASS and "SendMessage to an agent that streams" in f.reading


# -- how a difference shows its cause ---------------------------------------------------------------------

@pytest.mark.parametrize("want,got,chars,carried", [
    ("naïve ✓", "nave ✓", True, True), ("naïve ✓", "na\ufffd\ufffdve \ufffd", True, True),
    ("naïve ✓", "naive ✓", False, False), ("abc", "ab", False, True), ("abc", "abcd", False, False),
    ([{"label": "é"}], [{"label": "", "state": "x"}], True, True), ([1, 2, 3], [1, 3], False, True),
    ([1, 2], [1, 2, 3], False, False), ({"a": "x"}, None, False, True), ("x", "x", False, False)])
def test_what_a_difference_shows(want, got, chars, carried):
    assert (characters_lost(want, got), carried_lost(want, got)) == (chars, carried)


# -- CLIENT-009 and a client with no view ------------------------------------------------------------------

CUT = {"cap": "timeout", "figure": 10.3, "limit": 10.3, "awaiting": "the client's final view and its exit"}


def test_009_a_client_cut_at_the_limit_after_the_close_warns_and_the_rest_is_error():
    # CLIENT-009 is a SHOULD with a tolerance: a client still running at the limit is a WARNING, never a FAIL
    w = World()
    got = outcomes(case_log(w, run=client(lines=[], status=None, end=END_TIME_LIMIT, limit=CUT)), *ALL, w=w)
    assert got.pop("CLIENT-009") == Outcome.WARNING
    assert set(got.values()) == {Outcome.ERROR} and set(got) == set(ALL) - {"CLIENT-009"}, got
    [f] = findings(case_log(w, run=client(lines=[], status=None, end=END_TIME_LIMIT, limit=CUT)), "CLIENT-003", w)
    assert "limit" in f.message and "10.3" in f.message


def test_009_cut_before_any_stream_closed_is_error():
    w = World(closed_at=None)
    run = client(lines=[], status=None, end=END_TIME_LIMIT, limit=CUT)
    assert findings(case_log(w, run=run), "CLIENT-009", w)[0].outcome == Outcome.ERROR


def test_009_a_client_stopped_by_the_driver_counts_as_cut():
    w = World()
    run = client(lines=[], status=None, end=END_CLIENT_STOP)
    assert findings(case_log(w, run=run), "CLIENT-009", w)[0].outcome == Outcome.WARNING


def test_009_finishing_at_the_close_passes_and_late_is_a_warning():
    w = World(closed_at=0.3)
    [f] = findings(case_log(w, run=client(w.expected, exited_after=0.5)), "CLIENT-009", w)
    assert f.outcome == Outcome.PASS and f.measured["finish_after_close_s"] == pytest.approx(0.2)
    [f] = findings(case_log(w, run=client(w.expected, exited_after=4.0)), "CLIENT-009", w)
    assert f.outcome == Outcome.WARNING


@pytest.mark.parametrize("run,word", [
    (client(lines=["working…", "done"]), "no JSON object"),
    (client(lines=[], status=None, end=END_ERROR, error="FileNotFoundError: my-client"), "could not be started"),
    (client(lines=['{"a": ' + "[" * 5000 + "]" * 5000 + "}"]), f"{MAX_JSON_DEPTH} levels"),
    (client(lines=["{\"task\": " * 200 + "1" + "}" * 200]), f"{MAX_JSON_DEPTH} levels"),
    (client(lines=["{not json", "[1, 2]", "x" * 200_000]), "no JSON object"),
    (client(lines=["\x00\xff{\ud7ff"]), "no JSON object"),
], ids=["no-json", "not-started", "deep", "deep-object", "garbage", "binary"])
def test_no_view_is_error_for_every_requirement_never_a_harness_fault(run, word):
    w = World()
    found = judge(case_log(w, run=run), ALL, context(*ALL, w=w))
    assert found and {f.outcome for f in found} == {Outcome.ERROR}, found
    assert all(word in f.message and "harness fault" not in f.message for f in found), found[0].message


TRACEBACK = ('Traceback (most recent call last):\n  File "client.py", line 40, in <module>\n    main()\n'
             '  File "client.py", line 31, in take\n    raise ValueError(f"unknown plan format {fmt!r}")\n'
             "ValueError: unknown plan format 'tree'\n")
NODE_STACK = ("file:///c/client.mjs:12\n  const steps = plan.items.map(s => s);\n                         ^\n\n"
              "TypeError: Cannot read properties of undefined (reading 'map')\n    at take (file:///c/client.mjs:12:26)\n"
              + "    at next (file:///c/sdk.mjs:1:1)\n" * 40 + "\nNode.js v22.11.0\n")


@pytest.mark.parametrize("stderr,said", [(TRACEBACK, "ValueError: unknown plan format 'tree'"),
                                         (NODE_STACK, "TypeError: Cannot read properties of undefined")],
                         ids=["python", "node"])
def test_a_crash_on_the_stream_fails_the_requirement_its_input_is_about_quoting_the_error_line(stderr, said):
    # docs/contracts.md §7: judged on an empty view and its stderr; the crash on an unknown plan is CLIENT-010's FAIL (a
    # SHOULD, but nothing of the task was shown at all: no weaker reading), never ERROR
    w = World(frames=variant_frames(), variations=[{"kind": "plans"}])
    named = ("CLIENT-010", "CLIENT-001", "CLIENT-003", "CLIENT-007", "CLIENT-014", "CLIENT-016")
    run = client(view=None, lines=["reading the stream"], status=1, stderr=stderr)
    got = outcomes(case_log(w, run=run), *named, w=w)
    assert got == {"CLIENT-010": Outcome.FAIL, "CLIENT-014": Outcome.PASS, "CLIENT-016": Outcome.PASS}, got
    [f] = findings(case_log(w, run=run), "CLIENT-010", w)
    assert said in f.message and "exit status 1" in f.message and "client.py\", line" not in f.message
    assert "Node.js v22" not in f.message.split(said)[0]


def test_a_crash_before_any_frame_was_served_is_error():
    w = World(requests=[card_sent()])  # it crashed after the card, before it sent anything
    run = client(view=None, lines=[], status=1, stderr=TRACEBACK)
    found = judge(case_log(w, run=run), ALL, context(*ALL, w=w))
    assert found and {f.outcome for f in found} == {Outcome.ERROR}, found
    assert all("status 1" in f.message for f in found)


def test_the_view_is_the_last_json_object_line_or_the_whole_output():
    w = World()
    lines = ["starting", json.dumps({"task": {}}), json.dumps(w.expected), "bye", "[1]"]
    assert findings(case_log(w, run=client(lines=lines)), "CLIENT-007", w)[0].outcome == Outcome.PASS
    pretty = json.dumps(w.expected, indent=2).splitlines()
    assert findings(case_log(w, run=client(lines=pretty)), "CLIENT-007", w)[0].outcome == Outcome.PASS
    run = client(lines=[])
    run.notes["partial_line"] = json.dumps(w.expected)
    assert findings(case_log(w, run=run), "CLIENT-007", w)[0].outcome == Outcome.PASS


def test_a_hostile_view_is_judged_without_raising():
    w = question_world()
    for shown in ({"task": [], "artifacts": "x", "plan": {"steps": 1}, "interaction": 5, "statusText": ["a"]},
                  {"artifacts": [1, None, {"artifactId": {"x": 1}}, {"artifactId": "test-log"}] * 1000},
                  {"plan": [[{}]] * 50, "task": {"id": {"a": [1] * 100}}}):
        found = judge(case_log(w, shown), ALL, context(*ALL, w=w))
        assert all("harness fault" not in f.message for f in found), [f.message for f in found]


def test_a_huge_view_is_judged_in_bounded_time():
    w = World()
    shown = view()
    shown["artifacts"] += [{"artifactId": f"a{i}", "text": "x"} for i in range(50_000)]
    shown["plan"] = [{"label": str(i), "state": "done"} for i in range(50_000)]
    started = time.monotonic()
    got = outcomes(case_log(w, shown), *ALL, w=w)
    assert (got["CLIENT-001"], got["CLIENT-003"]) == (Outcome.FAIL, Outcome.NON_STRICT)
    assert time.monotonic() - started < 20


def test_a_log_without_a_client_case_gives_no_finding():
    log = case_log(World())
    log.notes.clear()
    assert judge(log, ALL) == []


def test_failures_name_the_client_and_the_stream_served():
    [f] = findings(case_log(World(), view(plan=PLAN_1)), "CLIENT-001")
    assert [e["exchange"] for e in f.evidence] == ["client", "sent #2"]
    assert f.evidence[0]["data"].startswith("{") and "progress/v1 ¶5" in f.message


def test_task_frames_of_the_reference_kind_parse():
    # the frames the builders make are the reference's shapes
    assert basic_frames()[0] == {"task": task(TID, CTX, "TASK_STATE_SUBMITTED", ts=TS[0])}


def test_a_case_that_could_not_be_built_is_error_never_a_pass():
    # A real peer's run showed it: a case whose base recording was missing from the wheel reported PASS.
    w = World()
    log = case_log(w)
    log.notes["case_error"] = "no base recording d3-open/ix-question"
    found = judge(log, ALL, context(*ALL, w=w))
    assert found and {f.outcome for f in found} == {Outcome.ERROR}, found
    assert all("could not be built" in f.message and "d3-open" in f.message for f in found)
