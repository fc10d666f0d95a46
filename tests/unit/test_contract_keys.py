"""The driver ↔ rule contract (plugins/streamcert/contract/, docs/architecture.md "The driver ↔ rule contract"):
every notes key and exchange label a rule reads is one a driver or the capture writes, and no driver, rule or
wire module spells one as a bare string where the contract declares it.

Read with `ast`, never run: a name is "written" where a writer module uses it other than to read it back
(`X.get(K)`, `K in X`, `X[K]` as a value), "read" wherever a rule module names it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import streamcert

PKG = Path(streamcert.__file__).parent
CONTRACT = PKG / "contract"
# the script's notes live with the script's facts (protocols/ imports nothing of the project, not even contract/)
SCRIPT_NOTES = ("protocols.script", re.compile(r"_NOTE$"))
READERS = sorted((PKG / "rules").rglob("*.py"))
WRITERS = sorted([*(PKG / "drivers").glob("*.py"), *(PKG / "wire").rglob("*.py")] + [
    PKG / name for name in ("framelog.py", "recordings/replay.py", "recordings/client_cases.py",
                            "recordings/case_variations.py", "running/proxy.py", "running/proxy_logs.py")])
# modules that read a log beside the rules (the run's plumbing): checked for bare strings, not counted as writers
OTHERS = [PKG / name for name in ("plugin.py", "running/offline.py", "recordings/capture_diff.py", "running/own_checks.py")]
READ_CALLS = {"get", "all"}  # X.get(K), log.all(LABEL)


def _declared() -> dict[str, str]:
    """Every contract constant: 'module.NAME' → the string it writes into a log."""
    out: dict[str, str] = {}
    sources = [(".".join(p.relative_to(PKG).with_suffix("").parts), p, None) for p in sorted(CONTRACT.rglob("*.py"))
               if p.stem != "__init__"]
    sources.append((SCRIPT_NOTES[0], PKG / "protocols" / "script.py", SCRIPT_NOTES[1]))
    for module, path, only in sources:
        for node in ast.parse(path.read_text("utf-8")).body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and \
                    isinstance(node.value.value, str) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ast.Name) and (only is None or only.search(node.targets[0].id)):
                out[f"{module}.{node.targets[0].id}"] = node.value.value
    return out


DECLARED = _declared()
LABELS: dict[str, set[str]] = {}  # a label → its constants (contract/labels/)
KEYS: dict[str, set[str]] = {}  # a notes key → its constants (the other contract modules, the script's notes)
for _name, _value in DECLARED.items():
    (LABELS if _name.startswith("contract.labels.") else KEYS).setdefault(_value, set()).add(_name)
PREFIXES = {value for name, value in DECLARED.items() if name.endswith("_PREFIX")}


def _contract_names(path: Path, tree: ast.Module) -> dict[str, str]:
    """Local name → 'module.NAME' (or 'module' for a contract module imported whole) in one module."""
    local: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        module = (node.module or "").removeprefix("streamcert.")
        for alias in node.names:
            for candidate in (f"{module}.{alias.name}", f"{module}.{alias.name}".lstrip(".")):
                bare = candidate.lstrip(".")
                if bare in DECLARED or bare in {n.rsplit(".", 1)[0] for n in DECLARED}:  # a constant, or its module
                    local[alias.asname or alias.name] = bare
    return local


def _uses(path: Path) -> list[tuple[str, bool, int]]:
    """(contract name, whether it is read back there, line) for each use of a contract constant in `path`."""
    tree = ast.parse(path.read_text("utf-8"))
    local = _contract_names(path, tree)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    out = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Name) and node.id in local and local[node.id] in DECLARED:
            name = local[node.id]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in local:
            name = f"{local[node.value.id]}.{node.attr}"
        if name is None or name not in DECLARED or isinstance(parents.get(node), ast.ImportFrom):
            continue
        parent = parents.get(node)
        read = (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and
                parent.func.attr in READ_CALLS and parent.args[:1] == [node]) or \
               (isinstance(parent, ast.Compare) and parent.left is node and
                all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops)) or \
               (isinstance(parent, ast.Subscript) and parent.slice is node and isinstance(parent.ctx, ast.Load))
        out.append((name, read, node.lineno))
    return out


def _written() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path in WRITERS:
        for name, read, line in _uses(path):
            if not read:
                out.setdefault(name, []).append(f"{path.relative_to(PKG)}:{line}")
    return out


WRITTEN = _written()


def _is_written(name: str) -> bool:
    """Written by name, or, for a prefix, some label written starts with it (msg_ by msg_no_role)."""
    return name in WRITTEN or name.endswith("_PREFIX") and any(
        DECLARED[other].startswith(DECLARED[name]) for other in WRITTEN if other.startswith("contract.labels."))


@pytest.mark.parametrize("path", READERS, ids=lambda p: p.name)
def test_every_key_and_label_a_rule_reads_is_one_a_driver_or_the_capture_writes(path):
    unwritten = sorted({f"{name} (line {line})" for name, _, line in _uses(path) if not _is_written(name)})
    assert not unwritten, f"{path.relative_to(PKG)} reads what no driver or capture module writes: {unwritten}"


def test_every_declared_key_and_label_is_written_somewhere():
    """A declaration nothing writes is dead (or its writer spells it as a bare string)."""
    assert not sorted(name for name in DECLARED if not _is_written(name))


def _notes_receiver(node: ast.AST) -> bool:
    """Whether `node` is a notes dict: `….notes`, a variable `notes`, or a structured note read out of one."""
    text = ast.unparse(node)
    return bool(re.search(r"(^|\.)notes$", text) or re.search(r"notes(\.get\(|\[)[A-Z_]+\)?\]?( or \{\})?\)?$", text))


def _log_receiver(node: ast.AST) -> bool:
    return bool(re.search(r"(^|\.)(log|run)$", ast.unparse(node)))


def bare_strings(source: str) -> list[tuple[int, str]]:
    """(line, the string) for each key or label written as a bare string where the contract declares one."""
    tree = ast.parse(source)
    found: list[tuple[int, str]] = []

    def check(node: ast.AST | None, declared: dict[str, set[str]] = KEYS) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in declared:
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr) and declared is LABELS and node.values and \
                isinstance(node.values[0], ast.Constant) and node.values[0].value in PREFIXES:
            found.append((node.lineno, node.values[0].value))
        elif isinstance(node, ast.IfExp):
            check(node.body, declared), check(node.orelse, declared)

    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _notes_receiver(node.value):
            check(node.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver, attr = node.func.value, node.func.attr
            if _notes_receiver(receiver) and attr in ("get", "setdefault", "pop") and node.args:
                check(node.args[0])
            if _notes_receiver(receiver) and attr == "update":
                for arg in node.args:
                    if isinstance(arg, ast.Dict):
                        for key in arg.keys:
                            check(key)
                for kw in node.keywords if re.search(r"(^|\.)notes$", ast.unparse(receiver)) else ():
                    if kw.arg in KEYS:
                        found.append((node.lineno, kw.arg))
            if _log_receiver(receiver) and attr in READ_CALLS and node.args:
                check(node.args[0], LABELS)
        elif isinstance(node, ast.Compare) and all(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and \
                _notes_receiver(node.comparators[0]):
            check(node.left)
        elif isinstance(node, ast.Compare) and any(re.search(r"\.label$", ast.unparse(side))
                                                   for side in (node.left, *node.comparators)):
            for side in (node.left, *node.comparators):
                for item in side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]:
                    check(item, LABELS)
        elif isinstance(node, ast.keyword) and node.arg == "label":
            check(node.value, LABELS)
        elif isinstance(node, ast.keyword) and node.arg == "notes" and isinstance(node.value, ast.Dict):
            for key in node.value.keys:
                check(key)
    return found


@pytest.mark.parametrize("path", READERS + WRITERS + OTHERS, ids=lambda p: str(p.relative_to(PKG)))
def test_no_key_or_label_is_a_bare_string_where_the_contract_declares_it(path):
    bare = bare_strings(path.read_text("utf-8"))
    assert not bare, f"{path.relative_to(PKG)}: " + ", ".join(
        f"line {line} {value!r} (use {' or '.join(sorted(KEYS.get(value) or LABELS.get(value) or {'a prefix'}))})"
        for line, value in bare)


@pytest.mark.parametrize("source", [
    'ex.notes["streaming"] = True',
    'x = log.notes.get("binding")',
    'log.notes.setdefault("unsupported", {})',
    'if "not_sent" in ex.notes: pass',
    'ex.notes.update(params=1)',
    'ex.notes.update({"route_retry": 1})',
    'Exchange(label="x", notes={"streaming": True})',
])
def test_the_bare_string_check_sees_each_form(source):
    """The check itself can fail: each way a key is written or read, spelled bare, is caught."""
    assert bare_strings(source), source


def test_the_check_leaves_constants_and_other_dicts_alone():
    assert not bare_strings('ex.notes[STREAMING] = True\nx = card.get("streaming")\ny = {"binding": 1}')
