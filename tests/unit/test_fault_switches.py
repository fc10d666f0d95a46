"""Faults are declared once (reference/faults.py FAULTS) and switched on by name through `switch(NAME)`:
an unknown name is an error wherever it is given, every declared fault has a switch that is used, and
the reference modules import without a loop."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import streamcert.reference
from streamcert.reference.faults import FAULTS, UnknownFault, check_fault, switch, switched

REFERENCE = Path(streamcert.reference.__file__).parent
MODULES = sorted(m.name for m in pkgutil.iter_modules([str(REFERENCE)]) if m.name != "__main__")
MESSAGE = "unknown fault 'nope'; `streamcert serve --list-faults` lists them"


def test_a_switch_for_an_undeclared_name_is_an_error():
    with pytest.raises(UnknownFault) as caught:
        switch("nope")
    assert str(caught.value) == MESSAGE
    with pytest.raises(UnknownFault, match="unknown fault 'stale-taks'; did you mean 'stale-task'\\?"):
        check_fault("stale-taks")
    assert switch("stale-task").on("stale-task") and not switch("stale-task").on(None)


def test_the_reference_programs_refuse_an_unknown_fault():
    from streamcert.reference.acp import agent_for
    from streamcert.reference.line import renderer_for
    from streamcert.reference.server import ReferenceServer

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
    tree = ast.parse((REFERENCE / f"{module}.py").read_text("utf-8"))
    loaded = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    assert [name for name in _switch_names(tree) if name not in loaded] == []


def _reference_imports(module: str) -> tuple[set[str], list[str]]:
    """(reference modules imported at module level, reference imports inside a function)."""
    tree = ast.parse((REFERENCE / f"{module}.py").read_text("utf-8"))
    top, local = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module] if node.module else [alias.name for alias in node.names]
            if node in tree.body:
                top.update(n.split(".")[0] for n in names)
            else:
                local += names
    return top & set(MODULES), local


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
