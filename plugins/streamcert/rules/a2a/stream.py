"""A2A-STREAM-: the streamed-task sequence (seed 001, A2A §3.1.2): Task first, status events naming
the task, artifact chunks, the terminal status last, and the close; the stream answered, and what it
carried is what the script produced. The forms of what it carries (timestamps, names, shapes) are
in stream_forms.

The sequence rules read every task stream a scenario opens, by what it is (streamview.StreamFrames:
an event stream answering SendStreamingMessage or SubscribeToTask that carries a task), whatever its
label: the first stream, a subscription, a streamed answer. The rules on the new task and the script
read the scenario's first stream (label `stream`, written by streamcert.drivers.a2a).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...contract.capture import IDLE_S, LIMIT_S
from ...contract.labels.a2a import STREAM
from ...framelog import END_CLIENT_STOP, END_CLOSED, END_IDLE, END_RESET, END_TIME_LIMIT, Event, Exchange, FrameLog
from ...limits import bounded_value
from ...outcomes import Outcome
from ...protocols import a2a, bindings
from ...protocols.script import IGNORED_NOTE, NEEDS_SCRIPT, NO_SCRIPT_NOTE, named, not_played, step_names
from .. import RuleContext, Unjudgeable, Verdict, answered, ev_evidence, ex_evidence, quote, rule
from ..common.framewalk import state_in
from ..common.streamview import REPEAT_ANSWERED_ONCE, Frames, StreamFrames, TaskStream, read_frames
from ..engine import QUOTE_LIMIT

# What a log without anything to judge lacked: the NOT_TESTED reasons of the sequence rules.
NO_TASK_STREAM = "no task stream: no SendStreamingMessage or SubscribeToTask was answered with an event stream"
NO_TASK_FIRST = "no task stream began with a Task (A2A-STREAM-001 says what frame 1 was)"
NO_TERMINAL = "no task stream reached a terminal state"

# -- what the rules read ----------------------------------------------------------------------------

@dataclass
class SentStream:
    """The answer to the scenario's SendStreamingMessage, whatever it is."""

    exchange: Exchange

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> SentStream:
        return cls(answered(log, STREAM))


@dataclass
class FirstTask:
    """Frame 1 of the scenario's SendStreamingMessage stream when it is the Task (otherwise A2A-STREAM-001
    says what it is), with the message the client sent."""

    exchange: Exchange
    event: Event
    task: dict[str, Any]

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> FirstTask:
        ex = answered(log, STREAM)
        first = read_frames(ex)[:1] if ex.is_stream else []
        if not first or first[0][1] != a2a.TASK:
            raise Unjudgeable(missing="frame 1 of the scenario's stream is not a Task (A2A-STREAM-001 says what it is)")
        ev, _, task = first[0]
        return cls(ex, ev, task)

    @property
    def sent(self) -> dict[str, Any]:
        params = self.exchange.params
        return params.get("message", {}) if isinstance(params, dict) else {}

    @property
    def evidence(self) -> dict[str, Any]:
        return ev_evidence(self.exchange, self.event)


@dataclass
class PlayedScript:
    """The scenario's SendStreamingMessage stream beside the script the agent was asked to play."""

    stream: TaskStream
    script: dict[str, Any]
    notes: dict[str, Any]  # the log's: what the test agent plays (protocols/script.py PLAYED_NOTE, IGNORED_NOTE)

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> PlayedScript:
        stream = TaskStream.of(log, ctx)  # first: a stream that got no answer is ERROR, script or not
        script = ctx.script or log.script
        if not isinstance(script, dict):
            raise Unjudgeable(missing="the log holds no test-agent script to compare the stream with")
        return cls(stream, script, log.notes)


# -- the sequence -----------------------------------------------------------------------------------

def continued_task(ex: Exchange) -> str | None:
    """The taskId a SendStreamingMessage names (a message continuing a task: an answer, a follow-up)."""
    params = ex.params
    message = params.get("message") if isinstance(params, dict) else None
    task_id = message.get("taskId") if isinstance(message, dict) else None
    return task_id if ex.rpc_method == a2a.SEND_STREAMING_MESSAGE and isinstance(task_id, str) else None


