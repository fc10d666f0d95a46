"""`streamcert matrix run`: N stand-in servers (the reference and its fault variants, profile a2a, JSON-RPC,
stream limit 5 s) run one after another (--jobs 1) and then --jobs 4, on this machine. Prints each wall time, the
ratio (the goal: four servers in at most 0.5× the sequential time; the runs mostly wait on the implementations)
and the peak resident memory of the whole process tree of each run (sampled from /proc every 0.2 s; the goal:
under 600 MiB for four cells at once).

    python bench/matrix.py [--servers 4]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import MIB

FAULTS = ("close-early", "drop-chunk", "card-missing-field", "append-first", "bad-json-frame", "error-id-null",
          "artifacts-not-joined", "cancel-ignored", "client-ids", "error-data-missing", "event-after-terminal",
          "card-404", "card-not-json", "card-old-version", "append-after-last")


def matrix_file(folder: Path, servers: int) -> Path:
    lines = ["defaults: {profiles: [a2a], bindings: [jsonrpc], stream_limit: 5, start_limit: 60}", "servers:",
             "  - {name: reference, command: streamcert serve --port 0}"]
    lines += [f"  - {{name: {f}, command: streamcert serve --port 0 --fault {f}}}" for f in FAULTS[:servers - 1]]
    path = folder / "matrix.yaml"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def tree_rss(root: int) -> int:
    """Resident bytes of `root` and every descendant (by parent pid, read from /proc)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            parents[int(entry.name)] = int(fields[1])
            rss[int(entry.name)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in tree:
                tree.add(child)
                frontier.append(child)
    return sum(rss.get(pid, 0) for pid in tree)


def timed(path: Path, out: Path, jobs: int) -> tuple[float, int, int]:
    """(seconds, peak tree RSS, exit code) of one `streamcert matrix run`."""
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "streamcert", "matrix", "run", str(path), "--out", str(out),
                             "--jobs", str(jobs)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.2)
    return time.monotonic() - t0, peak, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=4, choices=range(1, len(FAULTS) + 2), metavar="N")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-matrix-") as tmp:
        path = matrix_file(Path(tmp), args.servers)
        seq, seq_peak, seq_code = timed(path, Path(tmp) / "seq", 1)
        par, par_peak, par_code = timed(path, Path(tmp) / "par", 4)
    print(f"{args.servers} servers, profile a2a, JSON-RPC, stream limit 5 s (exit codes {seq_code}, {par_code})")
    print(f"  --jobs 1: {seq:6.1f} s   peak tree RSS {seq_peak / MIB:6.0f} MiB")
    print(f"  --jobs 4: {par:6.1f} s   peak tree RSS {par_peak / MIB:6.0f} MiB")
    print(f"  ratio --jobs 4 / --jobs 1: {par / seq:.2f} (goal ≤ 0.50); peak at --jobs 4 "
          f"{'under' if par_peak < 600 * MIB else 'OVER'} 600 MiB")


if __name__ == "__main__":
    main()
