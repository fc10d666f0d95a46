"""`streamcert list` and `streamcert explain`: what the catalogue, the scenarios and the suite hold, read
from the shipped files without running anything (no network, no server, no pytest: the command starts fast).

`explain` and `list --scenarios --json` name the suite's tests of each scenario (suite_map.py, read from the
suite's source without importing it).
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..catalogue import LEVELS, Requirement, Scenario, catalogue_version, load_catalogue, load_scenario, scenario_ids
from ..suite_map import driving_tests

PROFILE_WIDTH = len("interactions")  # the longest --profile name
_WILDCARDS = re.compile(r"[*?\[]")


# -- selection ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Selection:
    """What `streamcert list` shows: --profile (none: every profile), --level (at or above) and ID globs."""

    profiles: frozenset[str] = frozenset()
    level: str = "may"
    globs: tuple[str, ...] = ()

    def level_ok(self, req: Requirement) -> bool:
        return LEVELS.index(req.level) <= LEVELS.index(self.level.upper())

    def profile_ok(self, profile: str) -> bool:
        return not self.profiles or profile in self.profiles

    def glob_ok(self, name: str) -> bool:
        return not self.globs or any(matches(name, glob) for glob in self.globs)

    def requirements(self) -> list[Requirement]:
        """The catalogue's requirements this selection keeps, in catalogue order."""
        return [req for req in load_catalogue().values()
                if self.profile_ok(req.profile) and self.level_ok(req) and self.glob_ok(req.id)]

    def scenarios(self) -> list[tuple[Scenario, list[Requirement]]]:
        """The scenarios of the selected profiles, each with the requirements it exercises at or above the
        level. With globs, a scenario is kept when a glob matches its id (then all those requirements are
        shown) or one of its requirements (then only the requirements a glob matches)."""
        catalogue = load_catalogue()
        kept = []
        for sid in scenario_ids():
            scenario = load_scenario(sid)
            if not self.profile_ok(scenario.profile):
                continue
            reqs = [catalogue[rid] for rid in _in_catalogue_order(scenario.requirements) if self.level_ok(catalogue[rid])]
            if not self.glob_ok(sid):
                reqs = [req for req in reqs if self.glob_ok(req.id)]
            if reqs:
                kept.append((scenario, reqs))
        return kept


def matches(name: str, glob: str) -> bool:
    """fnmatch, any case; a pattern without a wildcard is a prefix (`A2A-ERR` is `A2A-ERR*`)."""
    pattern = glob.upper() if _WILDCARDS.search(glob) else glob.upper() + "*"
    return fnmatch.fnmatchcase(name.upper(), pattern)


def _in_catalogue_order(ids: Iterable[str]) -> list[str]:
    order = {rid: index for index, rid in enumerate(load_catalogue())}
    return sorted(dict.fromkeys(ids), key=lambda rid: order.get(rid, len(order)))


def compress(ids: Sequence[str]) -> str:
    """`A2A-STREAM-001..004, WIRE-007`: runs of consecutive numbers of one prefix written as first..last."""
    runs: list[list[tuple[str, int, str]]] = []
    for rid in ids:
        prefix, _, number = rid.rpartition("-")
        item = (prefix, int(number) if number.isdigit() else -1, rid)
        last = runs[-1][-1] if runs else None
        if last and last[0] == prefix and last[1] >= 0 and item[1] == last[1] + 1:
            runs[-1].append(item)
        else:
            runs.append([item])
    return ", ".join(run[0][2] if len(run) == 1 else f"{run[0][2]}..{run[-1][2].rpartition('-')[2]}"
                     for run in runs)


# -- list -------------------------------------------------------------------------------------------------

def _fit(line: str, width: int | None) -> str:
    return line if width is None or len(line) <= width else line[: max(width - 1, 0)] + "…"


def requirement_lines(reqs: Sequence[Requirement], width: int | None = None) -> list[str]:
    """One aligned line per requirement: id, level, profile, title (cut to `width` when given)."""
    id_width = max((len(req.id) for req in reqs), default=0)
    return [_fit(f"{req.id:<{id_width}}  {req.level:<6}  {req.profile:<{PROFILE_WIDTH}}  {req.title}", width)
            for req in reqs]


def scenario_lines(kept: Sequence[tuple[Scenario, Sequence[Requirement]]], width: int | None = None) -> list[str]:
    """One aligned line per scenario: id, profile, the requirements it exercises (runs compressed)."""
    id_width = max((len(scenario.id) for scenario, _ in kept), default=0)
    return [_fit(f"{scenario.id:<{id_width}}  {scenario.profile:<{PROFILE_WIDTH}}  "
                 f"{compress([req.id for req in reqs])}", width)
            for scenario, reqs in kept]


