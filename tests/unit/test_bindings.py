"""The binding layer: one reading of every binding's answers, the same rule over each, which bindings a run
certifies, and the card's interfaces answering over theirs (A2A-CARD-006)."""

from __future__ import annotations

import json

import pytest
from logs import (
    agent_card,
    card_get,
    error_info,
    frame_log,
    grpc_call,
    rest,
    rest_sse,
    rpc_error,
    sse,
    status_body,
    status_update,
    stream_task,
    task,
    unary,
)

from streamcert.drivers import binding_choice
from streamcert.drivers.binding_choice import choose
from streamcert.framelog import END_ERROR, Exchange, FrameLog
from streamcert.outcomes import Outcome
from streamcert.protocols import a2a, bindings
from streamcert.recordings.cassette import find, path_for
from streamcert.rules import judge

UNKNOWN = {"id": "no-such-task"}


def card_with(*interfaces: tuple[str, str]) -> dict:
    return agent_card(supportedInterfaces=[{"url": url, "protocolBinding": name, "protocolVersion": "1.0"}
                                           for name, url in interfaces])


# -- one reading of every binding -------------------------------------------------------------------------

@pytest.mark.parametrize("ex", [
    unary("get", error=rpc_error(a2a.TASK_NOT_FOUND)),
    rest("get", a2a.GET_TASK, status_body(a2a.TASK_NOT_FOUND), status=404, params=UNKNOWN),
    grpc_call("get", a2a.GET_TASK, status=("NOT_FOUND", "no such task", error_info())),
], ids=["jsonrpc", "http-json", "grpc"])
def test_task_not_found_reads_the_same_on_every_binding(ex: Exchange) -> None:
    read = bindings.read_answer(ex)
    assert read.result is None and read.error["code"] == a2a.TASK_NOT_FOUND


@pytest.mark.parametrize("ex", [
    unary("get", task()),
    rest("get", a2a.GET_TASK, task(), params=UNKNOWN),
    grpc_call("get", a2a.GET_TASK, [task()]),
], ids=["jsonrpc", "http-json", "grpc"])
def test_a_result_reads_the_same_on_every_binding(ex: Exchange) -> None:
    read = bindings.read_answer(ex)
    assert read.error is None and read.result["id"] == task()["id"]


def test_an_error_without_an_a2a_error_info_is_the_generic_error_of_its_status() -> None:
    assert bindings.read_answer(rest("bad", a2a.SEND_MESSAGE, {"error": {"code": 400, "message": "no"}},
                                     status=400)).error["code"] == a2a.INVALID_PARAMS
    assert bindings.read_answer(grpc_call("bad", status=("UNIMPLEMENTED", "", []))).error["code"] == \
        a2a.METHOD_NOT_FOUND
    assert bindings.read_answer(grpc_call("bad", status=("DATA_LOSS", "", []))).error["code"] is None


def test_a_stream_frame_is_the_stream_response_itself_except_on_json_rpc() -> None:
    frame = status_update(a2a.WORKING)
    assert bindings.frame_answer(bindings.HTTP_JSON, frame) == (frame, None)
    assert bindings.frame_answer(bindings.GRPC, frame) == (frame, None)
    assert bindings.frame_answer(bindings.JSONRPC, frame) == (None, None)  # no envelope: no result
    assert bindings.frame_answer(bindings.JSONRPC, {"jsonrpc": "2.0", "id": 1, "result": frame}) == (frame, None)


def test_the_routes_of_section_11_3() -> None:
    assert bindings.rest_route(a2a.SEND_MESSAGE, {"message": {}}) == ("POST", "/message:send", {}, {"message": {}})
    assert bindings.rest_route(a2a.GET_TASK, {"id": "a/b", "historyLength": 0}) == \
        ("GET", "/tasks/a%2Fb", {"historyLength": "0"}, None)
    assert bindings.rest_route(a2a.LIST_TASKS, {"includeArtifacts": True, "pageSize": 2}) == \
        ("GET", "/tasks", {"includeArtifacts": "true", "pageSize": "2"}, None)
    assert bindings.rest_route(a2a.CANCEL_TASK, {"id": "t"}) == ("POST", "/tasks/t:cancel", {}, {})
    assert bindings.rest_route(a2a.SUBSCRIBE_TO_TASK, {"id": "t"})[:2] == ("POST", "/tasks/t:subscribe")
    assert bindings.grpc_path(a2a.GET_TASK) == "/lf.a2a.v1.A2AService/GetTask"
    assert bindings.reason_of(a2a.VERSION_NOT_SUPPORTED) == "VERSION_NOT_SUPPORTED"


# -- the same rule judges every binding, both ways ----------------------------------------------------------

