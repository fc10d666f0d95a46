"""What a client under test printed (docs/contracts.md §7: "prints one JSON object"): its final view found on
stdout, the JSON values of that view compared as values, and the error line of a crash on stderr."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ...contract.capture import PARTIAL_LINE
from ...framelog import (
    MAX_JSON_DEPTH,
    Exchange,
    nested_deeper,
    read_json,
)
from .. import quote

SHOWN_LIMIT = 160  # characters of a value a finding quotes


# -- the final view on stdout (docs/contracts.md §7: "prints one JSON object") --------------------------------------------

@dataclass
class FoundView:
    value: dict[str, Any] | None  # the final view, or None
    text: str  # its text; without one, the last line that is not blank
    t: float | None  # when it came
    lines: int  # the lines read
    complaint: str = ""  # why the last line that looked like JSON was not a JSON object


def final_view(ex: Exchange, *, partial: bool = True) -> FoundView:
    """A client's final view: its last output line that is a JSON object (a last line without its line end
    included when `partial`), else its whole stdout read as one JSON object; read within the suite's JSON
    bounds, so hostile output cannot make the reading raise."""
    lines = [(ev.data, ev.t) for ev in ex.events]
    last_line = ex.notes.get(PARTIAL_LINE)
    if partial and isinstance(last_line, str) and last_line.strip():
        lines.append((last_line, ex.t_end))
    complaint = ""
    for text, t in reversed(lines):
        if not text.lstrip().startswith("{"):
            continue
        value, error = read_json(text.strip())
        if isinstance(value, dict):
            return FoundView(value, text, t, len(lines))
        complaint = complaint or error or ""
    whole = "\n".join(text for text, _ in lines)
    value, error = read_json(whole) if len(lines) > 1 and whole.lstrip().startswith("{") else (None, None)
    if isinstance(value, dict):
        return FoundView(value, whole, lines[-1][1], len(lines))
    last = next((text for text, _ in reversed(lines) if text.strip()), "")
    return FoundView(None, last, None, len(lines), complaint or error or "")


# -- JSON values ------------------------------------------------------------------------------------------

def same(a: Any, b: Any) -> bool:
    """Equal as JSON values: numbers by value (11.0 == 11, true is not 1), objects whatever their key order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def shown(value: Any) -> str:
    """A value as a finding quotes it (compact JSON, cut)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return quote(text, SHOWN_LIMIT)


def canonical(value: Any) -> str | None:
    """A key for a JSON value (sorted keys), or None for one nested deeper than the suite reads."""
    if isinstance(value, (dict, list)) and nested_deeper(value, MAX_JSON_DEPTH):
        return None
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def header(ex: Exchange, name: str) -> str | None:
    """A request header's value, the name matched in any case."""
    wanted = name.lower()
    return next((str(v) for k, v in ex.request_headers.items() if str(k).lower() == wanted), None)


def text_of(message: Any) -> str | None:
    """The text parts of a message, joined (None: no message or no text part)."""
    parts = message.get("parts") if isinstance(message, dict) else None
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)] \
        if isinstance(parts, list) else []
    return "".join(texts) if texts else None


# -- a crash's error line -----------------------------------------------------------------------------

# A line that names an error: Python's exception line (the last of its traceback), the first line of a
# JavaScript error (its stack follows it), Go's panic, a Rust or shell `error:` line.
ERROR_LINE = re.compile(r"^(?:Uncaught\s+)?[A-Za-z_$][\w.$]*(?:Error|Exception)\b|^(?:panic|error|fatal)\b",
                        re.IGNORECASE)


STACK_LINE = re.compile(r"^\s+(?:at\s|File\s|\^)|^\s*Traceback\b|^\s*$")


def error_line(stderr: str) -> str:
    """What a crashed client's stderr says went wrong, quoted from its error line (the last line naming an
    error, with what follows it up to the quote's limit), not from the bottom of a stack; without one, its
    last line that is no stack frame; "" for an empty stderr."""
    lines = stderr.splitlines()
    at = next((i for i in range(len(lines) - 1, -1, -1) if ERROR_LINE.match(lines[i].strip())
               and not lines[i][:1].isspace()), None)
    if at is None:
        at = next((i for i in range(len(lines) - 1, -1, -1) if not STACK_LINE.match(lines[i])), None)
    return quote("\n".join(line.rstrip() for line in lines[at:]).strip(), SHOWN_LIMIT) if at is not None else ""
