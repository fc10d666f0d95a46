"""The script player: performs a docs/contracts.md §6 test-agent script and emits what A2A shows for each step.

Steps live in the STEPS dispatch table; a later step (plan, ask, call, connect, say…) is one function
and one entry. A step returns True when it ended the turn (finish, fail). What a step emits goes
through Run (run.py); the steps that pause for a person are in pauses.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ...protocols import a2a, progress_v1
from ...protocols.script import SCRIPT_KEY, SCRIPT_VERSION
from ..faults import switch
from . import plans
from .agents import DEFAULT, AgentSpec
from .options import Options
from .pauses import STEPS as PAUSE_STEPS
from .run import Run, ScriptError, text_arg
from .store import TaskRecord, TaskStore

NO_SCRIPT_TEXT = "No script: nothing to do"
LIMITED_END_TEXT = "Done"  # how a test agent that cannot play finish/fail ends its turn
FIXED_ANSWER = ("Here is ", "my answer.")  # the chunks of the answer of an agent that ignores the script

StepFn = Callable[[Run, Any], Awaitable[bool]]


async def step_status(run: Run, arg: Any) -> bool:
    run.status(a2a.WORKING, text_arg(arg, "the status text"))
    return False


async def step_finish(run: Run, arg: Any) -> bool:
    text = text_arg(arg, "the finish text")
    if WRONG_FINAL_TEXT.on(run.options):
        text += " (and then some)"
    run.status(a2a.COMPLETED, text)
    return True


async def step_fail(run: Run, arg: Any) -> bool:
    run.status(a2a.FAILED, text_arg(arg, "the fail text"))
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
        head["name"] = text_arg(arg["name"], "the artifact name")
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
    if any(fault.on(run.options) for fault in CHUNK_FAULTS):
        return await _broken_text_chunks(run, head, chunks)
    for index, chunk in enumerate(chunks):
        first, last = index == 0, index == len(chunks) - 1
        artifact = dict(head) if first else {"artifactId": head["artifactId"]}  # name on the first only
        artifact["parts"] = [{"text": chunk}]
        run.artifact(artifact, append=not first, last_chunk=last)
        await asyncio.sleep(0)  # let streams flush between chunks


async def step_plan(run: Run, arg: Any) -> bool:
    """The model calls update_plan with these steps (seed 000); the result is what `say` shows."""
    if not _has_builtin_plan(run.agent, run.options):
        run.last_result = plans.SHADOW_RESULT if progress_v1.TOOL in run.agent.tools else plans.UNKNOWN_TOOL
        return False
    try:
        steps = plans.check_shape(arg, run.options)
    except plans.ToolError as exc:
        run.last_result = str(exc)
        return False
    plan = plans.apply_limits(steps, run.options)
    run.last_result = progress_v1.PLAN_UPDATED
    run.plan(plan)
    return False


async def step_say(run: Run, arg: Any) -> bool:
    run.status(a2a.WORKING, text_arg(arg, "the say text").replace("{{result}}", run.last_result))
    return False


STEPS: dict[str, StepFn] = {
    "status": step_status,
    "artifact": step_artifact,
    "sleep": step_sleep,
    "finish": step_finish,
    "fail": step_fail,
    "plan": step_plan,
    "say": step_say,
    **PAUSE_STEPS,  # ask, call, connect (seed 004)
}


def read_script(message: dict[str, Any]) -> list[Any] | None:
    """The script's steps from the message metadata; None when the message carries no script."""
    metadata = message.get("metadata")
    script = metadata.get(SCRIPT_KEY) if isinstance(metadata, dict) else None
    if script is None:
        return None
    if not isinstance(script, dict):
        raise ScriptError(f"the {SCRIPT_KEY} metadata must be an object")
    if script.get("version") != SCRIPT_VERSION:
        raise ScriptError(f"script version {script.get('version')!r} is not supported (this agent plays 1)")
    if not isinstance(script.get("steps"), list):
        raise ScriptError("the script has no steps list")
    return script["steps"]


async def _fixed_answer(run: Run, message: dict[str, Any]) -> None:
    """An agent that plays no script (Options.ignore_script): a status, an answer artifact in two chunks, the end."""
    parts = message.get("parts") if isinstance(message.get("parts"), list) else []
    asked = next((p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)), "")
    run.status(a2a.WORKING, f"Thinking about {asked[:40]!r}")
    await _text_chunks(run, {"artifactId": "answer", "name": "answer.txt"}, list(FIXED_ANSWER))
    run.status(a2a.COMPLETED, "".join(FIXED_ANSWER))


def _unpack(step: Any) -> tuple[str, Any]:
    if not isinstance(step, dict) or len(step) != 1:
        raise ScriptError(f"a step is an object with exactly one key, got {step!r}")
    return next(iter(step.items()))


async def play(record: TaskRecord, store: TaskStore, options: Options, message: dict[str, Any],
               agent: AgentSpec = DEFAULT) -> None:
    """Run the script the first message carries. Every path ends the task: nothing ever hangs."""
    run = Run(record, store, options, agent)
    try:
        if run.options.ignore_script:
            await _fixed_answer(run, message)
            return
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
        played = run.options.script_steps
        if played is not None and name not in played:  # beyond this framework's reach: what it cannot express
            if name in ("finish", "fail"):  # it ends its turn its own way
                run.status(a2a.COMPLETED, LIMITED_END_TEXT)
                return True
            return False
        return await handler(run, arg)
    except ScriptError as exc:
        raise ScriptError(f"step {index}: {exc}") from None


# -- fault variants ---------------------------------------------------------------------------------
WRONG_FINAL_TEXT = switch("wrong-final-text")
DROP_CHUNK = switch("drop-chunk")
APPEND_FIRST = switch("append-first")
APPEND_AFTER_LAST = switch("append-after-last")
CHUNK_FAULTS = (DROP_CHUNK, APPEND_FIRST, APPEND_AFTER_LAST)
PLAN_SHADOW_IGNORED = switch("plan-shadow-ignored")
PLAN_NO_PLAN_AGENT_SENDS = switch("plan-no-plan-agent-sends")


async def _broken_text_chunks(run: Run, head: dict[str, Any], chunks: list[str]) -> None:
    """_text_chunks as the chunk faults send them."""
    dropped = len(chunks) // 2 if DROP_CHUNK.on(run.options) and len(chunks) >= 3 else None
    for index, chunk in enumerate(chunks):
        if index == dropped:  # drop-chunk: the middle chunk is never sent (nor stored)
            continue
        first, last = index == 0, index == len(chunks) - 1
        artifact = dict(head) if first else {"artifactId": head["artifactId"]}
        artifact["parts"] = [{"text": chunk}]
        run.artifact(artifact, append=not first or APPEND_FIRST.on(run.options), last_chunk=last)
        await asyncio.sleep(0)
    if APPEND_AFTER_LAST.on(run.options):
        run.artifact({"artifactId": head["artifactId"], "parts": [{"text": "(late chunk)\n"}]}, append=True)


def _has_builtin_plan(agent: AgentSpec, options: Options) -> bool:
    """The agent has the built-in update_plan (agents.AgentSpec.has_builtin_plan); two faults run it anyway:
    plan-shadow-ignored although the agent's own tool of that name shadows it, plan-no-plan-agent-sends
    although the manifest never turned it on."""
    if PLAN_SHADOW_IGNORED.on(options) and agent.plan:
        return True
    if PLAN_NO_PLAN_AGENT_SENDS.on(options) and not agent.plan:
        return True
    return agent.has_builtin_plan
