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
Every fault of this route is checked below, in `Faults`.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from .. import a2a
from .options import Options
from .pacing import FAULT_PHASE_HOLD_S, Pacer

PATH = "/progress"
WHAT_LIMIT = 80
WRITE_TICK_S = 0.02
STOP_REASONS = ("person", "steps", "budget")
_END = object()


@dataclass(frozen=True)
class Faults:
    """The fault variants of this route, read once from the options (grep the names: one place each)."""

    unknown_phase: bool
    since_seconds: bool
    null_field: bool
    field_types: bool
    what_unshortened: bool
    guessed_what: bool
    since_reset_on_data: bool
    since_not_renewed: bool
    phase_mismatch: bool
    status_replaced: bool
    ends_with_last_phase: bool
    stopped_then_null: bool

    @classmethod
    def of(cls, options: Options) -> "Faults":
        return cls(*(options.has(name) for name in (
            "prog-unknown-phase", "prog-since-seconds", "prog-null-field", "prog-field-types",
            "prog-what-unshortened", "prog-guessed-what", "prog-since-reset-on-data", "prog-since-not-renewed",
            "prog-phase-mismatch", "prog-status-replaced", "prog-ends-with-last-phase", "prog-stopped-then-null")))


def pacer_for(options: Options, send) -> Pacer:
    return Pacer(send, pace_data=not options.has("prog-pacing-off"),
                 send_data=not options.has("prog-data-frozen"),
                 hold_phase_s=FAULT_PHASE_HOLD_S if options.has("prog-pacing-delays-phase") else 0.0)


class ScriptError(Exception):
    pass


def short_line(text: str, limit: int = WHAT_LIMIT) -> str:
    """One line of at most `limit` characters: the first non-blank line, cut with an ellipsis."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[:limit - 1].rstrip() + "…"


class Turn:
    """One turn of the runtime: plays the steps and sends (status, progress) frames to `out`."""

    def __init__(self, options: Options, out: asyncio.Queue) -> None:
        self.faults = Faults.of(options)
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
        status = self.status_text
        if self.faults.status_replaced and progress is not None:
            status = f"Working: {progress['phase']}"
        self.out.put_nowait({"status": status, "progress": progress})

    def _since(self) -> int | float:
        if self.faults.since_seconds:
            return time.time()
        return time.time_ns() // 1_000_000

    async def phase(self, name: str, **data: Any) -> None:
        """A new phase (or the same phase for another thing): a new `since`, sent at once."""
        self.progress = {"phase": name, "since": self._since(), **data}
        await self.pacer.phase(dict(self.progress))

    def update(self, **data: Any) -> None:
        """A data-only change of the current phase: `since` kept, paced."""
        assert self.progress is not None
        self.progress = {**self.progress, **data}
        if self.faults.since_reset_on_data:
            self.progress["since"] = self._since()
        self.pacer.data(dict(self.progress))

    async def end(self, progress: dict[str, Any] | None) -> None:
        if progress is not None:
            await self.phase(progress.pop("phase"), **progress)
            if self.faults.stopped_then_null:
                await self.pacer.phase(None)
        elif not self.faults.ends_with_last_phase:
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
            if self.faults.unknown_phase:
                await self.phase("preparing")
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
    unknown = {"done": None, "total": None} if turn.faults.null_field else {}
    await turn.phase("reading_prompt", **unknown)
    for k in range(1, updates + 1):
        await turn.wait(span / updates)
        done = total * k // updates
        if turn.faults.field_types:
            turn.update(done=str(done), total=str(total))
        else:
            turn.update(done=done, total=total)
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
    await turn.phase("writing", **({"rate": None} if turn.faults.null_field else {}))
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
    if isinstance(what, str) and what.strip():
        data["what"] = what if turn.faults.what_unshortened else short_line(what)
    elif turn.faults.guessed_what:
        data["what"] = name
    elif turn.faults.null_field:
        data["what"] = None
    current = turn.progress
    if (turn.faults.since_not_renewed and current and current.get("phase") == "running_tool"
            and current.get("tool") == name):
        turn.progress = {"phase": "running_tool", "since": current["since"], **data}
        await turn.pacer.phase(dict(turn.progress))
    else:
        await turn.phase("running_tool", **data)
    await turn.wait(span)


async def step_ask(turn: Turn, arg: Any) -> None:
    if not isinstance(arg, str):
        raise ScriptError("ask takes the question's text")
    await turn.phase("waiting_for_person", what="approval" if turn.faults.phase_mismatch else "question")


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


def _frame(item: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n\n"


def endpoint(options: Options):
    async def progress(request: Request) -> Response:
        try:
            body = json.loads(await request.body())
            script = body.get(a2a.SCRIPT_KEY) if isinstance(body, dict) else None
            if not isinstance(script, dict) or script.get("version") != 1 or not isinstance(script.get("steps"), list):
                raise ValueError(f"the body needs {a2a.SCRIPT_KEY}: a version 1 script with a steps list")
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
