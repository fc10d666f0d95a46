"""PLAN-: progress/v1 plans over A2A. Each well-shaped update_plan call is streamed as the whole plan,
within the limits; GetTask and ListTasks carry the latest one; a plan never carries a tool's arguments
or results; an agent without the built-in tool sends none; GetTask after a plan stream shows the task the
stream delivered (its state and artifacts, judged as A2A-TASK-001 and -003 judge them).

What the rules read is in planview.py (`PlanUpdates`, `PlansSeen`, `ReadBack`); the judge of a cut
label or note in plancut.py.
"""

from __future__ import annotations

from typing import Any

from ...contract.a2a import PLAN_AGENT
from ...outcomes import Outcome
from ...protocols.progress_v1 import LABEL_MAX, MAX_STEPS, NOTE_MAX, PLAN_UPDATED, STATES, URI
from .. import Unjudgeable, Verdict, Verdicts, ev_evidence, ex_evidence, quote, rule
from ..a2a.task import TaskAfterStream, artifacts_after_stream, state_after_stream
from .plancut import judge_cut, over, utf16_len
from .planview import (
    PlansSeen,
    PlanUpdates,
    ReadBack,
    plan_of,
    read_back,
    said,
    say_results,
    steps_of,
    timestamp,
    well_shaped,
)


@rule("PLAN-001", view=PlanUpdates)
def plan_updates_sent(v: PlanUpdates, out: Verdict) -> None:
    got, want = len(v.updates), len(v.calls)
    if got == want:
        out.passed(f"{got} plan updates for {want} accepted update_plan calls")
    else:
        out.failed(f"{got} plan updates (ordered by status.timestamp, repeats counted once) for {want} well-shaped "
                   "update_plan calls in the script; expected one status update with the plan per call",
                   [ev_evidence(v.stream, u.event) for u in v.updates[:6]] or [ex_evidence(v.stream)])


def _note(step: Any) -> Any:
    return step.get("note") if isinstance(step, dict) else None


@rule("PLAN-002", view=PlanUpdates)
def whole_plan(v: PlanUpdates, out: Verdict) -> None:
    pairs = v.aligned
    if not pairs:
        return
    for k, (ev, sent, asked) in enumerate(pairs, 1):
        n = min(len(asked), MAX_STEPS)
        if len(sent) < n or (len(asked) <= MAX_STEPS and len(sent) > n):
            out.failed(f"plan update {k} has {len(sent)} steps; the call gave {len(asked)} (the whole plan is {n} "
                       "steps after limits); expected the whole plan each time, never a diff",
                       [ev_evidence(v.stream, ev)])
            return
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
                out.failed(f"plan update {k}, step {i}: " + "; ".join(wrong) + "; expected the call's whole plan",
                           [ev_evidence(v.stream, ev)])
                return
    out.passed(f"{len(pairs)} plan updates, each the whole plan of its call")


@rule("PLAN-003", "PLAN-004", view=PlansSeen)
def plan_shape(v: PlansSeen, out: Verdicts) -> None:
    if not v.plans:
        return
    bad_state, bad_shape = None, None  # the first of each: (evidence, why)
    for evidence, plan in v.plans:
        steps = steps_of(plan)
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
    if bad_state:
        out["PLAN-003"].failed(f"{bad_state[1]}; expected one of {', '.join(STATES)}", [bad_state[0]])
    else:
        out["PLAN-003"].passed(f"{len(v.plans)} plans, every state one of the five")
    if bad_shape:
        out["PLAN-004"].failed(f"{bad_shape[1]}; expected a steps array of objects with a string label and, if "
                               "present, a string note", [bad_shape[0]])
    else:
        out["PLAN-004"].passed(f"{len(v.plans)} plans well shaped")


