"""The script steps that pause a task for a person (docs/contracts.md §6, seed 004): ask, call, connect; (`say`,
in player.py, reports the answer). The shapes and the answer handling are in interactions.py.
"""

from __future__ import annotations

import json
from typing import Any

from ...protocols import a2a
from ...protocols import interactions_v1 as ix
from ...protocols.interactions_v1 import APP_MAX, APPROVAL, CONNECTION, DENIED, QUESTION, REASON_MAX, STATE_OF
from ..faults import switch
from .interactions import (
    Answer,
    Interaction,
    connected,
    cut,
    pause_message,
    value_text,
)
from .options import Options
from .run import Run, ScriptError, text_arg
from .shapes import status, status_update


async def pause(run: Run, interaction: Interaction) -> Answer:
    """Publish the open interaction, wait for its answer, and return to WORKING."""
    record, options = run.record, run.options
    state = _break_pause_state(interaction.kind, STATE_OF[interaction.kind], options)
    record.interactions.open = interaction
    clock = options.clock
    message = pause_message(clock.new_id(), record.id, record.context_id, interaction, options)
    run.publish(status_update(record.id, record.context_id, status(state, clock.stamp(clock.now()), message)))
    while True:
        item = await record.inbox.get()
        if isinstance(item, Answer):
            break
    run.status(a2a.SUBMITTED if RESUME_SUBMITTED.on(options) else a2a.WORKING)
    return item


async def step_ask(run: Run, arg: Any) -> bool:
    prompt = text_arg(arg, "the question")
    answer = await pause(run, Interaction(run.options.clock.new_id(), QUESTION, prompt))
    run.last_result = value_text(answer, run.options)
    return False


async def step_call(run: Run, arg: Any) -> bool:
    if not isinstance(arg, dict):
        raise ScriptError("a call needs an object {server, tool, args}")
    server, tool = text_arg(arg.get("server"), "the call's server"), text_arg(arg.get("tool"), "the call's tool")
    detail: dict[str, Any] = {"server": server, "tool": tool}
    if isinstance(arg.get("reason"), str):
        detail["reason"] = arg["reason"]
    detail = _break_detail(detail, arg, run.options)
    # The approval's interactionId is the held call's effect id.
    effect_id = "eff_" + run.options.clock.new_id()
    answer = await pause(run, Interaction(effect_id, APPROVAL, f"Approve {server} / {tool}?", detail))
    approved = _break_approved(answer.value is True, run.options)
    run.last_result = f"{server}/{tool}: done" if approved else DENIED
    if approved and arg.get("echo"):  # the tool returns the call it received (docs/script-extensions.md)
        sent = {"server": server, "tool": tool, "args": _break_sent_args(arg.get("args", {}), run.options)}
        run.last_result = json.dumps(sent, ensure_ascii=False)
    return False


async def step_connect(run: Run, arg: Any) -> bool:
    if not isinstance(arg, dict):
        raise ScriptError("connect needs an object {app, reason}")
    app = cut(text_arg(arg.get("app"), "the app"), APP_MAX, run.options)
    reason = text_arg(arg.get("reason"), "the reason")
    reason = reason if REASON_UNCUT.on(run.options) else cut(reason, REASON_MAX, run.options)
    interaction = Interaction(run.options.clock.new_id(), CONNECTION, ix.CONNECT_PROMPT.format(app=app, reason=reason),
                              {"app": app, "reason": reason})
    answer = await pause(run, interaction)
    yes = connected(answer.value)
    if CONNECTION_TRUE_NOT_READ.on(run.options):  # only {"connected": true} connects
        yes = isinstance(answer.value, dict) and yes
    if CONNECTION_APPROVED_FALSE_CONNECTS.on(run.options):  # any approved (or boolean value) reads as yes
        yes = yes or answer.value is False
    if CONNECTION_TRUTHY.on(run.options):  # any value but false, null or {"connected": false} connects
        yes = answer.value not in (False, None) and answer.value != {"connected": False}
    run.last_result = (ix.CONNECTED if yes else ix.NOT_CONNECTED).format(app=app)
    return False


STEPS = {"ask": step_ask, "call": step_call, "connect": step_connect}


# -- fault variants ---------------------------------------------------------------------------------
APPROVAL_INPUT_REQUIRED = switch("approval-input-required")
ASK_STAYS_WORKING = switch("ask-stays-working")
RESUME_SUBMITTED = switch("resume-submitted")
APPROVAL_DETAIL_ARGS = switch("approval-detail-args")
APPROVAL_DETAIL_MISSING_TOOL = switch("approval-detail-missing-tool")
APPROVAL_NOT_RUN = switch("approval-not-run")
DENIAL_RUNS_CALL = switch("denial-runs-call")
CONNECTION_TRUE_NOT_READ = switch("connection-true-not-read")
CONNECTION_TRUTHY = switch("connection-truthy")
APPROVAL_SENDS_OTHER_ARGS = switch("approval-sends-other-args")
CONNECTION_APPROVED_FALSE_CONNECTS = switch("connection-approved-false-connects")
REASON_UNCUT = switch("connection-reason-uncut")


def _break_pause_state(kind: str, state: str, options: Options) -> str:
    if kind == APPROVAL and APPROVAL_INPUT_REQUIRED.on(options):
        return a2a.INPUT_REQUIRED
    if kind == QUESTION and ASK_STAYS_WORKING.on(options):
        return a2a.WORKING
    return state


def _break_detail(detail: dict[str, Any], arg: dict[str, Any], options: Options) -> dict[str, Any]:
    if APPROVAL_DETAIL_ARGS.on(options):
        detail["args"] = arg.get("args", {})
    if APPROVAL_DETAIL_MISSING_TOOL.on(options):
        del detail["tool"]
    return detail


def _break_sent_args(args: Any, options: Options) -> Any:
    """approval-sends-other-args: the approved call goes out with arguments the person was not shown."""
    if APPROVAL_SENDS_OTHER_ARGS.on(options) and isinstance(args, dict):
        return {**args, "draft": True}
    return args


def _break_approved(approved: bool, options: Options) -> bool:
    if APPROVAL_NOT_RUN.on(options):
        return False
    if DENIAL_RUNS_CALL.on(options):
        return True
    return approved
