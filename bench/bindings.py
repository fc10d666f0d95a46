"""Bindings: the scenarios of the A2A profiles (a2a, interactions, plans) against the embedded reference, over
each binding alone (`streamcert run --binding B`), sequential; the wall time of each and its ratio to JSON-RPC's,
beside what each run judged.

The same scenarios, the same reference, the same rules: what differs is the transport (an HTTP/1.1 POST with a
JSON-RPC envelope, the HTTP+JSON routes, gRPC over HTTP/2) and what the capture records of it. The scripts' own
waits are the same in every run, so the ratio is dominated by them; the difference is the binding's cost.

    python bench/bindings.py [--runs 1] [--cap 300]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROFILES = ("a2a", "interactions", "plans")
BINDINGS = ("jsonrpc", "http-json", "grpc")


def one_run(binding: str, cap: float) -> tuple[float, str]:
    """Wall seconds of one run over `binding`, and what its report says of that binding."""
    with tempfile.TemporaryDirectory() as report:
        cmd = [sys.executable, "-m", "streamcert", "run", "--report", report, "--binding", binding,
               *(arg for profile in PROFILES for arg in ("--profile", profile))]
        started = time.monotonic()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=cap)
        except subprocess.TimeoutExpired:
            return float("nan"), f"not finished within {cap:.0f} s"
        seconds = time.monotonic() - started
        path = Path(report) / "compatibility.json"
        if not path.exists():
            return seconds, f"exit {done.returncode}, no report"
        doc = json.loads(path.read_text("utf-8"))
        counts: dict[str, int] = {}
        for entry in doc["requirements"]:
            status = (entry.get("bindings") or {}).get(binding)
            if status:
                counts[status] = counts.get(status, 0) + 1
        shown = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        return seconds, f"exit {done.returncode}, verdict {doc['verdict']}, {shown}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1, help="runs over each binding (the median is kept)")
    parser.add_argument("--cap", type=float, default=300.0, help="seconds one run may take")
    args = parser.parse_args()
    medians = {}
    for binding in BINDINGS:
        times = []
        for _ in range(args.runs):
            seconds, summary = one_run(binding, args.cap)
            times.append(seconds)
            print(f"{binding}: {seconds:.2f} s ({summary})", flush=True)
        medians[binding] = statistics.median(times)
    base = medians["jsonrpc"]
    print("; ".join(f"{b} {s:.2f} s ({s / base:.2f}x JSON-RPC)" for b, s in medians.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
