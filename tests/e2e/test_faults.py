"""The meta-test: the suite catches every fault variant of the reference on the requirements the
fault names, blames nothing unrelated, and passes the unbroken reference on every requirement.

A fault breaks one embedded program (`Fault.target`), which serves some profiles. What the fault can
break is what the scenarios of those profiles that exercise one of its requirements (`catches` and
`also`) judge: those scenarios are played, on a program of its own (its own server), and every
requirement they judge is checked. With STREAMCERT_FAULT_SWEEP=1 (`tox -e sweep`) every fault plays
every scenario of its program instead. The unbroken reference always plays every scenario of every
program, in every server mode (those of the progress endpoint, which reads no mode, in the default one).

Runs are played concurrently by a pool of player processes, each run on its own server (fault_runs.py;
under pytest-xdist the workers share the runs out), except the timed scenarios (TIMED_PROFILES: their
rules judge arrival times): each test plays those itself, in its own process at its normal priority, one
run at a time, with the pool of its process paused. Tests with timed runs come first, so most of them
play before that pool has started.

Run as a program (`python tests/e2e/test_faults.py`) it prints the table of faults → requirements
flagged, for the closing notes.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from fault_runs import Pool, Results, Run, merge, programs

from streamcert.catalogue import BOUND_PROFILES, load_catalogue, load_scenario, scenario_ids
from streamcert.outcomes import Outcome
from streamcert.reference.agent.options import Options
from streamcert.reference.faults import FAULTS
from streamcert.reference.progress import stream as progress_endpoint
from streamcert.targets import SERVER

PROFILES = programs()  # the embedded programs ("server", "line", "acp", "client", …) → the profiles each serves
# Modes the unbroken reference server must pass in (options of ReferenceServer), e.g. both D3 readings.
# D3: streams close at a pause (default) / stay open; KEEPALIVE: `: ping` comments before the first event and
# between events (a legal variation: sse-starlette, under the official SDK, pings so).
KEEPALIVE = {"keepalive": 0.05}
SERVER_MODES: list[dict] = [{}, {"d3": "open"}, KEEPALIVE]
# The modes are readings of the A2A streams; the progress endpoint reads neither (reference/progress/ takes only the
# fault of its options: test_the_progress_endpoint_reads_no_server_mode), so its scenarios, timed and played alone,
# are played in the default mode only: in the others they would replay the same program.
MODE_BLIND_PROFILES = ("progress",)
# Profiles whose rules judge arrival times (pacing 4/s, tolerances of 0.15 s): never played beside the pool.
TIMED_PROFILES = ("progress", "client")  # client: CLIENT-009 times the client's exit after the close
# The requirements judged on arrival times, with declared tolerances: under load they may warn.
TIMING = frozenset(r.id for r in load_catalogue().values() if r.tolerance)
SWEEP = os.environ.get("STREAMCERT_FAULT_SWEEP", "") not in ("", "0")
POOL_WIDTH = 16  # runs played at once by one process's pool (a player process each); they mostly wait


def scenarios_of(program: str) -> list[str]:
    return [s for s in scenario_ids() if load_scenario(s).profile in PROFILES[program]]


def played_in(program: str, mode: dict) -> list[str]:
    """The scenarios of `program` the unbroken reference plays in a server mode."""
    return [s for s in scenarios_of(program) if not mode or load_scenario(s).profile not in MODE_BLIND_PROFILES]


def requirements_of(program: str, binding: str | None = None) -> list[str]:
    """The requirements of a program's profiles (those a log over `binding` judges, when given)."""
    return [r.id for r in load_catalogue().values() if r.profile in PROFILES[program] and r.applies_to(binding)]


def exercising(scenarios: list[str], req_ids: set[str]) -> list[str]:
    """The scenarios that judge at least one of `req_ids`."""
    return [s for s in scenarios if req_ids & set(load_scenario(s).requirements)]


def can_break(name: str) -> list[str]:
    """The scenarios a fault can break: those of its program that exercise what it catches or may
    blame as collateral (all of its program's in a sweep)."""
    fault = FAULTS[name]
    scenarios = scenarios_of(fault.target)
    if SWEEP:
        return scenarios
    chosen = set(exercising(scenarios, set(fault.catches) | set(fault.also))) | set(fault.plays)
    return [s for s in scenarios if s in chosen]


