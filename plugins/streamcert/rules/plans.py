"""PLAN-: progress/v1 plans over A2A (seed 000_06a02fdc76178533.txt).

The driver (scenarios/plans.py) writes: `stream` (the scripted task), `get_task`, `list_tasks`.
The script's `plan` steps are the update_plan calls; its `say` steps ("Rk: {{result}}") show the
tool result the model saw. Plan updates are put in order by status.timestamp (arrival breaks ties)
and an update delivered twice counts once, as the seed tells a client to do.
"""

from __future__ import annotations

import unicodedata
from datetime import datetime
from typing import Any

from .. import a2a
from ..framelog import Event, Exchange, FrameLog
from ..outcomes import Finding, Outcome
from . import RuleContext, ev_evidence, ex_evidence, fail, needed, ok, outcome, quote, rule
from .streamview import StreamView

SEED = "000_06a02fdc76178533.txt · progress/v1"
URI = a2a.PROGRESS_EXT
STATES = ("pending", "active", "done", "blocked", "skipped")
MAX_STEPS, LABEL_MAX, NOTE_MAX = 20, 120, 280
ELLIPSIS = "…"
PLAN_UPDATED = "Plan updated"


# -- counting ---------------------------------------------------------------------------------------

def utf16_len(text: str) -> int:
    return sum(2 if ord(c) > 0xFFFF else 1 for c in text)


def over(text: str, limit: int) -> bool:
    """Over the limit by some accepted reading (code points, or UTF-16 code units)."""
    return len(text) > limit or utf16_len(text) > limit


def _combining(c: str) -> bool:
    return unicodedata.combining(c) != 0 or unicodedata.category(c) in ("Mn", "Me")


def _lone_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def judge_cut(raw: str, got: Any, limit: int) -> tuple[str | None, tuple[Outcome, str] | None]:
    """One field the implementation may have cut: (MUST complaint or None, (SHOULD outcome, reading)).

    The MUST part is what every reading agrees on: a field over the limit is cut, ends in …, keeps
    a prefix of the text, splits no character. The SHOULD part is the length: exactly the limit in
    code points with the … (strict); the limit plus … or a UTF-16 count is NON_STRICT.
    """
    counts = f"sent {len(got) if isinstance(got, str) else '?'} code points / " \
             f"{utf16_len(got) if isinstance(got, str) else '?'} UTF-16 units for {len(raw)} / {utf16_len(raw)}"
    if not isinstance(got, str):
        return f"not a string: {got!r}", None
    if got == raw:
        if len(raw) > limit:
            return f"not cut: {len(raw)} code points kept whole (limit {limit})", None
        return None, (Outcome.PASS, f"unchanged ({len(raw)} code points, {utf16_len(raw)} UTF-16 units)")
    if _lone_surrogate(got):
        return f"splits a character: a lone surrogate in {got[-6:]!r} ({counts})", None
    if not over(raw, limit):
        return f"changed although within the limit ({counts})", None
    if not got.endswith(ELLIPSIS):
        return f"cut without the ellipsis …: ends {got[-6:]!r} ({counts})", None
    kept = got[:-1]
    if not raw.startswith(kept):
        at = next((i for i, (a, b) in enumerate(zip(kept, raw)) if a != b), len(kept))
        why = "splits a character (U+FFFD where the label had " if kept[at:at + 1] == "\ufffd" else "differs from ("
        return f"the kept part is not a prefix of the text: {why}{raw[at:at + 1]!r} at {at}) ({counts})", None
    if len(got) > limit + 1:
        return f"too long after the cut ({counts}, limit {limit})", None
    return None, _cut_length(raw, kept, got, limit, counts)