@rule("PLAN-005", view=PlansSeen)
def step_limit(v: PlansSeen, out: Verdict) -> None:
    for evidence, plan in v.plans:
        steps = steps_of(plan)
        if steps is not None and len(steps) > MAX_STEPS:
            out.failed(f"a plan with {len(steps)} steps; expected at most {MAX_STEPS}, the rest dropped", [evidence])
            return
    pairs = v.stream_updates.aligned if v.stream_updates is not None else None
    judged = 0
    for k, (ev, sent, asked) in enumerate(pairs or [], 1):
        if len(asked) <= MAX_STEPS:
            continue
        judged += 1
        if len(sent) != MAX_STEPS or any(isinstance(s, dict) and s.get("label") != a["label"]
                                         for s, a in zip(sent, asked) if not over(a["label"], LABEL_MAX)):
            out.failed(f"plan update {k}: the call gave {len(asked)} steps; {len(sent)} were sent, not the first "
                       f"{MAX_STEPS} in order", [ev_evidence(v.stream_updates.stream, ev)])
            return
    if pairs is not None:
        out.passed(f"no plan over {MAX_STEPS} steps; {judged} over-long plans kept their first {MAX_STEPS} steps")


def _judge_cuts(v: PlanUpdates, field: str, limit: int, must: Verdict, should: Verdict) -> None:
    """Every label (or note) the agent cut or had to cut: the MUST (a prefix, the …, no character split)
    and the SHOULD (the length), the worst reading reported with every update that took it."""
    pairs = v.aligned
    if not pairs:
        return
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
                must_bad = (f"{where}: {complaint}", ev_evidence(v.stream, ev))
            if length:
                readings.append((length[0], f"{where}: {length[1]}", ev_evidence(v.stream, ev), length[1]))
    if not judged:
        return
    if must_bad:
        must.failed(f"{must_bad[0]}; expected a {field} over {limit} characters cut to a prefix of itself ending "
                    "in …", [must_bad[1]])
    else:
        must.passed(f"{judged} {field}s at or over the limit handled")
    if readings:
        rank = {Outcome.PASS: 0, Outcome.NON_STRICT: 1, Outcome.FAIL: 2}
        worst = max(readings, key=lambda r: rank[r[0]])
        summary = "; ".join(r[1] for r in readings if r[0] == worst[0])
        reading = worst[3].split(":")[0]
        if worst[0] == Outcome.PASS:
            should.passed(quote(summary, 600), reading=reading)
        else:
            should.add(worst[0], f"{quote(summary, 600)}; expected a cut {field} of exactly {limit} code points, "
                       "the … included", [worst[2]], reading=reading)


@rule("PLAN-006", "PLAN-007", view=PlanUpdates)
def label_cuts(v: PlanUpdates, out: Verdicts) -> None:
    _judge_cuts(v, "label", LABEL_MAX, out["PLAN-006"], out["PLAN-007"])


@rule("PLAN-008", "PLAN-009", view=PlanUpdates)
def note_cuts(v: PlanUpdates, out: Verdicts) -> None:
    _judge_cuts(v, "note", NOTE_MAX, out["PLAN-008"], out["PLAN-009"])


@rule("PLAN-010", "PLAN-011", view=PlanUpdates)
def tool_results(v: PlanUpdates, out: Verdicts) -> None:
    """What the model saw after each update_plan call, read through the script's `say` steps."""
    good, bad = [], []
    for prefix, suffix, call in say_results(v.script):
        ev, result = said(v.stream, prefix, suffix)
        (good if well_shaped(call) else bad).append((prefix, ev, result))

    def evidence(ev: Any) -> list[dict[str, Any]]:
        return [ev_evidence(v.stream, ev)] if ev else [ex_evidence(v.stream, "no such say")]

    if good:
        wrong = [(p, ev, r) for p, ev, r in good if r != PLAN_UPDATED]
        if wrong:
            p, ev, r = wrong[0]
            out["PLAN-010"].failed(f"after a well-shaped update_plan call the model saw {r!r} (say {p!r}); expected "
                                   f"{PLAN_UPDATED!r}, also for a plan over the limits", evidence(ev))
        else:
            out["PLAN-010"].passed(f"{len(good)} calls answered {PLAN_UPDATED!r}")
    if bad:
        accepted = [(p, ev, r) for p, ev, r in bad if r is None or r == PLAN_UPDATED]
        extra = len(v.updates) - len(v.calls)
        if accepted:
            p, ev, r = accepted[0]
            out["PLAN-011"].failed(f"after a wrong-shaped update_plan call the model saw {r!r} (say {p!r}); expected "
                                   "a failed tool result", evidence(ev))
        elif extra > 0:
            out["PLAN-011"].failed(f"{extra} more plan updates than well-shaped calls: a wrong-shaped plan was sent",
                                   [ex_evidence(v.stream)])
        else:
            out["PLAN-011"].passed("failed results seen: " + "; ".join(quote(r, 100) for _, _, r in bad))


