"""pyproject.toml declares what the runtime code imports, and only that (issue 28): every third-party module
imported under plugins/ and suite/ comes from a declared runtime dependency (or an optional extra, imported only
where the code says so), and every runtime dependency is imported by some runtime code."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUNTIME = ("plugins", "suite")
EXTRAS_AT_RUNTIME = {"grpc"}  # imported behind a check that says which extra to install (protocols/grpc_messages.py)
DEV_ONLY = {"grpc_tools"}  # protocols/grpc_build.py, a development step (rebuilds the descriptor set): the test extra
LOADED_BY_PYTEST = {"pytest-xdist"}  # a plugin pytest loads itself (`streamcert run -- -n 2`): imported by no module
# imported by a dependency that does not declare it, and slow to be without (pyproject.toml says why): httpcore's sniffio
FOR_A_DEPENDENCY = {"sniffio"}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]


def imported_top_levels() -> set[str]:
    names = set()
    for folder in RUNTIME:
        for path in (REPO / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Import):
                    names |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                    names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in ("streamcert", "__future__")}


@cache
def providers() -> dict[str, list[str]]:
    return packages_distributions()


def distributions(name: str) -> set[str]:
    """The installed distributions that provide a top-level module."""
    return {dist.lower().replace("_", "-") for dist in providers().get(name, [name])}


def test_every_runtime_import_is_declared():
    declared = {_name(r) for r in project()["dependencies"]}
    declared |= {_name(r) for extra in EXTRAS_AT_RUNTIME for r in project()["optional-dependencies"][extra]}
    undeclared = sorted(name for name in imported_top_levels() - DEV_ONLY if not distributions(name) & declared)
    test_extra = {_name(r) for r in project()["optional-dependencies"]["test"]}
    assert all(distributions(name) & test_extra for name in DEV_ONLY)
    assert not undeclared, f"imported but declared in no runtime dependency: {undeclared}"


def test_every_runtime_dependency_is_imported_by_runtime_code():
    used = set().union(*(distributions(name) for name in imported_top_levels()))
    unused = {_name(r) for r in project()["dependencies"]} - used - LOADED_BY_PYTEST - FOR_A_DEPENDENCY
    assert not unused, f"declared but imported by no runtime code: {sorted(unused)}"


def test_the_license_is_an_spdx_expression_the_build_backend_accepts():
    assert project()["license"] == "Apache-2.0"  # PEP 639: a string, not the deprecated {text = ...} table
    backend = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["build-system"]["requires"]
    setuptools = next(r for r in backend if _name(r) == "setuptools")
    assert int(re.search(r">=\s*(\d+)", setuptools).group(1)) >= 77  # the first setuptools to read the string
