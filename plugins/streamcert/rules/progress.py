"""PROG-: the progress objects of a live progress stream (seed 003): phases, `since`, fields, the
turn's last progress, the status beside it, and pacing judged on arrival times.

Timing rules read only event arrival times (`t`) and the script's durations; their tolerances come
from the catalogue and every timing finding records what it measured.
"""

from __future__ import annotations

from typing import Any

from ..framelog import END_CLOSED, END_TIME_LIMIT, FrameLog
from ..outcomes import Finding, Outcome
from . import RuleContext, ev_evidence, ex_evidence, fail, needed, ok, outcome, quote, rule
from .progressview import (
    _MISSING,
    ENDINGS,
    LABEL,
    PACING_INTERVAL_S,
    PHASES,
    Frame,
    ProgressView,
    is_int,
    is_number,
    view,
)

SEED = "003_0323612bcd959943.txt"
MS_RANGE = (10**12, 10**14)  # Unix milliseconds from 2001-09-09 to the year 5138

# The phases' data (§2): field → (kind, required). Kinds: int, number, str, or a tuple of fixed words.
SCHEMA: dict[str, dict[str, tuple[Any, bool]]] = {
    "queued": {"ahead": ("int", False)},
    "waiting_for_model": {"model": ("str", True), "reason": (("busy", "slots", "group"), True)},
    "loading_model": {"model": ("str", True)},
    "reading_prompt": {"done": ("int", False), "total": ("int", False)},
    "thinking": {},
    "writing": {"rate": ("number", False)},
    "running_tool": {"tool": ("str", True), "what": ("str", False)},
    "waiting_for_person": {"what": (("approval", "question", "plan"), True), "tool": ("str", False)},
    "waiting_for_subagents": {"running": ("int", True)},
    "compacting": {},
    "retrying": {"reason": ("str", True), "in": ("int", True), "attempt": ("int", False)},
    "stopped": {"reason": (("person", "steps", "budget"), False)},
    "failed": {"reason": ("str", True)},
}
LINE_BREAKS = ("\n", "\r", "\u2028", "\u2029")


def _view(log: FrameLog, ctx: RuleContext, *ids: str) -> tuple[ProgressView | None, list[Finding]]:
    ex, errors = needed(log, LABEL, *ids)
    if ex is None:
        return None, errors
    if ex.status != 200 or not ex.is_sse:
        return None, [Finding(r, Outcome.ERROR, f"the progress URL answered HTTP {ex.status} {ex.content_type!r}, "
                              "not an event stream: the suite could not drive it", evidence=[ex_evidence(ex)])
                      for r in ids]
    return view(log, ex, ctx.script or log.script), []


def _ev(v: ProgressView, frame: Frame, note: str = "") -> dict[str, Any]:
    return ev_evidence(v.exchange, frame.ev, note)


def _src(section: str) -> str:
    return f"({SEED} · {section})"


# -- the object ----------------------------------------------------------------------------------

