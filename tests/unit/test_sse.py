"""Unit tests for the suite's own event-stream parser (wire/sse.py), one WHATWG rule per test.

HTML §9.2.5 (parsing) and §9.2.6 (interpreting); plus the parser's own additions: comments kept as
timed events, the unterminated last block kept in `discarded`, `invalid_utf8` flagged.
"""

from __future__ import annotations

import itertools
import json
import random

import pytest

from streamcert.wire.sse import SSEParser

BOM = "\ufeff"


def parse(chunks: list[bytes], times: list[float] | None = None) -> tuple[list, SSEParser]:
    """Feed the chunks (chunk k at times[k], default k) and finish; return (all events, parser)."""
    parser = SSEParser()
    out = []
    for k, chunk in enumerate(chunks):
        out += parser.feed(chunk, times[k] if times else float(k))
    out += parser.finish(float(len(chunks)))
    return out, parser


def events(data: bytes | str) -> list:
    """The dispatched data events (no comments) of a stream fed in one chunk."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    out, _ = parse([raw])
    return [e for e in out if e.kind == "event"]


def datas(data: bytes | str) -> list[str]:
    return [e.data for e in events(data)]


def split_at(raw: bytes, *offsets: int) -> list[bytes]:
    cuts = [0, *offsets, len(raw)]
    return [raw[a:b] for a, b in itertools.pairwise(cuts)]


def bytewise(raw: bytes) -> list[bytes]:
    return [raw[i:i + 1] for i in range(len(raw))]


def fields(evs: list) -> list[tuple]:
    """Everything about the events except their arrival times."""
    return [(e.index, e.kind, e.data, e.event_type, e.last_event_id, e.retry) for e in evs]


# -- BOM ------------------------------------------------------------------------------------------
def test_bom_at_start_is_skipped():
    assert datas(BOM + "data: a\n\n") == ["a"]


def test_bom_split_across_chunks_is_skipped():
    raw = (BOM + "data: a\n\n").encode()
    for k in (1, 2, 3):
        out, _ = parse(split_at(raw, k))
        assert [e.data for e in out] == ["a"], k


def test_only_one_bom_is_skipped():
    # The second BOM stays, so the first line's field name is "\ufeffdata": unknown, ignored.
    assert datas(BOM + BOM + "data: a\n\ndata: b\n\n") == ["b"]


def test_bom_later_in_the_stream_is_data():
    # Not at the start of the stream: it is an ordinary character (here part of a field name / value).
    assert datas("data: a\n\n" + BOM + "data: b\n\ndata: " + BOM + "c\n\n") == ["a", BOM + "c"]


def test_bom_after_a_first_chunk_is_not_skipped():
    out, _ = parse([b"data: a\n\n", (BOM + "data: b\n\n").encode()])
    assert [e.data for e in out] == ["a"]


# -- line ends ------------------------------------------------------------------------------------
@pytest.mark.parametrize("eol", ["\r", "\n", "\r\n"], ids=["CR", "LF", "CRLF"])
def test_line_ends(eol):
    text = f"data: a{eol}data: b{eol}{eol}data: c{eol}{eol}"
    assert datas(text) == ["a\nb", "c"]


def test_mixed_line_ends():
    assert datas("data: a\rdata: b\ndata: c\r\n\r\n") == ["a\nb\nc"]


def test_crlf_split_across_chunks_is_one_line_end():
    # CR ends chunk 1, LF starts chunk 2: one line end. Counted as two, "a" would be dispatched alone.
    out, _ = parse([b"data: a\r", b"\ndata: b\r\n\r\n"])
    assert [e.data for e in out] == ["a\nb"]


def test_crlf_split_by_an_empty_chunk_is_one_line_end():
    # Regression: an empty chunk between the CR and the LF used to forget the pending CR.
    out, _ = parse([b"data: a\r", b"", b"\ndata: b\r\n\r\n"])
    assert [e.data for e in out] == ["a\nb"]


def test_crlf_split_at_every_offset():
    raw = b"data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n"
    for k in range(1, len(raw)):
        out, _ = parse(split_at(raw, k))
        assert [e.data for e in out] == ["a\nb", "c"], k


def test_lone_cr_followed_by_cr_is_a_blank_line():
    assert datas("data: a\r\rdata: b\r\r") == ["a", "b"]


def test_lone_cr_followed_by_cr_in_the_next_chunk():
    out, _ = parse([b"data: a\r", b"\rdata: b\r", b"\r"])
    assert [e.data for e in out] == ["a", "b"]


def test_other_unicode_line_breaks_are_not_line_ends():
    text = "data: a\u2028b\x85c\x0bd\x0ce\u2029f\x1cg\n\n"
    assert datas(text) == ["a\u2028b\x85c\x0bd\x0ce\u2029f\x1cg"]


# -- UTF-8 ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("ch", ["é", "€", "🎉"], ids=["2-byte", "3-byte", "4-byte"])
def test_multibyte_character_split_at_every_offset(ch):
    raw = f"data: {ch}x{ch}\n\n".encode()
    for k in range(1, len(raw)):
        out, parser = parse(split_at(raw, k))
        assert [e.data for e in out] == [f"{ch}x{ch}"], k
        assert not parser.invalid_utf8
    out, parser = parse(bytewise(raw))
    assert [e.data for e in out] == [f"{ch}x{ch}"]
    assert not parser.invalid_utf8


def test_valid_utf8_does_not_set_invalid_utf8():
    _, parser = parse(["data: é€🎉\n\n".encode()])
    assert parser.invalid_utf8 is False


@pytest.mark.parametrize("raw", [b"data: a\xffb\n\n", b"data: a\xc3b\n\n", b"data: a\xed\xa0\x80b\n\n"],
                         ids=["ff", "truncated-then-ascii", "surrogate"])
def test_invalid_utf8_becomes_replacement_character(raw):
    out, parser = parse([raw])
    assert len(out) == 1
    data = out[0].data
    assert data[0] == "a" and data[-1] == "b" and set(data[1:-1]) == {"\ufffd"}
    assert parser.invalid_utf8 is True


def test_invalid_utf8_split_across_chunks():
    out, parser = parse([b"data: a\xe2\x82", b"b\n\n"])
    assert [e.data for e in out] == ["a\ufffdb"]
    assert parser.invalid_utf8 is True


def test_truncated_utf8_at_end_of_stream_sets_invalid_utf8():
    out, parser = parse([b"data: a\n\n\xe2\x82"])
    assert [e.data for e in out] == ["a"]
    assert parser.invalid_utf8 is True


# -- data -----------------------------------------------------------------------------------------
def test_multiline_data_is_joined_with_lf():
    assert datas("data: a\ndata: b\ndata: c\n\n") == ["a\nb\nc"]


def test_empty_data_lines_count():
    assert datas("data: a\ndata:\ndata\ndata: b\n\n") == ["a\n\n\nb"]


def test_data_without_colon_has_an_empty_value():
    # The buffer is "\n", not empty, so the block dispatches an event whose data is "".
    assert datas("data\n\n") == [""]
    assert datas("data\ndata\n\n") == ["\n"]


@pytest.mark.parametrize("line, value", [
    ("data:x", "x"),
    ("data: x", "x"),
    ("data:  x", " x"),
    ("data:\tx", "\tx"),
    ("data: x ", "x "),
    ("data: a: b", "a: b"),
    ("data::x", ":x"),
])
def test_only_one_leading_space_is_removed(line, value):
    assert datas(line + "\n\n") == [value]


def test_field_names_are_case_sensitive_and_exact():
    assert datas("Data: a\nDATA: b\ndata : c\n data: d\ndata: e\n\n") == ["e"]


# -- comments -------------------------------------------------------------------------------------
def test_comment_is_kept_as_an_event_with_the_completing_chunk_time():
    out, _ = parse([b": pi", b"ng\n", b"data: x\n\n"], times=[1.0, 2.0, 3.0])
    assert [(e.kind, e.data, e.t) for e in out] == [("comment", "ping", 2.0), ("event", "x", 3.0)]


def test_comment_text_loses_one_leading_space_and_colon_only():
    out, _ = parse([b":no space\n:  two\n:\n\n"])
    assert [(e.kind, e.data) for e in out] == [("comment", "no space"), ("comment", " two"), ("comment", "")]


def test_comments_do_not_touch_the_block():
    out, _ = parse([b"data: a\n: c\ndata: b\n\n"])
    assert [(e.kind, e.data) for e in out] == [("comment", "c"), ("event", "a\nb")]


def test_indexes_count_comments_and_events():
    out, _ = parse([b": c\ndata: a\n\n: d\ndata: b\n\n"])
    assert [e.index for e in out] == [0, 1, 2, 3]


# -- event type -----------------------------------------------------------------------------------
def test_event_type():
    evs = events("event: status\ndata: a\n\ndata: b\n\n")
    assert [(e.event_type, e.data) for e in evs] == [("status", "a"), ("message", "b")]


def test_empty_event_type_is_message():
    assert [e.event_type for e in events("event:\ndata: a\n\n")] == ["message"]


def test_last_event_line_wins():
    assert [e.event_type for e in events("event: a\nevent: b\ndata: x\n\n")] == ["b"]


# -- id -------------------------------------------------------------------------------------------
def test_id_persists_to_later_events():
    evs = events("id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n")
    assert [(e.data, e.last_event_id) for e in evs] == [("a", "1"), ("b", "1"), ("c", "2")]


def test_id_containing_nul_is_ignored():
    evs = events("id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n")
    assert [(e.data, e.last_event_id) for e in evs] == [("a", "1"), ("b", "1")]


def test_empty_id_resets():
    evs = events("id: 1\ndata: a\n\nid\ndata: b\n\nid: 2\ndata: c\n\nid:\ndata: d\n\n")
    assert [(e.data, e.last_event_id) for e in evs] == [("a", "1"), ("b", ""), ("c", "2"), ("d", "")]


def test_id_in_a_block_without_data_still_sets_the_last_event_id():
    evs = events("id: 7\n\ndata: a\n\n")
    assert [(e.data, e.last_event_id) for e in evs] == [("a", "7")]


def test_id_of_an_unterminated_block_is_not_committed():
    out, parser = parse([b"id: 1\ndata: a\n\nid: 2\n"])
    assert [e.last_event_id for e in out] == ["1"]
    assert parser.discarded == "id: 2"


# -- retry ----------------------------------------------------------------------------------------
def test_retry_digits_set_the_reconnection_time():
    _, parser = parse([b"retry: 3000\ndata: a\n\n"])
    assert parser.retry == 3000
    assert [e.retry for e in events("retry: 3000\ndata: a\n\n")] == [3000]


@pytest.mark.parametrize("value", ["1x", "-1", "+5", "1.5", "", " 5", "5 ", "1_000", "\uff13", "\u0663"],
                         ids=["1x", "minus", "plus", "decimal", "empty", "two-spaces", "trailing-space",
                              "underscore", "fullwidth-digit", "arabic-indic-digit"])
def test_retry_that_is_not_only_ascii_digits_is_ignored(value):
    text = f"retry: 3000\ndata: a\n\nretry:{' ' + value if value else ''}\ndata: b\n\n"
    evs = events(text)
    assert [e.retry for e in evs] == [3000, 3000]
    _, parser = parse([f"retry:{' ' + value if value else ''}\ndata: a\n\n".encode()])
    assert parser.retry is None


def test_retry_persists_and_can_change():
    evs = events("data: a\n\nretry: 10\ndata: b\n\ndata: c\n\nretry: 20\n\ndata: d\n\n")
    assert [(e.data, e.retry) for e in evs] == [("a", None), ("b", 10), ("c", 10), ("d", 20)]


# -- unknown fields, blocks without data ----------------------------------------------------------
def test_unknown_fields_are_ignored():
    assert datas("foo: bar\ndata: a\nbaz\nx-data: y\n\n") == ["a"]
    assert datas("foo: bar\n\n") == []


def test_block_without_data_dispatches_nothing():
    assert events("event: status\n\n") == []
    assert events("event: status\nid: 1\nretry: 5\n\n") == []


def test_event_type_of_a_block_without_data_does_not_leak():
    evs = events("event: status\n\ndata: a\n\n")
    assert [(e.event_type, e.data) for e in evs] == [("message", "a")]


def test_blank_lines_alone_dispatch_nothing():
    assert events("\n\n\r\n\r\r") == []


# -- end of stream --------------------------------------------------------------------------------
@pytest.mark.parametrize("tail, kept", [
    (b"data: b\n", "data: b"),
    (b"data: b", "data: b"),
    (b"data: b\r", "data: b"),
    (b"event: x\ndata: b\ndata: c", "event: x\ndata: b\ndata: c"),
    (b": note\ndata: b\n", ": note\ndata: b"),
], ids=["line-ended", "no-line-end", "cr", "several-lines", "comment-then-data"])
def test_unterminated_last_block_is_discarded_and_kept(tail, kept):
    out, parser = parse([b"data: a\n\n" + tail])
    assert [e.data for e in out if e.kind == "event"] == ["a"]
    assert parser.discarded == kept


@pytest.mark.parametrize("tail", [b"data: b\r\n", b"data: b\n", b"data: b\r", b"data: b"],
                         ids=["crlf", "lf", "cr", "no-line-end"])
def test_an_event_the_stream_ends_inside_is_never_dispatched_however_it_arrives(tail):
    # WHATWG HTML §9.2.6: at the end of the stream the pending data is discarded (client-unterminated's stream);
    # the last event arriving in a chunk of its own, or cut byte by byte, changes nothing, and finish returns none
    raw = b"data: a\r\n\r\n" + tail
    for chunks in ([b"data: a\r\n\r\n", tail], bytewise(raw)):
        parser = SSEParser()
        out = [e for k, c in enumerate(chunks) for e in parser.feed(c, float(k))]
        assert [e.data for e in out] == ["a"] and parser.finish(9.0) == []
        assert parser.discarded == "data: b"


@pytest.mark.parametrize("tail", [b": ping\n", b": ping", b": ping\r\n: pong\r\n", b""],
                         ids=["comment", "unterminated-comment", "two-comments", "nothing"])
def test_lone_trailing_comment_is_not_discarded(tail):
    _, parser = parse([b"data: a\n\n" + tail])
    assert parser.discarded is None


def test_terminated_stream_discards_nothing():
    _, parser = parse([b"data: a\r\n\r\n"])
    assert parser.discarded is None


# -- timing ---------------------------------------------------------------------------------------
def test_event_time_is_the_time_of_the_completing_chunk():
    chunks = [b"data: a", b"\n", b"\ndata: b\n\ndata: c\n", b"\r", b"\n: k\n"]
    out, _ = parse(chunks, times=[1.0, 2.0, 3.0, 4.0, 5.0])
    assert [(e.kind, e.data, e.t) for e in out] == [
        ("event", "a", 3.0),  # its blank line arrived in chunk 3
        ("event", "b", 3.0),
        ("event", "c", 4.0),  # the CR completes the blank line; the LF after it changes nothing
        ("comment", "k", 5.0),
    ]


# -- byte-at-a-time equals one-shot ---------------------------------------------------------------
def a2a_stream() -> bytes:
    """A stream like the a2a-sdk's (sse-starlette): CRLF line ends, `: ping` comments, JSON data."""
    task = "b4c1e6f0-3a2d-4f7e-9c11-0d8f2e5a7b90"
    parts = []
    states = ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]
    for i, state in enumerate(states):
        result = {"statusUpdate": {"taskId": task, "contextId": "ctx-1",
                                   "status": {"state": state,
                                              "message": {"parts": [{"text": f"step {i}: café € 🎉"}]}}}}
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}, ensure_ascii=False)
        parts.append(f"data: {body}\r\n\r\n")
        if i % 2 == 0:
            parts.append(f": ping - 2025-06-0{i + 1} 12:00:00.000000+00:00\r\n\r\n")
    parts.append("event: artifact\r\nid: 42\r\ndata: {\"line\": 1}\r\ndata: {\"line\": 2}\r\n\r\n")
    parts.append("retry: 1500\r\ndata: {}\r\n\r\n")
    return "".join(parts).encode("utf-8")


