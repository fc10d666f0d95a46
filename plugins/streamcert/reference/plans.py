"""The built-in `update_plan` tool of seed 000 (progress/v1): shape check, limits, and the plan sent.

A call takes `{steps: [...]}`. A plan of the wrong shape is a failed tool result (ToolError, which
the model sees); a plan that is only too long is cut to the limits and never fails. Lengths count
Unicode code points; a cut keeps `limit - 1` code points and adds "…", so the result is exactly
the limit including the ellipsis. The plan fault variants are applied here, each in one place.
"""

from __future__ import annotations

from typing import Any

from .options import Options

STATES = ("pending", "active", "done", "blocked", "skipped")
MAX_STEPS = 20
LABEL_MAX = 120
NOTE_MAX = 280
ELLIPSIS = "…"
PLAN_UPDATED = "Plan updated"
SHADOW_RESULT = "shadowed: the agent's own update_plan ran (no plan sent)"
UNKNOWN_TOOL = "Tool error: unknown tool update_plan"


class ToolError(Exception):
    """The tool call failed; its text is the result the model sees."""


def check_shape(steps: Any, options: Options) -> list[dict[str, Any]]:
    """The steps as given, if they have the seed's shape; else ToolError naming what is wrong."""
    if not isinstance(steps, list):
        raise ToolError(f"Tool error: update_plan: steps must be a list, got {type(steps).__name__}")
    good = []
    for n, step in enumerate(steps, 1):
        try:
            good.append(_check_step(n, step))
        except ToolError:
            if not options.has("plan-wrong-shape-accepted"):
                raise
    return good


def _check_step(n: int, step: Any) -> dict[str, Any]:
    where = f"Tool error: update_plan: step {n}"
    if not isinstance(step, dict):
        raise ToolError(f"{where} must be an object")
    unknown = sorted(set(step) - {"label", "state", "note"})
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
    keep = MAX_STEPS + 1 if options.has("plan-21-steps") else MAX_STEPS
    plan = []
    for step in steps[:keep]:
        out = {"label": _cut_label(step["label"], options), "state": step["state"]}
        if "note" in step:
            out["note"] = _cut_note(step["note"], options)
        elif options.has("plan-note-null"):
            out["note"] = None
        if options.has("plan-unknown-state") and out["state"] == "active":
            out["state"] = "in_progress"
        plan.append(out)
    return plan


def too_long(steps: list[dict[str, Any]]) -> bool:
    return len(steps) > MAX_STEPS or any(
        len(s["label"]) > LABEL_MAX or len(s.get("note", "")) > NOTE_MAX for s in steps)


def cut(text: str, limit: int) -> str:
    """The reference cut: code points, exactly `limit` including the ellipsis."""
    return text if len(text) <= limit else text[:limit - 1] + ELLIPSIS


def _cut_label(text: str, options: Options) -> str:
    if options.has("plan-cut-utf16"):
        return _utf16_cut(text, LABEL_MAX, split=False)
    if options.has("plan-cut-splits-surrogate"):
        return _utf16_cut(text, LABEL_MAX, split=True)
    if len(text) <= LABEL_MAX:
        return text
    if options.has("plan-cut-no-ellipsis"):
        return text[:LABEL_MAX]
    if options.has("plan-cut-121"):
        return text[:LABEL_MAX] + ELLIPSIS
    return cut(text, LABEL_MAX)


def _cut_note(text: str, options: Options) -> str:
    if len(text) <= NOTE_MAX:
        return text
    if options.has("plan-note-no-ellipsis"):
        return text[:NOTE_MAX]
    if options.has("plan-note-cut-281"):
        return text[:NOTE_MAX] + ELLIPSIS
    return cut(text, NOTE_MAX)


def _utf16_cut(text: str, limit: int, split: bool) -> str:
    """A cut counted in UTF-16 code units, as a JavaScript runtime counts `length`. With `split`, a
    surrogate pair at the cut is halved and the lone half comes out as U+FFFD (what a UTF-16 string
    with a lone surrogate becomes once encoded as UTF-8); without, the pair is dropped whole."""
    units = text.encode("utf-16-le")
    if len(units) // 2 <= limit:
        return text
    kept = units[:(limit - 1) * 2]
    return kept.decode("utf-16-le", "replace" if split else "ignore") + ELLIPSIS


def diff(previous: list[dict[str, Any]] | None, plan: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `plan-diff` fault: only the steps that are new or changed since the previous plan."""
    if previous is None:
        return plan
    return [step for step in plan if step not in previous]
