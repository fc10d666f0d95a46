"""CLIENT-ACP-: what an ACP client shows of the plans the suite's agent reported (drivers/acp_client.py).

    AcpClientRun  the client's final view (`plans` by planId, the v1 plan under ""), the session the
                  suite's agent recorded (what the client was sent, in order), the case's expected view

Each requirement compares its part of the view with the expected one, written from the text:
CLIENT-ACP-001 the item plans whose values are all listed for the version (whole replacement, the v1
plan as the one plan), CLIENT-ACP-002 the markdown, file and custom plans and the entries with values
the client cannot know (and, in such a case, the rest of the view), CLIENT-ACP-003 the plans the agent
removed. Values are compared as JSON values; a field absent from an expected plan is not compared.

No view (the client crashed, hung or printed no JSON object; it never started the agent, or never sent
the prompt) makes every requirement of the case ERROR, saying how the client ended. A session in
another protocol version than the case's, or (v1) with or without clientCapabilities.plan against the
case's context, makes them UNSUPPORTED: the plans then took another form than the case is about.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...contract.acp import ACP_CLIENT_CASE, ENDED
from ...contract.capture import PARTIAL_LINE
from ...contract.labels.acp import AGENT, CLIENT
from ...framelog import END_CLOSED, END_ERROR, Event, Exchange, FrameLog
from ...outcomes import Outcome
from ...protocols import acp
from ...wire.stdio import how_it_ended
from .. import RuleContext, Unjudgeable, Verdict, ev_evidence, quote, rule
from ..acp.acpview import AcpTurn
from ..client.printed import final_view

V1_PLAN = ""  # the view's key of the v1 plan, which has no planId
Entry = tuple[Any, Any, Any]  # (content, priority, status)


@dataclass
class Sent:
    """One plan update the agent sent: its line, and the plan's state after it (None: removed)."""

    ev: Event
    state: dict[str, Any] | None


@dataclass
class AcpClientRun:
    client: Exchange
    view_text: str  # the stdout the view was read from
    plans: dict[str, Any]  # what the client shows, by planId
    expected: dict[str, Any]  # what it should show, by planId
    agent: Exchange
    turn: AcpTurn
    sent: dict[str, list[Sent]] = field(default_factory=dict)  # by planId ("" the v1 plan), in order
    unsupported: str | None = None  # why the case's requirements cannot be judged on this session
    cut_short: str = ""  # said in findings when the client ended the turn before the prompt was answered

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> AcpClientRun:
        client = log.get(CLIENT)
        if client is None:
            raise Unjudgeable()
        if client.end == END_ERROR:
            raise Unjudgeable(f"the client could not be started: {client.error}")
        agent = log.get(AGENT)
        turn = AcpTurn.read(agent) if agent is not None else None
        prompt = turn.answer("session/prompt") if turn is not None else None
        if prompt is not None and "error" in prompt[1]:  # the script could not be played: the suite's fault
            raise Unjudgeable(f"the suite's agent could not play the case's script: "
                              f"{quote(json.dumps(prompt[1]['error']), 300)}")
        view = final_view(client, partial=client.end == END_CLOSED)
        if view.value is None:
            raise Unjudgeable(f"the client printed no final view (a JSON object on stdout): it {how_it_ended(client)}",
                              [_stdout_evidence(client)])
        text, obj = view.text, view.value
        if not isinstance(obj.get("plans"), dict):
            raise Unjudgeable(f"the client's final view has no `plans` object: {quote(text, 200)!r}",
                              [_stdout_evidence(client)])
        if agent is None or turn is None:
            raise Unjudgeable("the client never started the suite's agent (STREAMCERT_AGENT_CMD): no plan was sent "
                              f"to it; the client {how_it_ended(client)}")
        if turn.answer("initialize") is None:
            raise Unjudgeable(f"the client started the suite's agent but no session began ({_asked(turn)}); the "
                              f"agent {agent.notes.get(ENDED, 'ended')}")
        if "session/prompt" not in turn.sent:
            raise Unjudgeable(f"the client never sent session/prompt to the suite's agent ({_asked(turn)}): no plan "
                              "was played")
        case = log.notes.get(ACP_CLIENT_CASE) or {}
        expected = (case.get("expected") or (ctx.scenario.data.get("expected") if ctx.scenario else None) or {})
        run = cls(client=client, view_text=text, plans=obj["plans"], expected=dict(expected.get("plans") or {}),
                  agent=agent, turn=turn)
        run.sent = _sent(turn)
        run.unsupported = _unsupported(turn, case.get("context") or {})
        if prompt is None:
            run.cut_short = (" (the client ended the agent before the prompt was answered: the script was not "
                             "played to its end)")
        return run

    # -- what the plans are ---------------------------------------------------------------------------
    @property
    def version(self) -> Any:
        return self.turn.version

    def listed(self, key: str, value: Any) -> bool:
        """Whether a status or priority value is listed for the session's protocol version."""
        values = acp.STATUSES.get(self.version, acp.STATUSES[acp.LATEST]) if key == "status" else acp.PRIORITIES
        return value in values

    def is_items(self, plan: dict[str, Any]) -> bool:
        """An item plan (the v1 plan has no type)."""
        return plan.get("type", "items") == "items" and isinstance(plan.get("entries"), list)

    def is_plain(self, plan: dict[str, Any]) -> bool:
        """An item plan whose every status and priority is listed: CLIENT-ACP-001's."""
        return self.is_items(plan) and all(
            isinstance(e, dict) and self.listed("status", e.get("status")) and self.listed("priority", e.get("priority"))
            for e in plan["entries"])

    def removed(self) -> dict[str, Sent]:
        """The plans whose last update removed them (plan_removed; for the v1 plan, an empty one), with it."""
        return {key: sent[-1] for key, sent in self.sent.items() if sent and sent[-1].state is None}

    # -- evidence ---------------------------------------------------------------------------------------
    def view_evidence(self, key: str | None = None) -> dict[str, Any]:
        shown = self.plans.get(key) if key is not None else self.plans
        note = f"plans[{key!r}]" if key is not None else "plans"
        return {"exchange": self.client.label, "note": note, "data": quote(json.dumps(shown, ensure_ascii=False), 400)}

    def last_sent(self, key: str, note: str = "") -> list[dict[str, Any]]:
        """The agent's line that last updated plan `key`, as evidence (none if it never did)."""
        sent = self.sent.get(key)
        return [ev_evidence(self.agent, sent[-1].ev, note)] if sent else []

    def line_of(self, key: str) -> str:
        sent = self.sent.get(key)
        return f"the agent's line {sent[-1].ev.index + 1}" if sent else "no update the agent sent"