def _carries_latest(v: ReadBack, where: str, out: Verdict) -> None:
    x = v.answers[where]
    if isinstance(x, Unjudgeable):
        if x.message:  # its transport failed: no answer to judge
            out.error(x.message, x.evidence)
        return
    if where not in v.carried:
        out.failed(f"{where} did not answer the task", [ex_evidence(x)])
    elif v.carried[where] != v.latest.plan:
        out.failed(f"{where} carries {quote(str(v.carried[where]), 200)} in metadata[{URI}], not the latest plan "
                   f"streamed {quote(str(v.latest.plan), 200)}", [ex_evidence(x), ev_evidence(v.stream, v.latest.event)])
    else:
        out.passed(f"{where} carries the latest plan streamed")


@rule("PLAN-012", "PLAN-013", view=ReadBack)
def plan_read_back(v: ReadBack, out: Verdicts) -> None:
    _carries_latest(v, "GetTask", out["PLAN-012"])
    _carries_latest(v, "ListTasks", out["PLAN-013"])


@rule("PLAN-014", view=PlansSeen)
def no_leaks(v: PlansSeen, out: Verdict) -> None:
    if not v.plans or not v.sentinels:
        return
    for evidence, plan in v.plans:
        for i, s in enumerate(steps_of(plan) or [], 1):
            for key in ("label", "note"):
                text = s.get(key) if isinstance(s, dict) else None
                hit = next((x for x in v.sentinels if isinstance(text, str) and x in text), None)
                if hit:
                    out.failed(f"step {i}'s {key} carries {hit!r}, a string the script put only in tool arguments or "
                               f"results: {quote(text, 160)!r}", [evidence])
                    return
    out.passed(f"{len(v.plans)} plans; none carries the sentinels {v.sentinels}")


@rule("PLAN-015", view=PlanUpdates)
def plan_timestamps(v: PlanUpdates, out: Verdict) -> None:
    items = v.arrived
    if not items:
        return
    for u in items:
        if timestamp(u.update) is None:
            out.failed(f"a plan status update without a valid status.timestamp "
                       f"({u.update.get('status', {}).get('timestamp')!r}); expected a date-time to order the "
                       "updates by", [ev_evidence(v.stream, u.event)])
            return
    out.passed(f"{len(items)} plan updates, each with status.timestamp")


@rule("PLAN-016", "PLAN-017", view=PlanUpdates)
def no_plan_sent(v: PlanUpdates, out: Verdicts) -> None:
    """An agent without the built-in tool (PLAN-016), or whose own tool has its name (PLAN-017):
    the log's notes say which agent the driver certified."""
    shadow = v.log.notes.get(PLAN_AGENT) == "shadow"
    verdict = out["PLAN-017" if shadow else "PLAN-016"]
    seen = []
    for ev, result in v.stream.results():
        body = result.get("statusUpdate") or result.get("task")
        if isinstance(body, dict) and plan_of(body.get("metadata")) is not None:
            seen.append(ev_evidence(v.stream, ev))
    seen += [ex_evidence(x, where) for where, x, plan in read_back(v.log) if plan is not None]
    if seen:
        why = "its own tool of that name runs, not the built-in" if shadow else "it has no update_plan"
        verdict.failed(f"a plan was sent ({len(seen)} places); expected none: {why}", seen[:4])
    else:
        results = [said(v.stream, p, s)[1] for p, s, _ in say_results(v.script)]
        verdict.passed(f"no plan sent; the model saw {results}")


@rule("PLAN-019", view=TaskAfterStream)
def task_read_back(v: TaskAfterStream, out: Verdict) -> None:
    if v.read_back.explain(out):
        return
    for compare in (state_after_stream, artifacts_after_stream):
        compare(v, out)