def _cut_length(raw: str, kept: str, got: str, limit: int, counts: str) -> tuple[Outcome, str]:
    j = len(kept)
    if len(raw) <= limit:  # over the limit only in UTF-16 code units
        return Outcome.NON_STRICT, f"counted in UTF-16 code units: cut although within {limit} code points ({counts})"
    if len(got) == limit and j == limit - 1:
        reading = "strict: cut to the limit in code points, … included"
        if _combining(raw[j]):
            reading += " (the cut falls between a base character and its combining mark)"
        return Outcome.PASS, f"{reading} ({counts})"
    if len(got) == limit + 1 and j == limit:
        return Outcome.NON_STRICT, f"limit plus ellipsis: {limit} code points and … ({counts})"
    if utf16_len(got) == limit or (utf16_len(got) == limit - 1 and ord(raw[j]) > 0xFFFF):
        return Outcome.NON_STRICT, f"counted in UTF-16 code units ({counts})"
    if j < limit - 1 and not _combining(raw[j]) and all(_combining(c) for c in raw[j + 1:limit]):
        return Outcome.PASS, f"grapheme-safe: backed off to the start of a combining sequence ({counts})"
    return Outcome.FAIL, f"cut to a length no reading gives ({counts}, limit {limit})"


# -- what the script asked and what came back -------------------------------------------------------

def well_shaped(steps: Any) -> bool:
    """The seed's shape: a list of objects with a string label, a known state, a string note if any."""
    return isinstance(steps, list) and all(
        isinstance(s, dict) and isinstance(s.get("label"), str) and s.get("state") in STATES
        and ("note" not in s or isinstance(s["note"], str)) for s in steps)


def plan_calls(script: dict[str, Any] | None) -> list[Any]:
    steps = script.get("steps") if isinstance(script, dict) else None
    return [s["plan"] for s in steps or [] if isinstance(s, dict) and "plan" in s]


def say_results(script: dict[str, Any] | None) -> list[tuple[str, str, Any]]:
    """(prefix, suffix, the plan call before it) for every `say` with {{result}} after a plan step."""
    out, last = [], None
    steps = script.get("steps") if isinstance(script, dict) else None
    for s in steps or []:
        if isinstance(s, dict) and "plan" in s:
            last = s["plan"]
        elif isinstance(s, dict) and isinstance(s.get("say"), str) and "{{result}}" in s["say"] and last is not None:
            prefix, _, suffix = s["say"].partition("{{result}}")
            out.append((prefix, suffix, last))
    return out


def _plan_of(metadata: Any) -> Any:
    return metadata.get(URI) if isinstance(metadata, dict) and URI in metadata else None


def _steps(plan: Any) -> list[Any] | None:
    return plan.get("steps") if isinstance(plan, dict) and isinstance(plan.get("steps"), list) else None


def streamed(ex: Exchange) -> list[tuple[Event, dict[str, Any], Any]]:
    """(event, statusUpdate, plan value) for every status update carrying the extension, in arrival order."""
    out = []
    for ev, result in ex.results():
        upd = result.get("statusUpdate")
        if isinstance(upd, dict) and _plan_of(upd.get("metadata")) is not None:
            out.append((ev, upd, _plan_of(upd["metadata"])))
    return out


def _ts(upd: dict[str, Any]) -> datetime | None:
    stamp = upd.get("status", {}).get("timestamp") if isinstance(upd.get("status"), dict) else None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")) if isinstance(stamp, str) else None
    except ValueError:
        return None


def ordered(ex: Exchange) -> list[tuple[Event, dict[str, Any], Any]]:
    """Plan updates by status.timestamp (arrival breaks ties); a repeat (same time, same plan) counts once."""
    items = streamed(ex)
    if all(_ts(u) is not None for _, u, _ in items):
        items = sorted(items, key=lambda item: _ts(item[1]))  # stable: arrival order among equals
    out: list[tuple[Event, dict[str, Any], Any]] = []
    for item in items:
        if out and out[-1][2] == item[2] and _ts(out[-1][1]) == _ts(item[1]):
            continue
        out.append(item)
    return out


def agent_texts(ex: Exchange) -> list[tuple[Event, str]]:
    out = []
    for ev, result in ex.results():
        upd = result.get("statusUpdate")
        message = upd.get("status", {}).get("message") if isinstance(upd, dict) else None
        for part in message.get("parts", []) if isinstance(message, dict) else []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append((ev, part["text"]))
    return out


