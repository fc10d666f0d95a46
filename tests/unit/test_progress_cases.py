"""cases/progress.json: valid against its schema, at least 60 uniquely named cases, every phase covered."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources

import jsonschema
import pytest

from streamcert.recordings.progress_cases import CasesError, load_cases, problems, schema

PHASES = {"queued", "waiting_for_model", "loading_model", "reading_prompt", "thinking", "writing", "running_tool",
          "waiting_for_person", "waiting_for_subagents", "compacting", "retrying", "stopped", "failed"}


def packaged() -> dict:
    return json.loads((resources.files("streamcert.cases") / "progress.json").read_text("utf-8"))


def test_cases_match_the_schema():
    jsonschema.Draft202012Validator.check_schema(schema())
    jsonschema.Draft202012Validator(schema()).validate(packaged())


def test_enough_uniquely_named_cases_covering_every_phase():
    cases = packaged()["cases"]
    assert len(cases) >= 60
    names = Counter(c["name"] for c in cases)
    assert not [n for n, k in names.items() if k > 1]
    assert {c["progress"]["phase"] for c in cases if c["progress"]} == PHASES


def test_every_case_names_catalogue_requirements_and_a_locale():
    from streamcert.catalogue import load_catalogue

    known = {r for r in load_catalogue() if r.startswith("LINE-")}
    for case in packaged()["cases"]:
        assert set(case["requirements"]) <= known, case["name"]
        assert case["locale"] == "en", case["name"]


def test_terminal_phases_draw_their_text_alone_and_others_carry_elapsed():
    for case in packaged()["cases"]:
        phase = (case["progress"] or {}).get("phase")
        if phase in ("stopped", "failed") or phase is None:
            assert case["line"] == case["text"], case["name"]
        else:
            assert case["line"].startswith(case["text"] + " · "), case["name"]


def test_the_seed_examples_are_covered():
    lines = {c["line"].rsplit(" · ", 1)[-1] for c in packaged()["cases"]}
    for elapsed in ("0s", "5s", "59s", "1m 00s", "1m 05s", "59m 59s", "1h 00m", "1h 02m", "26h 03m"):
        assert elapsed in lines, elapsed


@pytest.mark.parametrize("mutate,expect", [
    (lambda d: d["cases"][0].pop("line"), "'line' is a required property"),
    (lambda d: d["cases"][0]["progress"].update(phase="sleeping"), "cases/0/progress"),
    (lambda d: d["cases"][0].update(now=1.5), "is not of type 'integer'"),
    (lambda d: d["cases"][1].update(name=d["cases"][0]["name"]), "is used twice"),
    (lambda d: d["cases"][0].update(requirements=["PROG-001"]), "does not match"),
])
def test_a_broken_cases_file_is_refused_with_a_reason(tmp_path, mutate, expect):
    doc = packaged()
    mutate(doc)
    assert any(expect in p for p in problems(doc)), problems(doc)
    path = tmp_path / "progress.json"
    path.write_text(json.dumps(doc), "utf-8")
    with pytest.raises(CasesError, match="does not match progress-cases.schema.json"):
        load_cases(path)


def test_a_missing_or_non_json_file_is_refused(tmp_path):
    with pytest.raises(CasesError, match="cannot be read"):
        load_cases(tmp_path / "absent.json")
    (tmp_path / "x.json").write_text("{", "utf-8")
    with pytest.raises(CasesError, match="not JSON"):
        load_cases(tmp_path / "x.json")
