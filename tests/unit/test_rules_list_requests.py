"""A2A-TASK-017 (a filter named by its proto field name) and A2A-TASK-018 (pageSize out of its bounds), both ways,
on hand-made frame logs; and the reference's reading of proto names (reference/agent/params.py)."""

from __future__ import annotations

import pytest
from logs import error_info, frame_log, rest, rpc_error, status_body, task, task_result, unary

from streamcert.outcomes import Outcome
from streamcert.protocols import a2a
from streamcert.reference.agent import params as p
from streamcert.reference.agent.options import Options
from streamcert.reference.agent.rpc import RpcError
from streamcert.rules import RuleContext
from streamcert.rules import judge as judge_all

P, F, E, W, U = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.WARNING, Outcome.UNSUPPORTED
DONE = "TASK_STATE_COMPLETED"
CTX, OTHER_CTX = "ctx-L", "ctx-other"


def one(rid, log, expected):
    found = [f for f in judge_all(log, [rid], RuleContext()) if f.req_id == rid]
    assert len(found) == 1, found
    assert found[0].outcome == expected, f"{rid}: {found[0].outcome} {found[0].message}"
    return found[0]


def listing(*tids_ctx):
    tasks = [task(tid, ctx, DONE) for tid, ctx in tids_ctx]
    return {"tasks": tasks, "nextPageToken": "", "pageSize": 50, "totalSize": len(tasks)}


OWN = (("t3", CTX), ("t2", CTX), ("t1", CTX))


# -- A2A-TASK-017 ----------------------------------------------------------------------------------------

def proto_name_log(answer=None, error=None, other=True):
    other_ex = unary("send_other", task_result("t0", OTHER_CTX, DONE) if other else None, rpc_method="SendMessage",
                     error=None if other else rpc_error(-32603, "boom"))
    asked = unary("list_proto_name", answer if error is None else None, error=error, rpc_method="ListTasks",
                  params={"context_id": CTX})
    return frame_log(other_ex, asked, scenario="list-tasks")


def test_task_014_filter_read_as_context_id_passes():
    f = one("A2A-TASK-017", proto_name_log(listing(*OWN)), P)
    assert "t0" in f.message and "read as contextId" in f.reading


def test_task_014_refused_with_invalid_params_passes():
    f = one("A2A-TASK-017", proto_name_log(error=rpc_error(-32602, "unknown field context_id")), P)
    assert f.reading == "refused as invalid params"


def test_task_014_filter_ignored_is_a_warning_never_a_fail():
    f = one("A2A-TASK-017", proto_name_log(listing(("t0", OTHER_CTX), *OWN)), W)
    assert "silently ignored" in f.message and "t0" in f.message and f.evidence


def test_task_014_a_stranger_of_a_third_context_is_seen_too():
    # the task of another scenario, not the driver's: its contextId shows the filter went unread
    one("A2A-TASK-017", proto_name_log(listing(*OWN, ("t9", "ctx-elsewhere"))), W)


def test_task_014_refused_with_another_error_is_a_warning():
    f = one("A2A-TASK-017", proto_name_log(error=rpc_error(-32603, "internal")), W)
    assert "-32602" in f.message


def test_task_014_over_http_json_a_query_parameter_ignored_passes():
    # ?context_id= is a query parameter, not JSON: §11.5 names query parameters camelCase only, so a server may
    # ignore it as unrecognized (§5.7); a2a-sdk 1.3's REST handler does (docs/peers.md)
    other = rest("send_other", a2a.SEND_MESSAGE, {"task": task("t0", OTHER_CTX, DONE)}, params={"message": {}})
    q = {"params": {"context_id": CTX}}  # what the client notes a GET's query carried (Exchange.params)
    ignored = rest("list_proto_name", a2a.LIST_TASKS, listing(("t0", OTHER_CTX), *OWN), params=q["params"], notes=q)
    f = one("A2A-TASK-017", frame_log(other, ignored), P)
    assert "§11.5" in f.reading and "query parameter" in f.message
    read = rest("list_proto_name", a2a.LIST_TASKS, listing(*OWN), params=q["params"], notes=q)
    assert "read as contextId" in one("A2A-TASK-017", frame_log(other, read), P).reading
    refused = rest("list_proto_name", a2a.LIST_TASKS, status=400, params=q["params"], notes=q,
                   answer=status_body(-32602, 400, details=error_info("INVALID_PARAMS")))
    one("A2A-TASK-017", frame_log(other, refused), P)
    other_error = rest("list_proto_name", a2a.LIST_TASKS, status=500, params=q["params"], notes=q,
                       answer=status_body(-32603, 500, details=error_info("INTERNAL")))
    one("A2A-TASK-017", frame_log(other, other_error), W)
    # the same listing over JSON-RPC, where the name sits in a JSON body, stays a warning
    one("A2A-TASK-017", proto_name_log(listing(("t0", OTHER_CTX), *OWN)), W)


def test_task_014_without_another_context_is_not_judged_as_applied():
    f = one("A2A-TASK-017", proto_name_log(listing(*OWN), other=False), U)
    assert "another context" in f.message


