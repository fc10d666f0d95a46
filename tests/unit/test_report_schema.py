"""The published JSON Schema of compatibility.json (cases/schemas/compatibility.schema.json): every kind of
report the engine builds is valid, a report that breaks the contract (an unknown status, verdict or level, a
missing field) is not, and fields added later are allowed. The end-to-end run's report is checked in
tests/e2e/test_junit.py (one `streamcert run` for both)."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
from report_cases import KINDS, TARGET, report_schema, report_validator

from streamcert.outcomes import Finding, Outcome
from streamcert.report.aggregate import Aggregator, build_report
from streamcert.report.writers import write_all


@pytest.fixture(scope="module")
def validator():
    return report_validator()


def test_the_schema_is_a_valid_draft_2020_12_schema():
    schema = report_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_of_report_is_valid(kind, validator, tmp_path):
    report = KINDS[kind]()
    validator.validate(report)
    write_all(report, tmp_path)  # and as written: what a user's tool reads
    validator.validate(json.loads((tmp_path / "compatibility.json").read_text("utf-8")))


def test_a_report_on_the_shipped_catalogue_is_valid(validator):
    agg = Aggregator()
    agg.add("t.py::t", [Finding("A2A-STREAM-001", Outcome.PASS), Finding("WIRE-001", Outcome.FAIL, "x")])
    report = build_report(agg, selected_profiles={"a2a", "plans"}, level="should", target=TARGET,
                          started="2026-11-29T15:00:00.000Z", finished="2026-11-29T15:00:01.000Z")
    validator.validate(report)


def _broken(report: dict, path: list, value) -> dict:
    out = copy.deepcopy(report)
    where = out
    for key in path[:-1]:
        where = where[key]
    if value is KeyError:
        del where[path[-1]]
    else:
        where[path[-1]] = value
    return out


@pytest.mark.parametrize("path, value", [
    (["requirements", 0, "status"], "PASSED"),
    (["requirements", 0, "status"], "pass"),
    (["verdict"], "OK"),
    (["requirements", 0, "level"], "MUSTNOT"),
    (["summary", "MUST", "GREAT"], 1),
    (["summary", "MUST", "PASS"], -1),
    (["requirements", 0, "id"], "wire-1"),
    (["requirements", 0, "tests"], "t.py::t"),
    (["requirements", 0, "message"], KeyError),
    (["requirements", 0, "evidence"], KeyError),
    (["target", "a2a"], KeyError),
    (["tool", "name"], "othertool"),
    (["started"], "yesterday"),
    (["selection", "level"], "MUST"),
    (["stale_baseline"], ["not an id"]),
])
def test_a_report_that_breaks_the_contract_is_invalid(path, value, validator):
    report = KINDS["failing"]()
    validator.validate(report)
    errors = list(validator.iter_errors(_broken(report, path, value)))
    assert errors and all(list(e.absolute_path)[: len(path) - 1] == path[:-1] for e in errors), errors  # there


def test_baseline_marks_agree_with_the_status(validator):
    report = KINDS["failing"]()
    index = next(i for i, e in enumerate(report["requirements"]) if e.get("baseline") == "expected")
    assert not validator.is_valid(_broken(report, ["requirements", index, "status"], "PASS"))
    assert not validator.is_valid(_broken(report, ["requirements", index, "baseline"], "maybe"))
    unsupported = next(i for i, e in enumerate(report["requirements"]) if e["status"] == "UNSUPPORTED")
    assert not validator.is_valid(_broken(report, ["requirements", unsupported, "unsupported_reason"], KeyError))


def test_additions_are_allowed(validator):
    """Other issues extend the report (a per-entry reason for "not selected", baseline reasons, selection
    globs): the contract is only ever extended, so the schema accepts what it does not know."""
    report = KINDS["partial"]()
    report["progress"] = {"scenarios": 3}
    report["selection"]["requirements"] = ["A2A-STREAM-*"]
    report["target"]["cassettes"] = ["a.yaml"]
    report["requirements"][1]["not_selected_reason"] = "not selected"
    report["requirements"][1]["baseline_reason"] = "vendor bug 12"
    validator.validate(report)
