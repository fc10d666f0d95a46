"""The shipped reference cassettes: judged offline by the same rules, they pass; tampered, they fail
on the requirement the tampering breaks."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from streamcert.catalogue import load_scenario
from streamcert.framelog import FrameLog
from streamcert.offline import check_cassettes
from streamcert.outcomes import Outcome
from streamcert.rules import RuleContext, judge

CASSETTES = resources.files("streamcert.cassettes") / "reference"


def cassette_paths() -> list[Path]:
    return sorted(Path(str(p)) for p in CASSETTES.iterdir() if p.name.endswith(".json"))


def test_every_a2a_scenario_has_a_reference_cassette():
    names = {p.stem for p in cassette_paths()}
    assert {"card", "stream-basic", "stream-fail", "list-tasks", "cancel-subscribe", "errors", "no-streaming"} <= names


def test_reference_cassettes_pass_offline(tmp_path, capsys):
    report = check_cassettes(cassette_paths(), tmp_path)
    assert report["verdict"] == "PASS", [r for r in report["requirements"] if r["status"] != "PASS"]
    assert (tmp_path / "compatibility.json").is_file()
    assert "streamcert verdict: PASS" in capsys.readouterr().out


def test_a_tampered_cassette_fails_on_the_broken_requirement():
    path = CASSETTES / "stream-basic.json"
    log = FrameLog.from_json(json.loads(path.read_text("utf-8")))
    stream = log.get("stream")
    # Drop frame 1 (the Task): the stream no longer begins with it.
    first = stream.data_events()[0]
    stream.events = [e for e in stream.events if e is not first]
    scenario = load_scenario("stream-basic")
    findings = {f.req_id: f for f in judge(log, ["A2A-STREAM-001"], RuleContext(scenario=scenario))}
    assert findings["A2A-STREAM-001"].outcome == Outcome.FAIL
    assert "not the Task" in findings["A2A-STREAM-001"].message


def test_cassette_round_trip_is_lossless(tmp_path):
    for path in cassette_paths():
        log = FrameLog.load(path)
        again = FrameLog.load(log.save(tmp_path / path.name))
        assert again.to_json() == log.to_json()
