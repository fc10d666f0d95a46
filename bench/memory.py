"""Peak resident memory of streamcert's own processes (not the server's) for a run against a bench
server that streams a 256 MiB artifact in 4 KiB chunks, and one that sends a single 64 MiB event.

For each case the bench server (bench/server.py) runs in its own process and `streamcert run --url …
--profile a2a -- -k test_stream_basic` in another; the peak is that child's ru_maxrss from wait4
(which covers its own children too). A run that has not ended within --cap seconds is stopped and
its peak so far reported. Where the goal (< 200 MiB) is missed, a traced in-process run shows the
top allocations held once the stream is in (tracemalloc).

    python bench/memory.py [--cap 120] [--no-trace]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc

from _common import MIB, bench_server

GOAL_MIB = 200
CASES = (  # name, chunks, bytes per chunk
    ("256 MiB artifact in 4 KiB chunks", 65536, 4096),
    ("one 64 MiB event", 1, 64 * MIB),
)
STREAM_LIMIT = 120.0


def measure(url: str, cap: float) -> tuple[float, float, str]:
    """(peak RSS in MiB, seconds, how it ended) of `streamcert run` against `url`."""
    with tempfile.TemporaryDirectory() as report:
        cmd = [sys.executable, "-m", "streamcert", "run", "--url", url, "--profile", "a2a", "--report", report,
               "--stream-limit", str(STREAM_LIMIT), "--", "-q", "-k", "test_stream_basic", "-p", "no:cacheprovider"]
        started = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ended = "exit"
        while True:  # wait4 on this pid alone: its rusage is this child's, not the server's
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > cap:
                proc.send_signal(signal.SIGKILL)  # only the child this function started
                pid, status, usage = os.wait4(proc.pid, 0)
                ended = f"stopped after {cap:.0f} s"
                break
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if ended == "exit":
            ended = f"exit {proc.returncode}"
        return usage.ru_maxrss / 1024, time.monotonic() - started, ended  # ru_maxrss is in KiB on Linux


def traced(url: str, cap: float) -> None:
    """Drive the scenario in this process under tracemalloc; print the top allocations held after it."""
    from streamcert.drivers import Target, run_scenario

    def stop(signum, frame):
        raise KeyboardInterrupt()  # not an Exception: no driver's net catches it

    tracemalloc.start()
    signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, cap)
    try:
        log = run_scenario("stream-basic", Target(a2a_url=url, stream_limit=STREAM_LIMIT, timeout=30.0))
    except KeyboardInterrupt:
        print(f"    (the traced drive was stopped after {cap:.0f} s)")
        return
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    snapshot = tracemalloc.take_snapshot()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    stream = log.get("stream")
    print(f"    traced after the drive: {current / MIB:.0f} MiB held, {peak / MIB:.0f} MiB traced peak "
          f"({len(stream.events) if stream else 0} events, {len(stream.chunks) if stream else 0} chunks kept)")
    for stat in snapshot.statistics("lineno")[:5]:
        frame = stat.traceback[0]
        where = "/".join(frame.filename.split("/")[-2:])
        print(f"    {stat.size / MIB:7.1f} MiB {stat.count:>8} blocks  {where}:{frame.lineno}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=120.0, help="seconds one run may take before it is stopped")
    parser.add_argument("--no-trace", action="store_true", help="skip the tracemalloc run where the goal is missed")
    args = parser.parse_args()
    peaks = []
    for name, chunks, chunk_bytes in CASES:
        with bench_server(chunks, chunk_bytes, lifetime=args.cap + STREAM_LIMIT + 60) as url:
            peak, seconds, ended = measure(url, args.cap)
        peaks.append(peak)
        print(f"{name}: streamcert run peak RSS {peak:.0f} MiB ({ended}, {seconds:.1f} s)", flush=True)
        if peak >= GOAL_MIB and not args.no_trace:
            with bench_server(chunks, chunk_bytes, lifetime=args.cap + STREAM_LIMIT + 60) as url:
                traced(url, args.cap)
    print(f"peak RSS: 256 MiB artifact {peaks[0]:.0f} MiB ({peaks[0] / GOAL_MIB:.2f}x the goal), "
          f"64 MiB event {peaks[1]:.0f} MiB ({peaks[1] / GOAL_MIB:.2f}x the goal) (goal < {GOAL_MIB} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
