"""`streamcert diff`: each change a person must see shows once, on the frame it happened to (a dropped frame is
one row, a delay is one frame's gap), volatile values compare by shape and by where they first appeared, and
nothing else is said: two captures of the same behaviour with fresh ids differ in nothing."""

from __future__ import annotations

import copy
import json
import re
import uuid
from importlib import resources
from pathlib import Path

from streamcert import cassette
from streamcert.capture_diff import diff_logs, kind_of
from streamcert.cli import main as streamcert
from streamcert.framelog import Exchange, FrameLog

SHIPPED = resources.files("streamcert.cassettes") / "reference"
FINAL_TEXT = "result.statusUpdate.status.message.parts[0].text"


def shipped(name: str = "stream-basic") -> FrameLog:
    return FrameLog.load(SHIPPED / f"{name}.yaml")


def edit(ex: Exchange, n: int, change) -> None:
    """Change the payload of data frame `n` (0-based) of a stream, as a server would have sent it."""
    ev = ex.data_events()[n]
    value = json.loads(ev.data)
    change(value)
    ev.data = json.dumps(value, separators=(",", ":"))
    ev._done = False


def fresh_ids(log: FrameLog) -> FrameLog:
    """The same capture with every UUID replaced by another, consistently (a new run of the same server)."""
    text = cassette.document(log)[0]  # bodies as text: a UUID has the same length, the chunks still add up
    mapping: dict[str, str] = {}
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                  lambda m: mapping.setdefault(m.group(0), str(uuid.uuid4())), text)
    return cassette.from_document(cassette.SERIALIZER.deserialize(text))


def test_the_same_behaviour_with_fresh_ids_is_no_difference():
    log = shipped()
    assert diff_logs(log, log).lines() == []
    for name in ("stream-basic", "list-tasks", "ix-question"):
        old = shipped(name)
        assert diff_logs(old, fresh_ids(old)).lines() == [], name


def test_each_change_shows_once_where_it_happened():
    old = shipped()
    new = copy.deepcopy(old)
    stream = new.get("stream")
    edit(stream, 8, lambda v: v["result"]["statusUpdate"]["status"]["message"]["parts"][0].update(
        text="1 failed, 11 passed (and then some)"))  # a changed field
    edit(stream, 4, lambda v: v["result"]["artifactUpdate"].update(taskId=str(uuid.uuid4())))  # another id
    for ev in stream.events[6:]:  # frame 7 and all after it come 2 s later
        ev.t += 2.0
    stream.t_end += 2.0
    del stream.events[2]  # frame 3 dropped
    lines = diff_logs(old, new).lines()
    text = "\n".join(lines)
    assert "stream: 9 frames → 8 frames" in text
    assert [ln for ln in lines if ln.lstrip().startswith("-")] == \
        [ln for ln in lines if "3 artifactUpdate test-log" in ln and "(not in the new capture)" in ln]
    fields = [ln for ln in lines if ln.startswith("stream: frame")]
    assert len(fields) == 3, text  # the text, the id, the delay: one line each, no cascade
    assert any(FINAL_TEXT in ln and "'1 failed, 11 passed' → '1 failed, 11 passed (and then some)'" in ln
               for ln in fields)
    assert any("frame 5 → 4" in ln and "result.artifactUpdate.taskId" in ln and
               "as at stream frame 1 result.task.id" in ln and "first seen here" in ln for ln in fields)
    assert any("frame 7 → 6" in ln and "came after the frame before it: 2.00 s later" in ln for ln in fields)


def test_timing_within_the_tolerance_is_no_difference():
    old = shipped()
    new = copy.deepcopy(old)
    for ev in new.get("stream").events[3:]:
        ev.t += 0.4
    new.get("stream").t_end += 0.4
    assert diff_logs(old, new, tolerance_s=0.5).lines() == []
    assert len(diff_logs(old, new, tolerance_s=0.1).lines()) == 1
    assert diff_logs(old, new, tolerance_s=None).lines() == []


def test_an_answer_that_changed_and_an_exchange_that_went():
    old = shipped()
    new = copy.deepcopy(old)
    new.get("get_task").status = 500
    new.exchanges = [ex for ex in new.exchanges if ex.label != "get_task_h1"]
    lines = diff_logs(old, new).lines()
    assert "get_task: status 200 → 500" in lines and "get_task_h1: only in the old capture" in lines


def test_frame_kinds_name_what_a_person_looks_for():
    assert kind_of({"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"status": {"state": "TASK_STATE_WORKING"}}}}) \
        == "statusUpdate WORKING"
    assert kind_of({"result": {"artifactUpdate": {"artifact": {"artifactId": "a"}, "append": True}}}) \
        == "artifactUpdate a +append"
    assert kind_of({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001}}) == "error -32001"
    assert kind_of({"progress": {"phase": "writing"}, "status": "running"}) == "progress writing"
    assert kind_of({"jsonrpc": "2.0", "method": "session/update", "params": {"update": {"sessionUpdate": "plan"}}}) \
        == "session/update plan"


def test_cli_exit_codes_and_json(tmp_path, capsys):
    old = shipped()
    new = copy.deepcopy(old)
    edit(new.get("stream"), 8, lambda v: v["result"]["statusUpdate"]["status"].update(state="TASK_STATE_FAILED"))
    a, b = old.save(tmp_path / "old.yaml"), new.save(tmp_path / "new.yaml")
    assert streamcert(["diff", str(a), str(a)]) == 0 and capsys.readouterr().out == ""
    assert streamcert(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    assert "statusUpdate COMPLETED" in out and "statusUpdate FAILED" in out and "(another kind)" not in out
    assert streamcert(["diff", str(a), str(b), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["differences"] == 2 and doc["scenario"] == "stream-basic"  # the kind row, the state field
    (stream,) = doc["exchanges"]
    assert stream["exchange"] == "stream" and stream["frames"]["new"][8] == "statusUpdate FAILED"
    assert stream["fields"][0]["path"] == "result.statusUpdate.status.state"
    assert streamcert(["diff", str(a), str(tmp_path / "missing.yaml")]) == 2
    assert "missing.yaml" in capsys.readouterr().err
    Path(tmp_path / "other.yaml").write_bytes((SHIPPED / "card.yaml").read_bytes())
    assert streamcert(["diff", str(a), str(tmp_path / "other.yaml")]) == 2
    assert "different scenarios" in capsys.readouterr().err
