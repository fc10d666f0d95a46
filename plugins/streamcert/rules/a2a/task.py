"""A2A-TASK-001…004: GetTask after the stream returns the task the stream built.

Labels read (written by streamcert.drivers.a2a): stream, get_task, get_task_h0, get_task_h1
(scenarios stream-basic, stream-fail). A2A-TASK-001…003 compare the first GetTask of the task sent once
every stream of the task had ended, whatever its label, with those streams read together
(TaskStream.merged): a scenario whose task went on in a subscription or a streamed answer is compared
with where they left it. ListTasks is judged in task_list.py, CancelTask and SubscribeToTask in
task_cancel.py.

A stream that ended while the task was still working (cut, or closed early) proves nothing about
what GetTask should show later: these rules give no FAIL then (the stream rules blame the stream).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...contract.labels.a2a import GET_TASK, GET_TASK_H0, GET_TASK_H1, STREAM
from ...framelog import Exchange, FrameLog
from ...protocols import a2a
from .. import RuleContext, Unjudgeable, Verdict, ex_evidence, quote, rule
from ..common.streamview import StreamedArtifact, StreamFrames, TaskStream
from ..common.unary import Reply, dump, no_answer, state_of, task_reply

AT_REST = a2a.TERMINAL_STATES | a2a.INTERRUPTED_STATES


# -- reading (shared with task_list.py and task_cancel.py) ---------------------------------------------

def task_stream(ex: Exchange) -> TaskStream:
    """The task stream `ex` carried; Unjudgeable (ERROR) when it got no answer."""
    if lost := no_answer(ex, ex.rpc_method or "the stream"):
        raise Unjudgeable(lost, [ex_evidence(ex)])
    return TaskStream.from_exchange(ex)


def last_status_evidence(stream: TaskStream, note: str) -> list[dict[str, Any]]:
    ev = stream.last_status_event
    return [stream.evidence(ev, note)] if ev is not None else [ex_evidence(stream.exchange, note)]


def evidence_of(problems: list[tuple[str, Exchange]]) -> list[dict[str, Any]]:
    """One evidence entry per exchange named in `problems` (each (why, exchange)), in order."""
    seen: dict[int, Exchange] = {}
    for _, ex in problems:
        seen.setdefault(id(ex), ex)
    return [ex_evidence(ex) for ex in seen.values()]


# -- the views ----------------------------------------------------------------------------------------

@dataclass
class TaskAfterStream:
    """The scenario's task as its streams left it (the first stream, and every other task stream of the same
    task — a subscription, a streamed answer — read together), and what the first GetTask of that task sent
    once they had all ended returned: the Task, or why there is none."""

    stream: TaskStream
    read_back: Reply

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> TaskAfterStream:
        ex_s = log.get(STREAM)
        if ex_s is None:
            raise Unjudgeable()
        first = task_stream(ex_s)  # read first: when both got no answer, the stream's loss is reported
        exchanges = [ex_s] + [s.exchange for s in StreamFrames.of(log, ctx).streams
                              if s.exchange is not ex_s and TaskStream.from_exchange(s.exchange).task_id == first.task_id]
        ended = max((ex.t_end or ex.t_sent) for ex in exchanges)
        ex_g = next((ex for ex in log.exchanges if ex.rpc_method == a2a.GET_TASK and ex.t_sent >= ended
                     and _asks_for(ex, first.task_id)), None)
        if first.task_id is None:
            raise Unjudgeable(missing="the scenario's stream named no task")
        if ex_g is None:
            raise Unjudgeable(missing=f"no GetTask of task {first.task_id} was sent once its streams had ended")
        stream = TaskStream.merged([first] + [TaskStream.from_exchange(ex) for ex in exchanges[1:]])
        return cls(stream, task_reply(ex_g, "GetTask").needed())

    @property
    def task(self) -> dict[str, Any]:
        return self.read_back.value

    @property
    def at_rest(self) -> bool:
        """The stream ended with the task terminal or interrupted (so GetTask must show that end)."""
        return self.stream.last_state in AT_REST

    @property
    def evidence(self) -> list[dict[str, Any]]:
        return last_status_evidence(self.stream, "last status streamed") + self.read_back.evidence


HISTORY_READS = (GET_TASK, GET_TASK_H0, GET_TASK_H1)  # historyLength unset, 0, 1


@dataclass
class HistoryReads:
    """GetTask asked with historyLength unset, 0 and 1 (those the log holds), and the history the
    stream's first Task already held."""

    reads: dict[str, Reply]
    first_history: Any  # the stream's Task's `history` (None without a Task)

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> HistoryReads:
        reads = {label: task_reply(ex, "GetTask") for label in HISTORY_READS if (ex := log.get(label)) is not None}
        if not reads:
            raise Unjudgeable()
        first = TaskStream.from_exchange(log.get(STREAM)).task
        return cls(reads, first.get("history") if first else None)


