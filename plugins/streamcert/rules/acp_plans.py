"""ACP-PLAN-: plans over ACP stdio (seed 002 for protocol v2; specs/acp-plans.md for v1 and the
transport). Pure on the frame log of scenarios/acp.py: the lines the suite wrote and the agent's
stdout lines. Timing is not judged.

The version judged is the one the agent answered in initialize; the client's plan capability is
read from the initialize line the suite wrote.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .. import acp
from ..framelog import Event, Exchange, FrameLog
from ..outcomes import Finding, Outcome
from . import ev_evidence, fail, ok, outcome, quote, rule

SEED = "002_034580650a13edf0.txt"
SPEC = "specs/acp-plans.md"


@dataclass
class Turn:
    """What one agent run shows, read from the log."""

    ex: Exchange
    lines: list[acp.Line]
    requested: int | None = None
    capable: bool = False
    version: Any = None  # protocolVersion the agent answered
    answers: dict[Any, tuple[Event, dict]] = field(default_factory=dict)  # request id → response
    sent: dict[str, dict] = field(default_factory=dict)  # method → request the suite wrote
    notes: list[tuple[Event, dict]] = field(default_factory=list)  # (line, message) agent→client notifications

    def answer(self, method: str) -> tuple[Event, dict] | None:
        req = self.sent.get(method)
        return self.answers.get(req.get("id")) if req else None

    @property
    def session_id(self) -> Any:
        got = self.answer("session/new")
        return ((got[1].get("result") or {}).get("sessionId")) if got else None

    def updates(self) -> list[tuple[Event, dict]]:
        """(line, update) of every session/update notification, in order."""
        out = []
        for ev, msg in self.notes:
            params = msg.get("params")
            if msg.get("method") == "session/update" and isinstance(params, dict):
                upd = params.get("update")
                out.append((ev, upd if isinstance(upd, dict) else {}))
        return out

    def plan_updates(self) -> list[tuple[Event, dict]]:
        return [(ev, u) for ev, u in self.updates() if u.get("sessionUpdate") in acp.PLAN_KINDS]


def read_turn(log: FrameLog) -> Turn | None:
    ex = log.get("agent")
    if ex is None:
        return None
    turn = Turn(ex=ex, lines=[])
    for raw in ex.request_body or []:
        try:
            msg = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            continue
        if isinstance(msg, dict) and isinstance(msg.get("method"), str) and "id" in msg:
            turn.sent.setdefault(msg["method"], msg)
    init = turn.sent.get("initialize", {}).get("params") or {}
    turn.requested = init.get("protocolVersion")
    turn.capable = isinstance((init.get("clientCapabilities") or {}).get("plan"), dict)
    for line in acp.read_lines([e.data for e in ex.events]):
        ev = ex.events[line.index]
        for msg in line.messages:
            if isinstance(msg.get("method"), str):
                if "id" not in msg:
                    turn.notes.append((ev, msg))
            else:
                turn.answers.setdefault(msg.get("id"), (ev, msg))
    got = turn.answer("initialize")
    if got:
        turn.version = (got[1].get("result") or {}).get("protocolVersion")
    # Batch arrays are messages from v2 on; judge the lines again once the version is known.
    turn.lines = acp.read_lines([e.data for e in ex.events], batches=turn.version != 1)
    return turn


def _no_answer(turn: Turn, ids: tuple[str, ...]) -> list[Finding]:
    """ERROR for every ID when the agent never answered initialize (nothing it speaks is known)."""
    why = turn.ex.error or turn.ex.notes.get("stderr", "")[-300:] or "no answer to initialize"
    return [Finding(r, Outcome.ERROR, f"the agent did not answer initialize: {quote(why, 300)}") for r in ids]


def _gate(log: FrameLog, ids: tuple[str, ...]) -> tuple[Turn | None, list[Finding]]:
    turn = read_turn(log)
    if turn is None:
        return None, []
    if turn.answer("initialize") is None:
        return None, _no_answer(turn, ids)
    return turn, []


def _ev(turn: Turn, ev: Event, note: str = "") -> dict[str, Any]:
    return ev_evidence(turn.ex, ev, note)


# -- the stdio discipline --------------------------------------------------------------------------

@rule("ACP-PLAN-001", "ACP-PLAN-002")
def stdio_discipline(log: FrameLog, ctx) -> list[Finding]:
    turn = read_turn(log)
    if turn is None or (not turn.ex.events and not turn.ex.notes.get("partial_line")):
        if turn is not None:
            return [Finding(r, Outcome.ERROR, "the agent wrote nothing on stdout") for r in
                    ("ACP-PLAN-001", "ACP-PLAN-002")]
        return []
    out: list[Finding] = []
    junk = [ln for ln in turn.lines if ln.fault in ("not-a-message", "batch")]
    if junk:
        what = ("a JSON-RPC batch array, which protocol v1 does not allow (\"Messages are individual JSON-RPC "
                "requests, notifications, or responses\")" if junk[0].fault == "batch" else "not a JSON-RPC 2.0 message")
        out.append(fail("ACP-PLAN-001", f"{len(junk)} stdout line(s) are not a valid ACP message, first "
                        f"{quote(turn.ex.events[junk[0].index].data, 160)!r}: {what}; ACP transports · stdio: "
                        "\"The agent MUST NOT write anything to its stdout that is not a valid ACP message.\"",
                        [_ev(turn, turn.ex.events[ln.index]) for ln in junk[:3]]))
    else:
        out.append(ok("ACP-PLAN-001", f"{len(turn.lines)} stdout line(s), each a JSON-RPC message"))
    several = [ln for ln in turn.lines if ln.fault in ("two-messages", "split-message")]
    partial = turn.ex.notes.get("partial_line")
    if several:
        first = several[0]
        what = (f"one line holds {len(first.messages)} messages" if first.fault == "two-messages"
                else f"one message spans {first.joined} lines")
        out.append(fail("ACP-PLAN-002", f"{what} ({len(several)} such place(s)); ACP transports · stdio: "
                        "\"Messages are delimited by newlines (\\n), and MUST NOT contain embedded newlines.\"",
                        [_ev(turn, turn.ex.events[ln.index]) for ln in several[:3]]))
    elif partial:
        out.append(fail("ACP-PLAN-002", f"the last output {quote(partial, 160)!r} has no line end "
                        f"({SPEC} · Transport: messages are delimited by \\n)"))
    else:
        out.append(ok("ACP-PLAN-002"))
    return out


# -- the turn itself -------------------------------------------------------------------------------

@rule("ACP-PLAN-003")
def turn_served(log: FrameLog, ctx) -> list[Finding]:
    rid = "ACP-PLAN-003"
    turn, errs = _gate(log, (rid,))
    if turn is None:
        return errs
    problems: list[tuple[str, Event | None]] = []
    ev, init = turn.answer("initialize")
    if "error" in init:
        problems.append((f"initialize was refused: {quote(json.dumps(init['error']), 200)}", ev))
    elif not isinstance(turn.version, int) or isinstance(turn.version, bool):
        problems.append((f"initialize answered protocolVersion {turn.version!r}, not an integer", ev))
    new = turn.answer("session/new")
    if "session/new" in turn.sent:
        if new is None:
            problems.append(("session/new was never answered", None))
        elif not isinstance(turn.session_id, str):
            problems.append((f"session/new answered without a string sessionId: "
                             f"{quote(json.dumps(new[1]), 200)}", new[0]))
    prompt = turn.answer("session/prompt")
    if "session/prompt" in turn.sent:
        if prompt is None:
            problems.append((f"session/prompt was not answered within the stream limit "
                             f"({log.notes.get('stream_limit_s')} s)", None))
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
    sid = turn.session_id
    for ev_u, msg in turn.notes:
        if msg.get("method") == "session/update" and isinstance(sid, str):
            got = (msg.get("params") or {}).get("sessionId")
            if got != sid:
                problems.append((f"a session/update names session {got!r}, the session is {sid!r}", ev_u))
                break
    if problems:
        text, where = problems[0]
        return [fail(rid, f"{text} ({SPEC} · Transport)" + (f"; {len(problems) - 1} more" if len(problems) > 1
                                                              else ""),
                     [_ev(turn, w) for _, w in problems[:3] if w is not None])]
    return [ok(rid, f"protocolVersion {turn.version}, session {sid}, "
                    f"{len(turn.updates())} session/update notification(s)")]


# -- which form plans take -------------------------------------------------------------------------

@rule("ACP-PLAN-010")
def v1_gate(log: FrameLog, ctx) -> list[Finding]:
    rid = "ACP-PLAN-010"
    turn, errs = _gate(log, (rid,))
    if turn is None or turn.version != 1:
        return errs
    unstable = [(ev, u) for ev, u in turn.plan_updates() if u.get("sessionUpdate") != acp.PLAN]
    if turn.capable:
        return [ok(rid, "the client advertised clientCapabilities.plan: plan_update/plan_removed allowed")]
    if unstable:
        ev, u = unstable[0]
        return [fail(rid, f"the client did not advertise clientCapabilities.plan, yet the agent sent "
                          f"{u.get('sessionUpdate')} ({len(unstable)} such update(s)); {SPEC} · Three plan "
                          "forms: v1 unstable plan operations only if the client advertised the capability, "
                          "else fall back to `plan`", [_ev(turn, e) for e, _ in unstable[:3]])]
    return [ok(rid, "no capability advertised; plans sent only as `plan`")]


@rule("ACP-PLAN-020")
def v2_form(log: FrameLog, ctx) -> list[Finding]:
    rid = "ACP-PLAN-020"
    turn, errs = _gate(log, (rid,))
    if turn is None or turn.version != 2:
        return errs
    old = [(ev, u) for ev, u in turn.plan_updates() if u.get("sessionUpdate") == acp.PLAN]
    if old:
        return [fail(rid, f"protocol v2 agent sent {len(old)} `plan` update(s), first "
                          f"{quote(old[0][0].data, 200)}; {SEED} · Updating Plans (the plan_update structure) "
                          f"and {SPEC} · Three plan forms (v2: the plan form is removed)",
                     [_ev(turn, e) for e, _ in old[:3]])]
    if not turn.plan_updates():
        return []
    return [ok(rid, f"{len(turn.plan_updates())} plan update(s), none in the v1 `plan` form")]


# -- the shape of plans ----------------------------------------------------------------------------

def _plan_objects(turn: Turn) -> list[tuple[Event, Any]]:
    return [(ev, u.get("plan")) for ev, u in turn.plan_updates() if u.get("sessionUpdate") == acp.PLAN_UPDATE]


def _entry_lists(turn: Turn) -> list[tuple[Event, Any]]:
    """Entry lists of every items plan_update and every v1 `plan` update."""
    out = []
    for ev, u in turn.plan_updates():
        kind = u.get("sessionUpdate")
        if kind == acp.PLAN:
            out.append((ev, u.get("entries")))
        elif kind == acp.PLAN_UPDATE and isinstance(u.get("plan"), dict) and u["plan"].get("type") == "items":
            out.append((ev, u["plan"].get("entries")))
    return out


@rule("ACP-PLAN-021")
def plan_identity(log: FrameLog, ctx) -> list[Finding]:
    rid = "ACP-PLAN-021"
    turn, errs = _gate(log, (rid,))
    if turn is None:
        return errs
    plans = _plan_objects(turn)
    if not plans:
        return []
    bad = []
    for ev, plan in plans:
        if not isinstance(plan, dict):
            bad.append((ev, "no plan object"))
            continue
        missing = [k for k in ("type", "planId") if not isinstance(plan.get(k), str) or not plan.get(k)]
        if missing:
            bad.append((ev, f"plan without a string {' and '.join(missing)} (type {plan.get('type')!r})"))
    if bad:
        return [fail(rid, f"{bad[0][1]}: {quote(bad[0][0].data, 200)} ({len(bad)} update(s)); {SEED} · "
                          "Extensibility: \"Every plan content variant, including custom or future variants, MUST "
                          "carry a planId.\"", [_ev(turn, e, why) for e, why in bad[:3]])]
    return [ok(rid, f"{len(plans)} plan_update(s), each with type and planId")]


@rule("ACP-PLAN-022")
def entry_fields(log: FrameLog, ctx) -> list[Finding]:
    rid = "ACP-PLAN-022"
    turn, errs = _gate(log, (rid,))
    if turn is None:
        return errs
    lists = _entry_lists(turn)
    if not lists:
        return []
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
                bad.append((ev, f"entry {quote(json.dumps(e), 120)} lacks "
                                f"{', '.join(missing) or 'a string content'}"))
                break
    if bad:
        return [fail(rid, f"{bad[0][1]} ({len(bad)} update(s)); {SEED} · Plan Entries: content, priority and "
                          "status are required", [_ev(turn, e, why) for e, why in bad[:3]])]
    return [ok(rid, f"{len(lists)} entry list(s), every entry with content, priority, status")]


def _values(turn: Turn, key: str) -> list[tuple[Event, Any]]:
    out = []
    for ev, entries in _entry_lists(turn):
        for e in entries if isinstance(entries, list) else []:
            if isinstance(e, dict) and key in e:
                out.append((ev, e[key]))
    return out


def _allowed(value: Any, listed: tuple[str, ...]) -> bool:
    return isinstance(value, str) and (value in listed or (value.startswith("_") and len(value) > 1))


@rule("ACP-PLAN-023")
def entry_status(log: FrameLog, ctx) -> list[Finding]:
    rid = "ACP-PLAN-023"
    turn, errs = _gate(log, (rid,))
    if turn is None:
        return errs
    listed = acp.STATUSES.get(turn.version, acp.STATUSES[acp.LATEST])
    values = _values(turn, "status")
    if not values:
        return []
    bad = [(ev, v) for ev, v in values if not _allowed(v, listed)]
    if bad:
        return [fail(rid, f"status {bad[0][1]!r} is neither listed for protocol v{turn.version} "
                          f"({', '.join(listed)}) nor a custom value beginning with _; {SEED} · Plan Entries: "
                          "\"Custom statuses MUST begin with _; unknown non-underscore statuses are reserved for "
                          "future ACP variants.\"", [_ev(turn, e, f"status {v!r}") for e, v in bad[:3]])]
    return [ok(rid, f"statuses seen: {', '.join(sorted({str(v) for _, v in values}))}")]


@rule("ACP-PLAN-024")
def entry_priority(log: FrameLog, ctx) -> list[Finding]:
    rid = "ACP-PLAN-024"
    turn, errs = _gate(log, (rid,))
    if turn is None:
        return errs
    values = _values(turn, "priority")
    if not values:
        return []
    bad = [(ev, v) for ev, v in values if not _allowed(v, acp.PRIORITIES)]
    if bad:
        return [fail(rid, f"priority {bad[0][1]!r} is neither high, medium, low nor a custom value beginning "
                          f"with _; {SEED} · Plan Entries: \"Custom priorities MUST begin with _; unknown "
                          "non-underscore priorities are reserved for future ACP variants.\"",
                     [_ev(turn, e, f"priority {v!r}") for e, v in bad[:3]])]
    return [ok(rid, f"priorities seen: {', '.join(sorted({str(v) for _, v in values}))}")]


@rule("ACP-PLAN-025")
def plan_type(log: FrameLog, ctx) -> list[Finding]:
    rid = "ACP-PLAN-025"
    turn, errs = _gate(log, (rid,))
    if turn is None:
        return errs
    types = [(ev, p.get("type")) for ev, p in _plan_objects(turn) if isinstance(p, dict) and "type" in p]
    if not types:
        return []
    bad = [(ev, t) for ev, t in types if not _allowed(t, acp.PLAN_TYPES)]
    if bad:
        return [fail(rid, f"plan type {bad[0][1]!r} is neither items, markdown, file nor a custom type beginning "
                          f"with _; {SEED} · Extensibility: \"Custom plan content types MUST begin with _; unknown "
                          "non-underscore plan content types are reserved for future ACP variants.\"",
                     [_ev(turn, e, f"type {t!r}") for e, t in bad[:3]])]
    return [ok(rid, f"plan types seen: {', '.join(sorted({str(t) for _, t in types}))}")]


def _absolute(uri: Any) -> bool:
    if not isinstance(uri, str):
        return False
    parts = urlsplit(uri)
    if not parts.scheme:
        return False
    return parts.path.startswith("/") if parts.scheme.lower() == "file" else True


@rule("ACP-PLAN-026")
def file_uri(log: FrameLog, ctx) -> list[Finding]:
    rid = "ACP-PLAN-026"
    turn, errs = _gate(log, (rid,))
    if turn is None:
        return errs
    files = [(ev, p.get("uri")) for ev, p in _plan_objects(turn) if isinstance(p, dict) and p.get("type") == "file"]
    if not files:
        return []
    bad = [(ev, u) for ev, u in files if not _absolute(u)]
    if bad:
        return [fail(rid, f"file plan uri {bad[0][1]!r} is not absolute; {SEED} · File Plans: \"Plan file URIs "
                          "MUST be absolute.\"", [_ev(turn, e) for e, _ in bad[:3]],
                     reading="an RFC 3986 absolute URI, with an absolute path for file:")]
    return [ok(rid, f"file plan uri(s): {', '.join(str(u) for _, u in files)}")]


# -- against the script ----------------------------------------------------------------------------

def _script_plans(ctx) -> tuple[dict[str, list[list[tuple]]], list[str], list[list[tuple]]]:
    """(item states by planId, planIds in order of creation, states of the one v1 `plan`)."""
    steps = ((ctx.script or {}).get("steps") or []) if ctx is not None else []
    states: dict[str, list[list[tuple]]] = {}
    order: list[str] = []
    single: list[list[tuple]] = []
    for step in steps:
        if not isinstance(step, dict):
            continue
        if isinstance(step.get("acp_plan"), dict):
            plan = step["acp_plan"]
            pid = plan.get("planId")
            if pid not in order:
                order.append(pid)
            if plan.get("type", "items") == "items":
                state = _normal(plan.get("entries"))
                states.setdefault(pid, []).append(state)
                single.append(state)
        elif "acp_plan_removed" in step and step["acp_plan_removed"] in states:
            single.append([])
    return states, order, single


def _normal(entries: Any) -> list[tuple]:
    """An entry list as the completeness check compares it: content and current status, in order."""
    return [(e.get("content"), e.get("status")) if isinstance(e, dict) else (repr(e), None)
            for e in (entries if isinstance(entries, list) else [])]


@rule("ACP-PLAN-027")
def complete_lists(log: FrameLog, ctx) -> list[Finding]:
    rid = "ACP-PLAN-027"
    turn, errs = _gate(log, (rid,))
    if turn is None:
        return errs
    states, _, single = _script_plans(ctx)
    if not states:
        return []
    judged, bad = 0, []
    for ev, u in turn.plan_updates():
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
        if got not in want:
            subset = any(set(got) < set(s) for s in want) or any(
                {c for c, _ in got} < {c for c, _ in s} for s in want)
            why = ("a partial list (a diff?)" if subset else "a list the script never gave")
            bad.append((ev, f"{why}: {len(got)} entr(ies) {quote(json.dumps(got), 160)}"))
    if not judged:
        return []
    if bad:
        return [fail(rid, f"{bad[0][1]}; {len(bad)} of {judged} update(s) are not a complete state of their "
                          f"plan; {SEED} · Updating Plans: \"the Agent MUST send a complete list of all plan "
                          "entries in each update and their current status\"",
                     [_ev(turn, e, why) for e, why in bad[:3]],
                     reading="each update equals one state the script gave that plan (content, status, order)")]
    return [ok(rid, f"{judged} update(s), each a complete state of its plan")]


@rule("ACP-PLAN-028")
def removal_known(log: FrameLog, ctx) -> list[Finding]:
    rid = "ACP-PLAN-028"
    turn, errs = _gate(log, (rid,))
    if turn is None:
        return errs
    live: set[str] = set()
    judged, bad = 0, []
    for ev, u in turn.plan_updates():
        kind = u.get("sessionUpdate")
        if kind == acp.PLAN_UPDATE and isinstance(u.get("plan"), dict) and isinstance(u["plan"].get("planId"), str):
            live.add(u["plan"]["planId"])
        elif kind == acp.PLAN_REMOVED:
            judged += 1
            pid = u.get("planId")
            if not isinstance(pid, str) or pid not in live:
                bad.append((ev, f"plan_removed names {pid!r}; plans reported and not removed: "
                                f"{sorted(live) or 'none'}"))
            else:
                live.discard(pid)
    if not judged:
        return []
    if bad:
        return [fail(rid, f"{bad[0][1]}; {SEED} · Removing Plans (\"sending plan_removed with the plan ID\" of a "
                          "plan the agent shared)", [_ev(turn, e, why) for e, why in bad[:3]],
                     reading="a plan that exists = sent by plan_update earlier in this session, not yet removed")]
    return [ok(rid, f"{judged} plan_removed, each naming a live plan")]


def _reports(turn: Turn, order: list[str], contents: dict[str, list[Any]]) -> dict[str, int]:
    """How many updates reported each of the script's plans (a v1 `plan` counts for the plans whose
    entries it shows)."""
    counts = {pid: 0 for pid in order}
    for _, u in turn.plan_updates():
        kind = u.get("sessionUpdate")
        if kind == acp.PLAN_UPDATE and isinstance(u.get("plan"), dict) and u["plan"].get("planId") in counts:
            counts[u["plan"]["planId"]] += 1
        elif kind == acp.PLAN and u.get("entries"):
            got = {e.get("content") for e in u["entries"] if isinstance(e, dict)}
            for pid in counts:
                if got & set(contents.get(pid, [])):
                    counts[pid] += 1
    return counts


def _expected_reports(ctx, turn: Turn) -> tuple[list[str], dict[str, int], dict[str, list[Any]]]:
    """The script's plans (those this version can express), how many states each had, their contents."""
    steps = ((ctx.script or {}).get("steps") or []) if ctx is not None else []
    stable = turn.version == 1 and not turn.capable
    order: list[str] = []
    wanted: dict[str, int] = {}
    contents: dict[str, list[Any]] = {}
    for step in steps:
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


