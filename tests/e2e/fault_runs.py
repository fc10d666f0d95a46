"""The meta-test's runs: an embedded program (broken by one fault, or not) on its own server or
command, a list of scenarios played on it one after another, the worst outcome per requirement.

A `Pool` plays many runs at once (they mostly wait on sleeps and streams), each in a player: a child
process that plays one run at a time (`python fault_runs.py --player`), fed by one thread of the pool.
Not threads of the test's process: gRPC's asyncio layer is not safe with an event loop per thread (an
xdist worker died of a segmentation fault in grpc.aio.server() while other threads of its pool used
gRPC), and runs in threads of one interpreter wait for each other's lock (a client printed nothing
within its limit). A player runs at a lower priority than the test's process, where the timed runs
play (`play_alone`). Under pytest-xdist every worker holds a pool over the same runs; a run is
claimed by creating its claim file in a folder all workers share, so each run is played once, by
whichever worker reaches it first, and its results are written beside it for the test that reads
them. Every wait is bounded: a run that does not finish fails its test, never hangs the session.
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from streamcert.catalogue import load_scenario
from streamcert.drivers import run_scenario
from streamcert.outcomes import Outcome, worst
from streamcert.reference.agent.server import ReferenceServer
from streamcert.reference.in_process import programs as in_process_programs
from streamcert.rules import RuleContext, judge
from streamcert.targets import REFERENCE_CARD_KEY, REFERENCE_HEADERS, SERVER, SLOTS, Target, reference_command

# The pool starts the reference's stdio programs (line renderer, ACP agent, clients) from many threads at once.
# There CPython 3.11's vfork spawn once failed with "OSError: [Errno 14] Bad address" (a clean clone's CI
# run, 1 in about 6 runs of the meta-test); a plain fork is the safe way to spawn from a threaded
# process. The suite itself spawns from one thread, so only this harness needs it.
if hasattr(subprocess, "_USE_VFORK"):
    subprocess._USE_VFORK = False

# A fault that never closes a stream is cut here (tolerance for the close is 2 s). It must stay well
# above the longest pause of a scenario (cancel-subscribe waits 4 s for its second event, which a
# subscriber that was not sent the Task must still see): at 4 s that was a race lost under load.
STREAM_LIMIT = 5.0
# Under the D3 open reading a task's first stream stays open across every pause of its scenario, so it lives as
# long as the whole scenario (ix-three-kinds pauses three times, each with subscriptions and an answer): 5 s was
# a race lost under load (A2A-STREAM-009 "no terminal state within the per-stream limit"). A passing run never
# waits this out: its streams close at the terminal state.
D3_OPEN_STREAM_LIMIT = 20.0
# A client under certification is one process per case (the reference A2A client: a task in the player's process,
# as the embedded run plays it), cut at the case's limit (its stream time plus the timeout, at most the stream
# limit): start-up and exit included. Thirty of them starting at once on two cores take 3.5 s to print their view
# and 0.8 s more to exit, so a client program gets a longer limit than STREAM_LIMIT; a client that hangs is still
# cut there.
CLIENT_PROFILES = ("client", "acp-client")
CLIENT_LIMIT = 35.0
# A client case's cut is its stream time plus the target's timeout: 10 s by default, where a full test run beside a
# heavy job once had two in-process clients print nothing at all in 10 s (CLIENT-007/008 ERROR "cut at the
# per-exchange limit", d3-close-ends and other-task-frames; then the pool's runs were threads of one process). No
# fault of the reference A2A client hangs (each is caught on the view it prints), so a longer cut costs a passing
# run nothing.
CLIENT_TIMEOUT = 30.0
# A player's priority below the test's process (nice): the pool's runs are untimed and bounded by limits of seconds,
# the timed runs played alone in the test's process judge arrival times to 0.15 s.
PLAYER_NICE = 10
# Bounds of a run: starting its program, then each scenario (a stream is cut at STREAM_LIMIT and a
# unary call at the driver's timeout; this only catches a run that hangs).
START_BOUND_S = 30.0
SCENARIO_BOUND_S = 120.0
POLL_S = 0.05

# Requirement id → (worst outcome, "OUTCOME: message" of the findings that had it).
Results = dict[str, tuple[Outcome, list[str]]]


@dataclass(frozen=True)
class Run:
    """Scenarios played in order on one embedded program ("server", "line", "acp", "client", …), broken by
    `fault` if given, the server started with `mode` (ReferenceServer options, e.g. d3=open)."""

    name: str  # unique among the runs of a session; also a file name
    program: str
    fault: str | None
    scenarios: tuple[str, ...]
    mode: tuple[tuple[str, str], ...] = ()
    binding: str = "jsonrpc"  # the A2A binding the server's scenarios go over

    @property
    def bound_s(self) -> float:
        return START_BOUND_S + SCENARIO_BOUND_S * len(self.scenarios)


def programs() -> dict[str, tuple[str, ...]]:
    """The embedded reference's programs (a slot's `program`: "server", "line", "acp", "client", …) → the
    profiles each serves. A client program plays the client cases: the driver serves each case's stream
    from the replay server and runs the reference client (or one of its fault variants) against it."""
    out: dict[str, tuple[str, ...]] = {}
    for slot in SLOTS:
        if slot.program:
            out[slot.program] = out.get(slot.program, ()) + slot.profiles
    return out


@contextmanager
def embedded(program: str, fault: str | None, mode: dict | None = None, binding: str = "jsonrpc") -> Iterator[Target]:
    """A Target for the embedded `program`, broken by `fault` if given (its A2A scenarios over `binding`)."""
    slots = [slot for slot in SLOTS if slot.program == program]
    if program == SERVER:
        with ReferenceServer(fault=fault, **(mode or {})) as server:
            limit = D3_OPEN_STREAM_LIMIT if (mode or {}).get("d3") == "open" else STREAM_LIMIT
            yield Target(**{slot.field: server.url + slot.route for slot in slots}, stream_limit=limit,
                         binding=binding, card_keys=(REFERENCE_CARD_KEY,), headers=dict(REFERENCE_HEADERS),
                         own_interfaces=True)
    else:
        client = any(profile in CLIENT_PROFILES for slot in slots for profile in slot.profiles)
        target = Target(**{slot.field: reference_command(program, fault) for slot in slots},
                        stream_limit=CLIENT_LIMIT if client else STREAM_LIMIT)
        if program == "client":
            target.timeout = CLIENT_TIMEOUT
        # Played in this process, as the embedded run plays them (reference/in_process.py, docs/clients.md).
        target.in_process = in_process_programs(target, [profile for slot in slots for profile in slot.profiles])
        yield target


def play(run: Run) -> Results:
    """Play the run's scenarios on its program; every requirement they judge, with its worst outcome."""
    found: dict[str, list] = {}
    with embedded(run.program, run.fault, dict(run.mode), run.binding) as target:
        for sid in run.scenarios:
            scenario = load_scenario(sid)
            log = run_scenario(sid, target)
            for f in judge(log, scenario.requirements, RuleContext(scenario=scenario)):
                found.setdefault(f.req_id, []).append((f.outcome, f"{f.outcome.value}: {f.message}"))
    out: Results = {}
    for rid, findings in found.items():
        w = worst(o for o, _ in findings)
        out[rid] = (w, [m for o, m in findings if o == w])
    return out


