"""Driver for the progress/v1 plan scenarios (profile `plans`, rules/plans/plans.py).

Labels written:
  card        GET the agent card (of the target, or of the agent the scenario names)
  stream      SendStreamingMessage carrying the script, with progress/v1 activated
  get_task    GetTask after the stream (extension activated)
  list_tasks  ListTasks by the task's contextId (extension activated)

A scenario may name `"agent": "no-plan"` or `"plan-shadow"`: the implementation's agent without
update_plan, or with its own tool of that name, given by `--no-plan-url` / `--plan-shadow-url` (the
embedded reference serves them under /agents/); without that URL, or without an agent card there,
its requirements are UNSUPPORTED with the reason. log.notes["plan_agent"] says which agent played
("plan", "no-plan", "shadow").
"""

from __future__ import annotations

from ..catalogue import Scenario
from ..contract.a2a import PLAN_AGENT
from ..contract.labels.a2a import GET_TASK, LIST_TASKS, STREAM
from ..framelog import FrameLog
from ..protocols import a2a, progress_v1
from . import Target, driver
from .a2a import _open, declared_extensions, streaming_declared, task_ids, unsupported, user_message

AGENT_KINDS = {"no-plan": "no-plan", "plan-shadow": "shadow"}
AGENT_URLS = {"no-plan": ("no_plan_url", "--no-plan-url", "agent without update_plan"),
              "plan-shadow": ("plan_shadow_url", "--plan-shadow-url", "agent with its own tool named update_plan")}


@driver("plans")
async def plans(target: Target, scenario: Scenario, log: FrameLog) -> None:
    name = scenario.data.get("agent")
    log.notes[PLAN_AGENT] = AGENT_KINDS.get(name, "plan")
    url = target.a2a_url or ""
    if name:
        field, option, what = AGENT_URLS[name]
        url = getattr(target, field) or ""
        if not url:
            unsupported(log, list(scenario.requirements), f"this case needs the implementation's {what}: "
                                                          f"give its URL with {option}")
            return
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
            scenario.data.get("prompt", "Plan the work"), script=scenario.script)}, label=STREAM, extensions=exts)
        task_id, context_id = task_ids(stream)
        if not task_id:
            return
        await client.call(a2a.GET_TASK, {"id": task_id}, label=GET_TASK, extensions=exts)
        if context_id:
            await client.call(a2a.LIST_TASKS, {"contextId": context_id}, label=LIST_TASKS, extensions=exts)
    finally:
        await client.__aexit__()
