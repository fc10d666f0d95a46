"""Selecting by requirement and scenario (--requirement GLOB, --scenario GLOB, -k ID, -m streamcert_profile)
and what the report says of what a narrowed run left out (docs/contracts.md §3: NOT_TESTED "not selected", so a narrowed
run never certifies). The pytest runs are in-process and --collect-only: nothing is driven."""

from __future__ import annotations

import argparse
import json

import pytest

import streamcert.report.writers  # noqa: F401  (loaded before pytester's in-process runs, which unload what they import)
from streamcert import cli
from streamcert.catalogue import load_catalogue, load_scenario, scenario_ids
from streamcert.outcomes import Finding, Outcome
from streamcert.report.aggregate import Aggregator, build_report
from streamcert.running import selection

pytest_plugins = ["pytester"]

SUITE = ("--pyargs", "streamcert.suite", "-p", "no:cacheprovider")


def collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line]


def report_of(result: pytest.RunResult, folder) -> dict:
    return json.loads((folder / "compatibility.json").read_text("utf-8"))


@pytest.fixture
def no_reference(monkeypatch):
    """Fail a test that would start the embedded reference (nothing here needs one)."""
    from streamcert.reference.process import ReferenceProcess

    def refuse(self):
        raise AssertionError("the embedded reference was started")

    monkeypatch.setattr(ReferenceProcess, "start", refuse)


# -- the globs -------------------------------------------------------------------------------------------

def test_a_glob_that_matches_nothing_is_refused_with_a_suggestion():
    with pytest.raises(argparse.ArgumentTypeError, match=r"did you mean A2A-STREAM-004\?"):
        selection.requirement_glob("A2A-STREM-004")
    with pytest.raises(argparse.ArgumentTypeError, match=r"did you mean A2A-STREAM-\*\?"):
        selection.requirement_glob("A2A-STREM-*")
    with pytest.raises(argparse.ArgumentTypeError, match=r"did you mean stream-basic\?"):
        selection.scenario_glob("stream-basik")
    with pytest.raises(argparse.ArgumentTypeError, match="empty"):
        selection.scenario_glob(" ")
    assert selection.requirement_glob("a2a-stream-00?") == "a2a-stream-00?"  # any case
    assert selection.scenario_glob("ix-*") == "ix-*"


def test_chosen_scenarios_are_those_exercising_a_matched_requirement():
    assert selection.chosen_scenarios() is None
    assert selection.chosen_scenarios(["A2A-STREAM-004"]) == {"stream-basic", "stream-fail", "cancel-subscribe"}
    assert selection.chosen_scenarios([], ["stream-*"]) == {"stream-basic", "stream-fail"}
    assert selection.chosen_scenarios(["A2A-STREAM-004"], ["*-fail"]) == {"stream-fail"}
    every = selection.chosen_scenarios(["*"])
    assert every == set(scenario_ids())


def test_refuse_names_the_flag_the_user_wrote():
    flags = {"requirements": "--requirement", "scenarios": "--scenario"}
    assert selection.refuse({"requirements": ["PLAN-*"]}, flags) is None  # the embedded reference: every profile
    assert "no requirement of the selected profiles (a2a)" in selection.refuse(
        {"profiles": ["a2a"], "requirements": ["PLAN-*"]}, flags)
    assert "--scenario ix-*: matches no scenario of the selected profiles (a2a)" in selection.refuse(
        {"profiles": ["a2a"], "scenarios": ["ix-*"]}, flags)
    assert "matches both" in selection.refuse({"requirements": ["A2A-CARD-*"], "scenarios": ["ix-*"]}, flags)


def test_the_cli_refuses_an_unmatched_glob_before_anything_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        cli.main(["run", "--requirement", "A2A-STREM-004"])
    assert exit_.value.code == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert "argument --requirement" in err and "did you mean A2A-STREAM-004?" in err and len(err.splitlines()) == 1
    with pytest.raises(SystemExit) as exit_:
        cli.main(["run", "--profile", "a2a", "--scenario", "plan-*"])
    assert exit_.value.code == cli.EXIT_USAGE
    assert "--scenario plan-*: matches no scenario of the selected profiles (a2a)" in capsys.readouterr().err
    assert not (tmp_path / "reports").exists()