def merge(*parts: Results) -> Results:
    """The results of several runs on the same program as one: the worst outcome of each requirement."""
    out: Results = {}
    for part in parts:
        for rid, (outcome, messages) in part.items():
            if rid not in out or worst([out[rid][0], outcome]) != out[rid][0]:
                out[rid] = (outcome, list(messages))
            elif outcome == out[rid][0]:
                out[rid][1].extend(messages)
    return out


def _to_json(results: Results) -> dict:
    return {rid: [outcome.value, messages] for rid, (outcome, messages) in results.items()}


def _from_json(doc: dict) -> Results:
    return {rid: (Outcome(value), messages) for rid, (value, messages) in doc.items()}


def record(run: Run) -> dict:
    """Play the run: its results (or the error that stopped it), and where and when it was played
    (for the figures of a pass; the tests do not read them)."""
    started = time.time()
    try:
        doc = {"results": _to_json(play(run))}
    except BaseException:  # reported by the test that reads it
        doc = {"error": traceback.format_exc()}
    return doc | {"worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "pid": os.getpid(), "started": started,
                  "finished": time.time()}


def _run_from_json(doc: dict) -> Run:
    return Run(**doc | {"scenarios": tuple(doc["scenarios"]), "mode": tuple(tuple(kv) for kv in doc["mode"])})


