"""The progress line (LINE-): the reference renderer, the rules on hand-made logs, and the driver
against real renderer processes (the reference, and programs that answer badly)."""

from __future__ import annotations

import io
import json
import shlex
import sys

import pytest
from logs import frame_log, stdio

from streamcert.catalogue import load_catalogue, load_scenario
from streamcert.drivers import Target, run_scenario
from streamcert.drivers.line import input_object, plan_inputs
from streamcert.framelog import END_ERROR, END_TIME_LIMIT
from streamcert.outcomes import Outcome
from streamcert.recordings.progress_cases import load_cases
from streamcert.reference.line.renderer import Renderer, render, serve_lines
from streamcert.rules import RuleContext, judge

SCENARIO = load_scenario("line-cases")
CASES = load_cases()[0]["cases"]
PY = shlex.quote(sys.executable)


def by_id(findings):
    return {f.req_id: f for f in findings}


# -- the reference renderer, in process ---------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_reference_draws_every_case(case):
    assert render(case["progress"], case["now"]) == case["line"]
    assert render(case["progress"], case["now"], "text") == case["text"]


@pytest.mark.parametrize("seconds,want", [(0, "0s"), (59, "59s"), (60, "1m 00s"), (65, "1m 05s"), (3599, "59m 59s"),
                                          (3600, "1h 00m"), (3779, "1h 02m"), (93780, "26h 03m")])
def test_elapsed_is_written_as_a_ticking_clock(seconds, want):
    assert Renderer().elapsed(seconds) == want


def test_the_protocol_answers_one_flushed_line_per_object_even_for_bad_input():
    stdin = io.StringIO('{"progress": {"phase": "thinking", "since": 0}, "now": 5000}\nnot json\n'
                        '{"progress": null, "now": 1}\n{"progress": {"phase": "thinking", "since": 0}, "now": 1000, '
                        '"form": "text"}\n')
    out = io.StringIO()
    serve_lines(Renderer(), stdin, out)
    assert out.getvalue().split("\n") == ["Thinking · 5s", "", "", "Thinking", ""]


# -- the rules, on hand-made logs ----------------------------------------------------------------

def case_log(outputs_for=None, *, drop_last: int = 0, **kw):
    """A line-cases log over CASES: every output as the case expects, except what `outputs_for`
    ((case, form, pass) → line or None to keep) returns."""
    plan = plan_inputs(CASES)
    sent, lines = [], []
    for i, form, p in plan:
        case = CASES[i]
        sent.append(json.dumps(input_object(case, form)))
        line = case["line"] if form == "line" else case["text"]
        if outputs_for:
            line = outputs_for(case, form, p) or line
        lines.append(line)
    lines = lines[:len(lines) - drop_last]
    log = frame_log(stdio("line", sent, lines, **kw), scenario="line-cases")
    log.notes.update(cases=CASES, cases_source="test", inputs=[{"case": CASES[i]["name"], "form": f, "pass": p}
                                                              for i, f, p in plan])
    return log


def judged(log):
    return by_id(judge(log, SCENARIO.requirements, RuleContext(scenario=SCENARIO)))


def test_rules_pass_a_renderer_that_draws_every_case():
    found = judged(case_log())
    assert set(found) == set(SCENARIO.requirements)
    assert all(f.outcome == Outcome.PASS for f in found.values()), found


def test_rules_accept_a_reading_and_report_it():
    def ungrouped(case, form, p):
        for r in case.get("readings", []):
            if r["name"] == "ungrouped integers":
                return r[form]
    found = judged(case_log(ungrouped))
    assert found["LINE-005"].outcome == Outcome.PASS
    assert "ungrouped integers (reading-prompt-grouped)" in found["LINE-005"].reading


@pytest.mark.parametrize("name,wrong,req", [
    ("reading-prompt-99-7", "Reading the prompt: 333 / 334 tokens (100%) · 4s", "LINE-004"),
    ("elapsed-1m-05s", "Queued · 1m 5s", "LINE-008"),
    ("ticking-1m-01s", "Thinking · 1m 00s", "LINE-009"),
    ("retrying-past-zero", "Retrying in -15 s: 429 Too Many Requests · 25s", "LINE-010"),
    ("stopped-by-person", "Stopped: by you · 5s", "LINE-011"),
    ("queued-ahead-null", "Queued: null ahead · 5s", "LINE-012"),
    ("thinking", "Thinking", "LINE-007"),
    ("writing-rate-integer", "Writing: 12 tok/s · 3s", "LINE-006"),
    ("waiting-for-person-approval", "Waiting for you: approval · 5s", "LINE-003"),
])
def test_rules_blame_a_wrong_line_on_its_requirement(name, wrong, req):
    log = case_log(lambda c, f, p: wrong if c["name"] == name and f == "line" else None)
    found = judged(log)
    bad = {r for r, f in found.items() if f.outcome != Outcome.PASS}
    assert req in bad and bad <= {req, "LINE-014"} | set(next(c for c in CASES if c["name"] == name)["requirements"])
    ev = found[req].evidence[0]
    assert (ev["case"], ev["got"]) == (name, wrong) and ev["expected"] and ev["input"].startswith("{")
    assert load_catalogue()[req].source in found[req].message  # the failure cites the requirement's source


