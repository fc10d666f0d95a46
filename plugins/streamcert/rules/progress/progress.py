"""PROG-: the progress objects of a live progress stream (seed 003): phases, `since`, fields, the
turn's last progress, the status beside it, and pacing judged on arrival times; each agent's sequence
(the main agent's, and each subagent's: frames carrying `agent`) on its own, and the subagent form.

Timing rules read only event arrival times (`t`) and the script's durations; their tolerances come
from the catalogue and every timing finding records what it measured.
"""

from __future__ import annotations

from typing import Any

from ...framelog import END_CLOSED, END_IDLE, END_RESET, END_TIME_LIMIT
from ...protocols.progress import (
    ENDINGS,
    MODEL_REASONS,
    PACING_INTERVAL_S,
    PERSON_WHATS,
    PHASES,
    STOP_REASONS,
    WHAT_MAX,
)
from .. import Verdict, quote, rule
from .frames import MAIN, MISSING, Frame, is_int, is_number
from .progressview import ProgressStream, ScriptedProgress, Sequence
from .script_plan import Expected

MS_RANGE = (10**12, 10**14)  # Unix milliseconds from 2001-09-09 to the year 5138

# The phases' data (§2): field → (kind, required). Kinds: int, number, str, or a tuple of fixed words.
SCHEMA: dict[str, dict[str, tuple[Any, bool]]] = {
    "queued": {"ahead": ("int", False)},
    "waiting_for_model": {"model": ("str", True), "reason": (MODEL_REASONS, True)},
    "loading_model": {"model": ("str", True)},
    "reading_prompt": {"done": ("int", False), "total": ("int", False)},
    "thinking": {},
    "writing": {"rate": ("number", False)},
    "running_tool": {"tool": ("str", True), "what": ("str", False)},
    "waiting_for_person": {"what": (PERSON_WHATS, True), "tool": ("str", False)},
    "waiting_for_subagents": {"running": ("int", True)},
    "compacting": {},
    "retrying": {"reason": ("str", True), "in": ("int", True), "attempt": ("int", False)},
    "stopped": {"reason": (STOP_REASONS, False)},
    "failed": {"reason": ("str", True)},
}
# An optional field that another needs beside it: reading_prompt's total may be left out alone (§2 draws
# "without total: Reading the prompt"; §1: a field not known is left out), and both where no prompt-progress
# came (§4 "without them"); done is left out only with total, since a total known means done is known too.
NEEDS: dict[str, tuple[str, str]] = {"reading_prompt": ("total", "done")}
LINE_BREAKS = ("\n", "\r", "\u2028", "\u2029")


def who(frame: Frame) -> str:
    """How a finding names the agent of a frame: nothing for the main agent's."""
    return "" if frame.key is MAIN else f"subagent {frame.agent!r}: "


# -- the object ----------------------------------------------------------------------------------

@rule("PROG-001", view=ProgressStream)
def phase_names(v: ProgressStream, out: Verdict) -> None:
    bad = []
    for f in v.frames:
        if f.progress is not None and not isinstance(f.progress, dict):
            bad.append((f"{who(f)}progress is {type(f.progress).__name__}, neither an object nor null", v.evidence(f)))
        elif f.obj is not None and f.phase not in PHASES:
            bad.append((f"{who(f)}phase {f.phase!r} is not one of the thirteen", v.evidence(f)))
    if out.fail_each("frame(s) show no known phase", bad):
        return
    if shown := sorted({f.phase for f in v.progress_frames}):
        out.passed(f"{len(v.progress_frames)} progress objects, phases: {', '.join(shown)}")


@rule("PROG-002", view=ProgressStream)
def since_unix_ms(v: ProgressStream, out: Verdict) -> None:
    bad, loose = [], []
    for f in v.progress_frames:
        since = f.obj.get("since")
        if isinstance(since, float) and since.is_integer() and MS_RANGE[0] <= since < MS_RANGE[1]:
            loose.append(f)
        elif not is_int(since):
            bad.append((f"{who(f)}since is {since!r} ({type(since).__name__}), not an integer", v.evidence(f)))
        elif not MS_RANGE[0] <= since < MS_RANGE[1]:
            unit = "seconds" if 10**9 <= since < 10**11 else "no plausible unit"
            bad.append((f"{who(f)}since {since} is not Unix milliseconds (reads as {unit})", v.evidence(f)))
    if out.fail_each("progress object(s) with a bad since", bad):
        return
    if loose:
        out.non_strict(f"since written with a fraction part ({loose[0].obj['since']!r}) on an integral value",
                       [v.evidence(loose[0])], reading="an integral number written with a fraction part is accepted")
    elif v.progress_frames:
        out.passed(f"since is integer Unix milliseconds on all {len(v.progress_frames)} objects")


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


