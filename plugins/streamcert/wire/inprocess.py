"""A program of the suite's own played in the suite's process instead of as a command, recorded exactly as
wire/stdio.py records a command's run (the same Exchange: `method` "STDIO", `url` the command it stands for,
`events` its stdout lines with their arrival times, `status` its exit status, `end`, the notes `exited_after`,
`stderr`, `limit`, `partial_line`), so that the rules read the one as the other.

The program is a coroutine `program(env, stdin, out, err) -> exit status`: `env` the environment the command would
have had, `stdin` the lines the driver writes (`Input`: each with its line end, until the driver ends its input),
`out` and `err` take its stdout and stderr text as it writes it. It runs as a task on the driver's loop; the limits
are the command's (the same `bound`, the same caps on lines and output), and stopping it at a limit cancels the
task where a command's process group would be signalled. An exception that escapes the program is its crash: the
traceback on its stderr, exit status 1, as the interpreter would end a command. What it writes once it has ended
is not read, as nothing comes from a process that has exited. `in_thread` makes a program of a blocking one (the
reference's ACP agent, line renderer): played in a thread, its input ended when it is stopped.

Only the suite's own programs run this way (the embedded run's reference programs: docs/clients.md,
reference/in_process.py); a program under test always runs as its command, in a process of its own
(wire/stdio.py). `command_peer` is the one place a driver chooses between the two.
"""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import threading
import traceback
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from ..contract.capture import IN_PROCESS
from ..framelog import FrameLog
from .stdio import StdioPeer


class Input:
    """A program's stdin: the lines the driver writes, each with its line end, until it ends the input. Iterating
    blocks until the next line (read it in a thread, or with `asyncio.to_thread`); it ends when the input does.
    `stopped` is set when the suite stops the program (a limit): a blocking program waits on it where a command
    would sleep, so that it ends at once as a signalled process does."""

    def __init__(self) -> None:
        self._lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self.closed = False
        self.stopped = threading.Event()

    def put(self, line: str) -> None:
        self._lines.put(line)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._lines.put(None)

    def stop(self) -> None:
        self.stopped.set()
        self.close()

    def __iter__(self) -> Iterator[str]:
        while (line := self._lines.get()) is not None:
            yield line
        self._lines.put(None)  # read again, it ends again


Write = Callable[[str], None]
Program = Callable[[Mapping[str, str], Input, Write, Write], Awaitable[int]]


class InProcessPeer(StdioPeer):
    """`StdioPeer`'s record and limits for a coroutine standing for `command`."""

    def __init__(self, program: Program, command: str, log: FrameLog, **kwargs: object) -> None:
        super().__init__(command, log, **kwargs)  # type: ignore[arg-type]
        self.program = program
        self.stdin = Input()
        self._task: asyncio.Task | None = None

    async def start(self) -> None:
        self.log.add(self.ex)
        self.ex.t_sent = self.clock()
        self.ex.notes[IN_PROCESS] = True
        loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()
        self._started_at = loop.time()
        env = dict(os.environ if self.env is None else self.env)
        self._task = asyncio.create_task(self._play(env), name=f"in-process {self.command}")
        self.ex.t_headers = self.clock()

    async def _play(self, env: dict[str, str]) -> None:
        status: int = -signal.SIGTERM  # stopped by the suite, as its command's process would be
        try:
            status = await self.program(env, self.stdin, self._write_out, self._write_err)
        except asyncio.CancelledError:
            pass  # the suite stopped it (_signal): its end is the suite's to record
        except Exception:  # noqa: BLE001  (a crash of the program: recorded as the interpreter would end it)
            self._write_err(traceback.format_exc())
            status = 1
        finally:
            self._returncode = status
            self._exited_at = asyncio.get_running_loop().time()
            self._open = {1: False, 2: False}  # nothing else holds its output
            self.stdin.close()
            self._wake()

    def _write_out(self, text: str) -> None:
        if self._returncode is None:
            self._received(1, text.encode("utf-8"))

    def _write_err(self, text: str) -> None:
        if self._returncode is None:
            self._received(2, text.encode("utf-8"))

    def _write_line(self, line: str) -> bool:
        if self.stdin.closed or self._returncode is not None:
            return False
        self.stdin.put(line + "\n")
        return True

    async def end_input(self) -> None:
        self.stdin.close()

    @property
    def started(self) -> bool:
        return self._task is not None

    def _signal(self, sig: int) -> bool:
        """Stop the program (any signal but 0 cancels its task); whether it was still running."""
        if self._task is None or self._task.done():
            return False
        if sig:
            self.stdin.stop()
            self._task.cancel()
        return True


class ThreadText:
    """A text stream whose writes, from a thread, go to `write` on `loop`'s thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop, write: Write) -> None:
        self.loop, self._write = loop, write

    def write(self, text: str) -> int:
        try:
            self.loop.call_soon_threadsafe(self._write, text)
        except RuntimeError:  # the loop is closed: the suite is done with this run
            pass
        return len(text)

    def flush(self) -> None:
        pass


def in_thread(main: Callable[[Input, Any, Any], int]) -> Program:
    """The program of a blocking `main(stdin, stdout, stderr) -> exit status` (text streams with `write` and
    `flush`): played in a thread; stopping it ends its input and sets `stdin.stopped` (the thread itself runs on
    until it reads that end, what it writes meanwhile not read), and a SystemExit ends it with its code as it ends a
    command."""

    def play(stdin: Input, out: Any, err: Any) -> int:
        try:
            return main(stdin, out, err)
        except SystemExit as exc:
            code = exc.code
            if code is not None and not isinstance(code, int):
                err.write(f"{code}\n")
            return code if isinstance(code, int) else 0 if code is None else 1

    async def program(env: Mapping[str, str], stdin: Input, out: Write, err: Write) -> int:
        loop = asyncio.get_running_loop()
        try:
            return await asyncio.to_thread(play, stdin, ThreadText(loop, out), ThreadText(loop, err))
        finally:
            stdin.close()

    return program


def command_peer(command: str, program: Program | None, log: FrameLog, **kwargs: Any) -> StdioPeer:
    """The peer for a driver's program: `program` played here when given (the embedded run's own), else `command`
    run as a process."""
    if program is None:
        return StdioPeer(command, log, **kwargs)
    return InProcessPeer(program, command, log, **kwargs)
