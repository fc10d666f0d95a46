"""A timing rule's figure on report.html (`timing_figure`): the arrival times its evidence carries and the
measured values with the limits the rule recorded beside them (GAUGES), as a small SVG; nothing is drawn that the
report does not hold."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .text import esc, is_number, short_test

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
    return 1.0 - tolerance if is_number(tolerance) else None


# The timing rules' measured values (rules/a2a/stream.py, rules/progress/progress.py) and what bounds each.
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


FIG_W, LABEL_W, PLOT_R, ROW_H = 760, 250, 700, 24


def _gauges_of(measured: dict[str, Any]) -> list[tuple[Gauge, str, str]]:
    """(gauge, measured key, caption) for each gauge the measured values hold."""
    found = []
    for gauge in GAUGES:
        for key in measured:
            hit = re.fullmatch(gauge.measure, key)
            if hit and (is_number(measured[key]) or isinstance(measured.get(gauge.items), dict)):
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
    return [(limit, float(v)) for limit in gauge.limits if is_number(v := limit.value(measured))]


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
        if is_number(item.get("t")):
            rows.setdefault((short_test(str(item.get("test") or "")), str(item.get("exchange") or "")), []).append(item)
    first = entry["evidence"][0]
    spans = [(key, caption) for key, caption in SPANS.items() if is_number(measured.get(key))
             and is_number(first.get("t"))]
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
        values = [(str(k), float(v)) for k, v in measured[gauge.items].items() if is_number(v)]
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
    anchored = [g for g in gauges if g[0].anchored and is_number(first_t)]
    if any(is_number(item.get("t")) for item in evidence):
        _draw_arrivals(fig, entry, anchored)
    else:
        anchored = []
    for gauge, key, caption in gauges:
        if (gauge, key, caption) not in anchored:
            _draw_gauge(fig, gauge, key, caption, measured)
    return (f'<figure class="timing">{fig.svg("timing of " + entry["id"])}<figcaption>Dots: when each frame of the '
            "evidence arrived. Bars: the measured values; dashed lines: their limits (red: the rule fails past it; "
            "amber: it warns past it). The figures are those of the first decisive finding.</figcaption></figure>")
