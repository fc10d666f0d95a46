"""A program under test on stdin/stdout (an ACP agent, a progress-line renderer, a client), captured
into the frame log like an HTTP exchange, and ended cleanly whatever it does.

One Exchange per run of the program: `method` "STDIO", `url` the command, `request_body` the list
of what the suite wrote (each item one line, as text), `chunks` the stdout bytes with their arrival
times (past limits.SPOOL_AFTER bytes in a temporary file, framelog.Spool: the lines hold them decoded), `events`
one Event per stdout line (kind "event", `data` the line without its line end, `t` the arrival of the
chunk that completed it), and how the run ended:
  end      closed       it exited by itself; `status` its exit code (negative: the signal that ended it)
           time_limit   the suite stopped it at a limit; `notes["limit"]` says which (see `StdioPeer.stop`)
           client_stop  the driver was done and it had not exited once its input was closed
           error        it could not be started; `error` says why
  `status` is None unless it exited by itself. `notes["exited_after"]` the seconds from its start to
  its exit, `notes["stderr"]` the tail of its stderr, `notes["partial_line"]` a last line without its
  line end, `notes["stdin_closed_early"]` its input closed before the suite had written everything.

The program runs in a session and process group of its own: wrappers (`npx`, `uv run`, `sh -c`) start
the real program as a grandchild, which inherits the pipes. Ending it signals the whole group
(SIGTERM, then SIGKILL after a grace), and every descendant that left the group (`setsid`, a daemon's
double fork) with it: each carries the program's mark in its environment (wire/descendants.py). No wait on
its pipes is unbounded, so nothing that keeps a pipe open can hold the run either. `how_it_ended` says in a finding's
words how a run ended.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import limits
from ..contract.capture import (
    EXITED_AFTER,
    INVALID_UTF8,
    LIMIT,
    PARTIAL_LINE,
    PARTIAL_LINE_BYTES,
    STDERR,
    STDIN_CLOSED_EARLY,
)
from ..framelog import END_CLIENT_STOP, END_CLOSED, END_ERROR, END_TIME_LIMIT, Chunk, Event, Exchange, FrameLog, Spool
from . import activity, descendants
from .capture import Clock

STDERR_TAIL = 4000  # bytes of stderr kept: its end, where the reason for an exit usually is
CLOSE_GRACE = 2.0  # seconds a program has to exit by itself once its input is closed
TERM_GRACE = 1.0  # seconds between SIGTERM and SIGKILL to its group
PIPE_GRACE = 0.5  # seconds the pipes may stay open after SIGKILL (held by a grandchild that left the group)
KILL_GRACE = 2.0  # seconds for the processes sent SIGKILL at the end to be gone (they are at once on an idle machine)
PARTIAL_WINDOW = 4096  # bytes kept of a last line without its line end, when the suite cut it
LINE_COST = 1024  # bytes a stdout line counts for beyond its own against the per-stream size cap
EXIT_DRAIN = 0.2  # seconds to read what is left on stdout once the program has exited (a grandchild may hold it)

# The limits a driver stops a program at (limits.py), by the Target field that holds each.
STOPS = {cap.field: cap for cap in (*limits.CAPS, limits.EXCHANGE, limits.STREAM)}


@dataclass(frozen=True)
class Bound:
    """The limit a wait keeps to: which cap, its value, and (loop times) what it counts from and when it passes."""

    cap: limits.Cap
    limit: float
    since: float
    deadline: float


class _Pipes(asyncio.SubprocessProtocol):
    """Hands what the program does to its peer as it happens."""

    def __init__(self, peer: StdioPeer) -> None:
        self.peer = peer

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.peer._transport = transport  # type: ignore[assignment]

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.peer._received(fd, data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self.peer._pipe_closed(fd, exc)

    def process_exited(self) -> None:
        self.peer._exited()


class StdioPeer:
    """Start a command, write lines to it, read its stdout lines as timed events, and end it (its
    whole process group) at the end or at a limit.

    Output that takes more than `max_bytes` to keep, or a line longer than `max_line` bytes, stops the
    program at that cap (limits.MAX_STREAM / MAX_EVENT); what it wrote up to there is kept. Keeping a
    line costs more than its bytes (its event, and what the rules build from it), so each line counts
    LINE_COST bytes more: a flood of short lines (`yes`) is bounded in memory as a long one is."""

    def __init__(self, command: str, log: FrameLog, *, label: str, clock: Clock | None = None,
                 env: dict[str, str] | None = None, max_bytes: int = int(limits.MAX_STREAM.default),
                 max_line: int = int(limits.MAX_EVENT.default)) -> None:
        self.command = command
        self.log = log
        self.clock = clock or Clock()
        self.env = env
        self.max_bytes = max_bytes
        self.max_line = max_line
        self.ex = Exchange(label=label, method="STDIO", url=command, request_body=[])
        self._transport: asyncio.SubprocessTransport | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._pgid: int | None = None
        self._started_at = 0.0  # loop time
        self._exited_at: float | None = None  # loop time
        self._returncode: int | None = None
        self._changed: asyncio.Event | None = None  # set whenever a line, an exit or a closed pipe arrives
        self._buffer = bytearray()  # stdout after its last line end
        self._kept = 0  # bytes of stdout, and LINE_COST a line
        self._read = 0  # bytes of stdout
        self._spool: Spool | None = None  # stdout's chunks past SPOOL_AFTER bytes: their lines hold them decoded
        self._stderr = bytearray()
        self._open = {1: True, 2: True}  # stdout, stderr not yet at end of file
        self._cut = False  # the suite stopped it (a limit): read no more
        self._cut_line = 0  # the bytes of the last line when the per-line cap cut it
        self._group_ended = False
        self._token = descendants.new_token()  # the mark its descendants carry (wire/descendants.py)

    async def __aenter__(self) -> StdioPeer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- starting and writing ---------------------------------------------------------------------

    async def start(self) -> None:
        self.log.add(self.ex)
        self.ex.t_sent = self.clock()
        loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()
        self._started_at = loop.time()  # before the spawn: it may exit before the spawn returns
        try:
            argv = shlex.split(self.command)
            if not argv:
                raise ValueError("the command is empty")
            await loop.subprocess_exec(lambda: _Pipes(self), *argv, stdin=asyncio.subprocess.PIPE,
                                       stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                       env=descendants.marked_env(self.env, self._token), start_new_session=True)
        except (OSError, ValueError) as exc:  # not found, not executable, a quote left open
            self.ex.end, self.ex.error = END_ERROR, f"{type(exc).__name__}: {exc}"
            self.ex.t_end = self.clock()
            self._transport = None
            return
        assert self._transport is not None
        self._pgid = self._transport.get_pid()  # its own session: the group id is its pid
        self._stdin = self._transport.get_pipe_transport(0)  # type: ignore[assignment]
        self.ex.t_headers = self.clock()

    @property
    def started(self) -> bool:
        return self._pgid is not None

    @property
    def elapsed(self) -> float:
        """Seconds since the program started."""
        return asyncio.get_running_loop().time() - self._started_at

    async def send(self, item: Any) -> None:
        """Write one line: a str as it is, anything else as compact JSON. Never blocks: a program
        that does not read its input leaves it in the pipe's buffer."""
        line = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, separators=(",", ":"))
        self.ex.request_body.append(line)
        if not self._write_line(line):
            if self.started:
                self.ex.notes[STDIN_CLOSED_EARLY] = True

    def _write_line(self, line: str) -> bool:
        """Write `line` and its end to the program's stdin; False if its input is closed."""
        if self._stdin is None or self._stdin.is_closing():
            return False
        self._stdin.write(line.encode("utf-8") + b"\n")
        return True

    async def end_input(self) -> None:
        if self._stdin is not None and not self._stdin.is_closing():
            self._stdin.close()

    # -- what the program does (protocol callbacks) --------------------------------------------------

    def _received(self, fd: int, data: bytes) -> None:
        if fd == 2:
            self._stderr += data
            del self._stderr[:-STDERR_TAIL]
            return
        if self._cut:
            return
        t = self.clock()
        self._read += len(data)
        if self._spool is None and self._read > limits.SPOOL_AFTER:
            self._spool = Spool()
        if self._spool is None:
            self.ex.chunks.append(Chunk(t=t, data=bytes(data)))
        else:
            self.ex.chunks.append(Chunk(t, spool=self._spool, at=self._spool.add(data), length=len(data)))
        searched = len(self._buffer)  # only the new bytes can hold a line end
        self._buffer += data
        lines, start = len(self.ex.events), 0
        with memoryview(self._buffer) as view:  # lines decoded in place: a long one is not copied twice
            while (end := self._buffer.find(b"\n", max(start, searched))) >= 0:
                self._add_line(view[start:end], t)
                start = end + 1
        del self._buffer[:start]
        self._kept += len(data) + LINE_COST * (len(self.ex.events) - lines)
        if len(self._buffer) > self.max_line:
            self._cut_at(limits.MAX_EVENT, len(self._buffer), self.max_line, "the end of a line")
            self._cut_line = len(self._buffer)  # only its start is shown (`close`): the rest is let go now
            del self._buffer[PARTIAL_WINDOW:]
        elif self._kept > self.max_bytes:  # at most one read (256 KiB) past it
            kept = f"{limits.show(self._kept, 'bytes')} kept ({len(self.ex.events)} lines)"
            self._cut_at(limits.MAX_STREAM, kept, self.max_bytes)
        self._wake()

    def _add_line(self, raw: memoryview, t: float) -> None:
        try:
            text = str(raw, "utf-8")
        except UnicodeDecodeError:
            text = str(raw, "utf-8", "replace")
            self.ex.notes[INVALID_UTF8] = True
        self.ex.events.append(Event(index=len(self.ex.events), t=t, data=text.removesuffix("\r")))

    def _pipe_closed(self, fd: int, exc: Exception | None) -> None:
        if fd == 0:
            if exc is not None:
                self.ex.notes[STDIN_CLOSED_EARLY] = True
            return
        self._open[fd] = False
        self._wake()

    def _exited(self) -> None:
        assert self._transport is not None
        self._returncode = self._transport.get_returncode()
        self._exited_at = asyncio.get_running_loop().time()
        self._wake()

    def _wake(self) -> None:
        if self._changed is not None:
            self._changed.set()

    # -- waiting, always bounded ----------------------------------------------------------------------

    @property
    def exited(self) -> bool:
        return self._returncode is not None

    @property
    def ended(self) -> bool:
        """No more lines will come: its stdout closed, it exited (and what it wrote before is read), or
        the suite stopped it."""
        if self._cut or not self._open[1] or not self.started:
            return True
        return self._exited_at is not None and asyncio.get_running_loop().time() >= self._exited_at + EXIT_DRAIN

    async def _until(self, done: Callable[[], bool], timeout: float, poll: float | None = None) -> bool:
        """Wait until `done()` (checked whenever something happens, and every `poll` seconds if given),
        at most `timeout` seconds."""
        assert self._changed is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not done():
            now = loop.time()
            wait = min(deadline - now, poll or timeout)
            if deadline - now <= 0:
                return False
            if self._exited_at is not None and self._open[1] and now < self._exited_at + EXIT_DRAIN:
                wait = min(wait, self._exited_at + EXIT_DRAIN - now + 0.001)  # wake when `ended` turns true
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), wait)
            except TimeoutError:
                pass
        return True

    async def wait_for(self, predicate: Callable[[Event], bool], timeout: float, start: int = 0) -> Event | None:
        """The first line from index `start` on that satisfies `predicate`, waiting up to `timeout`
        seconds; None at once when no more lines will come (`ended`), or once the time is up."""
        found: list[Event] = []
        seen = start

        def done() -> bool:
            nonlocal seen
            while seen < len(self.ex.events):
                ev = self.ex.events[seen]
                seen += 1
                if predicate(ev):
                    found.append(ev)
                    return True
            return self.ended

        await self._until(done, max(timeout, 0.0))
        return found[0] if found else None

    def bound(self, cap: limits.Cap, seconds: float, stream_limit: float) -> Bound:
        """The limit of the next wait: `cap` of `seconds` (the start-up limit counted from the program's
        start, any other from now), or the stream limit (`stream_limit` seconds from the start) if
        that comes first."""
        now = asyncio.get_running_loop().time()
        since = self._started_at if cap is limits.START else now
        if since + seconds > self._started_at + stream_limit:
            return Bound(limits.STREAM, stream_limit, self._started_at, self._started_at + stream_limit)
        return Bound(cap, seconds, since, since + seconds)

    async def expect(self, predicate: Callable[[Event], bool], bound: Bound, awaiting: str,
                     start: int = 0) -> Event | None:
        """`wait_for` within `bound`. None if no more lines will come, or if the limit passed: then the
        program is stopped at it (`stop`), while waiting for `awaiting` ("the answer to initialize")."""
        loop = asyncio.get_running_loop()
        activity.waiting(self.log.scenario, self.ex, bound.limit, awaiting)  # shown while it lasts
        ev = await self.wait_for(predicate, bound.deadline - loop.time(), start)
        if ev is None and not self.ended:  # still running, still silent: the limit is what ends it
            await self.stop(bound.cap, bound.limit, awaiting, round(loop.time() - bound.since, 1))
        return ev

    async def wait_exit(self, timeout: float) -> bool:
        """Whether the program exited by itself within `timeout` seconds."""
        return self.started and await self._until(lambda: self.exited, timeout)

    # -- ending it --------------------------------------------------------------------------------------

    def _cut_at(self, cap: limits.Cap, figure: float | str, limit: float, awaiting: str = "") -> None:
        """Record the limit the program is stopped at, read nothing more, and signal its group; the
        rest of the ending (SIGKILL, the pipes) is `close`'s. A size cap applies after the program's
        exit too: a grandchild may still be writing."""
        if self._cut:
            return
        self._cut = True
        self.ex.notes[LIMIT] = {"cap": cap.field, "figure": figure, "limit": limit, "awaiting": awaiting}
        self._signal(signal.SIGTERM)
        self._wake()

    async def stop(self, cap: limits.Cap, limit: float, awaiting: str, figure: float | str | None = None) -> None:
        """Stop the program because `cap` (a limit of `limit` seconds or bytes) was reached while the
        suite waited for `awaiting` ("the answer to initialize"); `figure` the measure (default: the
        seconds since it started). A program that has exited already is not stopped: its exit is what
        happened."""
        if not self.started or self.exited or self._cut:
            return
        self._cut_at(cap, round(self.elapsed, 1) if figure is None else figure, limit, awaiting)
        await self._end_group()

    async def close(self, grace: float = CLOSE_GRACE) -> None:
        """End input, give the program `grace` seconds to exit by itself, end whatever is left of its
        group, and record how it ended."""
        if not self.started:
            self.ex.t_end = self.clock()
            return
        try:
            await self.end_input()
            if not self._cut and not self.exited:
                await self.wait_exit(grace)
            end = END_TIME_LIMIT if self._cut else END_CLOSED if self.exited else END_CLIENT_STOP
            await self._end_group()
        finally:  # cancelled halfway too (Ctrl-C): nothing of the program outlives the scenario
            self._signal(signal.SIGKILL)
            self._until_killed_are_gone()
            if self._stdin is not None and self._stdin.get_write_buffer_size():
                self._stdin.abort()  # input it never read: drop it rather than wait to flush it
            if self._transport is not None:
                self._transport.close()  # our ends of its pipes, whoever holds the others
        self.ex.end = end
        self.ex.status = self._returncode if end == END_CLOSED else None
        if self._exited_at is not None and end == END_CLOSED:
            self.ex.notes[EXITED_AFTER] = round(self._exited_at - self._started_at, 3)
        if self._stderr:
            self.ex.notes[STDERR] = self._stderr.decode("utf-8", "replace")
        if self._buffer:  # past a size cap, only its start: the rules judge no line the suite cut
            shown = self._buffer if not self._cut else self._buffer[:PARTIAL_WINDOW]
            self.ex.notes[PARTIAL_LINE] = shown.decode("utf-8", "replace")
            if max(len(self._buffer), self._cut_line) > len(shown):
                self.ex.notes[PARTIAL_LINE_BYTES] = max(len(self._buffer), self._cut_line)
            self._buffer.clear()
        self.ex.t_end = self.clock()

    async def _end_group(self) -> None:
        """SIGTERM to the group; SIGKILL once the program and its pipes are gone, or after TERM_GRACE;
        then at most PIPE_GRACE for the pipes to close."""
        if self._group_ended:
            return
        self._group_ended = True
        self._signal(signal.SIGTERM)

        def gone() -> bool:
            """Its pipes closed; or nothing left in its group (whoever holds them left it), and what
            was in them when it exited read."""
            if not self.exited or not (self._open[1] or self._open[2]):
                return self.exited
            drained = self._exited_at is not None and asyncio.get_running_loop().time() >= self._exited_at + EXIT_DRAIN
            return drained and not self._signal(0)

        await self._until(gone, TERM_GRACE, poll=0.05)
        self._signal(signal.SIGKILL)  # members that hold no pipe and ignore SIGTERM
        await self._until(gone, PIPE_GRACE, poll=0.05)

    def _until_killed_are_gone(self) -> None:
        """Wait, at most KILL_GRACE, until no descendant that was sent SIGKILL still runs: a killed process runs on
        until the kernel has torn it down, which on a loaded machine is not at once (one outlived the scenario so).
        Blocking, as this runs in a `finally` that may be cancelled; the program itself is not waited on (its exit
        status is reaped by the event loop, and a zombie runs nothing)."""
        if self._pgid is None or not hasattr(os, "killpg"):
            return
        deadline = time.monotonic() + KILL_GRACE
        while descendants.signal_all(self._token, self._pgid, 0) and time.monotonic() < deadline:
            time.sleep(0.01)

    def _signal(self, sig: int) -> bool:
        """Send `sig` to the program's group and to every descendant that left it (its session, or the mark
        in its environment: wire/descendants.py); 0: only check. Whether anyone was there to get it."""
        if self._pgid is None:
            return False
        if not hasattr(os, "killpg"):  # no process groups (Windows): the program alone
            if self._transport is not None and not self.exited and sig:
                self._transport.kill()
            return not self.exited
        try:
            os.killpg(self._pgid, sig)
            grouped = True
        except (ProcessLookupError, PermissionError):
            grouped = False  # the group is empty
        return descendants.signal_all(self._token, self._pgid, sig) or grouped


