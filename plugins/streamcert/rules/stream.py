"""A2A-STREAM-: the streamed-task sequence (seed 001, A2A §3.1.2): Task first, status events naming
the task, artifact chunks, the terminal status last, and the close."""

from __future__ import annotations

import re
from typing import Any, Iterator

from .. import a2a
from ..framelog import END_CLIENT_STOP, END_CLOSED, END_TIME_LIMIT, Event, Exchange, FrameLog
from ..outcomes import Finding, Outcome
from . import RuleContext, ev_evidence, ex_evidence, fail, needed, ok, outcome, quote, result_kind, rule
from .streamview import StreamView

TASK_STREAMS = ("stream", "subscribe")  # labels of the task streams the scenarios open
ISO_Z = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
ISO_MS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3,}Z$")


def _streams(log: FrameLog) -> list[Exchange]:
    return [ex for ex in log.exchanges if ex.label in TASK_STREAMS and ex.is_sse]


def _results(ex: Exchange) -> Iterator[tuple[Event, str | None, Any]]:
    """(event, kind, body) for every data event: kind is the StreamResponse member, body its object."""
    for ev in ex.data_events():
        value = ev.payload
        result = value.get("result") if isinstance(value, dict) else None
        kind = result_kind(result)
        yield ev, kind, (result[kind] if kind else result)


def _state(kind: str | None, body: Any) -> str | None:
    if kind in ("task", "statusUpdate") and isinstance(body, dict):
        status = body.get("status")
        return status.get("state") if isinstance(status, dict) else None
    return None


def _terminal_event(ex: Exchange) -> tuple[Event, str] | None:
    for ev, kind, body in _results(ex):
        state = _state(kind, body)
        if a2a.is_terminal(state):
            return ev, state
    return None


