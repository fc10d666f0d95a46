"""A2A-INT- and IX-: interrupted states and the interactions/v1 extension (approval, question,
connection), as one scripted task shows them across every stream of the run.

Reads the labels streamcert.drivers.interactions writes, through the view `Interruptions`
(rules/interactions/ixview.py). Truncation (IX-010) is in rules/interactions/ixtruncation.py; idempotency (IDEM-) in
rules/interactions/idempotency.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ...contract.capture import STREAMING
from ...contract.labels.a2a import ANSWER_PREFIX, CARD
from ...contract.labels.interactions import (
    ANSWER_TERMINAL,
    GET_AFTER_PREFIX,
    GET_AFTER_TEXT_PREFIX,
    GET_PAUSE_PREFIX,
    STALE_PREFIX,
    SUBSCRIBE_PREFIX,
    TEXT_REPLY_PREFIX,
    WRONG_ID_PREFIX,
)
from ...protocols import a2a, bindings
from ...protocols import interactions_v1 as ix
from ...protocols.interactions_v1 import (
    APP_MAX,
    APPROVAL,
    CONNECTION,
    DENIED,
    DETAIL,
    INTERACTION_ID,
    KIND,
    KINDS,
    PROMPT,
    QUESTION,
    REASON_MAX,
    STATE_OF,
    URI,
    interaction_of,
)
from .. import Run, Verdict, Verdicts, ev_evidence, ex_evidence, quote, rule
from .ixview import Interruptions, Pause, Step, answer_value, named_code, reply, same_json, text_of, without_user_messages


def _never_paused(v: Interruptions, out: Verdict, what: str) -> None:
    """FAIL when the task stream answered but never reached an interrupted state."""
    if seen := v.never_paused():
        why, evidence = seen
        out.failed(f"{what}: {why}", [evidence])


# -- A2A-INT-: the interrupted states of A2A ----------------------------------------------------------

@rule("A2A-INT-001", view=Interruptions)
def ask_pauses_with_its_question(v: Interruptions, out: Verdict) -> None:
    asks = v.pauses_of(QUESTION)
    if not asks:
        if v.steps and v.steps[0].kind == QUESTION:
            _never_paused(v, out, "an ask step")
        return
    bad = []
    for pause, step in asks:
        text = text_of(pause.message)
        if pause.state != a2a.INPUT_REQUIRED or text != step.arg:
            why = f"pause {pause.n}: state {pause.state}, text {text!r}; the question was {step.arg!r}"
            bad.append((why, pause.evidence(why)))
    if not out.fail_each(f"ask(s) not paused in {a2a.INPUT_REQUIRED} with the question as the status message's text",
                         bad):
        out.passed(f"{len(asks)} question(s) paused in {a2a.INPUT_REQUIRED} with the question as text")


@rule("A2A-INT-002", view=Interruptions)
def task_goes_on_in_a_stream(v: Interruptions, out: Verdict) -> None:
    readings, bad = set(), []
    for pause in v.pauses:
        took, _ = v.reply(f"{ANSWER_PREFIX}{pause.n}")
        if not took:
            continue
        events = pause.exchange.data_events()
        closed = events and events[-1] is pause.event and pause.exchange.end == "closed"
        readings.add("closes at the interrupted state" if closed else "stays open")
        # Whichever reading of D3 the server takes, a stream must carry the task on: the stream of the
        # pause if it stayed open, else the SubscribeToTask opened at the pause or a streamed answer.
        carriers = [pause.exchange] if not closed else []
        carriers += [ex for ex in [v.log.get(f"{SUBSCRIBE_PREFIX}{pause.n}"), *map(v.log.get, v.answers_to(pause))]
                     if ex is not None and ex.is_stream]  # (both answers of a pair sent at once: either was taken)
        # a status update of this task only: a server that starts a new task for a message carries that
        # other task's updates, which say nothing of this one
        later = [ev for ex in carriers for ev in ex.data_events() if ev.t > pause.t
                 and isinstance(result := bindings.frame_answer(ex.binding, ev.payload)[0], dict)
                 and isinstance(result.get("statusUpdate"), dict) and result["statusUpdate"].get("taskId") == v.task_id]
        if not later:
            bad.append((pause, "closed at the pause" if closed else "stayed open"))
    if bad:
        evidence = [p.evidence(f"pause {p.n}: the stream {how}") for p, how in bad]
        evidence += [ex_evidence(sub, "SubscribeToTask opened at the pause") for p, _ in bad
                     if (sub := v.log.get(f"{SUBSCRIBE_PREFIX}{p.n}")) is not None]
        out.failed(f"after the answer to pause {bad[0][0].n} no stream carried task {v.task_id} on: neither the "
                   "stream of the pause, the SubscribeToTask opened at it nor the answer's stream showed a status "
                   "update of that task after it; whether a stream closes at an interrupted state or stays open, the "
                   "task must stay observable", evidence)
    elif readings:
        reading = " and ".join(sorted(readings))
        out.passed(f"at {len(v.pauses)} pause(s) the stream {reading}; the task went on in a stream",
                   reading=f"D3: the stream {reading}")


def _resumed(update: dict[str, Any], task_id: str | None) -> bool:
    return (update.get("status") or {}).get("state") == a2a.WORKING and update.get("taskId") == task_id


@rule("A2A-INT-003", view=Interruptions)
def answer_resumes_the_same_task(v: Interruptions, out: Verdict) -> None:
    checked, bad = 0, []
    for pause in v.pauses:
        ex = v.log.get(f"{ANSWER_PREFIX}{pause.n}")
        took, result = reply(ex)
        if not took:
            continue
        task = result.get("task") if isinstance(result, dict) and isinstance(result.get("task"), dict) else None
        if task is not None and task.get("id") != v.task_id:
            why = f"the response to answer {pause.n} names task {task.get('id')!r}, not {v.task_id!r}"
            bad.append((why, ex_evidence(ex, why)))
        # Of two identical answers sent at once, the one the server took moved the task on; the other, its retry,
        # may show the task as the answer left it (a later pause): either may be the one taken.
        afters = [after for label in v.answers_to(pause) if (after := v.first_status_after(pause, label))]
        resumed = [a for a in afters if _resumed(a[2], v.task_id)]
        after = (resumed or afters or [None])[0]
        if after is not None:
            stream, event, update = after
            state = (update.get("status") or {}).get("state")
            if not _resumed(update, v.task_id):
                why = f"after answer {pause.n}: {state} on task {update.get('taskId')!r}"
                bad.append((why, ev_evidence(stream, event, why)))
        checked += 1
    if not out.fail_each(f"answer(s) that did not return the task to {a2a.WORKING} on the same taskId", bad) and checked:
        out.passed(f"{checked} answer(s): back to {a2a.WORKING} on task {v.task_id}")


@rule("A2A-INT-004", "IX-005", view=Interruptions)
def get_task_shows_the_pause(v: Interruptions, out: Verdicts) -> None:
    core_bad, ix_bad, seen, ids = [], [], 0, []
    for pause in v.pauses:
        ex = v.log.get(f"{GET_PAUSE_PREFIX}{pause.n}")
        took, result = reply(ex)
        if not took or not isinstance(result, dict):
            continue
        seen += 1
        status = result.get("status") or {}
        message = status.get("message")
        if status.get("state") != pause.state or text_of(message) != text_of(pause.message):
            why = (f"pause {pause.n}: GetTask shows {status.get('state')} with text {text_of(message)!r}; the stream "
                   f"showed {pause.state} with {text_of(pause.message)!r}")
            core_bad.append((why, ex_evidence(ex, why)))
        ids.append(isinstance(message, dict) and message.get("messageId") == (pause.message or {}).get("messageId"))
        if v.extension and pause.interaction is not None:
            got = interaction_of(message)
            if got != pause.interaction:
                why = (f"pause {pause.n}: GetTask's open interaction {quote(json.dumps(got))}; the stream's "
                       f"{quote(json.dumps(pause.interaction))}")
                ix_bad.append((why, ex_evidence(ex, why)))
    if not out["A2A-INT-004"].fail_each("GetTask(s) during a pause not showing the task as the stream did", core_bad) \
            and seen:
        same = "the same messageId" if all(ids) else "another messageId (reported, not required)"
        out["A2A-INT-004"].passed(f"GetTask at {seen} pause(s): same state and text, {same}")
    if not v.extension:
        return  # a client without the extension: IX-014 judges
    if not out["IX-005"].fail_each("GetTask(s) during a pause not showing the stream's open interaction", ix_bad) \
            and seen:
        out["IX-005"].passed(f"GetTask at {seen} pause(s) shows the same open interaction")


@rule("A2A-INT-005", view=Run)
def answer_to_an_ended_task_refused(run: Run, out: Verdict) -> None:
    ex = run.get(ANSWER_TERMINAL)
    took, value = reply(ex)
    if ex is None or took is None:
        return
    if took:
        out.failed("an answer to a task in a terminal state was accepted; expected UnsupportedOperationError "
                   f"({a2a.UNSUPPORTED_OPERATION})", [ex_evidence(ex)])
    elif not isinstance(value, dict) or value.get("code") != a2a.UNSUPPORTED_OPERATION:
        out.failed(f"an answer to a task in a terminal state was refused with {named_code(value)}; expected "
                   f"UnsupportedOperationError ({a2a.UNSUPPORTED_OPERATION}), as for any message to an ended task",
                   [ex_evidence(ex)])
    else:
        out.passed(f"an answer to the ended task → {named_code(value)}")


# -- IX-: the open interaction ------------------------------------------------------------------------

@rule("IX-001", "IX-002", view=Interruptions)
def pause_shape(v: Interruptions, out: Verdicts) -> None:
    if not v.extension:
        return
    if not v.pauses:
        _never_paused(v, out["IX-001"], "a pausing step")
        return
    state_bad, shape_bad = [], []
    for pause in v.pauses:
        step = v.step(pause)
        if step is None:
            continue
        meta = pause.interaction or {}
        if pause.state != STATE_OF[step.kind] or meta.get(KIND) != step.kind:
            why = (f"pause {pause.n} ({step.kind}): state {pause.state}, kind {meta.get(KIND)!r}; "
                   f"expected {STATE_OF[step.kind]}")
            state_bad.append((why, pause.evidence(why)))
        problems = _shape_problems(pause)
        if problems:
            why = f"pause {pause.n}: " + "; ".join(problems)
            shape_bad.append((why, pause.evidence(why)))
    if not out["IX-001"].fail_each("pause(s) not in their kind's state", state_bad):
        out["IX-001"].passed(f"{len(v.pauses)} pause(s), each in its kind's state")
    if not out["IX-002"].fail_each("interrupted status message(s) not carrying the open interaction", shape_bad):
        out["IX-002"].passed(f"{len(v.pauses)} pause(s): text part = prompt, extensions, metadata[URI]")


def _shape_problems(pause: Pause) -> list[str]:
    message, meta = pause.message, pause.interaction
    if message is None:
        return ["the status has no message"]
    problems = []
    if URI not in (message.get("extensions") or []):
        problems.append(f"the message's extensions {message.get('extensions')!r} do not name {URI}")
    if meta is None:
        return problems + [f"no metadata[{URI}]"]
    if not isinstance(meta.get(INTERACTION_ID), str) or not meta[INTERACTION_ID]:
        problems.append(f"interactionId {meta.get(INTERACTION_ID)!r} is not a non-empty string")
    if meta.get(KIND) not in KINDS:
        problems.append(f"kind {meta.get(KIND)!r} is not {', '.join(KINDS[:-1])} or {KINDS[-1]}")
    if not isinstance(meta.get(PROMPT), str):
        problems.append(f"prompt {meta.get(PROMPT)!r} is not a string")
    elif text_of(message) != meta[PROMPT]:
        problems.append(f"the text part {text_of(message)!r} is not the prompt {meta[PROMPT]!r}")
    if DETAIL in meta and not isinstance(meta[DETAIL], dict):
        problems.append(f"detail {meta[DETAIL]!r} is not an object")
    return problems


def _detail(pause: Pause) -> dict[str, Any]:
    detail = (pause.interaction or {}).get(DETAIL)
    return detail if isinstance(detail, dict) else {}


@rule("IX-003", view=Interruptions)
def approval_names_the_held_call(v: Interruptions, out: Verdict) -> None:
    """The detail is optional (seed 004); when present it names the held call's server and tool as the script's
    call step defines them (docs/contracts.md §6: detail {server, tool}). A reason is the runtime's policy's: never
    compared."""
    approvals = v.pauses_of(APPROVAL)
    if not v.extension or not approvals:
        return
    bad, readings = [], set()
    for pause, step in approvals:
        meta = pause.interaction or {}
        problems = []
        if not isinstance(meta.get(INTERACTION_ID), str) or not meta.get(INTERACTION_ID):
            problems.append(f"interactionId {meta.get(INTERACTION_ID)!r} is not a non-empty string")
        if DETAIL not in meta:
            readings.add("detail left out (optional)")
        elif isinstance(meta[DETAIL], dict):  # (a detail that is not an object: IX-002)
            want = {"server": step.arg.get("server"), "tool": step.arg.get("tool")}
            got = {k: meta[DETAIL].get(k) for k in want}
            if got != want:
                problems.append(f"detail {json.dumps(meta[DETAIL], ensure_ascii=False)}; the held call is "
                                f"{json.dumps(want, ensure_ascii=False)}")
            readings.add("detail with a reason" if "reason" in meta[DETAIL] else "detail without a reason")
        if problems:
            why = f"pause {pause.n}: " + "; ".join(problems)
            bad.append((why, pause.evidence(why)))
    if not out.fail_each("approval(s) whose interactionId is not a non-empty string or whose detail does not name "
                         "the held call's server and tool", bad):
        reading = ", ".join(sorted(readings))
        out.passed(f"{len(approvals)} approval(s) with an interactionId; {reading} (a reason is the runtime's, "
                   "not compared)", reading=reading)


@rule("IX-004", view=Interruptions)
def arguments_never_shown(v: Interruptions, out: Verdict) -> None:
    if not v.extension or not v.sentinel:
        return
    sentinel = v.sentinel
    granted_at = min((ex.t_sent for ex in v.log.exchanges if ex.label.startswith(ANSWER_PREFIX)
                      and ex.label != ANSWER_TERMINAL and answer_value(v.sent_message(ex.label))[1] is True),
                     default=float("inf"))
    hits, searched = [], 0
    for ex in v.log.exchanges:
        if ex.label == CARD or ex.request_body is None:
            continue
        if ex.notes.get(STREAMING):
            for ev in ex.data_events():
                searched += 1
                value = ev.payload if ev.t < granted_at else _paused_status(ev.payload)
                if sentinel in json.dumps(without_user_messages(value), ensure_ascii=False):
                    hits.append(ev_evidence(ex, ev, "the call's arguments appear here"))
        elif ex.label.startswith(("get_", "list_")):
            searched += 1
            value = bindings.read_answer(ex).payload
            if ex.t_sent >= granted_at:
                value = _paused_status(value)
            if sentinel in json.dumps(without_user_messages(value), ensure_ascii=False):
                hits.append(ex_evidence(ex, "the call's arguments appear here"))
    if hits:
        out.failed(f"the held call's arguments ({sentinel!r}) appear in {len(hits)} of {searched} frames and answers "
                   "the server sent", hits)
    elif searched:
        out.passed(f"the arguments appear in none of {searched} frames and answers searched")


def _paused_status(value: Any) -> Any:
    """After a granted call only interrupted statuses are searched (the tool's result may echo its input)."""
    found: list[Any] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            if a2a.is_interrupted(v.get("state")):
                found.append(v)
            for item in v.values():
                walk(item)
        elif isinstance(v, list):
            for item in v:
                walk(item)
    walk(value)
    return found


# -- IX-006..008: what the model saw of an answer -----------------------------------------------------

# expect(via, value, seen) -> what is wrong with what the model saw of an answer sent this way, or None
Expect = Callable[[str, Any, str], "str | None"]


def _judge_reports(v: Interruptions, out: Verdict, kind: str, what: str, expect: Expect) -> None:
    """For each answered pause of `kind` whose step has a say: what the model saw must pass `expect`."""
    checked, bad = [], []
    for pause in v.pauses:
        step = v.step(pause)
        took, _ = v.reply(f"{ANSWER_PREFIX}{pause.n}")
        if step is None or step.kind != kind or not took or not step.say:
            continue
        via, value = v.answer_sent(pause.n)
        seen, template = v.model_saw(pause)
        answer = v.log.get(f"{ANSWER_PREFIX}{pause.n}")
        if seen is None:
            if v.continued(pause):
                why = f"answer {pause.n}: the report {template!r} never came"
                bad.append((why, ex_evidence(answer, why)))
            continue
        problem = expect(via, value, seen)
        if problem:
            why = f"answer {pause.n}: {problem}"
            bad.append((why, ex_evidence(answer, why)))
        else:
            checked.append(f"answer {pause.n} ({via} {json.dumps(value, ensure_ascii=False)}) → {seen!r}")
    if not out.fail_each(what, bad) and checked:
        out.passed("; ".join(checked))


@rule("IX-006", view=Interruptions)
def approval_runs_the_call(v: Interruptions, out: Verdict) -> None:
    def expect(via: str, value: Any, seen: str) -> str | None:
        return f"approved, yet the model saw {seen!r}" if value is True and DENIED in seen else None

    if v.extension:
        _judge_reports(v, out, APPROVAL, "approved call(s) the model saw denied", expect)


@rule("IX-015", view=Interruptions)
def approval_sends_the_call_as_held(v: Interruptions, out: Verdict) -> None:
    """A call step with `echo` (docs/script-extensions.md) runs a tool that returns the call it received as
    JSON {server, tool, args}; once approved, that call must be the one held: the server and tool the approval
    named, with the arguments it was held with. A result that is not such an echo is not judged."""
    if not v.extension:
        return
    checked, bad = [], []
    for pause, step in v.pauses_of(APPROVAL):
        took, _ = v.reply(f"{ANSWER_PREFIX}{pause.n}")
        if not isinstance(step.arg, dict) or not step.arg.get("echo") or not took \
                or v.answer_sent(pause.n)[1] is not True:
            continue
        seen, _ = v.model_saw(pause)  # (a report that never came: IX-006)
        sent = _echoed_call(seen)
        if sent is None:
            continue
        held = {"server": step.arg.get("server"), "tool": step.arg.get("tool"), "args": step.arg.get("args", {})}
        got = {k: sent.get(k) for k in held}
        if got != held:
            why = (f"answer {pause.n}: the approved call ran as {json.dumps(got, ensure_ascii=False)}; it was held "
                   f"as {json.dumps(held, ensure_ascii=False)}")
            bad.append((why, ex_evidence(v.log.get(f"{ANSWER_PREFIX}{pause.n}"), why)))
        else:
            checked.append(pause.n)
    if not out.fail_each("approved call(s) not sent as the person saw them", bad) and checked:
        out.passed(f"{len(checked)} approved call(s) ran with the server, tool and arguments they were held with")


def _echoed_call(seen: str | None) -> dict[str, Any] | None:
    """The call an echoing tool reported ({server, tool, args} as JSON), or None when the result is not one."""
    try:
        value = json.loads(seen) if seen is not None else None
    except ValueError:
        return None
    return value if isinstance(value, dict) and {"server", "tool", "args"} <= value.keys() else None


@rule("IX-007", view=Interruptions)
def denial_reaches_the_model(v: Interruptions, out: Verdict) -> None:
    def expect(via: str, value: Any, seen: str) -> str | None:
        return f"denied, yet the model saw {seen!r}, not {DENIED}" if value is False and DENIED not in seen else None

    if v.extension and any(v.answer_sent(p.n)[1] is False for p in v.pauses):
        _judge_reports(v, out, APPROVAL, f"denied call(s) the model did not see as {DENIED}", expect)


@rule("IX-008", view=Interruptions)
def question_answer_reaches_the_model(v: Interruptions, out: Verdict) -> None:
    def expect(via: str, value: Any, seen: str) -> str | None:
        if same_json(seen, value) or (via == "text" and seen == value):
            return None
        return f"{json.dumps(value, ensure_ascii=False)} was sent ({via}); the model saw {seen!r}"

    _judge_reports(v, out, QUESTION, "answer(s) that did not reach the model as sent", expect)


# -- IX-009..014 ----------------------------------------------------------------------------------------

@rule("IX-009", view=Interruptions)
def connection_prompt_and_outcome(v: Interruptions, out: Verdict) -> None:
    if not v.extension:
        return
    conns = v.pauses_of(CONNECTION)
    bad = []
    for pause, step in conns:
        meta, detail = pause.interaction or {}, _detail(pause)
        app, reason = detail.get("app"), detail.get("reason")
        texts = isinstance(app, str) and isinstance(reason, str)
        if not texts or meta.get(PROMPT) != ix.CONNECT_PROMPT.format(app=app, reason=reason):
            why = f"pause {pause.n}: prompt {meta.get(PROMPT)!r}, detail {json.dumps(detail, ensure_ascii=False)}"
            bad.append((why, pause.evidence(why)))
            continue
        for given, got, limit in ((step.arg.get("app"), app, APP_MAX), (step.arg.get("reason"), reason, REASON_MAX)):
            if isinstance(given, str) and len(given) <= limit and got != given:
                why = f"pause {pause.n}: detail says {got!r} for {given!r}"
                bad.append((why, pause.evidence(why)))
        took, _ = v.reply(f"{ANSWER_PREFIX}{pause.n}")
        seen, template = v.model_saw(pause)
        if not took or seen is None:
            if took and v.continued(pause) and template:
                why = f"answer {pause.n}: the report {template!r} never came"
                bad.append((why, pause.evidence(why)))
            continue
        _, value = v.answer_sent(pause.n)
        yes = value is True or (isinstance(value, dict) and value.get("connected") is True)
        names = {app, step.arg.get("app")}
        want = {(ix.CONNECTED if yes else ix.NOT_CONNECTED).format(app=n) for n in names}
        if seen not in want:
            why = f"answer {pause.n} ({json.dumps(value)}): the model saw {seen!r}, expected {sorted(want)[0]!r}"
            bad.append((why, pause.evidence(why)))
    if not out.fail_each("connection problem(s)", bad) and conns:
        out.passed(f"{len(conns)} connection(s): prompt, detail and the model's view as the extension says")


REFUSED = named_code({"code": a2a.UNSUPPORTED_OPERATION})  # how text at an approval is refused


@rule("IX-011", view=Interruptions)
def text_never_approves(v: Interruptions, out: Verdict) -> None:
    for pause in v.pauses:
        ex = v.log.get(f"{TEXT_REPLY_PREFIX}{pause.n}")
        took, value = reply(ex)
        if ex is None or took is None:
            continue
        after = v.unary_result(f"{GET_AFTER_TEXT_PREFIX}{pause.n}") or {}
        status = after.get("status") or {}
        unchanged = status.get("state") == pause.state and interaction_of(status.get("message")) == pause.interaction
        if took or value.get("code") != a2a.UNSUPPORTED_OPERATION or not unchanged:
            what = "was accepted" if took else f"got {named_code(value)}"
            moved = "" if unchanged else f"; GetTask then shows {status.get('state')}" + (
                "" if status.get("state") != pause.state else
                f" with the open interaction {quote(json.dumps(interaction_of(status.get('message'))))}")
            out.failed(f"a text reply to a task waiting for an approval {what}{moved}; expected {REFUSED} and the "
                       "task unchanged", [ex_evidence(ex)])
        else:
            out.passed(f"a text reply to the approval → {REFUSED}, the task unchanged")


@rule("IX-012", "IX-013", view=Interruptions)
def answers_to_no_open_interaction_refused(v: Interruptions, out: Verdicts) -> None:
    for rid, prefix, what in (("IX-012", WRONG_ID_PREFIX, "an answer naming an interactionId that was never opened"),
                              ("IX-013", STALE_PREFIX, "a new answer to the interaction already answered")):
        for ex in [e for e in v.log.exchanges if e.label.startswith(prefix)]:
            took, value = reply(ex)
            if took:
                out[rid].failed(f"{what} was accepted; expected a JSON-RPC error", [ex_evidence(ex)])
            elif took is False:
                moved = _moved_since(v, ex.label)
                if moved:
                    after = v.log.get(f"{GET_AFTER_PREFIX}{ex.label}")
                    out[rid].failed(f"{what} was refused with {named_code(value)}, but then {moved}: the refused "
                                    "answer was taken", [ex_evidence(ex), ex_evidence(after)])
                else:
                    out[rid].passed(f"{what} → {named_code(value)}; the task stayed where it was",
                                    reading=f"refused with {named_code(value)}")


def _moved_since(v: Interruptions, label: str) -> str | None:
    """What GetTask right after the refused request `label` (sent at pause N) shows that pause N does not
    (another state, another open interaction); None when it shows pause N, was not fetched, or the task
    had already moved before the request (then it is not this request's doing)."""
    n = int(label.rsplit("_", 1)[1])
    ex = v.log.get(label)
    if n > len(v.pauses) or ex is None:
        return None
    pause = v.pauses[n - 1]
    before = [x for x in v.log.exchanges[:v.log.exchanges.index(ex)] if x.rpc_method == a2a.GET_TASK]
    if before and _differs(v.unary_result(before[-1].label), pause, v.extension):
        return None
    return _differs(v.unary_result(f"{GET_AFTER_PREFIX}{label}"), pause, v.extension)


def _differs(task: dict[str, Any] | None, pause: Pause, extension: bool) -> str | None:
    status = task.get("status") if isinstance(task, dict) and isinstance(task.get("status"), dict) else None
    if status is None:
        return None
    if status.get("state") != pause.state:
        return f"GetTask shows {status.get('state')}, no longer pause {pause.n}'s {pause.state}"
    if extension and interaction_of(status.get("message")) != pause.interaction:
        return f"GetTask no longer shows pause {pause.n}'s open interaction"
    return None


@rule("IX-014", view=Interruptions)
def plain_client_sees_text(v: Interruptions, out: Verdict) -> None:
    if v.extension:
        return
    if not v.pauses:
        _never_paused(v, out, "a pausing step shown to a client without the extension")
        return
    bad, kept, kinds = [], [], []
    for pause in v.pauses:
        step, seen = v.step(pause), _plain_view(v, pause)
        if step is None or seen is None:
            continue
        (state, message), evidence = seen
        text, want = text_of(message), _plain_text(step)
        if not isinstance(text, str) or not text or (want is not None and text != want) or state != STATE_OF[step.kind]:
            why = (f"pause {pause.n} ({step.kind}): state {state}, text {text!r}; expected {STATE_OF[step.kind]}"
                   + (f" with the text {want!r}" if want is not None else " with a text"))
            bad.append((why, evidence(why)))
        kept.append(interaction_of(message) is not None)
        kinds.append(step.kind)
    if not out.fail_each("pause(s) a client without the extension does not see as plain text in its kind's state",
                         bad) and kinds:
        reading = "metadata left on the message" if all(kept) else "metadata left off for that client"
        shown = ", ".join(sorted(set(kinds)))
        out.passed(f"{len(kinds)} pause(s) ({shown}) reached the plain client as text in their kind's state "
                   f"({reading})", reading=reading)


def _plain_view(v: Interruptions, pause: Pause) -> tuple[tuple[Any, Any], Callable[[str], dict]] | None:
    """((state, message), evidence maker) of the pause as the client without the extension saw it: where it
    arrived first, unless that was a stream the client opened with the extension (an answer only plain text cannot
    give); then as GetTask at the pause showed it (sent without the extension); None when neither is plain."""
    if pause.exchange.label not in v.activated:
        return (pause.state, pause.message), pause.evidence
    label = f"{GET_PAUSE_PREFIX}{pause.n}"
    task = v.unary_result(label) if label not in v.activated else None
    status = task.get("status") if isinstance(task, dict) else None
    if not isinstance(status, dict) or not a2a.is_interrupted(status.get("state")):
        return None
    return (status.get("state"), status.get("message")), lambda why: ex_evidence(v.log.get(label), why)


def _plain_text(step: Step) -> str | None:
    """The text a client without the extension sees for this step, where the text gives it: the question, or
    Connect <app>: <reason> for a connection within its limits; None for an approval (its prompt is the
    runtime's)."""
    if step.kind == QUESTION:
        return step.arg
    if step.kind == CONNECTION and isinstance(step.arg, dict):
        app, reason = step.arg.get("app"), step.arg.get("reason")
        if isinstance(app, str) and isinstance(reason, str) and len(app) <= APP_MAX and len(reason) <= REASON_MAX:
            return ix.CONNECT_PROMPT.format(app=app, reason=reason)
    return None
