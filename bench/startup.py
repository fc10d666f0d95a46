"""Start-up: wall time of `streamcert --help`, `streamcert list`, `streamcert explain WIRE-001` and of
`python -c "import streamcert.cli"` (the median of several runs each, every run a fresh process), and the
heaviest imports of the CLI and of `streamcert list` (python -X importtime). Then `streamcert run` itself, in
CPU seconds (user + system of the process and its children): collecting the suite (`run -- --collect-only`:
the embedded reference is not started) and one `--profile a2a` run against one URL (a `streamcert serve` the
bench starts; its CPU is the agent's, not counted).
Goals: `streamcert --help` and `streamcert list` each under 0.3 s; the a2a run under 1.2 s of CPU (issue 29).

    python bench/startup.py [--runs 9] [--run-runs 3]
"""

from __future__ import annotations

import argparse
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

GOAL_S = 0.3
RUN_CPU_GOAL_S = 1.2  # one a2a run against one URL (issue 29)
CATALOGUE_NOTE = "read from cases/, no network"
CAP_S = 60  # one start-up may take this long before the bench gives up on it


def wall(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.monotonic()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=CAP_S)
        times.append(time.monotonic() - started)
    return statistics.median(times)


def cpu(cmd: list[str], runs: int) -> float:
    """The median CPU seconds (user + system, its children included) of `cmd`, run `runs` times."""
    used = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=CAP_S)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        used.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(used)


def run_cpu(command: list[str], runs: int) -> tuple[float, float]:
    """CPU seconds of `streamcert run -- --collect-only` and of `streamcert run --url URL --profile a2a` against a
    reference agent started here (medians of `runs`)."""
    with tempfile.TemporaryDirectory() as report:
        collect = cpu([*command, "run", "--report", report, "--", "--collect-only"], runs)
        server = subprocess.Popen([*command, "serve", "--port", "0"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        try:
            url = server.stdout.readline().strip() if server.stdout else ""
            if not url.startswith("http://127.0.0.1:"):
                raise SystemExit(f"streamcert serve did not start (first line {url!r})")
            a2a = cpu([*command, "run", "--url", url, "--profile", "a2a", "--report", report], runs)
        finally:
            server.terminate()
            server.wait(10)
    return collect, a2a


def heaviest_imports(n: int = 6, args: tuple[str, ...] = ("-c", "import streamcert.cli")) -> list[tuple[float, str]]:
    """(cumulative seconds, top-level package) of the slowest imports behind `python ARGS` (by default
    `import streamcert.cli`)."""
    done = subprocess.run([sys.executable, "-X", "importtime", *args],
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
    parser.add_argument("--run-runs", type=int, default=3, help="runs of each `streamcert run` measured")
    args = parser.parse_args()
    exe = shutil.which("streamcert")
    command = [exe] if exe else [sys.executable, "-m", "streamcert"]
    shown = "streamcert" if exe else "python -m streamcert"
    python = wall([sys.executable, "-c", "pass"], args.runs)
    imports = wall([sys.executable, "-c", "import streamcert.cli"], args.runs)
    helps = wall([*command, "--help"], args.runs)
    lists = wall([*command, "list"], args.runs)
    explains = wall([*command, "explain", "WIRE-001"], args.runs)
    print(f"python -c pass: {python:.3f} s (the interpreter alone)")
    print(f"python -c 'import streamcert.cli': {imports:.3f} s")
    print(f"{shown} --help: {helps:.3f} s")
    print(f"{shown} list: {lists:.3f} s (the whole catalogue, {CATALOGUE_NOTE})")
    print(f"{shown} explain WIRE-001: {explains:.3f} s (scenarios, suite tests and fault variants included)")
    print("heaviest imports behind streamcert.cli (cumulative, python -X importtime): "
          + ", ".join(f"{name} {seconds:.3f} s" for seconds, name in heaviest_imports()))
    print("heaviest imports behind streamcert list: "
          + ", ".join(f"{name} {seconds:.3f} s" for seconds, name in heaviest_imports(args=("-m", "streamcert", "list"))))
    collect, a2a = run_cpu(command, args.run_runs)
    print(f"{shown} run -- --collect-only: {collect:.2f} s CPU; {shown} run --url URL --profile a2a: {a2a:.2f} s CPU "
          f"(medians of {args.run_runs})")
    print(f"medians of {args.runs}: streamcert --help {helps:.3f} s ({helps / GOAL_S:.2f}x the {GOAL_S} s goal), "
          f"list {lists:.3f} s ({lists / GOAL_S:.2f}x), explain {explains:.3f} s, "
          f"import streamcert.cli {imports:.3f} s, interpreter {python:.3f} s; "
          f"a2a run against one URL {a2a:.2f} s CPU ({a2a / RUN_CPU_GOAL_S:.2f}x the {RUN_CPU_GOAL_S} s goal)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