@rule("A2A-STREAM-001", view=StreamFrames)
def task_first(v: StreamFrames, out: Verdict) -> None:
    for s in v.streams:
        if not s.results:
            out.failed(f"{s.label}: the stream carried no data event at all", [ex_evidence(s.exchange)])
            continue
        ev, kind, _ = s.results[0]
        if kind == a2a.TASK:
            out.passed(f"{s.label}: frame 1 is the Task")
            continue
        # A message continuing a task (an answer) opens a task stream like any other: §3.1.2 makes no
        # exception for it, so a continuation that begins with an update is failed too (catalogue reading).
        about = f" (a stream continuing task {task_id})" if (task_id := continued_task(s.exchange)) else ""
        out.failed(f"{s.label}{about}: frame 1 is {kind or 'no StreamResponse result'}, not the Task the stream "
                   "begins with", [s.evidence(ev)])
    out.otherwise_not_tested(NO_TASK_STREAM)


@rule("A2A-STREAM-018", view=StreamFrames)
def task_only_first(v: StreamFrames, out: Verdict) -> None:
    for s in v.streams:
        if not s.results or s.results[0][1] != a2a.TASK:
            continue  # A2A-STREAM-001 says what frame 1 is
        snapshot = final_snapshot(s)
        later = [ev for ev, _ in s.results.facts_of(a2a.TASK) if ev is not s.results.events[0] and ev is not snapshot]
        if not later:
            out.passed(f"{s.label}: one Task, frame 1" + (", and a final snapshot of it before the close"
                                                         if snapshot is not None else ""),
                       reading="final Task snapshot before the close" if snapshot is not None else None)
            continue
        frames = ", ".join(str(s.exchange.frame_number(ev)) for ev in later[:5])
        evidence = [s.evidence(ev, "a Task after frame 1") for ev in later[:3]]
        if s.exchange.rpc_method == a2a.SUBSCRIBE_TO_TASK:
            # §3.1.6 and §11.7 describe one Task first, then updates (a last snapshot allowed); no MUST forbids
            # a later one on a subscription, and a client that reads StreamResponse takes it as the task's state.
            out.non_strict(f"{s.label}: SubscribeToTask sent the Task again in the middle of the stream (frame "
                           f"{frames}); a subscription carries one Task first, then status and artifact updates",
                           evidence, reading="a Task snapshot in the middle of a subscription")
        else:
            out.failed(f"{s.label}: a Task again in the middle of the stream (frame {frames}); a task stream "
                       "carries the Task first, then only status and artifact updates (a final snapshot aside)",
                       evidence)
    out.otherwise_not_tested(NO_TASK_FIRST if v.streams else NO_TASK_STREAM)


@rule("A2A-STREAM-002", view=FirstTask)
def ids_minted(v: FirstTask, out: Verdict) -> None:
    task = v.task
    bad = [f for f in ("id", "contextId") if not isinstance(task.get(f), str) or not task.get(f).strip()]
    if bad:
        out.failed(f"the client sent no taskId or contextId, and frame 1's Task has no {' and no '.join(bad)}; "
                   "expected the server to mint both", [v.evidence])
    else:
        out.passed(f"task {task['id']} and context {task['contextId']} minted by the server")


@rule("A2A-STREAM-003", view=FirstTask)
def ids_in_history(v: FirstTask, out: Verdict) -> None:
    task, history = v.task, v.task.get("history")
    copy = None
    if isinstance(history, list):
        copy = next((m for m in history if isinstance(m, dict) and m.get("messageId") == v.sent.get("messageId")),
                    None)
    if copy is None:
        out.non_strict("frame 1's Task does not hold the client's message in history, so the ids written into it "
                       "cannot be seen (history is optional; the seed's server includes it)", [v.evidence],
                       reading="history omitted")
        return
    wrong = [f"{f} {copy.get(f)!r} (task has {task.get(k)!r})" for f, k in (("taskId", "id"), ("contextId", "contextId"))
             if copy.get(f) != task.get(k)]
    if wrong:
        out.failed("the server's copy of the client's message carries " + ", ".join(wrong)
                   + "; expected both ids written into it", [v.evidence])
    else:
        out.passed("history holds the client's message with the new taskId and contextId",
                   reading="history holds the message")