# -- what the report says --------------------------------------------------------------------------------

def _passing(profiles: set[str]) -> Aggregator:
    agg = Aggregator()
    for req in load_catalogue().values():
        if req.profile in profiles:
            agg.add("t", [Finding(req.id, Outcome.PASS, "ok")])
    return agg


def _report(agg: Aggregator, profiles: set[str], sel: dict | None) -> dict:
    return build_report(agg, selected_profiles=profiles, level="may", target={}, started="s", finished="f",
                        selection=sel)


def test_a_requirement_outside_the_glob_is_not_tested_even_when_judged():
    profiles = {"a2a"}
    sel = selection.narrowing(profiles, ["A2A-STREAM-004"])
    report = _report(_passing(profiles), profiles, sel)
    by_id = {e["id"]: e for e in report["requirements"]}
    assert by_id["A2A-STREAM-004"]["status"] == "PASS"
    assert by_id["WIRE-001"]["status"] == "NOT_TESTED"  # judged by stream-basic, but not asked for
    assert by_id["WIRE-001"]["message"] == "not selected (--requirement A2A-STREAM-004)"
    assert by_id["PLAN-001"]["status"] == "SKIPPED"  # profiles and levels stay SKIPPED
    assert report["verdict"] == "INCOMPLETE"
    assert report["selection"]["narrowed"] and report["selection"]["requirement_globs"] == ["A2A-STREAM-004"]
    assert "card" in report["selection"]["scenarios_not_run"]


def test_a_narrowed_run_never_certifies_even_when_every_requirement_is_judged():
    """stream-fail's requirements are all exercised by other a2a scenarios: leaving it out (-k) leaves no
    requirement without a finding, and still the verdict is not PASS."""
    profiles = {"a2a"}
    kept = {sid for sid in scenario_ids() if load_scenario(sid).profile == "a2a"} - {"stream-fail"}
    assert _report(_passing(profiles), profiles, selection.narrowing(profiles))["verdict"] == "PASS"
    sel = selection.narrowing(profiles, ran=kept, pytest_reason="-k not stream_fail")
    assert sel["not_selected"] == {} and sel["narrowed"] and sel["scenarios_not_run"] == ["stream-fail"]
    report = _report(_passing(profiles), profiles, sel)
    assert report["verdict"] == "INCOMPLETE" and report["selection"]["pytest"] == "-k not stream_fail"


def test_a_failure_in_a_narrowed_run_still_fails_it():
    profiles = {"a2a"}
    agg = _passing(profiles)
    agg.add("t", [Finding("A2A-STREAM-004", Outcome.FAIL, "broken")])
    report = _report(agg, profiles, selection.narrowing(profiles, ["A2A-STREAM-*"]))
    assert report["verdict"] == "FAIL"


def test_requirements_whose_scenarios_were_deselected_name_the_option():
    profiles = {"a2a"}
    sel = selection.narrowing(profiles, [], ["card"], ran={"card"})
    assert sel["not_selected"]["A2A-STREAM-004"] == "not selected (--scenario card)"
    assert "A2A-CARD-001" not in sel["not_selected"]
    sel = selection.narrowing(profiles, ran={"card"}, pytest_reason="-k card")
    assert sel["not_selected"]["A2A-STREAM-004"] == "not selected (-k card)"
    sel = selection.narrowing(profiles, ran={"card"})  # only some modules named on the command line
    assert sel["not_selected"]["A2A-STREAM-004"] == "not selected (not among the tests collected)"
    assert selection.narrowing(profiles)["narrowed"] is False


def test_could_not_run_keeps_the_narrowed_away_requirements_not_tested():
    profiles = {"a2a"}
    report = build_report(Aggregator(), selected_profiles=profiles, level="may", target={}, started="s",
                          finished="f", could_not_run="refused", selection=selection.narrowing(profiles, ["A2A-CARD-*"]))
    statuses = {e["id"]: e["status"] for e in report["requirements"] if e["profile"] in ("a2a-card", "wire")}
    assert statuses["A2A-CARD-001"] == "ERROR" and statuses["WIRE-001"] == "NOT_TESTED"
    assert report["verdict"] == "INCOMPLETE"