def _err002(*exchanges: Exchange, binding: str) -> tuple[Outcome, str]:
    log = frame_log(*exchanges)
    log.notes["binding"] = binding
    [finding] = [f for f in judge(log, ["A2A-ERR-002"]) if f.req_id == "A2A-ERR-002"]
    assert finding.binding == binding
    return finding.outcome, finding.message


def test_a2a_err_002_over_http_json_both_ways() -> None:
    good = rest("get_unknown", a2a.GET_TASK, status_body(a2a.TASK_NOT_FOUND), status=404, params=UNKNOWN)
    assert _err002(good, binding="http-json")[0] == Outcome.PASS
    wrong = rest("get_unknown", a2a.GET_TASK, status_body(a2a.UNSUPPORTED_OPERATION), status=400, params=UNKNOWN)
    outcome, message = _err002(wrong, binding="http-json")
    assert outcome == Outcome.FAIL and "UnsupportedOperationError as HTTP 400" in message


def test_a2a_err_002_over_grpc_both_ways() -> None:
    good = grpc_call("get_unknown", a2a.GET_TASK, status=("NOT_FOUND", "gone", error_info()))
    assert _err002(good, binding="grpc")[0] == Outcome.PASS
    answered = grpc_call("get_unknown", a2a.GET_TASK, [task()])
    outcome, message = _err002(answered, binding="grpc")
    assert outcome == Outcome.FAIL and "was accepted" in message


def test_a_log_judges_only_its_bindings_requirements() -> None:
    stream = rest_sse("stream", a2a.SEND_STREAMING_MESSAGE, [stream_task(), status_update(a2a.COMPLETED)])
    log = frame_log(stream)
    log.notes["binding"] = "http-json"
    found = {f.req_id for f in judge(log, ["WIRE-002", "WIRE-006", "GRPC-002", "REST-002"])}
    assert "WIRE-002" not in found and "GRPC-002" not in found  # JSON-RPC's envelope, gRPC's messages
    assert {"WIRE-006", "REST-002"} <= found
    assert all(f.binding == "http-json" for f in judge(log, ["WIRE-006"]))


# -- A2A-CARD-006: every declared interface answers over its binding ----------------------------------------

def _probe_log(*probes: Exchange, card: dict) -> FrameLog:
    return frame_log(card_get(card), *probes)


def test_declared_interfaces_that_answer_pass() -> None:
    card = card_with(("JSONRPC", "http://127.0.0.1:1/a2a/jsonrpc"), ("HTTP+JSON", "http://127.0.0.1:1/a2a/rest"),
                     ("GRPC", "http://127.0.0.1:2"))
    log = _probe_log(unary("probe_jsonrpc", error=rpc_error(a2a.TASK_NOT_FOUND)),
                     rest("probe_http-json", a2a.GET_TASK, status_body(a2a.TASK_NOT_FOUND), status=404, params=UNKNOWN),
                     grpc_call("probe_grpc", status=("NOT_FOUND", "", error_info())), card=card)
    [finding] = judge(log, ["A2A-CARD-006"])
    assert finding.outcome == Outcome.PASS and "gRPC NOT_FOUND" in finding.message


def test_a_declared_binding_nothing_serves_fails_naming_it() -> None:
    card = card_with(("JSONRPC", "http://127.0.0.1:1/a2a/jsonrpc"), ("GRPC", "http://127.0.0.1:9"))
    refused = grpc_call("probe_grpc")
    refused.status, refused.end, refused.error, refused.events = None, END_ERROR, "failed to connect", []
    log = _probe_log(unary("probe_jsonrpc", error=rpc_error(a2a.TASK_NOT_FOUND)), refused, card=card)
    [finding] = judge(log, ["A2A-CARD-006"])
    assert finding.outcome == Outcome.FAIL
    assert "declares a GRPC interface at http://127.0.0.1:9" in finding.message and "failed to connect" in finding.message


def test_a_declared_interface_answering_another_binding_fails() -> None:
    card = card_with(("HTTP+JSON", "http://127.0.0.1:1/a2a/jsonrpc"))
    not_rest = rest("probe_http-json", a2a.GET_TASK, {"jsonrpc": "2.0", "id": None,
                                                      "error": rpc_error(a2a.METHOD_NOT_FOUND)}, status=405,
                    params=UNKNOWN)
    [finding] = judge(_probe_log(not_rest, card=card), ["A2A-CARD-006"])
    assert finding.outcome == Outcome.FAIL and "not TaskNotFoundError" in finding.message


# -- which bindings a run certifies ---------------------------------------------------------------------------

THREE = card_with(("JSONRPC", "u1"), ("HTTP+JSON", "u2"), ("GRPC", "u3"))


