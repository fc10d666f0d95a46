"""IDEM-: the answer's messageId is its idempotency key (seed 004 · The answer: "a retry with the same
id answers once").

Labels read: retry_N (answer N again, same messageId and body), reuse_N (same messageId, another body:
observed and reported only; the seed is silent), get_after_retry_M (GetTask right after a retry, at the
next pause), answer_N and answer_N_twin (two identical answers at the same moment).
"""

from __future__ import annotations

import json
from typing import Any

from ..framelog import FrameLog
from ..outcomes import Finding
from . import RuleContext, ex_evidence, fail, ok, quote, rule
from .interactions import _code
from .ixview import SEED, IxView, Pause, answered, interaction_of

SPEC = f"{SEED} · The answer: \"The messageId is the answer's idempotency key: a retry with the same id answers once.\""


def _different_body(log: FrameLog, n: int) -> str | None:
    took, value = answered(log.get(f"reuse_{n}"))
    if took is None:
        return None
    if took:
        return f"accepted ({quote(json.dumps(value, ensure_ascii=False), 160)})"
    return f"refused with {_code(value)}"


@rule("IDEM-001")
def retry_same_result(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    view = IxView.of(log)
    out = []
    for ex in [e for e in log.exchanges if e.label.startswith("retry_")]:
        n = int(ex.label.rsplit("_", 1)[1])
        took, value = answered(ex)
        first_took, first = answered(log.get(f"answer_{n}"))
        if took is None or not first_took:
            continue
        measured: dict[str, Any] = {}
        reused = _different_body(log, n)
        if reused:
            measured["different_body"] = f"the same messageId with another body was {reused}"
        if not took:
            out.append(fail("IDEM-001", f"the retry of answer {n} (same messageId and body) got {_code(value)} "
                                        f"({SPEC})", [ex_evidence(ex)], measured=measured))
            continue
        task = value.get("task") if isinstance(value, dict) and isinstance(value.get("task"), dict) else value
        if value == first:
            reading = "the first answer's response again"
        elif isinstance(task, dict) and task.get("id") == view.task_id:
            reading = "the task as it is now"
        else:
            out.append(fail("IDEM-001", f"the retry of answer {n} got a result that is neither the first answer's "
                                        f"nor the same task ({SPEC})",
                            [ex_evidence(ex), ex_evidence(log.get(f"answer_{n}"))], measured=measured))
            continue
        extra = f"; {measured['different_body']} (reported, not judged)" if measured else ""
        out.append(ok("IDEM-001", f"the retry of answer {n} succeeded with {reading}{extra}", measured=measured,
                      reading=reading))
    return out


def _once(view: IxView, pause: Pause) -> tuple[int, str | None]:
    step = view.step(pause)
    template = step.say if step else None
    return len(view.reports(template)), template


@rule("IDEM-002")
def retry_no_second_effect(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    view = IxView.of(log)
    bad, checked = [], []
    for ex in [e for e in log.exchanges if e.label.startswith("retry_")]:
        n = int(ex.label.rsplit("_", 1)[1])
        took, _ = answered(ex)
        if not took or n > len(view.pauses):
            continue
        count, template = _once(view, view.pauses[n - 1])
        if template and count > 1:
            bad.append(ex_evidence(ex, f"the model reported answer {n} {count} times ({template!r})"))
        after = view.unary_result(f"get_after_retry_{n + 1}")
        if after is not None and n < len(view.pauses):
            following = view.pauses[n]
            status = after.get("status") or {}
            if status.get("state") != following.state or interaction_of(status.get("message")) != following.interaction:
                bad.append(ex_evidence(log.get(f"get_after_retry_{n + 1}"),
                                       f"after the retry of answer {n} the task shows {status.get('state')}, no longer "
                                       f"the open interaction of pause {n + 1}: the retry answered it"))
        checked.append(n)
    if bad:
        return [fail("IDEM-002", f"a retried answer had a second effect ({SPEC})", bad)]
    return [ok("IDEM-002", f"retries of answer(s) {checked}: answered once")] if checked else []


@rule("IDEM-003")
def concurrent_once(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    view = IxView.of(log)
    out = []
    for twin in [e for e in log.exchanges if e.label.endswith("_twin")]:
        n = int(twin.label.split("_")[1])
        first = log.get(f"answer_{n}")
        results = [answered(first), answered(twin)]
        if any(took is None for took, _ in results) or n > len(view.pauses):
            continue
        taken = [took for took, _ in results]
        if not any(taken):
            out.append(fail("IDEM-003", f"neither of two identical answers was taken: {_code(results[0][1])}, "
                                        f"{_code(results[1][1])}", [ex_evidence(first), ex_evidence(twin)]))
            continue
        count, template = _once(view, view.pauses[n - 1])
        moved_on = n < len(view.pauses) or bool(view.reports(template))
        twice = template and count > 1
        if twice or (n < len(view.pauses) and _answered_next_with(view, log, n)):
            what = f"the model reported answer {n} {count} times ({template!r})" if twice else \
                f"the twin of answer {n} answered the next question too"
            out.append(fail("IDEM-003", f"two identical answers sent at the same moment had two effects: {what} "
                                        f"({SPEC})", [ex_evidence(first), ex_evidence(twin)]))
        elif moved_on:
            reading = "both answered with a result" if all(taken) else \
                f"one answered, its twin refused with {_code(next(v for t, v in results if not t))}"
            out.append(ok("IDEM-003", f"two identical answers at once: one effect; {reading}", reading=reading))
    return out


def _answered_next_with(view: IxView, log: FrameLog, n: int) -> bool:
    """Whether the say after pause n+1 shows answer n's value (the twin answered the next question)."""
    from .ixview import answer_value, split

    step = view.step(view.pauses[n])
    if step is None or not step.say:
        return False
    head, tail = split(step.say)
    _, value = answer_value(view.sent_message(f"answer_{n}"))
    _, next_value = answer_value(view.sent_message(f"answer_{n + 1}"))
    if value == next_value:
        return False
    for said in view.reports(step.say):
        middle = said.text[len(head):len(said.text) - len(tail) if tail else None]
        try:
            if json.loads(middle) == value:
                return True
        except ValueError:
            if middle == value:
                return True
    return False
