"""WIRE-, A2A-CARD- and A2A-STREAM- rules on hand-made frame logs: each rule both ways (a correct log
passes, a broken one gets the right ID, outcome and a message naming what was wrong)."""

from __future__ import annotations

import json

import pytest
from logs import (
    CARD_CACHING,
    CONTEXT_ID,
    TASK_ID,
    agent_card,
    artifact_update,
    broken,
    card_get,
    frame_log,
    rpc_error,
    sse,
    status_update,
    stream_task,
    text_msg,
    unary,
)

from streamcert.catalogue import load_catalogue, load_scenario
from streamcert.framelog import END_CLIENT_STOP, END_TIME_LIMIT, Exchange, FrameLog
from streamcert.outcomes import Outcome
from streamcert.rules import RuleContext, judge, registered_ids

P, F, E, W = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.WARNING
NS, UNS, NT = Outcome.NON_STRICT, Outcome.UNSUPPORTED, Outcome.NOT_TESTED
SUB, WORK, DONE = "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"
EXT = "https://example.com/ext/v1"

WIRE_IDS = [f"WIRE-{n:03d}" for n in range(1, 8)]
CARD_IDS = [f"A2A-CARD-{n:03d}" for n in (1, 2, 3, 4, 5, 7)]
STREAM_IDS = [f"A2A-STREAM-{n:03d}" for n in range(1, 16)]


def outcomes(rid: str, log: FrameLog, ctx: RuleContext | None = None):
    return [f for f in judge(log, [rid], ctx or RuleContext()) if f.req_id == rid]


def one(rid: str, log: FrameLog, expected: Outcome, *words: str, ctx: RuleContext | None = None):
    """Exactly one finding for `rid`, with `expected` outcome and every word in its message."""
    found = outcomes(rid, log, ctx)
    assert len(found) == 1, found
    f = found[0]
    assert f.outcome == expected, f"{rid}: {f.outcome} {f.message}"
    for w in words:
        assert w in f.message, f"{w!r} not in {f.message!r}"
    return f


def worst(rid: str, log: FrameLog, ctx: RuleContext | None = None) -> set[Outcome]:
    return {f.outcome for f in outcomes(rid, log, ctx)}


def test_every_requirement_here_has_a_rule_and_is_in_the_catalogue():
    ids = set(WIRE_IDS + CARD_IDS + STREAM_IDS)
    assert ids <= registered_ids()
    assert ids <= set(load_catalogue())


# -- a correct stream ------------------------------------------------------------------------------------

USER = text_msg("Run the unit tests", role="ROLE_USER", message_id="user-1")
USER_COPY = {**USER, "taskId": TASK_ID, "contextId": CONTEXT_ID}
TS = "2026-10-06T09:00:01.750Z"
SCRIPT_STATUS = "Checking out 9f3c2e1 and starting the suite"
CHUNKS = ["collected 12 items\n", "tests/test_api.py ........\n", "tests/test_refunds.py ...F\n",
          "FAILED tests/test_refunds.py::test_partial_refund - AssertionError\n", "1 failed, 11 passed in 0.42s\n"]
SUMMARY = {"passed": 11, "failed": 1}
FINAL = "1 failed, 11 passed"


def good_items(chunks=CHUNKS, final=FINAL, ts=TS):
    items = [stream_task(state=SUB, ts=ts, history=[USER_COPY]), status_update(WORK, SCRIPT_STATUS, ts=ts)]
    for i, chunk in enumerate(chunks):
        items.append(artifact_update("test-log", text=chunk, append=i > 0, last=i == len(chunks) - 1,
                                     name="test-log.txt" if i == 0 else None))
    items.append(artifact_update("summary", data=SUMMARY, name="summary.json", last=True))
    items.append(status_update(DONE, final, ts=ts))
    return items


def stream(items=None, **kw):
    kw.setdefault("params", {"message": USER})
    return sse("stream", good_items() if items is None else items, **kw)


def good_log(*extra, items=None, card=True):
    exchanges = ([card_get()] if card else []) + [stream(items)] + list(extra)
    return frame_log(*exchanges, scenario="stream-basic")


def basic_ctx():
    return RuleContext(scenario=load_scenario("stream-basic"))


