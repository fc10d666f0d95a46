"""GRPC- rules (rules/a2a/grpc_binding.py) on hand-made frame logs, each both ways: gRPC exchanges written as
wire/grpc.py writes them (docs/bindings.md, "gRPC exchange"), no network."""

from __future__ import annotations

from typing import Any

import pytest
from logs import GRPC_URL, broken, error_info, frame_log, grpc_call, task, task_result, unary

from streamcert.framelog import Exchange
from streamcert.outcomes import Outcome
from streamcert.protocols import a2a, bindings
from streamcert.rules import RuleContext, judge

P, F = Outcome.PASS, Outcome.FAIL


def refused(label: str, code: str, details: list[dict[str, Any]] = (), op: str = a2a.GET_TASK, **notes: Any) -> Exchange:
    return grpc_call(label, op, status=(code, "refused", list(details)), **notes)


def one(rid: str, *exchanges: Exchange, expected: Outcome) -> str:
    found = [f for f in judge(frame_log(*exchanges), [rid], RuleContext()) if f.req_id == rid]
    assert len(found) == 1, found
    assert found[0].outcome == expected, f"{rid}: {found[0].outcome} {found[0].message}"
    return found[0].message


def none(rid: str, *exchanges: Exchange) -> None:
    assert [f for f in judge(frame_log(*exchanges), [rid], RuleContext()) if f.req_id == rid] == []


STREAM = [{"task": task()}, {"statusUpdate": {"taskId": "task-1", "contextId": "ctx-1",
                                              "status": {"state": a2a.COMPLETED}}}]


# -- GRPC-001: every method served at its path ----------------------------------------------------------

def test_methods_served():
    msg = one("GRPC-001", grpc_call("send", a2a.SEND_MESSAGE, [task_result()]),
              grpc_call("stream", a2a.SEND_STREAMING_MESSAGE, STREAM),
              refused("get_unknown", "NOT_FOUND", error_info()), expected=P)
    assert "3 gRPC call(s)" in msg and "SendMessage, SendStreamingMessage, GetTask" in msg


def test_an_unimplemented_method_fails():
    msg = one("GRPC-001", grpc_call("send", a2a.SEND_MESSAGE, [task_result()]),
              refused("subscribe", "UNIMPLEMENTED", op=a2a.SUBSCRIBE_TO_TASK), expected=F)
    assert "SubscribeToTask (subscribe) ended UNIMPLEMENTED" in msg
    assert "/lf.a2a.v1.A2AService/SubscribeToTask" in msg


def test_nothing_over_grpc_is_nothing_to_judge():
    none("GRPC-001", unary("get", task()), broken("lost", rpc_method=a2a.GET_TASK))
    lost = Exchange(label="lost", method="POST", url=GRPC_URL, rpc_method=a2a.GET_TASK, end="error",
                    error="no gRPC connection", binding=bindings.GRPC)
    for rid in ("GRPC-001", "GRPC-002", "GRPC-003", "GRPC-004"):
        none(rid, lost)


# -- GRPC-002: every message of its method's response type ----------------------------------------------

def test_messages_decode():
    msg = one("GRPC-002", grpc_call("stream", a2a.SEND_STREAMING_MESSAGE, STREAM),
              grpc_call("get", a2a.GET_TASK, [task()]), expected=P)
    assert "all 3 response message(s) of 2 gRPC call(s)" in msg


def test_an_undecodable_message_fails():
    msg = one("GRPC-002", grpc_call("stream", a2a.SEND_STREAMING_MESSAGE, STREAM + STREAM[1:], undecodable=[1]),
              expected=F)
    assert "SendStreamingMessage (stream) message 2" in msg and "do not decode" in msg


# -- GRPC-003: the status the error mapping gives --------------------------------------------------------

