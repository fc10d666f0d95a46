"""The regression diff of two captures of one scenario (`streamcert diff`, `streamcert run --against`).

Read in this order, each difference once:
1. exchanges only in one capture, and an answer whose status, media type or ending changed;
2. for each stream, the kinds of its frames side by side, aligned (difflib on what the frames hold, then on
   their kinds where they differ; past ALIGN_LIMIT frames, anchors on the frames found once on each side
   instead, so that a long stream costs about n log n, not n²), so a dropped or added frame is one row, a
   frame that moved is one row (`>`), two frames that changed places are said to be swapped (`s`), not a cascade;
3. the fields of each aligned pair of frames (of each unary body) that differ (deepdiff), with volatile
   values compared by shape and by where in their capture they first appeared: a `taskId` that is the
   Task's id in one capture and a new value in the other is a difference, a fresh id in each is not;
4. timing beyond the tolerance: when the headers came, each frame's gap after the frame before it (so a
   delay shows on the one frame it came before), and how long a stream stayed open after its last frame.

What the JSON and SSE texts allow to differ is no difference: comments (keep-alives, which a slower day
sends more of; SSE dispatches no event for them), the order of an object's members (RFC 8259 §4: objects are
unordered; ids are anchored by where they first appear in sorted key order, and a JSON object quoted in a
text compares by value too), and how a number is written (`11` and `11.0` are one number: a part's data is a
google.protobuf.Value, whose numbers are doubles).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from deepdiff import DeepDiff

from ..framelog import Event, Exchange, FrameLog
from .capture_shape import Capture, Location, framed, kind_of, payload_of, shaped

DEFAULT_TOLERANCE_S = 1.0  # timing differences up to this are scheduling noise, not a regression

# Numbers a progress stream measures as it goes (progress 3.4.0: tokens done, a rate): they follow the
# machine's timing, so they are compared within MEASURED_TOLERANCE of each other (relative).
MEASURED_KEYS = {"done", "rate"}
MEASURED_TOLERANCE = 0.25
ALIGN_LIMIT = 4000  # frames past which difflib (quadratic) gives way to anchors on frames found once in each
ANCHOR_DEPTH = 32  # nested gaps between anchors aligned again before the rest is paired by position
CONTEXT = 2  # rows of alike frames shown around a change in the side-by-side view
MAX_FIELD_LINES = 200  # per exchange; the rest is counted


# -- the diff -------------------------------------------------------------------------------------------

@dataclass
class ExchangeDiff:
    key: str
    only_in: str | None = None  # "old" | "new"
    answer: list[dict[str, Any]] = field(default_factory=list)  # {what, old, new}
    # (mark, old n, new n) 1-based; marks: " " alike kinds, "~" another kind, "-" only old, "+" only new,
    # ">" the same frame elsewhere (moved), "s" one of two frames that changed places (swapped)
    rows: list[tuple[str, int | None, int | None]] = field(default_factory=list)
    kinds: tuple[list[str], list[str]] = field(default_factory=lambda: ([], []))
    fields: list[dict[str, Any]] = field(default_factory=list)
    fields_omitted: int = 0
    timing: list[dict[str, Any]] = field(default_factory=list)

    @property
    def frames_differ(self) -> bool:
        return any(mark != " " for mark, _, _ in self.rows)

    @property
    def count(self) -> int:
        """Each difference once: a swap of two frames is one."""
        rows = sum(m not in " s" for m, _, _ in self.rows) + sum(m == "s" for m, _, _ in self.rows) // 2
        return (1 if self.only_in else 0) + len(self.answer) + rows + len(self.fields) + self.fields_omitted + \
            len(self.timing)


@dataclass
class CaptureDiff:
    scenario: str
    tolerance_s: float
    exchanges: list[ExchangeDiff]

    @property
    def count(self) -> int:
        return sum(ex.count for ex in self.exchanges)

    def lines(self) -> list[str]:
        """The diff as a person reads it (empty: no difference)."""
        out: list[str] = []
        for ex in self.exchanges:
            if ex.only_in:
                out.append(f"{ex.key}: only in the {ex.only_in} capture")
                continue
            out += [f"{ex.key}: {a['what']} {a['old']} → {a['new']}" for a in ex.answer]
            if ex.frames_differ:
                out += _side_by_side(ex)
            for f in ex.fields:
                out.append(f"{ex.key}: {f['where']} · {f['path']}: {f['text']}")
            if ex.fields_omitted:
                out.append(f"{ex.key}: … and {ex.fields_omitted} more field differences (--json lists them all)")
            for t in ex.timing:
                out.append(f"{ex.key}: {t['where']} · {t['text']}")
        return out

    def to_json(self) -> dict[str, Any]:
        exchanges = []
        for ex in self.exchanges:
            if not ex.count:
                continue
            item: dict[str, Any] = {"exchange": ex.key}
            if ex.only_in:
                item["only_in"] = ex.only_in
            if ex.answer:
                item["answer"] = ex.answer
            if ex.frames_differ:
                item["frames"] = {"old": ex.kinds[0], "new": ex.kinds[1],
                                  "rows": [{"mark": m, "old": a, "new": b} for m, a, b in ex.rows]}
            if ex.fields:
                item["fields"] = ex.fields
            if ex.fields_omitted:
                item["fields_omitted"] = ex.fields_omitted
            if ex.timing:
                item["timing"] = ex.timing
            exchanges.append(item)
        return {"scenario": self.scenario, "timing_tolerance_s": self.tolerance_s, "differences": self.count,
                "exchanges": exchanges}


def diff_logs(old: FrameLog, new: FrameLog, tolerance_s: float | None = DEFAULT_TOLERANCE_S) -> CaptureDiff:
    """The differences of `new` from `old` (two captures of one scenario); `tolerance_s` None: no timing."""
    if old.scenario != new.scenario:
        raise ValueError(f"the captures are of different scenarios ({old.scenario} and {new.scenario})")
    a, b = Capture(old), Capture(new)
    keys = list(a.exchanges) + [k for k in b.exchanges if k not in a.exchanges]
    # Frame numbers of the new capture in the old one's numbering, per stream (filled as streams are aligned).
    maps: dict[str, dict[int, int]] = {}
    diffs = []
    aligned: dict[str, list[tuple[str, int | None, int | None]]] = {}
    for key in keys:
        if key in a.exchanges and key in b.exchanges:
            rows = _align(a.contents(key), b.contents(key), a.kinds(key), b.kinds(key))
            aligned[key] = rows
            maps[key] = {j: i for _, i, j in rows if i is not None and j is not None}

    def in_old(first: Location) -> str:
        key, part, path = first
        if part.startswith("frame "):
            j = int(part.split()[1]) - 1
            i = maps.get(key, {}).get(j)
            part = f"frame {i + 1}" if i is not None else f"new frame {j + 1}"
        return f"{key} {part} {path}"

    def as_is(first: Location) -> str:
        return " ".join(first)

    for key in keys:
        if key not in b.exchanges or key not in a.exchanges:
            diffs.append(ExchangeDiff(key, only_in="old" if key in a.exchanges else "new"))
            continue
        diffs.append(_exchange(key, a, b, aligned[key], as_is, in_old, tolerance_s))
    return CaptureDiff(old.scenario, tolerance_s if tolerance_s is not None else -1.0, diffs)


Row = tuple[str, int | None, int | None]


def _align(old: list[bytes], new: list[bytes], old_kinds: list[str], new_kinds: list[str]) -> list[Row]:
    """Rows (mark, old index, new index), 0-based (marks: ExchangeDiff.rows). Frames are aligned on what they
    hold; where that differs, on their kinds (a frame whose fields changed stays paired with its old self); a
    frame dropped in one place and added in another with the same content is one that moved."""
    rows: list[Row] = []
    for op, i1, i2, j1, j2 in _opcodes(old, new):
        if op == "equal":
            rows += [(" ", i1 + k, j1 + k) for k in range(i2 - i1)]
        else:
            rows += [(m, None if i is None else i1 + i, None if j is None else j1 + j)
                     for m, i, j in _align_kinds(old_kinds[i1:i2], new_kinds[j1:j2])]
    return _moves(rows, old, new)


Opcode = tuple[str, int, int, int, int]  # difflib's (tag, i1, i2, j1, j2)


def _opcodes(old: Sequence[Hashable], new: Sequence[Hashable]) -> list[Opcode]:
    """difflib's opcodes of `new` against `old`. Past ALIGN_LIMIT items, where difflib grows with the square of
    the length, `_anchored` gives them in about n log n."""
    if len(old) > ALIGN_LIMIT or len(new) > ALIGN_LIMIT:
        return _merged(_anchored(old, new, 0, 0, 0))
    return SequenceMatcher(None, old, new, autojunk=False).get_opcodes()


def _anchored(old: Sequence[Hashable], new: Sequence[Hashable], i0: int, j0: int, depth: int) -> list[Opcode]:
    """Opcodes (offset by i0, j0) of long sequences: their common head and tail are equal; in the middle, the
    items found exactly once in each side are anchors, the longest run of them in the same order on both sides
    is kept equal, and each gap between two anchors is aligned in turn (difflib when short). A middle without
    anchors (or past ANCHOR_DEPTH) is paired by position, as one replace."""
    head, tail = _common_ends(old, new)
    ops: list[Opcode] = [("equal", i0, i0 + head, j0, j0 + head)] if head else []
    a, b = old[head:len(old) - tail], new[head:len(new) - tail]
    i1, j1 = i0 + head, j0 + head
    if not a or not b:
        if a or b:
            ops.append(("delete" if a else "insert", i1, i1 + len(a), j1, j1 + len(b)))
    elif len(a) <= ALIGN_LIMIT and len(b) <= ALIGN_LIMIT:
        ops += [(tag, i1 + x1, i1 + x2, j1 + y1, j1 + y2)
                for tag, x1, x2, y1, y2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes()]
    else:
        anchors = _anchors(a, b) if depth < ANCHOR_DEPTH else []
        if not anchors:
            ops.append(("replace", i1, i1 + len(a), j1, j1 + len(b)))
        else:
            x, y = 0, 0
            for ai, bj in anchors + [(len(a), len(b))]:
                if ai > x or bj > y:
                    ops += _anchored(a[x:ai], b[y:bj], i1 + x, j1 + y, depth + 1)
                if ai < len(a):
                    ops.append(("equal", i1 + ai, i1 + ai + 1, j1 + bj, j1 + bj + 1))
                x, y = ai + 1, bj + 1
    if tail:
        ops.append(("equal", i0 + len(old) - tail, i0 + len(old), j0 + len(new) - tail, j0 + len(new)))
    return ops


def _common_ends(old: Sequence[Hashable], new: Sequence[Hashable]) -> tuple[int, int]:
    """How many items the two sides share at their head, and then at their tail."""
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail


def _anchors(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[tuple[int, int]]:
    """The pairs (i, j) of items found exactly once in `a` and once in `b`, the longest run of them in the same
    order on both sides (patience sorting: a longest increasing subsequence of j in the order of i)."""
    count_a: dict[str, int] = {}
    for item in a:
        count_a[item] = count_a.get(item, 0) + 1
    once_b: dict[str, int] = {}
    seen_b: dict[str, int] = {}
    for j, item in enumerate(b):
        seen_b[item] = seen_b.get(item, 0) + 1
        once_b[item] = j
    pairs = [(i, once_b[item]) for i, item in enumerate(a) if count_a[item] == 1 and seen_b.get(item) == 1]
    tops: list[int] = []  # the smallest last j of an increasing run of each length
    ends: list[int] = []  # the index in `pairs` of that run's last pair
    before = [-1] * len(pairs)
    for n, (_, j) in enumerate(pairs):
        k = bisect_left(tops, j)
        if k:
            before[n] = ends[k - 1]
        if k == len(tops):
            tops.append(j)
            ends.append(n)
        else:
            tops[k], ends[k] = j, n
    run: list[tuple[int, int]] = []
    n = ends[-1] if ends else -1
    while n >= 0:
        run.append(pairs[n])
        n = before[n]
    return run[::-1]


def _merged(ops: list[Opcode]) -> list[Opcode]:
    """Neighbouring opcodes of one tag as one (equal beside equal, as difflib gives them)."""
    out: list[Opcode] = []
    for op in ops:
        if op[1] == op[2] and op[3] == op[4]:
            continue
        if out and out[-1][0] == op[0] and out[-1][2] == op[1] and out[-1][4] == op[3]:
            last = out[-1]
            out[-1] = (last[0], last[1], op[2], last[3], op[4])
        else:
            out.append(op)
    return out


def _moves(rows: list[Row], old: Sequence[Hashable], new: Sequence[Hashable]) -> list[Row]:
    """A frame only in the old capture and one only in the new with the same content: one row, moved (">"),
    at its old place; two neighbours that changed places: both "s" (swapped)."""
    added: dict[str, list[int]] = {}
    for mark, _, j in rows:
        if mark == "+" and j is not None:
            added.setdefault(new[j], []).append(j)
    moved: dict[int, int] = {}
    for mark, i, _ in rows:
        if mark == "-" and i is not None and added.get(old[i]):
            moved[i] = added[old[i]].pop(0)
    if not moved:
        return rows
    taken = set(moved.values())
    out = [(">", i, moved[i]) if m == "-" and i in moved else (m, i, j)
           for m, i, j in rows if not (m == "+" and j in taken)]
    pair = {(i, j): n for n, (m, i, j) in enumerate(out) if m == " "}
    for n, (m, i, j) in enumerate(out):
        if m != ">" or i is None or j is None:
            continue
        for di, dj in ((1, -1), (-1, 1)):  # the neighbour it went past took its place
            other = pair.get((i + di, j + dj))
            if other is not None and out[other][0] == " ":
                out[n], out[other] = ("s", i, j), ("s", i + di, j + dj)
                break
    return out


def _align_kinds(old: list[str], new: list[str]) -> list[Row]:
    """Rows (mark, old index, new index), 0-based: " " alike, "~" another kind, "-" only old, "+" only new."""
    head, tail = _common_ends(old, new)
    rows: list[tuple[str, int | None, int | None]] = [(" ", i, i) for i in range(head)]
    mid_old, mid_new = old[head:len(old) - tail], new[head:len(new) - tail]
    for op, i1, i2, j1, j2 in _opcodes(mid_old, mid_new):
        if op == "equal":
            rows += [(" ", head + i1 + k, head + j1 + k) for k in range(i2 - i1)]
            continue
        paired = min(i2 - i1, j2 - j1) if op == "replace" else 0
        rows += [("~", head + i1 + k, head + j1 + k) for k in range(paired)]
        rows += [("-", head + i, None) for i in range(i1 + paired, i2)]
        rows += [("+", None, head + j) for j in range(j1 + paired, j2)]
    rows += [(" ", len(old) - tail + k, len(new) - tail + k) for k in range(tail)]
    return rows


def _exchange(key: str, a: Capture, b: Capture, rows: list[tuple[str, int | None, int | None]],
              as_is: Any, in_old: Any, tolerance_s: float | None) -> ExchangeDiff:
    old, new = a.exchanges[key], b.exchanges[key]
    out = ExchangeDiff(key)
    for what, x, y in (("status", old.status, new.status), ("media type", old.media_type or "-", new.media_type or "-"),
                       ("ended", old.end, new.end)):
        if x != y:
            out.answer.append({"what": what, "old": x, "new": y})
    out.kinds = (a.kinds(key), b.kinds(key))
    if tolerance_s is not None:
        out.timing = _timing(old, new, a.frames[key], b.frames[key], rows, tolerance_s)
    pairs: Iterable[tuple[int | None, int | None]] = ((i, j) for _, i, j in rows if i is not None and j is not None)
    if not framed(old) and not framed(new):
        pairs = [(None, None)]
    for i, j in pairs:
        where = "body" if i is None else f"{_numbers(i, j)} · {out.kinds[0][i]}"
        before = shaped(a, key, i, as_is)
        after = _measured_alike(before, shaped(b, key, j, in_old))
        if after == before:  # most pairs of a long stream: deepdiff (milliseconds a pair) is not needed
            continue
        delta = DeepDiff(before, after, verbose_level=2)
        for change in _changes(delta):
            if len(out.fields) >= MAX_FIELD_LINES:
                out.fields_omitted += 1
                continue
            out.fields.append({"where": where, "old_frame": None if i is None else i + 1,
                               "new_frame": None if j is None else j + 1, **change})
    # The rows numbered from 1, in place: a stream of 100 000 frames never holds its rows twice.
    for n, (m, i, j) in enumerate(rows):
        rows[n] = (m, None if i is None else i + 1, None if j is None else j + 1)
    out.rows = rows
    return out


def _measured_alike(old: Any, new: Any, key: Any = None) -> Any:
    """`new`, with each measured number (MEASURED_KEYS) within MEASURED_TOLERANCE of the old one made the old one."""
    if isinstance(old, dict) and isinstance(new, dict):
        return {k: _measured_alike(old[k], v, k) if k in old else v for k, v in new.items()}
    if isinstance(old, list) and isinstance(new, list):
        return [_measured_alike(o, n, key) for o, n in zip(old, new)] + new[len(old):]
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (old, new))
    if numbers and key in MEASURED_KEYS and abs(new - old) <= MEASURED_TOLERANCE * max(abs(old), abs(new)):
        return old
    return new


def _numbers(i: int, j: int | None) -> str:
    """A frame's number in the old capture, and in the new one where that differs (0-based in, 1-based out)."""
    return f"frame {i + 1}" if j is None or i == j else f"frame {i + 1} → {j + 1}"


