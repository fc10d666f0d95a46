"""A2A-TASK-: GetTask, ListTasks, CancelTask and SubscribeToTask agree with the stream.

Labels read (written by streamcert.scenarios.a2a):
  stream, get_task, get_task_h0, get_task_h1        (stream-task scenarios)  TASK-001…004
  send_1…send_3, list_context, list_artifacts,
  list_page1, list_page2, list_status               (list-tasks)             TASK-005…009
  stream, subscribe, cancel, get_task               (cancel-subscribe)       TASK-010…012
"""

from __future__ import annotations

import itertools
import json
from datetime import datetime
from typing import Any

from .. import a2a
from ..framelog import END_CLOSED, Exchange, FrameLog
from ..outcomes import Finding, Outcome
from . import RuleContext, ev_evidence, ex_evidence, fail, ok, outcome, quote, rule
from .streamview import ArtifactView, StreamView
from .unary import Answer, no_answer, state_of, task_of

SPEC_AFTER = ("seed 001 'The task after the stream': GetTask 'reads the final state of a task after … "
              "a stream has ended' (A2A §3.1.3)")
SPEC_HISTORY = "A2A §3.1.3 GetTaskRequest.historyLength: unset = no limit, 0 = no history, N = at most the last N"
SPEC_LIST = ("A2A §3.1.4 ListTasksResponse: tasks, nextPageToken (always present, \"\" on the last page), "
             "pageSize and totalSize")
SPEC_SORT = "A2A §3.1.4: ListTasks sorts tasks by status timestamp, newest first"
SPEC_ARTIFACTS = "A2A §3.1.4 includeArtifacts: artifacts are omitted entirely unless includeArtifacts is true"
SPEC_PAGING = "A2A §3.1.4: pageSize 1–100, pageToken; nextPageToken always present, \"\" on the last page"
SPEC_FILTER = "A2A §3.1.4: ListTasks filters by contextId and by status"
SPEC_CANCEL = ("A2A §3.1.5 CancelTask returns the task in TASK_STATE_CANCELED; §3.1.2 the stream MUST close "
               "when the task reaches a terminal state")
SPEC_SUBSCRIBE = ("A2A §3.1.6: SubscribeToTask MUST send the Task as its first event and end at a terminal "
                  "state")
SPEC_SAME = "A2A §3.1.6: several streams on one task see the same events in the same order"

AT_REST = a2a.TERMINAL_STATES | a2a.INTERRUPTED_STATES


# -- local helpers -----------------------------------------------------------------------------------

def _dump(value: Any, limit: int = 200) -> str:
    return quote(json.dumps(value, ensure_ascii=False, separators=(",", ":")), limit)


def _stream(req_id: str, ex: Exchange) -> tuple[StreamView | None, Finding | None]:
    """The stream's view, or an ERROR finding when the stream got no answer."""
    bad = no_answer(req_id, ex, f"{ex.rpc_method or 'the stream'}")
    if bad:
        return None, bad
    return StreamView.from_exchange(ex), None


def _task_answer(req_id: str, ex: Exchange, what: str, spec: str) -> tuple[dict | None, Finding | None]:
    """The Task a unary call returned, or the finding that says why there is none."""
    bad = no_answer(req_id, ex, what)
    if bad:
        return None, bad
    ans = Answer.of(ex)
    if ans.problem or ans.error is not None:
        return None, fail(req_id, f"{what} ({ex.label}) did not return the task: {ans.describe()} ({spec})",
                          [ex_evidence(ex)])
    task = task_of(ans.result)
    if task is None:
        return None, fail(req_id, f"{what} ({ex.label}) returned a result that is no Task: "
                                  f"{_dump(ans.result)} ({spec})", [ex_evidence(ex)])
    return task, None


