"""Baselines (report/baseline.py): YAML and JSON files, entries with a reason and a scenario, scoping by the
scenario of each failing test, `streamcert baseline REPORT`, and the round trip: a baseline written from a
failing report excuses exactly those failures; an entry that passes again is stale; a mistyped id is refused."""

from __future__ import annotations

import json

import pytest
import yaml

from streamcert.catalogue import load_catalogue
from streamcert.cli import main
from streamcert.outcomes import Finding, Outcome
from streamcert.report.aggregate import Aggregator, build_report
from streamcert.report.baseline import (
    BaselineError,
    Expected,
    baseline_entries,
    baseline_from_report,
    baseline_yaml,
    load_baseline,
)

TARGET = {"a2a": "http://127.0.0.1:41241", "acp": None, "progress": None, "client": None, "fault": None,
          "embedded": False}
P, F, E = Outcome.PASS, Outcome.FAIL, Outcome.ERROR
ERRORS = "suite/test_a2a_errors.py::test_errors"  # drives the scenario errors
BASIC = "suite/test_a2a_stream.py::test_stream_basic"  # stream-basic
CARD = "suite/test_a2a_card.py::test_card"  # card
MINE = "tests/test_mine.py::test_other"  # not a suite test: no scenario
# Four a2a MUSTs of the shipped catalogue: WIRE-003 is exercised by errors and stream-basic (and others).
CATALOGUE = {rid: load_catalogue()[rid] for rid in ("WIRE-003", "A2A-CARD-001", "A2A-STREAM-001", "A2A-ERR-002")}


@pytest.fixture(scope="module")
def validator():
    from report_cases import report_validator  # tests/common/report_cases.py: the schema of compatibility.json

    return report_validator()


def agg_of(*tests: tuple[str, list[Finding]]) -> Aggregator:
    agg = Aggregator()
    for nodeid, findings in tests:
        agg.add(nodeid, findings)
    return agg


def report_of(agg: Aggregator, baseline=None) -> dict:
    return build_report(agg, selected_profiles={"a2a"}, level="may", target=TARGET,
                        started="2026-11-30T12:00:00.000Z", finished="2026-11-30T12:00:05.000Z",
                        baseline=baseline, catalogue=CATALOGUE)


def entry(report: dict, req_id: str) -> dict:
    return next(e for e in report["requirements"] if e["id"] == req_id)


def failing_run() -> Aggregator:
    return agg_of(
        (ERRORS, [Finding("A2A-ERR-002", F, "GetTask on an unknown id got -32603 [A2A 1.0.1 · §3.1.3 ¶2 (\"[x]\")]"
                                            "\nsecond line"),
                  Finding("WIRE-003", F, "id 0 answered with id null")]),
        (BASIC, [Finding("WIRE-003", P), Finding("A2A-STREAM-001", P)]),
        (CARD, [Finding("A2A-CARD-001", E, "harness fault while driving card: boom")]),
    )


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


# -- the round trip ----------------------------------------------------------------------------------------

