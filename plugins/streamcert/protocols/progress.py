"""LLeMbas progress 3.4.0 (seed 003): the progress object {phase, since, data}, its thirteen phases,
the fixed words some fields take, and the pacing of a progress stream.
"""

from __future__ import annotations

PHASES = ("queued", "waiting_for_model", "loading_model", "reading_prompt", "thinking", "writing",
          "running_tool", "waiting_for_person", "waiting_for_subagents", "compacting", "retrying",
          "stopped", "failed")
ENDINGS = ("stopped", "failed")  # a turn's last progress when it does not end normally (then null)

# Fields that name the thing a phase is about: a change of one of them is another thing (a new since).
IDENTITY = {"waiting_for_model": ("model",), "loading_model": ("model",), "running_tool": ("tool", "what"),
            "waiting_for_person": ("what", "tool"), "retrying": ("reason", "attempt", "in"),
            "stopped": ("reason",), "failed": ("reason",)}

# The fixed words of waiting_for_model.reason, waiting_for_person.what and stopped.reason.
MODEL_REASONS = ("busy", "slots", "group")
PERSON_WHATS = ("approval", "question", "plan")
STOP_REASONS = ("person", "steps", "budget")

WHAT_MAX = 80  # running_tool.what: one line, at most 80 characters

# §5: a new phase is sent at once, a data-only change at most four times a second.
PACING_INTERVAL_S = 0.25