def _stdout_evidence(ex: Exchange) -> dict[str, Any]:
    tail = "\n".join(ev.data for ev in ex.events[-5:]) + str(ex.notes.get(PARTIAL_LINE) or "")
    return {"exchange": ex.label, "note": f"{len(ex.events)} stdout line(s); the last", "data": quote(tail, 400)}


def _asked(turn: AcpTurn) -> str:
    return f"the client sent {', '.join(turn.sent) or 'no request'}"


def _sent(turn: AcpTurn) -> dict[str, list[Sent]]:
    """Every plan update the agent sent, by the key the view shows it under."""
    out: dict[str, list[Sent]] = {}
    for ev, u in turn.plan_updates():
        kind = u.get("sessionUpdate")
        if kind == acp.PLAN:
            entries = u.get("entries")
            out.setdefault(V1_PLAN, []).append(Sent(ev, {"entries": entries} if entries else None))
        elif kind == acp.PLAN_UPDATE and isinstance(u.get("plan"), dict) and isinstance(u["plan"].get("planId"), str):
            out.setdefault(u["plan"]["planId"], []).append(Sent(ev, u["plan"]))
        elif kind == acp.PLAN_REMOVED and isinstance(u.get("planId"), str):
            out.setdefault(u["planId"], []).append(Sent(ev, None))
    return out


def _unsupported(turn: AcpTurn, context: dict[str, Any]) -> str | None:
    """Why the session is not the one the case is about (another version; in v1, another plan capability)."""
    want = context.get("protocolVersion")
    if want is not None and turn.version != want:
        return (f"the case needs ACP protocol version {want}; the session ran in version {turn.version!r} (the client "
                f"asked {turn.requested!r})")
    capable = bool(context.get("plan_capability"))
    if want == 1 and turn.capable != capable:
        did = "advertised it" if turn.capable else "did not advertise it"
        return (f"the case needs a v1 client {'with' if capable else 'without'} clientCapabilities.plan; the client "
                f"{did}, so the plans took the other form")
    return None


# -- comparing a plan ----------------------------------------------------------------------------------

def _entry(e: Any) -> Entry:
    return (e.get("content"), e.get("priority"), e.get("status")) if isinstance(e, dict) else (repr(e), None, None)


