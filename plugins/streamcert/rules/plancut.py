"""The plan rules' own judge of a label or note the agent may have cut (PLAN-006..009).

progress/v1 counts its limits in characters and cuts a longer text to its limit, ending in …. What
every reading agrees on is the MUST (a prefix of the text, the ellipsis, no character split); how the
length was counted is the SHOULD (code points strict; the limit plus … or UTF-16 units accepted, weaker).
This is the suite's judging code, written apart from the reference's cut so that it can catch it.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from ..outcomes import Outcome
from ..protocols.progress_v1 import ELLIPSIS


def utf16_len(text: str) -> int:
    return sum(2 if ord(c) > 0xFFFF else 1 for c in text)


def over(text: str, limit: int) -> bool:
    """Over the limit by some accepted reading (code points, or UTF-16 code units)."""
    return len(text) > limit or utf16_len(text) > limit


def _combining(c: str) -> bool:
    return unicodedata.combining(c) != 0 or unicodedata.category(c) in ("Mn", "Me")


def _lone_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def judge_cut(raw: str, got: Any, limit: int) -> tuple[str | None, tuple[Outcome, str] | None]:
    """One field the implementation may have cut: (MUST complaint or None, (SHOULD outcome, reading)).

    The MUST part is what every reading agrees on: a field over the limit is cut, ends in …, keeps
    a prefix of the text, splits no character. The SHOULD part is the length: exactly the limit in
    code points with the … (strict); the limit plus … or a UTF-16 count is NON_STRICT.
    """
    counts = f"sent {len(got) if isinstance(got, str) else '?'} code points / " \
             f"{utf16_len(got) if isinstance(got, str) else '?'} UTF-16 units for {len(raw)} / {utf16_len(raw)}"
    if not isinstance(got, str):
        return f"not a string: {got!r}", None
    if got == raw:
        if len(raw) > limit:
            return f"not cut: {len(raw)} code points kept whole (limit {limit})", None
        return None, (Outcome.PASS, f"unchanged ({len(raw)} code points, {utf16_len(raw)} UTF-16 units)")
    if _lone_surrogate(got):
        return f"splits a character: a lone surrogate in {got[-6:]!r} ({counts})", None
    if not over(raw, limit):
        return f"changed although within the limit ({counts})", None
    if not got.endswith(ELLIPSIS):
        return f"cut without the ellipsis …: ends {got[-6:]!r} ({counts})", None
    kept = got[:-1]
    if not raw.startswith(kept):
        at = next((i for i, (a, b) in enumerate(zip(kept, raw)) if a != b), len(kept))
        why = "splits a character (U+FFFD where the label had " if kept[at:at + 1] == "\ufffd" else "differs from ("
        return f"the kept part is not a prefix of the text: {why}{raw[at:at + 1]!r} at {at}) ({counts})", None
    if len(got) > limit + 1:
        return f"too long after the cut ({counts}, limit {limit})", None
    return None, _cut_length(raw, kept, got, limit, counts)


def _cut_length(raw: str, kept: str, got: str, limit: int, counts: str) -> tuple[Outcome, str]:
    j = len(kept)
    if len(raw) <= limit:  # over the limit only in UTF-16 code units
        return Outcome.NON_STRICT, f"counted in UTF-16 code units: cut although within {limit} code points ({counts})"
    if len(got) == limit and j == limit - 1:
        reading = "strict: cut to the limit in code points, … included"
        if _combining(raw[j]):
            reading += " (the cut falls between a base character and its combining mark)"
        return Outcome.PASS, f"{reading} ({counts})"
    if len(got) == limit + 1 and j == limit:
        return Outcome.NON_STRICT, f"limit plus ellipsis: {limit} code points and … ({counts})"
    if utf16_len(got) == limit or (utf16_len(got) == limit - 1 and ord(raw[j]) > 0xFFFF):
        return Outcome.NON_STRICT, f"counted in UTF-16 code units ({counts})"
    if j < limit - 1 and not _combining(raw[j]) and all(_combining(c) for c in raw[j + 1:limit]):
        return Outcome.PASS, f"grapheme-safe: backed off to the start of a combining sequence ({counts})"
    return Outcome.FAIL, f"cut to a length no reading gives ({counts}, limit {limit})"