def _changes(delta: DeepDiff) -> Iterator[dict[str, Any]]:
    for kind, changes in delta.items():
        items = changes.items() if isinstance(changes, dict) else ((c, None) for c in changes)
        for where, change in items:
            path = _deepdiff_path(str(where))
            if isinstance(change, dict) and "old_value" in change:
                old, new = change["old_value"], change["new_value"]
                yield {"path": path, "change": "changed", "old": old, "new": new,
                       "text": _short(f"{old!r} → {new!r}")}
            elif "removed" in kind:
                yield {"path": path, "change": "removed", "old": change, "new": None,
                       "text": _short(f"removed (was {change!r})")}
            elif "added" in kind:
                yield {"path": path, "change": "added", "old": None, "new": change, "text": _short(f"added {change!r}")}
            else:
                yield {"path": path, "change": kind, "old": None, "new": None, "text": _short(repr(change))}


def _deepdiff_path(where: str) -> str:
    """root['result']['parts'][0] → result.parts[0]"""
    parts = re.findall(r"\[('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^\]]*)\]", where.removeprefix("root"))
    out = ""
    for p in parts:
        if p[:1] in "'\"":
            out += ("." if out else "") + p[1:-1]
        else:
            out += f"[{p}]"
    return out or "(the whole value)"


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _timing(old: Exchange, new: Exchange, fa: list[Event], fb: list[Event],
            rows: list[tuple[str, int | None, int | None]], tolerance_s: float) -> list[dict[str, Any]]:
    found = []

    def check(where: str, what: str, x: float | None, y: float | None) -> None:
        if x is None or y is None or abs(y - x) <= tolerance_s:
            return
        later = "later" if y > x else "sooner"
        found.append({"where": where, "what": what, "old_s": round(x, 3), "new_s": round(y, 3),
                      "text": f"{what}: {abs(y - x):.2f} s {later} ({x:.3f} s → {y:.3f} s; tolerance {tolerance_s:g} s)"})

    def since(t: float | None, base: float | None) -> float | None:
        return None if t is None or base is None else t - base

    check("headers", "came after the request", since(old.t_headers, old.t_sent), since(new.t_headers, new.t_sent))
    if fa and fb:
        for mark, i, j in rows:
            if i is None or j is None or mark in ">s":  # a frame elsewhere: its gaps say nothing more
                continue
            before_a = fa[i - 1].t if i else old.t_headers
            before_b = fb[j - 1].t if j else new.t_headers
            check(f"{_numbers(i, j)} · {kind_of(payload_of(old, fa[i]))}",
                  "came after the frame before it" if i else "came after the headers",
                  since(fa[i].t, before_a), since(fb[j].t, before_b))
        check("end", "the stream ended after its last frame", since(old.t_end, fa[-1].t), since(new.t_end, fb[-1].t))
    elif not framed(old) and not framed(new):
        check("end", "the answer ended after the request", since(old.t_end, old.t_sent), since(new.t_end, new.t_sent))
    return found


def _side_by_side(ex: ExchangeDiff) -> list[str]:
    old_kinds, new_kinds = ex.kinds
    lines = [f"{ex.key}: {len(old_kinds)} frames → {len(new_kinds)} frames"]
    width = max([len(k) for k in old_kinds] + [8]) + 6
    show = set()
    for n, (mark, _, _) in enumerate(ex.rows):
        if mark != " ":
            show.update(range(n - CONTEXT, n + CONTEXT + 1))
    skipped = 0
    lines.append(f"      {'old':<{width}}new")
    for n, (mark, i, j) in enumerate(ex.rows):
        if n not in show:
            skipped += 1
            continue
        if skipped:
            lines.append(f"      … {skipped} frames alike")
            skipped = 0
        left = f"{i:>3} {old_kinds[i - 1]}" if i is not None else "    (not in the old capture)"
        right = f"{j:>3} {new_kinds[j - 1]}" if j is not None else "    (not in the new capture)"
        said = {">": "  (the same frame, moved)", "s": "  (swapped)"}.get(mark, "")
        lines.append(f"  {mark} {left:<{width + 1}}{right}{said}".rstrip())
    if skipped:
        lines.append(f"      … {skipped} frames alike")
    return lines
