"""What the A2A agent's test agent plays of the script (docs/script-extensions.md, "What a test agent plays"),
learned once the driver has the card: the steps its card declares, else those `--script-steps` names, else all
of them, unless its first stream shows that it ignores the script (the probe below, once per target and process).

A scenario whose structure rests on a step the agent does not play is not driven: its requirements are
UNSUPPORTED with the reason ("the test agent does not play `ask`"), or NOT_TESTED when the agent ignores the
script. What the driver learnt goes into the log's notes (protocols/script.py PLAYED_NOTE, IGNORED_NOTE); the
rules comparing content leave out the steps not played.

The probe (SendStreamingMessage of a two-step script, label script_probe, the first stream to an agent that declares
nothing) goes into a log of its own: it is the harness's question, in no scenario's log or cassette.
"""

from __future__ import annotations

import asyncio
import uuid
from contextvars import ContextVar
from typing import Any

from .. import limits
from ..catalogue import Scenario
from ..contract.labels.a2a import SCRIPT_PROBE
from ..contract.run import NOT_TESTED, UNSUPPORTED
from ..framelog import END_CLOSED, FrameLog, forget_last_parse
from ..protocols import a2a, bindings
from ..protocols.script import (
    CONTENT_STEPS,
    IGNORED_NOTE,
    NEEDS_SCRIPT,
    NO_SCRIPT_NOTE,
    PLAYED_NOTE,
    SCRIPT_KEY,
    SCRIPT_VERSION,
    STEP_NAMES,
    declared_steps,
    named,
    plays,
    step_names,
)
from ..targets import Target
from ..wallclock import now
from ..wire.clients import client_for

# The probe waits this long at most: a target slower than that is not judged by it (never blamed), and a silent one
# costs the run seconds, not its stream limit.
PROBE_LIMIT_S = 3.0

# The drivers that play their scenario without a script when the run judges the agent as it is (`--prompt`): the
# card, the refused requests, the prompts' streams read back, a subscription and a cancel.
OBSERVED_DRIVERS = frozenset({"card", "errors", "stream-task", "cancel-subscribe", "extension-required",
                              "no-streaming", "security"})
# Whether this scenario's messages carry the script (False when the run sends prompts alone)
SENDS_SCRIPT: ContextVar[bool] = ContextVar("SENDS_SCRIPT", default=True)



class NotDriven(Exception):
    """The scenario's structure cannot be played by this test agent: its requirements are noted, nothing is sent."""


def needed_steps(scenario: Scenario) -> list[str]:
    """The steps the scenario's structure rests on: every step of its scripts but, for the `a2a` profile, the steps
    whose only trace is the content compared (CONTENT_STEPS: no driver waits on one) and those the scenario says it
    is driven without (`plays_without`). The `interactions` and `plans` scenarios judge what their scripts produce:
    every step."""
    scripts = [scenario.script, scenario.data.get("other_script"), *(scenario.data.get("scripts") or [])]
    names = list(dict.fromkeys(n for s in scripts for n in step_names(s)))
    spared = set(scenario.data.get("plays_without") or ())
    if scenario.profile == "a2a":
        spared |= CONTENT_STEPS
    return [n for n in names if n not in spared]


async def learn(client: Any, card: Any, target: Target, log: FrameLog, scenario: Scenario | None) -> None:
    """Note what the test agent plays; raise NotDriven (its requirements noted) when the scenario cannot be played."""
    if target.prompts:  # judged as it is: no script is sent (a2a.user_message), what rests on one is NOT_TESTED
        SENDS_SCRIPT.set(False)
        log.notes[NO_SCRIPT_NOTE] = True
        log.notes[PLAYED_NOTE] = []
        if scenario is not None and scenario.data.get("driver") not in OBSERVED_DRIVERS:
            log.notes.setdefault(NOT_TESTED, {}).update({r: NEEDS_SCRIPT for r in scenario.requirements})
            raise NotDriven(scenario.id)
        return
    declared = declared_steps(card)
    if declared is None and target.script_steps is not None:
        declared = frozenset(target.script_steps)
    if declared is not None:
        if not declared >= set(STEP_NAMES):
            log.notes[PLAYED_NOTE] = sorted(declared)
    elif (ignored := await _probe(client, card, target, log)) is not None:
        log.notes[PLAYED_NOTE] = []
        log.notes[IGNORED_NOTE] = ignored
    if scenario is None or PLAYED_NOTE not in log.notes:
        return
    missing = [n for n in needed_steps(scenario) if not plays(log.notes, n)]
    if not missing:
        return
    if IGNORED_NOTE in log.notes:
        log.notes.setdefault(NOT_TESTED, {}).update(
            {r: f"the test agent ignores the script ({log.notes[IGNORED_NOTE]})" for r in scenario.requirements})
    else:
        log.notes.setdefault(UNSUPPORTED, {}).update(
            {r: f"the test agent does not play {named(missing)}" for r in scenario.requirements})
    raise NotDriven(scenario.id)


