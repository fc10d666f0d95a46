"""The built-in `update_plan` tool of seed 000 (progress/v1): shape check, limits, and the plan sent.

A call takes `{steps: [...]}`. A plan of the wrong shape is a failed tool result (ToolError, which
the model sees); a plan that is only too long is cut to the limits and never fails. Lengths count
Unicode code points; a cut keeps `limit - 1` code points and adds "…", so the result is exactly
the limit including the ellipsis. The plan fault variants follow the correct code, each applied at one point.
"""

from __future__ import annotations

from typing import Any

from ...protocols.progress_v1 import ELLIPSIS, LABEL_MAX, MAX_STEPS, NOTE_MAX, STATES, STEP_FIELDS
from ..faults import switch, variant
from .options import Options

SHADOW_RESULT = "shadowed: the agent's own update_plan ran (no plan sent)"
UNKNOWN_TOOL = "Tool error: unknown tool update_plan"


class ToolError(Exception):
    """The tool call failed; its text is the result the model sees."""


def check_shape(steps: Any, options: Options) -> list[dict[str, Any]]:
    """The steps as given, if they have the seed's shape; else ToolError naming what is wrong."""
    if not isinstance(steps, list):
        raise ToolError(f"Tool error: update_plan: steps must be a list, got {type(steps).__name__}")
    if PLAN_WRONG_SHAPE_ACCEPTED.on(options):
        return _well_formed_only(steps)
    checked = [_check_step(n, step) for n, step in enumerate(steps, 1)]
    if PLAN_LENGTH_FAILS.on(options) and _too_long(checked):
        raise ToolError("Tool error: update_plan: the plan is too long")
    return checked


def _check_step(n: int, step: Any) -> dict[str, Any]:
    where = f"Tool error: update_plan: step {n}"
    if not isinstance(step, dict):
        raise ToolError(f"{where} must be an object")
    unknown = sorted(set(step) - set(STEP_FIELDS))
    if unknown:
        raise ToolError(f"{where} has unknown fields: {', '.join(unknown)}")
    if not isinstance(step.get("label"), str):
        raise ToolError(f"{where} needs a label (a string)")
    if step.get("state") not in STATES:
        raise ToolError(f"{where}: state must be one of {', '.join(STATES)}")
    if "note" in step and not isinstance(step["note"], str):
        raise ToolError(f"{where}: note must be a string")
    return step


def apply_limits(steps: list[dict[str, Any]], options: Options) -> list[dict[str, Any]]:
    """The plan as recorded: at most 20 steps, labels and notes cut to their limits."""
    plan = []
    for step in steps[:_steps_kept(options)]:
        out = {"label": _cut_label(step["label"], options), "state": step["state"]}
        if "note" in step:
            out["note"] = _cut_note(step["note"], options)
        plan.append(_break_step(out, options))
    return plan


def cut(text: str, limit: int) -> str:
    """The reference cut: code points, exactly `limit` including the ellipsis."""
    return text if len(text) <= limit else text[:limit - 1] + ELLIPSIS


def _cut_label(text: str, options: Options) -> str:
    return variant(options, cut, LABEL_CUTS)(text, LABEL_MAX)


def _cut_note(text: str, options: Options) -> str:
    return variant(options, cut, NOTE_CUTS)(text, NOTE_MAX)


# -- fault variants ---------------------------------------------------------------------------------
PLAN_WRONG_SHAPE_ACCEPTED = switch("plan-wrong-shape-accepted")
PLAN_LENGTH_FAILS = switch("plan-length-fails")
PLAN_21_STEPS = switch("plan-21-steps")
PLAN_NOTE_NULL = switch("plan-note-null")
PLAN_UNKNOWN_STATE = switch("plan-unknown-state")


def _well_formed_only(steps: list[Any]) -> list[dict[str, Any]]:
    """plan-wrong-shape-accepted: the malformed steps are dropped, the rest taken as the plan."""
    good = []
    for n, step in enumerate(steps, 1):
        try:
            good.append(_check_step(n, step))
        except ToolError:
            pass
    return good


def _too_long(steps: list[dict[str, Any]]) -> bool:
    return len(steps) > MAX_STEPS or any(
        len(s["label"]) > LABEL_MAX or len(s.get("note", "")) > NOTE_MAX for s in steps)


def _steps_kept(options: Options) -> int:
    return MAX_STEPS + 1 if PLAN_21_STEPS.on(options) else MAX_STEPS


def _break_step(out: dict[str, Any], options: Options) -> dict[str, Any]:
    if PLAN_NOTE_NULL.on(options) and "note" not in out:
        out["note"] = None
    if PLAN_UNKNOWN_STATE.on(options) and out["state"] == "active":
        out["state"] = "in_progress"
    return out


def _cut_no_ellipsis(text: str, limit: int) -> str:
    return text[:limit]


def _cut_one_over(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + ELLIPSIS


def _utf16_cut(text: str, limit: int, split: bool) -> str:
    """A cut counted in UTF-16 code units, as a JavaScript runtime counts `length`. With `split`, a
    surrogate pair at the cut is halved and the lone half comes out as U+FFFD (what a UTF-16 string
    with a lone surrogate becomes once encoded as UTF-8); without, the pair is dropped whole."""
    units = text.encode("utf-16-le")
    if len(units) // 2 <= limit:
        return text
    kept = units[:(limit - 1) * 2]
    return kept.decode("utf-16-le", "replace" if split else "ignore") + ELLIPSIS


LABEL_CUTS = {
    switch("plan-cut-utf16"): lambda text, limit: _utf16_cut(text, limit, split=False),
    switch("plan-cut-splits-surrogate"): lambda text, limit: _utf16_cut(text, limit, split=True),
    switch("plan-cut-no-ellipsis"): _cut_no_ellipsis,
    switch("plan-cut-121"): _cut_one_over,
}
NOTE_CUTS = {
    switch("plan-note-no-ellipsis"): _cut_no_ellipsis,
    switch("plan-note-cut-281"): _cut_one_over,
    switch("plan-note-cut-utf16"): lambda text, limit: _utf16_cut(text, limit, split=False),
}