def _same_entry(v: AcpClientRun, got: Entry, want: Entry, generic: list[str]) -> bool:
    """Whether a shown entry is the entry sent: its content, and each value as sent, or null where the value
    is not listed for the version (a generic plan-entry state; noted in `generic`)."""
    if got[0] != want[0]:
        return False
    for name, g, w in (("priority", got[1], want[1]), ("status", got[2], want[2])):
        if g != w:
            if g is None and not v.listed(name, w):
                generic.append(f"{want[0]!r} {name} {w!r} shown as null")
                continue
            return False
    return True


def _matched(v: AcpClientRun, got: list[Entry], want: list[Entry], generic: list[str]) -> bool:
    """Whether every entry sent is shown once and nothing else, in any order."""
    left = list(got)
    for w in want:
        hit = next((i for i, g in enumerate(left) if _same_entry(v, g, w, generic)), None)
        if hit is None:
            return False
        left.pop(hit)
    return not left


def _show(entries: list[Entry]) -> str:
    return quote(json.dumps([list(e) for e in entries], ensure_ascii=False), 240)


@dataclass
class Compared:
    """How a shown plan compares with the expected one: `problem` (a failure), or `order` (the same entries
    in another order: NON_STRICT), `notes` (readings taken: values shown as null, a variant ignored)."""

    problem: str = ""
    order: str = ""
    notes: list[str] = field(default_factory=list)


def compare(v: AcpClientRun, key: str, want: dict[str, Any]) -> Compared:
    shown = v.plans.get(key)
    if key not in v.plans:
        return Compared(problem=f"plan {key!r} is not shown; expected it as {v.line_of(key)} left it{v.cut_short}")
    if not isinstance(shown, dict):
        return Compared(problem=f"plan {key!r} is shown as {quote(json.dumps(shown), 120)}, not a plan object")
    for name, value in want.items():
        if name != "entries" and shown.get(name) != value:
            return Compared(problem=f"plan {key!r} shows {name} {quote(json.dumps(shown.get(name)), 160)}; "
                                    f"expected {quote(json.dumps(value), 160)} as {v.line_of(key)} sent it")
    if "entries" not in want:
        return Compared()
    if not isinstance(shown.get("entries"), list):
        return Compared(problem=f"plan {key!r} shows no entries array: {quote(json.dumps(shown), 160)}")
    got, exp = [_entry(e) for e in shown["entries"]], [_entry(e) for e in want["entries"]]
    generic: list[str] = []
    if len(got) == len(exp) and all(_same_entry(v, g, w, generic) for g, w in zip(got, exp)):
        return Compared(notes=generic)
    generic = []
    if _matched(v, got, exp, generic):
        return Compared(order=f"plan {key!r} shows the entries sent in another order: {_show(got)}; sent "
                              f"{_show(exp)}", notes=generic)
    return Compared(problem=_entries_problem(v, key, got, exp))


def _entries_problem(v: AcpClientRun, key: str, got: list[Entry], exp: list[Entry]) -> str:
    """What is wrong with the entries shown, in a finding's words."""
    wanted = {e[0] for e in exp}
    extra = [e for e in got if e[0] not in wanted]
    missing = [e for e in exp if e[0] not in {g[0] for g in got}]
    earlier = {_entry(e)[0] for s in v.sent.get(key, [])[:-1] if s.state for e in s.state.get("entries") or []}
    parts = []
    if extra:
        kept = [e for e in extra if e[0] in earlier]
        parts.append(f"{len(extra)} entr(ies) not in that update" +
                     (f", {len(kept)} of them from an earlier update (merged rather than replaced?)" if kept else ""))
    if missing:
        unknown = [e for e in missing if not (v.listed("priority", e[1]) and v.listed("status", e[2]))]
        parts.append(f"{len(missing)} entr(ies) of that update missing" +
                     (f", {len(unknown)} of them with a value not listed for v{v.version} (dropped?)" if unknown else ""))
    if not parts:
        parts.append("entries with other values than sent")
    return (f"plan {key!r} shows {len(got)} entr(ies) {_show(got)}; {v.line_of(key)} sent {len(exp)}: {_show(exp)}: "
            f"{'; '.join(parts)}{v.cut_short}")


