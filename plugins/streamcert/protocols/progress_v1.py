"""The nylorun A2A extension progress/v1 (seed 000): the agent's plan, from its `update_plan` tool,
sent whole in status-update metadata under the extension URI as {"steps": [{label, state, note?}, ...]}.
"""

from __future__ import annotations

URI = "https://docs.nylorun.com/a2a/progress/v1"
STEP_FIELDS = ("label", "state", "note")  # note is optional
STATES = ("pending", "active", "done", "blocked", "skipped")

# Limits, counted in Unicode code points; a longer label or note is cut to its limit, ending in ELLIPSIS.
MAX_STEPS = 20  # steps past the 20th are dropped
LABEL_MAX = 120
NOTE_MAX = 280
ELLIPSIS = "…"

TOOL = "update_plan"
PLAN_UPDATED = "Plan updated"  # the tool result the model sees after a well-shaped call
