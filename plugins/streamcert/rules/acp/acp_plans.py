"""ACP-PLAN-: plans over ACP stdio. The agent writes only whole JSON-RPC messages, one a line; it
serves the turn; its plans take the form its protocol version allows, are well shaped, and report
every state the script gave them.

What the rules read is in acpview.py (`AgentStdout`, `AcpTurn`).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from ...framelog import Event
from ...protocols import acp
from ...wire.jsonlines import Line
from .. import Verdict, Verdicts, quote, rule
from .acpview import AcpTurn, AgentStdout

# -- the stdio discipline --------------------------------------------------------------------------

def _not_a_message(v: AgentStdout, line: Line) -> str:
    what = ("a JSON-RPC batch array, which protocol v1 does not allow" if line.fault == "batch"
            else "not a JSON-RPC 2.0 message")
    return f"{quote(v.text(line), 160)!r}: {what}"


def _not_one_message(line: Line) -> str:
    return (f"one line holds {len(line.messages)} messages" if line.fault == "two-messages"
            else f"one message spans {line.joined} lines")


@rule("ACP-PLAN-001", "ACP-PLAN-002", view=AgentStdout)
def stdio_discipline(v: AgentStdout, out: Verdicts) -> None:
    junk = [ln for ln in v.lines if ln.fault in ("not-a-message", "batch")]
    deep = [ln for ln in v.lines if ln.fault == "too-deep"]
    if out["ACP-PLAN-001"].fail_each("stdout line(s) are not an ACP message",
                                     [(_not_a_message(v, ln), v.evidence(ln)) for ln in junk]):
        pass
    elif deep:
        out["ACP-PLAN-001"].error(f"{len(deep)} stdout line(s) nested deeper than the suite's JSON reader goes "
                                  "(RFC 8259 §9 lets a parser limit nesting): not judged",
                                  [v.evidence(ln) for ln in deep[:1]])
    else:
        out["ACP-PLAN-001"].passed(f"{len(v.lines)} stdout line(s), each a JSON-RPC message")
    several = [ln for ln in v.lines if ln.fault in ("two-messages", "split-message")]
    if out["ACP-PLAN-002"].fail_each("place(s) where a stdout line is not one whole message",
                                     [(_not_one_message(ln), v.evidence(ln)) for ln in several]):
        return
    if v.partial:
        out["ACP-PLAN-002"].failed(f"the last output {quote(v.partial, 160)!r} has no line end; expected every "
                                   "message to end with \\n")
    else:
        out["ACP-PLAN-002"].passed()


# -- the turn itself -------------------------------------------------------------------------------

@rule("ACP-PLAN-003", view=AcpTurn)
def turn_served(v: AcpTurn, out: Verdict) -> None:
    problems: list[tuple[str, Event | None]] = []
    unanswered: list[str] = []  # requests with no answer: the agent's fault only if it was not stopped at a limit
    ev, init = v.answer("initialize")
    if "error" in init:
        problems.append((f"initialize was refused: {quote(json.dumps(init['error']), 200)}", ev))
    elif not isinstance(v.version, int) or isinstance(v.version, bool):
        problems.append((f"initialize answered protocolVersion {v.version!r}, not an integer", ev))
    new = v.answer("session/new")
    if "session/new" in v.sent:
        if new is None:
            unanswered.append("session/new was never answered")
        elif not isinstance(v.session_id, str):
            problems.append((f"session/new answered without a string sessionId: {quote(json.dumps(new[1]), 200)}",
                             new[0]))
    prompt = v.answer("session/prompt")
    if "session/prompt" in v.sent:
        if prompt is None:
            unanswered.append("session/prompt was never answered")
        else:
            result, error = prompt[1].get("result"), prompt[1].get("error")
            reason = result.get("stopReason") if isinstance(result, dict) else None
            # A turn that ends in error (the script's `fail`, a step the agent cannot play) is answered
            # with a JSON-RPC error object: that is an answer too.
            refused = (isinstance(error, dict) and isinstance(error.get("code"), int)
                       and isinstance(error.get("message"), str))
            if reason not in acp.STOP_REASONS and not refused:
                problems.append((f"session/prompt answered {quote(json.dumps(prompt[1]), 200)}: neither a "
                                 f"stopReason ({', '.join(acp.STOP_REASONS)}) nor a JSON-RPC error", prompt[0]))
    sid = v.session_id
    for ev_u, msg in v.notes:
        if msg.get("method") == "session/update" and isinstance(sid, str):
            got = (msg.get("params") or {}).get("sessionId")
            if got != sid:
                problems.append((f"a session/update names session {got!r}, the session is {sid!r}", ev_u))
                break
    if unanswered and not problems and v.cut:  # stopped at a limit of the suite's: nothing refused, nothing judged
        out.error(f"{unanswered[0]}: the agent {v.ended}")
        return
    problems += [(f"{what}: the agent {v.ended}", None) for what in unanswered]
    if problems:
        more = f"; {len(problems) - 1} more" if len(problems) > 1 else ""
        # Some problems have no line to show (an answer that never came): the first three that do.
        out.failed(problems[0][0] + more, [v.evidence(w) for _, w in problems[:3] if w is not None])
    else:
        out.passed(f"protocolVersion {v.version}, session {sid}, {len(v.updates())} session/update notification(s)")


# -- which form plans take -------------------------------------------------------------------------

@rule("ACP-PLAN-010", view=AcpTurn)
def v1_gate(v: AcpTurn, out: Verdict) -> None:
    if v.version != 1:
        return
    if v.capable:
        out.passed("the client advertised clientCapabilities.plan: plan_update/plan_removed allowed")
        return
    unstable = [(ev, u) for ev, u in v.plan_updates() if u.get("sessionUpdate") != acp.PLAN]
    if not out.fail_each("plan_update/plan_removed update(s) sent to a client that did not advertise "
                         "clientCapabilities.plan (expected the `plan` form)",
                         [(str(u.get("sessionUpdate")), v.evidence(ev)) for ev, u in unstable]):
        out.passed("no capability advertised; plans sent only as `plan`")


@rule("ACP-PLAN-020", view=AcpTurn)
def v2_form(v: AcpTurn, out: Verdict) -> None:
    if v.version != 2:
        return
    old = [(ev, u) for ev, u in v.plan_updates() if u.get("sessionUpdate") == acp.PLAN]
    if out.fail_each("`plan` update(s) from a protocol v2 agent, a form v2 removed (expected plan_update)",
                     [(quote(ev.data, 200), v.evidence(ev)) for ev, _ in old]):
        return
    if v.plan_updates():
        out.passed(f"{len(v.plan_updates())} plan update(s), none in the v1 `plan` form")


# -- the shape of plans ----------------------------------------------------------------------------

@rule("ACP-PLAN-021", view=AcpTurn)
def plan_identity(v: AcpTurn, out: Verdict) -> None:
    plans = v.plan_objects()
    if not plans:
        return
    bad = []
    for ev, plan in plans:
        if not isinstance(plan, dict):
            bad.append((ev, "no plan object"))
            continue
        missing = [k for k in ("type", "planId") if not isinstance(plan.get(k), str) or not plan.get(k)]
        if missing:
            bad.append((ev, f"plan without a string {' and '.join(missing)} (type {plan.get('type')!r})"))
    if not out.fail_each("plan_update(s) that do not name their plan (a non-empty string type and planId)",
                         [(f"{why}: {quote(ev.data, 200)}", v.evidence(ev, why)) for ev, why in bad]):
        out.passed(f"{len(plans)} plan_update(s), each with type and planId")


@rule("ACP-PLAN-022", view=AcpTurn)
def entry_fields(v: AcpTurn, out: Verdict) -> None:
    lists = v.entry_lists()
    if not lists:
        return
    bad = []
    for ev, entries in lists:
        if not isinstance(entries, list):
            bad.append((ev, f"entries is {type(entries).__name__}, not an array"))
            continue
        for e in entries:
            if not isinstance(e, dict):
                bad.append((ev, f"entry {e!r} is not an object"))
                break
            missing = [k for k in ("content", "priority", "status") if k not in e]
            if missing or not isinstance(e.get("content"), str):
                bad.append((ev, f"entry {quote(json.dumps(e), 120)} lacks {', '.join(missing) or 'a string content'}"))
                break
    if not out.fail_each("entry list(s) that are not an array of entries with a string content, a priority and "
                         "a status", [(why, v.evidence(ev, why)) for ev, why in bad]):
        out.passed(f"{len(lists)} entry list(s), every entry with content, priority, status")


def _allowed(value: Any, listed: tuple[str, ...]) -> bool:
    """Listed, or a custom value: `_` and at least one more character."""
    return isinstance(value, str) and (value in listed or (value.startswith("_") and len(value) > 1))


def _unlisted(v: AcpTurn, out: Verdict, what: str, values: list[tuple[Event, Any]], listed: tuple[str, ...], *,
              field: str, listed_for: str = "") -> bool:
    """FAIL for the values of `what` that are neither listed nor custom, each line's evidence noting
    `field` and the value; whether there was one."""
    bad = [(f"{what} {x!r}", v.evidence(ev, f"{field} {x!r}")) for ev, x in values if not _allowed(x, listed)]
    return out.fail_each(f"{what} value(s) neither listed{listed_for} ({', '.join(listed)}) nor custom (beginning "
                         "with _)", bad)


def _seen(values: list[tuple[Event, Any]]) -> str:
    return ", ".join(sorted({str(x) for _, x in values}))


@rule("ACP-PLAN-023", view=AcpTurn)
def entry_status(v: AcpTurn, out: Verdict) -> None:
    listed = acp.STATUSES.get(v.version, acp.STATUSES[acp.LATEST])
    values = v.entry_values("status")
    if values and not _unlisted(v, out, "status", values, listed, field="status",
                                listed_for=f" for protocol v{v.version}"):
        out.passed(f"statuses seen: {_seen(values)}")


@rule("ACP-PLAN-024", view=AcpTurn)
def entry_priority(v: AcpTurn, out: Verdict) -> None:
    values = v.entry_values("priority")
    if values and not _unlisted(v, out, "priority", values, acp.PRIORITIES, field="priority"):
        out.passed(f"priorities seen: {_seen(values)}")


@rule("ACP-PLAN-025", view=AcpTurn)
def plan_type(v: AcpTurn, out: Verdict) -> None:
    types = [(ev, p.get("type")) for ev, p in v.plan_objects() if isinstance(p, dict) and "type" in p]
    if types and not _unlisted(v, out, "plan type", types, acp.PLAN_TYPES, field="type"):
        out.passed(f"plan types seen: {_seen(types)}")


def _absolute(uri: Any) -> bool:
    if not isinstance(uri, str):
        return False
    parts = urlsplit(uri)
    if not parts.scheme:
        return False
    return parts.path.startswith("/") if parts.scheme.lower() == "file" else True


@rule("ACP-PLAN-026", view=AcpTurn)
def file_uri(v: AcpTurn, out: Verdict) -> None:
    files = [(ev, p.get("uri")) for ev, p in v.plan_objects() if isinstance(p, dict) and p.get("type") == "file"]
    if not files:
        return
    if not out.fail_each("file plan uri(s) that are not absolute",
                         [(repr(u), v.evidence(ev)) for ev, u in files if not _absolute(u)],
                         reading="an RFC 3986 absolute URI, with an absolute path for file:"):
        out.passed(f"file plan uri(s): {', '.join(str(u) for _, u in files)}")


# -- against the script ----------------------------------------------------------------------------

def _script_plans(steps: list[Any]) -> tuple[dict[str, list[list[tuple]]], list[list[tuple]]]:
    """(item states by planId, states of the one v1 `plan`) the script gave."""
    states: dict[str, list[list[tuple]]] = {}
    single: list[list[tuple]] = []
    for step in steps:
        if not isinstance(step, dict):
            continue
        if isinstance(step.get("acp_plan"), dict):
            plan = step["acp_plan"]
            if plan.get("type", "items") == "items":
                state = _normal(plan.get("entries"))
                states.setdefault(plan.get("planId"), []).append(state)
                single.append(state)
        elif "acp_plan_removed" in step and step["acp_plan_removed"] in states:
            single.append([])
    return states, single


def _normal(entries: Any) -> list[tuple]:
    """An entry list as the completeness check compares it: content, priority and current status, in order."""
    return [(e.get("content"), e.get("priority"), e.get("status")) if isinstance(e, dict) else (repr(e), None, None)
            for e in (entries if isinstance(entries, list) else [])]


def _is_state(got: list[tuple], want: list[tuple]) -> bool:
    """Whether `got` is the plan state `want`: every entry's content and status, and its priority where the
    script gave one (an agent may fill in a priority the script left out)."""
    return len(got) == len(want) and all(
        g[0] == w[0] and g[2] == w[2] and (w[1] is None or g[1] == w[1]) for g, w in zip(got, want))


@rule("ACP-PLAN-027", view=AcpTurn)
def complete_lists(v: AcpTurn, out: Verdict) -> None:
    states, single = _script_plans(v.steps)
    if not states:
        return
    judged, bad = 0, []
    for ev, u in v.plan_updates():
        kind = u.get("sessionUpdate")
        if kind == acp.PLAN:
            want, got = single, _normal(u.get("entries"))
        elif kind == acp.PLAN_UPDATE and isinstance(u.get("plan"), dict) and u["plan"].get("type") == "items":
            pid = u["plan"].get("planId")
            if pid not in states:
                continue  # no planId (ACP-PLAN-021) or a plan the script did not make
            want, got = states[pid], _normal(u["plan"].get("entries"))
        else:
            continue
        judged += 1
        if not any(_is_state(got, state) for state in want):
            subset = any({e[0] for e in got} < {e[0] for e in s} for s in want)
            why = ("a partial list (a diff?)" if subset else "a list the script never gave")
            bad.append((ev, f"{why}: {len(got)} entr(ies) {quote(json.dumps(got), 160)}"))
    if not judged:
        return
    if bad:
        out.failed(f"{len(bad)} of {judged} update(s) are not a complete state of their plan; the first: {bad[0][1]}; "
                   "expected every entry with its current status in each update",
                   [v.evidence(e, why) for e, why in bad[:3]],
                   reading="each update equals one state the script gave that plan (content, priority, status, order)")
    else:
        out.passed(f"{judged} update(s), each a complete state of its plan")


@rule("ACP-PLAN-028", view=AcpTurn)
def removal_known(v: AcpTurn, out: Verdict) -> None:
    live: set[str] = set()  # sent by plan_update earlier in the session, not removed since
    judged, bad = 0, []
    for ev, u in v.plan_updates():
        kind = u.get("sessionUpdate")
        if kind == acp.PLAN_UPDATE and isinstance(u.get("plan"), dict) and isinstance(u["plan"].get("planId"), str):
            live.add(u["plan"]["planId"])
        elif kind == acp.PLAN_REMOVED:
            judged += 1
            pid = u.get("planId")
            if not isinstance(pid, str) or pid not in live:
                bad.append((ev, f"plan_removed names {pid!r}; plans reported and not removed: {sorted(live) or 'none'}"))
            else:
                live.discard(pid)
    if not judged:
        return
    if not out.fail_each("plan_removed update(s) naming a plan never reported or removed already",
                         [(why, v.evidence(ev, why)) for ev, why in bad],
                         reading="a plan that exists = sent by plan_update earlier in this session, not yet removed"):
        out.passed(f"{judged} plan_removed, each naming a live plan")


def _expected_reports(v: AcpTurn) -> tuple[list[str], dict[str, int], dict[str, list[Any]]]:
    """The script's plans (those this version can express), how many states each had, their contents."""
    stable = v.version == 1 and not v.capable
    order: list[str] = []
    wanted: dict[str, int] = {}
    contents: dict[str, list[Any]] = {}
    for step in v.steps:
        plan = step.get("acp_plan") if isinstance(step, dict) else None
        if not isinstance(plan, dict):
            continue
        if stable and plan.get("type", "items") != "items":
            continue  # the v1 `plan` form carries item plans only
        pid = plan.get("planId")
        if pid not in wanted:
            order.append(pid)
        wanted[pid] = wanted.get(pid, 0) + 1
        contents.setdefault(pid, []).extend(e.get("content") for e in plan.get("entries") or []
                                            if isinstance(e, dict))
    return order, wanted, contents