class Player:
    """A child process that plays the runs it is sent, one at a time: a run's JSON on its stdin, the
    record (`record(run)`) back as one line on a pipe of its own (its stdout and stderr, where uvicorn
    logs, go to a file in the pool's folder). A run past its bound, or a player that dies, is the
    run's error; the next run starts a new player."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._proc: subprocess.Popen | None = None
        self._answers = None
        self._log: Path | None = None

    def _start(self) -> None:
        read, write = os.pipe()
        self._log = self.folder / f"player-{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}.log"
        with open(self._log, "wb") as log:
            self._proc = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "--player", str(write)], stdin=subprocess.PIPE,
                stdout=log, stderr=subprocess.STDOUT, pass_fds=(write,))
        os.close(write)
        self._answers = os.fdopen(read, "rb")

    def play(self, run: Run) -> dict:
        if self._proc is None or self._proc.poll() is not None:
            self.close()
            self._start()
        started, ready = time.time(), []
        try:
            self._proc.stdin.write(json.dumps(dataclasses.asdict(run)).encode() + b"\n")
            self._proc.stdin.flush()
            ready, _, _ = select.select([self._answers], [], [], run.bound_s)
            line = self._answers.readline() if ready else b""
        except (BrokenPipeError, OSError):
            line = b""
        if line.endswith(b"\n"):
            return json.loads(line)
        if ready or self._proc.poll() is not None:
            why = f"its player (pid {self._proc.pid}) died, exit code {self._proc.wait()}"
        else:
            why = f"did not finish within {run.bound_s:.0f} s"
        self.close()
        tail = self._log.read_bytes()[-4000:].decode("utf-8", "replace") if self._log else ""
        return {"error": f"{why}; the player's last output:\n{tail}", "started": started, "finished": time.time()}

    def close(self) -> None:
        """End the player: told so by the end of its input when idle, killed when not."""
        if self._proc is not None:
            try:
                self._proc.stdin.close()
                self._proc.wait(2)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
            self._answers.close()
            self._proc = None


def _player_main(fd: int) -> int:
    """A player's loop: each line of stdin a run to play, its record written back on `fd`."""
    os.nice(PLAYER_NICE)
    with os.fdopen(fd, "w", encoding="utf-8") as answers:
        for line in sys.stdin:
            if line.strip():
                answers.write(json.dumps(record(_run_from_json(json.loads(line)))) + "\n")
                answers.flush()
    return 0