@dataclass(frozen=True)
class Check:
    """What one test plays: its untimed scenarios in the pool, each on its own program (a run per
    scenario: the pool's wall time is then its longest scenario, not its longest fault — a fault that
    leaves subscriptions open makes some scenarios wait out their stream limit several times), and its
    timed ones alone, one after another.

    A fault that declares no timing requirement plays even the timed scenarios in the pool, under
    load, and its check leaves the timing requirements out (`ignored`): they would only measure the
    load. The unbroken reference, every fault that declares one, and the sweep play them alone."""

    untimed: tuple[Run, ...]
    timed: Run | None
    ignored: frozenset = frozenset()
    binding: str = "jsonrpc"

    @classmethod
    def of(cls, name: str, program: str, fault: str | None, scenarios: list[str], mode: dict | None = None,
           timing: bool = True, binding: str = "jsonrpc") -> Check:
        timed = tuple(s for s in scenarios if load_scenario(s).profile in TIMED_PROFILES) if timing else ()
        mode_items = tuple(sorted((mode or {}).items()))
        return cls(tuple(Run(f"{name}.{s}", program, fault, (s,), mode_items, binding)
                         for s in scenarios if s not in timed),
                   Run(name + ".timed", program, fault, timed, mode_items, binding) if timed else None,
                   frozenset() if timing else TIMING, binding)

    @property
    def program(self) -> str:
        return (self.untimed[0] if self.untimed else self.timed).program

    def results(self, pool: Pool) -> Results:
        # The timed run first: once this process's pool has started, a timed run waits for the runs
        # the pool is playing to end.
        parts = [pool.play_alone(self.timed)] if self.timed else []
        return merge(*parts, *pool.results(self.untimed))


def _timed_first(checks: dict[str, Check]) -> list[str]:
    """Test order: the checks with timed runs first, so that most are played before the pool starts in
    their process rather than waiting for it to finish."""
    return sorted(checks, key=lambda key: checks[key].timed is None)


def _timing(name: str) -> bool:
    """Whether a fault's check plays the timed scenarios alone: in a sweep, or when it declares timing."""
    return SWEEP or bool(TIMING & (set(FAULTS[name].catches) | set(FAULTS[name].also)))


FAULT_CHECKS = {name: Check.of(f"fault-{name}", FAULTS[name].target, name, can_break(name), timing=_timing(name),
                               binding=FAULTS[name].binding)
                for name in sorted(FAULTS)}
UNBROKEN_CHECKS = {
    f"{program}-{'-'.join(f'{k}-{v}' for k, v in mode.items()) or 'default'}": Check.of(
        f"unbroken-{program}-{i}", program, None, played_in(program, mode), mode)
    for program in PROFILES if scenarios_of(program)
    for i, mode in enumerate(SERVER_MODES if program == SERVER else [{}])
}
# The unbroken server over the other bindings too (in its default mode): every scenario of the A2A profiles.
UNBROKEN_CHECKS.update({
    f"{SERVER}-{binding}": Check.of(f"unbroken-{SERVER}-{binding}", SERVER, None,
                                    [s for s in scenarios_of(SERVER) if load_scenario(s).profile in BOUND_PROFILES],
                                    binding=binding)
    for binding in ("http-json", "grpc")
})
# Keep-alive comments over HTTP+JSON too (gRPC has no comments): every driver reads data events only.
UNBROKEN_CHECKS[f"{SERVER}-http-json-keepalive"] = Check.of(
    f"unbroken-{SERVER}-http-json-keepalive", SERVER, None,
    [s for s in scenarios_of(SERVER) if load_scenario(s).profile in BOUND_PROFILES], KEEPALIVE, binding="http-json")
# Test function → the checks it is parametrized with (by test id).
CHECKS = {"test_unbroken_reference_passes_every_requirement": UNBROKEN_CHECKS,
          "test_fault_is_caught_on_its_requirements_only": FAULT_CHECKS}


def flagged(results: Results) -> set[str]:
    """Requirements the suite blamed: FAIL/ERROR, or WARNING/NON_STRICT (how a SHOULD is missed)."""
    return {rid for rid, (o, _) in results.items()
            if o in (Outcome.FAIL, Outcome.ERROR, Outcome.WARNING, Outcome.NON_STRICT)}


def late_only(results: Results) -> bool:
    """Whether every outcome is a WARNING of a requirement judged on arrival times (a frame past its tolerance)."""
    return all(rid in TIMING and outcome == Outcome.WARNING for rid, (outcome, _) in results.items())


@pytest.fixture(scope="session")
def fault_pool(request, tmp_path_factory):
    """The pool over the untimed runs of the tests selected in this session; under xdist its folder
    (claims and results) is shared by all workers of the session."""
    runs = [run for item in request.session.items
            if item.path == Path(__file__) and getattr(item, "originalname", None) in CHECKS
            for run in CHECKS[item.originalname][item.callspec.id].untimed]
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return Pool(runs, shared / "fault-runs", POOL_WIDTH)


@pytest.fixture(scope="module", autouse=True)
def _finish_on_leaving(fault_pool):
    """No run of the pool plays on while this process runs other modules (they may be timed too)."""
    yield
    fault_pool.finish()


