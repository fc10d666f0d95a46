"""A2A-INT- and IX-: interrupted states and interactions/v1 (seed 004; seed 001 conflict D3; A2A §7.6).

Reads the labels streamcert.scenarios.interactions writes, through rules/ixview.IxView. Truncation
(IX-010) is in rules/ixtruncation.py; idempotency (IDEM-) in rules/idempotency.py.
"""

from __future__ import annotations

import json
from typing import Any

from .. import a2a
from ..framelog import FrameLog
from ..outcomes import Finding
from . import RuleContext, ev_evidence, ex_evidence, fail, ok, quote, rule
from .ixview import (
    SEED,
    STATE_OF,
    URI,
    IxView,
    Pause,
    answer_value,
    answered,
    interaction_of,
    same_json,
    split,
    text_of,
    without_user_messages,
)

D3 = "001_59e0fde98d9a357a.txt · conflict D3"


def _code(error: Any) -> str:
    code = error.get("code") if isinstance(error, dict) else None
    return f"{code} {a2a.error_name(code)}" if isinstance(code, int) else repr(code)


def _no_pause(view: IxView, rid: str, what: str) -> list[Finding]:
    """FAIL when the task stream answered but never reached an interrupted state."""
    stream = view.log.get("stream")
    if stream is None or not stream.data_events() or view.pauses:
        return []
    states = [((r.get("statusUpdate") or r.get("task") or {}).get("status") or {}).get("state")
              for _, r in stream.results()]
    return [fail(rid, f"{what}: no interrupted state was seen (the stream showed: "
                      f"{', '.join(str(s) for s in states) or 'no parsable result'}; it ended: {stream.end})",
                 [ex_evidence(stream)])]


