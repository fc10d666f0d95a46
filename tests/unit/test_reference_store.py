"""The reference's task store hands out copies: what a read returns (a snapshot) shares nothing with the stored task,
so a caller that changes it (a fault variant, a stream's encoding) never changes the task (store.json_copy)."""

from __future__ import annotations

from streamcert.reference.agent.options import Options
from streamcert.reference.agent.store import TaskStore, json_copy

TASK = {"id": "t", "parts": [{"text": "a", "n": 1, "x": 1.5, "ok": True, "none": None}], "meta": {"k": ["v"]}}


def test_a_json_copy_is_equal_and_shares_nothing():
    copied = json_copy(TASK)
    assert copied == TASK
    copied["parts"][0]["text"] = "changed"
    copied["meta"]["k"].append("w")
    assert TASK["parts"][0]["text"] == "a" and TASK["meta"]["k"] == ["v"]


def test_what_is_not_json_is_copied_deeply_still():
    inner = [1]
    copied = json_copy({"pair": (inner, 2), "set": {3}})
    assert copied == {"pair": ([1], 2), "set": {3}}
    assert copied["pair"][0] is not inner


def test_a_snapshot_shares_nothing_with_the_stored_task():
    store = TaskStore(Options())
    record = store.create("t1", "c1", {"state": "TASK_STATE_WORKING", "timestamp": "2026-01-01T00:00:00.000Z"})
    store.publish(record, {"artifactUpdate": {"taskId": "t1", "artifact": {"artifactId": "a", "parts": [{"text": "x"}]}}})
    snap = store.get("t1").snapshot()
    snap["status"]["state"] = "TASK_STATE_FAILED"
    snap["artifacts"][0]["parts"][0]["text"] = "changed"
    again = store.get("t1").snapshot()
    assert again["status"]["state"] == "TASK_STATE_WORKING" and again["artifacts"][0]["parts"][0]["text"] == "x"