def test_rules_catch_a_text_form_with_elapsed_and_a_changed_repeat():
    found = judged(case_log(lambda c, f, p: (c["line"] if f == "text" and c["name"] == "thinking" else
                                             "Thinking · 9s" if p == 3 and c["name"] == "thinking" else None)))
    assert found["LINE-013"].outcome == Outcome.FAIL and found["LINE-014"].outcome == Outcome.FAIL
    assert found["LINE-001"].outcome == Outcome.PASS


def test_missing_lines_fail_the_cases_they_miss_and_say_why():
    found = judged(case_log(drop_last=len(CASES) * 2 + 3, status=1, stderr="Traceback: boom"))
    assert found["LINE-009"].outcome == Outcome.FAIL  # the last line-form cases are ticking ones
    assert "exited with status 1" in found["LINE-009"].evidence[0]["note"]
    assert "boom" in found["LINE-009"].evidence[0]["note"]
    assert found["LINE-004"].outcome == Outcome.PASS


def test_a_renderer_that_never_started_is_error_and_a_bad_cases_file_too():
    log = case_log()
    log.exchanges[0].end, log.exchanges[0].error = END_ERROR, "FileNotFoundError: no-such-renderer"
    assert {f.outcome for f in judged(log).values()} == {Outcome.ERROR}
    bad = frame_log(scenario="line-cases")
    bad.notes["cases_error"] = "x.json: not JSON"
    found = judged(bad)
    assert {f.outcome for f in found.values()} == {Outcome.ERROR} and "not JSON" in found["LINE-001"].message


# -- the driver against real processes ---------------------------------------------------------------

def run(cmd: str, limit: float = 5.0, cases: str | None = None):
    target = Target(line_cmd=cmd, stream_limit=limit, progress_cases=cases)
    log = run_scenario("line-cases", target)
    return log, judged(log)


def test_driver_passes_the_reference_renderer():
    log, found = run(f"{PY} -m streamcert.reference.line")
    assert len(log.get("line").events) == 3 * len(CASES)
    assert all(f.outcome == Outcome.PASS for f in found.values()), found


def test_driver_catches_a_line_fault():
    _, found = run(f"{PY} -m streamcert.reference.line --fault countdown-below-zero")
    assert found["LINE-010"].outcome == Outcome.FAIL
    assert "retrying-past-zero" in found["LINE-010"].message


def test_driver_does_not_hang_on_a_silent_renderer():
    log, found = run(f"{PY} -c \"import sys, time; sys.stdin.read(); time.sleep(30)\"", limit=1.0)
    assert log.get("line").end == END_TIME_LIMIT
    assert found["LINE-001"].outcome == Outcome.FAIL
    assert "cut at the stream limit" in found["LINE-001"].evidence[0]["note"]


def test_driver_on_garbage_crash_and_missing_program():
    _, found = run("cat")  # echoes its input: every line wrong (but the same input echoes the same)
    failed = {r for r, f in found.items() if f.outcome == Outcome.FAIL}
    assert {"LINE-001", "LINE-004", "LINE-007", "LINE-010", "LINE-012", "LINE-013"} <= failed
    assert found["LINE-014"].outcome == Outcome.PASS
    assert "LINE-008" not in found  # no elapsed was drawn to judge (NOT_TESTED)
    _, found = run(f"{PY} -c \"import sys; sys.exit(3)\"")
    assert found["LINE-001"].outcome == Outcome.FAIL and "status 3" in found["LINE-001"].evidence[0]["note"]
    _, found = run("/nonexistent/renderer")
    assert {f.outcome for f in found.values()} == {Outcome.ERROR}


def test_driver_judges_by_another_cases_file_and_refuses_a_bad_one(tmp_path):
    doc = load_cases()[0]
    doc["cases"] = [c for c in doc["cases"] if c["group"] == "stopped"]
    own = tmp_path / "progress.json"
    own.write_text(json.dumps(doc), "utf-8")
    log, found = run(f"{PY} -m streamcert.reference.line", cases=str(own))
    assert len(log.notes["cases"]) == len(doc["cases"]) and found["LINE-011"].outcome == Outcome.PASS
    assert "LINE-004" not in found  # no case of this file exercises it
    own.write_text('{"cases": []}', "utf-8")
    _, found = run(f"{PY} -m streamcert.reference.line", cases=str(own))
    assert found["LINE-001"].outcome == Outcome.ERROR and "does not match" in found["LINE-001"].message