@pytest.mark.parametrize("rid", WIRE_IDS + CARD_IDS + STREAM_IDS)
def test_a_correct_log_passes(rid):
    extra = [unary("get_task", {"id": TASK_ID, "contextId": CONTEXT_ID, "status": {"state": DONE, "timestamp": TS}},
                   rpc_method="GetTask", rpc_id=2, t=5.0)]
    log = good_log(*extra)
    log.get("stream").request_headers["A2A-Extensions"] = EXT
    log.get("stream").response_headers["a2a-extensions"] = EXT
    found = outcomes(rid, log, basic_ctx())
    assert found, f"{rid}: no finding on the correct log"
    assert {f.outcome for f in found} == {P}, [(f.outcome, f.message) for f in found]


# -- WIRE- -------------------------------------------------------------------------------------------------

def test_wire_001_stream_answered_json():
    ex = unary("stream", {"task": {"id": TASK_ID}}, rpc_method="SendStreamingMessage")
    ex.notes["streaming"] = True
    f = one("WIRE-001", frame_log(ex), F, "HTTP 200", "application/json", "First bytes", '{"jsonrpc"')
    assert f.evidence and f.evidence[0]["content_type"] == "application/json"


def test_wire_001_ignores_a_refused_stream_not_expected_to_stream():
    ex = unary("refused_stream", error=rpc_error(-32004), rpc_method="SendStreamingMessage")
    ex.notes["streaming"] = True
    assert outcomes("WIRE-001", frame_log(ex)) == []


def test_wire_002_data_not_json():
    f = one("WIRE-002", frame_log(stream([stream_task(), '{"jsonrpc": "2.0", "id": 1, "res'])), F,
            "not JSON", "frame 2", '{"jsonrpc": "2.0", "id": 1, "res')
    assert f.evidence[0]["frame"] == 2


def test_wire_002_json_without_jsonrpc():
    bare = json.dumps({"id": 1, "result": stream_task()})
    one("WIRE-002", frame_log(stream([stream_task(), bare])), F, "jsonrpc", "missing", "frame 2")


def test_wire_003_wrong_id():
    log = frame_log(stream([{"jsonrpc": "2.0", "id": 7, "result": stream_task()}], rpc_id=1))
    one("WIRE-003", log, F, "sent id 1", "7")


def test_wire_003_string_id_is_not_the_number():
    log = frame_log(unary("get_task", {"id": TASK_ID}, body={"jsonrpc": "2.0", "id": "1", "result": {}}, rpc_id=1))
    one("WIRE-003", log, F, "'1'")


def test_wire_003_parse_error_expects_null():
    # what the request was is read from what was sent (a raw body the client could not mend), not a label
    ex = unary("bad_body", error=rpc_error(-32700), rpc_id=1, rpc_method="GetTask")
    ex.request_body = "{not json"
    one("WIRE-003", frame_log(ex), F, "the request body was not JSON", "carries id 1")
    ok_ex = unary("bad_body", body={"jsonrpc": "2.0", "id": None, "error": rpc_error(-32700)}, rpc_method="GetTask")
    ok_ex.request_body = "{not json"
    one("WIRE-003", frame_log(ok_ex), P)


def test_wire_004_result_and_error():
    both = {"jsonrpc": "2.0", "id": 1, "result": stream_task(), "error": rpc_error(-32603)}
    f = one("WIRE-004", frame_log(stream([both])), F, "result", "error", "exactly one")
    assert "['result', 'error']" in f.message
    neither = unary("get_task", body={"jsonrpc": "2.0", "id": 1})
    one("WIRE-004", frame_log(neither), F, "neither result nor error")


def test_wire_005_html_unary():
    ex = unary("get_task", body=b"<html><body>500 Internal Server Error</body></html>", status=500,
               content_type="text/html", rpc_method="GetTask")
    one("WIRE-005", frame_log(ex), F, "HTTP 500", "text/html", "<html>")


def test_wire_005_json_array_is_not_a_response():
    one("WIRE-005", frame_log(unary("get_task", body=[1, 2])), F, "not a JSON object")


def test_wire_006_invalid_utf8():
    ex = stream()
    ex.notes["invalid_utf8"] = True
    one("WIRE-006", frame_log(ex), F, "not UTF-8")