def test_byte_at_a_time_equals_one_shot():
    raw = a2a_stream()
    whole, p1 = parse([raw])
    tiny, p2 = parse(bytewise(raw))
    assert len([e for e in whole if e.kind == "event"]) == 6
    assert len([e for e in whole if e.kind == "comment"]) == 2
    assert fields(tiny) == fields(whole)
    assert (p1.discarded, p1.invalid_utf8, p1.retry) == (p2.discarded, p2.invalid_utf8, p2.retry)
    assert whole[0].json()[1] is None and whole[0].payload["result"]["statusUpdate"]["status"]["state"] \
        == "TASK_STATE_SUBMITTED"


@pytest.mark.parametrize("seed", range(5))
def test_random_chunking_equals_one_shot(seed):
    raw = a2a_stream()
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(raw)), 40))
    whole, _ = parse([raw])
    pieces, _ = parse(split_at(raw, *cuts))
    assert fields(pieces) == fields(whole)


# -- edges of the chunk-wise implementation -------------------------------------------------------
def test_pending_cr_then_a_chunk_holding_only_part_of_a_character():
    # The chunk after the CR decodes to nothing yet; the CR still ends "data: a", and the "é" that
    # completes in the next chunk starts a new line (an unknown field), not the LF of a CRLF.
    out, parser = parse([b"data: a\r", b"\xc3", b"\xa9\n\ndata: b\r", b"\n\r\n"])
    assert [(e.data, e.t) for e in out] == [("a", 2.0), ("b", 3.0)]
    assert not parser.invalid_utf8