def said(ex: Exchange, prefix: str, suffix: str) -> tuple[Event | None, str | None]:
    """The tool result a `say` showed: its text between the template's prefix and suffix."""
    for ev, text in agent_texts(ex):
        if text.startswith(prefix) and text.endswith(suffix) and len(text) >= len(prefix) + len(suffix):
            return ev, text[len(prefix):len(text) - len(suffix)]
    return None, None


def _unary_result(ex: Exchange) -> Any:
    value, _ = ex.json()
    return value.get("result") if isinstance(value, dict) else None


def read_back(log: FrameLog) -> list[tuple[str, Exchange, Any]]:
    """(where, exchange, plan) for the plan GetTask and ListTasks carry (plan None when absent)."""
    out = []
    get = log.get("get_task")
    task = _unary_result(get) if get else None
    if isinstance(task, dict):
        out.append(("GetTask", get, _plan_of(task.get("metadata"))))
    lst = log.get("list_tasks")
    listed = _unary_result(lst) if lst else None
    if isinstance(listed, dict) and isinstance(task, dict):
        for t in listed.get("tasks") or []:
            if isinstance(t, dict) and t.get("id") == task.get("id"):
                out.append(("ListTasks", lst, _plan_of(t.get("metadata"))))
    return out


def _stream(log: FrameLog, *ids: str) -> tuple[Exchange | None, list[Finding]]:
    """The task stream, when it carried the whole turn. A stream that is no event stream or ended
    before a terminal state shows only part of the turn: what it could not show is the stream
    rules' finding (A2A-STREAM-), not a missing plan."""
    ex, errs = needed(log, "stream", *ids)
    if ex is None:
        return None, errs
    if not ex.is_sse or not StreamView.from_exchange(ex).terminal:
        return None, []
    return ex, []


# -- rules ----------------------------------------------------------------------------------------

@rule("PLAN-001")
def plan_updates_sent(log: FrameLog, ctx: RuleContext):
    ex, errs = _stream(log, "PLAN-001")
    if ex is None:
        return errs
    want = [c for c in plan_calls(log.script) if well_shaped(c)]
    got = ordered(ex)
    if len(got) == len(want):
        return [ok("PLAN-001", f"{len(got)} plan updates for {len(want)} accepted update_plan calls")]
    return [fail("PLAN-001", f"{len(got)} plan updates (ordered by status.timestamp, repeats counted once) "
                 f"for {len(want)} well-shaped update_plan calls in the script; {SEED}: \"The A2A endpoint "
                 "sends each one as a status update with this extension\"",
                 [ev_evidence(ex, ev) for ev, _, _ in got[:6]] or [ex_evidence(ex)])]


def _aligned(log: FrameLog, ex: Exchange) -> list[tuple[Event, list[Any], list[Any]]] | None:
    """(event, steps sent, steps asked) per accepted call, when the counts agree; else None."""
    want = [c for c in plan_calls(log.script) if well_shaped(c)]
    got = ordered(ex)
    if len(got) != len(want):
        return None
    return [(ev, _steps(plan) or [], asked) for (ev, _, plan), asked in zip(got, want)]


def _note(step: Any) -> Any:
    return step.get("note") if isinstance(step, dict) else None


@rule("PLAN-002")
def whole_plan(log: FrameLog, ctx: RuleContext):
    ex, errs = _stream(log, "PLAN-002")
    if ex is None:
        return errs
    pairs = _aligned(log, ex)
    if not pairs:
        return []
    for k, (ev, sent, asked) in enumerate(pairs, 1):
        n = min(len(asked), MAX_STEPS)
        if len(sent) < n or (len(asked) <= MAX_STEPS and len(sent) > n):
            return [fail("PLAN-002", f"plan update {k} has {len(sent)} steps; the call gave {len(asked)} "
                         f"(the whole plan is {n} steps after limits); {SEED}: \"A caller gets the whole plan "
                         "each time, never a diff\"", [ev_evidence(ex, ev)])]
        for i, (s, a) in enumerate(zip(sent, asked[:n]), 1):
            if not isinstance(s, dict):
                continue
            wrong = []
            if s.get("state") in STATES and s.get("state") != a["state"]:
                wrong.append(f"state {s.get('state')!r} for {a['state']!r}")
            if not over(a["label"], LABEL_MAX) and s.get("label") != a["label"]:
                wrong.append(f"label {quote(str(s.get('label')), 80)!r} for {quote(a['label'], 80)!r}")
            if not over(a.get("note", ""), NOTE_MAX) and _note(s) != a.get("note"):
                wrong.append(f"note {quote(str(_note(s)), 80)!r} for {quote(str(a.get('note')), 80)!r}")
            if wrong:
                return [fail("PLAN-002", f"plan update {k}, step {i}: " + "; ".join(wrong) + "; the update must "
                             f"equal the call's plan; {SEED}: \"A caller gets the whole plan each time\"",
                             [ev_evidence(ex, ev)])]
    return [ok("PLAN-002", f"{len(pairs)} plan updates, each the whole plan of its call")]


