"""Evidence is quoted, never copied (issue 25): every finding is bounded where it is made (limits.py), and a
report stays within a few MiB whatever the other side sent. The heavy cases (a 64 MiB status text, a chatty
agent) are measured by bench/hostile.py; here are their small twins."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from streamcert import limits
from streamcert.catalogue import load_catalogue
from streamcert.cli import main
from streamcert.framelog import Chunk, FrameLog
from streamcert.outcomes import Finding, Outcome
from streamcert.report.aggregate import Aggregator, build_report
from streamcert.report.writers import write_all

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes" / "reference"
MIB = 1024 * 1024
REPORT_FILES = ("compatibility.json", "junit.xml", "report.html", "report.md")


def test_a_long_text_is_cut_with_its_size_and_hash():
    text = "é" * 100_000 + "tail"
    shown = limits.cut(text, 2048)
    assert len(shown) <= 2048
    assert shown.startswith("é" * 100) and shown.endswith("tail")  # the head and the tail are kept
    assert "100004 characters" in shown and "195.3 KiB" in shown
    assert hashlib.sha256(text.encode()).hexdigest() in shown
    assert limits.cut(shown, 2048) == shown  # cutting twice changes nothing
    assert limits.cut("short", 2048) == "short"


def test_a_cut_hashes_the_text_a_slice_at_a_time_as_its_whole_encoding(monkeypatch):
    """The hash and size of a cut text are the whole text's UTF-8 (a lone surrogate as `surrogatepass` writes it),
    with slices ending anywhere, inside a run of multi-byte characters too: a 64 MiB text is not encoded whole."""
    monkeypatch.setattr(limits, "HASH_SLICE", 7)
    text = "a€😀\udcff" * 1000 + "b"
    data = text.encode("utf-8", "surrogatepass")
    shown = limits.cut(text, 300)
    assert hashlib.sha256(data).hexdigest() in shown and f"{len(text)} characters" in shown
    assert limits.show(len(data), "bytes") in shown


def test_a_finding_is_bounded_where_it_is_made_and_stays_so_through_json():
    big = "x" * (2 * MIB)
    finding = Finding("A2A-TASK-001", Outcome.FAIL, f"state {big!r} [a source]",
                      evidence=[{"exchange": "get_task", "body": big, "nested": {"list": [big] * 50}}] * 30,
                      measured={"text": big}, reading=big)
    assert len(finding.message) <= limits.MESSAGE_CHARS and finding.message.endswith("[a source]")
    assert len(finding.evidence) == limits.EVIDENCE_ITEMS
    assert "21 more evidence item(s)" in finding.evidence[-1]["note"]
    for item in finding.evidence[:-1]:
        assert len(json.dumps(item)) <= limits.EVIDENCE_ITEM_CHARS + limits.MIN_QUOTE_CHARS * 2
        assert item["exchange"] == "get_task"
    assert len(json.dumps(finding.measured)) < 2 * limits.QUOTE_CHARS
    assert len(finding.reading) <= limits.MESSAGE_CHARS
    again = Finding.from_json(json.loads(json.dumps(finding.to_json())))
    assert again.to_json() == finding.to_json()


def test_a_small_finding_is_kept_as_it_is():
    item = {"exchange": "stream", "frame": 3, "t": 0.25, "data": '{"a": 1}', "ok": True, "none": None}
    finding = Finding("WIRE-001", Outcome.FAIL, "one bad frame", evidence=[item], measured={"gap_s": 1.5})
    assert finding.evidence == [item] and finding.measured == {"gap_s": 1.5}


def test_check_of_a_2_mib_state_quotes_it_and_keeps_every_report_small(tmp_path, capsys):
    """The twin of a 64 MiB status text: a GetTask answer whose state is 2 MiB long. A2A-TASK-001 still FAILs on
    it, its message quotes the state with the cut note, and no report file grows with it."""
    log = FrameLog.load(CASSETTES / "stream-basic.yaml")
    state = "X" * (2 * MIB)
    for ex in log.exchanges:
        if ex.label.startswith("get_task"):
            ex.chunks = [Chunk(ex.chunks[0].t, ex.body.replace(b"TASK_STATE_COMPLETED", state.encode()))]
    path = log.save(tmp_path / "stream-basic.yaml")
    assert main(["check", str(path), "--report", str(tmp_path / "report")]) == 1
    said = capsys.readouterr().out
    assert len(said) < 64 * 1024
    report = json.loads((tmp_path / "report" / "compatibility.json").read_text("utf-8"))
    task = next(r for r in report["requirements"] if r["id"] == "A2A-TASK-001")
    assert task["status"] == "FAIL"
    assert re.search(r"…\[cut: 209\d{4} characters, 2 MiB, sha256 [0-9a-f]{64}\]…", task["message"])
    assert "but the stream ended in TASK_STATE_COMPLETED" in task["message"]
    for name in REPORT_FILES:
        assert (tmp_path / "report" / name).stat().st_size < 512 * 1024, name


def test_every_requirement_failing_with_big_evidence_keeps_the_report_within_a_few_mib(tmp_path):
    """The bound that holds whatever the server sent: each of the catalogue's requirements FAILs in several
    tests, each finding with ten big evidence items and a big message; the report's evidence keeps to
    REPORT_EVIDENCE_CHARS and every file to a few MiB."""
    big = "y" * (64 * 1024)
    agg = Aggregator()
    for n in range(2):
        agg.add(f"t.py::t{n}", [Finding(rid, Outcome.FAIL, f"{n} {big}",
                                        evidence=[{"exchange": f"e{k}", "data": big} for k in range(10)])
                                for rid in load_catalogue()])
    report = build_report(agg, selected_profiles={r.profile for r in load_catalogue().values()}, level="may",
                          target={"a2a_url": "http://127.0.0.1:1"}, started="s", finished="f")
    evidence = sum(len(json.dumps(item, ensure_ascii=False)) for r in report["requirements"] for item in r["evidence"])
    assert evidence <= limits.REPORT_EVIDENCE_CHARS
    assert all(r["evidence"] and r.get("evidence_omitted") for r in report["requirements"])
    write_all(report, tmp_path)
    for name in REPORT_FILES:
        assert (tmp_path / name).stat().st_size < 8 * MIB, name


def test_what_an_agent_that_ignores_the_script_said_is_quoted_in_the_note():
    """The script probe's verdict (a note of the log, in its cassette too) quotes the texts the agent said instead:
    a 2 MiB status text is cut with its size and hash, not copied (a 64 MiB one was held four times over)."""
    from hostile import HostileServer
    from hostile_cases import LongStatus

    from streamcert.drivers import Target, run_scenario
    from streamcert.protocols.script import IGNORED_NOTE

    with HostileServer(LongStatus(2 * MIB), lifetime=60) as server:
        log = run_scenario("stream-basic", Target(a2a_url=server.url, timeout=20, stream_limit=20))
    ignored = log.notes[IGNORED_NOTE]
    assert "showed neither text" in ignored and len(ignored) < 2 * limits.MIN_QUOTE_CHARS + 400, len(ignored)
    assert re.search(r"\[cut: 2097152 characters, 2 MiB, sha256 [0-9a-f]{64}\]", ignored), ignored