def test_every_requirement_has_a_fault():
    caught = {rid for fault in FAULTS.values() for rid in fault.catches}
    judged = [r for program in PROFILES if scenarios_of(program) for r in requirements_of(program)]
    assert set(judged) <= caught, sorted(set(judged) - caught)


def test_the_progress_endpoint_reads_no_server_mode():
    """Why MODE_BLIND_PROFILES may play in the default mode only: no module of the reference's progress program
    reads the D3 reading or the keep-alive of the server's options (it reads their fault)."""
    sources = Path(progress_endpoint.__file__).parent.glob("*.py")
    readers = {p.name: m for p in sources for m in re.findall(r"\.(d3|keepalive)\b", p.read_text("utf-8"))}
    assert readers == {}
    assert {f.name for f in dataclasses.fields(Options)} >= {"d3", "keepalive"}  # the names the search looks for


def test_faults_name_catalogue_requirements():
    known = set(load_catalogue())
    for fault in FAULTS.values():
        assert fault.target in PROFILES, fault
        assert set(fault.catches) | set(fault.also) <= known, fault
        assert set(fault.plays) <= set(scenario_ids()), fault


@pytest.mark.parametrize("name", _timed_first(FAULT_CHECKS))
def test_fault_is_caught_on_its_requirements_only(name, fault_pool):
    fault = FAULTS[name]
    results = FAULT_CHECKS[name].results(fault_pool)
    blamed = flagged(results)
    level = {r.id: r.level for r in load_catalogue().values()}
    for rid in fault.catches:
        outcome, messages = results.get(rid, (None, []))
        want = (Outcome.FAIL,) if level[rid] == "MUST" else (Outcome.FAIL, Outcome.WARNING, Outcome.NON_STRICT)
        assert outcome in want, (f"{name}: {rid} is {outcome and outcome.value}, expected "
                                 f"{'/'.join(o.value for o in want)} {messages[:1]}")
    unrelated = blamed - set(fault.catches) - set(fault.also) - FAULT_CHECKS[name].ignored
    assert not unrelated, f"{name} also blamed unrelated requirements: " + "; ".join(
        f"{r} {results[r][0].value} {results[r][1][:1]}" for r in sorted(unrelated))


@pytest.mark.parametrize("key", _timed_first(UNBROKEN_CHECKS))
def test_unbroken_reference_passes_every_requirement(key, fault_pool):
    check = UNBROKEN_CHECKS[key]
    results = check.results(fault_pool)
    wanted = requirements_of(check.program, check.binding)
    if check.binding != "jsonrpc":  # only the A2A profiles' scenarios were played over the other bindings
        wanted = [r for r in wanted if load_catalogue()[r].profile in BOUND_PROFILES]
    if check.untimed and check.untimed[0].mode:  # a server mode: the profiles that read no mode were not played
        wanted = [r for r in wanted if load_catalogue()[r].profile not in MODE_BLIND_PROFILES]
    missing = [r for r in wanted if r not in results]
    assert not missing, f"never judged against the reference: {missing}"
    not_pass = {r: results[r] for r in results if results[r][0] != Outcome.PASS}
    if not_pass and check.timed and late_only(not_pass):
        # Only frames past a timing tolerance (a WARNING): the reference sent them late, or the machine was too
        # loaded to run its timers on time. The timed run is played once more, alone; what the reference does
        # itself happens again, and its outcomes there stand for those requirements.
        again = fault_pool.play_alone(dataclasses.replace(check.timed, name=check.timed.name + ".again"))
        not_pass = {r: again.get(r, not_pass[r]) for r in not_pass if again.get(r, not_pass[r])[0] != Outcome.PASS}
    assert not not_pass, f"the unbroken reference does not pass: {not_pass}"


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        names = sorted(FAULTS)
        pool = Pool([run for c in FAULT_CHECKS.values() for run in c.untimed], Path(folder), POOL_WIDTH)
        results = {name: FAULT_CHECKS[name].results(pool) for name in _timed_first(FAULT_CHECKS)}
    print(f"{'fault':<30} flagged (✓ expected, + collateral, ! unexpected, ✗ missed)")
    for name in names:
        fault = FAULTS[name]
        blamed = flagged(results[name])
        marks = [f"{r}✓" for r in fault.catches if r in blamed]
        marks += [f"{r}✗" for r in fault.catches if r not in blamed]
        marks += [f"{r}+" for r in sorted(blamed & set(fault.also))]
        marks += [f"{r}!" for r in sorted(blamed - set(fault.catches) - set(fault.also) - FAULT_CHECKS[name].ignored)]
        print(f"{name:<30} {' '.join(marks)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
