"""A program of the suite's own played in the suite's process instead of as a command, recorded exactly as
wire/stdio.py records a command's run (the same Exchange: `method` "STDIO", `url` the command it stands for,
`events` its stdout lines with their arrival times, `status` its exit status, `end`, the notes `exited_after`,
`stderr`, `limit`, `partial_line`), so that the rules read the one as the other.

The program is a coroutine `program(env, out, err) -> exit status`: `env` the environment the command would have
had, `out` and `err` take its stdout and stderr text as it writes it. It runs as a task on the driver's loop; the
limits are the command's (the same `bound`, the same caps on lines and output), and stopping it at a limit
cancels the task where a command's process group would be signalled. An exception that escapes the program is
its crash: the traceback on its stderr, exit status 1, as the interpreter would end a command.

Only the suite's own programs run this way (the embedded run's reference clients, A2A and ACP: docs/clients.md); a program
under test always runs as its command, in a process of its own (wire/stdio.py).
"""

from __future__ import annotations

import asyncio
import os
import signal
import traceback
from collections.abc import Awaitable, Callable, Mapping

from ..contract.capture import IN_PROCESS
from ..framelog import FrameLog
from .stdio import StdioPeer

Program = Callable[[Mapping[str, str], Callable[[str], None], Callable[[str], None]], Awaitable[int]]


class InProcessPeer(StdioPeer):
    """`StdioPeer`'s record and limits for a coroutine standing for `command`."""

    def __init__(self, program: Program, command: str, log: FrameLog, **kwargs: object) -> None:
        super().__init__(command, log, **kwargs)  # type: ignore[arg-type]
        self.program = program
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
            status = await self.program(env, self._write_out, self._write_err)
        except asyncio.CancelledError:
            pass  # the suite stopped it (_signal): its end is the suite's to record
        except Exception:  # noqa: BLE001  (a crash of the program: recorded as the interpreter would end it)
            self._write_err(traceback.format_exc())
            status = 1
        finally:
            self._returncode = status
            self._exited_at = asyncio.get_running_loop().time()
            self._open = {1: False, 2: False}  # nothing else holds its output
            self._wake()

    def _write_out(self, text: str) -> None:
        self._received(1, text.encode("utf-8"))

    def _write_err(self, text: str) -> None:
        self._received(2, text.encode("utf-8"))

    @property
    def started(self) -> bool:
        return self._task is not None

    def _signal(self, sig: int) -> bool:
        """Stop the program (any signal but 0 cancels its task); whether it was still running."""
        if self._task is None or self._task.done():
            return False
        if sig:
            self._task.cancel()
        return True
