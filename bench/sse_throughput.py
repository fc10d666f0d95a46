"""Event-stream parser throughput: the suite's parser against httpx-sse and a byte-split floor.

    python bench/sse_throughput.py [--events N] [--repeat R] [--long-mib M]

One stream of N A2A `artifactUpdate` events (JSON-RPC envelopes of a few hundred bytes, CRLF line
ends, a `: ping` comment every 100 events, as the a2a-sdk frames them) is fed in 64 KiB chunks to:
  suite      wire/sse.py's SSEParser (feed + finish), as wire/a2a_client.py drives it;
  httpx-sse  the components httpx-sse's iter_sse chains on an httpx response: httpx's TextDecoder
             (what Response.iter_text decodes with), httpx-sse's SSELineDecoder, then its SSEDecoder;
  floor      split the bytes on the blank line and read each `data: ` line, no SSE semantics.
Every reader parses each event's data with json.loads, and must agree on the event count. Each
reader runs R times on the same bytes; the best time counts. Then one event whose data is a single
line of M MiB goes through the suite's parser alone (the parser's time, no JSON).
The last line holds the ratios. No thresholds: this prints figures.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import sys
import time
from typing import Callable

import httpx
import httpx_sse

from streamcert.wire.sse import SSEParser

CHUNK = 64 * 1024
PING_EVERY = 100


def a2a_stream(n: int) -> bytes:
    """n artifactUpdate events framed like sse-starlette (CRLF, a keep-alive comment every 100 events)."""
    task = "0f6b2c1e-8d4a-4e3b-9a7c-5e2d1f0b3c4a"
    out = []
    for i in range(n):
        result = {"artifactUpdate": {
            "taskId": task, "contextId": "ctx-7c1d2e",
            "artifact": {"artifactId": f"artifact-{i // 1000}", "name": "report.md",
                         "parts": [{"text": f"Chunk {i} of the generated report: the quick brown fox jumps over "
                                            f"the lazy dog while the café counts € {i * 7 % 1000}."}]},
            "append": i % 1000 != 0, "lastChunk": i == n - 1}}
        body = json.dumps({"jsonrpc": "2.0", "id": "req-1", "result": result}, ensure_ascii=False)
        out.append(f"data: {body}\r\n\r\n")
        if i % PING_EVERY == PING_EVERY - 1:
            out.append(": ping - 2026-11-30 08:00:00.000000+00:00\r\n\r\n")
    return "".join(out).encode("utf-8")


def chunked(raw: bytes) -> list[bytes]:
    return [raw[i:i + CHUNK] for i in range(0, len(raw), CHUNK)]


def run_suite(chunks: list[bytes]) -> int:
    parser = SSEParser()
    n = 0
    for k, chunk in enumerate(chunks):
        for ev in parser.feed(chunk, float(k)):
            if ev.kind == "event":
                json.loads(ev.data)
                n += 1
    for ev in parser.finish(float(len(chunks))):
        if ev.kind == "event":
            json.loads(ev.data)
            n += 1
    return n


def run_httpx_sse(chunks: list[bytes]) -> int:
    # httpx-sse's iter_sse: SSELineDecoder over Response.iter_text() (httpx's TextDecoder), each line
    # rstrip("\n")-ed into SSEDecoder.decode; then the line decoder is flushed at the end.
    text_decoder = httpx._decoders.TextDecoder(encoding="utf-8")
    lines = httpx_sse._decoders.SSELineDecoder()
    decoder = httpx_sse._decoders.SSEDecoder()
    n = 0

    def feed(batch: list[str]) -> None:
        nonlocal n
        for line in batch:
            sse = decoder.decode(line.rstrip("\n"))
            if sse is not None:
                json.loads(sse.data)
                n += 1

    for chunk in chunks:
        text = text_decoder.decode(chunk)
        if text:
            feed(lines.decode(text))
    text = text_decoder.flush()
    if text:
        feed(lines.decode(text))
    feed(lines.flush())
    return n


def run_floor(chunks: list[bytes]) -> int:
    buf = b""
    n = 0
    for chunk in chunks:
        buf += chunk
        blocks = buf.split(b"\r\n\r\n")
        buf = blocks.pop()
        for block in blocks:
            if block.startswith(b"data: "):
                json.loads(block[6:])
                n += 1
    return n


def best_time(fn: Callable[[list[bytes]], int], chunks: list[bytes], repeat: int) -> tuple[float, int]:
    best, count = float("inf"), -1
    for _ in range(repeat):
        t0 = time.perf_counter()
        count = fn(chunks)
        best = min(best, time.perf_counter() - t0)
    return best, count


def long_line(mib: int) -> float:
    payload = b"x" * (mib * 1024 * 1024 - 12)
    raw = b'data: {"t": "' + payload + b'"}\r\n\r\n'
    chunks = chunked(raw)
    parser = SSEParser()
    t0 = time.perf_counter()
    out = []
    for k, chunk in enumerate(chunks):
        out += parser.feed(chunk, float(k))
    out += parser.finish(float(len(chunks)))
    elapsed = time.perf_counter() - t0
    assert len(out) == 1 and len(out[0].data) == len(raw) - 10, "the long line must come out as one event"
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--long-mib", type=int, default=32)
    args = ap.parse_args()

    raw = a2a_stream(args.events)
    chunks = chunked(raw)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"httpx-sse {importlib.metadata.version('httpx-sse')}")
    print(f"stream: {args.events} events, {len(raw) / 1e6:.1f} MB ({len(raw) // args.events} B/event), "
          f"{len(chunks)} chunks of {CHUNK // 1024} KiB; best of {args.repeat}")
    rates = {}
    for name, fn in (("suite", run_suite), ("httpx-sse", run_httpx_sse), ("floor", run_floor)):
        elapsed, count = best_time(fn, chunks, args.repeat)
        if count != args.events:
            sys.exit(f"{name} read {count} events, expected {args.events}")
        rates[name] = count / elapsed
        print(f"{name:10} {rates[name] / 1000:8.1f} k events/s  ({elapsed:.3f} s)")
    elapsed = long_line(args.long_mib)
    print(f"long line  {args.long_mib} MiB single-line event through the suite's parser: {elapsed:.3f} s "
          f"({args.long_mib / elapsed:.0f} MiB/s)")
    print(f"ratios: suite/httpx-sse {rates['suite'] / rates['httpx-sse']:.2f}x, "
          f"suite/floor {rates['suite'] / rates['floor']:.2f}x")


if __name__ == "__main__":
    main()
