"""Narrowing a run: `--requirement GLOB` and `--scenario GLOB` (run options), pytest's own `-k`, `-m` and
`--deselect`, and what the report says of the requirements left out.

docs/contracts.md §3: a requirement of a selected profile that the selection leaves out is NOT_TESTED with the reason
"not selected (…)", so a narrowed run never certifies. A requirement that does not match `--requirement`
is NOT_TESTED even when a test that ran happened to judge it (the user asked about other requirements);
one whose every scenario was left out (by `--scenario`, `-k`, `-m`, …) has no finding to show. SKIPPED
stays for profiles and levels, which the report's entries check first.

Each conformance test item carries, as keywords, the requirement ids and scenario ids of the scenarios it
drives (`-k A2A-STREAM-004`, `-k stream-basic`; pytest's -k grammar takes `-` in a name and matches a
substring, any case), and the marker `streamcert_profile(name)`, so that `-m streamcert_profile` picks
the conformance tests of a run that mixes them with a user's own.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..catalogue import PROFILES, load_catalogue, load_scenario, scenario_ids
from ..suite_map import profiles_of, scenarios_of_item, scenarios_of_test

if TYPE_CHECKING:  # pytest is not imported at run time: run_options (and so the CLI's start-up) imports this module
    import pytest

PLUGIN = "streamcert-selection"  # the name the Selection object is registered under


def matches(name: str, globs: Iterable[str]) -> bool:
    """Whether an id matches one of the globs (fnmatch, any case: ids are upper case, scenarios lower)."""
    return any(fnmatchcase(name.upper(), glob.upper()) for glob in globs)


@lru_cache(maxsize=1)
def coverage() -> dict[str, tuple[str, ...]]:
    """Requirement id → the scenarios that exercise it (cases/scenarios/*.json)."""
    found: dict[str, list[str]] = {}
    for sid in scenario_ids():
        for req_id in load_scenario(sid).requirements:
            found.setdefault(req_id, []).append(sid)
    return {req_id: tuple(sids) for req_id, sids in found.items()}


# -- the validators of --requirement and --scenario -----------------------------------------------------

def _did_you_mean(value: str, names: list[str]) -> str:
    wild = any(ch in value for ch in "*?[")
    if wild:  # a glob: suggest one built on a known prefix (A2A-STREAM-*, ix-*)
        names = sorted({name.rsplit("-", 1)[0] + "-*" for name in names} | {name.split("-")[0] + "-*" for name in names})
    close = difflib.get_close_matches(value.upper(), [n.upper() for n in names], n=1, cutoff=0.6)
    if not close:
        return ""
    shown = next(n for n in names if n.upper() == close[0])
    return f" (did you mean {shown}?)"


def requirement_glob(value: str) -> str:
    """A glob that names at least one requirement of the catalogue (`A2A-STREAM-004`, `A2A-STREAM-*`)."""
    return _known_glob(value, list(load_catalogue()), "requirement of the catalogue")


def scenario_glob(value: str) -> str:
    """A glob that names at least one scenario (`stream-basic`, `ix-*`)."""
    return _known_glob(value, scenario_ids(), "scenario")


def _known_glob(value: str, ids: list[str], what: str) -> str:
    glob = value.strip()
    if not glob:
        raise argparse.ArgumentTypeError("an empty glob would select nothing")
    if not any(matches(one, [glob]) for one in ids):
        raise argparse.ArgumentTypeError(f"{value!r} matches no {what}{_did_you_mean(glob, ids)}"
                                         " (streamcert list shows them)")
    return glob


# -- what a selection chooses ----------------------------------------------------------------------------

def chosen_scenarios(requirement_globs: Iterable[str] = (), scenario_globs: Iterable[str] = ()) -> set[str] | None:
    """The scenarios the globs choose (both given: a scenario must match --scenario and exercise a requirement
    that matches --requirement); None when neither is given (every scenario)."""
    requirement_globs, scenario_globs = tuple(requirement_globs), tuple(scenario_globs)
    if not requirement_globs and not scenario_globs:
        return None
    chosen = set(scenario_ids())
    if scenario_globs:
        chosen = {sid for sid in chosen if matches(sid, scenario_globs)}
    if requirement_globs:
        chosen = {sid for sid in chosen if any(matches(r, requirement_globs) for r in load_scenario(sid).requirements)}
    return chosen


def refuse(values: Mapping[str, Any], flag_of: Mapping[str, str]) -> str | None:
    """Why the selection cannot run (one line), else None: a glob that matches nothing of the profiles the run
    selects, or --requirement and --scenario that choose no scenario together. `flag_of`: option name → the
    flag the user wrote (--requirement on `streamcert run`, --streamcert-requirement in pytest)."""
    requirement_globs = tuple(values.get("requirements") or ())
    scenario_globs = tuple(values.get("scenarios") or ())
    profiles = profiles_of(values)
    shown = ", ".join(p for p in PROFILES if p in profiles)
    in_profiles = [sid for sid in scenario_ids() if load_scenario(sid).profile in profiles]
    for glob in requirement_globs:
        if not any(req.profile in profiles and matches(req.id, [glob]) for req in load_catalogue().values()):
            return f"{flag_of['requirements']} {glob}: matches no requirement of the selected profiles ({shown})"
    for glob in scenario_globs:
        if not any(matches(sid, [glob]) for sid in in_profiles):
            return f"{flag_of['scenarios']} {glob}: matches no scenario of the selected profiles ({shown})"
    chosen = chosen_scenarios(requirement_globs, scenario_globs)
    if chosen is not None and not chosen & set(in_profiles):
        return (f"{flag_of['requirements']} {' '.join(requirement_globs)} and {flag_of['scenarios']} "
                f"{' '.join(scenario_globs)}: no scenario of the selected profiles matches both")
    return None


def narrowing(profiles: set[str], requirement_globs: Iterable[str] = (), scenario_globs: Iterable[str] = (),
              ran: set[str] | None = None, pytest_reason: str = "") -> dict[str, Any]:
    """What the report says of a narrowed run (`build_report(selection=…)`): `not_selected`, requirement id →
    the reason it is NOT_TESTED, for requirements of the selected `profiles`; `narrowed`, whether the run
    left anything out (then its verdict is never PASS); the globs; `scenarios_not_run`.

    `ran`: the scenarios of the tests the run kept after collection (None: those the globs choose, when no
    collection took place, e.g. a target that could not be reached); `pytest_reason`: how pytest's own
    options narrowed it (`-k EXPR`)."""
    requirement_globs, scenario_globs = tuple(requirement_globs), tuple(scenario_globs)
    chosen = chosen_scenarios(requirement_globs, scenario_globs)
    in_profiles = {sid for sid in scenario_ids() if load_scenario(sid).profile in profiles}
    if ran is None:
        ran = in_profiles if chosen is None else chosen
    reasons: dict[str, str] = {}
    for req in load_catalogue().values():
        if req.profile not in profiles:
            continue
        exercising = set(coverage().get(req.id, ()))
        if requirement_globs and not matches(req.id, requirement_globs):
            reasons[req.id] = f"not selected (--requirement {' '.join(requirement_globs)})"
        elif not exercising or exercising & ran:
            continue  # judged by a test that ran (or by no scenario at all: "no test produced a finding")
        elif chosen is not None and not exercising & chosen:
            reasons[req.id] = f"not selected (--scenario {' '.join(scenario_globs)})"
        else:
            reasons[req.id] = f"not selected ({pytest_reason or 'not among the tests collected'})"
    not_run = sorted(in_profiles - ran)
    info: dict[str, Any] = {"not_selected": reasons, "narrowed": bool(reasons or not_run)}
    if requirement_globs:
        info["requirement_globs"] = list(requirement_globs)
    if scenario_globs:
        info["scenario_globs"] = list(scenario_globs)
    if pytest_reason:
        info["pytest"] = pytest_reason
    if info["narrowed"]:
        info["scenarios_not_run"] = not_run
    return info


def pytest_narrowing(config: pytest.Config) -> str:
    """How pytest's own options narrowed the run, as the report names it (`-k EXPR`, `-m EXPR`, `--deselect`)."""
    parts = []
    if getattr(config.option, "keyword", ""):
        parts.append(f"-k {config.option.keyword}")
    if getattr(config.option, "markexpr", ""):
        parts.append(f"-m {config.option.markexpr}")
    if getattr(config.option, "deselect", None):
        parts.append("--deselect " + " ".join(config.option.deselect))
    return ", ".join(parts)


# -- the conformance test items ----------------------------------------------------------------------------

class Selection:
    """The selection hooks of one pytest run: keywords and the marker on each conformance item, the
    deselection by --requirement / --scenario, and (on the controller) the scenarios the run kept."""

    def __init__(self, config: pytest.Config, options: Mapping[str, Any]) -> None:
        self.config = config
        self.requirement_globs = tuple(options.get("requirements") or ())
        self.scenario_globs = tuple(options.get("scenarios") or ())
        self.chosen = chosen_scenarios(self.requirement_globs, self.scenario_globs)
        self.is_worker = hasattr(config, "workerinput")
        self.kept: set[str] | None = None  # scenarios of the conformance tests kept after collection

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        import pytest

        scenarios = scenarios_of_item(item)
        if not scenarios:
            return
        item.extra_keyword_matches.update(scenarios)
        item.extra_keyword_matches.update(req for sid in scenarios for req in load_scenario(sid).requirements)
        for profile in sorted({load_scenario(sid).profile for sid in scenarios}):
            item.add_marker(pytest.mark.streamcert_profile(profile))

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        if self.chosen is None:
            return
        kept, dropped = [], []
        for item in items:
            scenarios = scenarios_of_item(item)
            (dropped if scenarios and not self.chosen.intersection(scenarios) else kept).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.is_worker:  # (under pytest-xdist the controller collects nothing: see for_report)
            self.kept = {sid for item in session.items for sid in scenarios_of_item(item)}

    def for_report(self, profiles: set[str], runs_suite: bool, worker_ids: Iterable[str] = ()) -> dict[str, Any]:
        """`build_report(selection=…)` for this run; `worker_ids`: the test ids pytest-xdist's workers kept.
        What pytest kept counts only in a run of the conformance modules (a user's own tests calling the
        fixture narrow nothing)."""
        worker_ids = set(worker_ids)
        if worker_ids:
            self.kept = (self.kept or set()) | {sid for nodeid in worker_ids for sid in scenarios_of_test(nodeid)}
        ran = self.kept if runs_suite else None
        return narrowing(profiles, self.requirement_globs, self.scenario_globs, ran, pytest_narrowing(self.config))
