"""IX-010: request_connection cuts the app and the reason to their limits (interactions/v1 · Connections).

"The app cut at 80 characters, the reason at 280": what is sent is at most the limit, judged as strictly
as progress/v1's labels (rules/plans/plancut.py): the limit plus "…" (81, 281) is over it however characters are
counted, and fails; so does a text over the limit under every counting sent whole. Whether a cut ends in
"…" the seed does not say: a cut of exactly the limit with or without it is accepted and reported.
Characters are Unicode code points (strict); a cut counted in UTF-16 code units or in grapheme clusters
is NON_STRICT (with the counts); a cut that backs off to the start of the grapheme cluster the limit
falls in passes. A cut inside a character (a lone surrogate, U+FFFD) or one that is not a prefix of the
text fails. This module keeps its own judge of a cut: it never calls the reference's truncation.
"""

from __future__ import annotations

from typing import Any

from ...protocols.interactions_v1 import CONNECTION, DETAIL, ELLIPSIS, LIMITS
from .. import Verdict, rule
from ..common.characters import cluster_around, cluster_starts, graphemes, over_every, utf16_len
from .ixview import Interruptions

STRICT, UTF16, GRAPHEMES, BAD = "strict", "utf16", "graphemes", "bad"  # how one cut field is judged
WEAKER = {UTF16: "UTF-16 code units", GRAPHEMES: "grapheme clusters"}


def judge_cut(given: str, got: Any, limit: int) -> tuple[str, str]:
    """(STRICT | UTF16 | GRAPHEMES | BAD, what was seen) for one field whose text may be over the limit."""
    if not isinstance(got, str):
        return BAD, f"{got!r} is not a string"
    counts = (f"{len(got)} code points, {utf16_len(got)} UTF-16 units, {graphemes(got)} grapheme clusters (limit "
              f"{limit}; the text had {len(given)} code points, {graphemes(given)} clusters)")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in got) or ("\ufffd" in got and "\ufffd" not in given):
        return BAD, f"the cut splits a character (lone surrogate or U+FFFD): {counts}"
    if len(given) <= limit:
        return (STRICT, "not cut (within the limit)") if got == given else (BAD, f"{got!r} for {given!r}")
    if got == given:
        if graphemes(given) <= limit:
            return GRAPHEMES, f"kept whole: within {limit} grapheme clusters ({counts})"
        return BAD, f"not cut: kept whole, over {limit} characters however they are counted ({counts})"
    body = got[:-1] if got.endswith(ELLIPSIS) else got
    if not given.startswith(body):
        return BAD, f"not a cut of the text: {counts}"
    mark = f" ending in {ELLIPSIS}" if body != got else f" without {ELLIPSIS}"
    if over_every(got, limit):
        return BAD, f"longer than {limit} characters after the cut however they are counted{mark}: {counts}"
    return _counted(given, body, got, limit, mark, counts)


def _counted(given: str, body: str, got: str, limit: int, mark: str, counts: str) -> tuple[str, str]:
    """How the length of a cut within the limit was counted; BAD when no counting gives it."""
    kept = limit - (len(got) - len(body))  # the code points a strict cut keeps before any "…"
    start, end = cluster_around(given, kept - 1)
    if len(got) == limit:
        return STRICT, f"cut at {len(got)} code points{mark}"
    if len(body) == start and end > kept:
        return STRICT, f"cut backed off to the start of the grapheme cluster the limit falls in{mark}: {counts}"
    if utf16_len(got) == limit or (utf16_len(got) == limit - 1 and ord(given[len(body)]) > 0xFFFF):
        return UTF16, f"cut counted in UTF-16 code units{mark}: {counts}"
    if graphemes(got) == limit and len(body) in cluster_starts(given) and graphemes(given) > limit:
        return GRAPHEMES, f"cut counted in grapheme clusters{mark}: {counts}"
    if len(got) > limit:
        return BAD, (f"longer than {limit} code points after the cut{mark}, and no cut to {limit} UTF-16 units or "
                     f"grapheme clusters either: {counts}")
    return BAD, f"cut shorter than a cut to {limit} characters gives however they are counted{mark}: {counts}"


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
        out.failed(f"{text}; expected {limits} code points at most, any {ELLIPSIS} included, never inside a "
                   "character", [r[2] for r in bad])
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