async def _probe(client: Any, card: Any, target: Target, log: FrameLog) -> str | None:
    """Once per target: stream a two-step script (a status, a finish) to an agent that declares nothing; when the
    stream ends (closed by the agent) having shown neither text, the agent ignores the script (returned: why).
    None when it plays it, or when there is no whole stream to tell by (the card declares no streaming, no answer,
    or a stream still going at PROBE_LIMIT_S: a slow agent is never taken for one that ignores the script).
    A scenario's plays over several bindings run at once (drivers.run_scenarios): the first to ask sends the probe,
    the others wait for its verdict, so the run has one verdict per agent whatever the order the plays reach it."""
    url, probed = client.base_url, target.script_probes
    if url in probed:
        known = probed[url]
        return await asyncio.shield(known) if isinstance(known, asyncio.Future) else known
    pending: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
    probed[url] = pending
    try:
        verdict = await _ask(client, card, target, url)
    except BaseException:  # no verdict (the play was cut): the next play asks again; none waiting is blamed
        del probed[url]
        pending.set_result(None)
        raise
    probed[url] = verdict
    pending.set_result(verdict)
    return verdict


async def _ask(client: Any, card: Any, target: Target, url: str) -> str | None:
    """The probe itself (_probe): its verdict on the agent at `url`."""
    caps = card.get("capabilities") if isinstance(card, dict) else None
    if not (isinstance(caps, dict) and caps.get("streaming") is True):
        return None
    mark = uuid.uuid4().hex[:12]
    status, finish = f"streamcert probe {mark} working", f"streamcert probe {mark} done"
    message = {"messageId": str(uuid.uuid4()), "role": a2a.ROLE_USER, "parts": [{"text": "Play the script"}],
               "metadata": {SCRIPT_KEY: {"version": SCRIPT_VERSION, "name": SCRIPT_PROBE,
                                         "steps": [{"status": status}, {"finish": finish}]}}}
    # A log of its own: the probe is the suite's question to the harness, not a scenario's (nor in its cassette)
    probe_log = FrameLog(scenario=SCRIPT_PROBE, target=url, started=now())
    async with client_for(target, probe_log, url, stream_limit=min(target.stream_limit, PROBE_LIMIT_S)) as probe:
        probe.use_card(card)
        ex = await probe.stream(a2a.SEND_STREAMING_MESSAGE, {"message": message}, label=SCRIPT_PROBE)
    said, states = _agent_texts(ex)
    # What the probe read is let go now, not when a collection finds its log: a large event's text, its parse
    # (framelog's last parse) and the exchange's data-event list (`derived`) are not carried into the scenario.
    ex.let_go_of_events()
    forget_last_parse()
    # Only a whole turn tells: the agent closed the stream after a terminal state. Anything less (no answer, a
    # stream cut or closed before the turn ended) says nothing about the script, and nobody is blamed on it.
    whole = ex.end == END_CLOSED and any(state in a2a.TERMINAL_STATES for state in states)
    if ex.status is None or not whole:
        return None
    shown = [limits.cut(text, limits.MIN_QUOTE_CHARS) for text in said[:2]]  # quoted, never copied (a note)
    return None if status in said or finish in said else (
        f"its first stream, a script of one status and a finish, showed neither text (it said {shown!r})")


def _agent_texts(ex: Any) -> tuple[list[str], list[str]]:
    """The texts of the status messages a stream carries (its Task's and its status updates'), and its states."""
    texts, states = [], []
    for ev in ex.data_events():
        result = bindings.frame_answer(ex.binding or bindings.JSONRPC, ev.payload)[0]
        if not isinstance(result, dict):
            continue
        holder = result.get("task") if isinstance(result.get("task"), dict) else result.get("statusUpdate")
        status = holder.get("status") if isinstance(holder, dict) else None
        if isinstance(status, dict) and isinstance(status.get("state"), str):
            states.append(status["state"])
        message = status.get("message") if isinstance(status, dict) else None
        parts = message.get("parts") if isinstance(message, dict) else None
        texts += [p["text"] for p in parts or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return texts, states
