"""ACP on the wire: the names the driver, the rules and the reference agent share, and the reading of
stdout lines into JSON-RPC messages (specs/acp-plans.md; seed 002 for protocol version 2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

SCRIPT_KEY = "urn:streamcert:script"  # DESIGN §6: the script rides in session/prompt `_meta`
VERSIONS = (1, 2)  # protocol versions the suite knows; 2 is the seed's (draft) text
LATEST = 2

STOP_REASONS = ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled")
PLAN_TYPES = ("items", "markdown", "file")
PRIORITIES = ("high", "medium", "low")
STATUSES = {1: ("pending", "in_progress", "completed"), 2: ("pending", "in_progress", "completed", "cancelled")}

# sessionUpdate values that carry plans
PLAN = "plan"  # v1 stable: {entries}
PLAN_UPDATE = "plan_update"  # v1 unstable and v2: {plan: {type, planId, ...}}
PLAN_REMOVED = "plan_removed"  # v1 unstable and v2: {planId}
PLAN_KINDS = (PLAN, PLAN_UPDATE, PLAN_REMOVED)


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
        except ValueError:
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
    "not-a-message", "batch", "two-messages" or "split-message")."""

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
        except ValueError:
            continue
        return (value, end - start) if is_message(value) else None
    return None
