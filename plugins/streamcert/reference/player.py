"""The script player: performs a DESIGN §6 test-agent script and emits what A2A shows for each step.

Steps live in the STEPS dispatch table; a later step (plan, ask, call, connect, say…) is one function
and one entry. A step returns True when it ended the turn (finish, fail).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable
from typing import Any

from .. import a2a
from . import plans
from .agents import DEFAULT, AgentSpec
from .options import Options
from .shapes import agent_message, artifact_update, status, status_update
from .store import TaskRecord, TaskStore

NO_SCRIPT_TEXT = "No script: nothing to do"


class ScriptError(Exception):
    """The script cannot be played; the task fails with this text."""


class Run:
    """One turn of the agent on one task: the emitting side of the player."""

    def __init__(self, record: TaskRecord, store: TaskStore, options: Options, agent: AgentSpec = DEFAULT) -> None:
        self.record, self.store, self.options, self.agent = record, store, options, agent
        self.last_result = ""  # the last tool result or answer, as the model saw it (`say` shows it)
        self.last_plan: list[dict[str, Any]] | None = None  # the plan sent last (for the plan-diff fault)
        self.plans_sent = 0

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
        options, clock = self.options, self.options.clock
        sent = plans.diff(self.last_plan, plan) if options.has("plan-diff") else plan
        self.last_plan = plan
        if options.has("plan-note-leak"):
            said = next((m["parts"][0].get("text", "") for m in reversed(self.record.history)
                         if m.get("role") == a2a.ROLE_AGENT and m.get("parts")), "")
            bare = next((i for i, step in enumerate(sent) if "note" not in step), None)
            if said and bare is not None:  # the first step without a note gets the last status text
                sent = [*sent[:bare], {**sent[bare], "note": said}, *sent[bare + 1:]]
        self.plans_sent += 1
        self.record.metadata[a2a.PROGRESS_EXT] = {"steps": copy.deepcopy(sent)}
        if self.record.first_plan is None:
            self.record.first_plan = {"steps": copy.deepcopy(sent)}
        if options.has("plan-drop-second") and self.plans_sent == 2:
            return
        task_status = status(a2a.WORKING, clock.stamp(clock.now()))
        if options.has("plan-no-timestamp"):
            del task_status["timestamp"]
        update = status_update(self.record.id, self.record.context_id, task_status)
        update["statusUpdate"]["metadata"] = {a2a.PROGRESS_EXT: {"steps": sent}}
        self.publish(update)

    def artifact(self, artifact: dict[str, Any], append: bool = False, last_chunk: bool = False) -> None:
        self.publish(artifact_update(self.record.id, self.record.context_id, artifact, append, last_chunk))


StepFn = Callable[[Run, Any], Awaitable[bool]]


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ScriptError(f"{what} must be a string, got {type(value).__name__}")
    return value


async def step_status(run: Run, arg: Any) -> bool:
    run.status(a2a.WORKING, _text(arg, "the status text"))
    return False


async def step_finish(run: Run, arg: Any) -> bool:
    text = _text(arg, "the finish text")
    if run.options.has("wrong-final-text"):
        text += " (and then some)"
    run.status(a2a.COMPLETED, text)
    return True


async def step_fail(run: Run, arg: Any) -> bool:
    run.status(a2a.FAILED, _text(arg, "the fail text"))
    return True


async def step_sleep(run: Run, arg: Any) -> bool:
    if isinstance(arg, bool) or not isinstance(arg, (int, float)) or arg < 0:
        raise ScriptError(f"sleep takes milliseconds (a number >= 0), got {arg!r}")
    await asyncio.sleep(arg / 1000)
    return False


async def step_artifact(run: Run, arg: Any) -> bool:
    if not isinstance(arg, dict) or not isinstance(arg.get("artifactId"), str) or not arg["artifactId"]:
        raise ScriptError("an artifact needs an object with a non-empty artifactId")
    head: dict[str, Any] = {"artifactId": arg["artifactId"]}
    if "name" in arg:
        head["name"] = _text(arg["name"], "the artifact name")
    if "chunks" in arg:
        await _text_chunks(run, head, arg["chunks"])
    elif "data" in arg:
        run.artifact({**head, "parts": [{"data": arg["data"], "mediaType": "application/json"}]},
                     last_chunk=True)
    else:
        raise ScriptError("an artifact needs chunks (a list of strings) or data")
    return False


async def _text_chunks(run: Run, head: dict[str, Any], chunks: Any) -> None:
    if not isinstance(chunks, list) or not chunks or not all(isinstance(c, str) for c in chunks):
        raise ScriptError("artifact chunks must be a non-empty list of strings")
    dropped = len(chunks) // 2 if run.options.has("drop-chunk") and len(chunks) >= 3 else None
    for index, chunk in enumerate(chunks):
        if index == dropped:
            continue
        first, last = index == 0, index == len(chunks) - 1
        artifact = dict(head) if first else {"artifactId": head["artifactId"]}  # name on the first only
        artifact["parts"] = [{"text": chunk}]
        append = not first or run.options.has("append-first")
        run.artifact(artifact, append=append, last_chunk=last)
        await asyncio.sleep(0)  # let streams flush between chunks
    if run.options.has("append-after-last"):
        run.artifact({"artifactId": head["artifactId"], "parts": [{"text": "(late chunk)\n"}]}, append=True)


async def step_plan(run: Run, arg: Any) -> bool:
    """The model calls update_plan with these steps (seed 000); the result is what `say` shows."""
    if not run.agent.has_builtin_plan:
        if run.options.has("plan-shadow-ignored") and run.agent.plan:
            pass  # the fault: the built-in runs although the agent's own tool of that name shadows it
        elif run.options.has("plan-no-plan-agent-sends") and not run.agent.plan:
            pass  # the fault: the built-in runs although the manifest never turned it on
        else:
            run.last_result = plans.SHADOW_RESULT if "update_plan" in run.agent.tools else plans.UNKNOWN_TOOL
            return False
    try:
        steps = plans.check_shape(arg, run.options)
        if run.options.has("plan-length-fails") and plans.too_long(steps):
            raise plans.ToolError("Tool error: update_plan: the plan is too long")
    except plans.ToolError as exc:
        run.last_result = str(exc)
        return False
    plan = plans.apply_limits(steps, run.options)
    run.last_result = plans.PLAN_UPDATED
    run.plan(plan)
    return False


async def step_say(run: Run, arg: Any) -> bool:
    run.status(a2a.WORKING, _text(arg, "the say text").replace("{{result}}", run.last_result))
    return False


STEPS: dict[str, StepFn] = {
    "status": step_status,
    "artifact": step_artifact,
    "sleep": step_sleep,
    "finish": step_finish,
    "fail": step_fail,
    "plan": step_plan,
    "say": step_say,
}


def _pause_steps() -> None:
    # ask, call and connect (seed 004) live in pauses.py, which imports Run from here.
    from .pauses import STEPS as PAUSE_STEPS

    STEPS.update(PAUSE_STEPS)


_pause_steps()


def read_script(message: dict[str, Any]) -> list[Any] | None:
    """The script's steps from the message metadata; None when the message carries no script."""
    metadata = message.get("metadata")
    script = metadata.get(a2a.SCRIPT_KEY) if isinstance(metadata, dict) else None
    if script is None:
        return None
    if not isinstance(script, dict):
        raise ScriptError(f"the {a2a.SCRIPT_KEY} metadata must be an object")
    if script.get("version") != 1:
        raise ScriptError(f"script version {script.get('version')!r} is not supported (this agent plays 1)")
    if not isinstance(script.get("steps"), list):
        raise ScriptError("the script has no steps list")
    return script["steps"]