@rule("A2A-STREAM-001")
def task_first(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    out = []
    for ex in _streams(log):
        first = next(_results(ex), None)
        if first is None:
            out.append(fail("A2A-STREAM-001", f"{ex.label}: the stream carried no data event at all", [ex_evidence(ex)]))
            continue
        ev, kind, _ = first
        if kind == "task":
            out.append(ok("A2A-STREAM-001", f"{ex.label}: frame 1 is the Task"))
        else:
            what = kind or "no StreamResponse result"
            out.append(fail("A2A-STREAM-001", f"{ex.label}: frame 1 is {what}, not the Task (seed 001 · Frame 1: "
                            "\"the stream must begin with the Task object\")", [ev_evidence(ex, ev)]))
    return out


def _frame1_task(log: FrameLog, req_id: str) -> tuple[Exchange | None, Event | None, dict | None, list[Finding]]:
    ex, errs = needed(log, "stream", req_id)
    if ex is None or not ex.is_sse:
        return None, None, None, errs
    first = next(_results(ex), None)
    if first is None or first[1] != "task" or not isinstance(first[2], dict):
        return ex, None, None, []  # A2A-STREAM-001 says what is wrong with frame 1
    return ex, first[0], first[2], []


@rule("A2A-STREAM-002")
def ids_minted(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    ex, ev, task, errs = _frame1_task(log, "A2A-STREAM-002")
    if task is None:
        return errs
    bad = [f for f in ("id", "contextId") if not isinstance(task.get(f), str) or not task.get(f).strip()]
    if bad:
        return [fail("A2A-STREAM-002", f"the client sent no taskId or contextId, and frame 1's Task has no "
                     f"{' and no '.join(bad)} (seed 001 · Frame 1: the server mints both)", [ev_evidence(ex, ev)])]
    return [ok("A2A-STREAM-002", f"task {task['id']} and context {task['contextId']} minted by the server")]


@rule("A2A-STREAM-003")
def ids_in_history(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    ex, ev, task, errs = _frame1_task(log, "A2A-STREAM-003")
    if task is None:
        return errs
    sent = ex.request_body.get("params", {}).get("message", {}) if isinstance(ex.request_body, dict) else {}
    history = task.get("history")
    copy = None
    if isinstance(history, list):
        copy = next((m for m in history if isinstance(m, dict) and m.get("messageId") == sent.get("messageId")), None)
    if copy is None:
        return [outcome("A2A-STREAM-003", Outcome.NON_STRICT,
                        "frame 1's Task does not hold the client's message in history, so the ids written into it "
                        "cannot be seen (history is optional; the seed's server includes it)",
                        [ev_evidence(ex, ev)], reading="history omitted")]
    wrong = [f"{f} {copy.get(f)!r} (task has {task.get(k)!r})" for f, k in (("taskId", "id"), ("contextId", "contextId"))
             if copy.get(f) != task.get(k)]
    if wrong:
        return [fail("A2A-STREAM-003", "the server's copy of the client's message carries " + ", ".join(wrong)
                     + " (seed 001 · Frame 1: \"it wrote both ids into its copy of the planner's message\")",
                     [ev_evidence(ex, ev)])]
    return [ok("A2A-STREAM-003", "history holds the client's message with the new taskId and contextId",
               reading="history holds the message")]


@rule("A2A-STREAM-004")
def events_name_task(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    out = []
    for ex in _streams(log):
        results = list(_results(ex))
        anchor = next(((b.get("id"), b.get("contextId")) for _, k, b in results if k == "task"), None)
        if anchor is None:
            continue
        bad = []
        for ev, kind, body in results:
            if kind not in ("statusUpdate", "artifactUpdate"):
                continue
            got = (body.get("taskId"), body.get("contextId"))
            if got != anchor:
                bad.append((ev, f"{kind} names task {got[0]!r}, context {got[1]!r}"))
            elif kind == "statusUpdate" and not isinstance(body.get("status"), dict):
                bad.append((ev, "statusUpdate without status"))
        if bad:
            out.append(fail("A2A-STREAM-004", f"{ex.label}: frame 1 is task {anchor[0]!r} in context {anchor[1]!r}, "
                            f"but {bad[0][1]} (seed 001 · Frame 2: taskId, contextId and status are all REQUIRED)",
                            [ev_evidence(ex, e, w) for e, w in bad[:5]]))
        else:
            n = sum(1 for _, k, _ in results if k in ("statusUpdate", "artifactUpdate"))
            out.append(ok("A2A-STREAM-004", f"{ex.label}: {n} events name task {anchor[0]} and its context"))
    return out


@rule("A2A-STREAM-005")
def one_kind(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    out = []
    for ex in _streams(log):
        bad = []
        count = 0
        for ev in ex.data_events():
            value = ev.payload
            if not isinstance(value, dict) or "result" not in value:
                continue
            count += 1
            result = value["result"]
            kinds = [k for k in a2a.STREAM_RESULT_KINDS if isinstance(result, dict) and k in result]
            if len(kinds) != 1:
                bad.append((ev, kinds))
        if bad:
            ev, kinds = bad[0]
            out.append(fail("A2A-STREAM-005", f"{ex.label}: a result holds {kinds or 'none'} of task, message, "
                            "statusUpdate, artifactUpdate; a StreamResponse holds exactly one (A2A §3.1.2)",
                            [ev_evidence(ex, e) for e, _ in bad[:5]]))
        elif count:
            out.append(ok("A2A-STREAM-005", f"{ex.label}: {count} results, each exactly one kind"))
    return out


def _artifact_events(ex: Exchange) -> Iterator[tuple[Event, dict, str | None]]:
    for ev, kind, body in _results(ex):
        if kind == "artifactUpdate":
            art = body.get("artifact") if isinstance(body.get("artifact"), dict) else {}
            yield ev, body, art.get("artifactId")


@rule("A2A-STREAM-006", "A2A-STREAM-007")
def artifact_chunks(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    out = []
    for ex in _streams(log):
        started: set[str] = set()
        closed: set[str] = set()
        bad6, bad7, count = [], [], 0
        for ev, body, aid in _artifact_events(ex):
            count += 1
            if body.get("append") is True:
                if aid not in started:
                    bad6.append((ev, f"append: true to artifact {aid!r}, which no earlier chunk started"))
                elif aid in closed:
                    bad7.append((ev, f"append: true to artifact {aid!r} after its lastChunk"))
            else:
                started.add(aid)
                closed.discard(aid)  # a chunk without append starts the artifact afresh
            if body.get("lastChunk") is True:
                closed.add(aid)
        if bad6:
            out.append(fail("A2A-STREAM-006", f"{ex.label}: {bad6[0][1]} (seed 001 · Frames 3 to 8: a chunk without "
                            "append starts the artifact; append repeats its artifactId)",
                            [ev_evidence(ex, e, w) for e, w in bad6[:5]]))
        elif count:
            out.append(ok("A2A-STREAM-006", f"{ex.label}: {count} artifact chunks, each appended to a started artifact"))
        if bad7:
            out.append(fail("A2A-STREAM-007", f"{ex.label}: {bad7[0][1]} (seed 001: \"A lastChunk closes one "
                            "artifact and nothing more\")", [ev_evidence(ex, e, w) for e, w in bad7[:5]]))
        elif count:
            out.append(ok("A2A-STREAM-007", f"{ex.label}: nothing appended after a lastChunk"))
    return out


@rule("A2A-STREAM-008")
def terminal_last(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    out = []
    for ex in _streams(log):
        term = _terminal_event(ex)
        if term is None:
            continue
        ev, state = term
        after = [e for e in ex.data_events() if e.index > ev.index]
        if after:
            out.append(fail("A2A-STREAM-008", f"{ex.label}: {len(after)} event(s) after the terminal {state} "
                            f"(frame {ev_evidence(ex, ev)['frame']}); the terminal status is the last event "
                            "(seed 001 · Frame 9 and the close)", [ev_evidence(ex, ev, "terminal")]
                            + [ev_evidence(ex, e, "after terminal") for e in after[:4]]))
        else:
            out.append(ok("A2A-STREAM-008", f"{ex.label}: {state} is the last event"))
    return out


@rule("A2A-STREAM-009")
def ends_after_terminal(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    out = []
    for ex in _streams(log):
        if ex.end == END_CLIENT_STOP:
            continue  # the driver stopped reading on purpose
        term = _terminal_event(ex)
        states = [_state(k, b) for _, k, b in _results(ex) if _state(k, b)]
        last = states[-1] if states else None
        if term is not None:
            out.append(ok("A2A-STREAM-009", f"{ex.label}: the stream reached {term[1]}"))
        elif ex.end == END_CLOSED and a2a.is_interrupted(last):
            continue  # conflict D3: judged by the interrupted-state requirements (A2A-INT-)
        elif ex.end == END_CLOSED:
            out.append(fail("A2A-STREAM-009", f"{ex.label}: the server closed the stream after {len(states)} "
                            f"state(s), the last {last or '(none)'}, without a terminal state (A2A §3.1.2: the "
                            "stream closes when the task reaches a terminal state)", [ex_evidence(ex)]))
        elif ex.end == END_TIME_LIMIT:
            waited = (ex.t_end or 0) - ex.t_sent
            out.append(fail("A2A-STREAM-009", f"{ex.label}: no terminal state within the per-stream limit; cut after "
                            f"{waited:.1f} s, last state {last or '(none)'}", [ex_evidence(ex)],
                            measured={"open_s": round(waited, 3), "limit_s": ex.notes.get("limit_s")}))
    return out


@rule("A2A-STREAM-010")
def closes_after_terminal(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    tol = ctx.tolerance("A2A-STREAM-010", "close_after_terminal_s", 2.0)
    out = []
    for ex in _streams(log):
        term = _terminal_event(ex)
        if term is None or ex.end == END_CLIENT_STOP:
            continue
        ev, state = term
        delay = (ex.t_end or ev.t) - ev.t
        measured = {"close_after_terminal_s": round(delay, 3), "tolerance_s": tol}
        if ex.end == END_TIME_LIMIT:
            out.append(fail("A2A-STREAM-010", f"{ex.label}: still open {delay:.2f} s after the terminal {state} when the "
                            "suite cut it at its per-stream limit (A2A §3.1.2: the stream MUST close)",
                            [ev_evidence(ex, ev, "terminal")], measured=measured))
        elif delay > tol:
            out.append(outcome("A2A-STREAM-010", Outcome.WARNING, f"{ex.label}: closed {delay:.2f} s after the "
                               f"terminal {state}, past the tolerance of {tol:g} s", [ev_evidence(ex, ev, "terminal")],
                               measured=measured))
        else:
            out.append(ok("A2A-STREAM-010", f"{ex.label}: closed {delay * 1000:.0f} ms after {state}", measured=measured))
    return out


def _statuses(log: FrameLog) -> Iterator[tuple[Exchange, Event | None, dict]]:
    """Every TaskStatus the log holds: in stream events and in unary results (tasks and task lists)."""
    for ex in log.exchanges:
        if ex.is_sse:
            for ev, kind, body in _results(ex):
                if kind in ("task", "statusUpdate") and isinstance(body.get("status"), dict):
                    yield ex, ev, body["status"]
        elif ex.status is not None:
            value, _ = ex.json()
            result = value.get("result") if isinstance(value, dict) else None
            for task in _tasks_in(result):
                if isinstance(task.get("status"), dict):
                    yield ex, None, task["status"]


def _tasks_in(result: Any) -> list[dict]:
    if not isinstance(result, dict):
        return []
    if isinstance(result.get("tasks"), list):
        return [t for t in result["tasks"] if isinstance(t, dict)]
    if isinstance(result.get("task"), dict):
        return [result["task"]]
    if "status" in result and "id" in result:
        return [result]
    return []


def _where(ex: Exchange, ev: Event | None) -> dict[str, Any]:
    return ev_evidence(ex, ev) if ev is not None else ex_evidence(ex)


@rule("A2A-STREAM-011", "A2A-STREAM-012")
def timestamps(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    stamped = [(ex, ev, s["timestamp"]) for ex, ev, s in _statuses(log) if "timestamp" in s]
    if not stamped:
        return []
    not_z = [(ex, ev, ts) for ex, ev, ts in stamped if not isinstance(ts, str) or not ISO_Z.match(ts)]
    no_ms = [(ex, ev, ts) for ex, ev, ts in stamped if isinstance(ts, str) and ISO_Z.match(ts) and not ISO_MS.match(ts)]
    out = []
    if not_z:
        ex, ev, ts = not_z[0]
        out.append(fail("A2A-STREAM-011", f"{len(not_z)} of {len(stamped)} status timestamps are not ISO 8601 UTC "
                        f"ending in Z, e.g. {ts!r} in {ex.label} (A2A §5.6.1)",
                        [_where(e, v) for e, v, _ in not_z[:5]]))
    else:
        out.append(ok("A2A-STREAM-011", f"{len(stamped)} status timestamps in UTC with Z"))
    if no_ms:
        ex, ev, ts = no_ms[0]
        out.append(outcome("A2A-STREAM-012", Outcome.WARNING, f"{len(no_ms)} of {len(stamped)} status timestamps carry "
                           f"no milliseconds, e.g. {ts!r} in {ex.label} (A2A §5.6.1: millisecond precision SHOULD be "
                           "used)", [_where(e, v) for e, v, _ in no_ms[:5]]))
    elif not not_z:
        digits = sorted({len(ts.split(".")[1]) - 1 for _, _, ts in stamped})
        if digits == [3]:
            out.append(ok("A2A-STREAM-012", "timestamps carry milliseconds", reading="exactly milliseconds"))
        else:
            # "Millisecond precision SHOULD be used": finer digits lose nothing, but are not the
            # letter of the text; reported, never failed.
            out.append(outcome("A2A-STREAM-012", Outcome.NON_STRICT,
                               f"timestamps carry {', '.join(map(str, digits))} fraction digits (finer than "
                               f"milliseconds), e.g. {stamped[0][2]!r}", reading="finer than milliseconds"))
    return out


def _messages_parts(body: dict, kind: str) -> Iterator[tuple[str, Any]]:
    """(where, object) for the messages and parts a result carries, for shape checks."""
    if kind == "task":
        for i, m in enumerate(body.get("history") or []):
            yield f"history[{i}]", m
        for i, a in enumerate(body.get("artifacts") or []):
            yield f"artifacts[{i}]", a
    status = body.get("status")
    if isinstance(status, dict) and isinstance(status.get("message"), dict):
        yield "status.message", status["message"]
    if kind == "artifactUpdate" and isinstance(body.get("artifact"), dict):
        yield "artifact", body["artifact"]
    if kind == "message":
        yield "message", body


def shape_problems(obj: Any, where: str) -> list[str]:
    """States, roles and parts in their 1.0 form (A2A §4): the 0.3 spellings are departures."""
    problems = []
    if not isinstance(obj, dict):
        return [f"{where} is not an object"]
    if "role" in obj and obj["role"] not in a2a.ROLES:
        problems.append(f"{where}.role {obj['role']!r} is not ROLE_USER/ROLE_AGENT")
    if "kind" in obj:
        problems.append(f"{where} has a 0.3 'kind' field ({obj['kind']!r})")
    for i, part in enumerate(obj.get("parts") or []):
        if not isinstance(part, dict):
            problems.append(f"{where}.parts[{i}] is not an object")
            continue
        held = [k for k in a2a.PART_CONTENT_FIELDS if k in part]
        if len(held) != 1:
            problems.append(f"{where}.parts[{i}] holds {held or 'none'} of text, raw, url, data")
        if "kind" in part:
            problems.append(f"{where}.parts[{i}] has a 0.3 'kind' field ({part['kind']!r})")
    return problems


@rule("A2A-STREAM-013")
def names_and_shapes(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    bad, count = [], 0
    for ex in _streams(log):
        for ev, kind, body in _results(ex):
            if not kind:
                continue
            count += 1
            problems = []
            state = _state(kind, body)
            if kind in ("task", "statusUpdate") and state not in a2a.TASK_STATES:
                problems.append(f"state {state!r} is not a TASK_STATE_* name")
            if isinstance(body, dict) and "kind" in body:
                problems.append(f"the {kind} has a 0.3 'kind' field ({body['kind']!r})")
            for where, obj in _messages_parts(body, kind):
                problems += shape_problems(obj, where)
            if problems:
                bad.append((ex, ev, problems))
    if bad:
        ex, ev, problems = bad[0]
        return [fail("A2A-STREAM-013", f"{ex.label} frame {ev_evidence(ex, ev)['frame']}: " + "; ".join(problems)
                     + " (A2A §4: ProtoJSON enum names, a Part holds exactly one content)",
                     [ev_evidence(e, v, "; ".join(p)) for e, v, p in bad[:5]])]
    return [ok("A2A-STREAM-013", f"{count} results use the 1.0 names and shapes")] if count else []


@rule("A2A-STREAM-015")
def stream_answered(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    ex, errs = needed(log, "stream", "A2A-STREAM-015")
    if ex is None:
        return errs
    if not ex.is_sse:
        return [fail("A2A-STREAM-015", f"SendStreamingMessage answered HTTP {ex.status} {ex.content_type or ''} "
                     f"instead of a stream; first bytes {ex.first_bytes()!r}", [ex_evidence(ex)])]
    first = next(iter(ex.data_events()), None)
    value = first.payload if first else None
    if isinstance(value, dict) and "error" in value:
        return [fail("A2A-STREAM-015", f"the card declares streaming, yet the stream's first event is an error: "
                     f"{value['error']!r}", [ev_evidence(ex, first)])]
    if first is None:
        return [fail("A2A-STREAM-015", "the stream carried no event", [ex_evidence(ex)])]
    return [ok("A2A-STREAM-015", f"streamed {len(ex.data_events())} events for the new task")]


def text_of(message: Any) -> str | None:
    """The text parts of a message, joined (None when it has none)."""
    parts = message.get("parts") if isinstance(message, dict) else None
    texts = [p["text"] for p in parts or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "".join(texts) if texts else None


def _artifact_problems(step: dict[str, Any], view: StreamView) -> list[str]:
    aid = step.get("artifactId")
    got = view.artifacts.get(aid)
    if got is None:
        return [f"artifact {aid!r} never streamed"]
    problems = []
    if step.get("name") is not None and got.name != step["name"]:
        problems.append(f"artifact {aid!r} is named {got.name!r}, not {step['name']!r}")
    if "chunks" in step:
        want = "".join(step["chunks"])
        if got.text != want:
            problems.append(f"artifact {aid!r} joins to {quote(got.text or '', 160)!r}, not {quote(want, 160)!r}")
        if got.chunks != len(step["chunks"]):
            problems.append(f"artifact {aid!r} came in {got.chunks} chunk(s), the script has {len(step['chunks'])}")
    if "data" in step:
        if got.data != [step["data"]]:
            problems.append(f"artifact {aid!r} carries data {got.data!r}, not [{step['data']!r}]")
        types = [p.get("mediaType") for p in got.parts if "data" in p]
        if types and types != [a2a.JSON_MEDIA_TYPE]:
            problems.append(f"artifact {aid!r} data part has mediaType {types}, not application/json")
    if not got.last_chunk:
        problems.append(f"artifact {aid!r} is never closed with lastChunk: true")
    return problems


@rule("A2A-STREAM-014")
def plays_script(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    script = ctx.script or log.script
    ex, errs = needed(log, "stream", "A2A-STREAM-014")
    if ex is None or not isinstance(script, dict) or not ex.is_sse:
        return errs
    view = StreamView.from_exchange(ex)
    steps = script.get("steps") or []
    problems = []
    said = [text_of(u.get("status", {}).get("message")) for _, u in view.statuses
            if u.get("status", {}).get("state") == a2a.WORKING]
    pos = 0
    for step in steps:
        if "status" in step:
            while pos < len(said) and said[pos] != step["status"]:
                pos += 1
            if pos == len(said):
                problems.append(f"no WORKING status says {step['status']!r} (in order; seen {said!r})")
                break
            pos += 1
    for step in steps:
        if "artifact" in step:
            problems += _artifact_problems(step["artifact"], view)
    final = steps[-1] if steps else {}
    for key, state in (("finish", a2a.COMPLETED), ("fail", a2a.FAILED)):
        if key in final:
            said_last = text_of(view.last_status_message)
            if view.last_state != state or said_last != final[key]:
                problems.append(f"the stream ends in {view.last_state} saying {said_last!r}; the script's {key} "
                                f"step ends it in {state} saying {final[key]!r}")
    if problems:
        return [fail("A2A-STREAM-014", "the stream does not carry what the script produced: " + "; ".join(problems)
                     + " (DESIGN §6; seed 001 · Frames 2 to 9)", [ex_evidence(ex)])]
    return [ok("A2A-STREAM-014", f"status texts, {sum('artifact' in s for s in steps)} artifact(s) and the final "
               f"status match the script {script.get('name')!r}")]
