"""The reference's progress stream (seed 003): POST a DESIGN §6 script, read SSE whose events are
`{"status": <the old free status text>, "progress": <object> | null}`.

A small runtime plays the script and keeps the progress object the seed describes:
  read_prompt {total, updates, ms}  reading_prompt; done/total from the first prompt-progress frame on
  think MS                          thinking
  write {tokens, ms}                writing; rate (one decimal) once tokens are measured, as it changes
  tool {name, what?, ms}            running_tool; every call a new `since`; `what` one line, ≤ 80 chars
  ask PROMPT / call {tool, …}       waiting_for_person (question / approval with tool), held through the
                                    `sleep` steps that follow (the person's time; nobody answers here)
  stop "person"|"steps"|"budget"    stopped {reason}: the turn ends (an additive step, seed 003 §2)
  fail TEXT                         failed {reason: TEXT's first line}: the turn ends
  finish TEXT (or the last step)    the turn ends normally: progress null
  status TEXT                       the status text (sent beside progress, unchanged); say: no change
  sleep MS                          the phase holds
Steps are timed against one schedule, so the turn does not drift as steps accumulate.
The faults of this route follow the correct code (and pacing.py holds the pacing faults).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from ..protocols import a2a
from ..protocols.progress import STOP_REASONS, WHAT_MAX
from ..protocols.script import SCRIPT_KEY, SCRIPT_VERSION
from .faults import switch
from .options import Options
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


class Turn:
    """One turn of the runtime: plays the steps and sends (status, progress) frames to `out`."""

    def __init__(self, options: Options, out: asyncio.Queue) -> None:
        self.options = options
        self.out = out
        self.status_text = ""
        self.progress: dict[str, Any] | None = None  # the current progress (what the runtime knows)
        self.sent: dict[str, Any] | None = None  # the progress last written to the stream
        self.pacer = pacer_for(options, self._send)
        self.loop = asyncio.get_running_loop()
        self.deadline = self.loop.time()

    # -- sending ---------------------------------------------------------------------------------
    def _send(self, progress: dict[str, Any] | None) -> None:
        self.sent = progress
        self.out.put_nowait({"status": _break_status(self.status_text, progress, self.options), "progress": progress})

    async def phase(self, name: str, **data: Any) -> None:
        """A new phase (or the same phase for another thing): a new `since`, sent at once."""
        self.progress = {"phase": name, "since": _since(self, name, data), **data}
        await self.pacer.phase(_break_progress(dict(self.progress), self.options))

    def update(self, **data: Any) -> None:
        """A data-only change of the current phase: `since` kept, paced."""
        assert self.progress is not None
        self.progress = {**self.progress, **data}
        self.pacer.data(_break_progress(dict(self.progress), self.options, data_only=True))

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

    # -- playing ---------------------------------------------------------------------------------
    async def play(self, steps: list[Any]) -> None:
        try:
            if UNKNOWN_PHASE.on(self.options):
                await self.phase("preparing")  # the fault: a phase of no such name opens the turn
            for step in steps:
                if not isinstance(step, dict) or len(step) != 1:
                    raise ScriptError(f"a step is an object with exactly one key, got {step!r}")
                name, arg = next(iter(step.items()))
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


async def step_read_prompt(turn: Turn, arg: Any) -> None:
    arg = _obj(arg, "read_prompt")
    total, updates = _int(arg.get("total"), "read_prompt.total"), _int(arg.get("updates", 0), "read_prompt.updates")
    span = _ms(arg.get("ms", 0), "read_prompt.ms")
    # No prompt-progress frame has come yet: done and total are not known (left out).
    await turn.phase("reading_prompt")
    for k in range(1, updates + 1):
        await turn.wait(span / updates)
        turn.update(done=total * k // updates, total=total)
    if not updates:
        await turn.wait(span)


async def step_think(turn: Turn, arg: Any) -> None:
    span = _ms(arg, "think")
    await turn.phase("thinking")
    await turn.wait(span)


async def step_write(turn: Turn, arg: Any) -> None:
    arg = _obj(arg, "write")
    tokens, span = _int(arg.get("tokens"), "write.tokens"), _ms(arg.get("ms", 0), "write.ms")
    # Nothing measured yet: no rate (left out).
    await turn.phase("writing")
    elapsed, last = 0.0, None
    while elapsed < span:
        step = min(WRITE_TICK_S, span - elapsed)
        await turn.wait(step)
        elapsed += step
        # The writer speeds up (tokens grow as elapsed^1.5), so the measured rate keeps changing.
        written = round(tokens * (elapsed / span) ** 1.5)
        if written and elapsed > 0:
            rate = round(written / elapsed, 1)
            if rate != last:
                turn.update(rate=rate)
                last = rate


async def step_tool(turn: Turn, arg: Any) -> None:
    arg = _obj(arg, "tool")
    name = arg.get("name")
    if not isinstance(name, str) or not name:
        raise ScriptError("tool.name must be a non-empty string")
    span = _ms(arg.get("ms", 0), "tool.ms")
    data: dict[str, Any] = {"tool": name}
    what = arg.get("what")
    if isinstance(what, str) and what.strip():  # else no what: not known (left out)
        data["what"] = what if WHAT_UNSHORTENED.on(turn.options) else short_line(what)
    await turn.phase("running_tool", **data)
    await turn.wait(span)


async def step_ask(turn: Turn, arg: Any) -> None:
    if not isinstance(arg, str):
        raise ScriptError("ask takes the question's text")
    await turn.phase("waiting_for_person", what="question")


async def step_call(turn: Turn, arg: Any) -> None:
    arg = _obj(arg, "call")
    tool = arg.get("tool")
    await turn.phase("waiting_for_person", what="approval", **({"tool": tool} if isinstance(tool, str) and tool else {}))


async def step_sleep(turn: Turn, arg: Any) -> None:
    await turn.wait(_ms(arg, "sleep"))


async def step_status(turn: Turn, arg: Any) -> None:
    if not isinstance(arg, str):
        raise ScriptError("status takes a text")
    turn.status_text = arg
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
    "read_prompt": step_read_prompt, "think": step_think, "write": step_write, "tool": step_tool,
    "ask": step_ask, "call": step_call, "sleep": step_sleep, "status": step_status, "say": step_say,
    "stop": step_stop, "fail": step_fail, "finish": step_finish,
}


# -- fault variants ---------------------------------------------------------------------------------
UNKNOWN_PHASE = switch("prog-unknown-phase")
SINCE_SECONDS = switch("prog-since-seconds")
SINCE_NOT_RENEWED = switch("prog-since-not-renewed")
SINCE_RESET_ON_DATA = switch("prog-since-reset-on-data")
NULL_FIELD = switch("prog-null-field")
FIELD_TYPES = switch("prog-field-types")
DONE_WITHOUT_TOTAL = switch("prog-done-without-total")
GUESSED_WHAT = switch("prog-guessed-what")
WHAT_UNSHORTENED = switch("prog-what-unshortened")
PHASE_MISMATCH = switch("prog-phase-mismatch")
STATUS_REPLACED = switch("prog-status-replaced")
STOPPED_THEN_NULL = switch("prog-stopped-then-null")
ENDS_WITH_LAST_PHASE = switch("prog-ends-with-last-phase")
END_FAULTS = (STOPPED_THEN_NULL, ENDS_WITH_LAST_PHASE)

# prog-null-field: the fields a phase sends as null while they are not known.
UNKNOWN_FIELDS = {"reading_prompt": ("done", "total"), "writing": ("rate",), "running_tool": ("what",)}


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
    if DONE_WITHOUT_TOTAL.on(options) and phase == "reading_prompt":
        progress.pop("total", None)
    if GUESSED_WHAT.on(options) and phase == "running_tool":
        progress.setdefault("what", progress["tool"])
    if PHASE_MISMATCH.on(options) and phase == "waiting_for_person" and progress.get("what") == "question":
        progress["what"] = "approval"
    if SINCE_RESET_ON_DATA.on(options) and data_only:
        progress["since"] = _now_ms()
    return progress


def _break_status(text: str, progress: dict[str, Any] | None, options: Options) -> str:
    if STATUS_REPLACED.on(options) and progress is not None:
        return f"Working: {progress['phase']}"
    return text


async def _broken_end(turn: Turn, progress: dict[str, Any] | None) -> None:
    """Turn.end as the end faults send it: null after stopped or failed; no null after a finished turn."""
    if progress is not None:
        await turn.phase(progress.pop("phase"), **progress)
        if STOPPED_THEN_NULL.on(turn.options):
            await turn.pacer.phase(None)
    elif not ENDS_WITH_LAST_PHASE.on(turn.options):
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
            runner = asyncio.create_task(turn.play(steps))
            try:
                while (item := await out.get()) is not _END:
                    yield _frame(item)
            finally:
                runner.cancel()
                turn.pacer.close()

        return StreamingResponse(events(), headers={"content-type": a2a.SSE_MEDIA_TYPE, "cache-control": "no-cache"})

    return progress