@rule("A2A-STREAM-004", view=StreamFrames)
def events_name_task(v: StreamFrames, out: Verdict) -> None:
    for s in v.streams:
        anchor = next((f.ids for _, f in s.results.facts_of(a2a.TASK)), None)
        if anchor is None:
            continue
        bad, updates = [], 0
        for ev, f in s.results.facts_of(a2a.STATUS_UPDATE, a2a.ARTIFACT_UPDATE):
            updates += 1
            got = f.ids
            if got != anchor:
                why = f"{f.kind} names task {got[0]!r}, context {got[1]!r}"
            elif f.kind == a2a.STATUS_UPDATE and not f.has_status:
                why = "statusUpdate without status"
            else:
                continue
            bad.append((why, s.evidence(ev, why)))
        what = f"{s.label} event(s) that do not carry task {anchor[0]!r}, context {anchor[1]!r} and a status"
        if not out.fail_each(what, bad):
            out.passed(f"{s.label}: {updates} events name task {anchor[0]} and its context")
    out.otherwise_not_tested(NO_TASK_FIRST if v.streams else NO_TASK_STREAM)


@rule("A2A-STREAM-005", view=StreamFrames)
def one_kind(v: StreamFrames, out: Verdict) -> None:
    for s in v.streams:
        results, bad = 0, []
        for ev, f in zip(s.results.events, s.results.facts):  # counted as the frames were read
            if (members := f.members) < 0:
                continue
            results += 1
            if members != 1:
                kinds = a2a.stream_members(bindings.frame_answer(s.exchange.binding, ev.payload)[0])
                bad.append((f"frame {s.exchange.frame_number(ev)} holds {kinds or 'none'} of task, message, "
                            "statusUpdate, artifactUpdate", s.evidence(ev)))
        if not out.fail_each(f"{s.label} result(s) without exactly one StreamResponse member", bad) and results:
            out.passed(f"{s.label}: {results} results, each exactly one kind")
    out.otherwise_not_tested("no task stream carried a JSON-RPC result" if v.streams else NO_TASK_STREAM)


def _chunk_faults(s: Frames) -> tuple[int, list[tuple[str, dict]], list[tuple[str, dict]]]:
    """(artifact chunks, appends to an artifact never started, appends after its lastChunk); read once
    per stream for the two rules that ask."""
    return s.exchange.derived("_chunk_faults", lambda: _read_chunks(s))


def _read_chunks(s: Frames) -> tuple[int, list[tuple[str, dict]], list[tuple[str, dict]]]:
    started: set[str] = set()
    closed: set[str] = set()
    unstarted, after_last, count = [], [], 0
    for ev, f in s.results.facts_of(a2a.TASK, a2a.ARTIFACT_UPDATE):
        if f.kind == a2a.TASK:
            # The Task is the task's current state (§3.1.6): an artifact it holds has begun, and a chunk with
            # append: true extends it (a subscription, or a continuation, joining mid-artifact).
            started |= set(f.held)
            continue
        count += 1
        aid, append, last_chunk = f.artifact
        if append:
            if aid not in started:
                unstarted.append((f"artifact {aid!r}", s.evidence(ev, "append: true, yet neither the Task nor an earlier "
                                                                       "chunk started it")))
            elif aid in closed:
                after_last.append((f"artifact {aid!r}", s.evidence(ev, "append: true after its lastChunk")))
        else:
            started.add(aid)
            closed.discard(aid)  # a chunk without append starts the artifact afresh
        if last_chunk:
            closed.add(aid)
    return count, unstarted, after_last


@rule("A2A-STREAM-006", view=StreamFrames)
def chunks_append_to_a_started_artifact(v: StreamFrames, out: Verdict) -> None:
    for s in v.streams:
        count, unstarted, _ = _chunk_faults(s)
        if not out.fail_each(f"{s.label} chunk(s) with append: true to an artifact neither the stream's Task nor "
                             "an earlier chunk started", unstarted) and count:
            out.passed(f"{s.label}: {count} artifact chunks, each appended to a started artifact")
    out.otherwise_not_tested("no task stream carried an artifact chunk" if v.streams else NO_TASK_STREAM)


