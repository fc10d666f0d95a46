"""Root causes (report/roots.py) both ways, and the evidence they group on (rules/engine.py ex_evidence: the
first frame of a stream that could not be read)."""

from __future__ import annotations

import json

from logs import frame_log
from test_rules_stream_wire_card import basic_ctx, good_items, stream

from streamcert.framelog import Chunk
from streamcert.outcomes import Outcome
from streamcert.report.aggregate import Aggregator
from streamcert.report.roots import frames_first, group, names_frame
from streamcert.rules import judge
from streamcert.rules.engine import NOT_A_RESPONSE, NOT_UTF8, ex_evidence, unread_frame

T1, T2 = "suite/test_a.py::test_one", "suite/test_a.py::test_two"


def frame(n: int, exchange: str = "stream", test: str = T1, **kw) -> dict:
    return {"exchange": exchange, "frame": n, "t": 0.01 * n, "data": "{}", "test": test, **kw}


def meta(exchange: str = "stream", test: str = T1, **kw) -> dict:
    return {"exchange": exchange, "request": "SendStreamingMessage", "status": 200,
            "content_type": "text/event-stream", "test": test, **kw}


def failure(req_id: str, *evidence: dict, status: str = "FAIL") -> dict:
    return {"id": req_id, "status": status, "level": "MUST", "title": f"title of {req_id}", "evidence": list(evidence)}


def shape(roots) -> list[list[str]]:
    return [root.ids for root in roots]


# -- grouping --------------------------------------------------------------------------------------------

def test_two_failures_on_one_first_frame_share_a_root_under_the_catalogue_first():
    wire = failure("WIRE-002", frame(2, note="data is not JSON"))
    content = failure("A2A-STREAM-014", meta(frame=2, t=0.02, data="{", unread="data is not JSON"))
    roots = group([wire, content])
    assert shape(roots) == [["WIRE-002", "A2A-STREAM-014"]]
    root = roots[0]
    assert root.head is wire and root.members == [content]
    assert root.frame is wire["evidence"][0]
    assert content["status"] == "FAIL"  # presentation only: each keeps its own status


def test_different_frames_exchanges_or_tests_do_not_group():
    entries = [failure("WIRE-002", frame(2)),
               failure("WIRE-003", frame(3)),  # another frame
               failure("WIRE-004", frame(2, exchange="subscribe")),  # the same number on another exchange
               failure("A2A-STREAM-001", frame(2, test=T2))]  # the same frame of another test's run
    assert shape(group(entries)) == [["WIRE-002"], ["WIRE-003"], ["WIRE-004"], ["A2A-STREAM-001"]]


def test_only_each_tests_first_frame_counts():
    # A2A-STREAM-002 blames frame 5 after frame 2; A2A-STREAM-003 blames frame 5 first: not the same first frame.
    entries = [failure("A2A-STREAM-002", frame(2), frame(5)), failure("A2A-STREAM-003", frame(5))]
    assert shape(group(entries)) == [["A2A-STREAM-002"], ["A2A-STREAM-003"]]
    # an exchange's metadata before the frame does not hide it
    entries = [failure("WIRE-002", meta(), frame(4)), failure("WIRE-004", frame(4))]
    assert shape(group(entries)) == [["WIRE-002", "WIRE-004"]]


def test_chains_merge_transitively():
    a = failure("WIRE-002", frame(2))
    b = failure("A2A-STREAM-001", frame(3, test=T2))
    c = failure("A2A-STREAM-014", frame(2), frame(3, test=T2))  # ties a (test one) to b (test two)
    roots = group([a, b, c])
    assert shape(roots) == [["WIRE-002", "A2A-STREAM-001", "A2A-STREAM-014"]]
    assert roots[0].frame is a["evidence"][0]


def test_no_frame_is_a_root_of_its_own():
    entries = [failure("A2A-TASK-010", meta(exchange="cancel")), failure("A2A-TASK-011", meta(exchange="cancel")),
               failure("WIRE-001", status="ERROR"), failure("WIRE-002", frame(1, frame=True))]
    roots = group(entries)
    assert shape(roots) == [["A2A-TASK-010"], ["A2A-TASK-011"], ["WIRE-001"], ["WIRE-002"]]
    assert all(root.frame is None and not root.members for root in roots)