@rule("PROG-001")
def phase_names(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-001")
    if v is None:
        return early
    bad = []
    for f in v.frames:
        if f.progress is not None and not isinstance(f.progress, dict):
            bad.append((f, f"progress is {type(f.progress).__name__}, neither an object nor null"))
        elif f.obj is not None and f.phase not in PHASES:
            bad.append((f, f"phase {f.phase!r} is not one of the thirteen"))
    if bad:
        return [fail("PROG-001", f"{len(bad)} frame(s) show no known phase, first: {bad[0][1]} "
                     f"{_src('1. The object: phase — one of the thirteen names below, never another')}",
                     [_ev(v, f, why) for f, why in bad[:3]])]
    shown = sorted({f.phase for f in v.progress_frames})
    return [ok("PROG-001", f"{len(v.progress_frames)} progress objects, phases: {', '.join(shown)}")] if shown else []


@rule("PROG-002")
def since_unix_ms(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-002")
    if v is None:
        return early
    bad, loose = [], []
    for f in v.progress_frames:
        since = f.obj.get("since")
        if isinstance(since, float) and since.is_integer() and MS_RANGE[0] <= since < MS_RANGE[1]:
            loose.append(f)
        elif not is_int(since):
            bad.append((f, f"since is {since!r} ({type(since).__name__}), not an integer"))
        elif not MS_RANGE[0] <= since < MS_RANGE[1]:
            unit = "seconds" if 10**9 <= since < 10**11 else "no plausible unit"
            bad.append((f, f"since {since} is not Unix milliseconds (reads as {unit})"))
    if bad:
        return [fail("PROG-002", f"{len(bad)} progress object(s) with a bad since, first: {bad[0][1]} "
                     f"{_src('1. The object: since — Unix time in milliseconds (an integer)')}",
                     [_ev(v, f, why) for f, why in bad[:3]])]
    if loose:
        return [outcome("PROG-002", Outcome.NON_STRICT, f"since written with a fraction part ({loose[0].obj['since']!r}) "
                        "on an integral value", [_ev(v, loose[0])],
                        reading="an integral number written with a fraction part is accepted")]
    return [ok("PROG-002", f"since is integer Unix milliseconds on all {len(v.progress_frames)} objects")] \
        if v.progress_frames else []


def _kind_ok(value: Any, kind: Any) -> tuple[bool, bool]:
    """(acceptable, strict) for a non-null value of a field of this kind."""
    if isinstance(kind, tuple):
        return value in kind, True
    if kind == "str":
        return isinstance(value, str), True
    if kind == "number":
        return is_number(value), True
    if kind == "int":
        if is_int(value):
            return True, True
        return isinstance(value, float) and value.is_integer(), False
    return False, False


@rule("PROG-003")
def phase_fields(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-003")
    if v is None:
        return early
    bad, loose = [], []
    for f in v.progress_frames:
        schema = SCHEMA.get(f.phase)
        if schema is None:
            continue  # an unknown phase is PROG-001's
        for name, (kind, required) in schema.items():
            if name not in f.obj:
                if required:
                    bad.append((f, f"{f.phase} without its field {name!r}"))
                continue
            value = f.obj[name]
            if value is None:
                continue  # PROG-004's
            good, strict = _kind_ok(value, kind)
            want = f"one of {', '.join(kind)}" if isinstance(kind, tuple) else f"a {kind}"
            if not good:
                bad.append((f, f"{f.phase}.{name} is {value!r}, not {want}"))
            elif not strict:
                loose.append((f, f"{f.phase}.{name} is {value!r}: an integer written as a float"))
    if bad:
        return [fail("PROG-003", f"{len(bad)} field(s) missing or of the wrong type, first: {bad[0][1]} "
                     f"{_src('1. The object: every field named here, with these names and these types')}",
                     [_ev(v, f, why) for f, why in bad[:3]])]
    if loose:
        return [outcome("PROG-003", Outcome.NON_STRICT, loose[0][1], [_ev(v, loose[0][0])],
                        reading="an int written as an integral float is accepted")]
    return [ok("PROG-003", "every listed field present with its type")] if v.progress_frames else []


@rule("PROG-004")
def no_null_fields(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-004")
    if v is None:
        return early
    bad = [(f, [k for k, val in f.obj.items() if val is None]) for f in v.progress_frames]
    bad = [(f, keys) for f, keys in bad if keys]
    if bad:
        f, keys = bad[0]
        return [fail("PROG-004", f"{len(bad)} progress object(s) carry null fields, first: {f.phase} with "
                     f"{', '.join(keys)} null {_src('1. The object: a field that is not known is left out (never null)')}",
                     [_ev(v, f) for f, _ in bad[:3]])]
    return [ok("PROG-004", "no field is null")] if v.progress_frames else []


@rule("PROG-005")
def no_guessed_fields(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-005")
    if v is None or v.plan is None:
        return early
    judged, bad = 0, []
    for exp in v.plan.expected:
        if exp.step != "tool" or (isinstance(exp.arg, dict) and isinstance(exp.arg.get("what"), str)):
            continue
        for inst in exp.seen:
            judged += 1
            for f in inst.frames:
                if f.obj.get("what") is not None:
                    bad.append((f, f"the script's call of {exp.match.get('tool')!r} (step {exp.index + 1}) has no "
                                f"title, yet running_tool shows what {f.obj['what']!r}"))
                    break
    if bad:
        why = _src("1. The object: a field that is not known is left out (never a guess)")
        return [fail("PROG-005", f"{bad[0][1]} {why}",
                     [_ev(v, f) for f, _ in bad[:3]])]
    return [ok("PROG-005", f"{judged} call(s) without a title shown without what")] if judged else []


@rule("PROG-006")
def one_line_texts(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-006")
    if v is None:
        return early
    judged, bad = 0, []
    for f in v.progress_frames:
        for name, limit in (("what", 80),) if f.phase == "running_tool" else \
                (("reason", None),) if f.phase in ("failed", "retrying") else ():
            text = f.obj.get(name)
            if not isinstance(text, str):
                continue
            judged += 1
            if any(b in text for b in LINE_BREAKS):
                bad.append((f, f"{f.phase}.{name} has more than one line: {quote(text, 120)!r}"))
            elif limit and len(text) > limit:
                bad.append((f, f"{f.phase}.{name} is {len(text)} characters, more than {limit}: {quote(text, 120)!r}"))
    if bad:
        why = _src("2. The phases: what — one line, at most 80 characters; reason — one line")
        longest = max(len(f.obj.get("what") or "") for f, _ in bad)
        return [fail("PROG-006", f"{bad[0][1]} {why}", [_ev(v, f) for f, _ in bad[:3]], measured={"longest": longest})]
    return [ok("PROG-006", f"{judged} one-line text(s) within their limits")] if judged else []


# -- since --------------------------------------------------------------------------------------

@rule("PROG-007")
def since_kept_on_data(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-007")
    if v is None:
        return early
    bad = []
    for inst in v.instances:
        if inst.repeat and inst.expected is not None:
            bad.append(inst)
    kept = sum(len(inst.data_updates()) for inst in v.instances)
    if bad:
        inst = bad[0]
        before = next(i for i in reversed(v.instances[:v.instances.index(inst)]) if i.expected is inst.expected)
        return [fail("PROG-007", f"{inst.phase}: since changed from {before.frames[-1].obj.get('since')} to "
                     f"{inst.first.obj.get('since')} while the script does one thing (step {inst.expected.index + 1}, "
                     f"{inst.expected.step}); {len(bad)} such change(s) "
                     f"{_src('1. The object: a change of the phase data keeps since')}",
                     [_ev(v, before.frames[-1], "before"), _ev(v, inst.first, "since changed")],
                     measured={"since_changes_on_data": len(bad), "data_changes_kept": kept})]
    if not kept:
        return []
    return [ok("PROG-007", f"since kept across {kept} data-only change(s)", measured={"data_changes_kept": kept})]


@rule("PROG-008")
def since_renewed(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-008")
    if v is None:
        return early
    same_ms = ctx.tolerance("PROG-008", "same_since_s", 0.05)
    bad, renewed = [], 0
    frames = v.progress_frames
    for before, after in zip(v.instances, v.instances[1:]):
        a, b = before.frames[-1], after.first
        if b.ev.index != a.ev.index + 1 and any(f.obj is None for f in v.frames if a.ev.index < f.ev.index < b.ev.index):
            continue  # a null between: another turn's business
        sa, sb = a.obj.get("since"), b.obj.get("since")
        if not (is_number(sa) and is_number(sb)):
            continue  # PROG-002's
        # The same millisecond is a new since too when the two phases really began together: equal values
        # count as kept only when the frames arrived further apart than the tolerance.
        if sb < sa or (sb == sa and b.t - before.first.t > same_ms):
            what = "a new phase" if a.phase != b.phase else "the same phase for another thing"
            bad.append((a, b, f"{what} ({a.phase} → {b.phase}) keeps since {sb}" if sb == sa else
                        f"{what} ({a.phase} → {b.phase}) has since {sb}, before the {sa} of the phase before"))
        else:
            renewed += 1
    # Calls of the same thing in a row are told apart by since alone: each must show.
    if v.plan is not None:
        exp = v.plan.expected
        for prev, cur in zip(exp, exp[1:]):
            if prev.same_thing(cur) and prev.seen and not cur.seen:
                last = prev.seen[-1].frames[-1]
                bad.append((last, last, f"the script runs {cur.step} {cur.match or ''} twice in a row (steps "
                            f"{prev.index + 1} and {cur.index + 1}); the stream shows one since {last.obj.get('since')}"))
    if bad:
        a, b, why = bad[0]
        src = _src("1. The object: a new phase, or the same phase for another thing, starts a new since")
        return [fail("PROG-008", f"{why} {src}",
                     [_ev(v, a, "before"), _ev(v, b, "after")] if a is not b else [_ev(v, a)])]
    return [ok("PROG-008", f"since renewed on {renewed} change(s) of phase or thing")] if frames else []


# -- when frames are sent ------------------------------------------------------------------------

@rule("PROG-009")
def data_pacing(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-009")
    if v is None:
        return early
    tol = ctx.tolerance("PROG-009", "span_tolerance_s", 0.15)
    fail_span = ctx.tolerance("PROG-009", "fail_span_s", 0.5)
    min_span, worst_window, most, min_gap = None, None, 0, None
    for inst in v.instances:
        ups = inst.data_updates()
        most = max(most, len(ups))
        for x, y in zip(ups, ups[1:]):
            gap = y.t - x.t
            min_gap = gap if min_gap is None else min(min_gap, gap)
        for i in range(len(ups) - 4):
            span = ups[i + 4].t - ups[i].t
            if min_span is None or span < min_span:
                min_span, worst_window = span, (inst, ups[i:i + 5])
    measured = {"min_span_5_s": None if min_span is None else round(min_span, 3), "most_data_updates": most,
                "min_gap_s": None if min_gap is None else round(min_gap, 3), "span_tolerance_s": tol,
                "fail_span_s": fail_span}
    if not any(inst.frames for inst in v.instances):
        return []
    if min_span is None:
        return [ok("PROG-009", f"no phase had five data-only updates (most: {most}): at most four a second",
                   measured=measured)]
    inst, window = worst_window
    evidence = [_ev(v, window[0], "first of five"), _ev(v, window[-1], "fifth")]
    text = (f"{inst.phase}: five consecutive data-only updates within {min_span:.3f} s (at most four a second "
            f"means at least 1 s)")
    if min_span <= fail_span:
        return [fail("PROG-009", f"{text} {_src('5. Where it is sent: a data-only change at most four times a second')}",
                     evidence, measured=measured)]
    if min_span < 1.0 - tol:
        return [outcome("PROG-009", Outcome.WARNING, f"{text}; past the tolerance of {tol:g} s but above "
                        f"{fail_span:g} s (a loaded machine can bunch frames)", evidence, measured=measured)]
    return [ok("PROG-009", f"five consecutive data-only updates span at least {min_span:.3f} s", measured=measured)]


@rule("PROG-010")
def changes_sent(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-010")
    if v is None or v.plan is None:
        return early
    tol = ctx.tolerance("PROG-010", "gap_tolerance_s", 0.35)
    min_phase = ctx.tolerance("PROG-010", "min_phase_s", 0.75)
    limit = PACING_INTERVAL_S + tol
    findings, gaps = [], {}
    for exp in v.plan.expected:
        if not exp.changing or not exp.seen:
            continue
        inst = exp.seen[0]
        times = [inst.first.t] + [f.t for f in inst.data_updates()]
        end = v.instance_end(inst)
        lasted = end - inst.first.t
        worst_gap = max(b - a for a, b in zip(times, times[1:] + [end]))
        gaps[f"{exp.phase}@{exp.index + 1}"] = round(worst_gap, 3)
        measured = {"max_gap_s": round(worst_gap, 3), "lasted_s": round(lasted, 3),
                    "data_frames": len(times) - 1, "gap_limit_s": round(limit, 3)}
        if len(times) == 1 and lasted >= min_phase:
            findings.append(fail("PROG-010", f"{exp.phase} (step {exp.index + 1}) lasted {lasted:.2f} s while its data "
                                 "kept changing, and no data-only frame was sent "
                                 f"{_src('5. Where it is sent: a frame is sent when the progress changes')}",
                                 [_ev(v, inst.first, "the phase's only frame")], measured=measured))
        elif worst_gap > limit:
            findings.append(outcome("PROG-010", Outcome.WARNING, f"{exp.phase} (step {exp.index + 1}): {worst_gap:.3f} s "
                                    f"without a frame while its data kept changing (pacing allows one every "
                                    f"{PACING_INTERVAL_S:g} s; tolerance {tol:g} s)", [_ev(v, inst.first)],
                                    measured=measured))
        else:
            findings.append(ok("PROG-010", f"{exp.phase} (step {exp.index + 1}): {len(times) - 1} data-only frame(s), "
                               f"longest gap {worst_gap:.3f} s", measured=measured))
    return findings


@rule("PROG-011")
def phase_at_once(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-011")
    if v is None or v.plan is None:
        return early
    tol = ctx.tolerance("PROG-011", "delay_tolerance_s", 0.15)
    fail_delay = ctx.tolerance("PROG-011", "fail_delay_s", 0.5)
    points: list[tuple[str, Frame, float]] = []  # (what, first frame, scripted start)
    for exp in v.plan.expected:
        first = next((i for i in exp.seen if not i.repeat), None)
        if first is not None:
            points.append((f"{exp.phase} (step {exp.index + 1})", first.first, exp.offset_s))
    if v.plan.ending == "finish":
        last_progress = v.progress_frames[-1] if v.progress_frames else None
        end = next((f for f in v.frames if f.progress is None and f.problem is None
                    and (last_progress is None or f.ev.index > last_progress.ev.index)), None)
        if end is not None:
            points.append(("the turn's end (null)", end, v.plan.end_s))
    if len(points) < 2:
        return []
    anchor = min(f.t - offset for _, f, offset in points)
    delays = [(what, f, f.t - offset - anchor) for what, f, offset in points]
    what, frame, worst = max(delays, key=lambda d: d[2])
    measured = {"max_phase_delay_s": round(worst, 3), "delay_tolerance_s": tol, "fail_delay_s": fail_delay,
                "delays_s": {w: round(d, 3) for w, _, d in delays}}
    text = f"{what} arrived {worst:.3f} s after the script's phase change"
    if worst > fail_delay:
        return [fail("PROG-011", f"{text} {_src('5. Where it is sent: a new phase at once')}", [_ev(v, frame)],
                     measured=measured)]
    if worst > tol:
        return [outcome("PROG-011", Outcome.WARNING, f"{text}, past the tolerance of {tol:g} s", [_ev(v, frame)],
                        measured=measured)]
    return [ok("PROG-011", f"every new phase within {worst * 1000:.0f} ms of the script's change", measured=measured)]


# -- the turn's end and the status -----------------------------------------------------------------

@rule("PROG-012")
def ending_stays(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-012")
    if v is None:
        return early
    ending = next((f for f in v.frames if f.phase in ENDINGS), None)
    scripted = v.plan is not None and v.plan.ending in ("stop", "fail")
    if ending is None:
        if scripted and v.exchange.end == END_CLOSED and v.frames:
            last = v.frames[-1]
            return [fail("PROG-012", f"the script ends the turn with {v.plan.ending}, but the stream's last progress is "
                         f"{quote(repr(last.progress), 120)} {_src('4: stopped/failed are the last progress of that turn')}",
                         [_ev(v, last)])]
        return []
    after = [f for f in v.frames if f.ev.index > ending.ev.index and f.progress != ending.progress]
    if after:
        f = after[0]
        src = _src("4. When each phase holds: they are the last progress of that turn and stay until the next one begins")
        return [fail("PROG-012", f"{ending.phase} is followed by progress {quote(repr(f.progress), 120)} in the same "
                     f"turn {src}",
                     [_ev(v, ending, ending.phase), _ev(v, f, "after it")])]
    return [ok("PROG-012", f"{ending.phase} is the turn's last progress")]


@rule("PROG-013")
def finished_ends_null(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-013")
    if v is None or v.plan is None or v.plan.ending != "finish" or not v.frames:
        return early
    last = v.frames[-1]
    if last.progress is None and last.problem is None:
        return [ok("PROG-013", "the finished turn ends with progress null")]
    cut = " (the suite cut the stream at its limit)" if v.exchange.end == END_TIME_LIMIT else ""
    return [fail("PROG-013", f"the turn finished but its last progress is {quote(repr(last.progress), 120)}{cut} "
                 f"{_src('4. When each phase holds: a turn that finished normally ends with null')}", [_ev(v, last)])]


@rule("PROG-014")
def status_beside(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-014")
    if v is None:
        return early
    bad = [(f, f.problem) for f in v.frames if f.problem]
    bad += [(f, "no status text beside progress" if f.status is _MISSING else f"status is {f.status!r}, not a text")
            for f in v.frames if not f.problem and not isinstance(f.status, str)]
    if not bad and v.plan is not None:
        shown = [f.status for f in v.frames]
        i = 0
        for text in v.plan.status_texts:
            while i < len(shown) and shown[i] != text:
                i += 1
            if i == len(shown):
                seen = sorted({s for s in shown if isinstance(s, str)})
                return [fail("PROG-014", f"the status text {text!r} set by the script never appears unchanged beside "
                             f"progress (texts seen: {quote(repr(seen), 200)}) "
                             f"{_src('5. Where it is sent: status stays as it was, its text unchanged')}",
                             [_ev(v, v.frames[-1])] if v.frames else [])]
    if bad:
        f, why = bad[0]
        return [fail("PROG-014", f"{len(bad)} frame(s) without the status text and progress side by side, first: {why} "
                     f"{_src('5. Where it is sent: every frame that carries the status text carries progress beside it')}",
                     [_ev(v, f) for f, _ in bad[:3]])]
    return [ok("PROG-014", f"status beside progress on all {len(v.frames)} frames")] if v.frames else []


@rule("PROG-015")
def phase_follows_steps(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    v, early = _view(log, ctx, "PROG-015")
    if v is None or v.plan is None or not v.frames:
        return early
    exp = v.plan.expected
    missing = [e for n, e in enumerate(exp) if not e.seen and not (n and exp[n - 1].same_thing(e) and exp[n - 1].seen)]
    if missing:
        e = missing[0]
        shown = [f"{i.phase}{'' if not i.first.obj.get('what') else ' ' + repr(i.first.obj['what'])}" for i in v.instances]
        return [fail("PROG-015", f"step {e.index + 1} ({e.step}) never showed {e.phase} {e.match or ''}; the stream "
                     f"showed: {quote(', '.join(shown), 300)} {_src('4. When each phase holds')}",
                     [_ev(v, f) for f in v.frames[:1]])]
    extra = sorted({i.phase for i in v.unaligned if isinstance(i.phase, str)})
    return [ok("PROG-015", f"every scripted step showed its phase ({len(exp)})"
               + (f"; phases of the implementation's own in between: {', '.join(extra)}" if extra else ""))]