@rule("A2A-STREAM-007", view=StreamFrames)
def nothing_after_last_chunk(v: StreamFrames, out: Verdict) -> None:
    for s in v.streams:
        count, _, after_last = _chunk_faults(s)
        if not out.fail_each(f"{s.label} chunk(s) with append: true to an artifact after its lastChunk",
                             after_last) and count:
            out.passed(f"{s.label}: nothing appended after a lastChunk")
    out.otherwise_not_tested("no task stream carried an artifact chunk" if v.streams else NO_TASK_STREAM)


# -- the end ---------------------------------------------------------------------------------------------

def final_snapshot(s: Frames) -> Event | None:
    """The stream's last frame when it is a Task repeated in the state the stream ended in, right before the
    close: the final snapshot A2A §11.7 lets an implementation resend (None otherwise)."""
    if len(s.results) < 2 or s.exchange.end != END_CLOSED:
        return None
    ev, kind, body = s.results[-1]
    states = s.states
    before = states[-2][1] if len(states) >= 2 and states[-1][0] is ev else None
    if kind == a2a.TASK and before is not None and state_in(kind, body) == before:
        return ev
    return None


@rule("A2A-STREAM-008", view=StreamFrames)
def terminal_last(v: StreamFrames, out: Verdict) -> None:
    for s in v.streams:
        if (term := s.terminal) is None:
            continue
        ev, state = term
        snapshot = final_snapshot(s)
        after = [e for e in s.exchange.data_events() if e.index > ev.index and e is not snapshot]
        if not after and snapshot is not None:
            out.passed(f"{s.label}: {state} is the last event, then a final Task snapshot in that state (§11.7 "
                       "lets the Task be resent before the close)", reading="final Task snapshot before the close")
        elif after:
            out.failed(f"{s.label}: {len(after)} event(s) after the terminal {state} (frame "
                       f"{s.evidence(ev)['frame']}); expected the terminal status as the last event",
                       [s.evidence(ev, "terminal")] + [s.evidence(e, "after terminal") for e in after[:4]])
        else:
            out.passed(f"{s.label}: {state} is the last event")
    out.otherwise_not_tested(NO_TERMINAL if v.streams else NO_TASK_STREAM)


@rule("A2A-STREAM-009", view=StreamFrames)
def ends_after_terminal(v: StreamFrames, out: Verdict) -> None:
    for s in v.streams:
        ex = s.exchange
        if ex.end == END_CLIENT_STOP:
            continue  # the driver stopped reading on purpose
        states = [state for _, state in s.states]
        last = states[-1] if states else None
        if (term := s.terminal) is not None:
            out.passed(f"{s.label}: the stream reached {term[1]}")
        elif s.repeats is not None:
            out.passed(f"{s.label}: repeats the messageId of {s.repeats.label} ({s.repeats.rpc_method}), answered once "
                       f"with the Task as it is ({last or 'no state'}), then closed", reading=REPEAT_ANSWERED_ONCE)
        elif ex.end == END_CLOSED and a2a.is_interrupted(last):
            continue  # conflict D3: judged by the interrupted-state requirements (A2A-INT-)
        elif ex.end == END_CLOSED:
            out.failed(f"{s.label}: the server closed the stream after {len(states)} state(s), the last "
                       f"{last or '(none)'}, without a terminal state", [ex_evidence(ex)])
        elif ex.end == END_TIME_LIMIT:
            waited = (ex.t_end or 0) - ex.t_sent
            out.failed(f"{s.label}: no terminal state within the per-stream limit; cut after {waited:.1f} s, last "
                       f"state {last or '(none)'}", [ex_evidence(ex)],
                       measured={"open_s": round(waited, 3), "limit_s": ex.notes.get(LIMIT_S)})
        elif ex.end == END_RESET:
            out.failed(f"{s.label}: {ex.error}, after {len(states)} state(s), the last {last or '(none)'}, without "
                       f"a terminal state", [ex_evidence(ex)])
        elif ex.end == END_IDLE:
            # the suite stopped waiting at its idle-gap cap: whether a terminal state would have come is unknown
            out.error(f"{s.label}: no terminal state before the suite stopped waiting, the last state "
                      f"{last or '(none)'}: {ex.error}", [ex_evidence(ex)],
                      measured={"idle_s": ex.notes.get(IDLE_S)})
    out.otherwise_not_tested("every task stream was stopped by the driver on purpose or closed at an interrupted "
                             "state (D3: judged by A2A-INT-002 and A2A-INT-007)" if v.streams else NO_TASK_STREAM)