def requirement_json(req: Requirement) -> dict[str, Any]:
    """A requirement for `--json`: `profile` is the --profile name, `family` the report's grouping (what
    compatibility.json calls `profile`, docs/contracts.md §4)."""
    out: dict[str, Any] = {"id": req.id, "level": req.level, "profile": req.profile, "family": req.family,
                           "title": req.title, "source": req.source}
    if req.readings:
        out["readings"] = list(req.readings)
    if req.note:
        out["note"] = req.note
    return out


def list_json(selection: Selection, scenarios: bool) -> dict[str, Any]:
    if scenarios:
        return {"catalogue_version": catalogue_version(),
                "scenarios": [{"id": scenario.id, "profile": scenario.profile, "title": scenario.title,
                               "requirements": [req.id for req in reqs], "tests": driving_tests(scenario.id)}
                              for scenario, reqs in selection.scenarios()]}
    return {"catalogue_version": catalogue_version(),
            "requirements": [requirement_json(req) for req in selection.requirements()]}


# -- explain ----------------------------------------------------------------------------------------------

class UnknownRequirement(LookupError):
    """An id the catalogue does not have; its message says what is near."""


def find_requirement(raw: str) -> Requirement:
    catalogue = load_catalogue()
    req_id = raw.strip().upper()
    if req_id in catalogue:
        return catalogue[req_id]
    if raw.strip() in scenario_ids():
        raise UnknownRequirement(f"{raw} is a scenario, not a requirement (`streamcert list --scenarios {raw}` "
                                 "lists what it exercises)")
    near = near_ids(req_id, catalogue, 3)
    hint = f" (did you mean {', '.join(near)}?)" if near else " (`streamcert list` lists them)"
    raise UnknownRequirement(f"{raw} is not in the catalogue{hint}")


def near_ids(name: str, known: Iterable[str], n: int = 1) -> list[str]:
    """The known ids closest to a mistyped one: first the same id with its number written in three digits
    (A2A-ERR-02, a2a-err-2 → A2A-ERR-002), then difflib's closest."""
    known = list(known)
    padded = re.fullmatch(r"(.*-)0*(\d+)", name.strip().upper())
    first = [f"{padded.group(1)}{int(padded.group(2)):03d}"] if padded else []
    first = [rid for rid in first if rid in known and rid != name]
    return (first + [rid for rid in difflib.get_close_matches(name, known, n) if rid not in first])[:n]


def faults_of(req_id: str) -> tuple[list[Any], list[Any]]:
    """(the reference's fault variants that break the requirement, those that may flag it as collateral)."""
    from ..reference.faults import FAULTS  # a table of dataclasses: about 10 ms to import

    return ([f for f in FAULTS.values() if req_id in f.catches], [f for f in FAULTS.values() if req_id in f.also])


def explain_json(req: Requirement) -> dict[str, Any]:
    breaking, collateral = faults_of(req.id)
    scenarios = [load_scenario(sid) for sid in scenario_ids() if req.id in load_scenario(sid).requirements]
    return {**requirement_json(req),
            **({"tolerance": dict(req.tolerance)} if req.tolerance else {}),
            "scenarios": [{"id": s.id, "profile": s.profile, "title": s.title, "tests": driving_tests(s.id)}
                          for s in scenarios],
            "faults": [{"name": f.name, "program": f.target, "description": f.description} for f in breaking],
            "collateral_faults": [f.name for f in collateral]}


def explain_lines(req: Requirement) -> list[str]:
    """The requirement as a person reads it: the sentence, where it comes from, the readings the suite accepts,
    the scenarios that exercise it (and the suite test that runs each), the fault variants that break it."""
    about = explain_json(req)
    lines = [f"{req.id}  {req.level}  profile {req.profile} ({req.family})", "", f"  {req.title}", "",
             f"source: {req.source}"]
    if req.readings:
        lines += ["readings (each is accepted; the one taken is reported):"]
        lines += [f"  - {reading}" for reading in req.readings]
    if req.note:
        lines += [f"note: {req.note}"]
    if req.tolerance:
        lines += ["tolerance: " + ", ".join(f"{key} {value}" for key, value in req.tolerance.items())]
    if about["scenarios"]:
        lines += ["scenarios that exercise it:"]
        width = max(len(s["id"]) for s in about["scenarios"])
        lines += [f"  {s['id']:<{width}}  {', '.join(s['tests']) or '(no suite test found)'}"
                  for s in about["scenarios"]]
    else:
        lines += ["scenarios that exercise it: none of the shipped scenarios lists it"]
    if about["faults"]:
        lines += ["fault variants of the reference that break it (streamcert serve --fault NAME):"]
        width = max(len(f["name"]) for f in about["faults"])
        lines += [f"  {f['name']:<{width}}  {f['description']}" for f in about["faults"]]
    collateral = about["collateral_faults"]
    if collateral:  # a broken frame can hide what this rule looks at (reference/faults.py `also`)
        named = ", ".join(collateral[:6]) + (f" and {len(collateral) - 6} more (`--json` names them)"
                                             if len(collateral) > 6 else "")
        lines += [f"may also be flagged, as collateral, under: {named}"]
    return lines