@rule("A2A-INT-001")
def ask_pauses(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    view = IxView.of(log)
    asks = [(p, view.step(p)) for p in view.pauses if view.step(p) and view.step(p).kind == "question"]
    if not asks:
        if view.steps and view.steps[0].kind == "question":
            return _no_pause(view, "A2A-INT-001", "an ask step")
        return []
    bad = []
    for pause, step in asks:
        text = text_of(pause.message)
        if pause.state != a2a.INPUT_REQUIRED or text != step.arg:
            bad.append(ev_evidence(pause.exchange, pause.event,
                                   f"state {pause.state}, text {text!r}; the question was {step.arg!r}"))
    if bad:
        return [fail("A2A-INT-001", f"an ask did not pause in {a2a.INPUT_REQUIRED} with the question as the status "
                                    f"message's text ({SEED} · The open interaction)", bad)]
    return [ok("A2A-INT-001", f"{len(asks)} question(s) paused in {a2a.INPUT_REQUIRED} with the question as text")]


@rule("A2A-INT-002")
def task_goes_on_in_a_stream(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    view = IxView.of(log)
    readings, bad = set(), []
    for pause in view.pauses:
        took, _ = answered(log.get(f"answer_{pause.n}"))
        if not took:
            continue
        events = pause.exchange.data_events()
        closed = events and events[-1] is pause.event and pause.exchange.end == "closed"
        readings.add("closes at the interrupted state" if closed else "stays open")
        carriers = [pause.exchange] if not closed else []
        carriers += [ex for ex in [log.get(f"subscribe_{pause.n}"), log.get(f"answer_{pause.n}")]
                     if ex is not None and ex.is_sse]
        later = [ev for ex in carriers for ev in ex.data_events() if ev.t > pause.t and ev.payload is not None
                 and isinstance((ev.payload or {}).get("result"), dict)
                 and "statusUpdate" in ev.payload["result"]]
        if not later:
            sub = log.get(f"subscribe_{pause.n}")
            extra = [ex_evidence(sub, "SubscribeToTask opened at the pause")] if sub is not None else []
            bad.append((pause, extra, "closed at the pause" if closed else "stayed open"))
    if bad:
        evidence = [ev_evidence(p.exchange, p.event, f"pause {p.n}: the stream {how}") for p, _, how in bad]
        evidence += [e for _, extra, _ in bad for e in extra]
        return [fail("A2A-INT-002", "after the answer no stream carried the task on: neither the stream of the "
                                    f"pause nor SubscribeToTask showed a status after it ({D3}: either reading "
                                    "must leave the task observable; A2A §3.1.6)", evidence)]
    if not readings:
        return []
    reading = " and ".join(sorted(readings))
    return [ok("A2A-INT-002", f"at {len(view.pauses)} pause(s) the stream {reading}; the task went on in a stream",
               reading=f"D3: the stream {reading}")]


@rule("A2A-INT-003")
def answer_resumes_same_task(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    view = IxView.of(log)
    checked, bad = 0, []
    for pause in view.pauses:
        ex = log.get(f"answer_{pause.n}")
        took, result = answered(ex)
        if not took:
            continue
        task = result.get("task") if isinstance(result, dict) and isinstance(result.get("task"), dict) else None
        if task is not None and task.get("id") != view.task_id:
            bad.append(ex_evidence(ex, f"the answer's response names task {task.get('id')!r}, not {view.task_id!r}"))
        after = view.first_status_after(pause)
        if after is not None:
            stream, event, update = after
            state = (update.get("status") or {}).get("state")
            if state != a2a.WORKING or update.get("taskId") != view.task_id:
                bad.append(ev_evidence(stream, event, f"after answer {pause.n}: {state} on task {update.get('taskId')!r}"))
        checked += 1
    if bad:
        return [fail("A2A-INT-003", "an answer did not return the same task to TASK_STATE_WORKING "
                                    f"({SEED} · The answer: \"Answered, the task returns to TASK_STATE_WORKING on "
                                    "the same taskId\")", bad)]
    return [ok("A2A-INT-003", f"{checked} answer(s): back to {a2a.WORKING} on task {view.task_id}")] if checked else []


@rule("A2A-INT-004", "IX-005")
def get_task_during_pause(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    view = IxView.of(log)
    core_bad, ix_bad, seen, ids = [], [], 0, []
    for pause in view.pauses:
        ex = log.get(f"get_pause_{pause.n}")
        took, result = answered(ex)
        if not took or not isinstance(result, dict):
            continue
        seen += 1
        status = result.get("status") or {}
        message = status.get("message")
        if status.get("state") != pause.state or text_of(message) != text_of(pause.message):
            core_bad.append(ex_evidence(ex, f"pause {pause.n}: GetTask shows {status.get('state')} with text "
                                            f"{text_of(message)!r}; the stream showed {pause.state} with "
                                            f"{text_of(pause.message)!r}"))
        ids.append(isinstance(message, dict) and message.get("messageId") == (pause.message or {}).get("messageId"))
        if view.extension and pause.interaction is not None:
            got = interaction_of(message)
            if got != pause.interaction:
                ix_bad.append(ex_evidence(ex, f"pause {pause.n}: GetTask's open interaction {quote(json.dumps(got))}; "
                                              f"the stream's {quote(json.dumps(pause.interaction))}"))
    out: list[Finding] = []
    if core_bad:
        out.append(fail("A2A-INT-004", "GetTask during the pause does not show the task as the stream did "
                                       "(A2A §3.1.3; 001 · The task after the stream)", core_bad))
    elif seen:
        same = "the same messageId" if all(ids) else "another messageId (reported, not required)"
        out.append(ok("A2A-INT-004", f"GetTask at {seen} pause(s): same state and text, {same}"))
    if view.extension and ix_bad:
        out.append(fail("IX-005", "GetTask during the pause does not show the same open interaction "
                                  f"({SEED} · The open interaction)", ix_bad))
    elif view.extension and seen:
        out.append(ok("IX-005", f"GetTask at {seen} pause(s) shows the same open interaction"))
    return out


@rule("A2A-INT-005")
def answer_to_terminal_task(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    ex = log.get("answer_terminal")
    took, value = answered(ex)
    if ex is None or took is None:
        return []
    if took:
        return [fail("A2A-INT-005", "an answer to a task in a terminal state was accepted (A2A §3.1.1, §3.3: "
                                    "UnsupportedOperationError)", [ex_evidence(ex)])]
    return [ok("A2A-INT-005", f"an answer to the ended task → {_code(value)}", reading=f"refused with {_code(value)}")]


@rule("IX-001", "IX-002")
def pause_shape(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    view = IxView.of(log)
    if not view.extension:
        return []
    if not view.pauses:
        return _no_pause(view, "IX-001", "a pausing step")
    state_bad, shape_bad = [], []
    for pause in view.pauses:
        step = view.step(pause)
        if step is None:
            continue
        meta = pause.interaction or {}
        if pause.state != STATE_OF[step.kind] or meta.get("kind") != step.kind:
            state_bad.append(ev_evidence(pause.exchange, pause.event, f"pause {pause.n} ({step.kind}): state "
                                         f"{pause.state}, kind {meta.get('kind')!r}; expected {STATE_OF[step.kind]}"))
        problems = _shape_problems(pause)
        if problems:
            shape_bad.append(ev_evidence(pause.exchange, pause.event, f"pause {pause.n}: " + "; ".join(problems)))
    out = []
    out.append(fail("IX-001", f"a pause is not in its kind's state ({SEED} · The open interaction, Kind / Task "
                              "state table)", state_bad) if state_bad else
               ok("IX-001", f"{len(view.pauses)} pause(s), each in its kind's state"))
    out.append(fail("IX-002", "the interrupted status message does not carry the open interaction as the seed "
                              f"shows it ({SEED} · The open interaction)", shape_bad) if shape_bad else
               ok("IX-002", f"{len(view.pauses)} pause(s): text part = prompt, extensions, metadata[URI]"))
    return out


def _shape_problems(pause: Pause) -> list[str]:
    message, meta = pause.message, pause.interaction
    if message is None:
        return ["the status has no message"]
    problems = []
    if URI not in (message.get("extensions") or []):
        problems.append(f"the message's extensions {message.get('extensions')!r} do not name {URI}")
    if meta is None:
        return problems + [f"no metadata[{URI}]"]
    if not isinstance(meta.get("interactionId"), str) or not meta["interactionId"]:
        problems.append(f"interactionId {meta.get('interactionId')!r} is not a non-empty string")
    if meta.get("kind") not in STATE_OF:
        problems.append(f"kind {meta.get('kind')!r} is not approval, question or connection")
    if not isinstance(meta.get("prompt"), str):
        problems.append(f"prompt {meta.get('prompt')!r} is not a string")
    elif text_of(message) != meta["prompt"]:
        problems.append(f"the text part {text_of(message)!r} is not the prompt {meta['prompt']!r}")
    if "detail" in meta and not isinstance(meta["detail"], dict):
        problems.append(f"detail {meta['detail']!r} is not an object")
    return problems


@rule("IX-003")
def approval_detail(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    view = IxView.of(log)
    approvals = [(p, view.step(p)) for p in view.pauses if view.step(p) and view.step(p).kind == "approval"]
    if not view.extension or not approvals:
        return []
    bad = []
    for pause, step in approvals:
        meta = pause.interaction or {}
        detail = meta.get("detail") if isinstance(meta.get("detail"), dict) else {}
        want = {"server": step.arg.get("server"), "tool": step.arg.get("tool")}
        got = {k: detail.get(k) for k in want}
        if got != want or not isinstance(meta.get("interactionId"), str) or not meta.get("interactionId"):
            bad.append(ev_evidence(pause.exchange, pause.event, f"detail {json.dumps(detail)}, interactionId "
                                   f"{meta.get('interactionId')!r}; the held call is {json.dumps(want)}"))
    if bad:
        return [fail("IX-003", "an approval's detail does not name the held call's server and tool "
                               f"({SEED} · The open interaction: detail)", bad)]
    return [ok("IX-003", f"{len(approvals)} approval(s) name the held call's server and tool")]


@rule("IX-004")
def arguments_never_shown(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    view = IxView.of(log)
    if not view.extension or not view.sentinel:
        return []
    sentinel = view.sentinel
    granted_at = min((ex.t_sent for ex in log.exchanges if ex.label.startswith("answer_") and ex.label != "answer_terminal"
                      and answer_value(view.sent_message(ex.label))[1] is True), default=float("inf"))
    hits, searched = [], 0
    for ex in log.exchanges:
        if ex.label == "card" or ex.request_body is None:
            continue
        if ex.notes.get("streaming"):
            for ev in ex.data_events():
                searched += 1
                value = ev.payload if ev.t < granted_at else _paused_status(ev.payload)
                if sentinel in json.dumps(without_user_messages(value), ensure_ascii=False):
                    hits.append(ev_evidence(ex, ev, "the call's arguments appear here"))
        elif ex.label.startswith(("get_", "list_")):
            searched += 1
            value, _ = ex.json()
            if ex.t_sent >= granted_at:
                value = _paused_status(value)
            if sentinel in json.dumps(without_user_messages(value), ensure_ascii=False):
                hits.append(ex_evidence(ex, "the call's arguments appear here"))
    if hits:
        return [fail("IX-004", f"the held call's arguments ({sentinel!r}) appear in what the server sent "
                               f"({SEED} · The open interaction: detail \"Never a call's arguments.\")", hits)]
    return [ok("IX-004", f"the arguments appear in none of {searched} frames and answers searched")] if searched else []


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


def _model_saw(view: IxView, pause: Pause) -> tuple[str | None, str | None]:
    """(the result part of the say after this pause, its template); (None, template) if not seen."""
    step = view.step(pause)
    template = step.say if step else None
    said = view.reports(template)
    if not said:
        return None, template
    head, tail = split(template)
    text = said[0].text
    return text[len(head):len(text) - len(tail) if tail else None], template


def _judge_outcomes(log: FrameLog, rid: str, kind: str, expect, spec: str) -> list[Finding]:
    """For each pause of `kind` answered: the model's view (via say) must pass `expect(value, seen, pause)`."""
    view = IxView.of(log)
    if not view.extension and rid != "IX-008":
        return []
    checked, bad = [], []
    for pause in view.pauses:
        step = view.step(pause)
        took, _ = answered(log.get(f"answer_{pause.n}"))
        if step is None or step.kind != kind or not took or not step.say:
            continue
        via, value = answer_value(view.sent_message(f"answer_{pause.n}"))
        seen, template = _model_saw(view, pause)
        if seen is None:
            if view.continued(pause):
                bad.append(f"answer {pause.n}: the report {template!r} never came")
            continue
        problem = expect(via, value, seen, pause)
        (bad if problem else checked).append(
            problem or f"answer {pause.n} ({via} {json.dumps(value, ensure_ascii=False)}) → {seen!r}")
    if bad:
        return [fail(rid, "; ".join(bad) + f" ({spec})", [{"exchange": "answers", "note": b} for b in bad])]
    return [ok(rid, "; ".join(checked))] if checked else []


@rule("IX-006")
def approval_runs(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    def expect(via, value, seen, pause):
        if value is not True:
            return None
        return f"approved, yet the model saw {seen!r}" if "tool.denied" in seen else None
    return _judge_outcomes(log, "IX-006", "approval", expect,
                           f"{SEED} · approved: true sends the held call; a boolean value is read as approved")


@rule("IX-007")
def denial_seen(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    def expect(via, value, seen, pause):
        if value is not False:
            return None
        return None if "tool.denied" in seen else f"denied, yet the model saw {seen!r}, not tool.denied"
    view = IxView.of(log)
    if not any(answer_value(view.sent_message(f"answer_{p.n}"))[1] is False for p in view.pauses):
        return []
    return _judge_outcomes(log, "IX-007", "approval", expect, f"{SEED} · false fails it to the model as tool.denied")


@rule("IX-008")
def question_answer_seen(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    def expect(via, value, seen, pause):
        if via == "text" and (seen == value or same_json(seen, value)):
            return None
        if via != "text" and same_json(seen, value):
            return None
        return f"answer {pause.n} was {json.dumps(value, ensure_ascii=False)} ({via}); the model saw {seen!r}"
    return _judge_outcomes(log, "IX-008", "question", expect,
                           f"{SEED}: a question takes any JSON value; DESIGN §6 say: the answer's value as JSON")


@rule("IX-009")
def connection(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    view = IxView.of(log)
    if not view.extension:
        return []
    conns = [(p, view.step(p)) for p in view.pauses if view.step(p) and view.step(p).kind == "connection"]
    bad = []
    for pause, step in conns:
        meta = pause.interaction or {}
        detail = meta.get("detail") if isinstance(meta.get("detail"), dict) else {}
        app, reason = detail.get("app"), detail.get("reason")
        if not isinstance(app, str) or not isinstance(reason, str) or meta.get("prompt") != f"Connect {app}: {reason}":
            bad.append(f"pause {pause.n}: prompt {meta.get('prompt')!r}, detail {json.dumps(detail, ensure_ascii=False)}")
            continue
        for given, got, limit in ((step.arg.get("app"), app, 80), (step.arg.get("reason"), reason, 280)):
            if isinstance(given, str) and len(given) <= limit and got != given:
                bad.append(f"pause {pause.n}: detail says {got!r} for {given!r}")
        took, _ = answered(log.get(f"answer_{pause.n}"))
        seen, template = _model_saw(view, pause)
        if not took or seen is None:
            if took and view.continued(pause) and template:
                bad.append(f"answer {pause.n}: the report {template!r} never came")
            continue
        _, value = answer_value(view.sent_message(f"answer_{pause.n}"))
        yes = value is True or (isinstance(value, dict) and value.get("connected") is True)
        names = {app, step.arg.get("app")}
        want = {f"Connected: {n}" if yes else f"Not connected: {n}" for n in names}
        if seen not in want:
            bad.append(f"answer {pause.n} ({json.dumps(value)}): the model saw {seen!r}, expected {sorted(want)[0]!r}")
    if bad:
        return [fail("IX-009", "; ".join(bad) + f" ({SEED} · Connections)",
                     [{"exchange": "connections", "note": b} for b in bad])]
    return [ok("IX-009", f"{len(conns)} connection(s): prompt, detail and the model's view as the seed says")] \
        if conns else []


@rule("IX-011")
def text_never_approves(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    view = IxView.of(log)
    out = []
    for pause in view.pauses:
        ex = log.get(f"text_reply_{pause.n}")
        took, value = answered(ex)
        if ex is None or took is None:
            continue
        after = view.unary_result(f"get_after_text_{pause.n}") or {}
        unchanged = (after.get("status") or {}).get("state") == pause.state and \
            interaction_of((after.get("status") or {}).get("message")) == pause.interaction
        if took or value.get("code") != a2a.UNSUPPORTED_OPERATION or not unchanged:
            what = "was accepted" if took else f"got {_code(value)}"
            moved = "" if unchanged else f"; GetTask then shows {(after.get('status') or {}).get('state')}"
            out.append(fail("IX-011", f"a text reply to a task waiting for an approval {what}{moved}; expected "
                                      f"-32004 UnsupportedOperationError and the task unchanged ({SEED}: \"Text never "
                                      "approves\")", [ex_evidence(ex)]))
        else:
            out.append(ok("IX-011", "a text reply to the approval → -32004, the task unchanged"))
    return out


@rule("IX-012", "IX-013")
def answers_to_no_open_interaction(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    out = []
    for rid, prefix, what in (("IX-012", "wrong_id_", "an answer naming an interactionId that was never opened"),
                              ("IX-013", "stale_", "a new answer to the interaction already answered")):
        for ex in [e for e in log.exchanges if e.label.startswith(prefix)]:
            took, value = answered(ex)
            if took is None:
                continue
            if took:
                out.append(fail(rid, f"{what} was accepted ({SEED} · The answer: interactionId \"The open "
                                     "interaction's id.\")", [ex_evidence(ex)]))
            else:
                out.append(ok(rid, f"{what} → {_code(value)}", reading=f"refused with {_code(value)}"))
    return out


@rule("IX-014")
def plain_client(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    view = IxView.of(log)
    if view.extension:
        return []
    if not view.pauses:
        return _no_pause(view, "IX-014", "a question to a client without the extension")
    bad, kept = [], []
    for pause in view.pauses:
        step = view.step(pause)
        if step is None:
            continue
        prompt = step.arg if step.kind == "question" else None
        text = text_of(pause.message)
        if text is None or (prompt is not None and text != prompt) or pause.state != STATE_OF[step.kind]:
            bad.append(ev_evidence(pause.exchange, pause.event, f"state {pause.state}, text {text!r}"))
        kept.append(pause.interaction is not None)
    if bad:
        return [fail("IX-014", "a client without the extension does not see the pause as plain text "
                               f"({SEED}: \"sees the same status message as plain text\")", bad)]
    reading = "metadata left on the message" if all(kept) else "metadata left off for that client"
    return [ok("IX-014", f"the question reached the plain client as text ({reading})", reading=reading)]