def _unpack(step: Any) -> tuple[str, Any]:
    if not isinstance(step, dict) or len(step) != 1:
        raise ScriptError(f"a step is an object with exactly one key, got {step!r}")
    return next(iter(step.items()))


async def play(record: TaskRecord, store: TaskStore, options: Options, message: dict[str, Any],
               agent: AgentSpec = DEFAULT) -> None:
    """Run the script the first message carries. Every path ends the task: nothing ever hangs."""
    run = Run(record, store, options, agent)
    try:
        steps = read_script(message)
        if steps is None:
            run.status(a2a.WORKING, "Reading your message")
            run.status(a2a.COMPLETED, NO_SCRIPT_TEXT)
            return
        for index, step in enumerate(steps, 1):
            await asyncio.sleep(0)
            if await _play_step(run, index, step):
                return
        run.status(a2a.FAILED, "The script ended without a finish or fail step")
    except ScriptError as exc:
        run.status(a2a.FAILED, f"Script error: {exc}")
    except Exception as exc:  # noqa: BLE001 -- a bug here must still end the task, never hang it
        run.status(a2a.FAILED, f"Internal error in the reference agent: {type(exc).__name__}: {exc}")


async def _play_step(run: Run, index: int, step: Any) -> bool:
    try:
        name, arg = _unpack(step)
        handler = STEPS.get(name)
        if handler is None:
            known = ", ".join(sorted(STEPS))
            raise ScriptError(f"unknown step {name!r} (this agent knows: {known})")
        return await handler(run, arg)
    except ScriptError as exc:
        raise ScriptError(f"step {index}: {exc}") from None
