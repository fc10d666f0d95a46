"""The script steps that pause a task for a person (DESIGN §6, seed 004): ask, call, connect; (`say`, in player.py,
reports the answer). The shapes and the answer handling are in interactions.py.
"""

from __future__ import annotations

from typing import Any

from .. import a2a
from .interactions import (
    APP_LIMIT,
    APPROVAL,
    CONNECTION,
    DENIED,
    QUESTION,
    REASON_LIMIT,
    STATE_OF,
    Answer,
    Interaction,
    connected,
    cut,
    pause_message,
    value_text,
)
from .player import Run, ScriptError
from .shapes import status, status_update


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ScriptError(f"{what} must be a string, got {type(value).__name__}")
    return value


async def pause(run: Run, interaction: Interaction) -> Answer:
    """Publish the open interaction, wait for its answer, and return to WORKING."""
    record, options = run.record, run.options
    state = STATE_OF[interaction.kind]
    if interaction.kind == APPROVAL and options.has("approval-input-required"):
        state = a2a.INPUT_REQUIRED
    if interaction.kind == QUESTION and options.has("ask-stays-working"):
        state = a2a.WORKING
    record.interactions.open = interaction
    clock = options.clock
    message = pause_message(clock.new_id(), record.id, record.context_id, interaction, options)
    run.publish(status_update(record.id, record.context_id, status(state, clock.stamp(clock.now()), message)))
    while True:
        item = await record.inbox.get()
        if isinstance(item, Answer):
            break
    run.status(a2a.SUBMITTED if options.has("resume-submitted") else a2a.WORKING)
    return item


async def step_ask(run: Run, arg: Any) -> bool:
    prompt = _text(arg, "the question")
    answer = await pause(run, Interaction(run.options.clock.new_id(), QUESTION, prompt))
    run.last_result = value_text(answer, run.options)
    return False


async def step_call(run: Run, arg: Any) -> bool:
    if not isinstance(arg, dict):
        raise ScriptError("a call needs an object {server, tool, args}")
    server, tool = _text(arg.get("server"), "the call's server"), _text(arg.get("tool"), "the call's tool")
    detail: dict[str, Any] = {"server": server, "tool": tool}
    if isinstance(arg.get("reason"), str):
        detail["reason"] = arg["reason"]
    if run.options.has("approval-detail-args"):
        detail["args"] = arg.get("args", {})
    if run.options.has("approval-detail-missing-tool"):
        del detail["tool"]
    # The approval's interactionId is the held call's effect id.
    effect_id = "eff_" + run.options.clock.new_id()
    answer = await pause(run, Interaction(effect_id, APPROVAL, f"Approve {server} / {tool}?", detail))
    approved = answer.value is True
    if run.options.has("approval-not-run"):
        approved = False
    if run.options.has("denial-runs-call"):
        approved = True
    run.last_result = f"{server}/{tool}: done" if approved else DENIED
    return False


async def step_connect(run: Run, arg: Any) -> bool:
    if not isinstance(arg, dict):
        raise ScriptError("connect needs an object {app, reason}")
    app = cut(_text(arg.get("app"), "the app"), APP_LIMIT, run.options)
    reason = cut(_text(arg.get("reason"), "the reason"), REASON_LIMIT, run.options)
    interaction = Interaction(run.options.clock.new_id(), CONNECTION, f"Connect {app}: {reason}",
                              {"app": app, "reason": reason})
    answer = await pause(run, interaction)
    yes = connected(answer.value)
    if run.options.has("connection-true-not-read"):
        yes = isinstance(answer.value, dict) and yes
    run.last_result = f"Connected: {app}" if yes else f"Not connected: {app}"
    return False


STEPS = {"ask": step_ask, "call": step_call, "connect": step_connect}
