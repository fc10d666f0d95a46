"""A program under test on stdin/stdout (an ACP agent, a progress-line renderer), captured into the
frame log like an HTTP exchange.

One Exchange per run of the program: `method` "STDIO", `url` the command, `request_body` the list
of what the suite wrote (each item one line, as text), `chunks` the stdout bytes with their arrival
times, `events` one Event per stdout line (kind "event", `data` the line without its line end, `t`
the arrival of the chunk that completed it), `status` the exit code (None while it ran past the
limit and was killed), `notes["stderr"]` the tail of its stderr, `notes["partial_line"]` a last
line without its line end.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import Callable
from typing import Any

from ..framelog import END_CLOSED, END_ERROR, END_TIME_LIMIT, Chunk, Event, Exchange, FrameLog
from .capture import Clock

STDERR_TAIL = 4000


class StdioPeer:
    """Start a command, write lines to it, and read its stdout lines as timed events."""

    def __init__(self, command: str, log: FrameLog, *, label: str, clock: Clock | None = None,
                 limit: float = 15.0, env: dict[str, str] | None = None) -> None:
        self.command = command
        self.log = log
        self.clock = clock or Clock()
        self.limit = limit
        self.env = env
        self.ex = Exchange(label=label, method="STDIO", url=command, request_body=[])
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task | None = None
        self._stderr: asyncio.Task | None = None
        self._arrived = asyncio.Event()
        self._buffer = b""

    async def __aenter__(self) -> StdioPeer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        self.log.add(self.ex)
        self.ex.t_sent = self.clock()
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *shlex.split(self.command), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=self.env)
        except OSError as exc:
            self.ex.end, self.ex.error = END_ERROR, f"{type(exc).__name__}: {exc}"
            return
        self.ex.t_headers = self.clock()
        self._reader = asyncio.create_task(self._read())
        self._stderr = asyncio.create_task(self._proc.stderr.read())

    @property
    def started(self) -> bool:
        return self._proc is not None

    async def send(self, item: Any) -> None:
        """Write one line: a str as it is, anything else as compact JSON."""
        line = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, separators=(",", ":"))
        self.ex.request_body.append(line)
        if self._proc is None or self._proc.stdin is None or self._proc.stdin.is_closing():
            return
        try:
            self._proc.stdin.write(line.encode("utf-8") + b"\n")
            await self._proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            self.ex.notes["stdin_closed_early"] = True

    async def end_input(self) -> None:
        if self._proc is not None and self._proc.stdin is not None and not self._proc.stdin.is_closing():
            self._proc.stdin.close()

    async def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        while True:
            data = await self._proc.stdout.read(65536)
            if not data:
                break
            t = self.clock()
            self.ex.chunks.append(Chunk(t=t, data=data))
            self._buffer += data
            while b"\n" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\n", 1)
                text = raw.decode("utf-8", "replace").removesuffix("\r")
                if raw.decode("utf-8", "replace") != raw.decode("utf-8", "ignore"):
                    self.ex.notes["invalid_utf8"] = True
                self.ex.events.append(Event(index=len(self.ex.events), t=t, data=text))
                self._arrived.set()

    async def wait_for(self, predicate: Callable[[Event], bool], timeout: float | None = None,
                       start: int = 0) -> Event | None:
        """The first line from index `start` on that satisfies `predicate`, waiting up to `timeout`."""
        deadline = asyncio.get_running_loop().time() + (self.limit if timeout is None else timeout)
        seen = start
        while True:
            while seen < len(self.ex.events):
                ev = self.ex.events[seen]
                seen += 1
                if predicate(ev):
                    return ev
            if self._reader is None or self._reader.done():
                return None
            self._arrived.clear()
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                return None
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except TimeoutError:
                return None

    async def close(self, grace: float = 2.0) -> None:
        """End input, wait for the program to exit (killing it past `grace`), record how it ended."""
        if self._proc is None:
            self.ex.t_end = self.clock()
            return
        await self.end_input()
        try:
            await asyncio.wait_for(self._proc.wait(), grace)
            self.ex.end = END_CLOSED
        except TimeoutError:
            self._proc.kill()
            await self._proc.wait()
            self.ex.end = END_TIME_LIMIT
        if self._reader is not None:
            await self._reader
        if self._stderr is not None:
            err = await self._stderr
            if err:
                self.ex.notes["stderr"] = err[-STDERR_TAIL:].decode("utf-8", "replace")
        if self._buffer:
            self.ex.notes["partial_line"] = self._buffer.decode("utf-8", "replace")
        self.ex.status = self._proc.returncode if self.ex.end == END_CLOSED else None
        self.ex.t_end = self.clock()