def _judge(out: Verdict, v: AcpClientRun, results: list[tuple[str, Compared]], what: str, passed: str) -> None:
    """One finding for the plans compared: FAIL for any problem, else NON_STRICT for entries in another
    order, else PASS; the readings taken are named."""
    bad = [(c.problem, key) for key, c in results if c.problem]
    if bad:
        out.failed(bad[0][0] if len(bad) == 1 else f"{len(bad)} {what}; the first: {bad[0][0]}",
                   [ev for _, key in bad[:3] for ev in _evidence(v, key)])
        return
    notes = [n for _, c in results for n in c.notes]
    reading = "; ".join(notes) or None
    order = [c.order for _, c in results if c.order]
    if order:
        out.non_strict(order[0] + ("" if len(order) == 1 else f"; {len(order) - 1} more"),
                       [ev for key, c in results if c.order for ev in _evidence(v, key)][:3],
                       reading="the same entries in another order than sent")
    elif results:
        out.passed(passed + (f" ({reading})" if reading else ""), reading=reading)


def _evidence(v: AcpClientRun, key: str) -> list[dict[str, Any]]:
    return [v.view_evidence(key), *v.last_sent(key, f"the last update of plan {key!r}")]


# -- the rules -----------------------------------------------------------------------------------------

@rule("CLIENT-ACP-001", view=AcpClientRun)
def replaced_whole(v: AcpClientRun, out: Verdict) -> None:
    if v.unsupported:
        out.unsupported(v.unsupported)
        return
    results = [(key, compare(v, key, want)) for key, want in v.expected.items()
               if isinstance(want, dict) and v.is_plain(want)]
    emptied = v.removed().get(V1_PLAN)
    if emptied is not None and V1_PLAN not in v.expected:  # an empty v1 plan: no entries to show
        shown = v.plans.get(V1_PLAN)
        entries = shown.get("entries") if isinstance(shown, dict) else None
        problem = "" if shown is None or entries == [] else (
            f"the v1 plan shows {quote(json.dumps(shown, ensure_ascii=False), 200)}; the latest v1 plan update "
            f"({v.line_of(V1_PLAN)}) had no entries{v.cut_short}")
        results.append((V1_PLAN, Compared(problem=problem)))
    for key in [key for key in v.plans if key not in v.expected and key not in v.sent]:
        what = "a v1 plan (sessionUpdate plan)" if key == V1_PLAN else "a plan of that id"
        results.append((key, Compared(problem=f"plan {key!r} is shown, but the agent never sent {what}; it sent "
                                              f"plans {sorted(v.sent) or 'none'} (the v1 plan is shown under \"\")")))
    _judge(out, v, results, "plan(s) not shown as their latest update sent them",
           f"{len(results)} plan(s) shown as their latest update sent them, whole")


@rule("CLIENT-ACP-002", view=AcpClientRun)
def tolerated(v: AcpClientRun, out: Verdict) -> None:
    if v.unsupported:
        out.unsupported(v.unsupported)
        return
    plans = {key: want for key, want in v.expected.items() if isinstance(want, dict)}
    if all(v.is_plain(want) for want in plans.values()):
        return  # no variant and no value the client cannot know: nothing for this requirement here
    results = []
    for key, want in plans.items():
        if not v.is_items(want) and key not in v.plans:
            results.append((key, Compared(notes=[f"{want.get('type')} plan {key!r} ignored"])))
        else:
            results.append((key, compare(v, key, want)))
    _judge(out, v, results, "plan(s) not tolerated as sent",
           f"{len(results)} plan(s): the variants and the entries with values not listed for v{v.version} "
           "tolerated, the rest shown as sent")


@rule("CLIENT-ACP-003", view=AcpClientRun)
def removed_dropped(v: AcpClientRun, out: Verdict) -> None:
    if v.unsupported:
        out.unsupported(v.unsupported)
        return
    removed = {key: sent for key, sent in v.removed().items() if key not in v.expected}
    if not removed:
        return
    bad = []
    for key, sent in removed.items():
        shown = v.plans.get(key)
        if key not in v.plans or (key == V1_PLAN and isinstance(shown, dict) and shown.get("entries") == []):
            continue
        how = "an empty v1 plan update" if key == V1_PLAN else "plan_removed"
        bad.append((f"plan {key!r} is still shown ({quote(json.dumps(shown, ensure_ascii=False), 160)}) after "
                    f"{how} (the agent's line {sent.ev.index + 1}){v.cut_short}",
                    [v.view_evidence(key), ev_evidence(v.agent, sent.ev, how)]))
    if bad:
        out.add(Outcome.NON_STRICT, bad[0][0] if len(bad) == 1 else
                f"{len(bad)} removed plan(s) still shown; the first: {bad[0][0]}",
                [ev for _, evs in bad[:3] for ev in evs])
    else:
        out.passed(f"{len(removed)} removed plan(s), none shown: {sorted(removed)}")