def test_wire_006_discarded_block_at_close():
    ex = stream(good_items()[:-1])
    ex.discarded = 'data: {"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate"'
    one("WIRE-006", frame_log(ex), F, "without its terminating blank line", "statusUpdate")
    ex.end = END_TIME_LIMIT  # a block cut by the suite itself is not the server's fault
    one("WIRE-006", frame_log(ex), P)


def _ext_log(echo: str | None, card=None):
    ex = stream()
    ex.request_headers["A2A-Extensions"] = EXT
    if echo is not None:
        ex.response_headers["a2a-extensions"] = echo
    return frame_log(card_get(card), ex)


def test_wire_007_echo():
    one("WIRE-007", _ext_log(EXT), P, EXT)
    f = one("WIRE-007", _ext_log(None), W, "is absent", EXT)
    assert f.evidence
    one("WIRE-007", _ext_log("https://other/ext"), W, "https://other/ext", "missing")


def test_wire_007_no_declared_extension_is_unsupported():
    card = agent_card(capabilities={"streaming": True})
    one("WIRE-007", _ext_log(None, card=card), UNS, "declares no extension")


# -- A2A-CARD- ------------------------------------------------------------------------------------------

def test_card_001_not_found():
    f = one("A2A-CARD-001", frame_log(card_get(body=b"Not Found", status=404, content_type="text/plain")), F,
            "HTTP 404", "/.well-known/agent-card.json")
    assert f.evidence[0]["status"] == 404
    # the other card rules name that there is no card rather than passing
    for rid in ("A2A-CARD-002", "A2A-CARD-003", "A2A-CARD-004"):
        one(rid, frame_log(card_get(body=b"Not Found", status=404)), F, "no agent card", "404")


def test_card_001_not_json():
    one("A2A-CARD-001", frame_log(card_get(body=b"<html>agent</html>", content_type="text/html")), F,
        "not JSON", "<html>agent</html>")


def test_card_001_wrong_content_type_and_non_object():
    one("A2A-CARD-001", frame_log(card_get(content_type="text/plain")), F, "text/plain")
    one("A2A-CARD-001", frame_log(card_get([agent_card()])), F, "not an object")


def test_card_001_transport_failure_is_error():
    ex = broken("card")
    ex.method = "GET"
    one("A2A-CARD-001", frame_log(ex), E, "connection refused")
    # no answer is no card to judge: ERROR for the card's content too, never FAIL
    for rid in ("A2A-CARD-002", "A2A-CARD-003", "A2A-CARD-004"):
        one(rid, frame_log(ex), E, "connection refused")


@pytest.mark.parametrize("caching, says", [
    ({}, "no Cache-Control header and no ETag header"),
    ({"cache-control": "no-cache", "etag": '"v1"'}, "has no max-age directive"),
    ({"cache-control": "public, max-age=60"}, "no ETag header"),
    ({"cache-control": "s-maxage=60, must-revalidate", "etag": '"v1"'}, "has no max-age directive"),
])
def test_card_007_caching_headers_missing_is_non_strict_never_fail(caching, says):
    f = one("A2A-CARD-007", frame_log(card_get(caching=caching)), NS, says)
    assert f.evidence


def test_card_007_passes_with_both_and_judges_no_card_that_is_not_there():
    one("A2A-CARD-007", frame_log(card_get(caching={"cache-control": "public, Max-Age=3600", "etag": 'W/"x"'})), P)
    assert outcomes("A2A-CARD-007", frame_log(card_get(body=b"Not Found", status=404, caching={}))) == []


def _revalidated(status: int, caching: dict[str, str] | None = None) -> Exchange:
    """The card asked again with its validator (label card_revalidated): 304 with no body, or the card again."""
    ex = card_get(body=b"" if status == 304 else None, status=status, caching=caching)
    ex.label = "card_revalidated"
    return ex


