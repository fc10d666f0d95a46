"""What the bench programs share: starting bench/server.py in its own process, bounded in time."""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

HERE = Path(__file__).resolve().parent
MIB = 1024 * 1024


@contextmanager
def bench_server(chunks: int, chunk_bytes: int, lifetime: float, seconds: float = 0.0) -> Iterator[str]:
    """bench/server.py in a child process on 127.0.0.1 (its chunks spread over `seconds` if given); yields
    its URL and stops it on the way out."""
    proc = subprocess.Popen([sys.executable, str(HERE / "server.py"), "--chunks", str(chunks),
                             "--chunk-bytes", str(chunk_bytes), "--lifetime", str(lifetime),
                             "--seconds", str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"bench server did not start (said {url!r})")
        yield url
    finally:
        proc.kill()  # only the process this context started
        proc.wait()
