"""Agent Client Protocol plans (specs/acp-plans.md; seed 002 for protocol version 2): the names the
driver, the rules and the reference agent share. Reading stdout lines into JSON-RPC messages is in
wire/jsonlines.py; the script key (in session/prompt `_meta`) in protocols/script.py.
"""

from __future__ import annotations

VERSIONS = (1, 2)  # protocol versions the suite knows; 2 is the seed's (draft) text
LATEST = 2

STOP_REASONS = ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled")
PLAN_TYPES = ("items", "markdown", "file")
PRIORITIES = ("high", "medium", "low")
STATUSES = {1: ("pending", "in_progress", "completed"), 2: ("pending", "in_progress", "completed", "cancelled")}

# sessionUpdate values that carry plans
PLAN = "plan"  # v1 stable: {entries}
PLAN_UPDATE = "plan_update"  # v1 unstable and v2: {plan: {type, planId, ...}}
PLAN_REMOVED = "plan_removed"  # v1 unstable and v2: {planId}
PLAN_KINDS = (PLAN, PLAN_UPDATE, PLAN_REMOVED)
