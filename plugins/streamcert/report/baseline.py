"""Baselines: the failures a run is expected to have (`--baseline FILE`), and writing one from a report
(`streamcert baseline REPORT`).

A baseline file is YAML (`.yaml`, `.yml`) or JSON (`.json`; another name is read as JSON, then as YAML) and
holds either

    expected_failures:
      - A2A-STREAM-004                     # a bare id: expected to fail, in whatever scenario
      - id: A2A-ERR-009
        reason: "-32001 for a missing task: fixed in 2.3 (TICKET-12)"
        scenario: errors                   # optional: a scenario id, or a list of them

or a previous `compatibility.json` (a document with a `requirements` list), whose FAIL and ERROR
requirements are the expected failures. An
object entry needs a non-empty `reason` (an object is written to say why; a bare id stays accepted for
the older form) and takes no other keys than `id`, `reason` and `scenario` (a misspelt `scenarios` would
otherwise widen the entry silently). An id listed twice is refused.

Applied to a report (`apply_baseline`): a listed requirement whose status is FAIL or ERROR is an expected
failure (`"baseline": "expected"`), and no longer makes the verdict FAIL — but with a `scenario`, only when
every test whose finding on it is a failure drives one of the entry's scenarios (the suite test → scenario
table, suite_map.scenarios_of_test); a failure in another scenario stays unexcused (no `"baseline"` mark: it
fails the run), and the entry's scenarios are shown in `"baseline_scenarios"`. A listed requirement now judged and not
failing (PASS, NON_STRICT, WARNING) is stale (`"baseline": "stale"`): the report lists it under
`stale_baseline` and the verdict is FAIL, so the baseline gets updated. A listed requirement that was not
judged (NOT_TESTED, UNSUPPORTED, SKIPPED) is neither. The entry's reason goes into `"baseline_reason"`.

`load_baseline` (the `--baseline` option, before the run) refuses a file that is unreadable, not YAML/JSON,
not of this shape, or that names an id the catalogue does not have or a scenario that does not exist or does
not exercise the requirement, each with a "did you mean". A document given to `build_report` directly has
its unknown ids reported in `baseline_unknown` (no verdict effect).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..catalogue import Requirement, load_catalogue
from ..outcomes import Outcome
from ..suite_map import scenarios_of_test

JUDGED_NON_FAILURES = (Outcome.PASS, Outcome.NON_STRICT, Outcome.WARNING)
SHAPE = ('expected {"expected_failures": ["ID" or {"id": ..., "reason": ..., "scenario": ...}, ...]} '
         'or a compatibility.json')
ENTRY_KEYS = ("id", "reason", "scenario")
FAILED = (Outcome.FAIL.value, Outcome.ERROR.value)


class BaselineError(ValueError):
    """A baseline document that is not of the documented shape; the message says where."""


@dataclass(frozen=True)
class Expected:
    """One baseline entry: a requirement expected to fail, why, and in which scenarios (none: any)."""

    req_id: str
    reason: str | None = None
    scenarios: frozenset[str] = frozenset()

    def excuses(self, failing_tests: Sequence[str]) -> bool:
        """Whether the failure these tests found is the one this entry expects."""
        if not self.scenarios:
            return True
        driven = [scenarios_of_test(test) for test in failing_tests]
        return bool(driven) and all(scenarios and set(scenarios) <= self.scenarios for scenarios in driven)


# -- reading ------------------------------------------------------------------------------------------

def baseline_entries(document: Any) -> dict[str, Expected]:
    """The entries of a baseline document, by requirement id; BaselineError for one of another shape."""
    if not isinstance(document, Mapping):
        raise BaselineError(SHAPE)
    listed = document.get("expected_failures")
    # A previous compatibility.json: its FAIL and ERROR requirements. Read first, because a report of a run
    # with a baseline also has an `expected_failures` list, of the failures that baseline excused only.
    if isinstance(document.get("requirements"), list):
        previous = document["requirements"]
        if not all(isinstance(e, Mapping) and isinstance(e.get("id"), str) for e in previous):
            raise BaselineError(SHAPE)
        return {e["id"]: Expected(e["id"]) for e in previous if e.get("status") in FAILED}
    if not isinstance(listed, list):
        raise BaselineError(SHAPE)
    entries: dict[str, Expected] = {}
    for number, item in enumerate(listed, 1):
        entry = _entry(item, number)
        if entry.req_id in entries:
            raise BaselineError(f"expected_failures entry {number}: {entry.req_id} is listed twice "
                                "(one entry per requirement; `scenario` takes a list)")
        entries[entry.req_id] = entry
    return entries


def _entry(item: Any, number: int) -> Expected:
    where = f"expected_failures entry {number}"
    if isinstance(item, str) and item:
        return Expected(item)
    if not isinstance(item, Mapping):
        raise BaselineError(f"{where}: expected an id or {{id, reason, scenario}}, not {_short(item)}")
    extra = sorted(str(key) for key in item if key not in ENTRY_KEYS)
    if extra:
        raise BaselineError(f"{where}: unknown key(s) {', '.join(extra)} (an entry has id, reason and scenario)")
    req_id, reason, scenario = item.get("id"), item.get("reason"), item.get("scenario")
    if not isinstance(req_id, str) or not req_id:
        raise BaselineError(f"{where}: `id` must be a requirement id, not {_short(req_id)}")
    if not isinstance(reason, str) or not reason.strip():
        raise BaselineError(f"{where} ({req_id}): an entry written as an object needs a `reason` "
                            "(why the failure is accepted); a bare id needs none")
    scenarios = [scenario] if isinstance(scenario, str) else scenario
    if scenario is not None and not (isinstance(scenarios, list) and scenarios
                                     and all(isinstance(s, str) and s for s in scenarios)):
        raise BaselineError(f"{where} ({req_id}): `scenario` must be a scenario id or a list of them, "
                            f"not {_short(scenario)}")
    return Expected(req_id, reason.strip(), frozenset(scenarios or ()))


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:59] + "…"


def expected_failures_of(baseline: Any) -> set[str]:
    """The requirement ids a baseline document expects to fail."""
    return set(baseline_entries(baseline))


def _parse(path: Path, text: str) -> Any:
    """JSON for .json, YAML for .yaml/.yml, else JSON and then YAML; ValueError naming what it is not."""
    suffix = path.suffix.lower()
    if suffix != ".yaml" and suffix != ".yml":
        try:
            return json.loads(text)
        except ValueError as exc:
            if suffix == ".json":
                raise ValueError(f"{path}: not JSON ({exc})") from None
    import yaml  # PyYAML (a dependency of vcrpy); only a YAML baseline pays for its import

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        what = "not YAML" if suffix in (".yaml", ".yml") else "neither JSON nor YAML"
        raise ValueError(f"{path}: {what} ({' '.join(str(exc).split())})") from None


def load_baseline(path: str | Path, catalogue: Mapping[str, Requirement] | None = None) -> dict[str, Any]:
    """Read and check a baseline file; the result is what `build_report(baseline=...)` takes. Raises
    ValueError with one line naming the file: not readable, not YAML or JSON, not the documented shape, an
    id that is not in the catalogue (a mistyped id would otherwise excuse nothing, silently), a scenario that
    does not exist or does not exercise the entry's requirement."""
    path = Path(path)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    document = _parse(path, text)
    try:
        entries = baseline_entries(document)
    except BaselineError as exc:
        raise ValueError(f"{path}: {exc}") from None
    known = load_catalogue() if catalogue is None else catalogue
    unknown = sorted(set(entries) - set(known))
    if unknown:
        raise ValueError(f"{path}: not in the catalogue: {', '.join(_with_hint(rid, known) for rid in unknown)}")
    problems = _scenario_problems(entries.values())
    if problems:
        raise ValueError(f"{path}: {'; '.join(problems)}")
    return document


