"""Suite cost: the full embedded run (`streamcert run`) sequential and with `-- -n 2`, next to the
scenarios' inherent time, the waits their scripts demand.

The inherent time is read from cases/scenarios/*.json: every step's `sleep`, `think` and `compact` (ms),
the `ms` of its `write`, `read_prompt`, `tool`, `queued`, `wait_model`, `load_model`, `retry` and
`write_call`, parallel `tools` until the last ends and `subagents` as long as the longest, each scenario
counted once per play that waits for it: the embedded run plays the scenarios of the A2A profiles (a2a,
interactions, plans, push) once per binding it certifies (three with the grpc extra, else two: docs/bindings.md),
the plays of one scenario at once, so a scenario's waits are counted once; with `--bindings-in-turn` the plays
go one after the other and each play's waits count (the inherent time of that mode, measured beside it). A
scenario's `wait_s` is a wait its driver declares (push-deliveries: its slow webhook answers that long after the
agent calls it, and the driver waits for the answer); a play lasts at least that long, its script's steps running
meanwhile.
The steps of a task the driver cancels while it
sleeps (cancel-subscribe's long task, the errors scenario's busy task) are not waited for and not
counted. The drivers have no fixed waits of their own. Goals: sequential within 1.3× of inherent
+ 2 s; -n 2 no slower than sequential. The last line is the sequential run's ratio.

    python bench/suite_cost.py [--runs 1] [--cap 300]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "cases" / "scenarios"
CUT = {("cancel-subscribe", "script"), ("errors", "busy_script")}  # tasks canceled mid-sleep by their driver
WAIT_KEYS = ("sleep", "think", "compact")  # a step whose value is its own milliseconds
TIMED_KEYS = ("write", "read_prompt", "tool", "queued", "wait_model", "load_model", "retry", "write_call")  # `ms`


def step_ms(step: dict) -> float:
    """The milliseconds a step lasts (docs/script-extensions.md): parallel tools as long as the last to end,
    subagents as long as the longest of them."""
    ms = sum(step[k] for k in WAIT_KEYS if isinstance(step.get(k), (int, float)))
    ms += sum(step[k].get("ms", 0) for k in TIMED_KEYS if isinstance(step.get(k), dict))
    if isinstance(step.get("tools"), list):
        ms += max((t.get("at", 0) + t.get("ms", 0) for t in step["tools"] if isinstance(t, dict)), default=0)
    if isinstance(step.get("subagents"), list):
        ms += max((sum(step_ms(s) for s in a.get("steps", []) if isinstance(s, dict))
                   for a in step["subagents"] if isinstance(a, dict)), default=0)
    return ms


def plays(profile: str, in_turn: bool) -> int:
    """How many of its plays the embedded run waits for, one after the other, for a scenario of this profile: one
    per binding it certifies with --bindings-in-turn, else one (the plays over the bindings go at once)."""
    from streamcert.catalogue import BOUND_PROFILES
    from streamcert.protocols.grpc_messages import grpc_available

    if profile not in BOUND_PROFILES or not in_turn:
        return 1
    return 3 if grpc_available() is None else 2


def inherent(in_turn: bool = False) -> tuple[float, float, dict[str, float]]:
    """(seconds counted, seconds cut by the drivers, seconds by scenario), each scenario times the plays waited
    for one after the other."""
    counted, cut, by_scenario = 0.0, 0.0, {}
    for path in sorted(SCENARIOS.glob("*.json")):
        doc = json.loads(path.read_text("utf-8"))
        scripts = [(key, doc[key]) for key in ("script", "busy_script") if isinstance(doc.get(key), dict)]
        scripts += [("scripts", s) for s in doc.get("scripts", []) if isinstance(s, dict)]
        for key, script in scripts:
            seconds = sum(step_ms(s) for s in script.get("steps", []) if isinstance(s, dict)) / 1000
            seconds = max(seconds, float(doc.get("wait_s", 0))) * plays(doc.get("profile", ""), in_turn)
            if (doc["id"], key) in CUT:
                cut += seconds
            elif seconds:
                counted += seconds
                by_scenario[doc["id"]] = by_scenario.get(doc["id"], 0.0) + seconds
    return counted, cut, by_scenario


def slowest(junit: Path, n: int = 5) -> str:
    """The n slowest tests of a run's junit.xml, and the sum of all its tests' times."""
    cases = [(float(c.get("time") or 0), c.get("name") or "") for c in ET.parse(junit).iter("testcase")]
    top = ", ".join(f"{name} {seconds:.2f}" for seconds, name in sorted(cases, reverse=True)[:n])
    return f"tests sum {sum(s for s, _ in cases):.2f} s; slowest: {top}"


def children_cpu() -> float:
    """CPU seconds (user + system) of every child process waited for so far, theirs included."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def full_run(extra: list[str], cap: float) -> tuple[float, float, str]:
    """Wall seconds and CPU seconds of one `streamcert run` (its own processes, the reference's servers and
    clients), and its last output line (pytest's summary) and slowest tests."""
    with tempfile.TemporaryDirectory() as report:
        junit = Path(report) / "pytest-junit.xml"  # pytest's own, per test (the report's junit.xml is per requirement)
        cmd = [sys.executable, "-m", "streamcert", "run", "--report", report, *(extra or ["--"]), "--junitxml", str(junit)]
        started, cpu = time.monotonic(), children_cpu()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=cap)
        except subprocess.TimeoutExpired:
            return float("nan"), float("nan"), f"not finished within {cap:.0f} s"
        seconds, cpu = time.monotonic() - started, children_cpu() - cpu
        lines = done.stdout.strip().splitlines()
        tests = f"; {slowest(junit)}" if junit.exists() else ""
        return seconds, cpu, f"exit {done.returncode}: {lines[-1] if lines else ''}{tests}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="runs of each mode (the median is kept)")
    parser.add_argument("--cap", type=float, default=300.0, help="seconds one run may take")
    args = parser.parse_args()
    counted, cut, by_scenario = inherent()
    in_turn = inherent(in_turn=True)[0]
    print(f"inherent: {counted:.2f} s over {len(by_scenario)} scenarios "
          f"({', '.join(f'{k} {v:.2f}' for k, v in sorted(by_scenario.items(), key=lambda kv: -kv[1]))}); "
          f"{cut:.1f} s more in tasks the drivers cancel, not counted; {in_turn:.2f} s with the bindings in turn")
    figures, cpus = {}, {}
    modes = (("sequential", []), ("-n 2", ["--", "-n", "2"]), ("bindings in turn", ["--bindings-in-turn", "--"]))
    for name, extra in modes:
        times, used = [], []
        for _ in range(args.runs):
            seconds, cpu, summary = full_run(extra, args.cap)
            times.append(seconds)
            used.append(cpu)
            print(f"{name}: {seconds:.2f} s, {cpu:.2f} s CPU ({summary})", flush=True)
        figures[name], cpus[name] = statistics.median(times), statistics.median(used)
    seq, par, turn = figures["sequential"], figures["-n 2"], figures["bindings in turn"]
    print(f"CPU seconds per run: sequential {cpus['sequential']:.2f} s, -n 2 {cpus['-n 2']:.2f} s, "
          f"bindings in turn {cpus['bindings in turn']:.2f} s")
    print(f"bindings in turn (sequential) {turn:.2f} s, inherent {in_turn:.2f} s: {turn / (in_turn + 2):.2f}x; "
          f"-n 2 {par:.2f} s: {par / seq:.2f}x of sequential (goal <= 1.0x)")
    print(f"sequential {seq:.2f} s, inherent {counted:.2f} s; sequential/(inherent+2 s) "
          f"{seq / (counted + 2):.2f}x (goal <= 1.3x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
