"""From per-test findings to the compatibility report (docs/contracts.md §3 outcomes, §4 report).

The pytest plugin feeds an `Aggregator` on the controller (one `add` per test report), then calls
`build_report`, which walks the whole catalogue in order and gives every requirement a status:

- a requirement of a profile that is not selected, or below the selected level, is SKIPPED (even if a
  test happened to judge it: the user deselected it);
- a selected requirement with no finding is NOT_TESTED;
- otherwise the worst outcome of its findings (`outcomes.worst`), with the message and evidence of
  the findings that have that outcome.

Verdict (§3): only selected MUST requirements decide it. FAIL when one is FAIL or ERROR (unless the
baseline expects it) or when the baseline has a stale entry; otherwise INCOMPLETE when one is
NOT_TESTED, or NOT_TESTED over a binding the run certified (or when nothing at all was selected: an
empty run certifies nothing); otherwise PASS.

A2A bindings (`build_report(bindings=...)`, issue 15; None: a run without an A2A target): a requirement of
a profile that runs over the bindings (catalogue.BOUND_PROFILES) gets `"bindings": {binding: status}` for every
binding it applies to (`Requirement.bindings`, empty: all). A binding the run did not certify is SKIPPED
(its reason is in the report's `bindings.skipped`); a certified one takes the worst outcome of the findings
over it — a finding without a binding (a scenario run once, such as the card's) counts for every one — and
is NOT_TESTED when none was produced. The requirement's own status stays the worst of all its findings,
except that a requirement none of whose bindings was certified is SKIPPED with the reason (docs/contracts.md §3:
SKIPPED for a binding the run did not select): a GRPC- requirement in a run without gRPC never makes the
verdict INCOMPLETE. Judged over one certified binding but NOT_TESTED over another, a MUST requirement keeps
its judged status and still makes the verdict INCOMPLETE: a binding it was certified for was not tested.

A SHOULD (or MAY) requirement that FAILs keeps the status FAIL in the report — that is what the
rule decided, and the report must not hide it — but it does not change the verdict: §3 makes only
MUST requirements count. Users who want SHOULD failures to break CI read the summary counts.

Baseline (`--baseline FILE`, read by `baseline.load_baseline`): the document given to
`build_report(baseline=...)`. `baseline.apply_baseline` marks its entries: a listed failure is
expected (its status stays, `"baseline": "expected"`, no verdict effect; with a `scenario`, only when
its failing tests drive that scenario), a listed requirement now judged and not failing is a stale
entry (`"stale_baseline"`, verdict FAIL), ids the catalogue does not have are listed in
`"baseline_unknown"`. See report/baseline.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from ..catalogue import BOUND_PROFILES, LEVELS, PROFILES, Requirement, catalogue_version, load_catalogue
from ..limits import MESSAGE_CHARS, REPORT_EVIDENCE_CHARS, cut
from ..outcomes import Finding, Outcome, worst
from ..protocols.bindings import BINDINGS, TITLE
from .baseline import JUDGED_NON_FAILURES, apply_baseline, expected_failures_of, load_baseline  # noqa: F401

# Bounds on what one requirement carries into the report, however many tests judged it (each finding is
# bounded already where it is made: limits.py). The report's evidence in all: REPORT_EVIDENCE_CHARS.
MAX_MESSAGES = 3
MAX_EVIDENCE = 10
ENTRY_MESSAGE_CHARS = 2 * MESSAGE_CHARS  # the joined messages of one requirement (or of one binding)


@dataclass(frozen=True)
class RequirementResult:
    """Everything the tests said about one requirement, reduced to its worst outcome."""

    req_id: str
    outcome: Outcome
    tests: tuple[str, ...]  # every test that produced a finding for it, sorted
    finding_count: int
    message: str  # the distinct messages of the worst findings, at most MAX_MESSAGES
    evidence: tuple[dict[str, Any], ...]  # evidence of the worst findings, at most MAX_EVIDENCE
    evidence_omitted: int = 0
    measured: dict[str, Any] = field(default_factory=dict)  # of the first worst finding
    reading: str | None = None  # of the first worst finding
    # Per binding the findings went over (None: a scenario run once, over no binding in particular): their
    # worst outcome and the distinct messages of the findings that have it.
    by_binding: dict[str | None, tuple[Outcome, tuple[str, ...]]] = field(default_factory=dict)

    def over(self, binding: str) -> tuple[Outcome, str]:
        """The outcome over one binding and its message: the worst of the findings over it and of those over
        no binding (which count for every one); NOT_TESTED when there is none."""
        found = [self.by_binding[key] for key in (binding, None) if key in self.by_binding]
        if not found:
            return Outcome.NOT_TESTED, f"no test produced a finding over {TITLE.get(binding, binding)}"
        outcome = worst(o for o, _ in found)
        return outcome, _bounded_messages([m for o, messages in found if o == outcome for m in messages])


class Aggregator:
    """Collects findings per requirement on the pytest controller."""

    def __init__(self) -> None:
        self._by_requirement: dict[str, list[tuple[str, Finding]]] = {}

    def add(self, nodeid: str, findings: Iterable[Finding | dict[str, Any]]) -> None:
        """Record one test report's findings (a `Finding` or its `to_json()` form, as sent by xdist)."""
        for item in findings:
            finding = item if isinstance(item, Finding) else Finding.from_json(item)
            self._by_requirement.setdefault(finding.req_id, []).append((nodeid, finding))

    def results(self) -> dict[str, RequirementResult]:
        return {req_id: _reduce(req_id, pairs) for req_id, pairs in self._by_requirement.items()}

    def failing_tests(self) -> dict[str, tuple[str, ...]]:
        """Per requirement, the tests whose finding on it is FAIL or ERROR (a baseline entry scoped to a
        scenario excuses a failure only when these all drive it)."""
        return {req_id: tuple(sorted({nodeid for nodeid, f in pairs if f.outcome.is_failure}))
                for req_id, pairs in self._by_requirement.items()}