def _all_plans(log: FrameLog) -> list[tuple[dict[str, Any], Any]]:
    """(evidence, plan) for every plan seen: streamed, GetTask, ListTasks."""
    out = []
    ex = log.get("stream")
    if ex is not None:
        out += [(ev_evidence(ex, ev), plan) for ev, _, plan in streamed(ex)]
    out += [(ex_evidence(x, where), plan) for where, x, plan in read_back(log) if plan is not None]
    return out


@rule("PLAN-003", "PLAN-004")
def plan_shape(log: FrameLog, ctx: RuleContext):
    plans = _all_plans(log)
    if not plans:
        return []
    bad_state, bad_shape = None, None
    for evidence, plan in plans:
        steps = _steps(plan)
        if steps is None:
            bad_shape = bad_shape or (evidence, f"the plan is not an object with a steps array: {quote(str(plan), 120)}")
            continue
        for i, s in enumerate(steps, 1):
            if not isinstance(s, dict):
                bad_shape = bad_shape or (evidence, f"step {i} is not an object")
                continue
            if not isinstance(s.get("label"), str):
                bad_shape = bad_shape or (evidence, f"step {i} has label {s.get('label')!r}, not a string")
            if "note" in s and not isinstance(s["note"], str):
                bad_shape = bad_shape or (evidence, f"step {i} has note {s['note']!r}, not a string")
            if s.get("state") not in STATES:
                bad_state = bad_state or (evidence, f"step {i} has state {s.get('state')!r}")
    out = []
    out.append(fail("PLAN-003", f"{bad_state[1]}; {SEED} (field table): \"pending, active, done, blocked, or "
                    "skipped\"", [bad_state[0]]) if bad_state
               else ok("PLAN-003", f"{len(plans)} plans, every state one of the five"))
    out.append(fail("PLAN-004", f"{bad_shape[1]}; {SEED} (field table: steps array, label string, note string, "
                    "optional)", [bad_shape[0]]) if bad_shape else ok("PLAN-004", f"{len(plans)} plans well shaped"))
    return out


@rule("PLAN-005")
def step_limit(log: FrameLog, ctx: RuleContext):
    for evidence, plan in _all_plans(log):
        steps = _steps(plan)
        if steps is not None and len(steps) > MAX_STEPS:
            return [fail("PLAN-005", f"a plan with {len(steps)} steps; {SEED}: \"steps past the 20th are "
                         "dropped\"", [evidence])]
    ex = log.get("stream")
    pairs = _aligned(log, ex) if ex is not None else None
    judged = 0
    for k, (ev, sent, asked) in enumerate(pairs or [], 1):
        if len(asked) <= MAX_STEPS:
            continue
        judged += 1
        if len(sent) != MAX_STEPS or any(isinstance(s, dict) and s.get("label") != a["label"] for s, a in zip(sent, asked)
                       if not over(a["label"], LABEL_MAX)):
            return [fail("PLAN-005", f"plan update {k}: the call gave {len(asked)} steps; {len(sent)} were sent, "
                         f"not the first 20 in order; {SEED}: \"steps past the 20th are dropped\"",
                         [ev_evidence(ex, ev)])]
    if pairs is None:
        return []
    return [ok("PLAN-005", f"no plan over 20 steps; {judged} over-long plans kept their first 20 steps")]


