"""The plan rules' own judge of a label or note the agent may have cut (PLAN-006..009).

progress/v1 counts its limits in characters and cuts a longer text to its limit, ending in …. What
every reading agrees on is the MUST (a prefix of the text, the ellipsis, no character split, at most the
limit however characters are counted: so the limit plus … fails); how the length was counted is the
SHOULD (code points strict; UTF-16 code units or grapheme clusters accepted, weaker).
This is the suite's judging code, written apart from the reference's cut so that it can catch it.
"""

from __future__ import annotations

from typing import Any

from ...outcomes import Outcome
from ...protocols.progress_v1 import ELLIPSIS
from ..common.characters import cluster_around, cluster_starts, graphemes, over_every, utf16_len


def over(text: str, limit: int) -> bool:
    """Over the limit by some accepted reading (code points, or UTF-16 code units; a grapheme count is
    never larger than the code points)."""
    return len(text) > limit or utf16_len(text) > limit


def _lone_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def judge_cut(raw: str, got: Any, limit: int) -> tuple[str | None, tuple[Outcome, str] | None]:
    """One field the implementation may have cut: (MUST complaint or None, (SHOULD outcome, reading)).

    The MUST part is what every reading agrees on: a field over the limit under every counting is cut,
    ends in …, keeps a prefix of the text, splits no character, and is at most the limit after the cut
    and no shorter than a cut to the limit under some counting. The SHOULD part is the length: exactly
    the limit in code points with the … (strict); a UTF-16 or grapheme-cluster count is NON_STRICT.
    """
    if not isinstance(got, str):
        return f"not a string: {got!r}", None
    counts = (f"sent {len(got)} code points / {utf16_len(got)} UTF-16 units / {graphemes(got)} grapheme clusters "
              f"for {len(raw)} / {utf16_len(raw)} / {graphemes(raw)}")
    if got == raw:
        if over_every(raw, limit):
            return f"not cut: {len(raw)} code points kept whole (limit {limit})", None
        if len(raw) > limit:
            return None, (Outcome.NON_STRICT, f"counted in grapheme clusters: within {limit}, kept whole ({counts})")
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
    if over_every(got, limit):
        return f"longer than {limit} characters after the cut however they are counted ({counts})", None
    reading = _cut_length(raw, kept, got, limit, counts)
    if reading is None:
        return f"cut shorter than a cut to {limit} characters gives however they are counted ({counts})", None
    return None, reading


def _cut_length(raw: str, kept: str, got: str, limit: int, counts: str) -> tuple[Outcome, str] | None:
    """How the length of a cut was counted, or None when no reading gives it."""
    j = len(kept)
    if len(raw) <= limit:  # over the limit only in UTF-16 code units
        return Outcome.NON_STRICT, f"counted in UTF-16 code units: cut although within {limit} code points ({counts})"
    if len(got) == limit and j == limit - 1:
        reading = "strict: cut to the limit in code points, … included"
        if cluster_around(raw, j)[0] < j:
            reading += " (the cut falls inside a grapheme cluster, between code points)"
        return Outcome.PASS, f"{reading} ({counts})"
    start, end = cluster_around(raw, limit - 1)
    if j == start < limit - 1 < end:
        return Outcome.PASS, f"grapheme-safe: backed off to the start of the cluster the limit falls in ({counts})"
    if utf16_len(got) == limit or (utf16_len(got) == limit - 1 and ord(raw[j]) > 0xFFFF):
        return Outcome.NON_STRICT, f"counted in UTF-16 code units ({counts})"
    if j in cluster_starts(raw) and graphemes(raw) > limit and graphemes(kept) == limit - 1:
        return Outcome.NON_STRICT, f"counted in grapheme clusters ({counts})"
    return None
