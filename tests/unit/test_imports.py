"""The package's imports, read statically with `ast` (nothing imported): no import cycle among the modules of
plugins/streamcert/, and the layering of docs/architecture.md ("The packages and what each may import").

An import counts wherever it is written: at module level and inside a function (a lazy import still ties the
two modules together; it only moves the failure to run time). An import under `if TYPE_CHECKING:` does not
count: it is never executed, it names a type for the checker. A lazy import that closes a cycle is allowed only
when listed in LAZY_CYCLES with its reason.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "plugins"
PACKAGE = "streamcert"

# The function-level imports allowed to close a cycle (importer, imported): keep this list short, each with why.
LAZY_CYCLES = {
    # FrameLog.save / FrameLog.load, the documented shorthand for cassette.write / cassette.load: the data model
    # names its file form, and recordings/cassette.py (which builds FrameLogs) is imported only when a log is saved or
    # loaded.
    ("streamcert.framelog", "streamcert.recordings.cassette"),
    # rules.engine.unread_frame (ex_evidence of a stream) reads each frame as the one walk over the stream's frames
    # read it (common/streamview.frame_facts, which builds the TaskStream in the same walk), not by parsing all of them
    # again; streamview reads its views through the engine.
    ("streamcert.rules.engine", "streamcert.rules.common.streamview"),
}

# The layers of docs/architecture.md, lowest first: the modules of each (a package name covers its modules; a dotted
# name places one module of a package in another layer than its package's).
LAYERS = {
    "contract": ("contract",),
    "protocols": ("protocols",),
    "model": ("__init__", "framelog", "recordings.cassette", "outcomes", "limits", "catalogue", "scrub", "targets",
              "wallclock", "suite_map", "safe_names", "card_keys"),
    "wire": ("wire",),
    "rules": ("rules",),
    "recordings": ("recordings",),
    "reference": ("reference",),
    "report": ("report",),
    "drivers": ("drivers",),
    "running": ("__main__", "cli", "plugin", "run_options", "github_action", "running", "matrix"),
}
MAY_IMPORT = {
    "contract": {"contract"},
    "protocols": {"protocols"},
    "model": {"contract", "protocols", "model"},
    "wire": {"contract", "protocols", "model", "wire"},
    "rules": {"contract", "protocols", "model", "rules", "wire"},  # of wire/, only WIRE_READERS (below)
    "recordings": {"contract", "protocols", "model", "wire", "recordings"},
    "reference": {"contract", "protocols", "model", "wire", "reference"},
    "report": {"contract", "protocols", "model", "report", "wire"},  # of wire/, only URL_READERS (below)
    "drivers": {"contract", "protocols", "model", "wire", "recordings", "drivers"},
    "running": set(LAYERS),
}
# What a rule may take from wire/: the parsers and readers of what was captured, never a client (a rule that
# reused the client's reading could not catch a fault the client shares).
WIRE_READERS = {"streamcert.wire.sse", "streamcert.wire.jsonlines", "streamcert.wire.stdio"}
# What the report may take from wire/: how a URL is joined (the card URL a run tried), nothing that sends.
URL_READERS = {"streamcert.wire.urls"}
# Known departures from the table, each with why (the test fails once one is gone: remove it then).
DEPARTURES: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    lazy: bool  # inside a function


def _modules() -> dict[str, tuple[Path, bool]]:
    """Module name → (file, whether it is a package's __init__)."""
    found = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = _modules()


def _type_checking_only(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(inner) for stmt in node.body for inner in ast.walk(stmt)}
    return skipped


def _walk(node: ast.AST, lazy: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    for child in ast.iter_child_nodes(node):
        yield child, lazy
        yield from _walk(child, lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))


def imports_of(name: str) -> list[Import]:
    """Every import of a module of the package that `name` makes (`from . import x` names the module x)."""
    path, is_package = MODULES[name]
    tree = ast.parse(path.read_text("utf-8"))
    skipped = _type_checking_only(tree)
    out = []
    for node, lazy in _walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = name.split(".") if is_package else name.split(".")[:-1]
                base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for target in dict.fromkeys(targets):
            if target in MODULES and target != name:
                out.append(Import(name, target, node.lineno, lazy))
    return out


IMPORTS = [one for name in MODULES for one in imports_of(name)]


def layer_of(name: str) -> str:
    short = name.removeprefix(PACKAGE).removeprefix(".") or "__init__"
    found = [(len(member), layer) for layer, members in LAYERS.items() for member in members
             if short == member or short.startswith(member + ".")]
    if found:
        return max(found)[1]  # the most precise member: `recordings.cassette` (model) before `recordings`
    raise AssertionError(f"{name} is in no layer: add it to LAYERS here and to docs/architecture.md's table")


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each as a cycle through them."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(_cycle_through(sorted(component), edges))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _cycle_through(component: list[str], edges: dict[str, set[str]]) -> list[str]:
    """One closed path inside the component, from its first module back to it (breadth first: the shortest)."""
    start, members = component[0], set(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges[v] & members):
            if w == start:
                return paths[v] + [start]
            if w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return component


def _edges(imports: list[Import]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {name: set() for name in MODULES}
    for one in imports:
        if not (one.lazy and (one.importer, one.imported) in LAZY_CYCLES):
            edges[one.importer].add(one.imported)
    return edges


def _where(importer: str, imported: str) -> str:
    lines = [f"{MODULES[one.importer][0].relative_to(ROOT.parent)}:{one.line}" for one in IMPORTS
             if (one.importer, one.imported) == (importer, imported)]
    return ", ".join(lines)


# -- the walk itself ------------------------------------------------------------------------------------

def test_the_walk_reads_every_kind_of_import():
    def named(importer: str) -> dict[str, bool]:
        return {one.imported: one.lazy for one in imports_of(importer)}

    plugin = named("streamcert.plugin")
    assert plugin["streamcert.running.live"] is False  # from .running import live, selection
    assert plugin["streamcert.suite_map"] is False  # from .suite_map import …
    assert plugin["streamcert.reference.process"] is True  # inside a method
    assert "streamcert.wire.activity" in named("streamcert.wire.a2a_client")  # from . import activity
    assert named("streamcert.report.baseline")["streamcert.suite_map"] is False  # from ..suite_map import …
    assert "streamcert.framelog" not in named("streamcert.protocols.bindings")  # only under TYPE_CHECKING
    assert named("streamcert.framelog")["streamcert.recordings.cassette"] is True


def test_a_cycle_is_found_and_named():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(edges) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


# -- the package ----------------------------------------------------------------------------------------

def test_no_import_cycle_among_the_package_modules():
    edges = _edges(IMPORTS)
    found = cycles(edges)
    assert not found, "import cycles (module → module … back): " + "; ".join(
        " → ".join(cycle) + " (" + ", ".join(_where(a, b) for a, b in zip(cycle, cycle[1:])) + ")"
        for cycle in found)


@pytest.mark.parametrize("allowed", sorted(LAZY_CYCLES), ids=lambda pair: " → ".join(pair))
def test_each_allowed_lazy_import_still_closes_a_cycle(allowed):
    """An entry of LAZY_CYCLES is still a function-level import and still needed (else remove it)."""
    imports = [one for one in IMPORTS if (one.importer, one.imported) == allowed]
    assert imports and all(one.lazy for one in imports), f"{allowed}: no longer a lazy import only"
    edges = _edges(IMPORTS)
    edges[allowed[0]].add(allowed[1])
    assert any(set(allowed) <= set(cycle) for cycle in cycles(edges)), f"{allowed}: closes no cycle now: remove it"


def test_every_module_has_a_layer():
    for name in MODULES:
        layer_of(name)


def test_each_layer_imports_only_what_docs_architecture_allows():
    wrong = []
    for one in IMPORTS:
        mine, theirs = layer_of(one.importer), layer_of(one.imported)
        if (one.importer, one.imported) in DEPARTURES:
            continue
        if theirs not in MAY_IMPORT[mine]:
            wrong.append(f"{one.importer} ({mine}) imports {one.imported} ({theirs}): {_where(one.importer, one.imported)}")
        elif mine == "rules" and theirs == "wire" and one.imported not in WIRE_READERS:
            wrong.append(f"{one.importer} imports the wire client {one.imported}: {_where(one.importer, one.imported)}")
        elif mine == "report" and theirs == "wire" and one.imported not in URL_READERS:
            wrong.append(f"{one.importer} imports {one.imported} of wire/: {_where(one.importer, one.imported)}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("departure", sorted(DEPARTURES), ids=lambda pair: " → ".join(pair))
def test_each_known_departure_is_still_there(departure):
    assert any((one.importer, one.imported) == departure for one in IMPORTS), f"{departure} is gone: remove it"


def test_protocols_import_nothing_of_the_project_and_rules_never_the_reference():
    """The two rules the table's layers exist for, stated on their own."""
    for one in IMPORTS:
        if layer_of(one.importer) == "protocols":
            assert layer_of(one.imported) == "protocols", f"{one.importer} imports {one.imported}"
        if layer_of(one.importer) == "rules":
            assert layer_of(one.imported) not in ("reference", "drivers", "recordings", "running"), \
                f"{one.importer} imports {one.imported}"


def test_the_wire_layer_and_the_offline_commands_never_import_pytest():
    """The activity hook the wire code calls is no pytest plugin: `streamcert check`, `replay`, `list` start
    without pytest (and without pluggy)."""
    heavy = {"pytest", "_pytest", "pluggy"}
    for name in MODULES:
        if layer_of(name) in ("contract", "wire", "model", "protocols", "rules", "recordings", "report"):
            tree = ast.parse(MODULES[name][0].read_text("utf-8"))
            skipped = _type_checking_only(tree)
            for node in ast.walk(tree):
                if id(node) in skipped:
                    continue
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
                assert not {n.split(".")[0] for n in names} & heavy, f"{name} imports {names}"


# -- importing ------------------------------------------------------------------------------------------

def test_importing_streamcert_sets_nothing_in_the_environment():
    """`import streamcert` (as pytest does for every session, through the plugin's entry point) and the command's
    module leave os.environ as they found it; gRPC's settings are made where grpc is imported
    (grpc_messages.import_grpc, tested in test_grpc_messages.py). Run in a fresh interpreter without those
    settings, so neither this process's imports nor a user's own values hide a change."""
    script = ("import os, sys; before = dict(os.environ); "
              "import streamcert, streamcert.cli, streamcert.plugin, streamcert.rules, streamcert.drivers; "
              "changed = sorted(k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k)); "
              "print(changed, 'grpc' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRPC_")}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] False", done.stdout