@pytest.mark.parametrize("code,reason", [
    ("NOT_FOUND", "TASK_NOT_FOUND"), ("FAILED_PRECONDITION", "TASK_NOT_CANCELABLE"),
    ("FAILED_PRECONDITION", "UNSUPPORTED_OPERATION"), ("FAILED_PRECONDITION", "VERSION_NOT_SUPPORTED"),
    ("INVALID_ARGUMENT", "CONTENT_TYPE_NOT_SUPPORTED"), ("INTERNAL", "INVALID_AGENT_RESPONSE"),
])
def test_error_status_as_mapped(code, reason):
    one("GRPC-003", refused("err", code, error_info(reason)), expected=P)


@pytest.mark.parametrize("code,reason", [
    ("FAILED_PRECONDITION", "TASK_NOT_FOUND"), ("UNKNOWN", "TASK_NOT_FOUND"), ("NOT_FOUND", "UNSUPPORTED_OPERATION"),
    ("ABORTED", "TASK_NOT_CANCELABLE"), ("INTERNAL", "VERSION_NOT_SUPPORTED"),
])
def test_error_status_not_as_mapped_fails(code, reason):
    msg = one("GRPC-003", refused("ok", "NOT_FOUND", error_info()), refused("err", code, error_info(reason)),
              expected=F)
    want = bindings.ERROR_FORMS[bindings.CODE_BY_REASON[reason]][0]
    assert f"ended {code} with an ErrorInfo naming" in msg and f"which is sent as {want}" in msg


def test_error_status_without_errorinfo_is_left_to_grpc_004():
    none("GRPC-003", refused("err", "NOT_FOUND"), refused("bad", "INVALID_ARGUMENT"),
         refused("other", "NOT_FOUND", error_info(domain="example.com")))


# -- GRPC-004: an A2A error carries its ErrorInfo --------------------------------------------------------

def test_errorinfo_present():
    msg = one("GRPC-004", refused("get_unknown", "NOT_FOUND", error_info()),
              refused("cancel_terminal", "FAILED_PRECONDITION", error_info("TASK_NOT_CANCELABLE")),
              refused("invalid", "INVALID_ARGUMENT"),  # a generic error: no ErrorInfo owed
              expected=P)
    assert "2 A2A error(s)" in msg and "TASK_NOT_FOUND, TASK_NOT_CANCELABLE" in msg


@pytest.mark.parametrize("details,notes,said", [
    ([], {}, "no details"),
    ([{"@type": "type.googleapis.com/google.rpc.BadRequest", "value": "CgA="}], {}, "no google.rpc.ErrorInfo"),
    (error_info(domain="example.com"), {}, "domain 'example.com'"),
    ([], {"details_error": "grpc-status-details-bin is no google.rpc.Status: 4 bytes that do not decode"},
     "no google.rpc.Status"),
])
def test_an_a2a_status_without_its_errorinfo_fails(details, notes, said):
    ex = refused("cancel_terminal", "FAILED_PRECONDITION", details)
    ex.notes["grpc_status"].update(notes)
    msg = one("GRPC-004", refused("get_unknown", "NOT_FOUND", error_info()), ex, expected=F)
    assert "GetTask (cancel_terminal) ended FAILED_PRECONDITION" in msg and said in msg


def test_an_errorinfo_with_an_unknown_reason_fails():
    msg = one("GRPC-004", refused("err", "INTERNAL", error_info("TaskNotFound")), expected=F)
    assert "reason 'TaskNotFound' names no A2A error" in msg


def test_generic_errors_owe_no_errorinfo():
    none("GRPC-004", refused("invalid", "INVALID_ARGUMENT"), refused("oops", "INTERNAL"),
         refused("missing", "UNIMPLEMENTED"), grpc_call("get", a2a.GET_TASK, [task()]))


def test_a_generic_error_with_an_errorinfo_of_its_own_reason_owes_no_a2a_reason():
    # a2a-sdk 1.3 over gRPC: a message without its role → INVALID_ARGUMENT with ErrorInfo INVALID_PARAMS (docs/peers.md)
    none("GRPC-004", refused("msg_no_role", "INVALID_ARGUMENT", error_info("INVALID_PARAMS"), op=a2a.SEND_MESSAGE))
