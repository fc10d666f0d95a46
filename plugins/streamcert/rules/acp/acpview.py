"""What the ACP plan rules read (ACP-PLAN-): one agent run over stdio, from the frame log of
drivers/acp.py. Its exchange `agent` holds the lines the suite wrote (request body) and the
agent's stdout lines (events); timing is not judged.

    AgentStdout  the agent's stdout as lines of messages, and what it left without a line end
    AcpTurn      the turn an agent that answered initialize served: its answers, notifications and plans

The version judged is the one the agent answered in initialize; the client's plan capability is
read from the initialize line the suite wrote. A run the agent gave nothing to judge (no answer to
initialize, nothing on stdout) is ERROR, saying what it wrote and how it ended (it exited: the
status and its stderr; the suite stopped it: the limit).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ... import limits
from ...contract.capture import LIMIT, PARTIAL_LINE, PARTIAL_LINE_BYTES
from ...contract.labels.acp import AGENT
from ...contract.run import STREAM_LIMIT_S
from ...framelog import END_CLOSED, Event, Exchange, FrameLog
from ...protocols import acp
from ...wire.jsonlines import Line, read_lines
from ...wire.stdio import how_it_ended
from .. import RuleContext, Unjudgeable, ev_evidence, quote


@dataclass
class AcpTurn:
    """What one agent run shows: the requests the suite wrote, the agent's answers and notifications."""

    ex: Exchange
    lines: list[Line]
    requested: int | None = None
    capable: bool = False
    version: Any = None  # protocolVersion the agent answered
    answers: dict[Any, tuple[Event, dict]] = field(default_factory=dict)  # request id → response
    sent: dict[str, dict] = field(default_factory=dict)  # method → request the suite wrote
    notes: list[tuple[Event, dict]] = field(default_factory=list)  # (line, message) agent→client notifications
    steps: list[Any] = field(default_factory=list)  # the steps of the scenario's script
    stream_limit_s: Any = None  # how long the driver waited for the turn

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> AcpTurn:
        """The run of an agent that answered initialize. Without that answer nothing it speaks is
        known: every requirement read from the turn is ERROR."""
        ex = log.get(AGENT)
        if ex is None:
            raise Unjudgeable()
        turn = cls.read(ex)
        if turn.answer("initialize") is None:
            raise Unjudgeable(f"the agent did not answer initialize {_unanswered(ex)}")
        turn.steps = (ctx.script or {}).get("steps") or []
        turn.stream_limit_s = log.notes.get(STREAM_LIMIT_S)
        return turn

    @classmethod
    def read(cls, ex: Exchange) -> AcpTurn:
        """What the run shows, whether or not the agent answered initialize."""
        turn = cls(ex=ex, lines=[])
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
        for line in read_lines([e.data for e in ex.events]):
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
        turn.lines = read_lines([e.data for e in ex.events], batches=turn.version != 1)
        return turn

    def evidence(self, ev: Event, note: str = "") -> dict[str, Any]:
        return ev_evidence(self.ex, ev, note)

    @property
    def ended(self) -> str:
        """How the agent's run ended ("exited with status 3 after 0.2 s; stderr: '…'", "was cut at the
        per-exchange limit: …"), for a request it never answered."""
        return how_it_ended(self.ex)

    @property
    def cut(self) -> bool:
        """Whether the suite stopped the agent at a limit (then a request it did not answer is unjudged,
        not refused)."""
        return bool(self.ex.notes.get(LIMIT))

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
        """(line, update) of every update that carries a plan, in any of the three forms."""
        return [(ev, u) for ev, u in self.updates() if u.get("sessionUpdate") in acp.PLAN_KINDS]

    def plan_objects(self) -> list[tuple[Event, Any]]:
        """(line, plan) of every plan_update."""
        return [(ev, u.get("plan")) for ev, u in self.plan_updates() if u.get("sessionUpdate") == acp.PLAN_UPDATE]

    def entry_lists(self) -> list[tuple[Event, Any]]:
        """(line, entries) of every items plan_update and every v1 `plan` update."""
        out = []
        for ev, u in self.plan_updates():
            kind = u.get("sessionUpdate")
            if kind == acp.PLAN:
                out.append((ev, u.get("entries")))
            elif kind == acp.PLAN_UPDATE and isinstance(u.get("plan"), dict) and u["plan"].get("type") == "items":
                out.append((ev, u["plan"].get("entries")))
        return out

    def entry_values(self, key: str) -> list[tuple[Event, Any]]:
        """(line, value) of `key` in every entry that has it."""
        out = []
        for ev, entries in self.entry_lists():
            for e in entries if isinstance(entries, list) else []:
                if isinstance(e, dict) and key in e:
                    out.append((ev, e[key]))
        return out


@dataclass
class AgentStdout:
    """The agent's stdout as lines of messages (batch arrays are messages from protocol v2 on), and the
    last output if it had no line end."""

    ex: Exchange
    lines: list[Line]
    partial: str | None

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> AgentStdout:
        ex = log.get(AGENT)
        if ex is None:
            raise Unjudgeable()
        partial = ex.notes.get(PARTIAL_LINE)
        if not ex.events:
            what = f"no whole line ({_partial(ex)})" if partial else "nothing on stdout"
            raise Unjudgeable(f"the agent wrote {what} and {how_it_ended(ex)}")
        if ex.end != END_CLOSED:
            partial = None  # the suite stopped it: whether that line would have ended is not known
        return cls(ex, AcpTurn.read(ex).lines, partial)

    def evidence(self, line: Line) -> dict[str, Any]:
        return ev_evidence(self.ex, self.ex.events[line.index])

    def text(self, line: Line) -> str:
        return self.ex.events[line.index].data


def _partial(ex: Exchange) -> str:
    text = ex.notes[PARTIAL_LINE]
    cut = ex.notes.get(PARTIAL_LINE_BYTES)
    size = limits.show(cut, "bytes") if isinstance(cut, int) else f"{len(text)} character(s)"
    return f"{size} on stdout with no line end: {quote(text, 80)!r}"


def _unanswered(ex: Exchange) -> str:
    """What an agent that did not answer initialize wrote, and how its run ended."""
    if not ex.events:
        return f"({_partial(ex) if ex.notes.get(PARTIAL_LINE) else 'nothing on stdout'}) and {how_it_ended(ex)}"
    junk = ""
    for n, ev in enumerate(ex.events, 1):
        try:
            json.loads(ev.data)
        except ValueError:
            junk = f", line {n} not JSON: {quote(ev.data, 80)!r}"
            break
        except RecursionError:
            junk = f", line {n} nested too deep to read"
            break
    return f"({len(ex.events)} stdout line(s){junk}) and {how_it_ended(ex)}"
