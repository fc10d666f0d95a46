"""IDEM-: the answer's messageId is its idempotency key: a retry with the same id answers once
(interactions/v1 · The answer).

Labels read: retry_N (answer N again, same messageId and body), reuse_N (same messageId, another body:
observed and reported only; the extension is silent), get_after_retry_M (GetTask right after a retry,
at the next pause), answer_N and answer_N_twin (two identical answers at the same moment).
"""

from __future__ import annotations

import json
from typing import Any

from ...contract.labels.a2a import ANSWER_PREFIX
from ...contract.labels.interactions import GET_AFTER_RETRY_PREFIX, RETRY_PREFIX, REUSE_PREFIX, TWIN_SUFFIX
from ...protocols.interactions_v1 import interaction_of
from .. import Verdict, ex_evidence, quote, rule
from .ixview import Interruptions, Pause, named_code, reply, split


def _different_body(v: Interruptions, n: int) -> str | None:
    """What became of answer n's messageId sent again with another body (reported, not judged)."""
    took, value = v.reply(f"{REUSE_PREFIX}{n}")
    if took is None:
        return None
    if took:
        return f"accepted ({quote(json.dumps(value, ensure_ascii=False), 160)})"
    return f"refused with {named_code(value)}"


def _numbered(v: Interruptions, prefix: str) -> list[tuple[int, Any]]:
    """The exchanges labelled prefix + N, each with its N."""
    return [(int(ex.label.rsplit("_", 1)[1]), ex) for ex in v.log.exchanges if ex.label.startswith(prefix)]


@rule("IDEM-001", view=Interruptions)
def retry_answers_once(v: Interruptions, out: Verdict) -> None:
    for n, ex in _numbered(v, RETRY_PREFIX):
        took, value = reply(ex)
        first_took, first = v.reply(f"{ANSWER_PREFIX}{n}")
        if took is None or not first_took or n > len(v.pauses):
            continue
        measured: dict[str, Any] = {}
        reused = _different_body(v, n)
        if reused:
            measured["different_body"] = f"the same messageId with another body was {reused}"
        extra = f"; {measured['different_body']} (reported, not judged)" if measured else ""
        if not took:
            reading = "a refusal"
            out.passed(f"the retry of answer {n} was refused with {named_code(value)}: answered once{extra}",
                       measured=measured, reading=reading)
            continue
        task = value.get("task") if isinstance(value, dict) and isinstance(value.get("task"), dict) else value
        answered = v.pauses[n - 1]
        status = task.get("status") if isinstance(task, dict) and isinstance(task.get("status"), dict) else {}
        if (value != first and status.get("state") == answered.state
                and answered.interaction is not None and interaction_of(status.get("message")) == answered.interaction):
            opened = (answered.interaction or {}).get("interactionId")
            out.failed(f"the retry of answer {n} got the task as it was before the answer ({answered.state}, its "
                       f"interaction {opened!r} still open): a second answer, not the first one's response",
                       [ex_evidence(ex), ex_evidence(v.log.get(f"{ANSWER_PREFIX}{n}"))], measured=measured)
            continue
        if value == first:
            reading = "the first answer's response again"
        elif isinstance(task, dict) and task.get("id") == v.task_id:
            reading = "the task as it is now"
        else:
            out.failed(f"the retry of answer {n} got a result that is neither the first answer's nor the same task",
                       [ex_evidence(ex), ex_evidence(v.log.get(f"{ANSWER_PREFIX}{n}"))], measured=measured)
            continue
        out.passed(f"the retry of answer {n} succeeded with {reading}{extra}", measured=measured, reading=reading)


def _reported(v: Interruptions, pause: Pause) -> tuple[int, str | None]:
    """How many times the model reported this pause's outcome, and the say template it fills."""
    step = v.step(pause)
    template = step.say if step else None
    return len(v.reports(template)), template


@rule("IDEM-002", view=Interruptions)
def retry_has_no_second_effect(v: Interruptions, out: Verdict) -> None:
    bad, checked = [], []
    for n, ex in _numbered(v, RETRY_PREFIX):
        took, _ = reply(ex)
        if not took or n > len(v.pauses):
            continue
        count, template = _reported(v, v.pauses[n - 1])
        if template and count > 1:
            why = f"the model reported answer {n} {count} times ({template!r})"
            bad.append((why, ex_evidence(ex, why)))
        after = v.unary_result(f"{GET_AFTER_RETRY_PREFIX}{n + 1}")
        if after is not None and n < len(v.pauses):
            following = v.pauses[n]
            status = after.get("status") or {}
            if status.get("state") != following.state or interaction_of(status.get("message")) != following.interaction:
                why = (f"after the retry of answer {n} the task shows {status.get('state')}, no longer the open "
                       f"interaction of pause {n + 1}: the retry answered it")
                bad.append((why, ex_evidence(v.log.get(f"{GET_AFTER_RETRY_PREFIX}{n + 1}"), why)))
        checked.append(n)
    if not out.fail_each("second effect(s) of a retried answer", bad) and checked:
        out.passed(f"retries of answer(s) {checked}: answered once")


@rule("IDEM-003", view=Interruptions)
def concurrent_answers_have_one_effect(v: Interruptions, out: Verdict) -> None:
    for twin in [e for e in v.log.exchanges if e.label.endswith(TWIN_SUFFIX)]:
        n = int(twin.label.split("_")[1])
        first = v.log.get(f"{ANSWER_PREFIX}{n}")
        results = [reply(first), reply(twin)]
        if any(took is None for took, _ in results) or n > len(v.pauses):
            continue
        taken = [took for took, _ in results]
        evidence = [ex_evidence(first), ex_evidence(twin)]
        if not any(taken):
            out.failed(f"neither of two identical answers was taken: {named_code(results[0][1])}, "
                       f"{named_code(results[1][1])}", evidence)
            continue
        count, template = _reported(v, v.pauses[n - 1])
        moved_on = n < len(v.pauses) or bool(v.reports(template))
        twice = template and count > 1
        if twice or (n < len(v.pauses) and _twin_answered_the_next(v, n)):
            what = f"the model reported answer {n} {count} times ({template!r})" if twice else \
                f"the twin of answer {n} answered the next question too"
            out.failed(f"two identical answers sent at the same moment had two effects: {what}", evidence)
        elif moved_on:
            reading = "both answered with a result" if all(taken) else \
                f"one answered, its twin refused with {named_code(next(val for t, val in results if not t))}"
            out.passed(f"two identical answers at once: one effect; {reading}", reading=reading)


def _twin_answered_the_next(v: Interruptions, n: int) -> bool:
    """Whether the say after pause n+1 shows answer n's value (the twin answered the next question)."""
    step = v.step(v.pauses[n])
    if step is None or not step.say:
        return False
    head, tail = split(step.say)
    _, value = v.answer_sent(n)
    _, next_value = v.answer_sent(n + 1)
    if value == next_value:
        return False
    for said in v.reports(step.say):
        middle = said.text[len(head):len(said.text) - len(tail) if tail else None]
        try:
            if json.loads(middle) == value:
                return True
        except ValueError:
            if middle == value:
                return True
    return False
