"""Stability of the PROG- timing rules on a loaded machine (a program, not a test module).

Runs the pacing scenarios N times in a row (default 20) against the embedded reference while two
busy-loop processes load both cores, and prints for every run the outcome of each timing requirement
with what it measured, then how many runs gave anything but PASS.

    python bench/pacing.py [--runs N] [--no-load]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from streamcert.catalogue import load_scenario
from streamcert.drivers import Target, run_scenario
from streamcert.outcomes import Outcome, worst
from streamcert.reference.agent.server import ReferenceServer
from streamcert.rules import RuleContext, judge

SCENARIOS = ("progress-prompt", "progress-writer", "progress-question")
TIMING = ("PROG-009", "PROG-010", "PROG-011")
LOAD_CAP_S = 600  # a load process ends by itself after this, whatever happens to this program
BUSY = f"import time\nend = time.monotonic() + {LOAD_CAP_S}\nwhile time.monotonic() < end:\n    pass\n"


def _figure(req_id: str, measured: dict) -> str:
    if req_id == "PROG-009":
        span = measured.get("min_span_5_s")
        short = measured.get("max_sustained_deficit_s")  # PROG-009: the shortfall of a sustained run
        return (f"span5={'-' if span is None else f'{span:.3f}'} n={measured.get('most_data_updates')}"
                f" short={'-' if short is None else f'{short:.3f}'}")
    if req_id == "PROG-010":
        return f"gap={measured.get('max_gap_s', 0):.3f}"
    return f"delay={measured.get('max_phase_delay_s', 0):.3f}"


def one_run(target: Target) -> tuple[dict[tuple[str, str], Outcome], list[str]]:
    outcomes, cells = {}, []
    for sid in SCENARIOS:
        scenario = load_scenario(sid)
        log = run_scenario(sid, target)
        wanted = [r for r in TIMING if r in scenario.requirements]
        findings = judge(log, wanted, RuleContext(scenario=scenario))
        for rid in wanted:
            mine = [f for f in findings if f.req_id == rid]
            out = worst(f.outcome for f in mine) or Outcome.NOT_TESTED
            outcomes[(sid, rid)] = out
            figures = " ".join(_figure(rid, f.measured) for f in mine if f.measured)
            cells.append(f"{sid.removeprefix('progress-')}/{rid[-3:]} {out.value} {figures}")
    return outcomes, cells


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--no-load", action="store_true", help="run without the busy-loop processes")
    args = parser.parse_args()
    load = [] if args.no_load else [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(2)]
    not_pass_runs, extremes = 0, {}
    started = time.monotonic()
    try:
        with ReferenceServer() as server:
            target = Target(progress_url=server.url + "/progress", stream_limit=10.0)
            for n in range(1, args.runs + 1):
                outcomes, cells = one_run(target)
                bad = {k: v for k, v in outcomes.items() if v != Outcome.PASS}
                not_pass_runs += bool(bad)
                for key, value in outcomes.items():
                    extremes.setdefault(key, []).append(value)
                print(f"run {n:2d} {'PASS' if not bad else 'NOT PASS'}: " + " | ".join(cells), flush=True)
    finally:
        for proc in load:  # only the processes this program started
            proc.kill()
            proc.wait()
    print(f"\n{args.runs} runs in {time.monotonic() - started:.1f} s, load: "
          f"{'none' if args.no_load else '2 busy-loop processes'}")
    for (sid, rid), values in sorted(extremes.items()):
        counts = {o.value: values.count(o) for o in set(values)}
        print(f"  {sid:<20} {rid}: {counts}")
    print(f"runs with anything but PASS: {not_pass_runs} of {args.runs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
