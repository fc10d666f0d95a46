"""PUSH- rules both ways, on hand-made logs of the push scenario (labels: streamcert.drivers.push), and one
live run of the reference's push agent with the suite's webhook receiver."""

from __future__ import annotations

import copy

import pytest
from logs import artifact_update as art
from logs import frame_log, rpc_error, sse, status_update, task_result, unary

from streamcert.framelog import Exchange
from streamcert.outcomes import Outcome
from streamcert.rules import judge

HOOKS = {"push_create_slow": "/slow/1.5/s", "push_create_a": "/hook/a", "push_create_b": "/hook/b",
         "push_create_c": "/hook/c"}
TOKENS = {label: f"tok-{label[-1]}" for label in HOOKS}
NOTES = {"push": {"hooks": HOOKS, "tokens": TOKENS, "script_span_s": 0.1, "slow_delay_s": 1.5}}
UPDATES = [status_update("TASK_STATE_WORKING", "go"), art("r", text="one"), status_update("TASK_STATE_COMPLETED")]


def post(path: str, body, t: float, *, token: str | None = None, media: str = "application/a2a+json") -> Exchange:
    headers = {"content-type": media, **({"x-a2a-notification-token": token} if token else {})}
    return Exchange(label="webhook", method="POST", url="http://127.0.0.1:9" + path, request_headers=headers,
                    request_body=body, status=200, t_sent=t, t_end=t, binding="push", notes={"path": path})


def config(label: str, cid: str | None, t: float = 0.1) -> Exchange:
    result = {"taskId": "task-1", "url": "http://127.0.0.1:9" + HOOKS[label], **({"id": cid} if cid else {})}
    return unary(label, result, rpc_method="CreateTaskPushNotificationConfig",
                 params={"taskId": "task-1", "url": result["url"], "token": TOKENS[label]}, t=t)


def good_log(*, bodies=None, b_bodies=None, a_headers=None, drop=(), extra=(), ids=("cfg-a", "cfg-b"),
             listed=None, span_dt: float = 0.05, nourl=None, deleted_posts=()):
    bodies = UPDATES if bodies is None else bodies
    ex = [unary("card", {}), sse("push_task", [task_result()]),
          sse("stream", [task_result(), *UPDATES], t=1.5, dt=span_dt),
          config("push_create_slow", "cfg-s"), config("push_create_a", ids[0]), config("push_create_b", ids[1]),
          config("push_create_c", "cfg-c"),
          unary("push_delete_c", {}, rpc_method="DeleteTaskPushNotificationConfig", t=0.5),
          nourl or unary("push_create_nourl", error=rpc_error(-32602), t=0.6)]
    t = 2.0
    for i, body in enumerate(bodies):
        ex.append(post("/hook/a", body, t + i * 0.01, **({"token": "tok-a"} if a_headers is None else a_headers)))
    for i, body in enumerate(UPDATES if b_bodies is None else b_bodies):
        ex.append(post("/hook/b", body, t + i * 0.01, token="tok-b"))
    for t_post in deleted_posts:
        ex.append(post("/hook/c", UPDATES[0], t_post, token="tok-c"))
    shown = [{"id": i, "taskId": "task-1"} for i in ids] if listed is None else listed
    ex += [unary("push_list", {"configs": shown, "nextPageToken": ""}, t=3.0),
           unary("push_get", {"id": ids[0], "taskId": "task-1", "url": "http://127.0.0.1:9/hook/a"}, t=3.1),
           unary("push_get_unknown", error=rpc_error(-32001), t=3.2),
           unary("push_delete_unknown", {}, t=3.3),
           unary("push_get_deleted", error=rpc_error(-32001), t=3.4),
           unary("push_list_unknown_task", error=rpc_error(-32001), t=3.5),
           unary("push_create_unknown_task", error=rpc_error(-32001), t=3.6)]
    return frame_log(*[e for e in ex if e.label not in drop], *extra, notes=copy.deepcopy(NOTES))


def outcomes(log, rid: str) -> set[Outcome]:
    return {f.outcome for f in judge(log, [rid]) if f.req_id == rid}


ALL = [f"PUSH-{n:03d}" for n in range(1, 14)]


def test_a_correct_log_passes_every_push_requirement():
    findings = judge(good_log(), ALL)
    assert {f.req_id for f in findings} == set(ALL)
    assert all(f.outcome is Outcome.PASS for f in findings), [(f.req_id, f.message) for f in findings
                                                               if f.outcome is not Outcome.PASS]
    reading = {f.reading for f in findings if f.req_id == "PUSH-009"}
    assert reading == {"token header: x-a2a-notification-token"}
    assert {f.reading for f in findings if f.req_id == "PUSH-004"} == {
        "Delete of an unknown config id answered without error (idempotent delete, §3.1.10 ¶9)"}