def test_roots_come_in_the_order_of_their_heads():
    entries = [failure("WIRE-001", meta()), failure("WIRE-002", frame(7)), failure("A2A-STREAM-001"),
               failure("A2A-STREAM-009", frame(7))]
    assert shape(group(entries)) == [["WIRE-001"], ["WIRE-002", "A2A-STREAM-009"], ["A2A-STREAM-001"]]
    assert group([]) == []


def test_frames_first_keeps_each_part_in_order():
    items = [meta(exchange="a"), frame(3), meta(exchange="b"), meta(frame=2, unread="x"), {"frame": True}]
    assert [names_frame(i) for i in items] == [False, True, False, True, False]
    assert frames_first(items) == [items[1], items[3], items[0], items[2], items[4]]


# -- the evidence roots group on -------------------------------------------------------------------------

def test_a_content_finding_cites_the_frame_it_could_not_read_and_shares_its_root():
    items = good_items()
    items[1] = '{"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "task-1", "sta'  # cut short
    log = frame_log(stream(items), scenario="stream-basic")
    findings = judge(log, ["WIRE-002", "A2A-STREAM-014"], basic_ctx())
    by_id = {f.req_id: f for f in findings if f.outcome is Outcome.FAIL}
    assert set(by_id) == {"WIRE-002", "A2A-STREAM-014"}
    cited = by_id["A2A-STREAM-014"].evidence[0]
    assert (cited["exchange"], cited["frame"], cited["data"]) == ("stream", 2, items[1])
    assert cited["unread"].startswith("data is not JSON (") and cited["request"] == "SendStreamingMessage"
    assert "frame 2" not in by_id["A2A-STREAM-014"].message  # the message is the rule's, as before

    agg = Aggregator()
    agg.add(T1, findings)
    results = agg.results()
    entries = [{"id": rid, "status": results[rid].outcome.value, "evidence": list(results[rid].evidence)}
               for rid in ("WIRE-002", "A2A-STREAM-014")]
    assert shape(group(entries)) == [["WIRE-002", "A2A-STREAM-014"]]


def test_a_stream_without_an_unreadable_frame_is_cited_as_before():
    ex = stream()
    assert unread_frame(ex) is None
    assert set(ex_evidence(ex)) == {"exchange", "request", "sent", "status", "content_type"}


def test_the_request_sent_is_quoted_beside_the_answer():
    ex = stream()
    assert json.loads(ex_evidence(ex)["sent"]) == ex.request_body  # what the suite sent, as it went
    ex.request_body = {"params": {"message": {"parts": [{"text": "x" * 5000}]}}}
    sent = ex_evidence(ex)["sent"]
    assert len(sent) < 500 and sent.endswith(" chars)")  # quoted, never copied whole
    ex.request_body = None  # a GET sends nothing: nothing is shown
    assert "sent" not in ex_evidence(ex)


def not_utf8_in_frame_3(ex):
    """`ex` with frame 1 quoting U+FFFD itself (sent as UTF-8) and frame 3 holding a byte that is not UTF-8
    (decoded as U+FFFD), as the capture leaves them."""
    first, third = ex.events[0], ex.events[2]
    first.data = first.data.replace('"TASK_STATE_SUBMITTED"', '"TASK_STATE_SUBMITTED\ufffd"')
    ex.chunks[0] = Chunk(ex.chunks[0].t, f"data: {first.data}\n\n".encode())
    third.data = third.data.replace("collected", "\ufffdcollected")
    raw = f"data: {third.data}\n\n".encode().replace("\ufffd".encode(), b"\xff")
    ex.chunks[2] = Chunk(ex.chunks[2].t, raw)
    ex.notes["invalid_utf8"] = True
    return ex