def test_card_010_revalidation_304_passes_and_a_full_answer_is_non_strict():
    one("A2A-CARD-010", frame_log(card_get(), _revalidated(304)), P, "304 Not Modified")
    f = one("A2A-CARD-010", frame_log(card_get(), _revalidated(200)), NS, "answered HTTP 200, not 304")
    assert "If-None-Match" in f.message and f.evidence
    # the card changed between the two GETs (another ETag): the condition was true, a whole answer is right
    changed = {**CARD_CACHING, "etag": '"another"'}
    one("A2A-CARD-010", frame_log(card_get(), _revalidated(200, changed)), P, "changed between the two GETs")


def test_card_010_no_validator_is_non_strict_and_last_modified_is_a_validator():
    one("A2A-CARD-010", frame_log(card_get(caching={"cache-control": "max-age=60"})), NS,
        "no validator (ETag or Last-Modified)")
    dated = {"last-modified": "Tue, 01 Dec 2026 10:00:00 GMT"}
    one("A2A-CARD-010", frame_log(card_get(caching=dated), _revalidated(304, dated)), P, "If-Modified-Since")
    assert outcomes("A2A-CARD-010", frame_log(card_get(body=b"Not Found", status=404, caching={}))) == []


def test_card_010_not_asked_again_is_not_tested_and_no_answer_is_error():
    one("A2A-CARD-010", frame_log(card_get()), NT, "not asked for again")
    lost = _revalidated(200)
    lost.status, lost.error, lost.end, lost.chunks = None, "connection refused", "error", []
    one("A2A-CARD-010", frame_log(card_get(), lost), E, "connection refused")


def test_card_002_missing_field():
    card = agent_card()
    del card["version"]
    one("A2A-CARD-002", frame_log(card_get(card)), F, "version is missing")
    one("A2A-CARD-002", frame_log(card_get(agent_card(name=5))), F, "name is int, not string")
    one("A2A-CARD-002", frame_log(card_get(agent_card(skills=[{"id": "s", "name": "n", "description": "d"}]))), F,
        "skills[0].tags is missing")


def test_card_003_no_1_0_interface():
    # any binding will do (§5.2): a gRPC-only or HTTP+JSON-only agent, or a custom binding named by a URI (§5.8)
    for binding in ("GRPC", "HTTP+JSON", "https://example.com/bindings/websocket/v1"):
        only = agent_card(supportedInterfaces=[{"url": RPC, "protocolBinding": binding, "protocolVersion": "1.0"}])
        one("A2A-CARD-003", frame_log(card_get(only)), P, f"{binding} interface")
    old = agent_card(supportedInterfaces=[{"url": RPC, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
                                          {"url": RPC, "protocolBinding": "GRPC", "protocolVersion": "0.3"}])
    one("A2A-CARD-003", frame_log(card_get(old)), F, "no interface has protocolVersion 1.0")
    bad = agent_card(supportedInterfaces=[{"url": RPC, "protocolBinding": "SOAP", "protocolVersion": "1.0"}])
    one("A2A-CARD-003", frame_log(card_get(bad)), F, "'SOAP'")
    one("A2A-CARD-003", frame_log(card_get(agent_card(supportedInterfaces=[{"url": RPC}]))), F,
        "lacks protocolBinding, protocolVersion")


RPC = "http://127.0.0.1:41241/a2a/jsonrpc"


def test_card_004_extension_without_uri():
    card = agent_card(capabilities={"extensions": [{"description": "x", "required": False}]})
    one("A2A-CARD-004", frame_log(card_get(card)), F, "extensions[0] has no uri")
    card = agent_card(capabilities={"extensions": [{"uri": EXT, "required": "false"}]})
    one("A2A-CARD-004", frame_log(card_get(card)), F, "required is str, not boolean")
    one("A2A-CARD-004", frame_log(card_get(agent_card(capabilities={}))), P, "no extensions")


BEARER = {"httpAuthSecurityScheme": {"scheme": "Bearer"}}
OAUTH = {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": "https://id.example.com/token",
                                                                  "scopes": {"a2a": "call the agent"}}}}}


def test_card_005_protojson_passes_with_oneofs_and_unknown_members():
    card = agent_card(securitySchemes={"bearer": BEARER, "oauth": OAUTH}, iconUrl="https://example.com/i.png",
                      security=[{"oauth": ["a2a"]}], vendorExtra={"any_thing": 1})
    one("A2A-CARD-005", frame_log(card_get(card)), P, "3 oneof object(s)")  # two security schemes, one flows object
    one("A2A-CARD-005", frame_log(card_get(agent_card())), P, "ProtoJSON name")