@rule("ACP-PLAN-030", "ACP-PLAN-031")
def plans_reported(log: FrameLog, ctx) -> list[Finding]:
    turn, errs = _gate(log, ("ACP-PLAN-030", "ACP-PLAN-031"))
    if turn is None:
        return errs
    order, wanted, contents = _expected_reports(ctx, turn)
    if not order:
        return []
    counts = _reports(turn, order, contents)
    out = []
    unseen = [pid for pid in order if counts[pid] == 0]
    if unseen:
        out.append(outcome("ACP-PLAN-030", Outcome.NON_STRICT,
                           f"the script's plan(s) {unseen} were never reported ({SEED} · Creating Plans: the Agent "
                           "SHOULD report it to the Client with plan_update)", measured={"reports": counts}))
    else:
        out.append(ok("ACP-PLAN-030", f"every plan reported: {counts}"))
    short = {pid: (counts[pid], wanted[pid]) for pid in order if 0 < counts[pid] < wanted[pid]}
    if short:
        out.append(outcome("ACP-PLAN-031", Outcome.NON_STRICT,
                           "plan(s) reported fewer times than the script updated them (sent, script): "
                           f"{short}; {SEED} · Updating Plans: it SHOULD report updates by sending more "
                           "session/update notifications with the same planId", measured={"reports": counts}))
    elif any(counts[pid] for pid in order):
        out.append(ok("ACP-PLAN-031", f"updates per plan: {counts}"))
    return out