def _with_hint(name: str, known: Any) -> str:
    close = difflib.get_close_matches(name, known, 1)
    return f"{name} (did you mean {close[0]}?)" if close else name


def _scenario_problems(entries: Any) -> list[str]:
    from ..catalogue import load_scenario, scenario_ids

    names = scenario_ids()
    problems = []
    for entry in entries:
        for sid in sorted(entry.scenarios):
            if sid not in names:
                problems.append(f"{entry.req_id}: no scenario {_with_hint(sid, names)}")
            elif entry.req_id not in load_scenario(sid).requirements:
                those = [s for s in names if entry.req_id in load_scenario(s).requirements]
                problems.append(f"{entry.req_id}: scenario {sid} does not exercise it "
                                f"(these do: {', '.join(those) or 'none'})")
    return problems


# -- applying -----------------------------------------------------------------------------------------

def apply_baseline(entries: list[dict[str, Any]], baseline: Any,
                   failing_tests: Mapping[str, Sequence[str]]) -> tuple[list[str], list[str]]:
    """Mark the report's entries in place (see the module docstring); return (stale ids, unknown ids), the
    stale ones in catalogue order. `failing_tests`: per requirement, the tests whose finding is a failure."""
    expected = baseline_entries(baseline)
    stale: list[str] = []
    for entry in entries:
        item = expected.get(entry["id"])
        if item is None:
            continue
        status = Outcome(entry["status"])
        if status.is_failure and item.excuses(failing_tests.get(entry["id"], ())):
            entry["baseline"] = "expected"
        elif status.is_failure:  # not excused: no "baseline" mark; what the baseline expected is said
            entry["baseline_scenarios"] = sorted(item.scenarios)
        elif status in JUDGED_NON_FAILURES:
            entry["baseline"] = "stale"
            stale.append(entry["id"])
        else:
            continue
        if item.reason:
            entry["baseline_reason"] = item.reason
    known = {entry["id"] for entry in entries}
    return stale, sorted(set(expected) - known)


