"""IX-010: request_connection cuts the app and the reason to their limits (interactions/v1 · Connections).

Characters are Unicode code points. A cut counted in UTF-16 code units or in grapheme clusters is
NON_STRICT (with the counts); a cut inside a character (a lone surrogate, U+FFFD) or one that is not
a prefix of the text fails. Whether the cut ends in "…" is not said for these fields: both are
accepted and reported.
This module keeps its own judge of a cut: it never calls the reference's truncation.
"""

from __future__ import annotations

from typing import Any

from ..protocols.interactions_v1 import CONNECTION, DETAIL, ELLIPSIS, LIMITS
from . import Verdict, rule
from .characters import graphemes, utf16_len
from .ixview import Interruptions

STRICT, UTF16, GRAPHEMES, BAD = "strict", "utf16", "graphemes", "bad"  # how one cut field is judged
WEAKER = {UTF16: "UTF-16 code units", GRAPHEMES: "grapheme clusters"}


def judge_cut(given: str, got: Any, limit: int) -> tuple[str, str]:
    """(STRICT | UTF16 | BAD, what was seen) for one cut field."""
    if not isinstance(got, str):
        return BAD, f"{got!r} is not a string"
    counts = f"{len(got)} code points, {utf16_len(got)} UTF-16 units (limit {limit}; the text had {len(given)} code points)"
    if any(0xD800 <= ord(c) <= 0xDFFF for c in got) or ("\ufffd" in got and "\ufffd" not in given):
        return BAD, f"the cut splits a character (lone surrogate or U+FFFD): {counts}"
    if len(given) <= limit:
        return (STRICT, "not cut (within the limit)") if got == given else (BAD, f"{got!r} for {given!r}")
    if got == given and graphemes(given) <= limit:
        return GRAPHEMES, f"kept whole: within {limit} grapheme clusters ({graphemes(given)}; {counts})"
    body = got[:-1] if got.endswith(ELLIPSIS) else got
    if not given.startswith(body):
        return BAD, f"not a cut of the text: {counts}"
    mark = f" ending in {ELLIPSIS}" if body != got else f" without {ELLIPSIS}"
    if len(got) == limit or (body != got and len(body) == limit):
        return STRICT, f"cut at {len(got)} code points{mark}"
    if utf16_len(got) == limit or (body != got and utf16_len(body) == limit):
        return UTF16, f"cut counted in UTF-16 code units{mark}: {counts}"
    if graphemes(got) == limit or (body != got and graphemes(body) == limit):
        return GRAPHEMES, f"cut counted in grapheme clusters{mark}: {graphemes(got)} clusters; {counts}"
    return BAD, f"cut at neither {limit} code points nor {limit} UTF-16 units{mark}: {counts}"


@rule("IX-010", view=Interruptions)
def connection_cut_to_its_limits(v: Interruptions, out: Verdict) -> None:
    if not v.extension:
        return
    results: list[tuple[str, str, Any]] = []
    for pause, step in v.pauses_of(CONNECTION):
        if not isinstance(step.arg, dict):
            continue
        detail = (pause.interaction or {}).get(DETAIL)
        detail = detail if isinstance(detail, dict) else {}
        for name, limit in LIMITS.items():
            given = step.arg.get(name)
            if isinstance(given, str) and len(given) > limit:
                verdict, seen = judge_cut(given, detail.get(name), limit)
                results.append((verdict, f"pause {pause.n} {name}: {seen}", pause.evidence(f"{name}: {seen}")))
    if not results:
        return
    text = "; ".join(r[1] for r in results)
    bad = [r for r in results if r[0] == BAD]
    if bad:
        limits = " and ".join(f"the {name} to {limit}" for name, limit in LIMITS.items())
        out.failed(f"{text}; expected {limits} code points, never inside a character", [r[2] for r in bad])
        return
    measured = {"cuts": [r[1] for r in results]}
    weaker = sorted({WEAKER[r[0]] for r in results if r[0] in WEAKER})
    if weaker:
        counted = " and ".join(weaker)
        out.non_strict(f"{text}: characters counted as {counted}, not code points",
                       [r[2] for r in results if r[0] in WEAKER], measured=measured, reading=counted)
        return
    marks = sorted({f"ending in {ELLIPSIS}" if f"ending in {ELLIPSIS}" in r[1] else f"without {ELLIPSIS}"
                    for r in results})
    out.passed(text, measured=measured, reading=f"code points, {' and '.join(marks)}")
