"""Driver for the progress/v1 plan scenarios (profile `plans`, rules/plans.py).

Labels written:
  card        GET the agent card (of the target, or of the agent the scenario names)
  stream      SendStreamingMessage carrying the script, with progress/v1 activated
  get_task    GetTask after the stream (extension activated)
  list_tasks  ListTasks by the task's contextId (extension activated)

A scenario may name `"agent": "no-plan"` or `"plan-shadow"`: the implementation's agent without
update_plan, or with its own tool of that name. The suite looks for it at <target>/agents/<name>
(where the reference serves them); without an agent card there, its requirements are UNSUPPORTED.
log.notes["plan_agent"] says which agent played ("plan", "no-plan", "shadow").
"""

from __future__ import annotations

from ..catalogue import Scenario
from ..framelog import FrameLog
from ..protocols import a2a, progress_v1
from . import Target, driver
from .a2a import _open, declared_extensions, streaming_declared, task_ids, unsupported, user_message

AGENT_KINDS = {"no-plan": "no-plan", "plan-shadow": "shadow"}


@driver("plans")
async def plans(target: Target, scenario: Scenario, log: FrameLog) -> None:
    name = scenario.data.get("agent")
    url = (target.a2a_url or "").rstrip("/") + (f"/agents/{name}" if name else "")
    log.notes["plan_agent"] = AGENT_KINDS.get(name, "plan")
    client, card = await _open(target, log, url)
    try:
        reqs = list(scenario.requirements)
        if not isinstance(card, dict):
            unsupported(log, reqs, f"no agent card at {url}: this case needs the implementation's "
                                   f"{name or 'plan'} agent there")
            return
        if progress_v1.URI not in declared_extensions(card):
            unsupported(log, reqs, f"the card does not declare {progress_v1.URI}")
            return
        if not streaming_declared(card):
            unsupported(log, reqs, "the card does not declare capabilities.streaming: true")
            return
        exts = [progress_v1.URI]
        stream = await client.stream(a2a.SEND_STREAMING_MESSAGE, {"message": user_message(
            scenario.data.get("prompt", "Plan the work"), script=scenario.script)}, label="stream", extensions=exts)
        task_id, context_id = task_ids(stream)
        if not task_id:
            return
        await client.call(a2a.GET_TASK, {"id": task_id}, label="get_task", extensions=exts)
        if context_id:
            await client.call(a2a.LIST_TASKS, {"contextId": context_id}, label="list_tasks", extensions=exts)
    finally:
        await client.__aexit__()