def test_task_014_needs_both_exchanges():
    assert [f for f in judge_all(frame_log(), ["A2A-TASK-017"], RuleContext())] == []


# -- A2A-TASK-018 ----------------------------------------------------------------------------------------

def size_log(over=None, under=None):
    """list_size_over (pageSize 150) and list_size_under (0), each answered `over` / `under`: a result, or an
    error (a dict with "code")."""
    exs = []
    for label, size, answer in (("list_size_over", 150, over), ("list_size_under", 0, under)):
        if answer is None:
            answer = {"code": -32602, "message": "pageSize must be between 1 and 100"}
        error = answer if "code" in answer else None
        exs.append(unary(label, None if error else answer, error=error, rpc_method="ListTasks",
                         params={"contextId": CTX, "pageSize": size}))
    return frame_log(*exs, scenario="list-tasks")


def test_task_015_refusals_pass():
    f = one("A2A-TASK-018", size_log(), P)
    assert "InvalidParams" in f.reading and "150" in f.message and "pageSize 0" in f.message


def test_task_015_served_within_bounds_passes_with_the_reading():
    clamped = {**listing(*OWN), "pageSize": 100}
    defaulted = {**listing(*OWN), "pageSize": 50}
    f = one("A2A-TASK-018", size_log(clamped, defaulted), P)
    assert "within 1 to 100" in f.reading


@pytest.mark.parametrize("over, under, seen", [
    ({**listing(*OWN), "pageSize": 150}, None, "pageSize 150 in the answer"),
    (None, {**listing(), "pageSize": 0}, "pageSize 0 in the answer"),
    ({"code": -32603, "message": "internal"}, None, "expected InvalidParams"),
    ({**listing(*[(f"t{n}", CTX) for n in range(101)]), "pageSize": 100}, None, "101 tasks on one page"),
])
def test_task_015_fails_when_the_bound_is_not_kept(over, under, seen):
    f = one("A2A-TASK-018", size_log(over, under), F)
    assert seen in f.message and f.evidence


def test_task_015_no_answer_is_an_error():
    log = size_log()
    log.exchanges[0].chunks.clear()
    log.exchanges[0].status, log.exchanges[0].error, log.exchanges[0].end = None, "ReadTimeout", "error"
    assert "ReadTimeout" in one("A2A-TASK-018", log, E).message


# -- the reference reads a field by its proto name, the same on every binding (docs/bindings.md) ------------

def test_reference_reads_proto_names_of_known_fields_only():
    sent = {"context_id": "c", "page_size": 2, "include_artifacts": True, "unknown_thing": 1}
    assert p.json_names(a2a.LIST_TASKS, sent) == {"contextId": "c", "pageSize": 2, "includeArtifacts": True,
                                                  "unknown_thing": 1}


def test_reference_leaves_struct_keys_alone_and_renames_nested_messages():
    sent = {"message": {"message_id": "m", "role": "ROLE_USER", "task_id": "t",
                        "metadata": {"context_id": "kept", "some_key": 1},
                        "parts": [{"data": {"media_type": "kept"}, "media_type": "application/json"}]},
            "configuration": {"history_length": 1, "accepted_output_modes": ["text/plain"]},
            "metadata": {"page_size": "kept"}}
    got = p.json_names(a2a.SEND_MESSAGE, sent)
    assert got["message"] == {"messageId": "m", "role": "ROLE_USER", "taskId": "t",
                              "metadata": {"context_id": "kept", "some_key": 1},
                              "parts": [{"data": {"media_type": "kept"}, "mediaType": "application/json"}]}
    assert got["configuration"] == {"historyLength": 1, "acceptedOutputModes": ["text/plain"]}
    assert got["metadata"] == {"page_size": "kept"}


def test_reference_refuses_a_field_given_by_both_names():
    with pytest.raises(RpcError) as raised:
        p.json_names(a2a.LIST_TASKS, {"contextId": "a", "context_id": "b"})
    assert raised.value.code == a2a.INVALID_PARAMS and "context_id and contextId" in raised.value.message


def test_reference_fault_leaves_proto_names_unread():
    broken = Options(fault="proto-names-ignored")
    assert p.json_names(a2a.LIST_TASKS, {"context_id": "c"}, broken) == {"context_id": "c"}


def test_request_messages_match_the_proto():
    """protocols/a2a.REQUEST_MESSAGES is a2a_grpc.proto's request messages by JSON name, nested types named."""
    messages = pytest.importorskip("streamcert.protocols.grpc_messages")
    if messages.grpc_available():
        pytest.skip(messages.grpc_available())
    pool = messages.pool()
    for kind, fields in a2a.REQUEST_MESSAGES.items():
        desc = pool.FindMessageTypeByName(messages.full_name(kind))
        assert {f.json_name for f in desc.fields} == set(fields), kind
        for f in desc.fields:
            nested = f.message_type.name if f.message_type is not None else None
            want = fields[f.json_name]
            assert want == (None if nested in ("Struct", "Value", "Timestamp") else nested), (kind, f.name)
            assert a2a.proto_name(f.json_name) == f.name
    assert set(a2a.REQUEST_TYPES.values()) <= set(a2a.REQUEST_MESSAGES)
