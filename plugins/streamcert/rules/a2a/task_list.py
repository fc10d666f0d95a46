"""A2A-TASK-005…009, 013…015: ListTasks lists, orders, pages and filters the tasks of a context.

Labels read (written by streamcert.drivers.a2a, scenario list-tasks): send_other (a task in a context of its
own, made first), send_1…send_3 (the blocking SendMessage calls that made the tasks), list_context,
list_artifacts, list_page1, list_page2, list_status, list_after (statusTimestampAfter: the status timestamp of a
task list_context showed), list_proto_name (contextId named context_id), list_size_over and list_size_under
(pageSize 150 and 0).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ...contract.a2a import CONTEXT_ID
from ...contract.labels import a2a as a2a_labels
from ...framelog import Exchange, FrameLog
from ...protocols import a2a, bindings
from ...protocols.script import plays
from .. import RuleContext, Run, Unjudgeable, Verdict, ex_evidence, rule
from ..common.unary import Answer, Reply, answer_or_error, dump, no_answer, state_of, task_of
from .task import evidence_of

LISTS = (a2a_labels.LIST_CONTEXT, a2a_labels.LIST_PAGE1, a2a_labels.LIST_PAGE2, a2a_labels.LIST_STATUS,
         a2a_labels.LIST_ARTIFACTS)


def list_reply(ex: Exchange) -> Reply:
    """A ListTasks result with a `tasks` array, or why there is none."""
    if lost := no_answer(ex, "ListTasks"):
        return Reply(ex, lost=lost)
    ans = Answer.of(ex)
    if ans.problem or ans.error is not None:
        return Reply(ex, wrong=f"ListTasks ({ex.label}) was not answered with a list: {ans.describe()}")
    if not isinstance(ans.result, dict) or not isinstance(ans.result.get("tasks"), list):
        return Reply(ex, wrong=f"ListTasks ({ex.label}) result has no tasks array: {dump(ans.result)}")
    return Reply(ex, ans.result)


@dataclass
class TaskLists:
    """The tasks the scenario made in one context, and each ListTasks answer (by label) about them."""

    lists: dict[str, Reply]  # the labels of LISTS the log holds, in that order
    sent: list[tuple[str, dict[str, Any]]]  # (label, task) of send_1… that returned a task with an id
    context_id: str | None
    scripts: list[Any]  # the scenario's scripts, send_N ↔ scripts[N-1]
    after: Reply | None = None  # list_after, filtered by statusTimestampAfter
    plays_artifacts: bool = True  # the test agent plays the scripts' `artifact` steps (protocols/script.py plays)

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> TaskLists:
        lists = {label: list_reply(ex) for label in LISTS if (ex := log.get(label)) is not None}
        if not lists:
            stopped = _why_not_listed(log)
            raise Unjudgeable(*stopped) if stopped else Unjudgeable()
        # by statusTimestampAfter: judged by A2A-TASK-013 only (a server may refuse the filter without breaking the others)
        after = list_reply(ex) if (ex := log.get(a2a_labels.LIST_AFTER)) is not None else None
        sent = []
        for ex in log.exchanges:
            if ex.label.startswith(a2a_labels.SEND_PREFIX) and ex.label[len(a2a_labels.SEND_PREFIX):].isdigit():
                task = task_of(Answer.of(ex).result)
                if task is not None and isinstance(task.get("id"), str):
                    sent.append((ex.label, task))
        context = log.notes.get(CONTEXT_ID)
        if not isinstance(context, str):
            context = sent[0][1].get("contextId") if sent else None
        scripts = (ctx.scenario.data.get("scripts") if ctx.scenario else None) or []
        return cls(lists, sent, context, scripts, after, plays(log.notes, "artifact"))

    @property
    def sent_ids(self) -> list[str]:
        return [t["id"] for _, t in self.sent]

    def expected_artifacts(self) -> dict[str, tuple[list, str]]:
        """task id -> (artifactIds it should carry, where that comes from): the SendMessage result, else
        the artifact steps of the script of that send."""
        out: dict[str, tuple[list, str]] = {}
        for label, t in self.sent:
            ids = sorted(a.get("artifactId") for a in t.get("artifacts") or [] if isinstance(a, dict))
            if ids:
                out[t["id"]] = (ids, f"{label} returned it with")
                continue
            if not self.plays_artifacts:  # an agent that does not play `artifact` makes none the script names
                continue
            n, scripts = int(label[len(a2a_labels.SEND_PREFIX):]), self.scripts
            steps = scripts[n - 1].get("steps", []) if 0 < n <= len(scripts) and isinstance(scripts[n - 1], dict) \
                else []
            ids = sorted(s["artifact"].get("artifactId") for s in steps
                         if isinstance(s, dict) and isinstance(s.get("artifact"), dict))
            if ids:
                out[t["id"]] = (ids, f"its script ({label}) produces")
        return out


def _why_not_listed(log: FrameLog) -> tuple[str, list[dict[str, Any]]] | None:
    """Why the driver asked ListTasks nothing, when a SendMessage that made the tasks is why: it got no answer, or
    its answer holds no task with a contextId to list by (the driver reads the context of each task it made). None
    when the driver never got to SendMessage (no card: said elsewhere)."""
    sent = [ex for ex in log.exchanges
            if ex.label.startswith(a2a_labels.SEND_PREFIX) and ex.label[len(a2a_labels.SEND_PREFIX):].isdigit()]
    if not sent:
        return None
    ex = sent[-1]
    if lost := no_answer(ex, "SendMessage"):
        return f"ListTasks was not asked: {lost}", [ex_evidence(ex)]
    ans = Answer.of(ex)
    task = task_of(ans.result) if ans.error is None and not ans.problem else None
    if task is not None and isinstance(task.get("contextId"), str) and task["contextId"]:
        return None
    seen = f"a task without contextId: {dump(task)}" if task is not None else ans.describe()
    if task is not None and (other := next((k for k in task if k != "contextId" and a2a.folded(k) == "contextid"),
                                           None)):
        seen += f" (it carries {other}: ProtoJSON writes contextId, WIRE-010)"
    return (f"ListTasks was not asked: {ex.label} (SendMessage) returned {seen}, so the context to list by is "
            f"not known", [ex_evidence(ex)])


def _ids(tasks: list[Any]) -> list[Any]:
    return [t.get("id") if isinstance(t, dict) else None for t in tasks]


def _parse_ts(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        return None


# An RFC 3339 date-time, read to the nanosecond: a Python datetime keeps microseconds, and a filter compared
# at a coarser precision than the server's would call a later task equal.
_INSTANT = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})")


def instant(value: Any) -> int | None:
    """A timestamp as nanoseconds since the epoch (None when it is not an RFC 3339 date-time)."""
    found = _INSTANT.fullmatch(value) if isinstance(value, str) else None
    if not found:
        return None
    whole, fraction, zone = found.groups()
    try:
        moment = datetime.fromisoformat(whole + ("+00:00" if zone in "Zz" else zone))
    except ValueError:
        return None
    return int(moment.timestamp()) * 10**9 + int((fraction or "").ljust(9, "0"))


def _status_ts(task: dict[str, Any]) -> Any:
    status = task.get("status")
    return status.get("timestamp") if isinstance(status, dict) else None


def _token(page: dict[str, Any]) -> str:
    return dump(page["nextPageToken"]) if "nextPageToken" in page else "missing"


# -- the rules ------------------------------------------------------------------------------------------

@rule("A2A-TASK-005", view=TaskLists)
def list_response(v: TaskLists, out: Verdict) -> None:
    if (reply := v.lists.get(a2a_labels.LIST_CONTEXT)) is None or reply.explain(out):
        return
    result = reply.value
    problems = []
    if not isinstance(result.get("nextPageToken"), str):
        problems.append("nextPageToken is " + ("missing" if "nextPageToken" not in result
                                               else f"not a string: {dump(result['nextPageToken'])}"))
    for key in ("pageSize", "totalSize"):
        value = result.get(key)
        if key not in result:
            problems.append(f"{key} is missing")
        elif not isinstance(value, int) or isinstance(value, bool):
            problems.append(f"{key} is not an integer: {dump(value)}")
    listed = set(_ids(result["tasks"]))
    problems += [f"task {t['id']} (from {label}) is not listed" for label, t in v.sent if t["id"] not in listed]
    if problems:
        out.failed("ListTasks by contextId: " + "; ".join(problems), reply.evidence)
    else:
        out.passed(f"ListTasks returned the {len(listed)} task(s) with tasks, nextPageToken, pageSize and totalSize")


@rule("A2A-TASK-006", view=TaskLists)
def newest_first(v: TaskLists, out: Verdict) -> None:
    if (reply := v.lists.get(a2a_labels.LIST_CONTEXT)) is None or reply.explain(out):
        return
    tasks = [t for t in reply.value["tasks"] if isinstance(t, dict)]
    if len(tasks) < 2:
        return  # nothing to order
    stamps = []
    for t in tasks:
        status = t.get("status") if isinstance(t.get("status"), dict) else {}
        stamps.append((t.get("id"), status.get("timestamp"), _parse_ts(status.get("timestamp"))))
    if unjudged := [(tid, raw) for tid, raw, parsed in stamps if parsed is None]:
        what = ", ".join(f"{tid} ({'no timestamp' if raw is None else repr(raw)})" for tid, raw in unjudged)
        out.non_strict(f"cannot judge the order: task(s) without a parseable status.timestamp: {what} (the "
                       f"timestamp is optional, and the order is by it)", reply.evidence,
                       reading="order judged only when every listed task has a status timestamp")
        return
    for (a, ra, pa), (b, rb, pb) in itertools.pairwise(stamps):
        if pb > pa:
            order = ", ".join(f"{tid} @ {raw}" for tid, raw, _ in stamps)
            out.failed(f"task {b} (status {rb}) is listed after the older task {a} (status {ra}), not newest first; "
                       f"listed: {order}", reply.evidence)
            return
    out.passed(f"the {len(tasks)} listed tasks are newest first by status.timestamp")


@rule("A2A-TASK-007", view=TaskLists)
def artifacts_on_request(v: TaskLists, out: Verdict) -> None:
    problems: list[tuple[str, Exchange]] = []
    empty_lists: list[str] = []
    expected = v.expected_artifacts()
    for label, reply in v.lists.items():
        if reply.wrong:
            problems.append((reply.wrong, reply.ex))
        if reply.value is None:
            continue
        for t in reply.value["tasks"]:
            if not isinstance(t, dict):
                continue
            arts = t.get("artifacts")
            if label != a2a_labels.LIST_ARTIFACTS:
                if arts == []:
                    empty_lists.append(f"{label}: {t.get('id')}")
                elif arts is not None:
                    problems.append((f"{label} (no includeArtifacts) carries artifacts for task {t.get('id')}: "
                                     f"{dump(arts, 120)}", reply.ex))
                continue
            want, source = expected.get(t.get("id"), ([], ""))
            have = sorted(a.get("artifactId") for a in arts or [] if isinstance(a, dict))
            if want and want != have:
                problems.append((f"list_artifacts (includeArtifacts: true) gives task {t.get('id')} artifacts "
                                 f"{have}, but {source} {want}", reply.ex))
    if problems:
        out.failed("; ".join(p for p, _ in problems), evidence_of(problems))
    elif lost := next((r for r in v.lists.values() if r.lost), None):
        lost.explain(out)
    else:
        reading = ("artifacts field absent" if not empty_lists
                   else f"artifacts as an empty array read as omitted ({', '.join(empty_lists[:3])})")
        out.passed(f"artifacts omitted without includeArtifacts and present with it ({', '.join(v.lists)})",
                   reading=reading)


@rule("A2A-TASK-008", view=TaskLists)
def paging(v: TaskLists, out: Verdict) -> None:
    if (first := v.lists.get(a2a_labels.LIST_PAGE1)) is None or first.explain(out):
        return
    second, whole = v.lists.get(a2a_labels.LIST_PAGE2), v.lists.get(a2a_labels.LIST_CONTEXT)
    page1, ex1 = first.value, first.ex
    problems: list[tuple[str, Exchange]] = []
    sent = v.sent_ids
    tok1 = page1.get("nextPageToken")
    if len(page1["tasks"]) > 2:
        problems.append((f"list_page1 (pageSize 2) returned {len(page1['tasks'])} tasks", ex1))
    if not isinstance(tok1, str) or not tok1:
        problems.append((f"list_page1 has nextPageToken {_token(page1)} although {len(sent)} tasks do not fit a "
                         f"page of 2", ex1))
    pages = [(page1, ex1)]
    if second is not None:
        if second.lost:
            second.explain(out)
            return
        if second.wrong:
            problems.append((second.wrong, second.ex))
        else:
            page2 = second.value
            pages.append((page2, second.ex))
            if len(page2["tasks"]) > 2:
                problems.append((f"list_page2 (pageSize 2) returned {len(page2['tasks'])} tasks", second.ex))
            if page2.get("nextPageToken") != "":
                problems.append((f"the last page (list_page2) has nextPageToken {_token(page2)}, not \"\"",
                                 second.ex))
    elif isinstance(tok1, str) and tok1 and not problems:
        return  # the driver did not get to page 2
    if len(pages) == 2:
        seen = _ids(page1["tasks"]) + _ids(pages[1][0]["tasks"])
        if dups := sorted({tid for tid in seen if seen.count(tid) > 1}, key=str):
            problems.append((f"tasks listed on both pages: {dups}", second.ex))
        if missing := [tid for tid in sent if tid not in seen]:
            problems.append((f"page 1 + page 2 lack task(s) {missing}", second.ex))
    for page, ex in pages:
        total = page.get("totalSize")
        if isinstance(total, int) and sent and total != len(sent):
            problems.append((f"{ex.label} has totalSize {total}, but the context holds {len(sent)} tasks", ex))
    if whole is not None and (listed := whole.value) is not None and "nextPageToken" in listed \
            and listed["nextPageToken"] != "" and len(listed["tasks"]) >= len(sent):
        problems.append((f"list_context returned every task on one page but nextPageToken "
                         f"{dump(listed['nextPageToken'])}, not \"\"", whole.ex))
    if problems:
        out.failed("; ".join(p for p, _ in problems), evidence_of(problems))
    else:
        sizes = " + ".join(str(len(p["tasks"])) for p, _ in pages)
        out.passed(f"pageSize 2 honoured ({sizes} tasks, no duplicates, all {len(sent)} tasks), nextPageToken on "
                   f"every page and \"\" on the last")


@rule("A2A-TASK-009", view=TaskLists)
def filters(v: TaskLists, out: Verdict) -> None:
    by_context, by_status = v.lists.get(a2a_labels.LIST_CONTEXT), v.lists.get(a2a_labels.LIST_STATUS)
    if by_context is None and by_status is None:
        return
    context, sent_ids = v.context_id, v.sent_ids
    states = {t["id"]: state_of(t) for _, t in v.sent}
    problems: list[tuple[str, Exchange]] = []
    if by_context is not None and by_context.wrong:
        problems.append((by_context.wrong, by_context.ex))
    elif by_context is not None and by_context.value is not None:
        tasks = [t for t in by_context.value["tasks"] if isinstance(t, dict)]
        if strangers := [t.get("id") for t in tasks if context and t.get("contextId") != context]:
            problems.append((f"ListTasks by contextId {context} returned task(s) of another context: {strangers}",
                             by_context.ex))
        if missing := [tid for tid in sent_ids if tid not in _ids(tasks)]:
            problems.append((f"ListTasks by contextId {context} lacks task(s) {missing}", by_context.ex))
        for t in tasks:  # the list's states are the current ones
            if t.get("id") in states and state_of(t):
                states[t["id"]] = state_of(t)
    if by_status is not None and by_status.wrong:
        problems.append((by_status.wrong, by_status.ex))
    elif by_status is not None and by_status.value is not None:
        tasks = by_status.value["tasks"]
        wrong = [(t.get("id"), state_of(t)) for t in tasks if isinstance(t, dict)
                 and (state_of(t) != a2a.FAILED or (context and t.get("contextId") != context))]
        if wrong:
            problems.append((f"ListTasks by status {a2a.FAILED} returned {dump(wrong)}", by_status.ex))
        want = [tid for tid in sent_ids if states.get(tid) == a2a.FAILED]
        if missing := [tid for tid in want if tid not in _ids(tasks)]:
            problems.append((f"ListTasks by status {a2a.FAILED} lacks the failed task(s) {missing}", by_status.ex))
    if problems:
        out.failed("; ".join(p for p, _ in problems), evidence_of(problems))
    elif lost := next((r for r in (by_context, by_status) if r and r.lost), None):
        lost.explain(out)
    else:
        failed = [tid for tid in sent_ids if states.get(tid) == a2a.FAILED]
        out.passed(f"contextId filter gave exactly the context's {len(sent_ids)} task(s); status filter "
                   f"{a2a.FAILED} gave exactly {failed or 'none'}")


@rule("A2A-TASK-013", view=TaskLists)
def status_timestamp_after(v: TaskLists, out: Verdict) -> None:
    if v.after is None:
        return  # the driver found no status timestamp to filter by
    if (whole := v.lists.get(a2a_labels.LIST_CONTEXT)) is None or whole.explain(out) or v.after.explain(out):
        return
    params = v.after.ex.params
    pivot = params.get("statusTimestampAfter") if isinstance(params, dict) else None
    at = instant(pivot)
    if at is None:
        return
    # what the context holds and when, as list_context showed it (a task without a timestamp is not judged)
    stamps = {t.get("id"): _status_ts(t) for t in whole.value["tasks"] if isinstance(t, dict)}
    known = {tid: ns for tid, raw in stamps.items() if (ns := instant(raw)) is not None}
    got = _ids(v.after.value["tasks"])
    problems = []
    if missing := [tid for tid, ns in known.items() if ns >= at and tid not in got]:
        equal = [tid for tid in missing if known[tid] == at]
        said = f" (stamped exactly {pivot}: the filter is not inclusive)" if equal else ""
        problems.append(f"lacks task(s) {missing} whose status timestamp is at or after it{said}")
    if early := [f"{tid} ({stamps[tid]})" for tid in got if tid in known and known[tid] < at]:
        problems.append(f"lists task(s) stamped before it: {early}")
    if strangers := [tid for tid in got if tid not in stamps]:
        problems.append(f"lists task(s) {strangers} that the context's list does not hold")
    if problems:
        out.failed(f"ListTasks with statusTimestampAfter {pivot} (list_after) " + "; ".join(problems),
                   evidence_of([("", whole.ex), ("", v.after.ex)]))
    else:
        kept = [tid for tid in got if tid in known]
        exact = sum(known[tid] == at for tid in kept)
        out.passed(f"statusTimestampAfter {pivot} kept exactly the {len(kept)} task(s) stamped at or after it "
                   f"({exact} stamped exactly then), none earlier")


# -- A2A-TASK-017: a filter named by its proto field name (§5.5, §5.7) ------------------------------------


@rule("A2A-TASK-017", view=Run)
def proto_name_filter(run: Run, out: Verdict) -> None:
    ex, other_ex = run.get(a2a_labels.LIST_PROTO_NAME), run.get(a2a_labels.SEND_OTHER)
    if ex is None or other_ex is None:
        return  # the driver says why it did not ask (gRPC, or no task in another context)
    params = ex.params if isinstance(ex.params, dict) else {}
    context = params.get("context_id")
    other = task_of(Answer.of(other_ex).result) if not no_answer(other_ex, "SendMessage") else None
    other_id = other.get("id") if isinstance(other, dict) else None
    what = f"ListTasks {{\"context_id\": {dump(context)}}} (contextId by its proto field name)"
    if (ans := answer_or_error(ex, what, out)) is None:
        return
    if ans.error is not None:
        if ans.code == a2a.INVALID_PARAMS:
            out.passed(f"{what} was refused with {ans.describe()}", reading="refused as invalid params")
        else:
            out.warning(f"{what} was refused with {ans.describe()}; a request the server will not read is "
                        f"InvalidParams (-32602)", [ex_evidence(ex)])
        return
    tasks = ans.result.get("tasks") if isinstance(ans.result, dict) else None
    if not isinstance(tasks, list):
        out.error(f"{what}: the answer has no tasks array: {dump(ans.result)}", [ex_evidence(ex)])
        return
    strangers = [t.get("id") for t in tasks if isinstance(t, dict)
                 and (t.get("id") == other_id or ("contextId" in t and t.get("contextId") != context))]
    if strangers and ex.binding == bindings.HTTP_JSON:
        # Over HTTP+JSON ListTasks is a GET: the filter is a query parameter, not JSON, and §11.5 names query
        # parameters in camelCase only (its table maps context_id to contextId); ProtoJSON's leniency does not
        # reach a query string, so context_id is an unrecognized parameter, which §5.7 says to ignore.
        out.passed(f"{what} (a query parameter) listed {len(tasks)} task(s), {len(strangers)} of another context: "
                   f"the parameter was ignored, as §11.5 (query names are camelCase) and §5.7 (ignore what is "
                   f"unrecognized) allow", reading="a query parameter named context_id ignored (§11.5, §5.7)")
    elif strangers:
        out.warning(f"{what} listed {len(tasks)} task(s), {len(strangers)} of another context ({strangers[:3]}): "
                    f"the filter was silently ignored, so the listing spans every context. A ProtoJSON reader "
                    f"takes the proto name for the field; one that reads it as an unrecognized field may ignore "
                    f"it, but then the caller cannot tell its filter went unread", [ex_evidence(ex)])
    elif other_id is None:
        out.unsupported("no task in another context was made, so a filter ignored cannot be told from one applied")
    else:
        out.passed(f"{what} listed {len(tasks)} task(s), none of another context (the task {other_id} of "
                   f"another context is left out)", reading="read as contextId (ProtoJSON takes the proto name)")


# -- A2A-TASK-018: pageSize out of its bounds (a2a.proto ListTasksRequest; §6.5) ----------------------------
PAGE_SIZE_CASES = (a2a_labels.LIST_SIZE_OVER, a2a_labels.LIST_SIZE_UNDER)  # pageSize 150 and 0, in the scenario's context


def _page_size_check(ex: Exchange) -> tuple[bool | None, str, str | None]:
    """(ok: True/False, None for no answer; what was seen; the reading taken when served)."""
    asked = ex.params.get("pageSize") if isinstance(ex.params, dict) else None
    what = f"ListTasks with pageSize {asked}"
    if lost := no_answer(ex, what):
        return None, lost, None
    ans = Answer.of(ex)
    if ans.problem:
        return None, f"{what}: {ans.describe()}", None
    if ans.error is not None:
        if ans.code == a2a.INVALID_PARAMS:
            return True, f"{what} → refused, {ans.describe()}", "refused with InvalidParams (§6.5's example)"
        return False, f"{what} was refused with {ans.describe()}; expected InvalidParams (-32602)", None
    result = ans.result if isinstance(ans.result, dict) else {}
    tasks, used = result.get("tasks"), result.get("pageSize")
    if not isinstance(tasks, list):
        return False, f"{what} answered no tasks array: {dump(ans.result)}", None
    if len(tasks) > a2a.LIST_PAGE_SIZE_MAX:
        return False, f"{what} answered {len(tasks)} tasks on one page, more than {a2a.LIST_PAGE_SIZE_MAX}", None
    if isinstance(used, int) and not isinstance(used, bool) and not 1 <= used <= a2a.LIST_PAGE_SIZE_MAX:
        return False, (f"{what} was served with pageSize {used} in the answer (the page size used): outside 1 to "
                       f"{a2a.LIST_PAGE_SIZE_MAX}, so it was neither refused nor brought within bounds"), None
    said = f"pageSize {used}" if "pageSize" in result else "no pageSize"
    return True, f"{what} → served with {len(tasks)} task(s) and {said}", "served with a page size within 1 to 100"


@rule("A2A-TASK-018", view=Run)
def page_size_bounds(run: Run, out: Verdict) -> None:
    checks = [(ex, *_page_size_check(ex)) for label in PAGE_SIZE_CASES if (ex := run.get(label)) is not None]
    if not checks:
        return
    bad = [(ex, text) for ex, ok, text, _ in checks if ok is False]
    lost = [(ex, text) for ex, ok, text, _ in checks if ok is None]
    if bad:
        out.failed("; ".join(text for _, text in bad), [ex_evidence(ex) for ex, _ in bad])
    elif lost:
        out.error("; ".join(text for _, text in lost), [ex_evidence(ex) for ex, _ in lost])
    else:
        readings = "; ".join(dict.fromkeys(reading for *_, reading in checks if reading))
        out.passed("; ".join(text for _, _, text, _ in checks), reading=readings)
