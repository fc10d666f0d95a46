"""The meta-test: the suite catches every fault variant of the reference on the requirements the
fault names, blames nothing unrelated, and passes the unbroken reference on every requirement.

Run as a program (`python tests/test_faults.py`) it prints the table of faults → requirements
flagged, for the closing notes.
"""

from __future__ import annotations

import sys

import pytest

from streamcert.catalogue import load_catalogue, load_scenario, scenario_ids
from streamcert.outcomes import Outcome, worst
from streamcert.reference.faults import FAULTS
from streamcert.reference.server import ReferenceServer
from streamcert.rules import RuleContext, judge
from streamcert.scenarios import Target, run_scenario

A2A_SCENARIOS = [s for s in scenario_ids() if load_scenario(s).profile == "a2a"]
STREAM_LIMIT = 4.0  # a fault that never closes a stream is cut here (tolerance for the close is 2 s)


def certify(fault: str | None) -> dict[str, tuple[Outcome, list[str]]]:
    """Every A2A requirement's worst outcome against the reference (or one fault), with messages."""
    found: dict[str, list] = {}
    with ReferenceServer(fault=fault) as server:
        target = Target(a2a_url=server.url, nostream_url=server.agent_url("no-streaming"), stream_limit=STREAM_LIMIT)
        for sid in A2A_SCENARIOS:
            scenario = load_scenario(sid)
            log = run_scenario(sid, target)
            for f in judge(log, scenario.requirements, RuleContext(scenario=scenario)):
                found.setdefault(f.req_id, []).append(f)
    out = {}
    for rid, findings in found.items():
        w = worst(f.outcome for f in findings)
        out[rid] = (w, [f"{f.outcome.value}: {f.message}" for f in findings if f.outcome == w])
    return out


def flagged(results: dict[str, tuple[Outcome, list[str]]]) -> set[str]:
    """Requirements the suite blamed: FAIL/ERROR, or WARNING/NON_STRICT (how a SHOULD is missed)."""
    return {rid for rid, (o, _) in results.items()
            if o in (Outcome.FAIL, Outcome.ERROR, Outcome.WARNING, Outcome.NON_STRICT)}


def a2a_requirements() -> list[str]:
    return [r.id for r in load_catalogue().values() if r.profile == "a2a"]


def test_unbroken_reference_passes_every_requirement():
    results = certify(None)
    missing = [r for r in a2a_requirements() if r not in results]
    assert not missing, f"never judged against the reference: {missing}"
    not_pass = {r: results[r] for r in results if results[r][0] != Outcome.PASS}
    assert not not_pass, f"the unbroken reference does not pass: {not_pass}"


def test_every_requirement_has_a_fault():
    caught = {rid for fault in FAULTS.values() for rid in fault.catches}
    assert set(a2a_requirements()) <= caught, sorted(set(a2a_requirements()) - caught)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_fault_is_caught_on_its_requirements_only(name):
    fault = FAULTS[name]
    results = certify(name)
    blamed = flagged(results)
    level = {r.id: r.level for r in load_catalogue().values()}
    for rid in fault.catches:
        outcome, _ = results.get(rid, (None, []))
        want = (Outcome.FAIL,) if level[rid] == "MUST" else (Outcome.FAIL, Outcome.WARNING, Outcome.NON_STRICT)
        assert outcome in want, f"{name}: {rid} is {outcome}, expected {'/'.join(o.value for o in want)}"
    unrelated = blamed - set(fault.catches) - set(fault.also)
    assert not unrelated, f"{name} also blamed unrelated requirements: " + "; ".join(
        f"{r} {results[r][0].value} {results[r][1][:1]}" for r in sorted(unrelated))


def main() -> int:
    print(f"{'fault':<28} {'flagged (expected ✓, collateral +, unexpected !)'}")
    for name in sorted(FAULTS):
        fault = FAULTS[name]
        blamed = flagged(certify(name))
        marks = [f"{r}✓" for r in fault.catches if r in blamed]
        marks += [f"{r}✗MISSED" for r in fault.catches if r not in blamed]
        marks += [f"{r}+" for r in sorted(blamed & set(fault.also))]
        marks += [f"{r}!" for r in sorted(blamed - set(fault.catches) - set(fault.also))]
        print(f"{name:<28} {' '.join(marks)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