def _cuts(log: FrameLog, field: str, limit: int, must: str, should: str):
    ex, errs = _stream(log, must, should)
    if ex is None:
        return errs
    pairs = _aligned(log, ex)
    if not pairs:
        return []
    must_bad, readings, judged = None, [], 0
    for k, (ev, sent, asked) in enumerate(pairs, 1):
        for i, (s, a) in enumerate(zip(sent, asked[:MAX_STEPS]), 1):
            raw = a.get(field)
            if raw is None or not isinstance(s, dict) or not (over(raw, limit) or s.get(field) != raw):
                continue
            judged += 1
            complaint, length = judge_cut(raw, s.get(field), limit)
            where = f"update {k} step {i} ({len(raw)} code points / {utf16_len(raw)} UTF-16 units)"
            if complaint and must_bad is None:
                must_bad = (f"{where}: {complaint}", ev_evidence(ex, ev))
            if length:
                readings.append((length[0], f"{where}: {length[1]}", ev_evidence(ex, ev), length[1]))
    if not judged:
        return []
    out = [fail(must, f"{must_bad[0]}; {SEED}: \"A longer label or note is cut to its limit, ending in …\"",
                [must_bad[1]]) if must_bad else ok(must, f"{judged} {field}s at or over the limit handled")]
    if readings:
        rank = {Outcome.PASS: 0, Outcome.NON_STRICT: 1, Outcome.FAIL: 2}
        worst = max(readings, key=lambda r: rank[r[0]])
        summary = "; ".join(r[1] for r in readings if r[0] == worst[0])
        if worst[0] == Outcome.PASS:
            out.append(ok(should, quote(summary, 600), reading=worst[3].split(":")[0]))
        else:
            out.append(outcome(should, worst[0], f"{quote(summary, 600)}; {SEED}: \"{field} … at most {limit} "
                               "characters\"", [worst[2]], reading=worst[3].split(":")[0]))
    return out


@rule("PLAN-006", "PLAN-007")
def label_cuts(log: FrameLog, ctx: RuleContext):
    return _cuts(log, "label", LABEL_MAX, "PLAN-006", "PLAN-007")


@rule("PLAN-008", "PLAN-009")
def note_cuts(log: FrameLog, ctx: RuleContext):
    return _cuts(log, "note", NOTE_MAX, "PLAN-008", "PLAN-009")


@rule("PLAN-010", "PLAN-011")
def tool_results(log: FrameLog, ctx: RuleContext):
    ex, errs = _stream(log, "PLAN-010", "PLAN-011")
    if ex is None:
        return errs
    good, bad, out = [], [], []
    for prefix, suffix, call in say_results(log.script):
        ev, result = said(ex, prefix, suffix)
        (good if well_shaped(call) else bad).append((prefix, ev, result))
    wrong = [(p, ev, r) for p, ev, r in good if r != PLAN_UPDATED]
    if good:
        if wrong:
            p, ev, r = wrong[0]
            out.append(fail("PLAN-010", f"after a well-shaped update_plan call the model saw {r!r} (say {p!r}), "
                            f"not 'Plan updated'; {SEED}: \"answers Plan updated … the call does not fail for "
                            "length\"", [ev_evidence(ex, ev)] if ev else [ex_evidence(ex, "no such say")]))
        else:
            out.append(ok("PLAN-010", f"{len(good)} calls answered 'Plan updated'"))
    if bad:
        accepted = [(p, ev, r) for p, ev, r in bad if r is None or r == PLAN_UPDATED]
        sent = len(ordered(ex)) - len([c for c in plan_calls(log.script) if well_shaped(c)])
        if accepted:
            p, ev, r = accepted[0]
            out.append(fail("PLAN-011", f"after a wrong-shaped update_plan call the model saw {r!r} (say {p!r}); "
                            f"{SEED}: \"A plan of the wrong shape is a failed tool result the model sees\"",
                            [ev_evidence(ex, ev)] if ev else [ex_evidence(ex, "no such say")]))
        elif sent > 0:
            out.append(fail("PLAN-011", f"{sent} more plan updates than well-shaped calls: a wrong-shaped plan "
                            f"was sent; {SEED}", [ex_evidence(ex)]))
        else:
            out.append(ok("PLAN-011", "failed results seen: " + "; ".join(quote(r, 100) for _, _, r in bad)))
    return out