def _reports(v: AcpTurn, order: list[str], contents: dict[str, list[Any]]) -> dict[str, int]:
    """How many updates reported each of the script's plans (a v1 `plan` counts for the plans whose
    entries it shows)."""
    counts = {pid: 0 for pid in order}
    for _, u in v.plan_updates():
        kind = u.get("sessionUpdate")
        if kind == acp.PLAN_UPDATE and isinstance(u.get("plan"), dict) and u["plan"].get("planId") in counts:
            counts[u["plan"]["planId"]] += 1
        elif kind == acp.PLAN and u.get("entries"):
            got = {e.get("content") for e in u["entries"] if isinstance(e, dict)}
            for pid in counts:
                if got & set(contents.get(pid, [])):
                    counts[pid] += 1
    return counts


@rule("ACP-PLAN-030", "ACP-PLAN-031", view=AcpTurn)
def plans_reported(v: AcpTurn, out: Verdicts) -> None:
    order, wanted, contents = _expected_reports(v)
    if not order:
        return
    counts = _reports(v, order, contents)
    unseen = [pid for pid in order if counts[pid] == 0]
    if unseen:
        out["ACP-PLAN-030"].non_strict(f"the script's plan(s) {unseen} were never reported; expected a plan_update "
                                       "for every plan the model creates", measured={"reports": counts})
    else:
        out["ACP-PLAN-030"].passed(f"every plan reported: {counts}")
    short = {pid: (counts[pid], wanted[pid]) for pid in order if 0 < counts[pid] < wanted[pid]}
    if short:
        out["ACP-PLAN-031"].non_strict(f"plan(s) reported fewer times than the script updated them (sent, script): "
                                       f"{short}; expected an update under the same planId for each change",
                                       measured={"reports": counts})
    elif any(counts[pid] for pid in order):
        out["ACP-PLAN-031"].passed(f"updates per plan: {counts}")
