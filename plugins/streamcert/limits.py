"""The bounds every run keeps to, whatever the implementation sends: one home for each cap's name,
default, option and the sentence a finding says when the cap is reached.

A cap reached is never blamed on the implementation by itself: a requirement fails only where a
cited text is broken; a requirement the cap leaves unjudged is ERROR with `Cap.reached(figure)`,
which names the cap, the measured figure and the option that raises it.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass

KIB = 1024
MIB = 1024 * KIB
GIB = 1024 * MIB


@dataclass(frozen=True)
class Cap:
    field: str  # the Target attribute (and run option name) that holds its value
    option: str  # the `streamcert run` flag that raises it
    what: str  # what it bounds, as a finding names it
    default: float
    unit: str  # "bytes" or "s"

    def reached(self, figure: float | str, limit: float | None = None) -> str:
        """The sentence of a finding this cap left unjudged: what was measured, the cap in force (`limit`,
        when an option changed it) and the option that raises it."""
        shown = figure if isinstance(figure, str) else show(figure, self.unit)
        cap = show(self.default if limit is None else limit, self.unit)
        return f"{shown} reached the {self.what} cap of {cap} (raise it with {self.option})"


MAX_EVENT = Cap("max_event_bytes", "--max-event-bytes", "per-event size", 65 * MIB, "bytes")
MAX_BODY = Cap("max_body_bytes", "--max-body-bytes", "per-response size", 32 * MIB, "bytes")
MAX_STREAM = Cap("max_stream_bytes", "--max-stream-bytes", "per-stream size", 65 * MIB, "bytes")
MAX_DECOMPRESSED = Cap("max_decompressed_bytes", "--max-decompressed-bytes", "decompressed size", 64 * MIB, "bytes")
IDLE = Cap("idle_limit", "--idle-limit", "idle-gap", 10.0, "s")
START = Cap("start_limit", "--start-limit", "start-up", 10.0, "s")
RUN = Cap("run_limit", "--run-limit", "per-run time", 1800.0, "s")
CAPS = (MAX_EVENT, MAX_BODY, MAX_STREAM, MAX_DECOMPRESSED, IDLE, START, RUN)
# Two limits older than this module, declared with the other run options (run_options.py); their
# findings take the same sentence.
EXCHANGE = Cap("timeout", "--timeout", "per-exchange", 10.0, "s")
STREAM = Cap("stream_limit", "--stream-limit", "stream", 15.0, "s")


def show(value: float, unit: str) -> str:
    """A figure as a person reads it: 96 MiB, 1.5 KiB, 812 bytes, 10 s."""
    if unit == "s":
        return f"{value:g} s"
    for size, name in ((GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")):
        if value >= size:
            return f"{value / size:.4g} {name}"
    return f"{int(value)} bytes"


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(b|bytes?|k|kb|kib|m|mb|mib|g|gb|gib)?\s*$", re.IGNORECASE)
_FACTOR = {"": 1, "b": 1, "byte": 1, "bytes": 1, "k": KIB, "kb": KIB, "kib": KIB, "m": MIB, "mb": MIB,
           "mib": MIB, "g": GIB, "gb": GIB, "gib": GIB}


def byte_size(value: str) -> int:
    """A size given on the command line: `1048576`, `64MiB`, `64M`, `1.5 GiB` (K, M, G are powers of 1024)."""
    match = _SIZE.match(value)
    if not match:
        raise argparse.ArgumentTypeError(f"{value!r} is not a size such as 64MiB or 1048576")
    size = int(float(match.group(1)) * _FACTOR[(match.group(2) or "").lower()])
    if size <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be greater than 0")
    return size