@rule("PROG-003", view=ProgressStream)
def phase_fields(v: ProgressStream, out: Verdict) -> None:
    bad, loose = [], []
    for f in v.progress_frames:
        schema = SCHEMA.get(f.phase)
        if schema is None:
            continue  # an unknown phase is PROG-001's
        for name, (kind, required) in schema.items():
            if name not in f.obj:
                if required:
                    bad.append((f"{who(f)}{f.phase} without its field {name!r}", v.evidence(f)))
                continue
            value = f.obj[name]
            if value is None:
                continue  # PROG-004's
            good, strict = _kind_ok(value, kind)
            want = f"one of {', '.join(kind)}" if isinstance(kind, tuple) else f"a {kind}"
            if not good:
                bad.append((f"{who(f)}{f.phase}.{name} is {value!r}, not {want}", v.evidence(f)))
            elif not strict:
                loose.append((f"{f.phase}.{name} is {value!r}: an integer written as a float", v.evidence(f)))
        have, lack = NEEDS.get(f.phase, (None, None))
        if have in f.obj and lack not in f.obj:
            bad.append((f"{who(f)}{f.phase} carries {have!r} without {lack!r}: {lack} is left out only together "
                        f"with {have}", v.evidence(f)))
    if out.fail_each("field(s) missing or of the wrong type", bad):
        return
    if loose:
        out.non_strict(loose[0][0], [loose[0][1]], reading="an int written as an integral float is accepted")
    elif v.progress_frames:
        out.passed("every listed field present with its type")


@rule("PROG-004", view=ProgressStream)
def no_null_fields(v: ProgressStream, out: Verdict) -> None:
    bad = [(f"{who(f)}{f.phase} with {', '.join(keys)} null", v.evidence(f)) for f in v.progress_frames
           if (keys := [k for k, val in f.obj.items() if val is None])]
    if not out.fail_each("progress object(s) carry null fields", bad) and v.progress_frames:
        out.passed("no field is null")


@rule("PROG-005", view=ScriptedProgress)
def no_guessed_fields(v: ProgressStream, out: Verdict) -> None:
    judged, bad = 0, []
    for seq in v.scripted:
        for exp in seq.plan.expected:
            if exp.step not in ("tool", "tools") or (isinstance(exp.arg, dict) and isinstance(exp.arg.get("what"), str)):
                continue
            for inst in exp.seen:
                judged += 1
                for f in inst.frames:
                    if f.obj.get("what") is not None:
                        bad.append((f"{seq.name}the script's call of {exp.match.get('tool')!r} (step {exp.index + 1}) "
                                    f"has no title, yet running_tool shows what {f.obj['what']!r}", v.evidence(f)))
                        break
    if not out.fail_each("call(s) without a title shown with a guessed what", bad) and judged:
        out.passed(f"{judged} call(s) without a title shown without what")


@rule("PROG-006", view=ProgressStream)
def one_line_texts(v: ProgressStream, out: Verdict) -> None:
    judged, bad, longest = 0, [], 0
    for f in v.progress_frames:
        for name, limit in (("what", WHAT_MAX),) if f.phase == "running_tool" else \
                (("reason", None),) if f.phase in ("failed", "retrying") else ():
            text = f.obj.get(name)
            if not isinstance(text, str):
                continue
            judged += 1
            if any(b in text for b in LINE_BREAKS):
                bad.append((f"{who(f)}{f.phase}.{name} has more than one line: {quote(text, 120)!r}", v.evidence(f)))
            elif limit and len(text) > limit:
                bad.append((f"{who(f)}{f.phase}.{name} is {len(text)} characters, more than {limit}: "
                            f"{quote(text, 120)!r}", v.evidence(f)))
            else:
                continue
            longest = max(longest, len(f.obj.get("what") or ""))
    if not out.fail_each("text(s) longer than one line or than their limit", bad, measured={"longest": longest}) \
            and judged:
        out.passed(f"{judged} one-line text(s) within their limits")