def _reduce(req_id: str, pairs: list[tuple[str, Finding]]) -> RequirementResult:
    # Sort by test id (stable) so that the report does not depend on xdist's arrival order.
    ordered = sorted(pairs, key=lambda pair: pair[0])
    worst_outcome = worst(finding.outcome for _, finding in ordered)
    decisive = [(nodeid, f) for nodeid, f in ordered if f.outcome == worst_outcome]
    evidence = [_evidence_item(item, nodeid, f) for nodeid, f in decisive for item in f.evidence]
    first = decisive[0][1]
    by_binding = {}
    for binding in dict.fromkeys(f.binding for _, f in ordered):
        over = [f for _, f in ordered if f.binding == binding]
        outcome = worst(f.outcome for f in over)
        by_binding[binding] = (outcome, tuple(dict.fromkeys(f.message for f in over if f.outcome == outcome)))
    return RequirementResult(
        req_id=req_id,
        outcome=worst_outcome,
        tests=tuple(dict.fromkeys(nodeid for nodeid, _ in ordered if nodeid)),  # "": no test (could not run)
        finding_count=len(ordered),
        message=_bounded_messages([f.message for _, f in decisive]),
        evidence=tuple(evidence[:MAX_EVIDENCE]),
        evidence_omitted=max(0, len(evidence) - MAX_EVIDENCE),
        measured=dict(first.measured),
        reading=first.reading,
        by_binding=by_binding,
    )


def _evidence_item(item: dict[str, Any], nodeid: str, finding: Finding) -> dict[str, Any]:
    """An evidence item as the report holds it: with the test that produced it and, when its finding went over
    one, the binding (the same scenario's frames over two bindings are different frames)."""
    out = {**item, "test": item.get("test", nodeid)}
    if finding.binding and "binding" not in out:
        out["binding"] = finding.binding
    return out


def _bounded_messages(messages: list[str]) -> str:
    distinct = [m for m in dict.fromkeys(messages) if m]
    kept = distinct[:MAX_MESSAGES]
    if len(distinct) > MAX_MESSAGES:
        kept.append(f"(and {len(distinct) - MAX_MESSAGES} more)")
    return cut("\n".join(kept), ENTRY_MESSAGE_CHARS)


def _evidence_within_budget(entries: list[dict[str, Any]], budget: int = REPORT_EVIDENCE_CHARS) -> None:
    """Keep the report's evidence in all within `budget` characters of JSON: when it is over, each requirement
    keeps its first evidence items up to an equal share of the budget (its first item always), and the rest
    is counted in its `evidence_omitted`."""
    sizes = {id(e): [len(json.dumps(item, ensure_ascii=False, default=str)) for item in e["evidence"]]
             for e in entries if e["evidence"]}
    if sum(map(sum, sizes.values())) <= budget:
        return
    share = budget // len(sizes)
    for entry in entries:
        if not entry["evidence"]:
            continue
        kept, used = 0, 0
        for size in sizes[id(entry)]:
            if kept and used + size > share:
                break
            kept, used = kept + 1, used + size
        if kept < len(entry["evidence"]):
            entry["evidence_omitted"] = entry.get("evidence_omitted", 0) + len(entry["evidence"]) - kept
            entry["evidence"] = entry["evidence"][:kept]


