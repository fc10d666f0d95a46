"""report.html: one self-contained page a person reads in a browser (docs/contracts.md §4): the verdict, profiles ×
outcomes, the failures grouped by root cause with the frames that decided them, filters, every requirement.
In a run over A2A bindings (issue 15): outcomes × bindings beside the profiles, one status column per
certified binding in the table of requirements, a binding filter (with one chosen, the outcome filter reads
each requirement's status over that binding, and what does not run over it is hidden), and each failure
saying which bindings it came from.

Everything taken from the report is text the implementation under test chose (messages and evidence quote its
frames), so all of it goes through `esc` (`esc_text` inside an element). The page's script only shows and hides
what is already there: it reads the DOM's data attributes, writes no markup, and the page's
Content-Security-Policy lets only that script (and the style sheet) apply, by hash, so markup that slipped through
would still run nothing and load nothing. tests/e2e/test_report_html.py checks the page in Chromium.

Two presentation choices, both honest about what the report holds:
- the member of a frame that an evidence note names ("append: true after its lastChunk" → `append`) is marked
  (`named_members`); a frame whose note names none of its members is marked as a whole;
- a timing rule's figure (`timing_figure`) draws the arrival times its evidence carries and the measured values
  with the limits the rule recorded beside them (GAUGES); nothing is drawn that the report does not hold.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..outcomes import Outcome
from .aggregate import untested_over
from .common import (
    FAILURES,
    OUTCOME_ORDER,
    SOFT_FINDINGS,
    binding_counts,
    binding_title,
    by_run_profile,
    certified_bindings,
    entries_with,
    first_line,
    not_certified_note,
    over_text,
    quoted_key,
    run_profile,
    target_line,
    verdict_claim,
)
from .roots import Root, group
from .sources import source_url


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def html_source(source: str) -> str:
    """A requirement's source, a link to the document's public text where one is known (sources.py)."""
    url = source_url(source)
    return (f'<a href="{esc(url)}" rel="noopener noreferrer" target="_blank">{esc(source)}</a>' if url
            else esc(source))


def esc_text(value: Any) -> str:
    """For element content only (never an attribute): quotes stay, which keeps quoted frames half the size."""
    return html.escape(str(value), quote=False)


# -- a frame: pretty JSON with the members its note names marked ---------------------------------------------

# One JSON token. Strings are kept as they came (escapes included): the page shows the frame, never a decoding.
_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<lit>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)'
                    r'|(?P<punct>[{}\[\]:,]))')
_MEMBER_NAME = re.compile(r"[A-Za-z_$@][\w$@.-]+")  # what a note can name: not "0", not "t"
INDENT = "  "


def json_tokens(text: str) -> tuple[list[tuple[str, str]], str]:
    """The JSON tokens `text` starts with (kind, text), and the rest from the first thing that is not one (a
    frame cut at the quote limit ends in "… (N chars)"; bytes that are not JSON stay as they are)."""
    tokens, pos = [], 0
    while pos < len(text):
        found = _TOKEN.match(text, pos)
        if not found or found.end() == pos:
            break
        kind = found.lastgroup or ""
        tokens.append((kind, found.group(kind)))
        pos = found.end()
    rest = text[pos:]
    return tokens, ("" if not rest.strip() else rest.lstrip())


# A quoted stretch of a note: often the frame's own bytes ("raw bytes: '{"jsonrpc":…'"), which name every member.
_QUOTED = re.compile(r"""(?<![A-Za-z])'[^']*(?:'|$)|"[^"]*(?:"|$)""")
MAX_NAMED = 3  # a note that names more of the frame's members than this points at none of them


def named_members(tokens: list[tuple[str, str]], note: str) -> set[str]:
    """The member names of the frame that its evidence note names as a word, outside quotes ("append: true
    after its lastChunk" names `append`): the only members the page can honestly point at. None when the
    note names more than MAX_NAMED of them (it describes the frame rather than one member)."""
    said = _QUOTED.sub(" ", note)
    if not said.strip():
        return set()
    keys = {text[1:-1] for (kind, text), nxt in zip(tokens, tokens[1:] + [("", "")])
            if kind == "str" and nxt == ("punct", ":")}
    named = {key for key in keys if _MEMBER_NAME.fullmatch(key)
             and re.search(rf"(?<![\w$@]){re.escape(key)}(?![\w$@]|['’]s\b)", said)}  # "the phase's": a noun
    return named if len(named) <= MAX_NAMED else set()


WIDTH = 64  # a container whose one-line form fits in this many characters stays on one line
MAX_DEPTH = 24  # deeper containers stay on one line (a hostile frame could nest a few hundred deep)


class _JsonPrinter:
    """Tokens → indented HTML. A member whose name is in `names` is marked: its name, and its value when the
    value is a scalar. Tolerant: tokens that do not follow JSON's grammar are printed in order all the same."""

    def __init__(self, tokens: list[tuple[str, str]], names: set[str]) -> None:
        self.tokens, self.names = tokens, names
        self.out: list[str] = []
        self.marked: list[str] = []
        self.mark_open = False
        self.closing = _matching_brackets(tokens)

    def tok(self, i: int) -> str:
        return self.tokens[i][1] if 0 <= i < len(self.tokens) else ""

    def is_key(self, i: int) -> bool:
        return self.tokens[i][0] == "str" and self.tok(i + 1) == ":"

    def emit_token(self, i: int) -> None:
        """One token, opening or closing a mark around a named member."""
        kind, text = self.tokens[i]
        if self.is_key(i) and text[1:-1] in self.names and not self.mark_open:
            self.out.append('<mark class="named">')
            self.mark_open = True
            if text[1:-1] not in self.marked:
                self.marked.append(text[1:-1])
            self.out.append(esc_text(text))
            return
        if kind == "punct" and text == ":":
            self.out.append(": ")
            if self.mark_open and self.tok(i + 1) in ("{", "["):  # a container value: the name alone is marked
                self.close_mark()
            return
        self.out.append(esc_text(text) + (" " if kind == "punct" and text == "," else ""))
        if self.mark_open and not self.is_key(i) and text not in ("{", "["):
            self.close_mark()

    def close_mark(self) -> None:
        if self.mark_open:
            self.out.append("</mark>")
            self.mark_open = False

    def one_line(self, i: int, j: int) -> int:
        """Tokens i..j on one line; the index after j."""
        for k in range(i, min(j, len(self.tokens) - 1) + 1):
            self.emit_token(k)
        return j + 1

    def fits(self, i: int, j: int | None, depth: int) -> bool:
        """Whether tokens i..j fit on the line they start, after the indentation and the member's name."""
        if j is None:
            return False
        name = len(self.tok(i - 2)) + 2 if self.tok(i - 1) == ":" else 0
        return sum(len(self.tok(k)) + (1 if self.tok(k) in (",", ":") else 0) for k in range(i, j + 1)) \
            <= WIDTH - len(INDENT) * depth - name

    def value(self, i: int, depth: int) -> int:
        """The value starting at token i; the index after it."""
        text = self.tok(i)
        if self.tokens[i][0] != "punct" or text not in ("{", "["):
            self.emit_token(i)
            return i + 1
        j = self.closing.get(i)
        if depth >= MAX_DEPTH or self.fits(i, j, depth):
            return self.one_line(i, len(self.tokens) - 1 if j is None else j)
        self.out.append(esc_text(text))
        i += 1
        if self.tok(i) in ("}", "]"):
            self.out.append(esc_text(self.tok(i)))
            return i + 1
        inner = "\n" + INDENT * (depth + 1)
        self.out.append(inner)
        while i < len(self.tokens):
            kind, tok = self.tokens[i]
            if kind == "punct" and tok in ("}", "]"):
                self.close_mark()
                self.out.append("\n" + INDENT * depth + esc_text(tok))
                return i + 1
            if kind == "punct" and tok == ",":
                self.close_mark()
                self.out.append("," + inner)
                i += 1
            elif self.is_key(i) or (kind == "punct" and tok == ":"):
                self.emit_token(i)
                i += 1
            else:
                i = self.value(i, depth + 1)
        return i  # the frame was cut inside this container


def _matching_brackets(tokens: list[tuple[str, str]]) -> dict[int, int]:
    """Index of each opening bracket → index of the bracket that closes it (unclosed ones are left out)."""
    stack: list[int] = []
    closing: dict[int, int] = {}
    for i, (kind, text) in enumerate(tokens):
        if kind != "punct":
            continue
        if text in ("{", "["):
            stack.append(i)
        elif text in ("}", "]") and stack:
            closing[stack.pop()] = i
    return closing


def pretty_json(text: str, note: str = "") -> tuple[str, list[str]]:
    """HTML of `text` indented as JSON, the members named by `note` in <mark> (the name, and the value when
    it is a scalar); and the names marked. Text that does not start as JSON comes back as it is."""
    tokens, rest = json_tokens(text)
    if not tokens or tokens[0] not in (("punct", "{"), ("punct", "[")):
        return esc_text(text), []
    printer = _JsonPrinter(tokens, named_members(tokens, note))
    i = 0
    while i < len(tokens):
        i = printer.value(i, 0)
    printer.close_mark()
    if rest:
        printer.out.append(f'<span class="cut">{esc_text(rest)}</span>')
    return "".join(printer.out), printer.marked


def evidence_body(item: dict[str, Any]) -> tuple[str, str]:
    """(the quoted frame, body or error; the key it came from) or the whole item as JSON."""
    key = quoted_key(item)
    return (item[key], key) if key else (json.dumps(item, ensure_ascii=False), "")


def short_test(nodeid: str) -> str:
    return nodeid.rsplit("::", 1)[-1] if nodeid else ""


_HEAD_KEYS = ("test", "exchange", "frame", "t", "note", "data", "body", "error", "sent")


def html_frame(item: dict[str, Any], *, is_root: bool) -> str:
    """One evidence item: where it is (test, exchange, frame, arrival), its note, the frame with the member
    the note names marked; a frame whose note names none of its members is marked as a whole."""
    text, source = evidence_body(item)
    note = str(item.get("note") or "")
    shown, marked = pretty_json(text, note)
    where = [f'<span class="tag">{esc(short_test(str(item["test"])))}</span>' if item.get("test") else "",
             f"{esc(item['exchange'])}" if item.get("exchange") else "",
             f"frame <strong>{esc(item['frame'])}</strong>" if "frame" in item else "",
             f"at <strong>{esc(item['t'])} s</strong>" if _is_number(item.get("t")) else ""]
    where += [f"{esc(k)} <strong>{esc(v)}</strong>" for k, v in item.items()
              if k not in _HEAD_KEYS and isinstance(v, (str, int, float, bool)) and v != ""]
    if source == "error":
        where.append("<strong>error</strong>")
    elif isinstance(item.get("error"), str):  # a stream's transport error beside its unreadable frame
        where.append(f"error <strong>{esc(item['error'])}</strong>")
    whole = "frame" in item and not marked
    if marked:
        why = " — marks " + ", ".join(f"<code>{esc(m)}</code>" for m in marked)
    elif whole:
        why = " — names no member of the frame as quoted: the whole frame is marked" if note else "the whole frame is marked"
    else:
        why = ""
    root = '<span class="root-tag">root frame</span>' if is_root else ""
    said = f"note “{esc(note)}”" if note else ""
    sent = item.get("sent")
    return (f'<div class="frame{" whole" if whole else ""}"><div class="frame-head">{root}'
            f'{" · ".join(w for w in where if w)}</div>'
            + (f'<div class="sent">sent <code>{esc(sent)}</code></div>' if isinstance(sent, str) else "")
            + (f'<div class="note">{said}{why}</div>' if said or why else "")
            + f'<pre class="json">{shown}</pre></div>')


# -- a timing rule: arrival times and the limit, as a small SVG -----------------------------------------------

@dataclass(frozen=True)
class Limit:
    label: str
    value: Callable[[dict[str, Any]], Any]
    severity: str  # "warn" or "fail": what the rule gives past it; "spec" for the requirement's own figure


@dataclass(frozen=True)
class Gauge:
    """One measured value of a timing rule and its limits, as the rules record them in `measured`."""

    measure: str  # a regex on the measured key; its group, if any, goes into the caption
    caption: str
    unit: str
    limits: tuple[Limit, ...]
    at_least: bool = False  # the value must reach the limit (a span), not stay under it (a delay)
    anchored: bool = False  # measured from the first evidence frame: drawn on that frame's row of arrivals
    items: str = ""  # a measured dict with one value per item, drawn one bar each instead of the measure


def _key(name: str) -> Callable[[dict[str, Any]], Any]:
    return lambda measured: measured.get(name)


def _span_floor(measured: dict[str, Any]) -> Any:
    tolerance = measured.get("span_tolerance_s")
    return 1.0 - tolerance if _is_number(tolerance) else None


# The timing rules' measured values (rules/stream.py, rules/progress.py) and what bounds each.
GAUGES = (
    Gauge(r"close_after_terminal_s", "the stream's end after its terminal status", "s",
          (Limit("tolerance", _key("tolerance_s"), "warn"),), anchored=True),
    Gauge(r"max_gap_s", "the longest wait for a data frame", "s", (Limit("limit", _key("gap_limit_s"), "warn"),)),
    Gauge(r"max_phase_delay_s", "each new phase, behind the script", "s",
          (Limit("tolerance", _key("delay_tolerance_s"), "warn"), Limit("fails past", _key("fail_delay_s"), "fail")),
          items="delays_s"),
    # Four a second means five updates in a row span one second (the requirement's own figure).
    Gauge(r"min_span_5_s", "the shortest span of five data-only updates", "s",
          (Limit("tolerance", _span_floor, "warn"), Limit("four a second:", lambda m: 1.0, "spec")), at_least=True),
    Gauge(r"max_updates_in_(\d+(?:\.\d+)?)_s", "the most data-only updates within {} s", "updates",
          (Limit("fails at", _key("fail_updates"), "fail"),)),
)

# Measured durations that start at the first evidence frame and have no limit: drawn on its row as a span.
SPANS = {"lasted_s": "the phase lasted"}  # PROG-010: from the phase's first frame to its end

_NUMBER = (int, float)
FIG_W, LABEL_W, PLOT_R, ROW_H = 760, 250, 700, 24


def _is_number(value: Any) -> bool:
    return isinstance(value, _NUMBER) and not isinstance(value, bool) and math.isfinite(value)


def _gauges_of(measured: dict[str, Any]) -> list[tuple[Gauge, str, str]]:
    """(gauge, measured key, caption) for each gauge the measured values hold."""
    found = []
    for gauge in GAUGES:
        for key in measured:
            hit = re.fullmatch(gauge.measure, key)
            if hit and (_is_number(measured[key]) or isinstance(measured.get(gauge.items), dict)):
                found.append((gauge, key, gauge.caption.format(*hit.groups())))
                break
    return found


def _nice_step(span: float) -> float:
    raw = span / 5 if span > 0 else 1.0
    power = 10.0 ** int(f"{raw:e}".split("e")[1])
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _fmt(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") if value else "0"


class _Scale:
    """Value → x in the plot area, from 0 to `hi`."""

    def __init__(self, hi: float) -> None:
        self.hi = hi if hi > 0 else 1.0

    def __call__(self, value: float) -> float:
        return LABEL_W + (PLOT_R - LABEL_W) * max(0.0, min(value, self.hi)) / self.hi


class _Figure:
    """The SVG's parts, drawn top to bottom."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.y = 8.0

    def text(self, x: float, y: float, text: str, cls: str, anchor: str = "start", limit: int = 40) -> None:
        shown = text if len(text) <= limit else text[:limit - 1] + "…"
        title = f"<title>{esc(text)}</title>" if shown != text else ""
        self.parts.append(f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" class="{cls}">{title}{esc(shown)}</text>')

    def heading(self, text: str) -> None:
        self.text(8, self.y + 12, text, "head", limit=110)
        self.y += 22

    def axis(self, scale: _Scale, top: float, bottom: float, unit: str) -> None:
        """Grid lines from `top` to `bottom`, and the ticks under it (drawn before the rows, so behind them)."""
        step = _nice_step(scale.hi)
        tick = 0.0
        while tick <= scale.hi + 1e-9:
            x = scale(tick)
            self.parts.append(f'<line class="grid" x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}"/>')
            self.text(x, bottom + 14, _fmt(tick) + (f" {unit}" if tick == 0 else ""), "tick", "middle")
            tick += step
        self.parts.append(f'<line class="axis" x1="{LABEL_W}" y1="{bottom:.1f}" x2="{PLOT_R}" y2="{bottom:.1f}"/>')

    def limit_labels(self, labels: list[tuple[float, str, str]], y: float) -> None:
        """Labels over limit lines, right-aligned at x; one that would overlap the one before goes a line up."""
        placed: list[float] = []
        for x, text, cls in sorted(labels, reverse=True):
            width = 5.6 * len(text)
            level = sum(1 for left in placed if left < x + 4)
            self.text(x - 3, y - 11 * level, text, f"limit-label {cls}", "end", limit=30)
            placed.append(x - 3 - width)

    def svg(self, title: str) -> str:
        height = self.y + 4
        return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{FIG_W}" height="{height:.0f}" '
                f'viewBox="0 0 {FIG_W} {height:.0f}"><title>{esc(title)}</title>{"".join(self.parts)}</svg>')


def _limit_values(gauge: Gauge, measured: dict[str, Any]) -> list[tuple[Limit, float]]:
    return [(limit, float(v)) for limit in gauge.limits if _is_number(v := limit.value(measured))]


def _over(gauge: Gauge, value: float, limits: list[tuple[Limit, float]]) -> str:
    """The class of a measured value: past a fail limit (bad), past a warn limit (warn), or within (ok)."""
    crossed = [lim.severity for lim, v in limits if lim.severity != "spec"
               and ((value < v) if gauge.at_least else (value >= v if lim.severity == "fail" else value > v))]
    return "bad" if "fail" in crossed else "warn" if crossed else "ok"


def _draw_arrivals(fig: _Figure, entry: dict[str, Any], anchored: list[tuple[Gauge, str, str]]) -> None:
    """One row per test and exchange, a dot per evidence frame at its arrival; an anchored value drawn from
    the first evidence frame: its limit as a band, where it ended as a line."""
    measured = entry["measured"]
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for item in entry.get("evidence") or ():
        if _is_number(item.get("t")):
            rows.setdefault((short_test(str(item.get("test") or "")), str(item.get("exchange") or "")), []).append(item)
    first = entry["evidence"][0]
    spans = [(key, caption) for key, caption in SPANS.items() if _is_number(measured.get(key))
             and _is_number(first.get("t"))]
    ends = [item["t"] for items in rows.values() for item in items]
    ends += [first["t"] + measured[key] for key, _ in spans]
    for gauge, key, _ in anchored:
        ends += [first["t"] + measured[key]] + [first["t"] + v for _, v in _limit_values(gauge, measured)]
    scale = _Scale(max(ends) * 1.06)
    fig.heading("arrival of the frames in the evidence (s after the request)")
    fig.y += 12 if anchored or spans else 0
    top = fig.y
    fig.axis(scale, top - 4, top + ROW_H * len(rows) + 2, "s")
    labels: list[tuple[float, str, str]] = []
    for (test, exchange), items in rows.items():
        mid = fig.y + ROW_H / 2
        fig.text(8, mid + 4, f"{test} · {exchange}" if exchange else test, "label")
        xs = [scale(item["t"]) for item in items]
        if len(xs) > 1:
            fig.parts.append(f'<line class="span" x1="{min(xs):.1f}" y1="{mid:.1f}" x2="{max(xs):.1f}" y2="{mid:.1f}"/>')
        if first in items:
            for key, caption in spans:
                x0, x1 = scale(first["t"]), scale(first["t"] + measured[key])
                fig.parts.append(f'<rect class="lasted" x="{x0:.1f}" y="{mid - 3:.1f}" width="{x1 - x0:.1f}" height="6"/>')
                labels.append((x1, f"{caption} {_fmt(measured[key])} s", "spec"))
            for gauge, key, _ in anchored:
                limits = _limit_values(gauge, measured)
                for limit, value in limits:
                    x0, x1 = scale(first["t"]), scale(first["t"] + value)
                    fig.parts.append(f'<rect class="band" x="{x0:.1f}" y="{fig.y + 3:.1f}" width="{x1 - x0:.1f}" '
                                     f'height="{ROW_H - 6}"/>')
                    labels.append((x1, f"{limit.label} {_fmt(value)} s", limit.severity))
                end = scale(first["t"] + measured[key])
                fig.parts.append(f'<line class="end {_over(gauge, measured[key], limits)}" x1="{end:.1f}" '
                                 f'y1="{fig.y + 1:.1f}" x2="{end:.1f}" y2="{fig.y + ROW_H - 1:.1f}"/>')
                labels.append((end, f"ended +{_fmt(measured[key])} s", "end"))
        shown_at = -99.0
        for item, x in zip(items, xs):
            tip = f"frame {item.get('frame', '?')} at {item['t']} s" + (f": {item['note']}" if item.get("note") else "")
            fig.parts.append(f'<circle class="dot" cx="{x:.1f}" cy="{mid:.1f}" r="4.5"><title>{esc(tip)}</title></circle>')
            if "frame" in item and x - shown_at > 24:
                fig.text(x, fig.y + 6, f"#{item['frame']}", "frame-no", "middle")
                shown_at = x
        fig.y += ROW_H
    fig.limit_labels(labels, top - 6)
    fig.y += 30


def _draw_gauge(fig: _Figure, gauge: Gauge, key: str, caption: str, measured: dict[str, Any]) -> None:
    """A measured value as a bar (or one bar per item of a measured dict), its limits as dashed lines."""
    limits = _limit_values(gauge, measured)
    if gauge.items and isinstance(measured.get(gauge.items), dict):
        values = [(str(k), float(v)) for k, v in measured[gauge.items].items() if _is_number(v)]
        source = gauge.items
    else:
        values, source = [(key, float(measured[key]))], key
    if not values:
        return
    scale = _Scale(max([v for _, v in values] + [v for _, v in limits]) * 1.12)
    fig.heading(f"{caption} ({source})")
    fig.y += 12
    top = fig.y
    bottom = top + ROW_H * len(values) + 2
    fig.axis(scale, top - 4, bottom, gauge.unit)
    for label, value in values:
        x = scale(value)
        fig.text(8, fig.y + ROW_H / 2 + 4, label, "label")
        fig.parts.append(f'<rect class="bar {_over(gauge, value, limits)}" x="{LABEL_W}" y="{fig.y + 5:.1f}" '
                         f'width="{max(1.5, x - LABEL_W):.1f}" height="{ROW_H - 10}"/>')
        fig.text(x + 4, fig.y + ROW_H / 2 + 4, f"{_fmt(value)} {gauge.unit}", "value")
        fig.y += ROW_H
    for limit, value in limits:
        x = scale(value)
        fig.parts.append(f'<line class="limit {limit.severity}" x1="{x:.1f}" y1="{top - 4:.1f}" x2="{x:.1f}" '
                         f'y2="{bottom:.1f}"/>')
    fig.limit_labels([(scale(v), f"{lim.label} {_fmt(v)} {gauge.unit}", lim.severity) for lim, v in limits], top - 6)
    fig.y += 30


def timing_figure(entry: dict[str, Any]) -> str:
    """For a timing rule (its `measured` holds a value GAUGES knows): the arrival times of the frames in its
    evidence, one row per test and exchange, and each measured value as a bar with its limits drawn. The
    measured values are those of the requirement's first decisive finding, whose evidence comes first
    (aggregate._reduce): an anchored value is drawn from the first evidence frame; the others stand alone."""
    measured = entry.get("measured") or {}
    gauges = _gauges_of(measured)
    if not gauges:
        return ""
    evidence = entry.get("evidence") or []
    fig = _Figure()
    first_t = evidence[0].get("t") if evidence else None
    anchored = [g for g in gauges if g[0].anchored and _is_number(first_t)]
    if any(_is_number(item.get("t")) for item in evidence):
        _draw_arrivals(fig, entry, anchored)
    else:
        anchored = []
    for gauge, key, caption in gauges:
        if (gauge, key, caption) not in anchored:
            _draw_gauge(fig, gauge, key, caption, measured)
    return (f'<figure class="timing">{fig.svg("timing of " + entry["id"])}<figcaption>Dots: when each frame of the '
            "evidence arrived. Bars: the measured values; dashed lines: their limits (red: the rule fails past it; "
            "amber: it warns past it). The figures are those of the first decisive finding.</figcaption></figure>")


# -- one requirement, opened ------------------------------------------------------------------------------

def badge(status: str) -> str:
    return f'<span class="badge s-{esc(status)}">{esc(status)}</span>'


def html_measured(measured: dict[str, Any]) -> str:
    if not measured:
        return ""
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))}</dd>"
                   for k, v in measured.items())
    return f'<dl class="measured">{rows}</dl>'


def html_requirement(entry: dict[str, Any], *, root_frame: dict[str, Any] | None = None, role: str = "") -> str:
    """A requirement that did not simply pass, as a <details>: the summary says what failed; opened, the
    sentence's source, the message, a timing figure, the frames that decided it, the tests."""
    status = entry["status"]
    flags, baseline = "", ""
    if entry.get("baseline") == "expected":
        flags = '<span class="flag">expected by baseline</span>'
    elif entry.get("baseline_scenarios") and status in FAILURES:
        flags = (f'<span class="flag">the baseline expects it only in '
                 f'{esc(", ".join(map(str, entry["baseline_scenarios"])))}</span>')
    if entry.get("baseline_reason"):
        baseline = f'<p class="meta">the baseline says: {esc(entry["baseline_reason"])}</p>'
    message = entry.get("message") or ""
    readings = "".join(f"<li>{esc(r)}</li>" for r in entry.get("readings") or ())
    how = ""
    if entry.get("reading") or readings or entry.get("note"):
        how = ('<details class="how"><summary>how it is judged</summary>'
               + (f"<p>reading taken: <strong>{esc(entry['reading'])}</strong></p>" if entry.get("reading") else "")
               + (f"<ul>{readings}</ul>" if readings else "")
               + (f"<p>{esc(entry['note'])}</p>" if entry.get("note") else "") + "</details>")
    frames = [html_frame(item, is_root=item is root_frame) for item in entry.get("evidence") or ()]
    if entry.get("evidence_omitted"):
        frames.append(f'<p class="meta">{esc(entry["evidence_omitted"])} more evidence item(s) omitted</p>')
    tests = "".join(f"<li><code>{esc(t)}</code></li>" for t in entry.get("tests") or ())
    over = over_text(entry)
    over_tag = f'<span class="over">over {esc(over)}</span>' if over and status != Outcome.PASS.value else ""
    return (f'<details class="req {role}" id="req-{esc(entry["id"])}" data-status="{esc(status)}" '
            f'data-profile="{esc(run_profile(entry))}"{binding_attrs(entry)}><summary>{badge(status)} '
            f'<code class="id">{esc(entry["id"])}</code> <span class="title">{esc(entry["title"])}</span>{over_tag}'
            f'{flags}<span class="first">{esc(first_line(message))}</span></summary><div class="body">'
            f'<p class="meta">{esc(entry["level"])} · {esc(entry["profile"])} · source: {html_source(entry["source"])}</p>'
            f"{baseline}{html_by_binding(entry)}"
            f'<h4>Message</h4><pre class="message{"" if status in FAILURES else " soft"}">'
            f'{esc(message) or "(no message)"}</pre>'
            f"{timing_figure(entry)}{html_measured(entry.get('measured') or {})}{how}"
            + (f'<h4>The frames that decided it</h4><div class="frames">{"".join(frames)}</div>' if frames else "")
            + (f'<h4>Tests</h4><ul class="tests">{tests}</ul>' if tests else "") + "</div></details>")


def binding_attrs(entry: dict[str, Any]) -> str:
    """`data-b-<binding>="<status>"` for each binding the requirement runs over (the binding filter reads them)."""
    return "".join(f' data-b-{esc(b)}="{esc(s)}"' for b, s in (entry.get("bindings") or {}).items())


def html_by_binding(entry: dict[str, Any]) -> str:
    """The status over each binding, with that binding's message where it is not PASS."""
    if not entry.get("bindings"):
        return ""
    messages = entry.get("binding_messages") or {}
    untested = untested_over(entry)
    items = "".join(f"<li>{badge(s)} {esc(binding_title(b))}"
                    + (f' <span class="first">{esc(first_line(messages[b]))}</span>' if messages.get(b) else "")
                    + (' <span class="flag">a certified binding it was not tested over</span>' if b in untested else "")
                    + "</li>" for b, s in entry["bindings"].items())
    return f'<ul class="by-binding">{items}</ul>'


def same_frame(entry: dict[str, Any], frame: dict[str, Any] | None) -> dict[str, Any] | None:
    """The entry's evidence item on the same frame (test, binding, exchange, number) as `frame`, if it has one."""
    if not frame:
        return None
    where = (frame.get("test"), frame.get("binding"), frame.get("exchange"), frame.get("frame"))
    return next((item for item in entry.get("evidence") or ()
                 if (item.get("test"), item.get("binding"), item.get("exchange"), item.get("frame")) == where), None)


def root_where(frame: dict[str, Any] | None) -> str:
    if not frame:
        return ""
    test = short_test(str(frame.get("test") or ""))
    over = f" over {binding_title(str(frame['binding']))}" if frame.get("binding") else ""
    return (f"frame {frame.get('frame')} of {frame.get('exchange') or 'the exchange'}{over}"
            + (f" in {test}" if test else ""))


def html_root(root: Root) -> str:
    """One root cause: its head first, the requirements its frame also failed under it (each keeps its status)."""
    if root.cause:  # a card that could not be read: what was tried, the likely fix, what follows from it
        members = "".join(html_requirement(m, role="member") for m in root.members)
        label = (f'<div class="members-label">on this agent {plural(len(root.members), "more requirement")} '
                 f'failed, each following from it:</div>{members}') if root.members else ""
        return (f'<div class="root grouped card-root" data-group="root"><div class="root-head"><strong>Root cause: '
                f'{esc(root.cause)}</strong><br>Likely fix: {esc(root.fix or "")}</div>'
                f'{html_requirement(root.head, role="head")}<div class="members">{label}</div></div>')
    if not root.members:
        return f'<div class="root" data-group="root">{html_requirement(root.head)}</div>'
    head = html_requirement(root.head, root_frame=root.frame, role="head")
    members = "".join(html_requirement(m, root_frame=same_frame(m, root.frame), role="member") for m in root.members)
    return (f'<div class="root grouped" data-group="root"><div class="root-head">one root cause, '
            f'<strong>{esc(root_where(root.frame))}</strong>: {len(root.entries)} requirements</div>{head}'
            f'<div class="members"><div class="members-label">its first frame also fails '
            f'{plural(len(root.members), "requirement")}:</div>{members}</div></div>')


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# -- the page's parts -------------------------------------------------------------------------------------

def html_matrix(report: dict[str, Any]) -> str:
    """Profiles (as the catalogue names them, in its order) × outcomes, with counts; a count filters to its cell, a
    profile's name to its row, an outcome's name to its column."""
    counts = by_run_profile(report)
    head = ("<tr><th>profile</th>" + "".join(
        f'<th><button type="button" class="col" data-set-outcome="{esc(o)}">{esc(o)}</button></th>'
        for o in OUTCOME_ORDER) + "<th>total</th></tr>")
    body = []
    for family, row in counts.items():
        cells = "".join(
            f'<td class="n"><button type="button" class="cell s-{esc(o)}" data-set-outcome="{esc(o)}" '
            f'data-set-profile="{esc(family)}">{row[o]}</button></td>' if row[o] else '<td class="n zero">·</td>'
            for o in OUTCOME_ORDER)
        body.append(f'<tr data-row-profile="{esc(family)}"><th>{esc(family)}</th>{cells}'
                    f'<td class="n total">{sum(row.values())}</td></tr>')
    return f'<table class="matrix">{head}{"".join(body)}</table>'


def html_binding_table(report: dict[str, Any]) -> str:
    """Outcomes × certified bindings (the outcomes that occur), a count filtering to its outcome over that
    binding; which bindings were not certified and why; which the card declares."""
    given = report.get("bindings") or {}
    certified = certified_bindings(report)
    counts = binding_counts(report)
    parts = []
    if certified:
        shown = [o for o in OUTCOME_ORDER if any(counts[b][o] for b in certified)]
        head = "<tr><th>outcome</th>" + "".join(
            f'<th><button type="button" class="col" data-set-binding="{esc(b)}">{esc(binding_title(b))}</button></th>'
            for b in certified) + "</tr>"
        body = "".join(
            f"<tr><th>{badge(o)}</th>" + "".join(
                f'<td class="n"><button type="button" class="cell s-{esc(o)}" data-set-outcome="{esc(o)}" '
                f'data-set-binding="{esc(b)}">{counts[b][o]}</button></td>' if counts[b][o]
                else '<td class="n zero">·</td>' for b in certified) + "</tr>" for o in shown)
        parts.append(f'<table class="matrix bindings">{head}{body}</table>')
    for binding, why in (given.get("skipped") or {}).items():
        parts.append(f'<p class="meta">not certified: <strong>{esc(binding_title(binding))}</strong> — {esc(why)}</p>')
    if given.get("declared") is not None:
        declared = ", ".join(binding_title(b) for b in given["declared"]) or "none"
        parts.append(f'<p class="meta">declared by the agent card: {esc(declared)}</p>')
    return "".join(parts)


def html_level_table(report: dict[str, Any]) -> str:
    """Levels × outcomes, only the outcomes that occur (the profile matrix shows every column)."""
    rows = []
    for level, counts in report["summary"].items():
        shown = " ".join(f'{badge(o)}&nbsp;{counts[o]}' for o in OUTCOME_ORDER if counts.get(o))
        rows.append(f'<tr><th>{esc(level)}</th><td>{shown or "<span class=zero>none</span>"}</td></tr>')
    return f'<table class="levels">{"".join(rows)}</table>'


def html_filters(report: dict[str, Any]) -> str:
    statuses: dict[str, int] = {}
    for entry in report["requirements"]:
        statuses[entry["status"]] = statuses.get(entry["status"], 0) + 1
    outcomes = "".join(f'<button type="button" data-set-outcome="{esc(o)}">{badge(o)} {statuses[o]}</button>'
                       for o in OUTCOME_ORDER if statuses.get(o))
    profiles = "".join(f'<button type="button" data-set-profile="{esc(p)}">{esc(p)}</button>'
                       for p in by_run_profile(report))
    bindings = "".join(f'<button type="button" data-set-binding="{esc(b)}">{esc(binding_title(b))}</button>'
                       for b in certified_bindings(report))
    return ('<div class="filters" id="filters"><div><span class="what">outcome</span>'
            f'<button type="button" data-set-outcome="">all</button>{outcomes}</div>'
            '<div><span class="what">profile</span>'
            f'<button type="button" data-set-profile="">all</button>{profiles}</div>'
            + ('<div><span class="what">binding</span>'
               f'<button type="button" data-set-binding="">all</button>{bindings}</div>' if bindings else "")
            + '<div class="showing" id="filter-state" aria-live="polite"></div></div>')


def binding_cell(entry: dict[str, Any], binding: str) -> str:
    """A requirement's status over one certified binding, its message as the tooltip; "—": it does not run over
    that binding."""
    status = (entry.get("bindings") or {}).get(binding)
    if status is None:
        return '<td class="b"><span class="zero" title="does not apply">—</span></td>'
    said = (entry.get("binding_messages") or {}).get(binding)
    tip = f' title="{esc(first_line(said))}"' if said else ""
    return f'<td class="b" data-binding="{esc(binding)}"{tip}>{badge(status)}</td>'


def html_requirement_rows(report: dict[str, Any], opened: set[str]) -> str:
    """Every requirement: its own status (the worst over the bindings), then its status over each certified
    binding side by side."""
    certified = certified_bindings(report)
    rows = []
    for e in report["requirements"]:
        ident = (f'<button type="button" class="link" data-open="req-{esc(e["id"])}">{esc(e["id"])}</button>'
                 if e["id"] in opened else esc(e["id"]))
        rows.append(f'<tr data-id="{esc(e["id"])}" data-status="{esc(e["status"])}" data-profile="{esc(run_profile(e))}"'
                    f'{binding_attrs(e)}><td class="id">{ident}</td><td>{esc(e["level"])}</td><td>{badge(e["status"])}'
                    f'</td>{"".join(binding_cell(e, b) for b in certified)}'
                    f'<td>{esc(e["title"])}<div class="source">{html_source(e["source"])}</div></td>'
                    f'<td class="msg">{esc(first_line(e["message"]))}</td></tr>')
    columns = "".join(f'<th class="b">{esc(binding_title(b))}</th>' for b in certified)
    return ('<table class="all"><thead><tr><th>id</th><th>level</th><th>status</th>' + columns
            + '<th>requirement · source</th><th>message</th></tr></thead><tbody>' + "".join(rows)
            + f'<tr id="no-match" hidden><td colspan="{5 + len(certified)}">No requirement matches the filter.</td>'
            "</tr></tbody></table>")


def banner_line(report: dict[str, Any], roots: list[Root]) -> str:
    statuses: dict[str, int] = {}
    for entry in report["requirements"]:
        statuses[entry["status"]] = statuses.get(entry["status"], 0) + 1
    failing = statuses.get("FAIL", 0) + statuses.get("ERROR", 0)
    parts = []
    expected = sum(1 for e in report["requirements"] if e.get("baseline") == "expected")
    if failing:
        parts.append(f"{failing} failing ({statuses.get('FAIL', 0)} FAIL, {statuses.get('ERROR', 0)} ERROR) "
                     f"in {plural(len(roots), 'root cause')}"
                     + (f", {expected} expected by the baseline" if expected else ""))
    named = [("PASS", "passed"), ("WARNING", ""), ("NON_STRICT", "non-strict"), ("NOT_TESTED", "not tested"),
             ("UNSUPPORTED", "unsupported"), ("SKIPPED", "skipped")]
    parts += [f"{statuses[o]} {word}" if word else plural(statuses[o], "warning") for o, word in named if statuses.get(o)]
    untested = sum(1 for e in report["requirements"] if e["level"] == "MUST" and untested_over(e))
    if untested:
        parts.append(f"{untested} MUST not tested over a certified binding")
    return " · ".join(parts)


def html_regressions(report: dict[str, Any]) -> list[str]:
    section = report.get("regressions")
    if not section:
        return []
    found = section.get("found") or []
    parts = [f"<h2>Regressions against {esc(section['against'])}</h2>",
             f"<p>{len(found)} of {len(section.get('compared') or [])} scenario(s) differ from their cassettes"
             + (" (the run fails).</p>" if found else ".</p>")]
    for item in found:
        more = (f'<p class="meta">{esc(item["lines_omitted"])} more line(s): run <code>streamcert diff</code> '
                "on the two cassettes</p>") if item.get("lines_omitted") else ""
        parts.append(f'<div class="regression"><h3>{esc(item["scenario"])} — {esc(item["differences"])} '
                     f'difference(s)</h3><div class="meta">{esc(item.get("cassette") or "")} · '
                     f'{esc(item.get("test") or "")}</div><pre>{esc(chr(10).join(item.get("lines") or []))}</pre>'
                     f"{more}</div>")
    if section.get("without_cassette"):
        parts.append(f'<p class="meta">No earlier cassette: {esc(", ".join(section["without_cassette"]))}</p>')
    return parts


def html_notices(report: dict[str, Any]) -> list[str]:
    """What the run says beside the requirements: the baseline's stale and unknown entries, findings on ids
    the catalogue does not know."""
    parts = []
    if report.get("stale_baseline"):
        reasons = {e["id"]: e.get("baseline_reason") for e in report["requirements"]}
        items = "".join(f"<li><code>{esc(i)}</code>" + (f" — {esc(reasons[i])}" if reasons.get(i) else "") + "</li>"
                        for i in report["stale_baseline"])
        parts += ['<div class="notice bad"><h2>Stale baseline entries (now passing)</h2>'
                  f"<p>These pass now: remove them from the baseline. The run fails until then.</p><ul>{items}</ul></div>"]
    if report.get("baseline_unknown"):
        items = "".join(f"<li><code>{esc(i)}</code></li>" for i in report["baseline_unknown"])
        parts += [f'<div class="notice"><h2>Baseline entries not in the catalogue</h2><ul>{items}</ul></div>']
    if report.get("unknown_findings"):
        items = "".join(f"<li><code>{esc(f.get('id'))}</code> {badge(str(f.get('status')))} "
                        f"{esc(first_line(str(f.get('message') or '')))}</li>" for f in report["unknown_findings"])
        parts += ['<div class="notice bad"><h2>Findings on ids the catalogue does not know (a harness bug)</h2>'
                  f"<ul>{items}</ul></div>"]
    return parts


def render_html(report: dict[str, Any]) -> str:
    verdict = report["verdict"]
    failures = entries_with(report, FAILURES)
    roots = group(failures, (report.get("target") or {}).get("a2a")) if not report.get("could_not_run") else []
    meta = (f'<p class="meta">{esc(target_line(report))} · catalogue {esc(report["catalogue"]["version"])} · '
            f'{esc(report["tool"]["name"])} {esc(report["tool"]["version"])} · {esc(report["started"])} → '
            f'{esc(report["finished"])}</p>')
    if report.get("could_not_run"):  # one section, not one per requirement with the same reason
        errors = entries_with(report, (Outcome.ERROR.value,))
        sections = [f'<header class="banner v-{esc(verdict)}"><h1>streamcert verdict: {esc(verdict)}</h1>'
                    f"<p>could not run: {esc(first_line(report['could_not_run']))}</p></header>", meta,
                    '<section><h2>Could not run</h2>', f"<pre class=\"message\">{esc(report['could_not_run'])}</pre>",
                    f"<p>Nothing was judged: the {len(errors)} selected requirements are ERROR with this reason.</p>",
                    "<h3>By level</h3>", html_level_table(report), "</section>"]
        return _html_page(verdict, sections)
    soft = entries_with(report, SOFT_FINDINGS)
    opened = {e["id"] for e in failures + soft}
    claim = verdict_claim(report).removeprefix(verdict)  # " · A2A over JSON-RPC · 59/59 MUST"
    note = not_certified_note(report)
    sections = [f'<header class="banner v-{esc(verdict)}"><h1>streamcert verdict: {esc(verdict)}{esc(claim)}</h1>'
                f"<p>{esc(banner_line(report, roots))}</p>"
                + (f"<p>Interrupted: {esc(report['interrupted'])}.</p>" if report.get("interrupted") else "")
                + (f"<p><strong>Root cause: {esc(roots[0].cause)}.</strong> Likely fix: {esc(roots[0].fix or '')}</p>"
                   if roots and roots[0].cause else "")
                + (f'<p class="not-certified">{esc(note[0].upper() + note[1:])}.</p>' if note else "")
                + "</header>", meta]
    sections += html_notices(report)
    sections += html_regressions(report)
    if roots:
        sections += [f'<section data-group="section"><h2>Failures by root cause <span class="count">'
                     f'{plural(len(failures), "requirement")}, {plural(len(roots), "root cause")}</span></h2>'
                     '<p class="meta">Grouping is presentation only: every requirement keeps its own status. '
                     "Requirements share a root when their evidence names the same first frame; the first in "
                     "catalogue order heads it.</p>",
                     *[html_root(r) for r in roots], "</section>"]
    if soft:
        sections += ['<section data-group="section"><h2>Warnings and non-strict readings '
                     f'<span class="count">{len(soft)}</span></h2>',
                     *[f'<div class="root" data-group="root">{html_requirement(e)}</div>' for e in soft], "</section>"]
    # the failures come first (the first screen shows what broke), then the counts
    sections += ['<section class="overview"><div><h2>By profile</h2>', html_matrix(report),
                 '</div><div><h2>By level</h2>', html_level_table(report), "</div>",
                 *(['<div id="by-binding"><h2>By binding</h2>', html_binding_table(report), "</div>"]
                   if report.get("bindings") is not None else []),
                 "</section>", html_filters(report)]
    sections += ['<section><h2>All requirements</h2>', html_requirement_rows(report, opened), "</section>"]
    return _html_page(verdict, sections)


# -- the page ---------------------------------------------------------------------------------------------

_CSS = """
:root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--pass:#1a7f37;--fail:#cf222e;--warn:#9a6700;
--error:#8a1c7c;--info:#0969da;--todo:#b35900;--na:#6e7781}
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);margin:0 auto;padding:24px 32px 64px;
max-width:1280px}
[hidden]{display:none!important}
h1{margin:0;font-size:28px}h2{font-size:20px;margin:32px 0 10px}h3{font-size:16px}h4{margin:18px 0 6px;font-size:14px}
code,pre{font:13px/1.45 ui-monospace,"SF Mono",Menlo,Consolas,monospace}
.banner{padding:18px 24px;border-radius:10px;color:#fff}.banner p{margin:6px 0 0;font-size:16px}
.v-PASS{background:var(--pass)}.v-FAIL{background:var(--fail)}.v-INCOMPLETE{background:var(--todo)}
.meta{color:var(--muted);font-size:13px;margin:8px 0}
table{border-collapse:collapse}td,th{border-bottom:1px solid var(--line);padding:5px 10px;text-align:left;
vertical-align:top}th{font-weight:600;background:var(--soft)}td.n{text-align:right;font-variant-numeric:tabular-nums}
.zero{color:#c4ccd4}td.total{color:var(--muted)}
.overview{display:flex;gap:20px 48px;flex-wrap:wrap;align-items:flex-start}.overview h2{margin-top:24px}
.matrix td,.matrix th{padding:4px 8px}
.matrix th button.col{all:unset;cursor:pointer;font-size:11px;letter-spacing:.02em;padding:2px 3px;border-radius:4px}
.matrix tr[data-row-profile]>th{cursor:pointer;white-space:nowrap}
.matrix button.cell{all:unset;cursor:pointer;min-width:2.2em;display:inline-block;text-align:right;padding:0 5px;
border-radius:4px;font-weight:600}
.matrix button.cell:hover,.matrix th button.col:hover,.matrix tr[data-row-profile]>th:hover{background:#ddf4ff}
.matrix button[aria-pressed=true]{outline:2px solid var(--info);background:#ddf4ff}
.levels th{width:5em}.levels td{line-height:1.9}
.badge{display:inline-block;font:600 11px/1.6 system-ui,sans-serif;letter-spacing:.03em;padding:0 7px;
border-radius:10px;color:#fff;background:var(--na);white-space:nowrap}
.badge.s-PASS{background:var(--pass)}.badge.s-FAIL{background:var(--fail)}.badge.s-ERROR{background:var(--error)}
.badge.s-WARNING{background:var(--warn)}.badge.s-NON_STRICT{background:var(--info)}
.badge.s-NOT_TESTED{background:var(--todo)}.badge.s-SKIPPED{background:#8c959f}
button.s-FAIL{color:var(--fail)}button.s-ERROR{color:var(--error)}button.s-PASS{color:var(--pass)}
button.s-WARNING{color:var(--warn)}button.s-NOT_TESTED{color:var(--todo)}button.s-NON_STRICT{color:var(--info)}
.filters{background:#fff;border:1px solid var(--line);border-radius:10px;
padding:10px 14px;margin:28px 0 8px;display:flex;flex-direction:column;gap:4px;box-shadow:0 2px 8px rgba(0,0,0,.06)}
.filters .what{display:inline-block;width:5.5em;color:var(--muted);font-size:13px}
.filters button{font:13px system-ui,sans-serif;border:1px solid var(--line);background:#fff;border-radius:14px;
padding:2px 10px;margin:2px 4px 2px 0;cursor:pointer;color:var(--fg)}
.filters button:hover{background:var(--soft)}
.filters button[aria-pressed=true]{background:#ddf4ff;border-color:var(--info);font-weight:600}
.showing{font-size:13px;color:var(--muted)}
h2 .count{font-size:14px;font-weight:400;color:var(--muted);margin-left:8px}
.root{margin:10px 0}.root.grouped{border:1px solid #f5c2c0;border-left:4px solid var(--fail);border-radius:8px;
padding:8px 12px;background:#fffbfb}
.root-head{font-size:14px;margin:2px 0 8px}
.members{margin:4px 0 2px 32px}.members-label{font-size:13px;color:var(--muted);margin:10px 0 4px}
details.req{border:1px solid var(--line);border-radius:8px;background:#fff;margin:6px 0}
details.req>summary{cursor:pointer;padding:8px 12px 8px 30px;list-style:none;position:relative}
details.req>summary::-webkit-details-marker{display:none}
details.req>summary::before{content:"\\25B8";position:absolute;left:11px;top:8px;color:var(--muted)}
details.req[open]>summary::before{content:"\\25BE"}
details.req>summary:hover{background:var(--soft)}
details.req[open]>summary{border-bottom:1px solid var(--line);background:var(--soft);border-radius:8px 8px 0 0}
summary .id{font-weight:600;margin:0 6px}summary .title{font-weight:500}
summary .first{display:block;color:var(--muted);font-size:13px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.flag{margin-left:8px;font-size:12px;border:1px solid var(--warn);color:var(--warn);border-radius:10px;padding:0 6px}
.body{padding:4px 16px 14px}
pre{background:var(--soft);border:1px solid var(--line);border-radius:6px;padding:8px 10px;margin:4px 0;
white-space:pre-wrap;overflow-wrap:anywhere;max-height:30em;overflow:auto}
pre.message{background:#fff8f8;border-color:#f5c2c0}pre.message.soft{background:#fffbeb;border-color:#eed89a}
.frames{display:grid;grid-template-columns:repeat(auto-fill,minmax(540px,1fr));gap:6px 16px}
.frame{margin:6px 0;min-width:0}.frame-head{font-size:13px;color:var(--muted)}
.frame-head strong{color:var(--fg);font-weight:600}.frame .note{font-size:13px;margin:1px 0 3px}
.frame .note code{background:#ffd8b5;border-radius:2px;padding:0 3px}
.frame .sent{font-size:12px;color:var(--muted);overflow-wrap:anywhere}.frame .sent code{color:var(--fg)}
.tag{font:12px ui-monospace,monospace;background:var(--soft);border:1px solid var(--line);border-radius:4px;
padding:0 4px;margin-right:2px}
.root-tag{font-size:11px;font-weight:600;color:#fff;background:var(--fail);border-radius:4px;padding:1px 5px;
margin-right:6px}
mark.named{background:#ffd8b5;outline:1px solid #e16f24;border-radius:2px;color:inherit}
.frame.whole pre{border:2px solid #e16f24;background:#fff8f2}
.cut{color:var(--muted)}
dl.measured{display:grid;grid-template-columns:max-content 1fr;gap:1px 14px;font:12px ui-monospace,monospace;
margin:8px 0}dl.measured dt{color:var(--muted)}dl.measured dd{margin:0}
details.how{margin:10px 0;font-size:13px}details.how summary{cursor:pointer;color:var(--info)}
figure.timing{margin:12px 0;max-width:100%;overflow-x:auto}figure.timing figcaption{font-size:12px;color:var(--muted)}
figure svg{font:11px system-ui,sans-serif;background:#fff;border:1px solid var(--line);border-radius:6px}
svg .head{font-weight:600;fill:var(--fg);font-size:12px}svg .label{fill:var(--fg)}
svg .tick,svg .value,svg .frame-no{fill:var(--muted)}svg .value{font-weight:600}
svg .axis{stroke:#8c959f}svg .grid{stroke:#eaeef2}svg .span{stroke:#9ec5f4;stroke-width:2}
svg .dot{fill:var(--info);stroke:#fff;stroke-width:1.5}
svg .band{fill:#dafbe1;stroke:var(--pass);stroke-dasharray:3 2}svg .lasted{fill:#d0d7de}
svg .end{stroke-width:3}svg .end.bad,svg .end.warn{stroke:var(--fail)}svg .end.ok{stroke:var(--pass)}
svg .bar.ok{fill:#4ac26b}svg .bar.warn{fill:#d4a72c}svg .bar.bad{fill:#e5534b}
svg .limit{stroke-width:1.5;stroke-dasharray:4 3}svg .limit.fail{stroke:var(--fail)}svg .limit.warn{stroke:var(--warn)}
svg .limit.spec{stroke:var(--fg)}svg .limit-label{font-size:10px;fill:var(--muted)}
svg .limit-label.fail,svg .limit-label.end{fill:var(--fail)}svg .limit-label.warn{fill:var(--warn)}
table.all{width:100%;font-size:14px}table.all thead th{position:sticky;top:0}
table.all td.id{white-space:nowrap;font:13px ui-monospace,monospace}table.all td:nth-child(-n+3){width:1%}
table.all .source{font-size:12px;color:var(--muted)}
table.all td.msg{font-size:13px;color:var(--muted);width:30%;overflow-wrap:anywhere}
button.link{all:unset;cursor:pointer;color:var(--info);text-decoration:underline}
.notice{border:1px solid var(--line);border-radius:8px;padding:4px 16px;margin:16px 0}
.notice.bad{border-color:var(--fail);background:#fff8f8}.notice h2{margin-top:10px;font-size:17px}
.regression{border-left:4px solid var(--warn);padding-left:12px;margin:12px 0}
.over{margin-left:8px;font-size:12px;border:1px solid var(--info);color:var(--info);border-radius:10px;padding:0 6px}
ul.by-binding{list-style:none;padding:0;margin:6px 0}ul.by-binding li{margin:2px 0}
ul.by-binding .first{display:inline;color:var(--muted);font-size:13px;margin-left:6px}
table.all th.b,table.all td.b{width:1%;white-space:nowrap;text-align:center}
"""

# Shows and hides what the page already holds; reads only data attributes; writes text, never markup.
_JS = """
(function () {
  "use strict";
  var state = {outcome: "", profile: "", binding: ""};
  var KEYS = [["outcome", "data-set-outcome"], ["profile", "data-set-profile"], ["binding", "data-set-binding"]];
  var CONTROLS = "[data-set-outcome],[data-set-profile],[data-set-binding]";
  var items = Array.prototype.slice.call(document.querySelectorAll("[data-status][data-profile]"));
  var rows = items.filter(function (el) { return el.tagName === "TR"; });
  // With a binding chosen, a requirement is read by its status over it; one that does not run over it is hidden.
  function statusOf(el) {
    return state.binding ? el.getAttribute("data-b-" + state.binding) : el.getAttribute("data-status");
  }
  function matches(el) {
    var status = statusOf(el);
    return status !== null && (!state.outcome || status === state.outcome) &&
      (!state.profile || el.getAttribute("data-profile") === state.profile);
  }
  function apply() {
    var shown = 0;
    items.forEach(function (el) {
      el.hidden = !matches(el);
      if (!el.hidden && el.tagName === "TR") { shown += 1; }
    });
    ["root", "section"].forEach(function (kind) {
      document.querySelectorAll("[data-group=" + kind + "]").forEach(function (g) {
        g.hidden = !g.querySelector("[data-status][data-profile]:not([hidden])");
      });
    });
    document.querySelectorAll(CONTROLS).forEach(function (b) {
      var on = KEYS.every(function (k) { var v = b.getAttribute(k[1]); return v === null || v === state[k[0]]; });
      b.setAttribute("aria-pressed", on ? "true" : "false");
    });
    var none = document.getElementById("no-match");
    if (none) { none.hidden = shown > 0; }
    var note = document.getElementById("filter-state");
    if (note) {
      var what = [state.outcome, state.profile, state.binding && "over " + state.binding].filter(Boolean).join(" · ");
      note.textContent = "showing " + shown + " of " + rows.length + " requirements" + (what ? " (" + what + ")" : "");
    }
  }
  document.addEventListener("click", function (ev) {
    var target = ev.target instanceof Element ? ev.target : null;
    if (!target) { return; }
    var open = target.closest("[data-open]");
    if (open) {
      var details = document.getElementById(open.getAttribute("data-open"));
      if (details) { details.open = true; details.scrollIntoView({block: "start"}); }
      return;
    }
    var control = target.closest(CONTROLS);
    var rowHead = target.closest("tr[data-row-profile] > th");
    if (control) {
      // A control sets what it names (a matrix cell: an outcome and a profile or binding); the same again clears it.
      var named = KEYS.filter(function (k) { return control.getAttribute(k[1]) !== null; });
      var same = named.every(function (k) { return state[k[0]] === control.getAttribute(k[1]); });
      named.forEach(function (k) { state[k[0]] = same ? "" : control.getAttribute(k[1]); });
    } else if (rowHead) {
      var row = rowHead.parentElement.getAttribute("data-row-profile");
      state.profile = state.profile === row ? "" : row;
    } else {
      return;
    }
    apply();
  });
  apply();
})();
"""


def _sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


# Nothing to fetch, and only this page's own style sheet and script may apply or run.
_CSP = f"default-src 'none'; style-src '{_sha256(_CSS)}'; script-src '{_sha256(_JS)}'; base-uri 'none'; form-action 'none'"


def _html_page(verdict: str, sections: list[str]) -> str:
    return ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{esc(_CSP)}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>streamcert: {esc(verdict)}</title><style>{_CSS}</style></head>"
            f"<body>{''.join(sections)}<script>{_JS}</script></body></html>\n")