@pytest.mark.parametrize("rid,log,outcome", [
    ("PUSH-001", lambda: good_log(ids=("", "cfg-b")), Outcome.FAIL),
    ("PUSH-002", lambda: good_log(ids=("same", "same")), Outcome.FAIL),
    ("PUSH-002", lambda: good_log(b_bodies=[]), Outcome.FAIL),
    ("PUSH-002", lambda: good_log(listed=[{"id": "cfg-b"}]), Outcome.FAIL),
    ("PUSH-004", lambda: good_log(extra=[unary("push_get_unknown", {"id": "x"}, t=4)],
                                  drop=("push_get_unknown",)), Outcome.FAIL),
    ("PUSH-005", lambda: good_log(nourl=unary("push_create_nourl", {"id": "n", "taskId": "task-1"})), Outcome.FAIL),
    ("PUSH-006", lambda: good_log(bodies=[{"jsonrpc": "2.0", "id": None, "result": b} for b in UPDATES]),
     Outcome.FAIL),
    ("PUSH-007", lambda: good_log(bodies=[UPDATES[0], UPDATES[2]]), Outcome.FAIL),
    ("PUSH-008", lambda: good_log(bodies=[UPDATES[1], UPDATES[0], UPDATES[2]]), Outcome.NON_STRICT),
    ("PUSH-009", lambda: good_log(a_headers={}), Outcome.WARNING),
    ("PUSH-010", lambda: good_log(a_headers={"token": "tok-a", "media": "application/json"}), Outcome.NON_STRICT),
    ("PUSH-011", lambda: good_log(deleted_posts=[2.5]), Outcome.FAIL),
    ("PUSH-012", lambda: good_log(bodies=[*UPDATES, status_update("TASK_STATE_WORKING", "again")]), Outcome.WARNING),
    ("PUSH-013", lambda: good_log(span_dt=1.5), Outcome.WARNING),  # the stream 1.5 s per event behind
])
def test_a_broken_log_is_flagged_on_its_requirement(rid, log, outcome):
    assert outcome in outcomes(log(), rid)


def test_allowed_variations_pass():
    # a repeated delivery (duplicates may occur), a POST on the deleted webhook before Delete was answered, an
    # empty List after the task ended: each accepted
    log = good_log(bodies=[UPDATES[0], UPDATES[0], *UPDATES[1:], UPDATES[2]], deleted_posts=[0.4], listed=[])
    for rid in ("PUSH-002", "PUSH-007", "PUSH-008", "PUSH-011", "PUSH-012"):
        assert outcomes(log, rid) == {Outcome.PASS}, rid


def replacing_log(*, b_bodies=None, got_url="http://127.0.0.1:9/hook/b"):
    """An agent that gives every config made without an id one id (a2a-sdk 1.3.0 gives the task's id): b's Create
    replaced a's, so only b's webhook gets the task's events, and Get of that id answers b's config."""
    log = good_log(ids=("task-1", "task-1"), bodies=[], b_bodies=b_bodies, listed=[{"id": "task-1"}],
                   drop=("push_get",),
                   extra=[unary("push_get", {"id": "task-1", "taskId": "task-1", "url": got_url}, t=3.1)])
    return log


def test_a_config_replaced_by_a_second_create_is_push_002s_departure_alone():
    findings = judge(replacing_log(), ALL)
    by_id = {rid: {f.outcome for f in findings if f.req_id == rid} for rid in ALL}
    assert by_id["PUSH-002"] == {Outcome.FAIL}
    # a's webhook got nothing because its config was replaced: not blamed again on what is judged per config
    for rid in ("PUSH-003", "PUSH-007", "PUSH-008", "PUSH-009", "PUSH-012"):
        assert by_id[rid] == {Outcome.PASS}, (rid, [f.message for f in findings if f.req_id == rid])
    readings = {f.reading for f in findings if f.req_id in ("PUSH-003", "PUSH-007")}
    assert all("PUSH-002" in (r or "") for r in readings), readings


def test_the_config_that_took_the_id_over_is_still_judged():
    assert Outcome.FAIL in outcomes(replacing_log(b_bodies=[UPDATES[0]]), "PUSH-007")
    assert Outcome.FAIL in outcomes(replacing_log(got_url="http://127.0.0.1:9/hook/a"), "PUSH-003")


def test_an_agent_refusing_the_loopback_receiver_is_a_reading_on_push_001():
    refused = [unary(label, error=rpc_error(-32602, "loopback webhooks are refused"),
                     rpc_method="CreateTaskPushNotificationConfig", t=0.1)
               for label in ("push_create_slow", "push_create_a", "push_create_b")]
    log = good_log(drop=("push_create_slow", "push_create_a", "push_create_b"), extra=refused)
    log.notes["push_receiver"] = {"listen": "127.0.0.1:9", "url": "http://127.0.0.1:9"}
    for rid in ("PUSH-001", "PUSH-007"):  # what follows from the configs refused is not judged either
        [finding] = judge(log, [rid])
        assert finding.outcome is Outcome.NOT_TESTED and "--push-url" in finding.message, (rid, finding.message)
    log.notes["push_receiver"]["url"] = "http://runner.example:9"  # reachable by name: a refusal is a FAIL
    assert outcomes(log, "PUSH-001") == {Outcome.FAIL}
    assert outcomes(log, "PUSH-007") == {Outcome.NOT_TESTED}  # PUSH-001 alone blames the refusal


def test_without_the_push_notes_nothing_is_judged():
    assert judge(frame_log(unary("card", {})), ALL) == []


def test_the_reference_push_agent_passes_live():
    from streamcert.drivers import run_scenario
    from streamcert.reference.agent.server import ReferenceServer
    from streamcert.targets import Target

    with ReferenceServer() as server:
        log = run_scenario("push-configs", Target(push_agent_url=server.agent_url("push")))
    findings = judge(log, ALL)
    assert {f.req_id for f in findings} == set(ALL)
    assert all(f.outcome is Outcome.PASS for f in findings), [(f.req_id, f.message) for f in findings
                                                               if f.outcome is not Outcome.PASS]
    received = [ex for ex in log.exchanges if ex.label.startswith("webhook_")]
    assert received and all(ex.request_headers.get("content-type") == "application/a2a+json" for ex in received)