# -- since: each agent's sequence on its own ------------------------------------------------------

@rule("PROG-007", view=ProgressStream)
def since_kept_on_data(v: ProgressStream, out: Verdict) -> None:
    kept = sum(len(inst.data_updates()) for inst in v.instances)
    changes = []  # (sequence, the instance before, the repeat)
    for seq in v.sequences:
        for n, inst in enumerate(seq.instances):
            if not inst.repeat or inst.expected is None:
                continue
            before = next(i for i in reversed(seq.instances[:n]) if i.expected is inst.expected)
            if before.frames[-1].obj.get("since") != inst.first.obj.get("since"):  # else shown again, not renewed
                changes.append((seq, before, inst))
    if changes:
        seq, before, inst = changes[0]
        out.failed(f"{seq.name}{inst.phase}: since changed from {before.frames[-1].obj.get('since')} to "
                   f"{inst.first.obj.get('since')} while the script does one thing (step {inst.expected.index + 1}, "
                   f"{inst.expected.step}); {len(changes)} such change(s)",
                   [v.evidence(before.frames[-1], "before"), v.evidence(inst.first, "since changed")],
                   measured={"since_changes_on_data": len(changes), "data_changes_kept": kept})
    elif kept:
        out.passed(f"since kept across {kept} data-only change(s)", measured={"data_changes_kept": kept})


def _renewals(seq: Sequence, same_ms: float) -> tuple[list, int]:
    """(failures, renewals) of since between the consecutive instances of one agent's sequence."""
    bad, renewed = [], 0
    for before, after in zip(seq.instances, seq.instances[1:]):
        a, b = before.frames[-1], after.first
        if any(f.obj is None for f in seq.frames if a.ev.index < f.ev.index < b.ev.index):
            continue  # a null between: another turn's business
        sa, sb = a.obj.get("since"), b.obj.get("since")
        if not (is_number(sa) and is_number(sb)):
            continue  # PROG-002's
        # The same millisecond is a new since too when the two phases really began together: equal values
        # count as kept only when the frames arrived further apart than the tolerance.
        if sb < sa or (sb == sa and b.t - before.first.t > same_ms):
            what = "a new phase" if a.phase != b.phase else "the same phase for another thing"
            bad.append((f"{seq.name}{what} ({a.phase} → {b.phase}) keeps since {sb}" if sb == sa else
                        f"{seq.name}{what} ({a.phase} → {b.phase}) has since {sb}, before the {sa} of the phase "
                        "before", [seq.evidence(a, "before"), seq.evidence(b, "after")]))
        else:
            renewed += 1
    # Calls of the same thing in a row are told apart by since alone: each must show.
    if seq.plan is not None:
        exp = seq.plan.expected
        for prev, cur in zip(exp, exp[1:]):
            if prev.same_thing(cur) and prev.seen and not cur.seen:
                last = prev.seen[-1].frames[-1]
                bad.append((f"{seq.name}the script runs {cur.step} {cur.match or ''} twice in a row (steps "
                            f"{prev.index + 1} and {cur.index + 1}); the stream shows one since "
                            f"{last.obj.get('since')}", [seq.evidence(last)]))
    return bad, renewed


@rule("PROG-008", view=ProgressStream)
def since_renewed(v: ProgressStream, out: Verdict) -> None:
    same_ms = out.tolerance("same_since_s", 0.05)
    bad, renewed = [], 0
    for seq in v.sequences:
        seq_bad, seq_renewed = _renewals(seq, same_ms)
        bad += seq_bad
        renewed += seq_renewed
    if bad:
        out.failed(bad[0][0], bad[0][1])
    elif v.progress_frames:
        out.passed(f"since renewed on {renewed} change(s) of phase or thing")


# -- when frames are sent ------------------------------------------------------------------------