# -- how a run ended, in a finding's words ----------------------------------------------------------------

def exit_words(status: int) -> str:
    """`with status 3`, `on signal 11 (SIGSEGV)`."""
    if status < 0:
        try:
            return f"on signal {-status} ({signal.Signals(-status).name})"
        except ValueError:
            return f"on signal {-status}"
    hint = {126: " (a shell's 'not executable')", 127: " (a shell's 'command not found')"}.get(status, "")
    return f"with status {status}{hint}"


def stderr_tail(ex: Exchange, limit: int = 300) -> str:
    """The end of what the program wrote on stderr, on one line, quoted; "" if nothing."""
    text = " ".join(str(ex.notes.get(STDERR) or "").split())
    if not text:
        return ""
    return repr(text if len(text) <= limit else "…" + text[-limit:])


def how_it_ended(ex: Exchange) -> str:
    """How a program's run ended, to follow "the agent" or "the renderer" in a finding: "exited with
    status 3 after 0.01 s; stderr: '…'", "was cut at the start-up limit: 2 s reached the start-up cap
    of 2 s (raise it with --start-limit)"."""
    if ex.end == END_ERROR:
        return f"could not be started: {ex.error}"
    stop = ex.notes.get(LIMIT)
    cap = STOPS.get(stop.get("cap")) if isinstance(stop, dict) else None
    if cap is not None:  # what it was waiting for is in the note: a finding keeps to the cause
        figure = stop.get("figure")
        figure = figure if isinstance(figure, (int, float, str)) else "?"
        why = f"was cut at the {cap.what} limit: {cap.reached(figure, stop.get('limit'))}"
    elif ex.status is not None:
        after = ex.notes.get(EXITED_AFTER)
        why = f"exited {exit_words(ex.status)}" + (f" after {after:g} s" if isinstance(after, (int, float)) else "")
    elif ex.end == END_CLIENT_STOP:
        why = "did not exit once its input was closed, and was stopped"
    else:  # a log written before limits were recorded
        why = "was cut at the stream limit"
    tail = stderr_tail(ex)
    return f"{why}; stderr: {tail}" if tail else why