@pytest.mark.parametrize("schemes, says", [
    ({"bearer": {"scheme": {"http_auth_security_scheme": {"scheme": "Bearer"}}}},
     "securitySchemes['bearer'] holds 0 of its oneof members (none)"),
    ({"bearer": {"Scheme": {"HttpAuthSecurityScheme": {"scheme": "Bearer"}}}}, "it holds Scheme"),
    ({"bearer": {"type": "http", "scheme": "bearer"}}, "it holds type, scheme"),
    ({"both": {**BEARER, "mtlsSecurityScheme": {}}}, "holds 2 of its oneof members"),
    ({"oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {"tokenUrl": "t", "scopes": {}},
                                                   "deviceCode": {"tokenUrl": "t"}}}}},
     "oauth2SecurityScheme.flows holds 2"),
    ({"bearer": {"http_auth_security_scheme": {"scheme": "Bearer"}}}, "is the member httpAuthSecurityScheme"),
])
def test_card_005_a_oneof_not_as_protojson_writes_it_fails(schemes, says):
    one("A2A-CARD-005", frame_log(card_get(agent_card(securitySchemes=schemes))), F, says)


def test_card_005_a_member_spelt_otherwise_fails():
    card = agent_card(default_input_modes=["text/plain"])
    one("A2A-CARD-005", frame_log(card_get(card)), F, "card.default_input_modes is the member defaultInputModes")
    card = agent_card(capabilities={"streaming": True, "push_notifications": False})
    one("A2A-CARD-005", frame_log(card_get(card)), F, "card.capabilities.push_notifications")
    card = agent_card(skills=[{"id": "s", "name": "n", "description": "d", "tags": [], "InputModes": []}])
    one("A2A-CARD-005", frame_log(card_get(card)), F, "card.skills[0].InputModes")
    one("A2A-CARD-005", frame_log(card_get(body=b"Not Found", status=404)), F, "no agent card")


# -- A2A-STREAM- ---------------------------------------------------------------------------------------

def test_stream_001_status_first():
    items = [status_update(SUB)] + good_items()[1:]
    one("A2A-STREAM-001", good_log(items=items), F, "frame 1 is statusUpdate", "not the Task")
    one("A2A-STREAM-001", good_log(items=[]), F, "no data event")


def test_stream_002_ids_missing():
    items = [stream_task(tid="", ctx="", history=[USER])] + good_items()[1:]
    one("A2A-STREAM-002", good_log(items=items), F, "no id and no contextId")
    items = [{"task": {"status": {"state": SUB}}}] + good_items()[1:]
    one("A2A-STREAM-002", good_log(items=items), F, "id", "contextId")


def test_stream_003_history_ids_wrong():
    copy = {**USER, "taskId": "other-task"}  # contextId absent
    items = [stream_task(history=[copy])] + good_items()[1:]
    f = one("A2A-STREAM-003", good_log(items=items), F, "taskId 'other-task'", "contextId None")
    assert "task-1" in f.message


def test_stream_003_history_absent_is_non_strict():
    items = [stream_task()] + good_items()[1:]
    f = one("A2A-STREAM-003", good_log(items=items), NS, "history")
    assert f.reading == "history omitted"


def test_stream_004_wrong_context():
    items = good_items()
    items[1] = status_update(WORK, SCRIPT_STATUS, ctx="ctx-other")
    one("A2A-STREAM-004", good_log(items=items), F, "'ctx-other'", "ctx-1")
    items = good_items()
    items[2] = artifact_update("test-log", text=CHUNKS[0], tid="task-other")
    one("A2A-STREAM-004", good_log(items=items), F, "artifactUpdate names task 'task-other'")


def test_stream_005_two_kinds():
    items = good_items()
    items[2] = {**items[2], **status_update(WORK)}
    one("A2A-STREAM-005", good_log(items=items), F, "['statusUpdate', 'artifactUpdate']", "exactly one")
    items = good_items()
    items[1] = {"nothing": {}}
    one("A2A-STREAM-005", good_log(items=items), F, "none")


