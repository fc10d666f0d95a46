"""One turn of the agent on one task, the emitting side of the player: status updates, plans and
artifact chunks published to the task store (and from there to every stream of the task). The script
steps (player.py, pauses.py) drive it.
"""

from __future__ import annotations

import copy
from typing import Any

from ...protocols import a2a, progress_v1
from ..faults import switch
from .agents import DEFAULT, AgentSpec
from .options import Options
from .shapes import agent_message, artifact_update, status, status_update
from .store import TaskRecord, TaskStore


class ScriptError(Exception):
    """The script cannot be played; the task fails with this text."""


def text_arg(value: Any, what: str) -> str:
    """A step's text argument, or ScriptError."""
    if not isinstance(value, str):
        raise ScriptError(f"{what} must be a string, got {type(value).__name__}")
    return value


class Run:
    def __init__(self, record: TaskRecord, store: TaskStore, options: Options, agent: AgentSpec = DEFAULT) -> None:
        self.record, self.store, self.options, self.agent = record, store, options, agent
        self.last_result = ""  # the last tool result or answer, as the model saw it (`say` shows it)
        self.last_plan: list[dict[str, Any]] | None = None  # the plan before (for the plan-diff fault)
        self.plans_recorded = 0  # (for the plan-drop-second fault)

    def publish(self, result: dict[str, Any]) -> None:
        self.store.publish(self.record, result)

    def status(self, state: str, text: str | None = None) -> None:
        clock = self.options.clock
        message = None
        if text is not None:
            message = agent_message(clock.new_id(), self.record.id, self.record.context_id, text)
        stamp = clock.stamp(clock.now())
        self.publish(status_update(self.record.id, self.record.context_id, status(state, stamp, message)))

    def plan(self, plan: list[dict[str, Any]]) -> None:
        """Record the plan on the task and send it as a WORKING status update (progress/v1)."""
        plan = _break_plan(self, plan)
        self.record.metadata[progress_v1.URI] = {"steps": copy.deepcopy(plan)}
        if self.record.first_plan is None:
            self.record.first_plan = {"steps": copy.deepcopy(plan)}
        if _plan_dropped(self):
            return
        clock = self.options.clock
        update = status_update(self.record.id, self.record.context_id, status(a2a.WORKING, clock.stamp(clock.now())))
        update["statusUpdate"]["metadata"] = {progress_v1.URI: {"steps": plan}}
        self.publish(_break_plan_update(update, self.options))

    def artifact(self, artifact: dict[str, Any], append: bool = False, last_chunk: bool = False) -> None:
        self.publish(artifact_update(self.record.id, self.record.context_id, artifact, append, last_chunk))


# -- fault variants: what each changes in a plan sent ------------------------------------------------
PLAN_DIFF = switch("plan-diff")
PLAN_NOTE_LEAK = switch("plan-note-leak")
PLAN_DROP_SECOND = switch("plan-drop-second")
PLAN_NO_TIMESTAMP = switch("plan-no-timestamp")


def _break_plan(run: Run, plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The plan as the plan faults record and send it."""
    if PLAN_DIFF.on(run.options):  # only the steps that are new or changed since the plan before
        before, run.last_plan = run.last_plan, plan
        return plan if before is None else [step for step in plan if step not in before]
    if PLAN_NOTE_LEAK.on(run.options):  # the first step without a note gets the last status text
        said = next((m["parts"][0].get("text", "") for m in reversed(run.record.history)
                     if m.get("role") == a2a.ROLE_AGENT and m.get("parts")), "")
        bare = next((i for i, step in enumerate(plan) if "note" not in step), None)
        if said and bare is not None:
            return [*plan[:bare], {**plan[bare], "note": said}, *plan[bare + 1:]]
    return plan


def _plan_dropped(run: Run) -> bool:
    """plan-drop-second: the second plan of a task is recorded but never sent."""
    run.plans_recorded += 1
    return PLAN_DROP_SECOND.on(run.options) and run.plans_recorded == 2


def _break_plan_update(update: dict[str, Any], options: Options) -> dict[str, Any]:
    if PLAN_NO_TIMESTAMP.on(options):
        del update["statusUpdate"]["status"]["timestamp"]
    return update