class Pool:
    """Plays `runs` in up to `width` players (each fed by a thread of this process), sharing them out
    with the pools of other processes that use the same `folder` (one claim file per run; its results
    file is written when it finishes).

    `result(run)` starts the pool if it is idle, moves the run to the front of the queue and waits for
    its results (played here or by another worker). `play_alone(run)` plays a timing-sensitive run
    with the pool paused in this process; `finish()` plays what is left and returns when it is idle.
    """

    def __init__(self, runs: Iterable[Run], folder: Path, width: int) -> None:
        self.runs = {run.name: run for run in runs}
        self.folder = folder
        self.width = width
        # The longest first: the pass ends when its longest run does.
        self._queue = sorted(self.runs.values(), key=lambda r: -len(r.scenarios))
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._playing: dict[int, tuple[Run, float]] = {}  # thread → the run it plays, since when
        self._paused = False  # while a timed run plays: threads end after their current run
        self._players: list[Player] = []  # idle players, kept for the next thread
        folder.mkdir(parents=True, exist_ok=True)

    def _path(self, run: Run, suffix: str) -> Path:
        return self.folder / f"{run.name}.{suffix}"

    def _claim(self, run: Run) -> bool:
        try:
            fd = os.open(self._path(run, "claim"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return False  # another worker plays it
        with os.fdopen(fd, "w") as claim:
            claim.write(str(os.getpid()))  # whose it is: a worker that died leaves its runs to the others
        return True

    def _abandoned(self, run: Run) -> bool:
        """Whether the run was claimed by a process that is no more (an xdist worker that crashed): its results
        will never come. The claim is then taken away, so that this process may claim the run again."""
        claim = self._path(run, "claim")
        try:
            owner = int(claim.read_text() or 0)
        except (FileNotFoundError, ValueError):  # not claimed, or its owner is writing its pid
            return False
        if not owner or owner == os.getpid():
            return False
        # tests/common, on an xdist worker's path (only workers claim runs for one another): a crashed worker is a
        # zombie until its parent reaps it, and kill(pid, 0) still finds it
        from processes import running

        if running(owner):
            return False
        claim.unlink(missing_ok=True)
        return True

    def _claimed_for(self, run: Run) -> float:
        """Seconds since the run was claimed (by any worker); 0 if it is not claimed yet."""
        claim = self._path(run, "claim")
        return time.time() - claim.stat().st_mtime if claim.exists() else 0.0

    def _write(self, run: Run, doc: dict) -> None:
        part = self._path(run, "part")
        part.write_text(json.dumps(doc), "utf-8")
        part.replace(self._path(run, "json"))  # atomic: a reader sees all of it or nothing

    def _read(self, run: Run, doc: dict) -> Results:
        if "error" in doc:
            raise AssertionError(f"{run.name}: the run itself failed:\n{doc['error']}")
        return _from_json(doc["results"])

    def _player(self) -> Player:
        with self._lock:
            return self._players.pop() if self._players else Player(self.folder)

    def _play(self, run: Run) -> dict:
        """The run's record, played by an idle player (or a new one)."""
        player = self._player()
        try:
            return player.play(run)
        finally:
            with self._lock:
                self._players.append(player)

    def _work(self) -> None:
        me = threading.get_ident()
        while True:
            with self._lock:
                if self._paused or not self._queue:
                    self._playing.pop(me, None)
                    return
                run = self._queue.pop(0)
                self._playing[me] = (run, time.monotonic())
            if self._claim(run):
                self._write(run, self._play(run))

    def _start(self) -> None:
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            for _ in range(min(self.width - len(self._threads), len(self._queue))):
                thread = threading.Thread(target=self._work, name="fault-pool", daemon=True)
                thread.start()
                self._threads.append(thread)

    def results(self, runs: Iterable[Run]) -> list[Results]:
        """The results of several runs (one check's), all moved to the front of the queue at once."""
        runs = list(runs)
        with self._lock:
            for run in reversed(runs):
                if run in self._queue:
                    self._queue.remove(run)
                    self._queue.insert(0, run)
        return [self.result(run) for run in runs]

    def result(self, run: Run) -> Results:
        with self._lock:
            if run in self._queue:
                self._queue.remove(run)
                self._queue.insert(0, run)
        self._start()
        # Bounded by the run's own bound from when it was claimed (here or by another worker), and
        # while it waits in the queue, by the longest run that may be ahead of it.
        give_up = time.monotonic() + run.bound_s + max(r.bound_s for r in self.runs.values())
        done = self._path(run, "json")
        while not done.exists():
            if self._abandoned(run) and self._claim(run):  # played here: its worker died playing it
                self._write(run, self._play(run))
                break
            if time.monotonic() > give_up or self._claimed_for(run) > run.bound_s:
                raise AssertionError(f"{run.name}: did not finish within {run.bound_s:.0f} s")
            time.sleep(POLL_S)
        return self._read(run, json.loads(done.read_text("utf-8")))

    def play_alone(self, run: Run) -> Results:
        """Play a run that is not in the pool, here and now, with no run of the pool playing beside it
        in this process (its rules judge arrival times): the pool claims nothing new meanwhile and the
        runs it is playing end first."""
        self._paused = True
        try:
            self._idle()
            box: list[dict] = []
            thread = threading.Thread(target=lambda: box.append(record(run)), name=run.name, daemon=True)
            thread.start()
            thread.join(run.bound_s)
        finally:
            self._paused = False
        if not box:
            raise AssertionError(f"{run.name}: did not finish within {run.bound_s:.0f} s")
        self._write(run, box[0])
        return self._read(run, box[0])

    def finish(self) -> None:
        """Play every run not yet claimed, and return once no thread of this pool plays (its players
        then exit). Runs another worker claimed may still be playing there."""
        self._start()
        self._idle()
        with self._lock:
            players, self._players = self._players, []
        for player in players:
            player.close()

    def _idle(self) -> None:
        """Wait until no thread of this pool plays (one still busy past its run's bound is left behind:
        that run fails its own test)."""
        while True:
            with self._lock:
                now = time.monotonic()
                busy = [t for t in self._threads if t.is_alive() and (
                    t.ident not in self._playing
                    or now - self._playing[t.ident][1] <= self._playing[t.ident][0].bound_s)]
            if not busy:
                return
            time.sleep(POLL_S)


if __name__ == "__main__" and sys.argv[1:2] == ["--player"]:
    sys.exit(_player_main(int(sys.argv[2])))