def test_stream_006_append_to_unknown_artifact():
    items = good_items()
    items[2] = artifact_update("test-log", text=CHUNKS[0], append=True)
    f = one("A2A-STREAM-006", good_log(items=items), F, "append: true", "'test-log'", "nor an earlier chunk")
    assert f.evidence[0]["frame"] == 3


def test_stream_007_append_after_last_chunk():
    items = good_items()
    items.insert(-1, artifact_update("test-log", text="more\n", append=True))
    one("A2A-STREAM-007", good_log(items=items), F, "after its lastChunk", "'test-log'")
    # 006 is fine with it: the artifact was started
    one("A2A-STREAM-006", good_log(items=items), P)


def test_stream_008_event_after_terminal():
    items = good_items() + [artifact_update("late", text="x", last=True)]
    f = one("A2A-STREAM-008", good_log(items=items), F, "1 event(s) after the terminal TASK_STATE_COMPLETED",
            "(frame 9)")
    assert [e.get("note") for e in f.evidence] == ["terminal", "after terminal"]


def test_stream_009_closed_without_terminal():
    one("A2A-STREAM-009", good_log(items=good_items()[:-1]), F, "closed the stream", "TASK_STATE_WORKING",
        "without a terminal state")


def test_stream_009_cut_at_time_limit_without_terminal():
    ex = stream(good_items()[:-1], end=END_TIME_LIMIT)
    ex.notes["limit_s"] = 5.0
    f = one("A2A-STREAM-009", frame_log(ex), F, "per-stream limit", "TASK_STATE_WORKING")
    assert f.measured["limit_s"] == 5.0 and f.measured["open_s"] > 0


def test_stream_009_interrupted_and_client_stop_are_not_judged_here():
    items = good_items()[:-1] + [status_update("TASK_STATE_INPUT_REQUIRED", "which branch?")]
    for log in (good_log(items=items), frame_log(stream(good_items()[:-1], end=END_CLIENT_STOP))):
        one("A2A-STREAM-009", log, NT, "stopped by the driver on purpose or closed at an interrupted state")


def test_stream_010_close_delay_over_tolerance_warns():
    ex = stream()
    ex.t_end = ex.events[-1].t + 3.5
    f = one("A2A-STREAM-010", frame_log(ex), W, "3.50 s", "tolerance of 2 s")
    assert f.measured == {"close_after_terminal_s": 3.5, "tolerance_s": 2.0}
    # a declared tolerance override moves the line
    ctx = RuleContext(options={"tolerances": {"A2A-STREAM-010.close_after_terminal_s": 5}})
    one("A2A-STREAM-010", frame_log(ex), P, ctx=ctx)


def test_stream_010_never_closed_fails():
    ex = stream(end=END_TIME_LIMIT)
    ex.t_end = ex.events[-1].t + 5.0
    f = one("A2A-STREAM-010", frame_log(ex), F, "still open 5.00 s", "per-stream limit")
    assert f.measured["close_after_terminal_s"] == 5.0


def _with_ts(ts):
    return good_log(items=good_items(ts=ts))


def test_stream_011_offset_timestamp():
    one("A2A-STREAM-011", _with_ts("2026-10-06T09:00:01.750+00:00"), F, "'2026-10-06T09:00:01.750+00:00'",
        "ending in Z")


def test_stream_011_timestamp_in_a_unary_result():
    get = unary("get_task", {"id": TASK_ID, "contextId": CONTEXT_ID,
                             "status": {"state": DONE, "timestamp": "2026-10-06 09:00:01"}})
    f = one("A2A-STREAM-011", good_log(get), F, "1 of", "'2026-10-06 09:00:01'", "get_task")
    assert f.evidence[0]["exchange"] == "get_task"


def test_stream_012_no_millis_warns():
    one("A2A-STREAM-012", _with_ts("2026-10-06T09:00:01Z"), W, "no milliseconds", "'2026-10-06T09:00:01Z'")
    one("A2A-STREAM-011", _with_ts("2026-10-06T09:00:01Z"), P)


def test_stream_012_six_digits_non_strict():
    f = one("A2A-STREAM-012", _with_ts("2026-10-06T09:00:01.750123Z"), NS, "6 fraction digits")
    assert f.reading == "finer than milliseconds"