def test_long_line_in_7_byte_chunks_equals_one_shot():
    line = ("é€🎉 " * 100_000)[:(1 << 20) // 3]  # about 1 MiB of UTF-8, with sequences cut by the chunks
    raw = (f": {line}\r\nid: {line}\r\ndata:{line}\r\ndata: x\r\n\r\nx-{line}: y\r\ndata: {line}\r\n\r\n"
           f"retry: 12\rdata: z\r\r").encode()
    whole, p1 = parse([raw])
    small, p2 = parse([raw[i:i + 7] for i in range(0, len(raw), 7)])
    assert fields(small) == fields(whole)
    assert [(e.kind, e.data) for e in whole] == [("comment", line), ("event", f"{line}\nx"), ("event", line),
                                                 ("event", "z")]
    assert [e.last_event_id for e in whole] == ["", line, line, line]
    assert (p1.discarded, p1.invalid_utf8, p1.retry) == (p2.discarded, p2.invalid_utf8, p2.retry) == (None, False, 12)


def test_long_lines_split_their_field_as_short_ones_do():
    long = "v" * (1 << 17)
    raw = (f"data:{long}\ndata:  {long}\ndata{long}: a\n:{long}\nid: 1\x00{long}\nevent: {long}\n\n").encode()
    out, _ = parse([raw])
    assert [(e.kind, e.data, e.event_type, e.last_event_id) for e in out] == [
        ("comment", long, "message", ""), ("event", f"{long}\n {long}", long, "")]


def test_invalid_utf8_in_an_unfinished_line_is_flagged_at_once():
    # A stream cut before the line ends (no finish) must still report the bytes it saw.
    parser = SSEParser()
    assert parser.feed(b"data: a\xffb", 0.0) == []
    assert parser.invalid_utf8 is True


def test_a_sequence_cut_by_a_chunk_is_not_invalid():
    parser = SSEParser()
    assert parser.feed(b"data: a\xe2\x82", 0.0) == []
    assert parser.invalid_utf8 is False
    assert [e.data for e in parser.feed(b"\xac\n\n", 1.0)] == ["a€"]
    assert parser.invalid_utf8 is False


def test_invalid_utf8_in_a_long_line_and_in_its_field_name():
    out, parser = parse([b"da\xfft: x\n", b"data: " + b"y" * 70_000 + b"\xed\xa0\x80\n\n"])
    assert [e.data for e in out] == ["y" * 70_000 + "\ufffd" * 3]
    assert parser.invalid_utf8 is True


@pytest.mark.parametrize("chunks, discarded, invalid", [
    ([BOM.encode()], None, False),
    ([b"\xef", b"\xbb", b"\xbf"], None, False),
    ([b"\xef", b"\xbb"], "\ufffd", True),
    ([b"\xef\xbb", b"x\n"], "\ufffdx", True),
], ids=["bom-only", "bom-bytewise", "bom-prefix-at-end", "bom-prefix-then-text"])
def test_stream_that_is_only_a_bom_or_part_of_one(chunks, discarded, invalid):
    out, parser = parse(chunks)
    assert out == []
    assert (parser.discarded, parser.invalid_utf8) == (discarded, invalid)
