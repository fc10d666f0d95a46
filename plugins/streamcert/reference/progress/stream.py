"""The reference's progress stream (seed 003): POST a docs/contracts.md §6 script, read SSE whose events are
`{"status": <the old free status text>, "progress": <object> | null}`, and for a subagent's progress
`"agent": <its id>` beside them (the link's phase event `{progress, agent?}`, passed on in the same frames).

A small runtime plays the script and keeps the progress object the seed describes
(docs/script-extensions.md has the steps this project added):
  queued {ahead?, ms}               queued; ahead counts down as each turn ahead ends (ms / ahead each)
  wait_model {model, reason, ms}    waiting_for_model (the same model again: the reason changes, since kept)
  load_model {model, ms}            loading_model
  read_prompt {total, updates, ms}  reading_prompt; done/total from the first prompt-progress frame on
  think MS                          thinking
  write {tokens, ms}                writing; rate (one decimal) once tokens are measured, as it changes
  write_call {tool?, tokens, ms}    writing, while a tool call's arguments stream (§4), as write
  tool {name, what?, ms}            running_tool; every call a new `since`; `what` one line, ≤ 80 chars
  tools [{name, what?, at?, ms}…]   calls in parallel: running_tool shows, of the calls running, the one
                                    that started first (at from the first start; equal at: in list order)
  ask PROMPT / call {tool, …}       waiting_for_person (question / approval with tool), held through the
  propose_plan TEXT                 `sleep` steps that follow (the person's time; nobody answers here);
                                    propose_plan: what plan
  subagents [{id, steps}…]          waiting_for_subagents {running}: the subagents play their steps at
                                    once, each frame of theirs carrying agent; running counts down as
                                    each ends; the turn goes on when the last has ended
  compact MS                        compacting
  retry {reason, in, attempt?, ms}  retrying {reason: its first line, in, attempt}; the retry after ms
  stop "person"|"steps"|"budget"    stopped {reason}: the turn ends (an additive step, seed 003 §2)
  fail TEXT                         failed {reason: TEXT's first line}: the turn ends
  finish TEXT (or the last step)    the turn ends normally: progress null
  status TEXT                       the status text (sent beside progress, unchanged); say: no change
  sleep MS                          the phase holds
Steps are timed against one schedule, so the turn does not drift as steps accumulate; a subagent's
schedule starts at its `subagents` step's. Each agent has its own progress and pacing.
The faults of this route follow the correct code (and pacing.py holds the pacing faults).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from ...protocols import a2a
from ...protocols.progress import MODEL_REASONS, STOP_REASONS, WHAT_MAX
from ...protocols.script import SCRIPT_KEY, SCRIPT_VERSION
from ..agent.options import Options
from ..faults import switch, variant
from .pacing import pacer_for

PATH = "/progress"
WRITE_TICK_S = 0.02
_END = object()


class ScriptError(Exception):
    pass


def short_line(text: str, limit: int = WHAT_MAX) -> str:
    """One line of at most `limit` characters: the first non-blank line, cut with an ellipsis."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"


class Chat:
    """What the agents of one turn share: the stream, the old free status text, the subagent ids in use."""

    def __init__(self, out: asyncio.Queue) -> None:
        self.out = out
        self.status_text = ""
        self.ids: set[str] = set()


