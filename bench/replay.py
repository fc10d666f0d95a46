"""Frames a second that `streamcert replay --pace fast` delivers, against the rate the recorded server
itself sent them.

The bench server (bench/server.py) streams N artifact chunks; `stream-basic` is driven against it with
`run_scenario` and saved as a cassette (the vcrpy YAML of recordings/cassette.py). Then `streamcert replay CASSETTE
--pace fast` serves it in its own process (started anew for each run: the n-th request of a method gets
the n-th recorded answer, and the cassette holds one stream), and a plain client (httpx, the bytes split
on blank lines, no SSE semantics) reads the stream back. The replay's rate is from the request to the last
byte; the recorded server's, first to last byte as the capture saw it (its request-to-first-byte is not
recorded apart). The replay's best of `--runs` is taken.

    python bench/replay.py [--chunks 100000] [--chunk-bytes 16] [--runs 3]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _common import bench_server

from streamcert.drivers import Target, run_scenario


def record(url: str, folder: Path) -> tuple[Path, int, float]:
    """(the cassette, its stream's frames, the recorded first-to-last-byte time)."""
    log = run_scenario("stream-basic", Target(a2a_url=url, stream_limit=120.0, timeout=30.0))
    stream = log.get("stream")
    if stream is None or not stream.chunks:
        raise RuntimeError(f"the stream did not arrive: {stream and stream.error}")
    path = log.save(folder / "stream-basic.yaml")
    return path, len(stream.data_events()), stream.chunks[-1].t - stream.chunks[0].t


def read_stream(base: str) -> tuple[int, float, int]:
    """(frames, first-to-last-byte seconds, bytes) of the replayed SendStreamingMessage."""
    card = httpx.get(base + "/.well-known/agent-card.json", timeout=30).json()
    rpc = card["supportedInterfaces"][0]["url"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {"message": {
        "role": "ROLE_USER", "messageId": "bench", "parts": [{"text": "go"}],
        "metadata": {"urn:streamcert:script": {"version": 1, "name": "stream-basic", "steps": []}}}}}
    frames, size, tail = 0, 0, b""
    with httpx.Client(timeout=120) as client:
        sent = last = time.monotonic()
        with client.stream("POST", rpc, json=body,
                           headers={"Accept": "text/event-stream", "A2A-Version": "1.0"}) as response:
            for part in response.iter_raw():
                last = time.monotonic()
                size += len(part)
                text = tail + part
                frames += text.count(b"\n\n")
                tail = text[-1:]  # a blank line may be cut between two reads
    return frames, last - sent, size


def play_once(cassette: Path, run: int) -> float | None:
    """One replay server, one read of its stream: frames a second (None when it did not start)."""
    proc = subprocess.Popen([sys.executable, "-m", "streamcert", "replay", str(cassette), "--pace", "fast"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        started, base = time.monotonic(), None
        while base is None and time.monotonic() - started < 120:
            line = proc.stdout.readline() if proc.stdout else ""
            found = re.search(r"http://127\.0\.0\.1:\d+", line)
            base = found.group(0) if found else None
            if not line and proc.poll() is not None:
                break
        if base is None:
            print("the replay server did not start")
            return None
        ready = time.monotonic() - started
        frames, seconds, nbytes = read_stream(base)
        rate = frames / seconds
        print(f"run {run}: ready after {ready:.2f} s (loading the cassette); {frames} frames, {nbytes / 1e6:.1f} MB "
              f"in {seconds:.2f} s from the request: {rate / 1000:.1f} k frames/s")
        return rate
    finally:
        proc.kill()  # only the process this function started
        proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--chunk-bytes", type=int, default=16)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        with bench_server(args.chunks, args.chunk_bytes, lifetime=300) as url:
            cassette, recorded_frames, recorded_s = record(url, Path(folder))
        size = cassette.stat().st_size / 1e6
        print(f"cassette: {recorded_frames} frames in {size:.1f} MB; recorded first to last byte {recorded_s:.2f} s "
              f"({recorded_frames / recorded_s / 1000:.1f} k frames/s from the bench server)")
        best = None
        for run in range(1, args.runs + 1):
            rate = play_once(cassette, run)
            if rate is None:
                return 1
            best = rate if best is None else max(best, rate)
    recorded_rate = recorded_frames / recorded_s
    print(f"replay --pace fast {best / 1000:.1f} k frames/s, {best / recorded_rate:.2f}x the recorded server's "
          f"{recorded_rate / 1000:.1f} k frames/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