def _list_answer(req_id: str, ex: Exchange) -> tuple[dict | None, Finding | None]:
    """A ListTasks result with a `tasks` array, or the finding that says why there is none."""
    bad = no_answer(req_id, ex, "ListTasks")
    if bad:
        return None, bad
    ans = Answer.of(ex)
    if ans.problem or ans.error is not None:
        return None, fail(req_id, f"ListTasks ({ex.label}) was not answered with a list: {ans.describe()} "
                                  f"({SPEC_LIST})", [ex_evidence(ex)])
    result = ans.result
    if not isinstance(result, dict) or not isinstance(result.get("tasks"), list):
        return None, fail(req_id, f"ListTasks ({ex.label}) result has no tasks array: {_dump(result)} "
                                  f"({SPEC_LIST})", [ex_evidence(ex)])
    return result, None


def _evidence_of(problems: list[tuple[str, Exchange]]) -> list[dict]:
    """One evidence entry per exchange named in `problems`, in order."""
    seen: dict[int, Exchange] = {}
    for _, ex in problems:
        seen.setdefault(id(ex), ex)
    return [ex_evidence(ex) for ex in seen.values()]


def _ids(tasks: list[Any]) -> list[Any]:
    return [t.get("id") if isinstance(t, dict) else None for t in tasks]


def _sent_tasks(log: FrameLog) -> list[tuple[str, dict]]:
    """(label, task) of the blocking SendMessage calls send_1… that returned a task."""
    out = []
    for ex in log.exchanges:
        if ex.label.startswith("send_") and ex.label[5:].isdigit():
            task = task_of(Answer.of(ex).result)
            if task is not None and isinstance(task.get("id"), str):
                out.append((ex.label, task))
    return out


def _context_id(log: FrameLog) -> str | None:
    ctx = log.notes.get("context_id")
    if isinstance(ctx, str):
        return ctx
    sent = _sent_tasks(log)
    return sent[0][1].get("contextId") if sent else None


def _same_message(a: Any, b: Any) -> str | None:
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
        return f"parts {_dump(b.get('parts'))} are not {_dump(a.get('parts'))}"
    return None