class Turn:
    """One agent's turn (the main agent's, or a subagent's with its id): plays the steps and sends
    (status, progress[, agent]) frames to the chat's stream."""

    def __init__(self, options: Options, out: asyncio.Queue, *, chat: Chat | None = None, agent: str | None = None,
                 deadline: float | None = None) -> None:
        self.options = options
        self.chat = chat or Chat(out)
        self.out = self.chat.out
        self.agent = agent  # None: the main agent
        self.progress: dict[str, Any] | None = None  # the current progress (what the runtime knows)
        self.sent: dict[str, Any] | None = None  # the progress last written to the stream
        self.pacer = pacer_for(options, self._send)
        self.loop = asyncio.get_running_loop()
        self.deadline = self.loop.time() if deadline is None else deadline

    # -- sending ---------------------------------------------------------------------------------
    def _send(self, progress: dict[str, Any] | None) -> None:
        self.sent = progress
        frame = {"status": _break_status(self.chat.status_text, progress, self.options), "progress": progress}
        if self.agent is not None:
            frame["agent"] = self.agent
        self.out.put_nowait(_break_frame(frame, self.options))

    async def phase(self, name: str, **data: Any) -> None:
        """A new phase (or the same phase for another thing): a new `since`, sent at once."""
        self.progress = {"phase": name, "since": _since(self, name, data), **data}
        if not _hidden(self):
            await self.pacer.phase(_break_progress(dict(self.progress), self.options))

    def update(self, **data: Any) -> None:
        """A data-only change of the current phase: `since` kept, paced."""
        assert self.progress is not None
        self.progress = {**self.progress, **data}
        if not _hidden(self):
            self.pacer.data(_break_progress(dict(self.progress), self.options, data_only=True))

    def showing(self, phase: str, **same: Any) -> bool:
        """Whether the current progress is `phase` about the same thing (these fields equal)."""
        p = self.progress
        return p is not None and p.get("phase") == phase and all(p.get(k) == v for k, v in same.items())

    async def end(self, progress: dict[str, Any] | None) -> None:
        """The turn's end: its last phase (stopped, failed) or, when it finished, null."""
        if any(fault.on(self.options) for fault in END_FAULTS):
            return await _broken_end(self, progress)
        if progress is not None:
            await self.phase(progress.pop("phase"), **progress)
        else:
            self.progress = None
            await self.pacer.phase(None)
        self.pacer.close()

    async def wait(self, seconds: float) -> None:
        """Wait until `seconds` past the previous step's scheduled end."""
        self.deadline += seconds
        delay = self.deadline - self.loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        else:
            self.deadline = self.loop.time()  # late (e.g. a held frame): the schedule starts again from now

    async def wait_until(self, at: float) -> None:
        """Wait until `at` on the schedule (a moment inside one step, from its scheduled start): a tick that
        comes late is caught up by the next, so a step's many ticks do not push its end later."""
        self.deadline = at
        delay = at - self.loop.time()
        if delay > 0:
            await asyncio.sleep(delay)

    # -- playing ---------------------------------------------------------------------------------
    async def play(self, steps: list[Any]) -> None:
        """Play the steps to the turn's end (a script error fails the turn, with the error as its reason)."""
        try:
            if UNKNOWN_PHASE.on(self.options) and self.agent is None:
                await self.phase("preparing")  # the fault: a phase of no such name opens the turn
            for step in steps:
                if not isinstance(step, dict) or len(step) != 1:
                    raise ScriptError(f"a step is an object with exactly one key, got {step!r}")
                name, arg = next(iter(step.items()))
                if self.agent is not None and name in MAIN_ONLY:
                    raise ScriptError(f"{name} is the main agent's step (the chat's status text), not a subagent's")
                handler = STEPS.get(name)
                if handler is None:
                    raise ScriptError(f"unknown step {name!r} on a progress stream (known: {', '.join(STEPS)})")
                ending = await handler(self, arg)
                if ending is not None:
                    await self.end(ending[0])
                    return
            await self.end(None)  # the script ran out: the turn finished
        except ScriptError as exc:
            await self.end({"phase": "failed", "reason": short_line(str(exc), 200)})

    async def run(self, steps: list[Any]) -> None:
        """The main agent's turn: play it, then close the stream."""
        try:
            await self.play(steps)
        finally:
            self.out.put_nowait(_END)


