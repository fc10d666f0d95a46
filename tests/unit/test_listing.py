"""`streamcert list`, `streamcert explain` and `--version` (running/listing.py, cli.py): what they print, their
filters and exit codes, and that they start without the network stack, pytest or a server."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import streamcert
from streamcert.catalogue import catalogue_version, load_catalogue, load_scenario, scenario_ids
from streamcert.cli import main
from streamcert.reference.faults import FAULTS
from streamcert.running.listing import Selection, compress, matches
from streamcert.suite_map import driving_tests, scenarios_of_test, suite_tests

CATALOGUE = load_catalogue()


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def ids_of(out: str) -> list[str]:
    return [line.split()[0] for line in out.splitlines()]


# -- list ---------------------------------------------------------------------------------------------

def test_list_shows_the_whole_catalogue_in_order_aligned(capsys):
    code, out, err = run_cli(capsys, "list")
    assert (code, err) == (0, "")
    assert ids_of(out) == list(CATALOGUE)
    lines = out.splitlines()
    wire = lines[0]
    assert wire.split()[:3] == ["WIRE-001", "MUST", "a2a"] and wire.endswith(CATALOGUE["WIRE-001"].title)
    title_column = {line.index(CATALOGUE[line.split()[0]].title) for line in lines}
    assert len(title_column) == 1, title_column  # the titles start in one column


def test_list_filters_by_profile_level_and_glob(capsys):
    _, out, _ = run_cli(capsys, "list", "--profile", "a2a", "--level", "must", "a2a-err-00?")
    expected = [r.id for r in CATALOGUE.values()
                if r.profile == "a2a" and r.level == "MUST" and re.fullmatch(r"A2A-ERR-00\d", r.id)]
    assert ids_of(out) == expected and expected
    assert "A2A-ERR-009" not in expected  # a SHOULD: below --level must

    _, out, _ = run_cli(capsys, "list", "--level", "should", "--profile", "plans", "--profile", "line")
    listed = [CATALOGUE[i] for i in ids_of(out)]
    assert {r.profile for r in listed} == {"plans", "line"}
    assert {r.level for r in listed} == {"MUST", "SHOULD"}  # at or above should: no MAY
    assert len(listed) == sum(1 for r in CATALOGUE.values() if r.profile in ("plans", "line") and r.level != "MAY")


def test_a_glob_without_a_wildcard_is_a_prefix_and_globs_add_up():
    assert matches("A2A-ERR-009", "a2a-err") and matches("A2A-ERR-009", "*err-009")
    assert not matches("WIRE-001", "A2A") and not matches("A2A-ERR-009", "A2A-ERR-00[1-8]")
    chosen = Selection(globs=("WIRE-00[12]", "A2A-CARD-001")).requirements()
    assert [r.id for r in chosen] == ["WIRE-001", "WIRE-002", "A2A-CARD-001"]


def test_list_with_nothing_matching_exits_1(capsys):
    code, out, err = run_cli(capsys, "list", "NOPE-*")
    assert code == 1 and out == "" and "no requirement matches" in err


def test_list_json(capsys):
    code, out, _ = run_cli(capsys, "list", "--json", "--profile", "interactions")
    doc = json.loads(out)
    assert code == 0 and doc["catalogue_version"] == catalogue_version()
    first = doc["requirements"][0]
    assert [r["id"] for r in doc["requirements"]] == [r.id for r in CATALOGUE.values() if r.profile == "interactions"]
    req = CATALOGUE[first["id"]]
    assert (first["profile"], first["family"], first["level"], first["title"], first["source"]) == (
        "interactions", req.family, req.level, req.title, req.source)


def test_list_scenarios(capsys):
    code, out, _ = run_cli(capsys, "list", "--scenarios")
    assert code == 0 and ids_of(out) == scenario_ids()
    errors = next(line for line in out.splitlines() if line.startswith("errors "))
    last_err = max(r for r in load_scenario("errors").requirements if r.startswith("A2A-ERR-"))
    assert errors.split()[1] == "a2a" and f"A2A-ERR-002..{last_err[-3:]}" in errors  # a run of ids shown as a range

    _, out, _ = run_cli(capsys, "list", "--scenarios", "--profile", "plans")
    assert ids_of(out) == [sid for sid in scenario_ids() if load_scenario(sid).profile == "plans"]

    # A glob picks scenarios by id (all their requirements), or by a requirement they exercise (only those)
    _, out, _ = run_cli(capsys, "list", "--scenarios", "card")
    assert out.split() == ["card", "a2a", "A2A-CARD-001..010"]
    _, out, _ = run_cli(capsys, "list", "--scenarios", "A2A-ERR-001")
    assert out.split() == ["no-streaming", "a2a", "A2A-ERR-001"]

    _, out, _ = run_cli(capsys, "list", "--scenarios", "--json", "ix-question")
    found = {s["id"]: s for s in json.loads(out)["scenarios"]}
    assert sorted(found) == ["ix-question", "ix-question-plain"]  # a prefix
    assert found["ix-question"]["tests"] == ["test_interactions.py::test_interactions[ix-question]"]
    assert found["ix-question"]["requirements"] == sorted(load_scenario("ix-question").requirements,
                                                          key=list(CATALOGUE).index)


def test_compress_writes_runs_of_numbers():
    assert compress(["WIRE-001", "WIRE-002", "WIRE-003", "WIRE-005", "A2A-ERR-009", "A2A-ERR-010"]) == \
        "WIRE-001..003, WIRE-005, A2A-ERR-009..010"
    assert compress([]) == ""


# -- the suite test of each scenario ---------------------------------------------------------------------

def _named_in_code(test: str) -> tuple[str, ...]:
    """The reading the ast table is checked against, from the imported suite module: the test's parameter when
    it is a scenario id, else the scenario ids among its function's constants."""
    import importlib

    path, _, name = test.partition("::")
    func, _, param = name.partition("[")
    known = set(scenario_ids())
    if param.removesuffix("]") in known:
        return (param.removesuffix("]"),)
    code = getattr(importlib.import_module(f"streamcert.suite.{path.removesuffix('.py')}"), func).__code__
    return tuple(const for const in code.co_consts if isinstance(const, str) and const in known)