# -- local helpers ----------------------------------------------------------------------------------------

def same_message(a: Any, b: Any) -> str | None:
    """None when two status messages are the same message (messageId when both carry one, and parts);
    else what differs."""
    if a is None or b is None:
        return None if a is None and b is None else ("one of them has no message")
    if not isinstance(a, dict) or not isinstance(b, dict):
        return "a message is not an object"
    ida, idb = a.get("messageId"), b.get("messageId")
    if ida and idb and ida != idb:
        return f"messageId {idb!r} is not {ida!r}"
    if a.get("parts") != b.get("parts"):
        return f"parts {dump(b.get('parts'))} are not {dump(a.get('parts'))}"
    return None


def msg_text(msg: Any) -> str:
    if not isinstance(msg, dict):
        return "no message"
    texts = [p.get("text") for p in msg.get("parts") or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return repr("".join(texts)) if texts else dump(msg)


def compare_artifact(built: StreamedArtifact, got: dict) -> tuple[list[str], str | None]:
    """Problems with one GetTask artifact against its streamed build; and the text reading taken."""
    problems: list[str] = []
    parts = [p for p in got.get("parts") or [] if isinstance(p, dict)]
    got_texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
    got_data = [p["data"] for p in parts if "data" in p]
    reading = None
    want = built.text
    have = "".join(got_texts) if got_texts else None
    if want != have:
        problems.append(f"artifact {built.artifact_id!r}: GetTask text {quote(repr(have), 200)} is not the "
                        f"streamed chunks joined {quote(repr(want), 200)}")
    elif want is not None:
        if len(got_texts) == 1:
            reading = "text as one joined part"
        elif len(got_texts) == len(built.text_parts):
            reading = "text as the list of chunk parts"
        else:
            reading = f"text split into {len(got_texts)} parts that join to the streamed text"
    if built.data != got_data:
        problems.append(f"artifact {built.artifact_id!r}: GetTask data {dump(got_data)} is not the streamed "
                        f"data {dump(built.data)}")
    name = got.get("name")
    if built.name is not None and name is not None and name != built.name:
        problems.append(f"artifact {built.artifact_id!r}: GetTask name {name!r} is not the streamed {built.name!r}")
    return problems, reading


def _asks_for(ex: Exchange, task_id: Any) -> bool:
    params = ex.params
    return not isinstance(params, dict) or params.get("id") in (task_id, None)


def _moved_on(message: Any, full: list, tasks: dict[str, Any]) -> bool:
    """Whether the one message GetTask (historyLength 1) returned can be a newer one than get_task's last: it is
    not among get_task's messages, and the task was not in a terminal state then (a task still at work, its stream
    closed early, may add messages between the two reads; a terminal task adds none)."""
    older = {_msg_key(m) for m in full}
    return _msg_key(message) not in older and not a2a.is_terminal(state_of(tasks.get(GET_TASK)))


def _history(task: dict) -> list | None:
    """The history list, [] when absent; None when it is there but is not a list."""
    h = task.get("history")
    if h is None:
        return []
    return h if isinstance(h, list) else None


def _msg_key(msg: Any) -> Any:
    if isinstance(msg, dict) and msg.get("messageId"):
        return msg["messageId"]
    return json.dumps(msg, sort_keys=True)


# -- the rules ------------------------------------------------------------------------------------------

@rule("A2A-TASK-001", view=TaskAfterStream)
def state_after_stream(v: TaskAfterStream, out: Verdict) -> None:
    if v.read_back.explain(out):
        return
    streamed, got = v.stream.last_state, state_of(v.task)
    if streamed is None:
        return  # no state streamed: A2A-STREAM-001/009 say what is wrong
    if got == streamed:
        out.passed(f"GetTask state {got} equals the stream's last state")
    elif v.at_rest:
        out.failed(f"GetTask returned state {got!r} but the stream ended in {streamed}", v.evidence)


@rule("A2A-TASK-002", view=TaskAfterStream)
def message_after_stream(v: TaskAfterStream, out: Verdict) -> None:
    if v.read_back.explain(out):
        return
    status = v.task.get("status") if isinstance(v.task.get("status"), dict) else {}
    got = status.get("message")
    whole, latest = v.stream.last_status_message, v.stream.last_message_streamed
    readings = [("the last status's message (the status is stored whole)", whole)]
    if latest is not whole:
        readings.append(("the last message of any streamed status", latest))
    for reading, expected in readings:
        if same_message(expected, got) is None:
            what = "no status message, as the stream's last status" if got is None else \
                f"status message {msg_text(got)}"
            out.passed(f"GetTask has {what}", reading=reading if len(readings) > 1 else None)
            return
    if v.at_rest:
        out.failed(f"GetTask's status message is {msg_text(got)} but the last status message streamed is "
                   f"{msg_text(whole)} ({same_message(whole, got)})", v.evidence)


@rule("A2A-TASK-003", view=TaskAfterStream)
def artifacts_after_stream(v: TaskAfterStream, out: Verdict) -> None:
    if v.read_back.explain(out):
        return
    raw = v.task.get("artifacts")
    by_id = {a.get("artifactId"): a for a in raw if isinstance(a, dict)} if isinstance(raw, list) else {}
    streamed = v.stream.artifacts
    problems: list[str] = []
    readings: dict[str, str] = {}
    evidence: list[dict] = []
    for aid, built in streamed.items():
        got = by_id.get(aid)
        if got is None:
            problems.append(f"artifact {aid!r} was streamed ({built.chunks} chunk(s)) but GetTask has no "
                            f"artifact with that id")
            evidence.append(v.stream.evidence(built.events[0], f"first chunk of {aid}"))
            continue
        more, reading = compare_artifact(built, got)
        if more:
            problems += more
            evidence.append(v.stream.evidence(built.events[-1], f"last chunk of {aid}"))
        if reading:
            readings[aid] = reading
    problems += [f"GetTask has artifact {aid!r}, which the stream never sent" for aid in by_id if aid not in streamed]
    if problems:
        if v.at_rest:
            out.failed("; ".join(problems), evidence + v.read_back.evidence)
        return
    distinct = sorted(set(readings.values()))
    reading = distinct[0] if len(distinct) == 1 else \
        "; ".join(f"{aid}: {r}" for aid, r in readings.items()) or None
    n = len(streamed)
    out.passed(f"GetTask's {n} artifact(s) equal the streamed chunks joined per artifactId (text concatenated, "
               f"data compared as JSON)" if n else "no artifact streamed and none in GetTask", reading=reading)


@rule("A2A-TASK-004", view=HistoryReads)
def history_length(v: HistoryReads, out: Verdict) -> None:
    # The first answer that is no Task decides; a lost one counts only when nothing else is wrong.
    if wrong := next((r for r in v.reads.values() if r.wrong), None):
        wrong.explain(out)
        return
    exs = {label: r.ex for label, r in v.reads.items()}
    tasks = {label: r.value for label, r in v.reads.items() if not r.lost}
    histories = {label: _history(t) for label, t in tasks.items()}
    problems: list[tuple[str, Exchange]] = [(f"{label}: history is not an array: {dump(tasks[label].get('history'))}",
                                             exs[label]) for label, h in histories.items() if h is None]
    full = histories.get(GET_TASK)
    if full is not None and isinstance(v.first_history, list):
        have = {_msg_key(m) for m in full}
        missing = [_msg_key(m) for m in v.first_history if _msg_key(m) not in have]
        if missing:
            problems.append((f"get_task (no historyLength, so no limit) lacks {len(missing)} message(s) the "
                             f"stream's Task already held in its history: {dump(missing)}", exs[GET_TASK]))
    if h0 := histories.get(GET_TASK_H0):
        problems.append((f"get_task_h0 (historyLength 0) returned {len(h0)} history message(s); it must omit "
                         f"history", exs[GET_TASK_H0]))
    weak: str | None = None
    h1 = histories.get(GET_TASK_H1)
    if h1 is not None:
        if len(h1) > 1:
            problems.append((f"get_task_h1 (historyLength 1) returned {len(h1)} history messages", exs[GET_TASK_H1]))
        elif full and len(h1) == 1 and _msg_key(h1[0]) != _msg_key(full[-1]) and not _moved_on(h1[0], full, tasks):
            problems.append((f"get_task_h1 (historyLength 1) returned message {_msg_key(h1[0])!r}, not the most "
                             f"recent one {_msg_key(full[-1])!r}", exs[GET_TASK_H1]))
        elif full is not None and len(h1) > len(full):
            problems.append((f"get_task (no historyLength, so no limit) returned {len(full)} history message(s), "
                             f"fewer than get_task_h1 (historyLength 1)", exs[GET_TASK]))
        elif full and not h1:
            weak = (f"historyLength 1 returned no history although the task has {len(full)} message(s) "
                    f"('at most 1' read literally)")
    if problems:
        out.failed("; ".join(p for p, _ in problems), evidence_of(problems))
    elif lost := next((r for r in v.reads.values() if r.lost), None):
        lost.explain(out)
    elif weak:
        out.non_strict(weak, [ex_evidence(exs[GET_TASK_H1])], reading=weak)
    else:
        n = "absent" if full is None else len(full)
        out.passed(f"GetTask honours historyLength (history: unset → {n}, 0 → none, 1 → ≤1 (the most recent))")