def test_round_trip_expected_stale_and_mistyped(tmp_path, capsys, validator):
    failing = report_of(failing_run())
    assert failing["verdict"] == "FAIL"
    report_file = write(tmp_path, "compatibility.json", json.dumps(failing))

    # streamcert baseline REPORT -o FILE
    assert main(["baseline", str(report_file), "-o", str(tmp_path / "expected.yaml")]) == 0
    assert "3 expected failure(s) written" in capsys.readouterr().err
    text = (tmp_path / "expected.yaml").read_text("utf-8")
    assert text.startswith("# streamcert baseline") and "EDIT EACH REASON" in text
    assert yaml.safe_load(text) == {"expected_failures": [
        {"id": "WIRE-003", "reason": "id 0 answered with id null"},  # judged in two scenarios: not scoped
        {"id": "A2A-CARD-001", "reason": "harness fault while driving card: boom", "scenario": "card"},
        {"id": "A2A-ERR-002", "reason": "GetTask on an unknown id got -32603", "scenario": "errors"},
    ]}

    # The same failures again, with the baseline: excused, each with its reason; the verdict is PASS.
    again = report_of(failing_run(), baseline=load_baseline(tmp_path / "expected.yaml", CATALOGUE))
    assert again["verdict"] == "PASS" and again["stale_baseline"] == []
    assert again["expected_failures"] == ["WIRE-003", "A2A-CARD-001", "A2A-ERR-002"]
    assert entry(again, "A2A-ERR-002")["status"] == "FAIL"  # the status stays
    assert entry(again, "A2A-ERR-002")["baseline_reason"] == "GetTask on an unknown id got -32603"
    validator.validate(again)

    # A2A-ERR-002 passes now: its entry is stale and fails the run.
    fixed = agg_of((ERRORS, [Finding("A2A-ERR-002", P), Finding("WIRE-003", F, "id 0 answered with id null")]),
                   (BASIC, [Finding("WIRE-003", P), Finding("A2A-STREAM-001", P)]),
                   (CARD, [Finding("A2A-CARD-001", E, "boom")]))
    stale = report_of(fixed, baseline=load_baseline(tmp_path / "expected.yaml", CATALOGUE))
    assert stale["verdict"] == "FAIL" and stale["stale_baseline"] == ["A2A-ERR-002"]
    assert entry(stale, "A2A-ERR-002")["baseline"] == "stale"
    validator.validate(stale)

    # A mistyped id: refused at start, with what it was near; `streamcert run` exits 2 before running anything.
    typo = write(tmp_path, "typo.yaml", text.replace("id: A2A-ERR-002", "id: A2A-ERR-0002"))
    with pytest.raises(ValueError, match=r"A2A-ERR-0002 \(did you mean A2A-ERR-002\?\)"):
        load_baseline(typo)
    with pytest.raises(SystemExit) as stop:
        main(["run", "--baseline", str(typo), "--report", str(tmp_path / "rep")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.splitlines()) == 1 and "did you mean A2A-ERR-002?" in err
    assert not (tmp_path / "rep").exists()


def test_baseline_command_to_stdout_from_a_directory_and_its_refusals(tmp_path, capsys):
    (tmp_path / "rep").mkdir()
    write(tmp_path / "rep", "compatibility.json", json.dumps(report_of(failing_run())))
    assert main(["baseline", str(tmp_path / "rep")]) == 0
    out = capsys.readouterr().out
    assert [e["id"] for e in yaml.safe_load(out)["expected_failures"]] == ["WIRE-003", "A2A-CARD-001", "A2A-ERR-002"]
    assert f"# {load_catalogue()['WIRE-003'].level}: " in out  # each entry under its level and sentence

    target = write(tmp_path, "mine.yaml", "keep me")
    assert main(["baseline", str(tmp_path / "rep"), "-o", str(target)]) == 2
    assert "give --overwrite" in capsys.readouterr().err and target.read_text() == "keep me"
    assert main(["baseline", str(tmp_path / "rep"), "-o", str(target), "--overwrite"]) == 0
    assert "expected_failures:" in target.read_text() and "written to" in capsys.readouterr().err

    unreachable = report_of(Aggregator()) | {"could_not_run": "cannot reach http://127.0.0.1:1"}
    for name, text, words in [("down.json", json.dumps(unreachable), "nothing was judged"),
                              ("bad.json", "{not json", "bad.json"),
                              ("list.json", "[]", "not a compatibility.json")]:
        assert main(["baseline", str(write(tmp_path, name, text))]) == 2, name
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and words in err, err
    assert main(["baseline", str(tmp_path / "missing.json")]) == 2
    assert "cannot read it" in capsys.readouterr().err


def test_a_written_reason_is_the_first_message_line_without_its_citation_and_short():
    long = "x" * 300 + " [JSON-RPC 2.0 · §5]"
    report = report_of(agg_of((ERRORS, [Finding("A2A-ERR-002", F, long), Finding("WIRE-003", E, "")])))
    written = {item["id"]: item["reason"] for item in baseline_from_report(report)}
    assert written["A2A-ERR-002"] == "x" * 159 + "…"
    assert written["WIRE-003"] == "ERROR in the report of 2026-11-30T12:00:00.000Z"  # no message: still a reason


def test_a_passing_report_gives_an_empty_baseline():
    passing = report_of(agg_of((BASIC, [Finding(r, P) for r in CATALOGUE])))
    text = baseline_yaml(passing, "rep/compatibility.json")
    assert yaml.safe_load(text) == {"expected_failures": []} and baseline_from_report(passing) == []


# -- scenario scoping -------------------------------------------------------------------------------------

@pytest.mark.parametrize("scenario, failing_in, expected", [
    ("errors", [ERRORS], "expected"),
    ("errors", [ERRORS, BASIC], None),  # also failing elsewhere: not the failure excused
    ("stream-basic", [ERRORS], None),
    (["errors", "stream-basic"], [ERRORS, BASIC], "expected"),
    ("errors", [MINE], None),  # a test whose scenario is unknown is never in the scope
    (None, [ERRORS, BASIC, MINE], "expected"),  # no scenario: any
])
def test_a_scenario_scopes_an_entry_to_the_failures_found_there(scenario, failing_in, expected, validator):
    item = {"id": "WIRE-003", "reason": "known: ticket 12"} | ({"scenario": scenario} if scenario else {})
    agg = agg_of(*[(test, [Finding("WIRE-003", F, "id 0 answered with id null")]) for test in failing_in],
                 (CARD, [Finding(r, P) for r in CATALOGUE if r != "WIRE-003"]),
                 (BASIC if BASIC not in failing_in else CARD, [Finding("WIRE-003", P)]))
    report = report_of(agg, baseline={"expected_failures": [item]})
    wire = entry(report, "WIRE-003")
    assert (wire["status"], wire.get("baseline"), wire["baseline_reason"]) == ("FAIL", expected, "known: ticket 12")
    assert report["verdict"] == ("PASS" if expected else "FAIL")
    if not expected:
        assert wire["baseline_scenarios"] == sorted([scenario] if isinstance(scenario, str) else scenario)
        assert report["expected_failures"] == []
    validator.validate(report)  # the published schema of compatibility.json


# -- reading both formats ----------------------------------------------------------------------------------

YAML_BASELINE = """\
# why each is expected
expected_failures:
  - WIRE-003                 # a bare id, as before
  - id: A2A-ERR-002
    reason: "-32603 for an unknown task: fixed in 2.3"
    scenario: errors
"""


@pytest.mark.parametrize("name, text", [
    ("expected.yaml", YAML_BASELINE),
    ("expected.yml", YAML_BASELINE),
    ("expected", YAML_BASELINE),  # another name: JSON, else YAML
    ("expected.json", json.dumps({"expected_failures": [
        "WIRE-003", {"id": "A2A-ERR-002", "reason": "-32603 for an unknown task: fixed in 2.3", "scenario": "errors"}]})),
])
def test_yaml_and_json_baselines_read_alike(tmp_path, name, text):
    document = load_baseline(write(tmp_path, name, text))
    assert baseline_entries(document) == {
        "WIRE-003": Expected("WIRE-003"),
        "A2A-ERR-002": Expected("A2A-ERR-002", "-32603 for an unknown task: fixed in 2.3", frozenset({"errors"})),
    }


def test_a_previous_compatibility_json_is_read_by_its_statuses(tmp_path):
    previous = report_of(failing_run(), baseline={"expected_failures": ["A2A-ERR-002"]})
    assert previous["expected_failures"] == ["A2A-ERR-002"]  # only what that baseline excused …
    document = load_baseline(write(tmp_path, "compatibility.json", json.dumps(previous)))
    assert set(baseline_entries(document)) == {"WIRE-003", "A2A-CARD-001", "A2A-ERR-002"}  # … every failure here
    assert report_of(failing_run(), baseline=document)["verdict"] == "PASS"


@pytest.mark.parametrize("item, words", [
    ({"id": "WIRE-003"}, "needs a `reason`"),
    ({"id": "WIRE-003", "reason": "  "}, "needs a `reason`"),
    ({"id": "WIRE-003", "reason": "r", "scenarios": "errors"}, "unknown key(s) scenarios"),
    ({"id": 3, "reason": "r"}, "`id` must be a requirement id"),
    ({"id": "WIRE-003", "reason": "r", "scenario": 7}, "`scenario` must be a scenario id"),
    ({"id": "WIRE-003", "reason": "r", "scenario": []}, "`scenario` must be a scenario id"),
    (7, "expected an id or {id, reason, scenario}"),
])
def test_a_malformed_entry_is_refused_naming_it(item, words):
    with pytest.raises(BaselineError) as refused:
        baseline_entries({"expected_failures": ["A2A-ERR-002", item]})
    assert "entry 2" in str(refused.value) and words in str(refused.value)


def test_an_id_listed_twice_is_refused():
    with pytest.raises(BaselineError, match="WIRE-003 is listed twice"):
        baseline_entries({"expected_failures": ["WIRE-003", {"id": "WIRE-003", "reason": "r", "scenario": "errors"}]})


@pytest.mark.parametrize("name, text, words", [
    ("b.json", YAML_BASELINE, "b.json: not JSON"),
    ("b.yaml", "expected_failures: [WIRE-003\n", "b.yaml: not YAML"),
    ("b", "{oops: [", "b: neither JSON nor YAML"),
    ("b.yaml", "- WIRE-003\n", 'b.yaml: expected {"expected_failures"'),
    ("b.yaml", "expected_failures:\n  - id: WIRE-003\n", "b.yaml: expected_failures entry 1 (WIRE-003): "),
    ("b.yaml", "expected_failures:\n  - id: WIRE-003\n    reason: r\n    scenario: eror\n",
     "WIRE-003: no scenario eror (did you mean errors?)"),
    ("b.yaml", "expected_failures:\n  - id: A2A-ERR-002\n    reason: r\n    scenario: card\n",
     "A2A-ERR-002: scenario card does not exercise it (these do: errors)"),
])
def test_a_bad_file_is_refused_in_one_line(tmp_path, name, text, words):
    with pytest.raises(ValueError) as refused:
        load_baseline(write(tmp_path, name, text))
    message = str(refused.value)
    assert words in message and "\n" not in message, message