# -- regressions (--against) ---------------------------------------------------------------------------

MAX_REGRESSION_LINES = 60  # of one scenario's diff in the report; `streamcert diff` shows the whole of it


def regressions_section(against: str, tolerance_s: float | None,
                        compared: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The report's `regressions`: which scenarios were compared with a cassette in `against`, which had none
    there, and each that differs, with the lines of its diff (recordings/capture_diff.py)."""
    compared = list(compared)
    found = []
    for item in sorted(compared, key=lambda c: (c["scenario"], c.get("test") or "")):
        if not item.get("differences"):
            continue
        lines = list(item.get("lines") or [])
        entry = {"scenario": item["scenario"], "cassette": item.get("cassette"), "test": item.get("test"),
                 "differences": item["differences"], "lines": [cut(line) for line in lines[:MAX_REGRESSION_LINES]]}
        if len(lines) > MAX_REGRESSION_LINES:
            entry["lines_omitted"] = len(lines) - MAX_REGRESSION_LINES
        found.append(entry)
    return {"against": str(against), "timing_tolerance_s": tolerance_s,
            "compared": sorted({c["scenario"] for c in compared if c.get("cassette")}),
            "without_cassette": sorted({c["scenario"] for c in compared if not c.get("cassette")}),
            "found": found}


def regressed(report: Mapping[str, Any]) -> bool:
    """Whether the run found a regression against --against (which fails it, like a stale baseline entry)."""
    return bool((report.get("regressions") or {}).get("found"))


# -- the report ---------------------------------------------------------------------------------------


def _level_rank(level: str) -> int:
    return LEVELS.index(level.upper())


# -- A2A bindings (issue 15) ------------------------------------------------------------------------------

@dataclass(frozen=True)
class BindingSelection:
    """`build_report(bindings=...)`: the bindings the run certified, those it did not with why, and those the
    agent card declares (None: no card read, e.g. a binding chosen on the command line)."""

    certified: tuple[str, ...]
    skipped: dict[str, str] = field(default_factory=dict)
    declared: tuple[str, ...] | None = None

    @classmethod
    def of(cls, given: Mapping[str, Any]) -> BindingSelection:
        certified = tuple(given.get("certified") or ())
        skipped = {str(k): str(v) for k, v in (given.get("skipped") or {}).items()}
        declared = given.get("declared")  # as read from the card: recorded, not checked
        unknown = sorted((set(certified) | set(skipped)) - set(BINDINGS))
        if unknown:
            raise ValueError(f"unknown binding(s): {', '.join(unknown)} (known: {', '.join(BINDINGS)})")
        both = sorted(set(certified) & set(skipped))
        if both:
            raise ValueError(f"binding(s) both certified and skipped: {', '.join(both)}")
        return cls(certified, skipped, None if declared is None else tuple(declared))

    def applicable(self, req: Requirement) -> tuple[str, ...] | None:
        """The bindings `req` is judged over, in BINDINGS order; None when its profile runs over none."""
        if req.profile not in BOUND_PROFILES:
            return None
        return tuple(b for b in BINDINGS if req.applies_to(b))

    def why_not(self, binding: str) -> str:
        return self.skipped.get(binding) or "not selected"

    def not_certified(self, bindings: tuple[str, ...]) -> str:
        """The reason a requirement of these bindings only is SKIPPED."""
        names = [TITLE.get(b, b) for b in bindings]
        which = (f"the {names[0]} binding" if len(names) == 1 else
                 f"the {', '.join(names[:-1])} and {names[-1]} bindings")
        why = (self.why_not(bindings[0]) if len(bindings) == 1 else
               "; ".join(f"{TITLE.get(b, b)}: {self.why_not(b)}" for b in bindings))
        return f"a requirement of {which}, which this run did not certify: {why}"


def _binding_statuses(entry: dict[str, Any], result: RequirementResult | None, applicable: tuple[str, ...],
                      chosen: BindingSelection, judged: bool) -> None:
    """Add `bindings` (and, where a certified binding's outcome is not PASS, `binding_messages`) to an entry
    whose status is decided. `judged`: the status came from the findings (not SKIPPED, not narrowed away)."""
    statuses: dict[str, str] = {}
    messages: dict[str, str] = {}
    for binding in applicable:
        if binding not in chosen.certified:
            statuses[binding] = Outcome.SKIPPED.value  # its reason: the report's bindings.skipped
        elif not judged:
            statuses[binding] = entry["status"]  # SKIPPED (profile, level) or NOT_TESTED: as the entry says
        else:
            outcome, message = result.over(binding) if result else (Outcome.NOT_TESTED, "")
            statuses[binding] = outcome.value
            if outcome is not Outcome.PASS and message:
                messages[binding] = message
    entry["bindings"] = statuses
    if messages:
        entry["binding_messages"] = messages


def _entry(req: Requirement, result: RequirementResult | None, *, profile_selected: bool,
           level_selected: bool, selected_level: str, not_selected: str | None = None,
           bindings: BindingSelection | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": req.id, "profile": req.family, "level": req.level, "status": "",
                             "title": req.title, "source": req.source, "message": "", "tests": [],
                             "evidence": []}
    applicable = bindings.applicable(req) if bindings is not None else None
    certified = [b for b in applicable or () if b in bindings.certified] if bindings is not None else []
    if not profile_selected:
        entry["status"] = Outcome.SKIPPED.value
        entry["message"] = f"profile {req.profile!r} not selected"
    elif not level_selected:
        entry["status"] = Outcome.SKIPPED.value
        entry["message"] = f"{req.level} is below the selected level {selected_level.upper()}"
    elif applicable is not None and not certified:  # a GRPC- requirement in a run without gRPC, …
        entry["status"] = Outcome.SKIPPED.value
        entry["message"] = bindings.not_certified(applicable)
    elif not_selected:  # narrowed away (--requirement, --scenario, -k …): even a finding of a test that ran
        entry["status"] = Outcome.NOT_TESTED.value
        entry["message"] = not_selected
    elif result is None:
        entry["status"] = Outcome.NOT_TESTED.value
        entry["message"] = "no test produced a finding"
    else:
        entry["status"] = result.outcome.value
        entry["message"] = result.message
        entry["tests"] = list(result.tests)
        entry["evidence"] = list(result.evidence)
        entry["findings"] = result.finding_count
        if result.evidence_omitted:
            entry["evidence_omitted"] = result.evidence_omitted
        if result.measured:
            entry["measured"] = result.measured
        if result.reading:
            entry["reading"] = result.reading
        if result.outcome is Outcome.UNSUPPORTED:
            entry["unsupported_reason"] = result.message
    if applicable is not None:
        judged = entry["status"] not in (Outcome.SKIPPED.value, Outcome.NOT_TESTED.value)
        _binding_statuses(entry, result, applicable, bindings, judged)
    if req.readings:
        entry["readings"] = list(req.readings)
    if req.note:
        entry["note"] = req.note
    return entry


def count_by_level(entries: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """{level: {outcome: count}} with every level and every outcome present (zeros included)."""
    summary = {level: {outcome.value: 0 for outcome in Outcome} for level in LEVELS}
    for entry in entries:
        summary[entry["level"]][entry["status"]] += 1
    return summary


def untested_over(entry: dict[str, Any]) -> list[str]:
    """The certified bindings a judged requirement was not tested over (its `bindings` NOT_TESTED)."""
    if entry["status"] in (Outcome.SKIPPED.value, Outcome.NOT_TESTED.value):
        return []
    return [b for b, status in (entry.get("bindings") or {}).items() if status == Outcome.NOT_TESTED.value]


def decide_verdict(entries: list[dict[str, Any]], stale_baseline: list[str]) -> str:
    selected_musts = [e for e in entries if e["level"] == "MUST" and e["status"] != Outcome.SKIPPED.value]
    unexpected_failure = any(Outcome(e["status"]).is_failure and e.get("baseline") != "expected"
                             for e in selected_musts)
    if unexpected_failure or stale_baseline:
        return "FAIL"
    if not selected_musts or any(e["status"] == Outcome.NOT_TESTED.value or untested_over(e)
                                 for e in selected_musts):
        return "INCOMPLETE"
    return "PASS"


def build_report(agg: Aggregator, *, selected_profiles: set[str], level: str, target: dict[str, Any],
                 started: str, finished: str, baseline: Mapping[str, Any] | None = None,
                 catalogue: Mapping[str, Requirement] | None = None,
                 could_not_run: str | None = None, regressions: Mapping[str, Any] | None = None,
                 selection: Mapping[str, Any] | None = None,
                 bindings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The compatibility report (docs/contracts.md §4). `catalogue` defaults to the shipped one (tests pass theirs).

    `selection` (`selection.narrowing`, from --requirement, --scenario, -k …): `not_selected` maps each
    requirement the run narrowed away to its reason, and it is NOT_TESTED with it; when `narrowed`, the
    verdict is never PASS (docs/contracts.md §3: a narrowed run never certifies, even one whose every requirement
    happens to be judged by the tests it kept); the rest goes into the report's `selection`.

    `could_not_run`: why the run stopped before any scenario (an unreachable target): every selected
    requirement is ERROR with that reason, the verdict is INCOMPLETE (nothing was judged, so nothing
    failed), and the report says so under "could_not_run".

    `regressions` (`regressions_section`, from --against): an additive section; it changes no requirement
    and not the verdict (a run with regressions still fails: the CLI exits 1, the tests that differ fail).

    `bindings` (a run with an A2A target): `{"certified": [...], "skipped": {binding: why}, "declared": [...] or
    None}`, binding names as in protocols/bindings.py. It goes into the report as given, and each requirement
    of BOUND_PROFILES gets its per-binding statuses (see the module's docstring). None: no A2A target, and
    the report is as it was before bindings."""
    unknown_profiles = set(selected_profiles) - set(PROFILES)
    if unknown_profiles:
        raise ValueError(f"unknown profile(s): {', '.join(sorted(unknown_profiles))}")
    if level.upper() not in LEVELS:
        raise ValueError(f"unknown level {level!r} (must, should or may)")
    requirements = load_catalogue() if catalogue is None else catalogue
    chosen = BindingSelection.of(bindings) if bindings is not None else None
    not_selected = dict((selection or {}).get("not_selected") or {})
    if could_not_run is not None:
        could_not_run = cut(could_not_run, MESSAGE_CHARS)
        agg = Aggregator()
        for req in requirements.values():
            if (req.profile in selected_profiles and _level_rank(req.level) <= _level_rank(level)
                    and req.id not in not_selected):
                agg.add("", [Finding(req.id, Outcome.ERROR, could_not_run)])
        baseline = None
    results = agg.results()

    entries = [
        _entry(req, results.get(req.id), profile_selected=req.profile in selected_profiles,
               level_selected=_level_rank(req.level) <= _level_rank(level), selected_level=level,
               not_selected=not_selected.get(req.id), bindings=chosen)
        for req in requirements.values()
    ]
    _evidence_within_budget(entries)
    stale_baseline: list[str] = []
    baseline_unknown: list[str] = []
    if baseline is not None:
        stale_baseline, baseline_unknown = apply_baseline(entries, baseline, agg.failing_tests())

    report: dict[str, Any] = {
        "tool": {"name": "streamcert", "version": __version__},
        "catalogue": {"version": catalogue_version()},
        "target": dict(target),
        "started": started,
        "finished": finished,
        "verdict": "INCOMPLETE" if could_not_run is not None else decide_verdict(entries, stale_baseline),
        "summary": count_by_level(entries),
        "requirements": entries,
        "selection": {"profiles": [p for p in PROFILES if p in selected_profiles], "level": level.lower()},
    }
    if chosen is not None:
        report["bindings"] = {"certified": list(chosen.certified), "skipped": dict(chosen.skipped),
                              "declared": None if chosen.declared is None else list(chosen.declared)}
    if selection:
        report["selection"].update({k: v for k, v in selection.items() if k != "not_selected"})
        if selection.get("narrowed") and report["verdict"] == "PASS":
            report["verdict"] = "INCOMPLETE"
    if could_not_run is not None:
        report["could_not_run"] = could_not_run
    if regressions is not None:
        report["regressions"] = dict(regressions)
    if baseline is not None:
        report["stale_baseline"] = stale_baseline
        report["expected_failures"] = [e["id"] for e in entries if e.get("baseline") == "expected"]
        if baseline_unknown:
            report["baseline_unknown"] = baseline_unknown
    # Findings on ids the catalogue does not know are a harness bug: show them, never drop them.
    unknown_findings = [{"id": r.req_id, "status": r.outcome.value, "tests": list(r.tests),
                         "message": r.message}
                        for r in results.values() if r.req_id not in requirements]
    if unknown_findings:
        report["unknown_findings"] = sorted(unknown_findings, key=lambda item: item["id"])
    return report
