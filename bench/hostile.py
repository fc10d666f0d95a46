"""The hostile cases of issue 12 as a table: for each, how `streamcert run` ended (exit code, verdict),
the first thing it says, its wall time, the peak resident memory of streamcert's processes and the size of
everything it wrote (the report's files, cassettes) and printed.

The cases and their servers are tests/common/hostile_cases.py (the same runs tests/e2e/test_hostile.py asserts);
this program runs every one of them, the heavy ones included (a 100 000-chunk flood, a 1 GiB gzip
bomb, a 64 MiB event, a 200 MiB line), one at a time. Peak memory is the run's VmHWM (its process's
high-water mark since exec), read every 10 ms until it exits: not `wait4`'s ru_maxrss, which Linux
carries across exec from this process, where the hostile servers and their payloads live.

    python bench/hostile.py [--only SUBSTRING]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "common"))

from hostile_cases import CASES, run_case  # noqa: E402

GOAL_MIB = 200
MIB = 1024 * 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run only the cases whose name holds this")
    args = parser.parse_args()
    print("| case | exit | verdict | first finding or line | wall s | peak MiB | written MiB |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    worst = 0.0
    for case in CASES:
        if args.only and args.only not in case.name:
            continue
        with tempfile.TemporaryDirectory() as folder:
            out = run_case(case, Path(folder))
        verdict = (out.report or {}).get("verdict", "—")
        said = out.first_finding(case.named).replace("|", "\\|").replace("\n", " ")
        if len(said) > 230:
            said = said[:227] + "…"
        exit_code = "killed" if out.exit is None else str(out.exit)
        print(f"| {case.name} | {exit_code} | {verdict} | {said} | {out.seconds:.1f} | {out.peak_mib:.0f} | "
              f"{out.written / MIB:.1f} |", flush=True)
        worst = max(worst, out.peak_mib)
    print(f"worst peak {worst:.0f} MiB ({worst / GOAL_MIB:.2f}x the goal of {GOAL_MIB} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