@pytest.fixture
def grpc_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binding_choice, "grpc_missing", lambda: None)


def test_the_embedded_reference_is_certified_over_every_binding(grpc_installed: None) -> None:
    assert choose(None, THREE, embedded=True).certified == ["jsonrpc", "http-json", "grpc"]


def test_a_target_defaults_to_the_first_binding_its_card_declares(grpc_installed: None) -> None:
    choice = choose(None, card_with(("GRPC", "u3"), ("HTTP+JSON", "u2")), embedded=False)
    assert choice.certified == ["http-json"]  # JSON-RPC, HTTP+JSON, gRPC: the order, not the card's
    assert choice.skipped["grpc"].startswith("not selected (the first binding the card declares (HTTP+JSON))")
    assert choice.declared == ["grpc", "http-json"]


def test_all_certifies_what_the_card_declares(grpc_installed: None) -> None:
    choice = choose(["all"], card_with(("GRPC", "u3")), embedded=False)
    assert choice.certified == ["grpc"] and set(choice.skipped) == {"jsonrpc", "http-json"}


def test_a_binding_asked_for_but_not_declared_is_skipped_with_why(grpc_installed: None) -> None:
    choice = choose(["grpc", "jsonrpc"], card_with(("JSONRPC", "u1")), embedded=False)
    assert choice.certified == ["jsonrpc"]
    assert "the card declares no GRPC interface" in choice.skipped["grpc"]


def test_grpc_without_its_extra_is_skipped_with_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(binding_choice, "grpc_missing", lambda: "the gRPC binding needs the grpc extra")
    choice = choose(None, THREE, embedded=True)
    assert choice.certified == ["jsonrpc", "http-json"] and choice.skipped["grpc"] == "the gRPC binding needs the grpc extra"
    # the reference without the extra serves no gRPC and its card declares none: the reason is still the extra
    two = card_with(("JSONRPC", "u1"), ("HTTP+JSON", "u2"))
    assert choose(None, two, embedded=True).skipped["grpc"] == "the gRPC binding needs the grpc extra"
    assert choose(["all"], two, embedded=False).skipped["grpc"] == "the gRPC binding needs the grpc extra"


def test_all_says_which_binding_the_card_does_not_declare(grpc_installed: None) -> None:
    choice = choose(["all"], card_with(("JSONRPC", "u1")), embedded=False)
    assert choice.skipped["grpc"] == "the card declares no GRPC interface for protocol 1.x"


def test_an_unreadable_card_tries_json_rpc() -> None:
    choice = choose(None, None, embedded=False)
    assert choice.certified == ["jsonrpc"] and choice.declared is None


# -- cassettes record the binding ----------------------------------------------------------------------------

def test_a_grpc_exchange_round_trips_through_a_cassette(tmp_path) -> None:
    call = grpc_call("stream", a2a.SEND_STREAMING_MESSAGE, [stream_task(), status_update(a2a.COMPLETED)])
    log = frame_log(call, scenario="stream-basic")
    log.notes["binding"] = "grpc"
    path = log.save(path_for(tmp_path, "stream-basic", "grpc"))
    assert path.name == "stream-basic@grpc.yaml" and find(tmp_path, "stream-basic", "grpc") == path
    assert find(tmp_path, "stream-basic") is None  # the JSON-RPC recording keeps its own name
    back = FrameLog.load(path).exchanges[0]
    assert back.binding == "grpc" and back.url.endswith("/lf.a2a.v1.A2AService/SendStreamingMessage")
    assert [json.loads(ev.data) for ev in back.data_events()] == [stream_task(), status_update(a2a.COMPLETED)]
    assert back.notes["grpc_status"]["code"] == "OK" and back.is_stream


def test_a_json_rpc_stream_is_unchanged_by_the_binding_field() -> None:
    ex = sse("stream", [stream_task()])
    assert ex.binding == "jsonrpc" and "binding" not in ex.to_json()


# -- credentials stay with their origin on every binding ------------------------------------------------------

