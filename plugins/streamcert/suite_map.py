"""What a run covers, answered in one place: which scenarios each conformance test drives, whether a pytest run
names the conformance modules, and which profiles a run selects.

The scenarios of a test are read from the suite's source with `ast`, never by importing it (importing the
suite imports pytest, and `streamcert list`, `explain` and `baseline` start without it): a test parametrized
by scenario ids drives each of them, one per test id (`test_interactions[ix-question]`); any other test drives
the scenario ids written in its body (`streamcert.check("stream-basic")`). The plugin asks by test item or by
test id (a test that never reported, a worker's test), `running/selection.py` to deselect and to mark, `running/live.py` to
name a test's line, `running/listing.py` to say which test drives a scenario, and report/baseline.py to find the
scenario of a failing test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from .catalogue import PROFILES, scenario_ids
from .targets import names_a_target, served_profiles


@lru_cache(maxsize=1)
def suite_dir() -> Path:
    """The folder of the conformance test modules (`streamcert.suite`, whose package imports nothing), as installed."""
    import streamcert.suite

    return Path(streamcert.suite.__file__).resolve().parent


# -- which scenarios a test drives ------------------------------------------------------------------------

@lru_cache(maxsize=1)
def suite_tests() -> dict[str, tuple[str, ...]]:
    """Test id (`file.py::function`, with `[scenario]` for a test parametrized by scenario ids) → the scenarios
    it drives: the scenario ids among its parametrize values (a literal list, or a module-level name such as a
    dict of scenarios), else the scenario ids written in its body (`streamcert.check("card")`)."""
    import ast

    known = set(scenario_ids())
    tests: dict[str, tuple[str, ...]] = {}
    for source in sorted(resources.files("streamcert.suite").iterdir(), key=lambda p: p.name):
        if not (source.name.startswith("test_") and source.name.endswith(".py")):
            continue
        tree = ast.parse(source.read_text("utf-8"))
        named = {target.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                 for target in node.targets if isinstance(target, ast.Name)}
        for node in tree.body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("test_")):
                continue
            params = [sid for decorator in node.decorator_list
                      for sid in _strings(decorator, named) if sid in known]
            if params:
                for sid in dict.fromkeys(params):
                    tests[f"{source.name}::{node.name}[{sid}]"] = (sid,)
                continue
            driven = tuple(dict.fromkeys(s for s in _strings(node, {}) if s in known))
            if driven:
                tests[f"{source.name}::{node.name}"] = driven
    return tests


def _strings(node: Any, named: dict[str, Any]) -> Iterable[str]:
    """Every string constant under `node`, and under the module-level values of the names it uses."""
    import ast

    for inner in ast.walk(node):
        if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
            yield inner.value
        elif isinstance(inner, ast.Name) and inner.id in named:
            yield from _strings(named[inner.id], {})


@lru_cache(maxsize=4096)
def scenarios_of_test(nodeid: str) -> tuple[str, ...]:
    """The scenarios the suite test `nodeid` drives (as pytest names it: `…/suite/test_x.py::test_y[param]`),
    () for a test that is not one of the suite's."""
    path, _, name = nodeid.partition("::")
    func = name.split("::")[-1]
    key = f"{Path(path).name}::{func}"
    if key in suite_tests():
        return suite_tests()[key]
    bare, _, param = func.partition("[")
    param = param.removesuffix("]")
    if param in scenario_ids():  # a parametrized test the table has no entry for: its parameter
        return (param,)
    return suite_tests().get(f"{Path(path).name}::{bare}", ())


def scenarios_of_item(item: Any) -> tuple[str, ...]:
    """The scenarios a collected pytest item drives: () unless it is one of the conformance modules' tests
    (a user's test module of the same name is not)."""
    path = Path(str(getattr(item, "path", ""))).resolve()
    if suite_dir() not in path.parents:
        return ()
    return scenarios_of_test(item.nodeid)


def driving_tests(scenario_id: str) -> list[str]:
    """The suite's tests that drive a scenario (`file.py::function`)."""
    return [test for test, driven in suite_tests().items() if scenario_id in driven]


# -- what a run selects -----------------------------------------------------------------------------------

def runs_suite(config: Any) -> bool:
    """Whether a pytest run (its `config`) names the conformance modules (by --pyargs or by path)."""
    for arg in config.args:
        arg = str(arg)
        if arg.startswith("streamcert.suite"):
            return True
        path = Path(arg.split("::")[0]).resolve()
        if path == suite_dir() or suite_dir() in path.parents:
            return True
    return False


def profiles_of(values: Mapping[str, Any]) -> set[str]:
    """The profiles a run selects: those given by --profile, else those that have a target, else all of them
    (the embedded reference serves every profile)."""
    chosen = set(values.get("profiles") or ())
    if chosen:
        return chosen
    return served_profiles(values) if names_a_target(values) else set(PROFILES)
