"""Properties of the SSE parser and of the frame log the capture builds (hypothesis).

Any bytes, cut into any chunks, give what the whole gives fed at once: the same events (every field but
the arrival time), the same `discarded`, `oversize`, `invalid_utf8` and `retry`; and the parser never
raises. The bytes are drawn from the pieces that matter to the parser (field names, colons, spaces, CR,
LF, a BOM, multi-byte and invalid UTF-8) as well as at random; the per-event cap is drawn small, so that
dropped blocks are cut by the chunks too. The capture's chunks, spooled to a file as they come, read back
to the bytes that came, and the events parsed again from them are the events parsed live.
"""

from __future__ import annotations

import hashlib

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamcert.wire.capture import WINDOW, Capture
from streamcert.wire.sse import SSEParser

SETTINGS = settings(max_examples=250, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

PIECES = [b"data", b"data:", b"data: ", b"event:", b"id:", b"id: 7", b"retry:", b"retry: 15", b"retry: x",
          b":", b": ping", b" ", b"\r", b"\n", b"\r\n", b"\n\n", b"\r\r", b"\xef\xbb\xbf", b"\xef\xbb",
          b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x8e\x89", b"\xe2\x82", b"\xff", b"\xed\xa0\x80", b"\x00",
          b"x", b"yy", b"{\"n\": 1}", b"zzzzzzzzzzzzzzzz"]

streams = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=60).map(b"".join),
    st.binary(max_size=300),
    st.lists(st.one_of(st.sampled_from(PIECES), st.binary(max_size=8)), max_size=40).map(b"".join),
)
caps = st.one_of(st.none(), st.integers(min_value=1, max_value=40))


def cuts(raw: bytes) -> st.SearchStrategy[list[bytes]]:
    """`raw` cut at any offsets (empty chunks included)."""
    return st.lists(st.integers(min_value=0, max_value=len(raw)), max_size=12).map(
        lambda offsets: [raw[a:b] for a, b in zip([0, *sorted(offsets)], [*sorted(offsets), len(raw)])])


def parse(chunks: list[bytes], cap: int | None) -> tuple[list[tuple], tuple]:
    parser = SSEParser(max_event=cap)
    out = []
    for k, chunk in enumerate(chunks):
        out += parser.feed(chunk, float(k))
    out += parser.finish(float(len(chunks)))
    events = [(e.index, e.kind, e.data, e.event_type, e.last_event_id, e.retry) for e in out]
    return events, (parser.discarded, parser.oversize, parser.invalid_utf8, parser.retry)


@SETTINGS
@given(st.data(), streams, caps)
def test_any_chunking_gives_what_the_whole_gives(data, raw, cap):
    chunks = data.draw(cuts(raw))
    assert b"".join(chunks) == raw
    assert parse(chunks, cap) == parse([raw], cap)


@SETTINGS
@given(streams, caps)
def test_byte_at_a_time_gives_what_the_whole_gives(raw, cap):
    assert parse([raw[i:i + 1] for i in range(len(raw))], cap) == parse([raw], cap)


@SETTINGS
@given(st.binary(max_size=2000), st.lists(st.integers(min_value=1, max_value=300), max_size=30))
def test_the_parser_never_raises_on_any_bytes(raw, sizes):
    parser = SSEParser(max_event=64)
    at = 0
    for size in sizes:
        parser.feed(raw[at:at + size], 0.0)
        at += size
    parser.feed(raw[at:], 0.0)
    parser.finish(1.0)


@SETTINGS
@given(st.data(), streams, caps)
def test_a_capped_event_stream_is_the_same_from_the_spooled_chunks(data, raw, cap):
    # What the live reader parsed as the chunks came equals what the chunks read back from the spool
    # give, and the chunks hold every byte (a spool from the first byte on: the file path is the one taken).
    chunks = data.draw(cuts(raw))
    capture = Capture(limit=None, spool_after=0)
    live = SSEParser(max_event=cap)
    events = []
    for k, chunk in enumerate(chunks):
        if chunk:
            capture.add(float(k), chunk)
            events += live.feed(chunk, float(k))
    events += live.finish(float(len(chunks)))
    assert all(c.spooled for c in capture.chunks)
    assert b"".join(c.data for c in capture.chunks) == raw
    assert sum(c.length for c in capture.chunks) == capture.size == len(raw)
    again = SSEParser(max_event=cap)
    replayed = []
    for c in capture.chunks:
        replayed += again.feed(c.data, c.t)
    replayed += again.finish(float(len(chunks)))
    assert replayed == events
    assert (again.discarded, again.oversize, again.invalid_utf8) == (live.discarded, live.oversize, live.invalid_utf8)


@SETTINGS
@given(st.lists(st.binary(min_size=1, max_size=50), max_size=30), st.integers(min_value=0, max_value=400))
def test_a_capture_keeps_every_byte_below_its_limit_and_counts_the_rest(parts, limit):
    capture = Capture(limit=limit, spool_after=64)
    for k, part in enumerate(parts):
        capture.add(float(k), part)
    raw = b"".join(parts)
    kept = b"".join(c.data for c in capture.chunks)
    assert capture.size == len(raw) and capture.reads == len(parts)
    assert capture.over == (len(raw) > limit)
    assert raw.startswith(kept) and capture.kept == len(kept) <= limit
    if not capture.over:
        assert kept == raw  # below the cap every byte is kept
    else:
        assert len(kept) <= WINDOW  # past it, the head window alone
        record = capture.overflow()
        assert record["bytes"] == len(raw) and record["kept_bytes"] == len(kept)
        assert record["reads"] == len(parts) and record["sha256"] == hashlib.sha256(raw).hexdigest()
        crossed = next(k for k in range(len(parts)) if sum(map(len, parts[:k + 1])) > limit)
        assert kept == b"".join(parts[:crossed])  # the chunks before the cap, all within the head window here
        assert record["tail"] == b"".join(parts[crossed:])[-WINDOW:].decode("utf-8", "replace")
