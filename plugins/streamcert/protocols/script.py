"""The test-agent script (docs/contracts.md §6, version 1): how the suite tells any target's test agent what to do.

On A2A it rides in the first message's metadata, on ACP in session/prompt `_meta`, on a progress
stream in the request body, always under SCRIPT_KEY: {"version": 1, "name": ..., "steps": [...]}.
"""

from __future__ import annotations

from . import interactions_v1

SCRIPT_KEY = "urn:streamcert:script"
SCRIPT_VERSION = 1

# The steps that pause the turn for a person, and the interactions/v1 kind each raises.
PAUSING = {"ask": interactions_v1.QUESTION, "call": interactions_v1.APPROVAL, "connect": interactions_v1.CONNECTION}

# Every step name of docs/contracts.md §6 and docs/script-extensions.md, as a test agent declares the ones it plays.
STEP_NAMES = (
    "status", "artifact", "plan", "ask", "call", "connect", "say", "sleep", "finish", "fail", "read_prompt", "think",
    "write", "tool", "stop", "queued", "wait_model", "load_model", "compact", "retry", "propose_plan", "write_call",
    "tools", "subagents", "acp_plan", "acp_plan_removed",
)
# The steps whose only trace on A2A is what the stream says (texts, artifacts, the final message): a scenario of the
# `a2a` profile is driven without them, its content comparison leaving them out. Every other step shapes what the
# suite does (a pause to answer, a task kept running to cancel, a failed task to filter, a plan to judge).
CONTENT_STEPS = frozenset({"status", "artifact", "say", "finish"})


def step_names(script: object) -> list[str]:
    """The names of a script's steps, in order of first use (a step is an object with one key)."""
    steps = script.get("steps") if isinstance(script, dict) else None
    names = [next(iter(s)) for s in steps or [] if isinstance(s, dict) and len(s) == 1]
    return list(dict.fromkeys(names))


def declared_steps(card: object) -> frozenset[str] | None:
    """The steps a card's test agent says it plays: the `steps` in `params` of its extension entry for SCRIPT_KEY
    (None when the card has no such entry, or one without a list of steps: nothing is declared)."""
    caps = card.get("capabilities") if isinstance(card, dict) else None
    for ext in (caps.get("extensions") if isinstance(caps, dict) else None) or []:
        if isinstance(ext, dict) and ext.get("uri") == SCRIPT_KEY:
            params = ext.get("params")
            steps = params.get("steps") if isinstance(params, dict) else None
            if isinstance(steps, list):
                return frozenset(s for s in steps if isinstance(s, str))
    return None

# The frame log notes a driver writes for the rules (docs/script-extensions.md, "What a test agent plays"):
PLAYED_NOTE = "script_steps"  # the steps the test agent plays, when it plays fewer than all ([] : none)
IGNORED_NOTE = "script_ignored"  # why the suite holds that the test agent ignores the script
NO_SCRIPT_NOTE = "no_script"  # the run judges the agent as it is (`--prompt`): no script was sent
# The NOT_TESTED reason of what rests on a script when the run sends none (the report's summary counts them)
NEEDS_SCRIPT = "needs a script: the run judges the agent as it is (--prompt) and sends none"


def plays(notes: dict, step: str) -> bool:
    """Whether the test agent of a frame log (by its notes) plays `step`."""
    played = notes.get(PLAYED_NOTE)
    return played is None or step in played


def not_played(notes: dict, script: object) -> list[str]:
    """The steps of `script` the test agent of a frame log does not play, in order of first use."""
    return [name for name in step_names(script) if not plays(notes, name)]


def named(steps: list[str]) -> str:
    return ", ".join(f"`{s}`" for s in steps)
