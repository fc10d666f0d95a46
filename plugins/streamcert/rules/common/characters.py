"""Counting "characters" the ways a defensible reading of a limit counts them: code points (strict),
UTF-16 code units (what JavaScript's `length` gives), and grapheme clusters (what a person sees as one
character).

Python has no grapheme segmentation of its own, so `cluster_starts` is the suite's, after the rules
of UAX #29 (Unicode 15.1) that matter for short text: a base with its marks and spacing marks,
variation selectors, emoji modifiers and tags (GB9, GB9a); emoji ZWJ sequences (GB11); pairs of
regional indicators (GB12, GB13); Hangul syllables from jamo (GB6–GB8); Indic conjuncts of the
scripts whose virama links consonants (GB9c); prepended marks (GB9b); CR LF (GB3). The
Extended_Pictographic and Indic_Conjunct_Break properties are approximated by code point ranges.
"""

from __future__ import annotations

import unicodedata

ZWJ = "\u200d"


def utf16_len(text: str) -> int:
    return sum(2 if ord(c) > 0xFFFF else 1 for c in text)


def _extends(c: str) -> bool:
    """Joins the character before it (marks, ZWJ, selectors, emoji modifiers and tags)."""
    o = ord(c)
    return (unicodedata.category(c) in ("Mn", "Me", "Mc") or c == ZWJ or 0xFE00 <= o <= 0xFE0F
            or 0xE0100 <= o <= 0xE01EF or 0x1F3FB <= o <= 0x1F3FF or 0xE0020 <= o <= 0xE007F)


def _prepend(c: str) -> bool:
    o = ord(c)
    return 0x0600 <= o <= 0x0605 or o in (0x06DD, 0x070F, 0x0890, 0x0891, 0x08E2, 0x110BD, 0x110CD)


def _regional(c: str) -> bool:
    return 0x1F1E6 <= ord(c) <= 0x1F1FF


def _hangul(c: str) -> str:
    o = ord(c)
    if 0x1100 <= o <= 0x115F or 0xA960 <= o <= 0xA97F:
        return "L"
    if 0x1160 <= o <= 0x11A7 or 0xD7B0 <= o <= 0xD7C6:
        return "V"
    if 0x11A8 <= o <= 0x11FF or 0xD7CB <= o <= 0xD7FB:
        return "T"
    if 0xAC00 <= o <= 0xD7A3:
        return "LV" if (o - 0xAC00) % 28 == 0 else "LVT"
    return ""


_PICTOGRAPHIC = ((0x00A9, 0x00A9), (0x00AE, 0x00AE), (0x203C, 0x203C), (0x2049, 0x2049), (0x2122, 0x2122),
                 (0x2139, 0x2139), (0x2194, 0x21AA), (0x231A, 0x23FF), (0x24C2, 0x24C2), (0x25AA, 0x27BF),
                 (0x2934, 0x2935), (0x2B05, 0x2B55), (0x3030, 0x3030), (0x303D, 0x303D), (0x3297, 0x3299),
                 (0x1F000, 0x1FAFF))
_LINKERS = {0x094D, 0x09CD, 0x0ACD, 0x0B4D, 0x0C4D, 0x0D4D}  # the viramas that link consonants (GB9c)
_CONJUNCT_SCRIPTS = ((0x0900, 0x097F), (0x0980, 0x09FF), (0x0A80, 0x0AFF), (0x0B00, 0x0B7F), (0x0C00, 0x0C7F),
                     (0x0D00, 0x0D7F))


def _pictographic(c: str) -> bool:
    return any(lo <= ord(c) <= hi for lo, hi in _PICTOGRAPHIC)


def _conjunct_consonant(c: str) -> bool:
    return unicodedata.category(c) == "Lo" and any(lo <= ord(c) <= hi for lo, hi in _CONJUNCT_SCRIPTS)


def _joins(text: str, i: int, regional_run: int) -> bool:
    """Whether text[i] continues the cluster before it (`regional_run`: regional indicators just before)."""
    prev, c = text[i - 1], text[i]
    if prev == "\r" and c == "\n":
        return True
    if prev in "\r\n" or c in "\r\n":
        return False
    if _extends(c) or _prepend(prev):
        return True
    if prev == ZWJ and _pictographic(c):  # GB11: an emoji, its extenders, ZWJ, an emoji
        k = i - 2
        while k >= 0 and _extends(text[k]) and text[k] != ZWJ:
            k -= 1
        return k >= 0 and _pictographic(text[k])
    if _conjunct_consonant(c):  # GB9c: consonant [extend]* linker [extend]* × consonant
        k, linked = i - 1, False
        while k >= 0 and _extends(text[k]):
            linked = linked or ord(text[k]) in _LINKERS
            k -= 1
        return linked and k >= 0 and _conjunct_consonant(text[k])
    if _regional(prev) and _regional(c):
        return regional_run % 2 == 1
    a, b = _hangul(prev), _hangul(c)
    return bool(a and b) and (
        (a == "L" and b in ("L", "V", "LV", "LVT")) or (a in ("LV", "V") and b in ("V", "T"))
        or (a in ("LVT", "T") and b == "T"))


def cluster_starts(text: str) -> list[int]:
    """The code-point index where each grapheme cluster of `text` starts (see the module's note)."""
    starts, run = [], 0
    for i, c in enumerate(text):
        if i == 0 or not _joins(text, i, run):
            starts.append(i)
        run = run + 1 if _regional(c) else 0
    return starts


def graphemes(text: str) -> int:
    """The number of grapheme clusters."""
    return len(cluster_starts(text))


def cluster_around(text: str, i: int) -> tuple[int, int]:
    """(start, end) in code points of the cluster that holds index `i` of `text`."""
    starts = cluster_starts(text) + [len(text)]
    for k in range(len(starts) - 1):
        if starts[k] <= i < starts[k + 1]:
            return starts[k], starts[k + 1]
    return len(text), len(text)


def over_every(text: str, limit: int) -> bool:
    """Longer than `limit` however its characters are counted."""
    return len(text) > limit and utf16_len(text) > limit and graphemes(text) > limit
