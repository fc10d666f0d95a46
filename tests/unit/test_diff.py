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

from streamcert.cli import main as streamcert
from streamcert.framelog import Chunk, Event, Exchange, FrameLog
from streamcert.recordings import cassette
from streamcert.recordings.capture_diff import diff_logs
from streamcert.recordings.capture_shape import kind_of

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


def frames_rewritten(log: FrameLog, change) -> FrameLog:
    """A copy of `log` with the JSON of every frame (every unary body) rewritten by `change`."""
    new = copy.deepcopy(log)
    for ex in new.exchanges:
        if ex.events:
            for n, ev in enumerate(ex.data_events()):
                value, err = ev.json()
                if err is None:
                    edit(ex, n, lambda v, value=value: (v.clear(), v.update(change(value))))
        elif ex.chunks:
            value, err = ex.json()
            if err is None:
                ex.chunks = [Chunk(ex.chunks[-1].t, json.dumps(change(value)).encode())]
    return FrameLog.from_json(new.to_json())  # nothing cached


def wire(log: FrameLog) -> list:
    return [(ex.wire_bytes, [ev.data for ev in ex.events]) for ex in log.exchanges]


def reversed_keys(value):
    if isinstance(value, dict):
        return {k: reversed_keys(value[k]) for k in reversed(list(value))}
    return [reversed_keys(v) for v in value] if isinstance(value, list) else value


