"""The tables that let a run import only what it plays and judges: `drivers.DRIVER_MODULES` (the module of each
driver) and `rules.RULE_MODULES` (the modules of each requirement-ID prefix). Each is checked here against what
the modules register when all are imported, so that a driver or rule added elsewhere cannot be missed by a run
(tests/e2e/test_run_imports.py checks what a run of one profile imports)."""

from __future__ import annotations

import importlib
import pkgutil
import threading
import time

import pytest
from logs import frame_log

from streamcert import drivers, rules
from streamcert.catalogue import load_scenario, scenario_ids
from streamcert.rules import engine


def _import_all(package) -> None:
    for info in pkgutil.walk_packages(package.__path__, prefix=f"{package.__name__}."):
        importlib.import_module(info.name)


def _in_rules(fn) -> str:
    """A rule's module as RULE_MODULES names it: its path under the rules package (`a2a.stream`)."""
    return fn.__module__.removeprefix(f"{rules.__name__}.")


def test_every_driver_is_in_the_module_the_table_names():
    _import_all(drivers)
    registered = {name: fn.__module__ for name, fn in drivers._DRIVERS.items()}
    assert registered == {name: f"streamcert.drivers.{module}" for name, module in drivers.DRIVER_MODULES.items()}


def test_every_scenario_names_a_driver_of_the_table():
    missing = {sid: load_scenario(sid).data.get("driver", sid) for sid in scenario_ids()}
    assert {sid: d for sid, d in missing.items() if d not in drivers.DRIVER_MODULES} == {}


def test_every_rule_is_in_a_module_its_prefix_names():
    _import_all(rules)
    wrong = {}
    for rid, entries in engine._REGISTRY.items():
        modules = {_in_rules(entry.fn) for entry in entries}
        listed = set(rules.RULE_MODULES.get(rules.prefix_of(rid), ()))
        if not modules <= listed:
            wrong[rid] = sorted(modules - listed)
    assert wrong == {}


def test_every_module_of_the_table_decides_a_requirement_of_its_prefix():
    _import_all(rules)
    deciding = {(rules.prefix_of(rid), _in_rules(entry.fn))
                for rid, entries in engine._REGISTRY.items() for entry in entries}
    listed = {(prefix, module) for prefix, modules in rules.RULE_MODULES.items() for module in modules}
    assert listed - deciding == set()


def test_no_requirement_is_decided_in_two_modules():
    """A judgement imports the modules it needs in the order the run meets them: were one ID decided in two
    modules, the order of its rules (and of their findings) would depend on which scenario came first."""
    _import_all(rules)
    shared = {rid: sorted({e.fn.__module__ for e in entries}) for rid, entries in engine._REGISTRY.items()}
    assert {rid: mods for rid, mods in shared.items() if len(mods) > 1} == {}


@pytest.fixture
def fresh_rules(monkeypatch):
    """The rules package as a new process sees it: nothing loaded yet (the modules already imported stay)."""
    monkeypatch.setattr(rules, "_loaded", set())


def test_judging_loads_the_modules_of_the_ids_judged(fresh_rules, monkeypatch):
    imported: list[str] = []
    monkeypatch.setattr(rules.importlib, "import_module", lambda name: imported.append(name))
    rules.judge(frame_log(), ["A2A-STREAM-004", "WIRE-001", "NOPE-001"])
    assert imported == ["streamcert.rules.a2a.field_names", "streamcert.rules.a2a.stream",
                        "streamcert.rules.a2a.stream_forms", "streamcert.rules.a2a.wire"]
    imported.clear()
    rules.judge(frame_log(), ["WIRE-002", "CLIENT-ACP-001"])  # WIRE's are loaded already
    assert imported == ["streamcert.rules.acp_client.client_acp"]


def test_the_registered_ids_are_every_modules(fresh_rules):
    _import_all(rules)
    assert rules.registered_ids() == engine.registered()
    assert "*" in rules._loaded


def test_a_judgement_in_another_thread_waits_for_the_rules_being_loaded(fresh_rules, monkeypatch):
    """The meta-test judges in threads: a thread that finds a prefix being loaded by another returns only once its
    rules are registered, not as soon as the prefix is claimed."""
    real, events = rules.importlib.import_module, []

    def slow(name):
        time.sleep(0.2)
        events.append(("imported", name))
        return real(name)

    monkeypatch.setattr(rules.importlib, "import_module", slow)
    threads = [threading.Thread(target=lambda: (rules.load_rules(["LINE-001"]), events.append(("returned", None))))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert events == [("imported", "streamcert.rules.line.line"), ("returned", None), ("returned", None)]