def test_stream_012_no_timestamps_not_tested_saying_why():
    for rid in ("A2A-STREAM-011", "A2A-STREAM-012"):
        one(rid, good_log(items=good_items(ts=None)), NT, "no status carried a timestamp")


def test_stream_013_v03_state_name():
    items = good_items()
    items[-1]["statusUpdate"]["status"]["state"] = "completed"
    one("A2A-STREAM-013", good_log(items=items), F, "state 'completed'", "frame 9:")


def test_stream_013_v03_role_and_part_kind():
    items = good_items()
    items[1]["statusUpdate"]["status"]["message"]["role"] = "agent"
    one("A2A-STREAM-013", good_log(items=items), F, "role 'agent'")
    items = good_items()
    items[2]["artifactUpdate"]["artifact"]["parts"][0]["kind"] = "text"
    one("A2A-STREAM-013", good_log(items=items), F, "parts[0] has a 0.3 'kind' field")
    items = good_items()
    items[1]["statusUpdate"]["status"]["message"]["kind"] = "message"
    one("A2A-STREAM-013", good_log(items=items), F, "status.message has a 0.3 'kind' field")


def test_stream_014_script_mismatch():
    chunks = CHUNKS[:2] + ["tests/test_refunds.py ....\n"] + CHUNKS[3:]
    f = one("A2A-STREAM-014", good_log(items=good_items(chunks=chunks)), F, "artifact 'test-log' joins to",
            "test_refunds.py ....", ctx=basic_ctx())
    assert "does not carry what the script produced" in f.message


def test_stream_014_dropped_chunk_and_final_text():
    one("A2A-STREAM-014", good_log(items=good_items(chunks=CHUNKS[:2] + CHUNKS[3:])), F, "4 chunk(s)",
        ctx=basic_ctx())
    one("A2A-STREAM-014", good_log(items=good_items(final="all passed")), F, "'all passed'", "'1 failed, 11 passed'",
        ctx=basic_ctx())


def test_stream_014_script_from_the_log_and_no_script():
    log = good_log(items=good_items(final="other"))
    log.script = load_scenario("stream-basic").script
    one("A2A-STREAM-014", log, F, "'other'")
    one("A2A-STREAM-014", good_log(), NT, "no test-agent script")  # no script: nothing to compare, said so


def test_stream_015_error_event():
    err = {"jsonrpc": "2.0", "id": 1, "error": rpc_error(-32004, "streaming not supported")}
    one("A2A-STREAM-015", good_log(items=[err]), F, "first event is an error", "streaming not supported")


def test_stream_015_refused_with_json_and_transport_error():
    ex = unary("stream", error=rpc_error(-32004), rpc_method="SendStreamingMessage")
    one("A2A-STREAM-015", frame_log(ex), F, "instead of a stream", "application/json")
    one("A2A-STREAM-015", frame_log(broken("stream", rpc_method="SendStreamingMessage")), E, "connection refused")


def test_stream_rules_on_a_transport_failure_are_error_not_pass():
    log = frame_log(broken("stream", rpc_method="SendStreamingMessage"))
    for rid in ("A2A-STREAM-002", "A2A-STREAM-003", "A2A-STREAM-014", "A2A-STREAM-015"):
        assert worst(rid, log, basic_ctx()) == {E}, rid


def test_an_unreachable_target_is_error_for_every_requirement_never_unsupported():
    ex = broken("card")
    ex.method = "GET"
    log = frame_log(ex, notes={"unreachable": "GET http://127.0.0.1:9/.well-known/agent-card.json: refused",
                               "unsupported": {"A2A-STREAM-001": "the card does not declare streaming"}})
    found = judge(log, STREAM_IDS + WIRE_IDS, basic_ctx())
    assert {f.req_id for f in found} == set(STREAM_IDS + WIRE_IDS)
    assert {f.outcome for f in found} == {E}
    assert all("did not answer" in f.message and "refused" in f.message for f in found)


NO_CHUNKS = [stream_task(state=SUB), status_update(WORK), status_update(DONE)]