def numbers_as_doubles(value, key=None):
    """Every integer written as a double (11 → 11.0), as a gRPC Value holds it; a JSON-RPC answer's `id` left."""
    if isinstance(value, dict):
        return {k: v if k == "id" and "jsonrpc" in value else numbers_as_doubles(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [numbers_as_doubles(v, key) for v in value]
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def with_keep_alives(log: FrameLog) -> FrameLog:
    """A copy with a keep-alive comment before every frame of every stream (a recording on a slower day)."""
    new = copy.deepcopy(log)
    for ex in new.exchanges:
        if ex.is_sse:
            events = []
            for ev in ex.events:
                events += [Event(index=0, t=ev.t, kind="comment", data="keep-alive"), ev]
            for n, ev in enumerate(events):
                ev.index = n
            ex.events = events
    return new


def test_what_json_and_sse_leave_open_is_no_difference():
    for name in ("stream-basic", "ix-answer-forms", "list-tasks", "progress-writer"):
        old = shipped(name)
        for made in (reversed_keys, numbers_as_doubles):
            new = frames_rewritten(old, made)
            assert wire(new) != wire(old), (name, made.__name__)  # the change was made
            assert diff_logs(old, new).lines() == [], (name, made.__name__)
        slower = with_keep_alives(old)
        assert wire(slower) != wire(old) or not any(ex.is_sse for ex in old.exchanges), name
        assert diff_logs(old, slower).lines() == [], name
    # Each can still fail: another value, another number, another member are differences.
    old = shipped()
    assert diff_logs(old, frames_rewritten(old, lambda v: {**v, "extra": 11})).count
    assert diff_logs(old, frames_rewritten(old, lambda v: {**v, "extra": 11}),
                     ).count == diff_logs(old, frames_rewritten(old, lambda v: {**v, "extra": 11.0})).count
    other = diff_logs(frames_rewritten(old, lambda v: {**v, "n": 11}), frames_rewritten(old, lambda v: {**v, "n": 11.5}))
    fields = [f for ex in other.exchanges for f in ex.fields]
    assert other.count == len(fields) >= 9 and {(f["path"], f["old"], f["new"]) for f in fields} == {("n", 11, 11.5)}


def test_a_json_object_quoted_in_a_text_compares_by_value():
    old = shipped()

    def final_text(text):
        new = copy.deepcopy(old)
        edit(new.get("stream"), 8, lambda v: v["result"]["statusUpdate"]["status"]["message"]["parts"][0].update(
            text=text))
        return new

    before = final_text('S8: {"region": "eu-west", "replicas": 3} and {"a": [1, {"b": 2, "c": 3}]}')
    assert diff_logs(before, final_text('S8: {"replicas": 3.0, "region": "eu-west"} and {"a": [1, {"c": 3, "b": 2}]}'),
                     ).lines() == []
    (line,) = diff_logs(before, final_text('S8: {"replicas": 4, "region": "eu-west"} and {"a": [1, {"c": 3, "b": 2}]}'),
                        ).lines()
    assert FINAL_TEXT in line and '"replicas": 4' in line
    assert diff_logs(final_text("a { not JSON"), final_text("a { not JSON either")).count == 1


def test_a_moved_frame_is_one_row_and_two_swapped_frames_say_so():
    old = shipped()
    moved = copy.deepcopy(old)
    events = moved.get("stream").events
    events.insert(6, events.pop(2))  # frame 3 now comes after frame 7
    diff = diff_logs(old, moved, tolerance_s=None)
    marked = [ln for ln in diff.lines() if ln.startswith(("  >", "  s", "  -", "  +", "  ~"))]
    assert diff.count == 1 and len(marked) == 1, "\n".join(diff.lines())
    assert marked[0].startswith("  >   3 artifactUpdate test-log ") and "7 artifactUpdate test-log" in marked[0] \
        and "moved" in marked[0]
    swapped = copy.deepcopy(old)
    events = swapped.get("stream").events
    events[3], events[4] = events[4], events[3]
    diff = diff_logs(old, swapped, tolerance_s=None)
    marked = [ln for ln in diff.lines() if ln.startswith(("  >", "  s", "  -", "  +", "  ~"))]
    assert diff.count == 1 and len(marked) == 2 and all("(swapped)" in ln for ln in marked), "\n".join(diff.lines())
    assert diff.to_json()["exchanges"][0]["frames"]["rows"][3:5] == [{"mark": "s", "old": 4, "new": 5},
                                                                     {"mark": "s", "old": 5, "new": 4}]


def test_a_removed_next_page_token_is_one_line(tmp_path):
    old = shipped("list-tasks")
    new = copy.deepcopy(old)
    page = new.get("list_page1")
    value = json.loads(page.wire_bytes)
    assert value["result"].pop("nextPageToken")
    page.chunks = [Chunk(page.chunks[-1].t, json.dumps(value).encode())]
    new = FrameLog.load(new.save(tmp_path / "new.yaml"))  # read back: the body as written, nothing cached
    assert diff_logs(old, new).lines() == ["list_page1: body · result.nextPageToken: removed (was '<string, first "
                                           "seen here>')"]


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
               "as at stream frame 1 result.task.history[0].taskId" in ln and "first seen here" in ln for ln in fields)
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
    assert streamcert(["diff", str(a), str(a)]) == 0 and capsys.readouterr().out == "no differences\n"
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


def test_a_long_stream_is_aligned_on_anchors_not_paired_by_position(monkeypatch):
    """Past ALIGN_LIMIT frames (here lowered, to keep the test small) difflib, quadratic, gives way to anchors
    (frames found once on each side): a dropped, an added and a changed frame are still three differences, not a
    cascade of every frame after the first (issue 25: `diff` linear in frames; bench/diff.py measures it)."""
    import logs

    from streamcert.recordings import capture_diff

    monkeypatch.setattr(capture_diff, "ALIGN_LIMIT", 40)
    chunks = [logs.artifact_update("a1", text=f"token {n}", append=n > 0) for n in range(600)]
    old = logs.frame_log(logs.sse("stream", [logs.stream_task(), *chunks]), scenario="stream-basic")
    changed = list(chunks)
    changed[250] = logs.artifact_update("a1", text="token two hundred fifty", append=True)
    del changed[100]
    changed.insert(400, logs.artifact_update("a1", text="an added token", append=True))
    new = logs.frame_log(logs.sse("stream", [logs.stream_task(), *changed]), scenario="stream-basic")
    diff = diff_logs(old, new, tolerance_s=None)
    marks = [(m, i, j) for m, i, j in diff.exchanges[0].rows if m != " "]
    assert diff.count == 3, "\n".join(diff.lines())
    assert ("-", 102, None) in marks and ("+", None, 402) in marks
    assert [f["old_frame"] for f in diff.exchanges[0].fields] == [252]


def test_anchored_alignment_agrees_with_difflib_where_items_are_unique(monkeypatch):
    from difflib import SequenceMatcher

    from streamcert.recordings import capture_diff

    old = [f"f{n}" for n in range(300)]
    new = old[:50] + ["x", "y"] + old[50:120] + old[130:200] + ["z"] + old[200:]
    new[250] = "changed"
    monkeypatch.setattr(capture_diff, "ALIGN_LIMIT", 20)
    assert capture_diff._opcodes(old, new) == SequenceMatcher(None, old, new, autojunk=False).get_opcodes()


def test_a_capture_keeps_a_digest_and_a_kind_a_frame_not_its_parse():
    """Issue 25: the diff of two 100 000-frame cassettes held every frame's parse (763 MiB at its peak). What a
    Capture keeps for a frame is its kind and a 16-byte digest of its content; a payload is parsed again when a
    pair is compared (`Capture.payload`). Measured with tracemalloc: what it keeps grows by well under 250 bytes a
    frame (the parses cost about 2 KiB a frame), and the diff found is the same."""
    import tracemalloc

    import logs

    from streamcert import framelog
    from streamcert.recordings import capture_shape

    chunks = [logs.artifact_update("a1", text=f"token {n} " + "t" * 100, append=n > 0) for n in range(4000)]
    log = logs.frame_log(logs.sse("stream", [logs.stream_task(), *chunks]), scenario="stream-basic")
    for ex in log.exchanges:  # the log keeps no parse (as past its parse budget): what is kept is the Capture's
        framelog.budgeted(ex.events, 0)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        capture = capture_shape.Capture(log)
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    key = next(iter(capture.exchanges))
    assert {len(digest) for digest in capture.contents(key)} == {16}
    assert capture.payload(key, 2)["result"]["artifactUpdate"]["artifact"]["parts"][0]["text"].startswith("token 1 ")
    assert kept < 250 * len(chunks), f"{kept / len(chunks):.0f} bytes a frame"


def test_the_diff_loads_frames_not_bytes_and_never_holds_a_cassettes_frames_as_mappings(tmp_path):
    """Issue 25: `diff` of two 100 000-frame cassettes peaked at 263 MiB: each log held its chunks beside its frames,
    and the loader built every frame as a mapping (and the body as bytes) before the events, whose texts then sat
    among the mappings' leftovers. `streamcert diff` loads a cassette without a stream's bytes (`stream_bytes`: the
    frames alone, the bytes counted against the chunks, not kept), and the loader makes each frame's Event when the
    frame's mapping ends. The events are those of a whole load; the same diff is found."""
    import tracemalloc

    import logs

    from streamcert.running.offline import diff_cassettes

    chunks = [logs.artifact_update("a1", text=f"token {n} " + "t" * 100, append=n > 0) for n in range(3000)]
    log = logs.frame_log(logs.card_get(), logs.sse("stream", [logs.stream_task(), *chunks]), scenario="stream-basic")
    log.notes["frames"] = log.get("stream").notes["frames"] = [{"i": 0, "t": 1.0, "data": "a note, not a frame"}]
    path = cassette.write(log, tmp_path / "c.yaml")
    measured = {}
    for stream_bytes in (True, False):
        tracemalloc.start()
        try:
            loaded = cassette.load(path, stream_bytes=stream_bytes)
            measured[stream_bytes] = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        if stream_bytes:
            whole = loaded
    lean = loaded
    stream, card = lean.get("stream"), lean.get("card")
    assert stream.chunks == [] and whole.get("stream").chunks  # a stream's bytes are not kept ...
    assert card.chunks and card.body == whole.get("card").body  # ... an answer without frames keeps its body
    assert [(e.index, e.t, e.kind, e.data) for e in stream.events] == \
        [(e.index, e.t, e.kind, e.data) for e in whole.get("stream").events]
    assert lean.notes["frames"] == stream.notes["frames"] == [{"i": 0, "t": 1.0, "data": "a note, not a frame"}]
    body = sum(c.length for c in whole.get("stream").chunks)
    (kept, peak), (lean_kept, _) = measured[True], measured[False]
    # beside the log while loading: the body's text and bytes (3.3 times the body when every frame was a mapping)
    assert peak - kept < 2.8 * body, f"{(peak - kept) / body:.2f} times the body beside the log while loading"
    assert lean_kept < 0.85 * kept, f"without a stream's bytes the log keeps {lean_kept / kept:.2f} of itself"
    assert diff_cassettes(path, path).count == 0
    text = path.read_text()
    at = text.rindex("chunks:")  # the stream's: its first chunk one byte longer, the chunks no longer add up
    broken = text[:at] + re.sub(r", (\d+)\]", lambda m: f", {int(m[1]) + 1}]", text[at:], count=1)
    (tmp_path / "b.yaml").write_text(broken)
    for stream_bytes in (True, False):
        try:
            cassette.load(tmp_path / "b.yaml", stream_bytes=stream_bytes)
        except cassette.CassetteError as exc:
            assert "its chunks add up to" in str(exc)
        else:
            raise AssertionError("a cassette whose chunks do not add up to its body was read")