def test_a_grpc_interface_of_another_origin_gets_no_credentials_unless_allowed() -> None:
    from streamcert.drivers import run_scenario
    from streamcert.reference.agent.server import ReferenceServer
    from streamcert.targets import Target

    with ReferenceServer() as server:
        secret = {"Authorization": "Bearer S3CRET"}
        log = run_scenario("card", Target(a2a_url=server.url, headers=secret))
        grpc_probe, rest_probe = log.get("probe_grpc"), log.get("probe_http-json")
        assert rest_probe.status == 404 and rest_probe.request_headers["Authorization"] == "Bearer S3CRET"
        assert grpc_probe.notes["not_sent"] and "--allow-origin http://127.0.0.1:" in grpc_probe.error
        [finding] = judge(log, ["A2A-CARD-006"])
        assert finding.outcome == Outcome.ERROR and "was not asked" in finding.message  # the suite's choice: no blame
        grpc_url = [i["url"] for i in json.loads(log.get("card").body)["supportedInterfaces"]
                    if i["protocolBinding"] == "GRPC"][0]
        allowed = run_scenario("card", Target(a2a_url=server.url, headers=secret, allow_origins=(grpc_url,)))
        sent = allowed.get("probe_grpc")
        assert sent.request_headers["authorization"] == "Bearer S3CRET" and "allowed by --allow-origin" in \
            sent.notes["origin"]
        assert [f.outcome for f in judge(allowed, ["A2A-CARD-006"])] == [Outcome.PASS]
        # the embedded reference's interfaces are its own (Target.own_interfaces): no --allow-origin needed
        own = run_scenario("card", Target(a2a_url=server.url, headers=secret, own_interfaces=True))
        assert own.get("probe_grpc").request_headers["authorization"] == "Bearer S3CRET"


def test_replay_refuses_a_recording_of_another_binding(tmp_path) -> None:
    from streamcert.recordings.replay_answers import Replayer

    log = frame_log(grpc_call("stream", a2a.SEND_STREAMING_MESSAGE, [stream_task()]), scenario="stream-basic")
    log.notes["binding"] = "grpc"
    path = log.save(path_for(tmp_path, "stream-basic", "grpc"))
    with pytest.raises(ValueError, match="was recorded over grpc: replay serves JSON-RPC recordings"):
        Replayer([path])


@pytest.mark.parametrize("binding", ["carrier-pigeon", "GRPC", ["grpc"], 7])
def test_check_refuses_a_cassette_of_an_unknown_binding_naming_it(tmp_path, capsys, binding) -> None:
    """Every requirement of such a cassette would be SKIPPED in silence: `check` says which binding, exit 2."""
    from streamcert.cli import main as streamcert

    log = frame_log(grpc_call("stream", a2a.SEND_STREAMING_MESSAGE, [stream_task()]), scenario="stream-basic")
    log.notes["binding"] = binding
    path = log.save(tmp_path / "sent.yaml")
    assert streamcert(["check", str(path), "--report", str(tmp_path / "rep")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and repr(str(binding)) in err and "does not know" in err, err
    assert "jsonrpc" in err and not (tmp_path / "rep").exists()


@pytest.mark.parametrize("cut", ["cap", "nesting"])
def test_a_probe_answer_a_cap_or_the_nesting_limit_cut_is_error_naming_it(cut) -> None:
    """The suite's own bound is no blame (A2A-CARD-006): ERROR, the cap named, never FAIL."""
    from streamcert.contract.capture import UNJUDGED
    from streamcert.framelog import MAX_JSON_DEPTH

    card = card_with(("JSONRPC", "http://127.0.0.1:1/a2a/jsonrpc"), ("HTTP+JSON", "http://127.0.0.1:1/a2a/rest"))
    if cut == "cap":
        probe = rest("probe_http-json", a2a.GET_TASK, {"partial": "x" * 50}, status=404, params=UNKNOWN)
        probe.notes[UNJUDGED] = {"reason": "a body of more than 1 MiB reached the cap --max-body-bytes (1 MiB)",
                                 "cap": "max_body", "figure": 2 << 20, "limit": 1 << 20}
    else:
        deep = "[" * (MAX_JSON_DEPTH + 5) + "]" * (MAX_JSON_DEPTH + 5)
        probe = rest("probe_http-json", a2a.GET_TASK, status=404, params=UNKNOWN, body=deep.encode())
    log = _probe_log(unary("probe_jsonrpc", error=rpc_error(a2a.TASK_NOT_FOUND)), probe, card=card)
    [finding] = judge(log, ["A2A-CARD-006"])
    assert finding.outcome == Outcome.ERROR, finding.message
    assert ("--max-body-bytes" if cut == "cap" else "nested") in finding.message
    assert "cannot be judged" in finding.message


def test_a_probe_whose_transport_failed_is_no_answer() -> None:
    card = card_with(("JSONRPC", "http://127.0.0.1:1/a2a/jsonrpc"), ("GRPC", "http://127.0.0.1:9"))
    broken = grpc_call("probe_grpc")
    broken.end, broken.error = END_ERROR, "gRPC transport failure: the answer's framing could not be read"
    log = _probe_log(unary("probe_jsonrpc", error=rpc_error(a2a.TASK_NOT_FOUND)), broken, card=card)
    [finding] = judge(log, ["A2A-CARD-006"])
    assert finding.outcome == Outcome.FAIL and "gRPC transport failure" in finding.message
    assert "InternalError" not in finding.message
