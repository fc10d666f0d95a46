"""JSON-RPC messages written one a line (ACP's stdio transport): reading stdout lines into messages,
and naming what is wrong with a line that is not exactly one message.

    read_lines(lines, batches)  one Line per stdout line (or per run of lines one message took)
    is_message(value)           a JSON-RPC 2.0 request, notification or response object
    split_messages(text)        the JSON values written back to back on one line
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


def is_message(value: Any) -> bool:
    """A JSON-RPC 2.0 request, notification or response object."""
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        return False
    if isinstance(value.get("method"), str):
        return True
    return "id" in value and ("result" in value or "error" in value)


def split_messages(text: str) -> list[Any] | None:
    """The JSON values written back to back on one line, or None when the text is not such a run."""
    decoder = json.JSONDecoder()
    values, pos, text = [], 0, text.strip()
    while pos < len(text):
        try:
            value, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return None
        values.append(value)
        pos = end
        while pos < len(text) and text[pos] in " \t":
            pos += 1
    return values


@dataclass
class Line:
    """One stdout line and what it held: `messages` (recovered even from a broken line, so the other
    rules can still read them) and `fault` ("" for a line that is exactly one message; otherwise
    "not-a-message", "batch", "two-messages", "split-message", or "too-deep": JSON nested deeper than the
    suite's reader goes, which RFC 8259 §9 allows a parser, so a finding about the suite, not the line)."""

    index: int
    fault: str
    messages: list[dict[str, Any]]
    joined: int = 1  # how many lines a split message took


def read_lines(lines: list[str], batches: bool = True) -> list[Line]:
    """`batches`: a line holding a JSON-RPC batch array is one message (ACP v2 transports: "Messages
    are individual JSON-RPC requests, notifications, responses, or batch arrays"); in v1 ("Messages are
    individual JSON-RPC requests, notifications, or responses") it is fault "batch", messages kept."""
    out: list[Line] = []
    i = 0
    while i < len(lines):
        text = lines[i]
        try:
            value = json.loads(text)
        except RecursionError:
            out.append(Line(i, "too-deep", []))
            i += 1
            continue
        except ValueError:
            value = None
            parsed = False
        else:
            parsed = True
        if parsed and is_message(value):
            out.append(Line(i, "", [value]))
            i += 1
            continue
        if parsed and isinstance(value, list) and value and all(is_message(v) for v in value):
            out.append(Line(i, "" if batches else "batch", value))
            i += 1
            continue
        if not parsed:
            several = split_messages(text)
            if several and len(several) > 1 and all(is_message(v) for v in several):
                out.append(Line(i, "two-messages", several))
                i += 1
                continue
            joined = _join_split(lines, i)
            if joined is not None:
                value, n = joined
                out.append(Line(i, "split-message", [value], joined=n))
                i += n
                continue
        out.append(Line(i, "not-a-message", []))
        i += 1
    return out


def _join_split(lines: list[str], start: int, most: int = 200) -> tuple[dict[str, Any], int] | None:
    """A message printed over several lines (pretty-printed, or an unescaped newline in a string)."""
    if not lines[start].lstrip().startswith("{"):
        return None
    for end in range(start + 2, min(len(lines), start + most) + 1):
        try:
            value = json.loads("\n".join(lines[start:end]))
        except (ValueError, RecursionError):
            continue
        return (value, end - start) if is_message(value) else None
    return None
