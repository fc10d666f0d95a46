"""The suite's grapheme-cluster count (rules/common/characters.py), on the cases UAX #29 names."""

from __future__ import annotations

import pytest

from streamcert.rules.common.characters import cluster_around, graphemes, over_every, utf16_len


@pytest.mark.parametrize("text,clusters", [
    ("abc", 3),
    ("e\u0301e\u0301", 2),  # base + combining mark (GB9)
    ("\U0001F468\u200d\U0001F469\u200d\U0001F467", 1),  # an emoji ZWJ sequence (GB11)
    ("a\u200db", 2),  # a ZWJ between letters joins nothing after it
    ("\U0001F1EB\U0001F1F7\U0001F1E9\U0001F1EA", 2),  # two flags: regional indicators in pairs (GB12, GB13)
    ("\U0001F44D\U0001F3FD", 1),  # an emoji and its skin-tone modifier
    ("\u2764\ufe0f\u200d\U0001F525", 1),  # a selector inside a ZWJ sequence
    ("\u1100\u1161\u11a8", 1),  # Hangul L V T (GB6–GB8)
    ("\u0915\u094d\u0937\u0924\u094d\u0930\u093f\u092f", 3),  # Devanagari conjuncts (GB9c)
    ("\u0ba8\u0bbf", 1),  # Tamil consonant + vowel sign (GB9a)
    ("a\r\nb", 3),  # CR LF is one (GB3)
    ("\u0600a", 1),  # a prepended mark joins what follows (GB9b)
])
def test_graphemes(text, clusters):
    assert graphemes(text) == clusters


def test_counts_and_clusters():
    assert utf16_len("a\U0001F600") == 3
    assert cluster_around("ab\u0065\u0301c", 3) == (2, 4)
    assert over_every("a" * 121, 120) and not over_every("e\u0301" * 120, 120)
