"""Faults are declared once (reference/faults.py FAULTS) and switched on by name through `switch(NAME)`:
an unknown name is an error wherever it is given, every declared fault has a switch that is used, and
the reference modules import without a loop."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import streamcert.reference
from streamcert.reference.faults import FAULTS, UnknownFault, check_fault, switch, switched

REFERENCE = Path(streamcert.reference.__file__).parent
# Every module of the reference and of its programs' packages, named from streamcert.reference ("agent.app"); a
# program's __main__ (it runs the program) and the packages' __init__ (a docstring) left out.
MODULES = sorted(".".join(path.relative_to(REFERENCE).with_suffix("").parts) for path in REFERENCE.rglob("*.py")
                 if path.stem not in ("__init__", "__main__"))
MESSAGE = "unknown fault 'nope'; `streamcert serve --list-faults` lists them"


def test_a_switch_for_an_undeclared_name_is_an_error():
    with pytest.raises(UnknownFault) as caught:
        switch("nope")
    assert str(caught.value) == MESSAGE
    with pytest.raises(UnknownFault, match="unknown fault 'stale-taks'; did you mean 'stale-task'\\?"):
        check_fault("stale-taks")
    assert switch("stale-task").on("stale-task") and not switch("stale-task").on(None)


def test_the_reference_programs_refuse_an_unknown_fault():
    from streamcert.reference.acp.agent import agent_for
    from streamcert.reference.agent.server import ReferenceServer
    from streamcert.reference.line.renderer import renderer_for

    for make in (lambda: ReferenceServer(fault="nope"), lambda: renderer_for("nope"), lambda: agent_for("nope")):
        with pytest.raises(UnknownFault, match="unknown fault 'nope'"):
            make()


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args", [
    ("-m", "streamcert", "serve", "--fault", "nope"),
    ("-m", "streamcert", "run", "--fault", "nope"),
    ("-m", "streamcert.reference.line", "--fault", "nope"),
    ("-m", "streamcert.reference.acp", "--fault", "nope"),
], ids=["serve", "run", "line", "acp"])
def test_the_commands_refuse_an_unknown_fault(args):
    proc = _run(*args)
    assert proc.returncode == 2, proc
    assert "unknown fault 'nope'" in proc.stderr


def test_the_line_and_acp_programs_refuse_another_programs_fault():
    proc = _run("-m", "streamcert.reference.line", "--fault", "stale-task")
    assert proc.returncode == 2 and "breaks the reference server, not the reference line renderer" in proc.stderr
    proc = _run("-m", "streamcert.reference.acp", "--fault", "countdown-below-zero")
    assert proc.returncode == 2 and "breaks the reference line renderer, not the reference ACP agent" in proc.stderr


def test_every_declared_fault_has_a_switch():
    for name in MODULES:
        importlib.import_module(f"streamcert.reference.{name}")
    assert sorted(set(FAULTS) - switched()) == []


def _switch_names(tree: ast.Module) -> list[str]:
    """The module-level names bound to a switch: `NAME = switch("...")`."""
    return [node.targets[0].id for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "switch"
            and isinstance(node.targets[0], ast.Name)]


@pytest.mark.parametrize("module", MODULES)
def test_every_switch_is_used(module):
    tree = ast.parse(_file(module).read_text("utf-8"))
    loaded = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    assert [name for name in _switch_names(tree) if name not in loaded] == []


def _file(module: str) -> Path:
    return REFERENCE.joinpath(*module.split(".")).with_suffix(".py")


def _reference_imports(module: str) -> tuple[set[str], list[str]]:
    """(reference modules imported at module level, reference imports inside a function). A relative import is
    resolved from the module's package; one that leaves the reference (`from ..targets`) is not counted."""
    tree = ast.parse(_file(module).read_text("utf-8"))
    package = module.split(".")[:-1]
    top, local = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level and node.level - 1 <= len(package):
            base = package[:len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            names = {".".join([*base, alias.name]) if ".".join([*base, alias.name]) in MODULES else ".".join(base)
                     for alias in node.names} & set(MODULES)
            if node in tree.body:
                top |= names
            else:
                local += sorted(names)
    return top, local


def test_the_reference_modules_import_without_a_loop():
    graph = {}
    for module in MODULES:
        graph[module], local = _reference_imports(module)
        assert local == [], f"{module} imports {local} inside a function"
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, " → ".join((*path, module))
        if module not in done:
            for dep in graph[module]:
                visit(dep, (*path, module))
            done.add(module)

    for module in MODULES:
        visit(module, ())