@rule("PROG-009", view=ProgressStream)
def data_pacing(v: ProgressStream, out: Verdict) -> None:
    # "at most four times a second": in any second at most four data-only updates, so 4m + 1 updates in a row
    # span at least m seconds. A run that falls short by its deficit: up to span_tolerance_s passes (timer
    # jitter), more warns (a reader on a loaded machine may read frames late and in lumps), and more than
    # jitter_s over a run of sustain_s seconds' worth or more is a rate above four a second that no lateness
    # tolerated explains: FAIL. Pacing binds each agent's progress: every instance is one agent's.
    tol = out.tolerance("span_tolerance_s", 0.15)
    jitter = out.tolerance("jitter_s", 0.35)
    sustain = max(1, round(out.tolerance("sustain_s", 2.0)))
    if not v.instances:
        return
    most, min_span, worst, worst_long = 0, None, None, None  # worst*: (deficit, seconds' worth, seq, run)
    for seq in v.sequences:
        for inst in seq.instances:
            ups = inst.data_updates()
            most = max(most, len(ups))
            times = [f.t for f in ups]
            spans5 = [b - a for a, b in zip(times, times[4:])]
            if spans5:
                min_span = min(spans5 + ([min_span] if min_span is not None else []))
            for least, best in ((1, worst), (sustain, worst_long)):
                found = _worst_run(times, least)
                if found is not None and (best is None or found[0] > best[0]):
                    deficit, i, j = found
                    best = (deficit, (j - i) // 4, seq, ups[i:j + 1])
                    if least == 1:
                        worst = best
                    else:
                        worst_long = best
    measured = {"min_span_5_s": None if min_span is None else round(min_span, 3), "most_data_updates": most,
                "max_deficit_s": None if worst is None else round(worst[0], 3),
                "max_sustained_deficit_s": None if worst_long is None else round(worst_long[0], 3),
                "span_tolerance_s": tol, "jitter_s": jitter, "sustain_s": sustain}
    if worst_long is not None and worst_long[0] > jitter:
        deficit, m, seq, run = worst_long
        span = run[-1].t - run[0].t
        out.failed(f"{seq.name}{run[0].phase}: {len(run)} data-only updates in a row within {span:.3f} s, "
                   f"{(len(run) - 1) / span if span else float('inf'):.1f} a second sustained (at most four a "
                   f"second: they span at least {m} s; {deficit:.3f} s short, more than the jitter tolerated, "
                   f"{jitter:g} s)", [v.evidence(run[0], "first"), v.evidence(run[-1], "last")], measured=measured)
    elif worst is not None and worst[0] > tol:
        deficit, m, seq, run = worst
        span = run[-1].t - run[0].t
        out.warning(f"{seq.name}{run[0].phase}: {len(run)} data-only updates in a row within {span:.3f} s (at most "
                    f"four a second: at least {m} s; tolerance {tol:g} s), not sustained beyond the jitter "
                    f"tolerated ({jitter:g} s over {sustain} s' worth)",
                    [v.evidence(run[0], "first"), v.evidence(run[-1], "last")], measured=measured)
    elif worst is None:
        out.passed(f"no phase had five data-only updates (most: {most}): at most four a second", measured=measured)
    else:
        out.passed(f"every 4m + 1 data-only updates in a row span at least m s (five: at least {min_span:.3f} s; "
                   f"most in one phase: {most})", measured=measured)


def _worst_run(times: list[float], least: int) -> tuple[float, int, int] | None:
    """Of the runs of 4m + 1 consecutive times (m >= least), the one that falls furthest short of spanning m
    seconds: (deficit, first index, last index), or None when none is that long. The deficit of a run from i
    to j = i + 4m is m - (t_j - t_i) = g(j) - g(i) with g(k) = k / 4 - t_k, so one pass per residue of the
    index modulo 4, keeping the least g seen at least 4 * least places back, finds it in linear time."""
    best = None
    for residue in range(4):
        idx = list(range(residue, len(times), 4))
        low = None  # (g, index) least so far among those far enough back
        for n, j in enumerate(idx):
            if n >= least:
                i = idx[n - least]
                g = i / 4 - times[i]
                if low is None or g < low[0]:
                    low = (g, i)
            if low is not None:
                deficit = (j / 4 - times[j]) - low[0]
                if best is None or deficit > best[0]:
                    best = (deficit, low[1], j)
    return best


@rule("PROG-010", view=ScriptedProgress)
def changes_sent(v: ProgressStream, out: Verdict) -> None:
    tol = out.tolerance("gap_tolerance_s", 0.35)
    min_phase = out.tolerance("min_phase_s", 0.75)
    limit = PACING_INTERVAL_S + tol
    for seq in v.scripted:
        for exp in seq.plan.expected:
            if not exp.changing or not exp.seen:
                continue
            inst = exp.seen[0]
            times = [inst.first.t] + [f.t for f in inst.data_updates()]
            end = seq.instance_end(inst)
            lasted = end - inst.first.t
            worst_gap = max(b - a for a, b in zip(times, times[1:] + [end]))
            measured = {"max_gap_s": round(worst_gap, 3), "lasted_s": round(lasted, 3),
                        "data_frames": len(times) - 1, "gap_limit_s": round(limit, 3)}
            step = f"{seq.name}{exp.phase} (step {exp.index + 1})"
            if len(times) == 1 and lasted >= min_phase:
                out.failed(f"{step} lasted {lasted:.2f} s while its data kept changing, and no data-only frame was "
                           "sent", [v.evidence(inst.first, "the phase's only frame")], measured=measured)
            elif worst_gap > limit:
                out.warning(f"{step}: {worst_gap:.3f} s without a frame while its data kept changing (pacing allows "
                            f"one every {PACING_INTERVAL_S:g} s; tolerance {tol:g} s)", [v.evidence(inst.first)],
                            measured=measured)
            else:
                out.passed(f"{step}: {len(times) - 1} data-only frame(s), longest gap {worst_gap:.3f} s",
                           measured=measured)


@rule("PROG-011", view=ScriptedProgress)
def phase_at_once(v: ProgressStream, out: Verdict) -> None:
    tol = out.tolerance("delay_tolerance_s", 0.15)
    fail_delay = out.tolerance("fail_delay_s", 0.5)
    for seq in v.scripted:
        _phase_delays(seq, out, tol, fail_delay)


def _phase_delays(seq: Sequence, out: Verdict, tol: float, fail_delay: float) -> None:
    """PROG-011 on one agent's sequence: how long each new phase's first frame trails the moment its phase
    began. That moment is the end of the step before, read from the stream: the later of the frame before it
    (the phase before still showing, or the last of the subagents it waited on ending) and the phase before's
    first frame plus the script's time between the two steps. So a runtime whose steps run longer than
    scripted is judged step by step, its drift never adding up."""
    points: list[tuple[Expected, str, Frame]] = []  # (the step, what, its first frame)
    for exp in seq.plan.expected:
        first = next((i for i in exp.seen if not i.repeat), None)
        if first is not None:
            points.append((exp, f"{exp.phase} (step {exp.index + 1})", first.first))
    if seq.plan.ending == "finish":
        last_progress = seq.progress_frames[-1] if seq.progress_frames else None
        end = next((f for f in seq.frames if f.progress is None and f.problem is None
                    and (last_progress is None or f.ev.index > last_progress.ev.index)), None)
        if end is not None:
            points.append((None, "the turn's end (null)", end))
    if len(points) < 2:
        return  # the first phase of a sequence has no phase before it to be measured from
    delays = []  # (what, frame, delay, how the phase's start was read)
    for (before_exp, _, before), (exp, what, frame) in zip(points, points[1:]):
        due = before.t + ((exp.offset_s if exp else seq.plan.end_s) - before_exp.offset_s)
        prior = _frame_before(seq, before_exp, frame)
        began, read = (prior.t, "the frame before it") if prior is not None and prior.t > due else \
            (due, "the scripted end of the step before")
        delays.append((what, frame, frame.t - began, read))
    what, frame, worst, read = max(delays, key=lambda d: d[2])
    measured = {"max_phase_delay_s": round(worst, 3), "delay_tolerance_s": tol, "fail_delay_s": fail_delay,
                "delays_s": {w: round(d, 3) for w, _, d, _ in delays}}
    text = f"{seq.name}{what} arrived {worst:.3f} s after its phase began ({read})"
    if worst > fail_delay:
        out.failed(text, [seq.evidence(frame)], measured=measured)
    elif worst > tol:
        out.warning(f"{text}, past the tolerance of {tol:g} s", [seq.evidence(frame)], measured=measured)
    else:
        out.passed(f"{seq.name or 'the main agent: '}every new phase within {max(worst, 0) * 1000:.0f} ms of its phase's "
                   "start (the end of the step before)", measured=measured)


def _frame_before(seq: Sequence, step: Expected, frame: Frame) -> Frame | None:
    """The last frame before `frame` that shows the agent still at the step before: its own, or, after a
    subagents step, one of the subagents it waited on (the last of them ending is when its wait ended)."""
    keys = {seq.key}
    if step.step == "subagents" and isinstance(step.arg, list):
        waited = [seq.stream.sequence_of(s.get("id")) for s in step.arg if isinstance(s, dict)]
        keys |= {s.key for s in waited if s is not None}
    return next((f for f in reversed(seq.stream.frames) if f.key in keys and f.ev.index < frame.ev.index), None)


# -- the turn's end and the status -----------------------------------------------------------------

@rule("PROG-012", view=ProgressStream)
def ending_stays(v: ProgressStream, out: Verdict) -> None:
    for seq in v.sequences:
        ending = next((f for f in seq.frames if f.phase in ENDINGS), None)
        if ending is None:
            scripted = seq.plan is not None and seq.plan.ending in ("stop", "fail")
            if scripted and v.exchange.end == END_CLOSED and seq.frames:
                last = seq.frames[-1]
                out.failed(f"{seq.name}the script ends the turn with {seq.plan.ending}, but the stream's last "
                           f"progress is {quote(repr(last.progress), 120)}", [v.evidence(last)])
            continue
        after = [f for f in seq.frames if f.ev.index > ending.ev.index and f.progress != ending.progress]
        if after:
            out.failed(f"{seq.name}{ending.phase} is followed by progress {quote(repr(after[0].progress), 120)} in "
                       "the same turn", [v.evidence(ending, ending.phase), v.evidence(after[0], "after it")])
        else:
            out.passed(f"{seq.name}{ending.phase} is the turn's last progress")


@rule("PROG-013", view=ScriptedProgress)
def finished_ends_null(v: ProgressStream, out: Verdict) -> None:
    for seq in v.scripted:
        if seq.plan.ending != "finish" or not seq.frames:
            continue
        last = seq.frames[-1]
        if last.progress is None and last.problem is None:
            out.passed(f"{seq.name}the finished turn ends with progress null")
        elif v.exchange.end in (END_RESET, END_IDLE):  # it broke off: what came last is not the turn's last
            out.error(f"{seq.name}the stream broke off before the turn's end could be seen: {v.exchange.error}",
                      [v.evidence(last)])
        else:
            cut = " (the suite cut the stream at its limit)" if v.exchange.end == END_TIME_LIMIT else ""
            out.failed(f"{seq.name}the turn finished but its last progress is {quote(repr(last.progress), 120)}{cut}",
                       [v.evidence(last)])


@rule("PROG-014", view=ProgressStream)
def status_beside(v: ProgressStream, out: Verdict) -> None:
    # "every frame … that carries the status text carries progress beside it": the sentence binds the frames
    # that carry the status. A frame with progress and no status (a data-only frame that leaves out the
    # unchanged text), or with neither (a keep-alive, another kind of frame), is not bound by it.
    bad, without_status, neither = [], 0, 0
    for f in v.frames:
        has_progress, has_status = f.problem is None, f.status is not MISSING
        if not has_status:
            without_status += has_progress
            neither += not has_progress
        elif not has_progress:
            bad.append((f"a status text without progress beside it ({f.problem})", v.evidence(f)))
        elif not isinstance(f.status, str):
            bad.append((f"{who(f)}status is {f.status!r}, not a text", v.evidence(f)))
    judged = [f for f in v.frames if f.status is not MISSING]
    if not bad and v.plan is not None:
        shown = [f.status for f in judged]
        i = 0
        for text in v.plan.status_texts:
            while i < len(shown) and shown[i] != text:
                i += 1
            if i == len(shown):
                seen = sorted({s for s in shown if isinstance(s, str)})
                out.failed(f"the status text {text!r} set by the script never appears unchanged beside progress "
                           f"(texts seen: {quote(repr(seen), 200)})", [v.evidence(v.frames[-1])] if v.frames else [])
                return
    if not out.fail_each("frame(s) carrying a status text without progress beside it", bad) and judged:
        out.passed(f"progress beside the status text on all {len(judged)} frames that carry it"
                   + (f"; {without_status} frame(s) carried progress without the status text (not bound by the "
                      "sentence)" if without_status else "")
                   + (f"; {neither} frame(s) carried neither" if neither else ""))


@rule("PROG-015", view=ScriptedProgress)
def phase_follows_steps(v: ProgressStream, out: Verdict) -> None:
    if not v.frames:
        return
    for seq in v.scripted:
        exp = seq.plan.expected
        missing = [e for n, e in enumerate(exp)
                   if not e.seen and not (n and exp[n - 1].same_thing(e) and exp[n - 1].seen)]
        if missing:
            e = missing[0]
            shown = [f"{i.phase}{'' if not i.first.obj.get('what') else ' ' + repr(i.first.obj['what'])}"
                     for i in seq.instances]
            evidence = [v.evidence(f) for f in seq.frames[:1]] or [v.evidence(f) for f in v.frames[:1]]
            out.failed(f"{seq.name}step {e.index + 1} ({e.step}) never showed {e.phase} {e.match or ''}; the "
                       f"stream showed: {quote(', '.join(shown) or 'nothing', 300)}", evidence)
            continue
        extra = sorted({i.phase for i in seq.unaligned if isinstance(i.phase, str)})
        out.passed(f"{seq.name or 'the main agent: '}every scripted step showed its phase ({len(exp)})"
                   + (f"; phases of the implementation's own in between: {', '.join(extra)}" if extra else ""))


# -- subagents and calls in parallel ---------------------------------------------------------------

# The two readings of "the server passes it on in /api/v2 as its own" (§5, the link) PROG-016 accepts.
BESIDE = "subagents' progress in /api/v2, each frame carrying agent beside it"
OWN_ONLY = "/api/v2 carries the chat's own progress; subagents' progress travels on the link and the tree"


@rule("PROG-016", view=ProgressStream)
def subagent_form(v: ProgressStream, out: Verdict) -> None:
    if not v.frames:
        return
    bad = [(f"agent is {f.agent!r}, not a subagent's id (a non-empty string)", v.evidence(f)) for f in v.frames
           if f.agent is not MISSING and not (isinstance(f.agent, str) and f.agent)]
    if out.fail_each("frame(s) whose agent is no subagent's id", bad):
        return
    subs = [s for s in v.sequences if not s.is_main]
    if not subs:
        _own_only(v, out, out.tolerance("wait_margin_s", 0.15))
    else:
        _beside(v, out, subs)


def _beside(v: ProgressStream, out: Verdict, subs: list[Sequence]) -> None:
    """The first reading: every subagent's progress in frames of its own carrying agent; the main agent's without."""
    bad = []
    for sid, plan in (v.plan.subagents if v.plan else {}).items():
        if v.sequence_of(sid) is None and plan.expected:
            shown = ", ".join(repr(s.key) for s in subs)
            bad.append((f"the script's subagent {sid!r} ({', '.join(e.step for e in plan.expected)}) shows in no "
                        f"frame carrying agent, while others do (agents shown: {shown})", v.evidence(v.frames[0])))
    if v.plan is not None and v.plan.expected and not v.main.progress_frames:
        first = subs[0].frames[0]
        bad.append((f"the main agent's steps show in no frame without agent: every progress carries one "
                    f"({first.agent!r} the first)", v.evidence(first)))
    if out.fail_each(f"departure(s) from the subagent form (reading: {BESIDE})", bad, reading=BESIDE):
        return
    renamed = [f"{s.scripted_id!r} as {s.key!r}" for s in subs if s.scripted_id not in (None, s.key)]
    out.passed(f"reading taken: {BESIDE}; {len(subs)} subagent sequence(s) carry agent "
               f"({', '.join(repr(s.key) for s in subs)}), the main agent's progress none"
               + (f"; the runtime named {', '.join(renamed)}" if renamed else ""), reading=BESIDE)


def _own_only(v: ProgressStream, out: Verdict, margin: float) -> None:
    """The second reading: no frame carries agent, and /api/v2 shows the main agent alone: while its subagents
    run (the script's time of the longest, less `margin`), the main agent has nothing to do but wait, so its
    progress stays waiting_for_subagents, none of theirs merged into it (after that, a phase of its own before
    the next step is the implementation's, PROG-015)."""
    main = v.main
    if main.plan is None:
        return
    waits = [e for e in main.plan.expected if e.step == "subagents" and e.seen]
    merged = []
    for exp in waits:
        start = exp.seen[0].first
        ids = [s.get("id") for s in exp.arg if isinstance(s, dict)] if isinstance(exp.arg, list) else []
        lasts = max((main.plan.subagents[i].end_s for i in ids if i in main.plan.subagents), default=0.0)
        for f in main.frames:
            if start.ev.index < f.ev.index and f.t < start.t + lasts - margin and f.problem is None \
                    and f.phase != "waiting_for_subagents":
                shown = "null" if f.progress is None else quote(repr(f.progress), 120)
                merged.append((f"while the main agent waits on its subagents (step {exp.index + 1}), the chat's "
                               f"progress shows {shown}: a subagent's progress passed on as the main agent's, with "
                               f"no agent beside it", v.evidence(f)))
                break
    unshown = [sid for sid, plan in (v.plan.subagents if v.plan else {}).items() if plan.expected]
    if merged:
        out.fail_each(f"wait(s) on subagents showing their progress as the chat's own; neither reading holds: not "
                      f"{BESIDE} (no frame carries agent for {', '.join(map(repr, unshown))}), nor {OWN_ONLY}",
                      merged)
    elif waits:
        out.passed(f"reading taken: {OWN_ONLY}; no frame carries agent, and while the main agent waits on its "
                   f"subagents ({', '.join(map(repr, unshown))}) the chat's progress stays waiting_for_subagents",
                   reading=OWN_ONLY)


@rule("PROG-017", view=ScriptedProgress)
def first_started_call(v: ProgressStream, out: Verdict) -> None:
    judged, bad = 0, []
    for seq in v.scripted:
        for pset in seq.plan.parallel:
            shown = _shown_calls(seq, pset)
            if shown is None:
                continue  # the set never showed: PROG-015's
            judged += 1
            want = [_call_name(pset.calls[i]) for i in pset.shown]
            got = [_call_name(pset.calls[i]) if i is not None else f"{f.obj.get('tool')!r} (not of the set)"
                   for i, f in shown]
            if got != want:
                bad.append((f"{seq.name}calls in parallel (step {pset.index + 1}): running_tool showed {', '.join(got)}; "
                            f"the one that started first of those running shows {', '.join(want)}",
                            v.evidence(shown[0][1])))
    if not out.fail_each("set(s) of calls in parallel shown out of order", bad) and judged:
        out.passed(f"{judged} set(s) of calls in parallel: running_tool showed the first-started call running")


def _call_name(call: dict[str, Any]) -> str:
    what = call.get("what")
    return f"{call.get('name')!r}" + (f" {what!r}" if isinstance(what, str) else "")


def _shown_calls(seq: Sequence, pset) -> list[tuple[int | None, Frame]] | None:
    """The calls a parallel set's running_tool instances showed, in order (a call shown again at once, with a
    new since, counted once): the running_tool instances between those paired with the steps before the set
    and those paired with the steps after it; None when none is paired with the set (nothing to judge here)."""
    mine = {id(e) for e in pset.expected}
    paired = {id(i): e for e in seq.plan.expected for i in e.seen}
    if not any(id(e) in mine for e in paired.values()):
        return None
    before = [n for n, i in enumerate(seq.instances) if id(i) in paired and paired[id(i)].index < pset.index]
    after = [n for n, i in enumerate(seq.instances) if id(i) in paired and paired[id(i)].index > pset.index]
    start, stop = max(before, default=-1) + 1, min(after, default=len(seq.instances))
    shown: list[tuple[int | None, Frame]] = []
    for inst in seq.instances[start:stop]:
        if inst.phase != "running_tool":
            continue
        call = pset.call_of(inst.first)
        if not shown or shown[-1][0] != call or call is None:
            shown.append((call, inst.first))
    return shown