def _ms(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ScriptError(f"{what} must be milliseconds (a number >= 0), got {value!r}")
    return value / 1000


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ScriptError(f"{what} must be an integer >= 0, got {value!r}")
    return value


def _obj(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ScriptError(f"{what} takes an object, got {value!r}")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ScriptError(f"{what} must be a non-empty string, got {value!r}")
    return value


# -- before the model answers ----------------------------------------------------------------------
async def step_queued(turn: Turn, arg: Any) -> None:
    arg = _obj(arg, "queued")
    span = _ms(arg.get("ms", 0), "queued.ms")
    ahead = None if arg.get("ahead") is None else _int(arg["ahead"], "queued.ahead")
    data = {} if ahead is None else {"ahead": ahead}  # no count known: ahead left out
    if turn.showing("queued"):
        if data:
            turn.update(**data)  # the same prompt waiting on: ahead is data, since kept
    else:
        await turn.phase("queued", **data)
    # The turns ahead run one after another, span / ahead each; ahead counts down as each ends.
    turns = ahead or 1
    for k in range(1, turns):
        await turn.wait(span / turns)
        turn.update(ahead=ahead - k)
    await turn.wait(span / turns)


async def step_wait_model(turn: Turn, arg: Any) -> None:
    arg = _obj(arg, "wait_model")
    model = _text(arg.get("model"), "wait_model.model")
    reason = arg.get("reason")
    if reason not in MODEL_REASONS:
        raise ScriptError(f"wait_model.reason is one of {', '.join(MODEL_REASONS)}, got {reason!r}")
    span = _ms(arg.get("ms", 0), "wait_model.ms")
    if turn.showing("waiting_for_model", model=model):
        turn.update(reason=reason)  # the same model, another reason: data, since kept
    else:
        await turn.phase("waiting_for_model", model=model, reason=reason)
    await turn.wait(span)


async def step_load_model(turn: Turn, arg: Any) -> None:
    arg = _obj(arg, "load_model")
    model = _text(arg.get("model"), "load_model.model")
    span = _ms(arg.get("ms", 0), "load_model.ms")
    await turn.phase("loading_model", model=model)
    await turn.wait(span)


async def step_read_prompt(turn: Turn, arg: Any) -> None:
    arg = _obj(arg, "read_prompt")
    total, updates = _int(arg.get("total"), "read_prompt.total"), _int(arg.get("updates", 0), "read_prompt.updates")
    span = _ms(arg.get("ms", 0), "read_prompt.ms")
    # No prompt-progress frame has come yet: done and total are not known (left out).
    await turn.phase("reading_prompt")
    start = turn.deadline
    for k in range(1, updates + 1):
        await turn.wait_until(start + span * k / updates)
        turn.update(done=total * k // updates, total=total)
    if not updates:
        await turn.wait(span)


# -- the model's output ----------------------------------------------------------------------------
async def step_think(turn: Turn, arg: Any) -> None:
    span = _ms(arg, "think")
    await turn.phase("thinking")
    await turn.wait(span)


async def _stream_tokens(turn: Turn, tokens: int, span: float) -> None:
    """writing for `span`: the reply text, or a tool call's arguments (§4), `tokens` in all."""
    # Nothing measured yet: no rate (left out).
    await turn.phase("writing")
    elapsed, last, start = 0.0, None, turn.deadline
    while elapsed < span:
        elapsed += min(WRITE_TICK_S, span - elapsed)
        await turn.wait_until(start + elapsed)
        # The writer speeds up (tokens grow as elapsed^1.5), so the measured rate keeps changing.
        written = round(tokens * (elapsed / span) ** 1.5)
        if written and elapsed > 0:
            rate = round(written / elapsed, 1)
            if rate != last:
                turn.update(rate=rate)
                last = rate


async def step_write(turn: Turn, arg: Any) -> None:
    arg = _obj(arg, "write")
    await _stream_tokens(turn, _int(arg.get("tokens"), "write.tokens"), _ms(arg.get("ms", 0), "write.ms"))


async def step_write_call(turn: Turn, arg: Any) -> None:
    arg = _obj(arg, "write_call")
    tokens, span = _int(arg.get("tokens"), "write_call.tokens"), _ms(arg.get("ms", 0), "write_call.ms")
    if ARGS_AS_THINKING.on(turn.options):
        return await _broken_write_call(turn, span)
    await _stream_tokens(turn, tokens, span)


# -- tools -------------------------------------------------------------------------------------------
def _tool_data(turn: Turn, arg: dict[str, Any], what_label: str) -> dict[str, Any]:
    name = arg.get("name")
    if not isinstance(name, str) or not name:
        raise ScriptError(f"{what_label}.name must be a non-empty string")
    data: dict[str, Any] = {"tool": name}
    what = arg.get("what")
    if isinstance(what, str) and what.strip():  # else no what: not known (left out)
        data["what"] = what if WHAT_UNSHORTENED.on(turn.options) else short_line(what)
    return data


async def step_tool(turn: Turn, arg: Any) -> None:
    arg = _obj(arg, "tool")
    data = _tool_data(turn, arg, "tool")
    span = _ms(arg.get("ms", 0), "tool.ms")
    await turn.phase("running_tool", **data)
    await turn.wait(span)


@dataclass(frozen=True)
class Call:
    """One call of a `tools` set: its position in the list, when it starts and ends (s from the first
    start), and what running_tool shows for it."""

    index: int
    at: float
    end: float
    data: dict[str, Any]


def first_started(running: list[Call]) -> Call:
    """§4: with calls in parallel, the one that started first (the same start: the one listed first)."""
    return min(running, key=lambda c: (c.at, c.index))


async def step_tools(turn: Turn, arg: Any) -> None:
    if not isinstance(arg, list) or not arg:
        raise ScriptError("tools takes a list of calls {name, what?, at?, ms}")
    calls = []
    for n, c in enumerate(arg):
        c = _obj(c, f"tools[{n}]")
        at = _ms(c.get("at", 0), f"tools[{n}].at")
        calls.append(Call(n, at, at + _ms(c.get("ms", 0), f"tools[{n}].ms"), _tool_data(turn, c, f"tools[{n}]")))
    first = min(c.at for c in calls)
    calls = [Call(c.index, c.at - first, c.end - first, c.data) for c in calls]
    reach = 0.0
    for c in sorted(calls, key=lambda c: c.at):
        if c.at > reach:
            raise ScriptError(f"tools[{c.index}] starts after every call before it has ended: not in parallel")
        reach = max(reach, c.end)
    shown_call = variant(turn.options, first_started, {PARALLEL_LAST_STARTED: _last_started})
    shown, elapsed = None, 0.0
    for t in sorted({c.at for c in calls} | {c.end for c in calls}):
        if t > elapsed:
            await turn.wait(t - elapsed)
            elapsed = t
        running = [c for c in calls if c.at <= t < c.end]
        if running and (call := shown_call(running)) is not shown:
            shown = call
            await turn.phase("running_tool", **call.data)


# -- waiting on a person, on subagents, on the server ----------------------------------------------
async def step_ask(turn: Turn, arg: Any) -> None:
    if not isinstance(arg, str):
        raise ScriptError("ask takes the question's text")
    await turn.phase("waiting_for_person", what="question")


async def step_call(turn: Turn, arg: Any) -> None:
    arg = _obj(arg, "call")
    tool = arg.get("tool")
    await turn.phase("waiting_for_person", what="approval", **({"tool": tool} if isinstance(tool, str) and tool else {}))


async def step_propose_plan(turn: Turn, arg: Any) -> None:
    if not isinstance(arg, str):
        raise ScriptError("propose_plan takes the plan's text")
    await turn.phase("waiting_for_person", what="plan")


async def step_subagents(turn: Turn, arg: Any) -> None:
    if not isinstance(arg, list) or not arg:
        raise ScriptError("subagents takes a list of {id, steps}")
    plays = []
    for n, entry in enumerate(arg):
        entry = _obj(entry, f"subagents[{n}]")
        sid, steps = _text(entry.get("id"), f"subagents[{n}].id"), entry.get("steps")
        if sid in turn.chat.ids:
            raise ScriptError(f"the subagent id {sid!r} is used twice")
        if not isinstance(steps, list):
            raise ScriptError(f"subagents[{n}].steps must be a list of steps")
        turn.chat.ids.add(sid)
        plays.append((sid, steps))
    await turn.phase("waiting_for_subagents", running=_running(len(plays), len(plays), turn.options))
    # They start together, on the schedule of this step; each has its own progress and pacing.
    agents = [Turn(turn.options, turn.out, chat=turn.chat, agent=sid, deadline=turn.deadline) for sid, _ in plays]
    tasks = [asyncio.create_task(agent.play(steps)) for agent, (_, steps) in zip(agents, plays)]
    try:
        running = len(tasks)
        for done in asyncio.as_completed(tasks):
            await done
            running -= 1
            if running:  # the last one's end is the phase's end: the next step's phase follows at once
                turn.update(running=_running(running, len(tasks), turn.options))
    finally:
        for task in tasks:
            task.cancel()
        for agent in agents:
            agent.pacer.close()
    turn.deadline = max(agent.deadline for agent in agents)  # the turn goes on from its last subagent's end


async def step_compact(turn: Turn, arg: Any) -> None:
    span = _ms(arg, "compact")
    await turn.phase("compacting")
    await turn.wait(span)


async def step_retry(turn: Turn, arg: Any) -> None:
    arg = _obj(arg, "retry")
    reason = short_line(_text(arg.get("reason"), "retry.reason"), 200)
    data: dict[str, Any] = {"reason": reason, "in": _int(arg.get("in"), "retry.in")}
    if arg.get("attempt") is not None:
        data["attempt"] = _int(arg["attempt"], "retry.attempt")
    span = _ms(arg.get("ms", 0), "retry.ms")  # the suite's time; `in` is what the server announced
    await turn.phase("retrying", **data)
    await turn.wait(span)


# -- the rest ----------------------------------------------------------------------------------------
async def step_sleep(turn: Turn, arg: Any) -> None:
    await turn.wait(_ms(arg, "sleep"))


async def step_status(turn: Turn, arg: Any) -> None:
    if not isinstance(arg, str):
        raise ScriptError("status takes a text")
    turn.chat.status_text = arg
    if STATUS_WITHOUT_PROGRESS.on(turn.options):
        return _broken_status(turn)
    if turn.sent is not None:  # the text rides on the next frame when nothing is showing yet
        turn._send(turn.sent)


async def step_say(turn: Turn, arg: Any) -> None:
    return None


async def step_stop(turn: Turn, arg: Any):
    if arg is not None and arg not in STOP_REASONS:
        raise ScriptError(f"stop takes one of {', '.join(STOP_REASONS)} (or null), got {arg!r}")
    return ({"phase": "stopped", **({"reason": arg} if arg else {})},)


async def step_fail(turn: Turn, arg: Any):
    if not isinstance(arg, str):
        raise ScriptError("fail takes the error's text")
    return ({"phase": "failed", "reason": short_line(arg, 200) or "failed"},)


async def step_finish(turn: Turn, arg: Any):
    return (None,)


STEPS = {
    "queued": step_queued, "wait_model": step_wait_model, "load_model": step_load_model,
    "read_prompt": step_read_prompt, "think": step_think, "write": step_write, "write_call": step_write_call,
    "tool": step_tool, "tools": step_tools, "ask": step_ask, "call": step_call, "propose_plan": step_propose_plan,
    "subagents": step_subagents, "compact": step_compact, "retry": step_retry, "sleep": step_sleep,
    "status": step_status, "say": step_say, "stop": step_stop, "fail": step_fail, "finish": step_finish,
}
MAIN_ONLY = ("status",)  # the chat's status text is the main agent's


# -- fault variants ---------------------------------------------------------------------------------
UNKNOWN_PHASE = switch("prog-unknown-phase")
SINCE_SECONDS = switch("prog-since-seconds")
SINCE_NOT_RENEWED = switch("prog-since-not-renewed")
SINCE_RESET_ON_DATA = switch("prog-since-reset-on-data")
NULL_FIELD = switch("prog-null-field")
FIELD_TYPES = switch("prog-field-types")
TOTAL_WITHOUT_DONE = switch("prog-total-without-done")
GUESSED_WHAT = switch("prog-guessed-what")
WHAT_UNSHORTENED = switch("prog-what-unshortened")
PHASE_MISMATCH = switch("prog-phase-mismatch")
STATUS_REPLACED = switch("prog-status-replaced")
STATUS_WITHOUT_PROGRESS = switch("prog-status-without-progress")
STOPPED_THEN_NULL = switch("prog-stopped-then-null")
ENDS_WITH_LAST_PHASE = switch("prog-ends-with-last-phase")
SUBAGENT_NO_AGENT = switch("prog-subagent-no-agent")
SUBAGENT_NO_NULL = switch("prog-subagent-no-null")
RUNNING_COUNTS_ENDED = switch("prog-running-counts-ended")
MODEL_REASON_WORDS = switch("prog-model-reason-words")
RETRY_WITHOUT_IN = switch("prog-retry-without-in")
PARALLEL_LAST_STARTED = switch("prog-parallel-last-started")
ARGS_AS_THINKING = switch("prog-args-as-thinking")
PLAN_AS_APPROVAL = switch("prog-plan-as-approval")
WAITS_NOT_SHOWN = switch("prog-waits-not-shown")
END_FAULTS = (STOPPED_THEN_NULL, ENDS_WITH_LAST_PHASE, SUBAGENT_NO_NULL)

# prog-null-field: the fields a phase sends as null while they are not known.
UNKNOWN_FIELDS = {"reading_prompt": ("done", "total"), "writing": ("rate",), "running_tool": ("what",)}
# prog-model-reason-words: the reason of waiting_for_model in the server's own words, not the fixed word.
REASON_WORDS = {"busy": "answering another request", "slots": "all slots in use", "group": "another model loaded"}
# prog-waits-not-shown: the phases of waits the runtime keeps to itself (the phase before holds).
HIDDEN_WAITS = ("queued", "loading_model", "compacting")


def _since(turn: Turn, phase: str, data: dict[str, Any]) -> int | float:
    """A new phase's since: now, in Unix milliseconds."""
    current = turn.progress
    if (SINCE_NOT_RENEWED.on(turn.options) and phase == "running_tool" and current
            and current.get("phase") == "running_tool" and current.get("tool") == data.get("tool")):
        return current["since"]  # the call of the tool already running keeps the since before
    if SINCE_SECONDS.on(turn.options):
        return time.time()
    return _now_ms()


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _break_progress(progress: dict[str, Any], options: Options, data_only: bool = False) -> dict[str, Any]:
    """The progress object as the progress faults send it."""
    phase = progress["phase"]
    if NULL_FIELD.on(options):
        for name in UNKNOWN_FIELDS.get(phase, ()):
            progress.setdefault(name, None)
    if FIELD_TYPES.on(options) and phase == "reading_prompt":
        progress.update({k: str(progress[k]) for k in ("done", "total") if k in progress})
    if TOTAL_WITHOUT_DONE.on(options) and phase == "reading_prompt":
        progress.pop("done", None)
    if GUESSED_WHAT.on(options) and phase == "running_tool":
        progress.setdefault("what", progress["tool"])
    if PHASE_MISMATCH.on(options) and phase == "waiting_for_person" and progress.get("what") == "question":
        progress["what"] = "approval"
    if SINCE_RESET_ON_DATA.on(options) and data_only:
        progress["since"] = _now_ms()
    if MODEL_REASON_WORDS.on(options) and phase == "waiting_for_model":
        progress["reason"] = REASON_WORDS.get(progress.get("reason"), progress.get("reason"))
    if RETRY_WITHOUT_IN.on(options) and phase == "retrying":
        progress.pop("in", None)
    if PLAN_AS_APPROVAL.on(options) and phase == "waiting_for_person" and progress.get("what") == "plan":
        progress["what"] = "approval"
    return progress


def _break_frame(frame: dict[str, Any], options: Options) -> dict[str, Any]:
    """A frame as the subagent-form fault sends it: a subagent's progress without its agent."""
    if SUBAGENT_NO_AGENT.on(options):
        frame.pop("agent", None)
    return frame


def _hidden(turn: Turn) -> bool:
    """prog-waits-not-shown: the current phase is one of the waits the runtime keeps to itself."""
    return WAITS_NOT_SHOWN.on(turn.options) and turn.progress is not None \
        and turn.progress.get("phase") in HIDDEN_WAITS


def _running(running: int, started: int, options: Options) -> int:
    """waiting_for_subagents.running: the subagents not yet ended (the fault: those that have ended)."""
    return started - running if RUNNING_COUNTS_ENDED.on(options) else running


def _last_started(running: list[Call]) -> Call:
    """prog-parallel-last-started: of the calls running, the one that started last."""
    return max(running, key=lambda c: (c.at, c.index))


async def _broken_write_call(turn: Turn, span: float) -> None:
    """prog-args-as-thinking: while a tool call's arguments stream, thinking is shown, not writing."""
    await turn.phase("thinking")
    await turn.wait(span)


def _break_status(text: str, progress: dict[str, Any] | None, options: Options) -> str:
    if STATUS_REPLACED.on(options) and progress is not None:
        return f"Working: {progress['phase']}"
    return text


def _broken_status(turn: Turn) -> None:
    """prog-status-without-progress: a new status text is sent at once in a frame of its own, without progress."""
    turn.out.put_nowait({"status": turn.chat.status_text})


async def _broken_end(turn: Turn, progress: dict[str, Any] | None) -> None:
    """Turn.end as the end faults send it: null after stopped or failed; no null after a finished turn
    (a subagent's, for prog-subagent-no-null)."""
    if progress is not None:
        await turn.phase(progress.pop("phase"), **progress)
        if STOPPED_THEN_NULL.on(turn.options):
            await turn.pacer.phase(None)
    elif not (ENDS_WITH_LAST_PHASE.on(turn.options) or (SUBAGENT_NO_NULL.on(turn.options) and turn.agent)):
        turn.progress = None
        await turn.pacer.phase(None)
    turn.pacer.close()


def _frame(item: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n\n"


def endpoint(options: Options):
    async def progress(request: Request) -> Response:
        try:
            body = json.loads(await request.body())
            script = body.get(SCRIPT_KEY) if isinstance(body, dict) else None
            if not isinstance(script, dict) or script.get("version") != SCRIPT_VERSION \
                    or not isinstance(script.get("steps"), list):
                raise ValueError(f"the body needs {SCRIPT_KEY}: a version 1 script with a steps list")
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        steps = script["steps"]

        async def events():
            out: asyncio.Queue = asyncio.Queue()
            turn = Turn(options, out)
            runner = asyncio.create_task(turn.run(steps))
            try:
                while (item := await out.get()) is not _END:
                    yield _frame(item)
            finally:
                runner.cancel()
                turn.pacer.close()

        return StreamingResponse(events(), headers={"content-type": a2a.SSE_MEDIA_TYPE, "cache-control": "no-cache"})

    return progress