@rule("PLAN-012", "PLAN-013")
def plan_read_back(log: FrameLog, ctx: RuleContext):
    ex, _ = _stream(log, "PLAN-012", "PLAN-013")  # the latest plan is known only from a whole turn
    got = ordered(ex) if ex is not None else []
    if not got:
        return []
    latest = got[-1][2]
    out = []
    for rid, where in (("PLAN-012", "GetTask"), ("PLAN-013", "ListTasks")):
        label = "get_task" if where == "GetTask" else "list_tasks"
        x, errs = needed(log, label, rid)
        if x is None:
            out += errs
            continue
        found = [(w, xx, p) for w, xx, p in read_back(log) if w == where]
        if not found:
            out.append(fail(rid, f"{where} did not answer the task", [ex_evidence(x)]))
        elif found[0][2] != latest:
            out.append(fail(rid, f"{where} carries {quote(str(found[0][2]), 200)} in metadata[{URI}], not the "
                            f"latest plan streamed {quote(str(latest), 200)}; {SEED}: \"GetTask and ListTasks carry "
                            "the latest plan in the task's metadata\"", [ex_evidence(x), ev_evidence(ex, got[-1][0])]))
        else:
            out.append(ok(rid, f"{where} carries the latest plan streamed"))
    return out


@rule("PLAN-014")
def no_leaks(log: FrameLog, ctx: RuleContext):
    sentinels = (ctx.scenario.data.get("sentinels") if ctx.scenario else None) or []
    plans = _all_plans(log)
    if not plans or not sentinels:
        return []
    for evidence, plan in plans:
        for i, s in enumerate(_steps(plan) or [], 1):
            for key in ("label", "note"):
                text = s.get(key) if isinstance(s, dict) else None
                hit = next((x for x in sentinels if isinstance(text, str) and x in text), None)
                if hit:
                    return [fail("PLAN-014", f"step {i}'s {key} carries {hit!r}, a string the script put only in "
                                 f"tool arguments or results: {quote(text, 160)!r}; {SEED}: \"They never carry "
                                 "tool arguments or results\"", [evidence])]
    return [ok("PLAN-014", f"{len(plans)} plans; none carries the sentinels {sentinels}")]


@rule("PLAN-015")
def plan_timestamps(log: FrameLog, ctx: RuleContext):
    ex, errs = _stream(log, "PLAN-015")
    if ex is None:
        return errs
    items = streamed(ex)
    if not items:
        return []
    for ev, upd, _ in items:
        if _ts(upd) is None:
            return [fail("PLAN-015", f"a plan status update without a valid status.timestamp "
                         f"({upd.get('status', {}).get('timestamp')!r}); {SEED}: \"Order them by status.timestamp\"",
                         [ev_evidence(ex, ev)])]
    return [ok("PLAN-015", f"{len(items)} plan updates, each with status.timestamp")]


@rule("PLAN-016", "PLAN-017")
def no_plan_sent(log: FrameLog, ctx: RuleContext):
    ex, errs = _stream(log, "PLAN-016", "PLAN-017")
    if ex is None:
        return errs
    rid = "PLAN-017" if log.notes.get("plan_agent") == "shadow" else "PLAN-016"
    seen = []
    for ev, result in ex.results():
        body = result.get("statusUpdate") or result.get("task")
        if isinstance(body, dict) and _plan_of(body.get("metadata")) is not None:
            seen.append(ev_evidence(ex, ev))
    seen += [ex_evidence(x, where) for where, x, plan in read_back(log) if plan is not None]
    results = [said(ex, p, s)[1] for p, s, _ in say_results(log.script)]
    if seen:
        why = ("\"unless it declares its own tool of that name\"" if rid == "PLAN-017"
               else "\"An agent without update_plan sends no plan\"")
        return [fail(rid, f"a plan was sent ({len(seen)} places); {SEED}: {why}", seen[:4])]
    return [ok(rid, f"no plan sent; the model saw {results}")]
