"""What the plan rules read (PLAN-): the plan updates of the task stream, the update_plan calls and
tool results of the script, and the plans GetTask and ListTasks carry.

The driver (drivers/plans.py) writes: `stream` (the scripted task), `get_task`, `list_tasks`.
The script's `plan` steps are the update_plan calls; its `say` steps ("Rk: {{result}}") show the
tool result the model saw. Plan updates are put in order by status.timestamp (arrival breaks ties)
and an update delivered twice counts once, as progress/v1 tells a client to do.

    PlanUpdates  the plan updates of a stream that carried the whole turn, beside the script's calls
    PlansSeen    every plan the run showed, streamed or read back
    ReadBack     what GetTask and ListTasks carry, beside the latest plan streamed
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from ...contract.labels.a2a import GET_TASK, LIST_TASKS, STREAM
from ...framelog import Event, Exchange, FrameLog
from ...protocols import bindings
from ...protocols.progress_v1 import STATES, URI
from .. import RuleContext, Unjudgeable, answered, ev_evidence, ex_evidence
from ..common.streamview import TaskStream


class PlanUpdate(NamedTuple):
    """A status update carrying the extension: its frame, the statusUpdate, the plan under the URI."""

    event: Event
    update: dict[str, Any]
    plan: Any


# -- reading plans ----------------------------------------------------------------------------------

def plan_of(metadata: Any) -> Any:
    return metadata.get(URI) if isinstance(metadata, dict) and URI in metadata else None


def steps_of(plan: Any) -> list[Any] | None:
    return plan.get("steps") if isinstance(plan, dict) and isinstance(plan.get("steps"), list) else None


def streamed(ex: Exchange) -> list[PlanUpdate]:
    """Every status update carrying the extension, in arrival order."""
    out = []
    for ev, result in ex.results():
        upd = result.get("statusUpdate")
        if isinstance(upd, dict) and plan_of(upd.get("metadata")) is not None:
            out.append(PlanUpdate(ev, upd, plan_of(upd["metadata"])))
    return out


def timestamp(upd: dict[str, Any]) -> datetime | None:
    stamp = upd.get("status", {}).get("timestamp") if isinstance(upd.get("status"), dict) else None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")) if isinstance(stamp, str) else None
    except ValueError:
        return None


def ordered(ex: Exchange) -> list[PlanUpdate]:
    """Plan updates by status.timestamp (arrival breaks ties); an update whose plan is the one before it
    counts once: delivered twice, or the latest plan repeated on a later status update (progress/v1 lets
    updates arrive more than once, and a client keeps the plan of the latest: a repeat changes nothing)."""
    items = streamed(ex)
    if all(timestamp(u.update) is not None for u in items):
        items = sorted(items, key=lambda u: timestamp(u.update))  # stable: arrival order among equals
    out: list[PlanUpdate] = []
    for item in items:
        if out and out[-1].plan == item.plan:
            continue
        out.append(item)
    return out


def changes(calls: list[Any]) -> list[Any]:
    """The calls with a call that repeats the plan of the call before it counted once: its update could
    not be told from a repeat of the one before."""
    return [c for k, c in enumerate(calls) if k == 0 or c != calls[k - 1]]


def read_back(log: FrameLog) -> list[tuple[str, Exchange, Any]]:
    """(where, exchange, plan) for the plan GetTask and ListTasks carry (plan None when absent)."""
    out = []
    get = log.get(GET_TASK)
    task = _unary_result(get) if get else None
    if isinstance(task, dict):
        out.append(("GetTask", get, plan_of(task.get("metadata"))))
    lst = log.get(LIST_TASKS)
    listed = _unary_result(lst) if lst else None
    if isinstance(listed, dict) and isinstance(task, dict):
        for t in listed.get("tasks") or []:
            if isinstance(t, dict) and t.get("id") == task.get("id"):
                out.append(("ListTasks", lst, plan_of(t.get("metadata"))))
    return out


def _unary_result(ex: Exchange) -> Any:
    return bindings.read_answer(ex).result


# -- reading the script and what the model saw ------------------------------------------------------

def well_shaped(steps: Any) -> bool:
    """progress/v1's shape: a list of objects with a string label, a known state, a string note if any."""
    return isinstance(steps, list) and all(
        isinstance(s, dict) and isinstance(s.get("label"), str) and s.get("state") in STATES
        and ("note" not in s or isinstance(s["note"], str)) for s in steps)


def plan_calls(script: dict[str, Any] | None) -> list[Any]:
    steps = script.get("steps") if isinstance(script, dict) else None
    return [s["plan"] for s in steps or [] if isinstance(s, dict) and "plan" in s]


