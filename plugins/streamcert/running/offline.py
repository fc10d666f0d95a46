"""Work on stored cassettes: `streamcert check` (the same rules, offline) and `streamcert diff`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..catalogue import BOUND_PROFILES, load_catalogue, load_scenario
from ..contract.labels.a2a import CARD
from ..contract.run import BINDING
from ..framelog import FrameLog, budgeted
from ..outcomes import Finding, Outcome
from ..protocols import bindings
from ..recordings.capture_diff import DEFAULT_TOLERANCE_S, CaptureDiff, diff_logs
from ..recordings.capture_shape import shape_of
from ..rules import RuleContext, judge
from ..targets import Target
from ..wallclock import now

__all__ = ["check_cassettes", "departures", "diff_cassettes", "show_diff", "shape_of"]

# What `check` says of a timing requirement (one whose catalogue entry declares a tolerance): its figures
# are the arrival times the capture recorded, not anything measured now.
RECORDED = "timing as recorded in {path} (captured {started}): "


def timing_requirements() -> set[str]:
    return {rid for rid, req in load_catalogue().items() if req.tolerance}


def recorded_timing(findings: list[Finding], path: Path, log: FrameLog, timed: set[str]) -> list[Finding]:
    """The findings, a timing requirement's message saying that its figures are the recorded ones."""
    note = RECORDED.format(path=path, started=log.started or "at an unknown time")
    out = []
    for f in findings:
        if f.req_id in timed:
            data = f.to_json()
            data["message"] = note + data.get("message", "")
            f = Finding.from_json(data)
        out.append(f)
    return out


def recorded_implementation(log: FrameLog) -> dict[str, str] | None:
    """The implementation as the card a recording read names it (binding_choice.implementation_of), or None."""
    from ..drivers.binding_choice import implementation_of

    card = log.get(CARD)
    if card is None or card.status != 200:
        return None
    value, complaint = card.json()
    return implementation_of(value) if complaint is None else None


def check_cassettes(paths: list[Path], report_dir: Path, max_bytes: int | None = None) -> dict[str, Any]:
    from ..report.aggregate import Aggregator, build_report
    from ..report.summary import terminal_summary
    from ..report.writers import write_all

    started = now()
    agg = Aggregator()
    profiles: set[str] = set()
    targets: set[str] = set()
    timed = timing_requirements()
    judged_timing: set[str] = set()
    recorded: set[str] = set()  # the A2A bindings the cassettes went over
    implementation: dict[str, str] | None = None  # as the first recorded card names it
    for path in paths:
        log = FrameLog.load(path, max_bytes)
        try:
            scenario = load_scenario(log.scenario)
        except OSError:
            raise ValueError(f"{path}: a recording of scenario {log.scenario!r}, which this streamcert does "
                             f"not know") from None
        profiles.add(scenario.profile)
        if scenario.profile in BOUND_PROFILES:  # a cassette recorded before bindings went over JSON-RPC
            binding = log.notes.setdefault(BINDING, bindings.JSONRPC)
            if not isinstance(binding, str) or binding not in bindings.BINDINGS:  # its every rule would skip
                raise ValueError(f"{path}: recorded over the binding {str(binding)[:80]!r}, which streamcert "
                                 f"does not know (known: {', '.join(bindings.BINDINGS)})")
            recorded.add(binding)
        targets.add(log.target)
        implementation = implementation or recorded_implementation(log)
        findings = judge(log, scenario.requirements, RuleContext(scenario=scenario))
        judged_timing |= {f.req_id for f in findings if f.req_id in timed}
        agg.add(f"cassette:{path}::{scenario.id}", recorded_timing(findings, path, log, timed))
    report = build_report(agg, selected_profiles=profiles, level="may",
                          target={**Target(a2a_url=", ".join(sorted(t for t in targets if t)) or None).report_json(),
                                  "cassettes": [str(p) for p in paths]},
                          started=started, finished=now(), catalogue=load_catalogue(),
                          bindings={"certified": [b for b in bindings.BINDINGS if b in recorded],
                                    "skipped": {b: "no cassette went over it" for b in bindings.BINDINGS
                                                if b not in recorded}, "declared": None} if recorded else None)
    if implementation is not None:
        report["implementation"] = implementation
    write_all(report, report_dir)
    for line in terminal_summary(report):
        print(line)
    if judged_timing:
        print(f"timing requirements ({', '.join(sorted(judged_timing))}) were judged on the arrival times recorded "
              f"in the cassettes, not measured now")
    found = departures(report)
    untested = sum(r["status"] == Outcome.NOT_TESTED.value for r in report["requirements"])
    if found:
        print(f"departures in the recordings: {', '.join(found)} (exit code 1)")
    else:
        print(f"no departure in the recordings (exit code 0; {untested} requirement(s) they do not exercise "
              f"are NOT_TESTED, which fails nothing)")
    print(f"report: {report_dir}/compatibility.json")
    return report


def departures(report: dict[str, Any]) -> list[str]:
    """The requirements a check found departed from (FAIL or ERROR, at any level): what makes `streamcert
    check` exit 1. What the recordings did not exercise (NOT_TESTED, an INCOMPLETE verdict) is no departure."""
    return [r["id"] for r in report["requirements"] if Outcome(r["status"]).is_failure]


# -- diff ------------------------------------------------------------------------------------------------

def diff_cassettes(old_path: Path, new_path: Path, tolerance_s: float | None = DEFAULT_TOLERANCE_S,
                   max_bytes: int | None = None) -> CaptureDiff:
    from ..recordings.cassette import load

    # The diff compares frames, never a stream's bytes: the cassettes are loaded without them (`stream_bytes`);
    # and it reads a frame twice at most, far apart (a digest of it, then the pair it is in): no parse is kept.
    limit = {} if max_bytes is None else {"max_bytes": max_bytes}
    logs = [load(path, **limit, stream_bytes=False) for path in (old_path, new_path)]
    for ex in (ex for log in logs for ex in log.exchanges):
        budgeted(ex.events, 0)
    return diff_logs(*logs, tolerance_s)


def show_diff(diff: CaptureDiff, old_path: Path, new_path: Path, as_json: bool) -> str:
    """What `streamcert diff` prints: the lines a person reads (`no differences` when there is none), or one
    JSON document."""
    if as_json:
        return json.dumps({"old": str(old_path), "new": str(new_path), **diff.to_json()}, indent=1,
                          ensure_ascii=False, default=repr)
    return "\n".join(diff.lines()) or "no differences"