def test_every_scenario_has_a_suite_test_and_the_table_agrees_with_the_code():
    assert {sid for driven in suite_tests().values() for sid in driven} == set(scenario_ids())
    for test, driven in suite_tests().items():
        assert _named_in_code(test) == driven, test
        assert scenarios_of_test(f"../../venv/lib/streamcert/suite/{test}") == driven
    assert driving_tests("errors") == ["test_a2a_errors.py::test_errors"]
    assert scenarios_of_test("tests/test_mine.py::test_x") == ()


# -- explain --------------------------------------------------------------------------------------------

def test_explain_says_everything_about_a_requirement(capsys):
    req = CATALOGUE["A2A-ERR-009"]
    code, out, err = run_cli(capsys, "explain", "a2a-err-009")  # any case
    assert (code, err) == (0, "")
    assert out.startswith(f"A2A-ERR-009  {req.level}  profile a2a (a2a-err)")
    for text in (req.title, req.source, req.note, *req.readings):
        assert text in out
    breaking = [f for f in FAULTS.values() if "A2A-ERR-009" in f.catches]
    assert breaking and all(f.name in out and f.description in out for f in breaking)
    assert "errors  test_a2a_errors.py::test_errors" in out


def test_explain_json_lists_scenarios_and_faults(capsys):
    code, out, _ = run_cli(capsys, "explain", "--json", "WIRE-003")
    doc = json.loads(out)
    exercising = [sid for sid in scenario_ids() if "WIRE-003" in load_scenario(sid).requirements]
    assert code == 0 and [s["id"] for s in doc["scenarios"]] == exercising and len(exercising) > 1
    assert all(s["tests"] for s in doc["scenarios"])
    assert [f["name"] for f in doc["faults"]] == [f.name for f in FAULTS.values() if "WIRE-003" in f.catches]
    assert doc["collateral_faults"] == [f.name for f in FAULTS.values() if "WIRE-003" in f.also]


@pytest.mark.parametrize("given, words", [
    ("A2A-STREAM-04", "did you mean A2A-STREAM-004, A2A-STREAM-014"),  # the number padded first, then difflib
    ("a2a-err-2", "did you mean A2A-ERR-002"),
    ("errors", "is a scenario"),
    ("ZZZZ", "`streamcert list` lists them"),
])
def test_explain_an_unknown_id_is_a_usage_error(capsys, given, words):
    code, out, err = run_cli(capsys, "explain", given)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and words in err and given in err, err


# -- --version, and a start that loads nothing heavy -------------------------------------------------------

def test_version(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out == f"streamcert {streamcert.__version__} (catalogue {catalogue_version()})\n"


def test_list_and_explain_load_no_network_stack_pytest_or_server():
    script = ("import sys, io, contextlib\nfrom streamcert.cli import main\n"
              "with contextlib.redirect_stdout(io.StringIO()):\n"
              "    assert main(['list']) == 0 and main(['list', '--scenarios']) == 0\n"
              "    assert main(['explain', 'WIRE-001']) == 0\n"
              "heavy = {'httpx', 'httpcore', 'pytest', '_pytest', 'starlette', 'uvicorn', 'anyio', 'yaml', 'socket'}\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