def _msg_text(msg: Any) -> str:
    if not isinstance(msg, dict):
        return "no message"
    texts = [p.get("text") for p in msg.get("parts") or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return repr("".join(texts)) if texts else _dump(msg)


def _last_status_evidence(ex: Exchange, view: StreamView, note: str) -> list[dict]:
    ev = view.last_status_event
    return [ev_evidence(ex, ev, note)] if ev is not None else [ex_evidence(ex, note)]


# A stream that ended while the task was still working (cut, or closed early) proves nothing about
# what GetTask should show later: those rules give no finding then (the stream rules blame the stream).

# -- GetTask after the stream ----------------------------------------------------------------------

@rule("A2A-TASK-001")
def get_task_state(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-TASK-001"
    ex_s, ex_g = log.get("stream"), log.get("get_task")
    if ex_s is None or ex_g is None:
        return []
    view, bad = _stream(rid, ex_s)
    if bad:
        return [bad]
    task, bad = _task_answer(rid, ex_g, "GetTask", SPEC_AFTER)
    if bad:
        return [bad]
    streamed, got = view.last_state, state_of(task)
    evidence = _last_status_evidence(ex_s, view, "last status streamed") + [ex_evidence(ex_g)]
    if streamed is None:
        return []  # no state streamed: A2A-STREAM-001/009 say what is wrong
    if got == streamed:
        return [ok(rid, f"GetTask state {got} equals the stream's last state")]
    if streamed not in AT_REST:
        return []
    return [fail(rid, f"GetTask returned state {got!r} but the stream ended in {streamed} ({SPEC_AFTER})",
                 evidence)]


@rule("A2A-TASK-002")
def get_task_message(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-TASK-002"
    ex_s, ex_g = log.get("stream"), log.get("get_task")
    if ex_s is None or ex_g is None:
        return []
    view, bad = _stream(rid, ex_s)
    if bad:
        return [bad]
    task, bad = _task_answer(rid, ex_g, "GetTask", SPEC_AFTER)
    if bad:
        return [bad]
    status = task.get("status") if isinstance(task.get("status"), dict) else {}
    got = status.get("message")
    whole, latest = view.last_status_message, view.last_message_streamed
    readings = [("the last status's message (the status is stored whole)", whole)]
    if latest is not whole:
        readings.append(("the last message of any streamed status", latest))
    for reading, expected in readings:
        if _same_message(expected, got) is None:
            what = "no status message, as the stream's last status" if got is None else \
                f"status message {_msg_text(got)}"
            return [ok(rid, f"GetTask has {what}", reading=reading if len(readings) > 1 else None)]
    evidence = _last_status_evidence(ex_s, view, "last status streamed") + [ex_evidence(ex_g)]
    why = _same_message(whole, got)
    if view.last_state not in AT_REST:
        return []
    return [fail(rid, f"GetTask's status message is {_msg_text(got)} but the last status message streamed is "
                      f"{_msg_text(whole)} ({why}) ({SPEC_AFTER})", evidence)]


def _compare_artifact(view: ArtifactView, got: dict) -> tuple[list[str], str | None]:
    """Problems with one GetTask artifact against its streamed build; and the text reading taken."""
    problems: list[str] = []
    parts = [p for p in got.get("parts") or [] if isinstance(p, dict)]
    got_texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
    got_data = [p["data"] for p in parts if "data" in p]
    reading = None
    want = view.text
    have = "".join(got_texts) if got_texts else None
    if want != have:
        problems.append(f"artifact {view.artifact_id!r}: GetTask text {quote(repr(have), 200)} is not the "
                        f"streamed chunks joined {quote(repr(want), 200)}")
    elif want is not None:
        if len(got_texts) == 1:
            reading = "text as one joined part"
        elif len(got_texts) == len(view.text_parts):
            reading = "text as the list of chunk parts"
        else:
            reading = f"text split into {len(got_texts)} parts that join to the streamed text"
    if view.data != got_data:
        problems.append(f"artifact {view.artifact_id!r}: GetTask data {_dump(got_data)} is not the streamed "
                        f"data {_dump(view.data)}")
    name = got.get("name")
    if view.name is not None and name is not None and name != view.name:
        problems.append(f"artifact {view.artifact_id!r}: GetTask name {name!r} is not the streamed {view.name!r}")
    return problems, reading


@rule("A2A-TASK-003")
def get_task_artifacts(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-TASK-003"
    ex_s, ex_g = log.get("stream"), log.get("get_task")
    if ex_s is None or ex_g is None:
        return []
    view, bad = _stream(rid, ex_s)
    if bad:
        return [bad]
    task, bad = _task_answer(rid, ex_g, "GetTask", SPEC_AFTER)
    if bad:
        return [bad]
    raw = task.get("artifacts")
    got_list = [a for a in raw if isinstance(a, dict)] if isinstance(raw, list) else []
    by_id = {a.get("artifactId"): a for a in got_list}
    problems: list[str] = []
    readings: dict[str, str] = {}
    evidence: list[dict] = []
    for aid, art in view.artifacts.items():
        got = by_id.get(aid)
        if got is None:
            problems.append(f"artifact {aid!r} was streamed ({art.chunks} chunk(s)) but GetTask has no "
                            f"artifact with that id")
            evidence.append(ev_evidence(ex_s, art.events[0], f"first chunk of {aid}"))
            continue
        more, reading = _compare_artifact(art, got)
        if more:
            problems += more
            evidence.append(ev_evidence(ex_s, art.events[-1], f"last chunk of {aid}"))
        if reading:
            readings[aid] = reading
    for aid in by_id:
        if aid not in view.artifacts:
            problems.append(f"GetTask has artifact {aid!r}, which the stream never sent")
    if problems:
        evidence.append(ex_evidence(ex_g))
        if view.last_state not in AT_REST:
            return []
        return [fail(rid, "; ".join(problems) + f" ({SPEC_AFTER}; seed 001 Frames 3 to 8)", evidence)]
    distinct = sorted(set(readings.values()))
    reading = distinct[0] if len(distinct) == 1 else \
        "; ".join(f"{aid}: {r}" for aid, r in readings.items()) or None
    n = len(view.artifacts)
    msg = (f"GetTask's {n} artifact(s) equal the streamed chunks joined per artifactId "
           f"(text concatenated, data compared as JSON)") if n else "no artifact streamed and none in GetTask"
    return [ok(rid, msg, reading=reading)]


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


@rule("A2A-TASK-004")
def get_task_history(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-TASK-004"
    exs = {label: log.get(label) for label in ("get_task", "get_task_h0", "get_task_h1")}
    if all(ex is None for ex in exs.values()):
        return []
    tasks: dict[str, dict] = {}
    errors: list[Finding] = []
    for label, ex in exs.items():
        if ex is None:
            continue
        task, bad = _task_answer(rid, ex, "GetTask", SPEC_HISTORY)
        if bad:
            if bad.outcome == Outcome.FAIL:
                return [bad]
            errors.append(bad)
        else:
            tasks[label] = task
    problems: list[tuple[str, Exchange]] = []
    weak: list[str] = []
    histories = {label: _history(t) for label, t in tasks.items()}
    for label, h in histories.items():
        if h is None:
            problems.append((f"{label}: history is not an array: {_dump(tasks[label].get('history'))}", exs[label]))
    full = histories.get("get_task")
    if full is not None:
        view = StreamView.from_exchange(log.get("stream"))
        first = view.task.get("history") if view.task else None
        if isinstance(first, list):
            have = {_msg_key(m) for m in full}
            missing = [_msg_key(m) for m in first if _msg_key(m) not in have]
            if missing:
                problems.append(((f"get_task (no historyLength, so no limit) lacks {len(missing)} message(s) the "
                                 f"stream's Task already held in its history: {_dump(missing)}"), exs["get_task"]))
    h0 = histories.get("get_task_h0")
    if h0:
        problems.append(((f"get_task_h0 (historyLength 0) returned {len(h0)} history message(s); it must omit "
                         f"history"), exs["get_task_h0"]))
    h1 = histories.get("get_task_h1")
    if h1 is not None:
        if len(h1) > 1:
            problems.append((f"get_task_h1 (historyLength 1) returned {len(h1)} history messages", exs["get_task_h1"]))
        elif full and len(h1) == 1 and _msg_key(h1[0]) != _msg_key(full[-1]):
            problems.append(((f"get_task_h1 (historyLength 1) returned message {_msg_key(h1[0])!r}, not the most "
                             f"recent one {_msg_key(full[-1])!r}"), exs["get_task_h1"]))
        elif full is not None and len(h1) > len(full):
            problems.append(((f"get_task (no historyLength, so no limit) returned {len(full)} history message(s), "
                             f"fewer than get_task_h1 (historyLength 1)"), exs["get_task"]))
        elif full and not h1:
            weak.append(f"historyLength 1 returned no history although the task has {len(full)} message(s) "
                        f"('at most 1' read literally)")
    if problems:
        return [fail(rid, "; ".join(p for p, _ in problems) + f" ({SPEC_HISTORY})",
                     _evidence_of(problems))]
    if errors:
        return errors[:1]
    n = "absent" if full is None else len(full)
    checked = f"history: unset → {n}, 0 → none, 1 → ≤1 (the most recent)"
    if weak:
        return [outcome(rid, Outcome.NON_STRICT, weak[0], [ex_evidence(exs["get_task_h1"])], reading=weak[0])]
    return [ok(rid, f"GetTask honours historyLength ({checked})")]


# -- ListTasks -----------------------------------------------------------------------------------

@rule("A2A-TASK-005")
def list_tasks_response(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-TASK-005"
    ex = log.get("list_context")
    if ex is None:
        return []
    result, bad = _list_answer(rid, ex)
    if bad:
        return [bad]
    problems = []
    if not isinstance(result.get("nextPageToken"), str):
        problems.append("nextPageToken is " + ("missing" if "nextPageToken" not in result
                                               else f"not a string: {_dump(result['nextPageToken'])}"))
    for key in ("pageSize", "totalSize"):
        value = result.get(key)
        if key not in result:
            problems.append(f"{key} is missing")
        elif not isinstance(value, int) or isinstance(value, bool):
            problems.append(f"{key} is not an integer: {_dump(value)}")
    listed = set(_ids(result["tasks"]))
    missing = [(label, t["id"]) for label, t in _sent_tasks(log) if t["id"] not in listed]
    for label, tid in missing:
        problems.append(f"task {tid} (from {label}) is not listed")
    if problems:
        return [fail(rid, "ListTasks by contextId: " + "; ".join(problems) + f" ({SPEC_LIST})", [ex_evidence(ex)])]
    return [ok(rid, f"ListTasks returned the {len(listed)} task(s) with tasks, nextPageToken, pageSize and "
                    f"totalSize")]


def _parse_ts(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        return None


@rule("A2A-TASK-006")
def list_tasks_sorted(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-TASK-006"
    ex = log.get("list_context")
    if ex is None:
        return []
    result, bad = _list_answer(rid, ex)
    if bad:
        return [bad]
    tasks = [t for t in result["tasks"] if isinstance(t, dict)]
    if len(tasks) < 2:
        return []  # nothing to order
    stamps = []
    for t in tasks:
        status = t.get("status") if isinstance(t.get("status"), dict) else {}
        stamps.append((t.get("id"), status.get("timestamp"), _parse_ts(status.get("timestamp"))))
    unjudged = [(tid, raw) for tid, raw, parsed in stamps if parsed is None]
    if unjudged:
        what = ", ".join(f"{tid} ({'no timestamp' if raw is None else repr(raw)})" for tid, raw in unjudged)
        return [outcome(rid, Outcome.NON_STRICT,
                        f"cannot judge the order: task(s) without a parseable status.timestamp: {what} "
                        f"(the timestamp is optional, and {SPEC_SORT})", [ex_evidence(ex)],
                        reading="order judged only when every listed task has a status timestamp")]
    for (a, ra, pa), (b, rb, pb) in itertools.pairwise(stamps):
        if pb > pa:
            order = ", ".join(f"{tid} @ {raw}" for tid, raw, _ in stamps)
            return [fail(rid, f"task {b} (status {rb}) is listed after the older task {a} (status {ra}); listed: "
                              f"{order} ({SPEC_SORT})", [ex_evidence(ex)])]
    return [ok(rid, f"the {len(tasks)} listed tasks are newest first by status.timestamp")]


def _expected_artifacts(log: FrameLog, ctx: RuleContext) -> dict[str, tuple[list, str]]:
    """task id -> (artifactIds it should carry, where that comes from): the SendMessage result, else the
    artifact steps of the scenario's script for that send (scenario data `scripts`, send_N ↔ scripts[N-1])."""
    scripts = (ctx.scenario.data.get("scripts") if ctx.scenario else None) or []
    out: dict[str, tuple[list, str]] = {}
    for label, t in _sent_tasks(log):
        ids = sorted(a.get("artifactId") for a in t.get("artifacts") or [] if isinstance(a, dict))
        if ids:
            out[t["id"]] = (ids, f"{label} returned it with")
            continue
        n = int(label[5:])
        steps = scripts[n - 1].get("steps", []) if 0 < n <= len(scripts) and isinstance(scripts[n - 1], dict) else []
        ids = sorted(s["artifact"].get("artifactId") for s in steps
                     if isinstance(s, dict) and isinstance(s.get("artifact"), dict))
        if ids:
            out[t["id"]] = (ids, f"its script ({label}) produces")
    return out


@rule("A2A-TASK-007")
def list_tasks_artifacts(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-TASK-007"
    labels = [lb for lb in ("list_context", "list_page1", "list_page2", "list_status", "list_artifacts")
              if log.get(lb) is not None]
    if not labels:
        return []
    problems: list[tuple[str, Exchange]] = []
    empty_lists: list[str] = []
    expected = _expected_artifacts(log, ctx)
    errors: list[Finding] = []
    for label in labels:
        ex = log.get(label)
        result, bad = _list_answer(rid, ex)
        if bad:
            if bad.outcome == Outcome.FAIL:
                problems.append((bad.message, ex))
            else:
                errors.append(bad)
            continue
        for t in result["tasks"]:
            if not isinstance(t, dict):
                continue
            arts = t.get("artifacts")
            if label != "list_artifacts":
                if arts == []:
                    empty_lists.append(f"{label}: {t.get('id')}")
                elif arts is not None:
                    problems.append(((f"{label} (no includeArtifacts) carries artifacts for task {t.get('id')}: "
                                     f"{_dump(arts, 120)}"), ex))
                continue
            want, source = expected.get(t.get("id"), ([], ""))
            have = sorted(a.get("artifactId") for a in arts or [] if isinstance(a, dict))
            if want and want != have:
                problems.append(((f"list_artifacts (includeArtifacts: true) gives task {t.get('id')} artifacts "
                                 f"{have}, but {source} {want}"), ex))
    if problems:
        return [fail(rid, "; ".join(p for p, _ in problems) + f" ({SPEC_ARTIFACTS})",
                     _evidence_of(problems))]
    if errors:
        return errors[:1]
    reading = ("artifacts field absent" if not empty_lists
               else f"artifacts as an empty array read as omitted ({', '.join(empty_lists[:3])})")
    return [ok(rid, f"artifacts omitted without includeArtifacts and present with it ({', '.join(labels)})",
               reading=reading)]


@rule("A2A-TASK-008")
def list_tasks_paging(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-TASK-008"
    ex1, ex2, exc = log.get("list_page1"), log.get("list_page2"), log.get("list_context")
    if ex1 is None:
        return []
    page1, bad = _list_answer(rid, ex1)
    if bad:
        return [bad]
    problems: list[tuple[str, Exchange]] = []
    sent = [t["id"] for _, t in _sent_tasks(log)]
    tok1 = page1.get("nextPageToken")
    if len(page1["tasks"]) > 2:
        problems.append((f"list_page1 (pageSize 2) returned {len(page1['tasks'])} tasks", ex1))
    if not isinstance(tok1, str) or not tok1:
        problems.append(((f"list_page1 has nextPageToken {_dump(tok1) if 'nextPageToken' in page1 else 'missing'}"
                         f" although {len(sent)} tasks do not fit a page of 2"), ex1))
    pages = [page1]
    if ex2 is not None:
        page2, bad = _list_answer(rid, ex2)
        if bad:
            if bad.outcome != Outcome.FAIL:
                return [bad]
            problems.append((bad.message, ex2))
        else:
            pages.append(page2)
            if len(page2["tasks"]) > 2:
                problems.append((f"list_page2 (pageSize 2) returned {len(page2['tasks'])} tasks", ex2))
            if page2.get("nextPageToken") != "":
                problems.append(((f"the last page (list_page2) has nextPageToken "
                                 f"{_dump(page2['nextPageToken']) if 'nextPageToken' in page2 else 'missing'}, "
                                 f"not \"\""), ex2))
    elif isinstance(tok1, str) and tok1 and not problems:
        return []  # the driver did not get to page 2
    if ex2 is not None and len(pages) == 2:
        seen = _ids(pages[0]["tasks"]) + _ids(pages[1]["tasks"])
        dups = sorted({tid for tid in seen if seen.count(tid) > 1}, key=str)
        if dups:
            problems.append((f"tasks listed on both pages: {dups}", ex2))
        missing = [tid for tid in sent if tid not in seen]
        if missing:
            problems.append((f"page 1 + page 2 lack task(s) {missing}", ex2))
    for page, ex in zip(pages, (ex1, ex2)):
        total = page.get("totalSize")
        if isinstance(total, int) and sent and total != len(sent):
            problems.append((f"{ex.label} has totalSize {total}, but the context holds {len(sent)} tasks", ex))
    if exc is not None:
        whole, _ = _list_answer(rid, exc)
        if whole is not None and "nextPageToken" in whole and whole["nextPageToken"] != "" and \
                len(whole["tasks"]) >= len(sent):
            problems.append(((f"list_context returned every task on one page but nextPageToken "
                             f"{_dump(whole['nextPageToken'])}, not \"\""), exc))
    if problems:
        return [fail(rid, "; ".join(p for p, _ in problems) + f" ({SPEC_PAGING})",
                     _evidence_of(problems))]
    sizes = " + ".join(str(len(p["tasks"])) for p in pages)
    return [ok(rid, f"pageSize 2 honoured ({sizes} tasks, no duplicates, all {len(sent)} tasks), "
                    f"nextPageToken on every page and \"\" on the last")]


@rule("A2A-TASK-009")
def list_tasks_filters(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-TASK-009"
    exc, exs = log.get("list_context"), log.get("list_status")
    if exc is None and exs is None:
        return []
    context = _context_id(log)
    sent = _sent_tasks(log)
    sent_ids = [t["id"] for _, t in sent]
    states = {t["id"]: state_of(t) for _, t in sent}
    problems: list[tuple[str, Exchange]] = []
    errors: list[Finding] = []
    if exc is not None:
        result, bad = _list_answer(rid, exc)
        if bad:
            (problems.append((bad.message, exc)) if bad.outcome == Outcome.FAIL else errors.append(bad))
        else:
            tasks = [t for t in result["tasks"] if isinstance(t, dict)]
            strangers = [t.get("id") for t in tasks if context and t.get("contextId") != context]
            if strangers:
                problems.append(((f"ListTasks by contextId {context} returned task(s) of another context: "
                                 f"{strangers}"), exc))
            missing = [tid for tid in sent_ids if tid not in _ids(tasks)]
            if missing:
                problems.append((f"ListTasks by contextId {context} lacks task(s) {missing}", exc))
            for t in tasks:  # the list's states are the current ones
                if t.get("id") in states and state_of(t):
                    states[t["id"]] = state_of(t)
    if exs is not None:
        result, bad = _list_answer(rid, exs)
        if bad:
            (problems.append((bad.message, exs)) if bad.outcome == Outcome.FAIL else errors.append(bad))
        else:
            listed = _ids(result["tasks"])
            want = [tid for tid in sent_ids if states.get(tid) == a2a.FAILED]
            wrong = [(t.get("id"), state_of(t)) for t in result["tasks"] if isinstance(t, dict)
                     and (state_of(t) != a2a.FAILED or (context and t.get("contextId") != context))]
            if wrong:
                problems.append((f"ListTasks by status {a2a.FAILED} returned {_dump(wrong)}", exs))
            missing = [tid for tid in want if tid not in listed]
            if missing:
                problems.append((f"ListTasks by status {a2a.FAILED} lacks the failed task(s) {missing}", exs))
    if problems:
        return [fail(rid, "; ".join(p for p, _ in problems) + f" ({SPEC_FILTER})",
                     _evidence_of(problems))]
    if errors:
        return errors[:1]
    failed = [tid for tid in sent_ids if states.get(tid) == a2a.FAILED]
    return [ok(rid, f"contextId filter gave exactly the context's {len(sent_ids)} task(s); status filter "
                    f"{a2a.FAILED} gave exactly {failed or 'none'}")]


# -- CancelTask and SubscribeToTask ----------------------------------------------------------------

@rule("A2A-TASK-010")
def cancel_task(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-TASK-010"
    ex_c = log.get("cancel")
    if ex_c is None:
        return []
    task, bad = _task_answer(rid, ex_c, "CancelTask", SPEC_CANCEL)
    if bad:
        return [bad]
    problems: list[str] = []
    evidence = [ex_evidence(ex_c)]
    if state_of(task) != a2a.CANCELED:
        problems.append(f"CancelTask returned the task in state {state_of(task)!r}")
    ex_s = log.get("stream")
    if ex_s is not None:
        view, bad = _stream(rid, ex_s)
        if bad:
            return [bad]
        if view.last_state != a2a.CANCELED:
            problems.append(f"the task's stream ended at {view.last_state}, not {a2a.CANCELED}")
            evidence += _last_status_evidence(ex_s, view, "last status of the stream")
        elif ex_s.end != END_CLOSED:
            problems.append(f"the task's stream reached {a2a.CANCELED} but did not close (end: {ex_s.end})")
            evidence.append(ex_evidence(ex_s))
    ex_g = log.get("get_task")
    if ex_g is not None:
        after, bad = _task_answer(rid, ex_g, "GetTask", SPEC_CANCEL)
        if bad is None and state_of(after) != a2a.CANCELED:
            problems.append(f"GetTask after the cancel shows state {state_of(after)!r}")
            evidence.append(ex_evidence(ex_g))
    if problems:
        return [fail(rid, "; ".join(problems) + f" ({SPEC_CANCEL})", evidence)]
    return [ok(rid, f"CancelTask returned {a2a.CANCELED}; the stream ended there and closed")]


@rule("A2A-TASK-011")
def subscribe_task(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-TASK-011"
    ex = log.get("subscribe")
    if ex is None:
        return []
    view, bad = _stream(rid, ex)
    if bad:
        return [bad]
    problems: list[str] = []
    evidence: list[dict] = []
    first = view.items[0]
    if first.kind != "task":
        problems.append(f"the first event is {first.kind or 'no StreamResponse'}, not the Task")
        evidence.append(ev_evidence(ex, first.event, "first event"))
    else:
        main = StreamView.from_exchange(log.get("stream"))
        if main.task_id and first.body.get("id") != main.task_id:
            problems.append(f"the first Task is {first.body.get('id')!r}, not the subscribed task {main.task_id}")
            evidence.append(ev_evidence(ex, first.event, "first event"))
    last = view.items[-1]
    state = None
    if last.kind == "statusUpdate" or (last.kind == "task" and len(view.items) == 1):
        state = state_of(last.body)
    if not a2a.is_terminal(state):
        problems.append(f"the last event is {last.kind or 'no StreamResponse'}"
                        f"{' in ' + state if state else ''}, not a terminal status")
        evidence.append(ev_evidence(ex, last.event, "last event"))
    if ex.end != END_CLOSED:
        problems.append(f"the stream did not close (end: {ex.end})")
        evidence.append(ex_evidence(ex))
    if problems:
        return [fail(rid, "SubscribeToTask: " + "; ".join(problems) + f" ({SPEC_SUBSCRIBE})", evidence)]
    return [ok(rid, f"SubscribeToTask sent the Task first and closed after {state}")]


@rule("A2A-TASK-012")
def same_events(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-TASK-012"
    ex_m, ex_s = log.get("stream"), log.get("subscribe")
    if ex_m is None or ex_s is None:
        return []
    main, bad = _stream(rid, ex_m)
    if bad:
        return [bad]
    sub, bad = _stream(rid, ex_s)
    if bad:
        return [bad]
    start = 1 if sub.items and sub.items[0].kind == "task" else 0
    tail = sub.items[start:]
    k = len(tail)
    if k == 0:
        return [fail(rid, f"the subscribe stream carried no event after its Task, while the task stream went on "
                          f"to {main.last_state} ({SPEC_SAME})", [ex_evidence(ex_s)])]
    if k > len(main.items):
        return [fail(rid, f"the subscribe stream carried {k} events after its Task, the task stream only "
                          f"{len(main.items)} in all ({SPEC_SAME})", [ex_evidence(ex_s), ex_evidence(ex_m)])]
    for i, (a, b) in enumerate(zip(main.items[-k:], tail)):
        if a.result != b.result:
            return [fail(rid, f"event {start + i + 1} of the subscribe stream {_dump(b.result)} differs from "
                              f"the task stream's matching event {_dump(a.result)} (the subscriber's {k} events "
                              f"after its Task must be the task stream's last {k}) ({SPEC_SAME})",
                         [ev_evidence(ex_s, b.event, "subscribe"), ev_evidence(ex_m, a.event, "task stream")])]
    return [ok(rid, f"the subscriber's {k} event(s) after its Task equal the task stream's last {k} "
                    f"(JSON-RPC results compared as JSON)")]