@pytest.mark.parametrize(("rid", "log", "why"), [
    ("A2A-STREAM-006", lambda: good_log(items=NO_CHUNKS), "no task stream carried an artifact chunk"),
    ("A2A-STREAM-007", lambda: good_log(items=NO_CHUNKS), "no task stream carried an artifact chunk"),
    ("A2A-STREAM-008", lambda: good_log(items=NO_CHUNKS[:2], card=False), "no task stream reached a terminal state"),
    ("A2A-STREAM-017", lambda: good_log(items=NO_CHUNKS[:1]), "no task stream carried a status update"),
    ("A2A-STREAM-004", lambda: good_log(items=NO_CHUNKS[1:]), "no task stream began with a Task"),
    ("A2A-STREAM-001", lambda: frame_log(card_get()), "no task stream"),
])
def test_a_rule_with_nothing_to_judge_says_what_was_missing(rid, log, why):
    f = one(rid, log(), NT, why)
    assert "no test produced a finding" not in f.message


# -- WIRE-010: ProtoJSON names ---------------------------------------------------------------------------------

def _listed(**task_members):
    t = {"id": TASK_ID, "contextId": CONTEXT_ID, "status": {"state": DONE, "message": text_msg("done")},
         "metadata": {"snake_key": 1}, **task_members}
    return {"tasks": [t], "nextPageToken": "", "pageSize": 50, "totalSize": 1}


def test_wire_010_lower_camel_case_names_pass_whatever_metadata_and_unknown_members_hold():
    events = [stream_task(), artifact_update("a", data={"snake_case": True}), status_update(DONE)]
    log = frame_log(sse("stream", events), unary("list", _listed(extra_member=1), rpc_method="ListTasks"))
    one("WIRE-010", log, P, "4 answer(s) and frame(s), every member under its ProtoJSON name")


def test_wire_010_snake_case_members_fail_with_their_paths():
    answer = _listed()
    answer["next_page_token"] = answer.pop("nextPageToken")
    answer["tasks"][0]["context_id"] = answer["tasks"][0].pop("contextId")
    answer["tasks"][0]["status"]["message"]["message_id"] = answer["tasks"][0]["status"]["message"].pop("messageId")
    f = one("WIRE-010", frame_log(unary("list", answer, rpc_method="ListTasks")), F,
            "list (ListTasks)", "ListTasksResponse.next_page_token (ProtoJSON writes nextPageToken)",
            "ListTasksResponse.tasks[0].context_id (ProtoJSON writes contextId)",
            "ListTasksResponse.tasks[0].status.message.message_id (ProtoJSON writes messageId)")
    assert f.evidence


def test_wire_010_a_stream_frame_in_snake_case_fails_naming_its_frame():
    update = status_update(DONE)
    update["status_update"] = update.pop("statusUpdate")
    f = one("WIRE-010", frame_log(sse("stream", [stream_task(), update])), F, "stream (SendStreamingMessage) frame 2",
            "StreamResponse.status_update (ProtoJSON writes statusUpdate)")
    assert f.evidence[0]["frame"] == 2


def test_stream_014_quotes_what_the_agent_said_before_it_builds_a_problem():
    """Issue 25: a status text of 64 MiB that does not match the script was formatted whole (its repr, the problem,
    the joined message: 324–392 MiB at the peak) before the finding cut it. A2A-STREAM-014 quotes what the agent said
    (limits.bounded_value) before it builds a problem: judging it costs the view's parse of the text, not copies."""
    import tracemalloc

    said = "s" * (4 << 20)
    items = good_items(final=said)
    items[1] = status_update(WORK, said, ts=TS)
    log = good_log(items=items)
    for ex in log.exchanges:
        ex.chunks = []  # a capture keeps a large stream's bytes in a file (framelog.Spool), not in memory
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        f = one("A2A-STREAM-014", log, F, ctx=basic_ctx())
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    # the view holds each text parsed once (two statuses and the final one's copy in TaskStream: about 3 × 4 MiB)
    assert peak < 4 * len(said), f"{peak / len(said):.1f} times the text at the peak"
    assert "no WORKING status says" in f.message and "the stream ends in" in f.message  # both problems, each cut
    assert "…[cut: 4194304 characters" in f.message and len(f.message) < 8 * 1024
