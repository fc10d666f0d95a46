"""The bounds every run keeps to, whatever the implementation sends: one home for each cap's name,
default, option and the sentence a finding says when the cap is reached.

A cap reached is never blamed on the implementation by itself: a requirement fails only where a
cited text is broken; a requirement the cap leaves unjudged is ERROR with `Cap.reached(figure)`,
which names the cap, the measured figure and the option that raises it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

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
# What `streamcert check`, `diff`, `replay` and `convert` read of a cassette file (an untrusted input: a file
# from another team's CI): a larger one is refused before it is read.
MAX_CASSETTE = Cap("max_cassette_bytes", "--max-cassette-bytes", "cassette size", 256 * MIB, "bytes")
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


# -- what a finding and a report quote of what the other side sent ----------------------------------------
#
# Evidence is quoted, never copied. Every finding is bounded where it is made (`outcomes.Finding`, through
# `bounded_finding`), so no rule, driver or writer can carry a server's whole text into a message, the
# terminal or a report: a status text of 64 MiB is quoted in at most QUOTE_CHARS characters, with its size
# and the SHA-256 of the whole text, so the cut text can still be matched with the cassette. The report adds
# its own bounds on top (report/aggregate.py): at most 3 messages and 10 evidence items per requirement, and
# REPORT_EVIDENCE_CHARS of evidence in all. These caps bound what the suite writes, not what it judges: a
# rule reads the whole frame; a cut never changes an outcome.

MESSAGE_CHARS = 2 * KIB  # one finding's message (and its `reading`); a report entry's joined message: twice it
QUOTE_CHARS = 2 * KIB  # one string of an evidence item (a frame's data, a body, an error)
EVIDENCE_ITEM_CHARS = 4 * KIB  # one evidence item, as JSON, about (each string keeps at least MIN_QUOTE_CHARS)
EVIDENCE_KEYS = 16  # members of one evidence item (or of `measured`)
EVIDENCE_ITEMS = 10  # evidence items of one finding
NESTED_ITEMS = 20  # items of a list (members of an object) inside an evidence item
NESTED_DEPTH = 6  # nesting inside an evidence item; deeper values are quoted as JSON text
MIN_QUOTE_CHARS = 256  # what a quote keeps even when its item's budget is spent: the cut note and a little
REPORT_EVIDENCE_CHARS = 2 * MIB  # all the evidence of one report, as JSON
SPOOL_AFTER = 256 * KIB  # the bytes of one body (a response, a program's stdout, a cassette's) kept in memory; past
# it they go to a temporary file (framelog.Spool) and memory holds only what was decoded from them
HASH_SLICE = 1 << 20  # characters of a cut text encoded at a time to hash it (UTF-8 encodes each one alone)


def cut(text: str, limit: int = QUOTE_CHARS) -> str:
    """`text` when it holds at most `limit` characters; otherwise its head and tail around a note saying how
    much was cut and the SHA-256 of the whole text (UTF-8), in at most `limit` characters. Cutting twice
    changes nothing (the cut text is within the limit)."""
    limit = max(limit, MIN_QUOTE_CHARS)
    if len(text) <= limit:
        return text
    digest, size = hashlib.sha256(), 0
    for start in range(0, len(text), HASH_SLICE):  # a slice at a time: a 64 MiB text is not encoded whole again
        data = text[start:start + HASH_SLICE].encode("utf-8", "surrogatepass")
        digest.update(data)
        size += len(data)
    note = f"…[cut: {len(text)} characters, {show(size, 'bytes')}, sha256 {digest.hexdigest()}]…"
    room = max(0, limit - len(note))
    head = room * 3 // 4
    return text[:head] + note + (text[len(text) - (room - head):] if room > head else "")


def bounded_value(value: Any, limit: int = QUOTE_CHARS, depth: int = 0) -> Any:
    """A JSON-shaped value quoted within about `limit` characters: strings cut (`cut`), lists and objects kept
    to NESTED_ITEMS entries and NESTED_DEPTH levels; one still too long as a whole becomes its cut JSON text."""
    if isinstance(value, str):
        return cut(value, limit)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if depth >= NESTED_DEPTH:
        return cut(_json_text(value), limit)
    if isinstance(value, dict):
        items = list(value.items())
        kept = items if len(items) <= NESTED_ITEMS else items[:NESTED_ITEMS - 1]
        out: Any = {cut(str(k), MIN_QUOTE_CHARS): bounded_value(v, limit, depth + 1) for k, v in kept}
        if len(kept) < len(items):
            out["…"] = f"{len(items) - len(kept)} more member(s) not quoted"
    elif isinstance(value, (list, tuple)):
        kept_items = value if len(value) <= NESTED_ITEMS else value[:NESTED_ITEMS - 1]
        out = [bounded_value(v, limit, depth + 1) for v in kept_items]
        if len(kept_items) < len(value):
            out.append(f"… {len(value) - len(kept_items)} more item(s) not quoted")
    else:
        return cut(str(value), limit)
    text = _json_text(out)
    return out if len(text) <= limit else cut(text, limit)


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        return repr(value)[: 4 * QUOTE_CHARS]


def bounded_item(item: dict[str, Any], budget: int = EVIDENCE_ITEM_CHARS) -> dict[str, Any]:
    """One evidence item (or a finding's `measured`) within about `budget` characters of JSON: at most
    EVIDENCE_KEYS members, each value quoted within what the members before it left of the budget."""
    items = list(item.items())
    kept = items if len(items) <= EVIDENCE_KEYS else items[:EVIDENCE_KEYS - 1]
    out: dict[str, Any] = {}
    for key, value in kept:
        value = bounded_value(value, min(QUOTE_CHARS, budget))
        budget -= len(_json_text(value)) if not isinstance(value, (bool, int, float)) and value is not None else 8
        out[cut(str(key), MIN_QUOTE_CHARS)] = value
    if len(kept) < len(items):
        out["omitted_members"] = len(items) - len(kept)
    return out


def bounded_evidence(evidence: list[Any]) -> list[Any]:
    """A finding's evidence: at most EVIDENCE_ITEMS items (the last of them then says how many were left out),
    each within EVIDENCE_ITEM_CHARS."""
    items = list(evidence)
    kept = items if len(items) <= EVIDENCE_ITEMS else items[:EVIDENCE_ITEMS - 1]
    out = [bounded_item(e) if isinstance(e, dict) else bounded_value(e) for e in kept]
    if len(kept) < len(items):
        out.append({"note": f"{len(items) - len(kept)} more evidence item(s) of this finding not quoted"})
    return out
