"""Start-up: wall time of `streamcert --help` and of `python -c "import streamcert.cli"` (the median of
several runs each, every run a fresh process), and the heaviest imports of the CLI (python -X importtime).
Goal: `streamcert --help` under 0.3 s.

    python bench/startup.py [--runs 9]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import time

GOAL_S = 0.3
CAP_S = 60  # one start-up may take this long before the bench gives up on it


def wall(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.monotonic()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=CAP_S)
        times.append(time.monotonic() - started)
    return statistics.median(times)


def heaviest_imports(n: int = 6) -> list[tuple[float, str]]:
    """(cumulative seconds, top-level package) of the slowest imports behind `import streamcert.cli`."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import streamcert.cli"],
                          capture_output=True, text=True, timeout=CAP_S)
    packages: dict[str, float] = {}
    for line in done.stderr.splitlines():
        m = re.match(r"import time:\s+\d+\s+\|\s+(\d+)\s+\|( *)(\S+)", line)
        if m and len(m.group(2)) == 1:  # a top-level import: its cumulative time covers what it pulls in
            name = m.group(3).split(".")[0]
            packages[name] = packages.get(name, 0.0) + int(m.group(1)) / 1e6
    return sorted(((s, k) for k, s in packages.items()), reverse=True)[:n]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    exe = shutil.which("streamcert")
    help_cmd = [exe, "--help"] if exe else [sys.executable, "-m", "streamcert", "--help"]
    python = wall([sys.executable, "-c", "pass"], args.runs)
    imports = wall([sys.executable, "-c", "import streamcert.cli"], args.runs)
    helps = wall(help_cmd, args.runs)
    print(f"python -c pass: {python:.3f} s (the interpreter alone)")
    print(f"python -c 'import streamcert.cli': {imports:.3f} s")
    print(f"{'streamcert --help' if exe else 'python -m streamcert --help'}: {helps:.3f} s")
    print("heaviest imports behind streamcert.cli (cumulative, python -X importtime): "
          + ", ".join(f"{name} {seconds:.3f} s" for seconds, name in heaviest_imports()))
    print(f"medians of {args.runs}: streamcert --help {helps:.3f} s ({helps / GOAL_S:.2f}x the {GOAL_S} s goal), "
          f"import streamcert.cli {imports:.3f} s, interpreter {python:.3f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
