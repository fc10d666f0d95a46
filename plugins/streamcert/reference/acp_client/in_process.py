"""The reference ACP client played in the suite's process (wire/inprocess.py; the embedded run, docs/clients.md):
issue 29, no Python start-up per ACP client case, for the client nor for the agent it starts.

`in_process(fault)` is the program `targets.reference_command("acp_client", fault)` runs, as a coroutine: the same
environment read (STREAMCERT_AGENT_CMD, STREAMCERT_CONTEXT), the same session (client.py's `play`, run in a thread:
the client is written with blocking waits, each bounded by its limit), the same view on stdout and diagnostics on
stderr, the same exit status. The agent it starts is played in a thread of this process too when its command is the
reference ACP agent's (`reference_command("acp")` and its arguments, as drivers/acp_client.py gives it): agent.py's
`run` on in-memory lines, recording to its `--record` file as the command does, its logs on the client's stderr as
the command's would be (it inherits the client's). Any other agent command is started as a process, as the
command would start it.

Stopping the program (the suite's limit) ends the agent's input and output, so that the session ends at its next
wait, as a stopped process group ends both.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import queue
import shlex
import threading
import traceback
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ...targets import reference_command
from ...wire.inprocess import Input, Program, ThreadText
from ..acp import agent as reference_agent
from ..faults import check_fault
from ..in_process import played_here
from .client import EXIT_GRACE_S, LIMIT_S, Agent, Failed, Lines, plans_for, play

_RUNS = itertools.count(1)  # the record's "pid" of an agent played here: each run its own


class _Output:
    """The agent's stdout: each whole line handed to the client as it is written, the rest at the end."""

    def __init__(self, lines: queue.Queue[str | None]) -> None:
        self.lines, self.pending = lines, ""

    def write(self, text: str) -> int:
        *whole, self.pending = (self.pending + text).split("\n")
        for line in whole:
            self.lines.put(line + "\n")
        return len(text)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        if self.pending:  # a last line without its end, as a pipe gives it at its end
            self.lines.put(self.pending)
        self.lines.put(None)


class InProcessAgent(Lines):
    """The reference ACP agent run by agent.py's `run` in a thread, on in-memory lines."""

    def __init__(self, argv: list[str], deadline: float, say: Callable[[str], None], err: ThreadText) -> None:
        super().__init__(deadline, say)
        self.input: queue.Queue[str | None] = queue.Queue()
        self.closed = False
        self.returncode: int | None = None
        self.stopped = threading.Event()  # set when the suite stops the client: the agent's sleeps end
        self.output = _Output(self.lines)
        self.thread = threading.Thread(target=self._run, args=(argv, err), daemon=True,
                                       name="reference ACP agent")
        self.thread.start()

    def _input(self) -> Iterator[str]:
        yield from iter(self.input.get, None)

    def _run(self, argv: list[str], err: ThreadText) -> None:
        status = 1
        try:
            status = reference_agent.run(argv, self._input(), self.output, err, run_id=f"in-process-{next(_RUNS)}",
                                         stopped=self.stopped)
        except SystemExit as exc:  # argparse's refusal of its arguments, as the command exits
            status = exc.code if isinstance(exc.code, int) else 1
        except BaseException:  # noqa: BLE001  (the interpreter's way: the traceback on stderr, status 1)
            err.write(traceback.format_exc())
        finally:
            self.returncode = status
            self.closed = True
            self.output.close()

    def send(self, msg: dict[str, Any]) -> None:
        if self.closed:
            raise Failed("the agent stopped reading: its input is closed")
        self.input.put(json.dumps(msg, ensure_ascii=False, separators=(",", ":")) + "\n")

    def status(self) -> int | None:
        return self.returncode

    def end(self) -> None:
        self.closed = True
        self.input.put(None)
        self.thread.join(EXIT_GRACE_S)

    def end_now(self) -> None:
        """The suite stopped the client: the agent's input ends, and the client's next wait finds its output ended."""
        self.stopped.set()
        self.closed = True
        self.input.put(None)
        self.lines.put(None)


def _agent_argv(command: str) -> list[str] | None:
    """The reference agent's arguments when `command` starts it, else None."""
    own = shlex.split(reference_command("acp"))
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    return argv[len(own):] if argv[:len(own)] == own else None


def in_process(fault: str | None = None) -> Program:
    """The reference ACP client (with `fault`, if given) as a program the suite plays in its own process."""
    check_fault(fault)
    make_plans = plans_for(fault)

    async def program(env: Mapping[str, str], stdin: Input, out: Callable[[str], None], err: Callable[[str], None]) -> int:
        loop = asyncio.get_running_loop()
        started: list[Lines] = []

        stderr = ThreadText(loop, err)  # the client's, and the agent's it starts (as a command's child inherits it)

        def say(text: str) -> None:
            stderr.write(f"[reference-acp-client] {text}\n")

        def start(command: str, deadline: float) -> Lines:
            argv = _agent_argv(command)
            agent = Agent(command, deadline, say) if argv is None else InProcessAgent(argv, deadline, say, stderr)
            started.append(agent)
            return agent

        try:
            status, view = await asyncio.to_thread(play, make_plans, env, LIMIT_S, say, start)
        except asyncio.CancelledError:  # stopped by the suite: its agent with it, as its process group would be
            for agent in started:
                if isinstance(agent, InProcessAgent):
                    agent.end_now()
                else:
                    agent.proc.kill()
            raise
        if view is not None:
            out(view + "\n")
        return status

    return program


def in_process_for(command: str | None) -> Program | None:
    """The in-process program of `command` when it is the reference ACP client's own (`reference_command("acp_client",
    fault)`, with or without one of its faults), else None: any other command runs as itself."""
    return played_here("acp_client", command, in_process)
