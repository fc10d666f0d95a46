"""The meta-test: the suite catches every fault variant of the reference on the requirements the
fault names, blames nothing unrelated, and passes the unbroken reference on every requirement.

A fault breaks one embedded program (`Fault.target`); the suite is run on every profile that
program serves. Run as a program (`python tests/test_faults.py`) it prints the table of faults →
requirements flagged, for the closing notes.
"""

from __future__ import annotations

import shlex
import sys
from contextlib import contextmanager

import pytest

from streamcert.catalogue import load_catalogue, load_scenario, scenario_ids
from streamcert.outcomes import Outcome, worst
from streamcert.reference.faults import FAULTS
from streamcert.reference.server import ReferenceServer
from streamcert.rules import RuleContext, judge
from streamcert.scenarios import Target, run_scenario

# The profiles each embedded program serves.
PROFILES = {"server": ("a2a", "interactions", "plans", "progress"), "line": ("line",), "acp": ("acp",)}
# Modes the unbroken reference server must pass in (options of ReferenceServer), e.g. both D3 readings.
SERVER_MODES: list[dict] = [{}, {"d3": "open"}]  # D3: streams close at a pause (default) / stay open
STREAM_LIMIT = 4.0  # a fault that never closes a stream is cut here (tolerance for the close is 2 s)


def _command(module: str, fault: str | None) -> str:
    cmd = f"{shlex.quote(sys.executable)} -m streamcert.reference.{module}"
    return cmd + (f" --fault {fault}" if fault else "")


@contextmanager
def embedded(kind: str, fault: str | None, mode: dict | None = None):
    """A Target for the embedded program `kind`, broken by `fault` if given."""
    if kind == "server":
        with ReferenceServer(fault=fault, **(mode or {})) as server:
            yield Target(a2a_url=server.url, nostream_url=server.agent_url("no-streaming"),
                         progress_url=server.url + "/progress", stream_limit=STREAM_LIMIT)
    elif kind == "line":
        yield Target(line_cmd=_command("line", fault), stream_limit=STREAM_LIMIT)
    else:
        yield Target(acp_cmd=_command("acp", fault), stream_limit=STREAM_LIMIT)


def scenarios_of(kind: str) -> list[str]:
    return [s for s in scenario_ids() if load_scenario(s).profile in PROFILES[kind]]


def requirements_of(kind: str) -> list[str]:
    return [r.id for r in load_catalogue().values() if r.profile in PROFILES[kind]]


def certify(kind: str, fault: str | None, mode: dict | None = None) -> dict[str, tuple[Outcome, list[str]]]:
    """Every requirement's worst outcome against the embedded program (or one fault), with messages."""
    found: dict[str, list] = {}
    with embedded(kind, fault, mode) as target:
        for sid in scenarios_of(kind):
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


UNBROKEN = [(kind, mode) for kind in PROFILES for mode in (SERVER_MODES if kind == "server" else [{}])
            if scenarios_of(kind)]


@pytest.mark.parametrize("kind,mode", UNBROKEN, ids=[f"{k}-{m or 'default'}" for k, m in UNBROKEN])
def test_unbroken_reference_passes_every_requirement(kind, mode):
    results = certify(kind, None, mode)
    missing = [r for r in requirements_of(kind) if r not in results]
    assert not missing, f"never judged against the reference: {missing}"
    not_pass = {r: results[r] for r in results if results[r][0] != Outcome.PASS}
    assert not not_pass, f"the unbroken reference does not pass: {not_pass}"


def test_every_requirement_has_a_fault():
    caught = {rid for fault in FAULTS.values() for rid in fault.catches}
    judged = [r for kind in PROFILES if scenarios_of(kind) for r in requirements_of(kind)]
    assert set(judged) <= caught, sorted(set(judged) - caught)


def test_faults_name_catalogue_requirements():
    known = set(load_catalogue())
    for fault in FAULTS.values():
        assert fault.target in PROFILES, fault
        assert set(fault.catches) | set(fault.also) <= known, fault


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_fault_is_caught_on_its_requirements_only(name):
    fault = FAULTS[name]
    results = certify(fault.target, name)
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
    print(f"{'fault':<30} flagged (✓ expected, + collateral, ! unexpected, ✗ missed)")
    for name in sorted(FAULTS):
        fault = FAULTS[name]
        blamed = flagged(certify(fault.target, name))
        marks = [f"{r}✓" for r in fault.catches if r in blamed]
        marks += [f"{r}✗" for r in fault.catches if r not in blamed]
        marks += [f"{r}+" for r in sorted(blamed & set(fault.also))]
        marks += [f"{r}!" for r in sorted(blamed - set(fault.catches) - set(fault.also))]
        print(f"{name:<30} {' '.join(marks)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
