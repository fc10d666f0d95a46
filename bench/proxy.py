"""What `streamcert proxy` costs a client: the same streamed task read directly from bench/server.py and through
the proxy, one after the other, with the client's arrival time of every event.

Two runs of each path:
- paced: --paced events spread over --seconds; the first event's arrival (from the request's start) through the
  proxy minus directly is the delay the proxy puts on the stream (its own connection upstream included); each later
  event's arrival after the first, through the proxy minus directly, is how that delay changes along the stream
  (the server's schedule is the same both times): the median and the 95th percentile. A constant per-event delay
  cannot be told apart from the first event's without the server's send times, so it is counted there;
- flood: --flood events as fast as the socket takes; events per second directly and through the proxy, and the
  ratio (the last line).

The proxy is the installed `streamcert proxy` in a process of its own (as a user runs it), recording what passes
into a temporary folder and judging it when stopped (its own judging is not timed here).

    python bench/proxy.py [--paced 200] [--seconds 2] [--flood 20000]
"""

from __future__ import annotations

import argparse
import json
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _common import bench_server

RPC_PATH = "/jsonrpc"  # bench/server.py's JSON-RPC endpoint


def read_stream(base: str) -> list[float]:
    """One SendStreamingMessage at `base`; the arrival of each SSE event, in seconds from the request's start."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
            "params": {"message": {"role": "ROLE_USER", "messageId": "bench", "parts": [{"text": "go"}]}}}
    arrivals: list[float] = []
    with httpx.Client(timeout=60) as client:
        started = time.perf_counter()
        with client.stream("POST", base + RPC_PATH, json=body, headers={"A2A-Version": "1.0"}) as answer:
            pending = b""
            for chunk in answer.iter_raw():
                pending += chunk
                while b"\n\n" in pending:
                    _, pending = pending.split(b"\n\n", 1)
                    arrivals.append(time.perf_counter() - started)
    return arrivals


def through_proxy(upstream: str, folder: Path) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "streamcert", "proxy", "--upstream", upstream, "--port", "0",
                             "--record", str(folder / "cass"), "--report", str(folder / "rep")],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("http://127.0.0.1:"):
        proc.kill()
        raise RuntimeError(f"the proxy did not start (said {line!r})")
    return proc, line.split()[0]


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)  # it writes its cassettes and report, then exits
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def compare(events: int, chunk_bytes: int, seconds: float) -> tuple[list[float], list[float]]:
    """The arrivals read directly, then through the proxy, each from a server of its own (the same schedule)."""
    with bench_server(events, chunk_bytes, lifetime=120, seconds=seconds) as url:
        direct = read_stream(url)
    with bench_server(events, chunk_bytes, lifetime=120, seconds=seconds) as url, \
            tempfile.TemporaryDirectory() as tmp:
        proc, here = through_proxy(url, Path(tmp))
        try:
            proxied = read_stream(here)
        finally:
            stop(proc)
    return direct, proxied


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--paced", type=int, default=200, help="events of the paced run")
    parser.add_argument("--seconds", type=float, default=2.0, help="the paced run's length")
    parser.add_argument("--flood", type=int, default=20000, help="events of the flood run")
    args = parser.parse_args()

    direct, proxied = compare(args.paced, 16, args.seconds)
    if len(direct) != len(proxied):
        print(f"paced: {len(direct)} events directly, {len(proxied)} through the proxy: not the same stream")
        return 1
    first = (proxied[0] - direct[0]) * 1000
    added = sorted(((p - proxied[0]) - (d - direct[0])) * 1000 for d, p in zip(direct[1:], proxied[1:]))
    p95 = added[min(len(added) - 1, int(len(added) * 0.95))]
    print(f"paced: {len(direct)} events over {args.seconds:g} s; through the proxy the stream's events arrive "
          f"{first:+.2f} ms later (the first event's delay, the proxy's connection upstream included); after the "
          f"first, the delay changes by a median {statistics.median(added):+.2f} ms, p95 {p95:+.2f} ms (it does not "
          f"grow along the stream)")

    direct, proxied = compare(args.flood, 16, 0.0)
    rate_direct, rate_proxied = len(direct) / direct[-1], len(proxied) / proxied[-1]
    print(f"flood: {len(direct)} events directly in {direct[-1]:.3f} s ({rate_direct:,.0f}/s), "
          f"{len(proxied)} through the proxy in {proxied[-1]:.3f} s ({rate_proxied:,.0f}/s)")
    print(json.dumps({"first_event_ms": round(first, 3), "added_ms_median": round(statistics.median(added), 3),
                      "added_ms_p95": round(p95, 3),
                      "events_per_s_direct": round(rate_direct), "events_per_s_proxied": round(rate_proxied)}))
    print(f"throughput through the proxy / directly: {rate_proxied / rate_direct:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