@rule("A2A-STREAM-010", view=StreamFrames)
def closes_after_terminal(v: StreamFrames, out: Verdict) -> None:
    tol = out.tolerance("close_after_terminal_s", 2.0)
    for s in v.streams:
        ex = s.exchange
        if (term := s.terminal) is None or ex.end == END_CLIENT_STOP:
            continue
        ev, state = term
        delay = (ex.t_end or ev.t) - ev.t
        measured = {"close_after_terminal_s": round(delay, 3), "tolerance_s": tol}
        if ex.end in (END_TIME_LIMIT, END_IDLE):
            cut = "at its per-stream limit" if ex.end == END_TIME_LIMIT else f"({ex.error})"
            out.failed(f"{s.label}: still open {delay:.2f} s after the terminal {state} when the suite cut it "
                       f"{cut}; expected the stream to close", [s.evidence(ev, "terminal")], measured=measured)
        elif delay > tol:
            out.warning(f"{s.label}: closed {delay:.2f} s after the terminal {state}, past the tolerance of {tol:g} s",
                        [s.evidence(ev, "terminal")], measured=measured)
        else:
            out.passed(f"{s.label}: closed {delay * 1000:.0f} ms after {state}", measured=measured)
    out.otherwise_not_tested("no task stream the driver read to its end reached a terminal state" if v.streams
                             else NO_TASK_STREAM)


# -- the answer and the script -------------------------------------------------------------------------

@rule("A2A-STREAM-015", view=SentStream)
def stream_answered(v: SentStream, out: Verdict) -> None:
    ex = v.exchange
    if not ex.is_stream:
        error = bindings.read_answer(ex).error if ex.binding == bindings.GRPC else None
        seen = f"error {bindings.describe_error(error)}" if error else f"first bytes {ex.first_bytes()!r}"
        out.failed(f"SendStreamingMessage answered HTTP {ex.status} {ex.content_type or ''} instead of a stream; "
                   f"{seen}", [ex_evidence(ex)])
        return
    first = next(iter(ex.data_events()), None)
    error = bindings.frame_answer(ex.binding, first.payload)[1] if first else None
    if error is not None:
        out.failed(f"the card declares streaming, yet the stream's first event is an error: {error!r}",
                   [ev_evidence(ex, first)])
    elif first is None:
        out.failed("the stream carried no event", [ex_evidence(ex)])
    else:
        out.passed(f"streamed {len(ex.data_events())} events for the new task")