def test_the_frame_holding_the_first_byte_that_is_not_utf8_is_cited():
    ex = not_utf8_in_frame_3(stream())
    event, why = unread_frame(ex)
    assert (event is ex.events[2], why) == (True, NOT_UTF8)
    item = ex_evidence(ex, "bytes that are not UTF-8")
    assert (item["frame"], item["unread"], item["note"]) == (3, NOT_UTF8, "bytes that are not UTF-8")


def test_the_first_unreadable_frame_is_cited_whatever_made_it_so():
    items = good_items()
    items[4] = "{"  # not JSON, after the frame that is not UTF-8
    assert unread_frame(not_utf8_in_frame_3(stream(items)))[0].index == 2
    items[1] = "{"  # not JSON, before it
    event, why = unread_frame(not_utf8_in_frame_3(stream(items)))
    assert (event.index, why.startswith("data is not JSON")) == (1, True)


def test_a_frame_of_a_json_rpc_stream_that_is_no_response_is_cited():
    items = good_items()
    items[2] = json.dumps(items[2])  # the StreamResponse without its envelope: JSON, but no result
    ex = stream(items)
    assert (unread_frame(ex)[0].index, unread_frame(ex)[1]) == (2, NOT_A_RESPONSE)
    error = stream([good_items()[0], {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "x"}}])
    assert unread_frame(error) is None  # an error is a response its rules read
    # a stream that answers no JSON-RPC request (a progress stream) carries bare objects
    bare = stream([{"progress": {"phase": "queued"}}])
    bare.rpc_method = None
    bare.events[0].data = json.dumps({"progress": {"phase": "queued"}})
    assert unread_frame(bare) is None


def test_an_answer_that_is_not_a_stream_names_no_frame():
    ex = stream(["not json"])
    ex.response_headers["content-type"] = "application/json"
    assert unread_frame(ex) is None and "frame" not in ex_evidence(ex)


# -- a card that could not be read ---------------------------------------------------------------------------

def card(status: int = 404, body: str = "Not Found", **kw) -> dict:
    return meta("card", request="GET", status=status, content_type="text/plain", body=body, **kw)


def test_a_card_that_could_not_be_read_heads_every_failure_on_its_agent_first():
    entries = [failure("WIRE-005", meta("send")), failure("A2A-CARD-001", card()),
               failure("A2A-CARD-002", card()), failure("PROG-001", meta("p")), failure("PLAN-001", meta("plan"))]
    roots = group(entries, "http://127.0.0.1:9")
    assert shape(roots) == [["A2A-CARD-001", "WIRE-005", "A2A-CARD-002", "PLAN-001"], ["PROG-001"]]
    assert roots[0].cause == ("the agent card could not be read: GET http://127.0.0.1:9/.well-known/agent-card.json "
                              "answered HTTP 404")
    assert "/.well-known/agent-card.json" in roots[0].fix and "--url" in roots[0].fix
    assert roots[1].cause is None


def test_a_url_with_a_path_is_told_to_try_its_origin():
    roots = group([failure("A2A-CARD-001", card())], "http://127.0.0.1:9/a2a/v1?key=K")
    assert "/a2a/v1/.well-known/agent-card.json" in roots[0].cause
    assert "try --url http://127.0.0.1:9?key=K" in roots[0].fix


def test_a_card_that_was_read_is_no_root_of_its_own():
    wrong_type = card(200, '{"name": "x"}', )  # read, but served as text/plain: A2A-CARD-001 fails on its own
    cut = card(200, '{"name": "' + "x" * 60 + "… (9000 bytes)")  # quoted in part: not known to be unreadable
    for item in (wrong_type, cut):
        roots = group([failure("A2A-CARD-001", item), failure("WIRE-005", meta("send"))], "http://127.0.0.1:9")
        assert shape(roots) == [["A2A-CARD-001"], ["WIRE-005"]] and roots[0].cause is None
    not_json = card(200, "<html>hello</html>")
    assert group([failure("A2A-CARD-001", not_json)])[0].cause.endswith("answered HTTP 200 '<html>hello</html>'")
    no_answer = {"exchange": "card", "request": "GET", "status": None, "error": "ConnectError"}
    assert "no answer (ConnectError)" in group([failure("A2A-CARD-001", no_answer, status="ERROR")])[0].cause