# -- writing one from a report (`streamcert baseline REPORT`) ---------------------------------------------

HEADER = """\
# streamcert baseline: the failures a run is expected to have (streamcert run --baseline THIS_FILE).
# Written by `streamcert baseline` from {source} ({when}).
# EDIT EACH REASON: it says why the failure is accepted (a ticket, a decision, a date) and is shown in
# the report; as written it is only the failure's first message line. An entry with `scenario` is
# excused only when the failure is found in that scenario. A listed requirement that passes again
# fails the run (a stale entry): remove it then. A bare id (- WIRE-007) is expected in any scenario.
"""


def baseline_from_report(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The entries of a baseline that expects every FAIL and ERROR of `report` (a compatibility.json), in its
    order: the reason is the first line of the message, and `scenario` is given when every test that judged
    the requirement drives one same scenario."""
    if report.get("could_not_run"):
        raise ValueError(f"the run stopped before any scenario ({report['could_not_run']}): nothing was judged, "
                         "so there is nothing to expect")
    if not isinstance(report.get("requirements"), list):
        raise ValueError("not a compatibility.json (no `requirements` list)")
    out = []
    for entry in report["requirements"]:
        if entry.get("status") not in FAILED:
            continue
        first = next((line.strip() for line in str(entry.get("message") or "").splitlines() if line.strip()), "")
        item: dict[str, Any] = {"id": entry["id"], "reason": _short_reason(first) or
                                f"{entry['status']} in the report of {report.get('started')}"}
        driven = {sid for test in entry.get("tests") or () for sid in scenarios_of_test(test) or ("",)}
        if len(driven) == 1 and "" not in driven:
            item["scenario"] = driven.pop()
        out.append(item)
    return out


MAX_REASON = 160  # characters of a message line a written baseline keeps as the reason


def _short_reason(line: str) -> str:
    """A message line as a reason to edit: without its closing citation (` [A2A 1.0.1 · §3 …]`: the report
    and `streamcert explain` give the sources) and cut to MAX_REASON characters."""
    if line.endswith("]"):
        depth = 0
        for index in range(len(line) - 1, 0, -1):
            depth += {"]": 1, "[": -1}.get(line[index], 0)
            if depth == 0:
                if line[index - 1] == " " and line[: index - 1].strip():
                    line = line[: index - 1].rstrip()
                break
    return line if len(line) <= MAX_REASON else line[: MAX_REASON - 1].rstrip() + "…"


def baseline_yaml(report: Mapping[str, Any], source: str) -> str:
    """The text of the baseline file: the header, then each entry under a comment naming its level and
    sentence."""
    import yaml

    entries = baseline_from_report(report)
    catalogue = load_catalogue()
    text = HEADER.format(source=source, when=report.get("finished") or report.get("started") or "undated")
    if not entries:
        return text + "# The report has no FAIL or ERROR: nothing is expected to fail.\nexpected_failures: []\n"
    text += "expected_failures:\n"
    for item in entries:
        req = catalogue.get(item["id"])
        if req is not None:
            title = " ".join(req.title.split())
            sentence = title if len(title) <= 100 else title[:99] + "…"
            text += f"# {req.level}: {sentence}\n"
        text += yaml.safe_dump([item], sort_keys=False, allow_unicode=True, width=100)
    return text