def _text_of(message: Any) -> str | None:
    """The text parts of a message, joined (None when it has none)."""
    parts = message.get("parts") if isinstance(message, dict) else None
    texts = [p["text"] for p in parts or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "".join(texts) if texts else None


def _shown(value: Any) -> str:
    """What the agent sent, as a problem below quotes it: strings cut and lists shortened before anything is
    formatted (limits.bounded_value), so that a 64 MiB status text, or a text said 1 200 times, is never
    formatted whole on its way to a finding that would cut it anyway (issue 25)."""
    return repr(bounded_value(value, QUOTE_LIMIT))


def _artifact_problems(step: dict[str, Any], stream: TaskStream) -> list[str]:
    aid = step.get("artifactId")
    got = stream.artifacts.get(aid)
    if got is None:
        return [f"artifact {aid!r} never streamed"]
    problems = []
    if step.get("name") is not None and got.name != step["name"]:
        problems.append(f"artifact {aid!r} is named {_shown(got.name)}, not {step['name']!r}")
    if "chunks" in step:
        want = "".join(step["chunks"])
        if got.text != want:
            problems.append(f"artifact {aid!r} joins to {quote(got.text or '', 160)!r}, not {quote(want, 160)!r}")
        if got.chunks != len(step["chunks"]):
            problems.append(f"artifact {aid!r} came in {got.chunks} chunk(s), the script has {len(step['chunks'])}")
    if "data" in step:
        if got.data != [step["data"]]:
            problems.append(f"artifact {aid!r} carries data {_shown(got.data)}, not [{step['data']!r}]")
        types = [p.get("mediaType") for p in got.data_parts]
        if types and types != [a2a.JSON_MEDIA_TYPE]:
            problems.append(f"artifact {aid!r} data part has mediaType {_shown(types)}, not application/json")
    if not got.last_chunk:
        problems.append(f"artifact {aid!r} is never closed with lastChunk: true")
    return problems


def _status_problems(steps: list[dict[str, Any]], stream: TaskStream) -> list[str]:
    """The script's status texts, in order, among the WORKING statuses' texts."""
    said = [_text_of(u.get("status", {}).get("message")) for _, u in stream.statuses
            if u.get("status", {}).get("state") == a2a.WORKING]
    pos = 0
    for step in steps:
        if "status" in step:
            while pos < len(said) and said[pos] != step["status"]:
                pos += 1
            if pos == len(said):
                return [f"no WORKING status says {step['status']!r} (in order; seen {_shown(said)})"]
            pos += 1
    return []


def _ending_problems(final: dict[str, Any], stream: TaskStream) -> list[str]:
    problems = []
    for key, state in (("finish", a2a.COMPLETED), ("fail", a2a.FAILED)):
        if key in final:
            said_last = _text_of(stream.last_status_message)
            if stream.last_state != state or said_last != final[key]:
                problems.append(f"the stream ends in {stream.last_state} saying {_shown(said_last)}; the script's {key} "
                                f"step ends it in {state} saying {final[key]!r}")
    return problems


@rule("A2A-STREAM-014", view=PlayedScript)
def plays_script(v: PlayedScript, out: Verdict) -> None:
    notes = v.notes
    if notes.get(NO_SCRIPT_NOTE):
        out.add(Outcome.NOT_TESTED, NEEDS_SCRIPT)
        return
    if ignored := notes.get(IGNORED_NOTE):
        out.failed(f"the test agent ignores the script (docs/contracts.md §6): {ignored}; what rests on the script's "
                   "content is NOT_TESTED (declare the steps it plays in its card, or judge it as it is with --prompt)",
                   [ex_evidence(v.stream.exchange)])
        return
    # The steps the test agent does not play are left out of the comparison (docs/script-extensions.md)
    left_out = not_played(notes, v.script)
    steps = [s for s in v.script.get("steps") or [] if isinstance(s, dict) and not set(s) & set(left_out)]
    compared = [n for n in step_names(v.script) if n in ("status", "artifact", "finish", "fail") and n not in left_out]
    if not compared:
        out.unsupported(f"the test agent does not play {named(left_out)}: nothing of the script "
                        f"{v.script.get('name')!r} is left to compare")
        return
    reading = f"compared without the steps the test agent does not play: {named(left_out)}" if left_out else None
    problems = _status_problems(steps, v.stream)
    for step in steps:
        if "artifact" in step:
            problems += _artifact_problems(step["artifact"], v.stream)
    final = v.script.get("steps")[-1] if v.script.get("steps") else {}
    problems += _ending_problems(final if isinstance(final, dict) and not set(final) & set(left_out) else {}, v.stream)
    if problems:
        out.failed("the stream does not carry what the script produced: " + "; ".join(problems),
                   [ex_evidence(v.stream.exchange)], reading=reading)
    else:
        out.passed(f"{', '.join(compared)} of the script {v.script.get('name')!r} match "
                   f"({sum('artifact' in s for s in steps)} artifact(s))", reading=reading)