def say_results(script: dict[str, Any] | None) -> list[tuple[str, str, Any]]:
    """(prefix, suffix, the plan call before it) for every `say` with {{result}} after a plan step."""
    out, last = [], None
    steps = script.get("steps") if isinstance(script, dict) else None
    for s in steps or []:
        if isinstance(s, dict) and "plan" in s:
            last = s["plan"]
        elif isinstance(s, dict) and isinstance(s.get("say"), str) and "{{result}}" in s["say"] and last is not None:
            prefix, _, suffix = s["say"].partition("{{result}}")
            out.append((prefix, suffix, last))
    return out


def agent_texts(ex: Exchange) -> list[tuple[Event, str]]:
    out = []
    for ev, result in ex.results():
        upd = result.get("statusUpdate")
        message = upd.get("status", {}).get("message") if isinstance(upd, dict) else None
        for part in message.get("parts", []) if isinstance(message, dict) else []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append((ev, part["text"]))
    return out


def said(ex: Exchange, prefix: str, suffix: str) -> tuple[Event | None, str | None]:
    """The tool result a `say` showed: its text between the template's prefix and suffix."""
    for ev, text in agent_texts(ex):
        if text.startswith(prefix) and text.endswith(suffix) and len(text) >= len(prefix) + len(suffix):
            return ev, text[len(prefix):len(text) - len(suffix)]
    return None, None


# -- the views --------------------------------------------------------------------------------------

@dataclass
class PlanUpdates:
    """The plan updates of the task stream in progress/v1's order, beside the well-shaped update_plan
    calls of the script (the script the log says was sent)."""

    log: FrameLog
    stream: Exchange
    updates: list[PlanUpdate]  # ordered, a repeat of the plan before counted once
    calls: list[Any]  # the well-shaped update_plan calls, in script order, a repeat of the call before counted once

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> PlanUpdates:
        """Only a stream that carried the whole turn is judged. One that is no event stream or ended
        before a terminal state shows only part of the turn: what it could not show is the stream
        rules' finding (A2A-STREAM-), not a missing plan."""
        stream = TaskStream.of(log, ctx)
        if not stream.terminal:
            raise Unjudgeable()
        return cls.read(log, stream.exchange)

    @classmethod
    def read(cls, log: FrameLog, ex: Exchange) -> PlanUpdates:
        """The same reading of any stream, whole or not."""
        return cls(log, ex, ordered(ex), changes([c for c in plan_calls(log.script) if well_shaped(c)]))

    @property
    def script(self) -> dict[str, Any] | None:
        return self.log.script

    @property
    def arrived(self) -> list[PlanUpdate]:
        """Every plan update in arrival order, repeats included."""
        return streamed(self.stream)

    @property
    def aligned(self) -> list[tuple[Event, list[Any], list[Any]]] | None:
        """(frame, steps sent, steps asked) per call, when there is one update per call; else None."""
        if len(self.updates) != len(self.calls):
            return None
        return [(u.event, steps_of(u.plan) or [], asked) for u, asked in zip(self.updates, self.calls)]


@dataclass
class PlansSeen:
    """Every plan the run showed, each with its evidence: streamed (by the task stream, whole or cut)
    and carried by GetTask and ListTasks; and the stream's updates beside the script's calls."""

    plans: list[tuple[dict[str, Any], Any]]  # (evidence, plan)
    stream_updates: PlanUpdates | None  # the task stream's updates, read whether or not it carried the whole turn
    sentinels: list[str]  # strings the script put only in tool arguments or results

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> PlansSeen:
        ex = log.get(STREAM)
        plans = [(ev_evidence(ex, u.event), u.plan) for u in streamed(ex)] if ex is not None else []
        plans += [(ex_evidence(x, where), plan) for where, x, plan in read_back(log) if plan is not None]
        sentinels = (ctx.scenario.data.get("sentinels") if ctx.scenario else None) or []
        return cls(plans, PlanUpdates.read(log, ex) if ex is not None else None, sentinels)


@dataclass
class ReadBack:
    """The latest plan a whole turn streamed, beside what GetTask and ListTasks answered for the task."""

    stream: Exchange
    latest: PlanUpdate
    answers: dict[str, Exchange | Unjudgeable]  # "GetTask"/"ListTasks" → its exchange, or why there is none
    carried: dict[str, Any]  # where → the plan it carries for the task; absent: it did not answer the task

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> ReadBack:
        try:
            updates = PlanUpdates.of(log, ctx)
        except Unjudgeable:
            # The latest plan is known only from a whole turn; a failed stream is reported by the
            # rules that read the stream, not here.
            raise Unjudgeable() from None
        if not updates.updates:
            raise Unjudgeable()
        answers: dict[str, Exchange | Unjudgeable] = {}
        for where, label in (("GetTask", GET_TASK), ("ListTasks", LIST_TASKS)):
            try:
                answers[where] = answered(log, label)
            except Unjudgeable as why:
                answers[where] = why
        carried: dict[str, Any] = {}
        for where, _, plan in read_back(log):
            carried.setdefault(where, plan)
        return cls(updates.stream, updates.updates[-1], answers, carried)