# -- pytest: keywords, the marker, deselection -------------------------------------------------------------

def test_k_by_requirement_id_selects_the_tests_that_exercise_it(pytester, no_reference):
    result = pytester.runpytest(*SUITE, "--collect-only", "-q", "-k", "A2A-STREAM-004")
    assert result.ret == 0
    names = collected(result)
    assert {n.split("::")[-1] for n in names} == {"test_stream_basic", "test_stream_fail", "test_cancel_and_subscribe"}
    result = pytester.runpytest(*SUITE, "--collect-only", "-q", "-k", "ix-question-plain or PROG-001")
    names = collected(result)
    assert any(n.endswith("[ix-question-plain]") for n in names)
    prog = set(selection.coverage()["PROG-001"])
    assert {load_scenario(s).profile for s in prog} == {"progress"} and sum("test_progress" in n for n in names) == len(prog)


def test_the_profile_marker_picks_the_conformance_tests(pytester, no_reference):
    """-m streamcert_profile keeps every conformance test, each marked with its scenarios' profile."""
    pytester.makepyfile(markprinter="""
        def pytest_collection_finish(session):
            for item in session.items:
                print("MARK", item.name, *[m.args[0] for m in item.iter_markers("streamcert_profile")])
    """)
    pytester.syspathinsert()
    result = pytester.runpytest(*SUITE, "-p", "markprinter", "--collect-only", "-q", "-s", "-m", "streamcert_profile")
    marks = [line.split()[1:] for line in result.outlines if line.startswith("MARK ")]
    assert result.ret == 0 and len(marks) == len(collected(result)) >= 30
    assert ["test_card", "a2a"] in marks and ["test_acp_v2_items", "acp"] in marks
    assert ["test_plans[plan-replace]", "plans"] in marks and all(len(m) == 2 for m in marks)
    assert collected(pytester.runpytest(*SUITE, "--collect-only", "-q", "-m", "not streamcert_profile")) == []


def test_requirement_run_deselects_and_reports_not_selected(pytester, no_reference):
    result = pytester.runpytest(*SUITE, "--collect-only", "-q", "--streamcert-requirement", "A2A-CARD-*",
                                "--streamcert-report", "rep")
    assert result.ret == 0
    assert [n.split("::")[-1] for n in collected(result)] == ["test_card"]
    result.stdout.fnmatch_lines(["*1/* tests collected (* deselected)*"])
    report = report_of(result, pytester.path / "rep")
    assert report["verdict"] == "INCOMPLETE"
    by_status = {}
    for entry in report["requirements"]:
        by_status.setdefault((entry["status"], entry["message"]), []).append(entry["id"])
    assert set(by_status) == {("NOT_TESTED", "not selected (--requirement A2A-CARD-*)"),
                              ("NOT_TESTED", "no test produced a finding")}  # (collected, not run)
    assert all(i.startswith("A2A-CARD-") for i in by_status[("NOT_TESTED", "no test produced a finding")])


def test_k_run_reports_the_rest_not_selected(pytester, no_reference):
    result = pytester.runpytest(*SUITE, "--collect-only", "-q", "-k", "stream-basic", "--streamcert-report", "rep")
    report = report_of(result, pytester.path / "rep")
    by_id = {e["id"]: e for e in report["requirements"]}
    assert by_id["A2A-CARD-001"]["message"] == "not selected (-k stream-basic)"
    assert by_id["A2A-STREAM-004"]["message"] == "no test produced a finding"
    assert report["selection"]["pytest"] == "-k stream-basic" and report["selection"]["narrowed"]


def test_an_unmatched_glob_is_a_pytest_usage_error(pytester, no_reference):
    result = pytester.runpytest(*SUITE, "--collect-only", "--streamcert-scenario", "stream-basik")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--streamcert-scenario*did you mean stream-basic?*"])
    result = pytester.runpytest(*SUITE, "--collect-only", "--streamcert-profile", "a2a",
                                "--streamcert-requirement", "PLAN-*")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--streamcert-requirement PLAN-*: matches no requirement of the selected profiles (a2a)"])
