"""Progress while a run goes on (running/live.py): a line per scenario as it finishes, flushed under a pipe, and in
a long wait a heartbeat that says what the run waits for. Each run is a `streamcert run` subprocess whose
stdout is a pipe, read line by line with a deadline (nothing sleeps to make a line come); and the record
and the lines themselves, in this process."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
from hostile import CARD_PATH, HostileServer, card, head, response, sse_event

from streamcert.catalogue import load_scenario, scenario_ids
from streamcert.framelog import Event, Exchange
from streamcert.plugin import FINDINGS_KEY
from streamcert.running import live
from streamcert.scrub import Scrubber
from streamcert.wire import activity as hook

REPO = Path(__file__).resolve().parents[2]
RUN_S = 120  # the bound of one run (a --profile a2a run takes about 4 s)
# The limit of the slow targets' waits below: far past the heartbeat's period, never reached (each target stays
# silent until the test has read the heartbeat line, then lets the run go on at once).
SLOW_S = 60
OUTCOMES = "PASS|FAIL|ERROR|NON_STRICT|WARNING|UNSUPPORTED|SKIPPED|NOT_TESTED"
LINE = re.compile(rf"^  ({OUTCOMES}) +(\S+) \((\w+)\) (\d+\.\d\d) s(?:  (.*))?$")
WAIT = re.compile(r"^  \.\.\. +(\S+) \((\w+)\) waiting (\d+\.\d) s for (.+)$")
SUMMARY = re.compile(r"^(\d+) (passed|failed)")
SECRET = "s3cr3t-token"


class Output:
    """The lines of a running process's stdout, each with the time it arrived, read by a thread."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.started = time.monotonic()  # the process was started just before
        self.lines: list[tuple[float, str]] = []
        self.ended: float | None = None
        self._queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._queue.put((time.monotonic(), line.rstrip("\n")))
        self._queue.put(None)

    def _next(self, deadline: float) -> tuple[float, str] | None:
        try:
            item = self._queue.get(timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            raise AssertionError(f"no line within the deadline; so far:\n{self.text}") from None
        if item is None:
            self.ended = time.monotonic()
            return None
        self.lines.append(item)
        return item

    def expect(self, pattern: re.Pattern, within: float, before: re.Pattern | None = None) -> tuple[float, re.Match]:
        """The next line matching `pattern`, within `within` seconds, and before any line matching `before`."""
        deadline = time.monotonic() + within
        while (item := self._next(deadline)) is not None:
            if before is not None and before.match(item[1]):
                raise AssertionError(f"{item[1]!r} came first; so far:\n{self.text}")
            if m := pattern.match(item[1]):
                return item[0], m
        raise AssertionError(f"the output ended without it; so far:\n{self.text}")

    def finish(self, within: float) -> int:
        deadline = time.monotonic() + within
        while self.ended is None:
            self._next(deadline)
        return self.proc.wait(timeout=max(deadline - time.monotonic(), 1))

    def matching(self, pattern: re.Pattern) -> list[re.Match]:
        return [m for _, line in self.lines if (m := pattern.match(line))]

    @property
    def text(self) -> str:
        return "\n".join(line for _, line in self.lines)[-4000:]


@contextmanager
def running(*args: str, cwd: Path):
    """`streamcert ARGS` with stdout on a pipe (stderr with it), stopped (its whole group) on the way out."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # the pipe stays block-buffered
    proc = subprocess.Popen([sys.executable, "-m", "streamcert", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True)
    try:
        yield Output(proc)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


def profile_scenarios(profile: str) -> set[str]:
    return {sid for sid in scenario_ids() if load_scenario(sid).profile == profile}


# -- a line per scenario, as it finishes ------------------------------------------------------------------

@pytest.mark.parametrize("extra", [[], ["--", "-n", "2"]], ids=["one-process", "xdist"])
def test_a_line_per_scenario_arrives_as_it_finishes_under_a_pipe(tmp_path, extra):
    # over one binding: the lines are what is proven, not the bindings (each of a2a's tests prints one line)
    with running("run", "--profile", "a2a", "--binding", "jsonrpc", "--report", "rep", *extra, cwd=tmp_path) as out:
        first, _ = out.expect(LINE, within=RUN_S)
        # The run goes on after its first line: the line was flushed when its test finished, not at exit.
        assert out.proc.poll() is None, out.text
        code = out.finish(within=RUN_S)
    assert code == 0, out.text
    found = out.matching(LINE)
    names = [m[2] for m in found]
    summary = [m for _, line in out.lines if (m := SUMMARY.match(line))]
    assert summary and len(names) == int(summary[0][1]), out.text  # one line per test that ran (none skipped)
    assert len(set(names)) == len(names) and set(names) <= profile_scenarios("a2a"), names
    assert {"card", "stream-basic", "errors"} <= set(names)
    assert all(m[1] == "PASS" and m[3] == "a2a" and float(m[4]) > 0 for m in found), out.text
    # They came one by one, not in one write at the end: from the first line to the last, the time the tests
    # after the first took (a third of it: two xdist workers share it; one write would take microseconds).
    last = [t for t, line in out.lines if LINE.match(line)][-1]
    after_first = sum(float(m[4]) for m in found[1:])
    assert after_first > 0 and last - first >= after_first / 3, (last - first, after_first, out.text)
    # pytest's letters and its [100%] are not written beside the lines
    assert not [line for _, line in out.lines if line.strip() and set(line.strip()) <= set(".sFE")], out.text
    assert "[100%]" not in out.text


# -- the heartbeat in a long wait -------------------------------------------------------------------------

def test_heartbeat_names_the_scenario_and_what_it_waits_for(tmp_path):
    """An ACP agent that answers initialize, then nothing: the run waits for session/new (up to SLOW_S), and
    within the heartbeat's period the run says so (before the test's own line). Then the agent exits, unanswered."""
    release = tmp_path / "release"
    agent = f"{sys.executable} {REPO / 'tests' / 'common' / 'stdio_agents.py'} init-then-hang {release}"
    with running("run", "--profile", "acp", "--acp-cmd", agent, "--timeout", str(SLOW_S), "--stream-limit",
                 str(SLOW_S), "--report", "rep", "--", "-k", "test_acp_v2_items", cwd=tmp_path) as out:
        heard, wait = out.expect(WAIT, within=RUN_S, before=LINE)
        release.touch()
        assert (wait[1], wait[2]) == ("acp-v2-items", "acp"), wait[0]
        # Said only once the run had printed nothing for HEARTBEAT_S (its last line may be its start: how long
        # the wait itself had lasted then depends on how fast the agent came up), and before the limit.
        assert heard - out.started >= live.HEARTBEAT_S, (heard - out.started, wait[0])
        assert 0 < float(wait[3]) < SLOW_S, wait[0]
        assert wait[4].startswith("the answer to session/new from the agent, 1 line so far"), wait[0]
        assert wait[4].endswith(f"limit {SLOW_S} s"), wait[0]
        _, done = out.expect(LINE, within=RUN_S)
        # the agent ended without answering session/new: its own failure (not a limit's ERROR: none was reached)
        assert (done[1], done[2]) == ("FAIL", "acp-v2-items") and "ACP-PLAN-003" in done[5], done[0]
        assert out.finish(within=RUN_S) == 1


RELEASED = threading.Event()  # set by the test once it has read the heartbeat: the silent stream then ends


async def _silent_stream(request, writer) -> None:
    """The card; a stream that sends its Task, then nothing until RELEASED (then it ends, unfinished); any other
    call refused at once."""
    if request.path == CARD_PATH:
        writer.write(response(card(f"http://{request.headers['host']}")))
        return
    sent = request.json()
    if sent.get("method") != "SendStreamingMessage":
        writer.write(response({"jsonrpc": "2.0", "id": sent.get("id"), "error": {"code": -32001, "message": "no"}}))
        return
    writer.write(head(content_type="text/event-stream"))
    writer.write(sse_event({"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}},
                           sent.get("id")))
    await writer.drain()
    deadline = time.monotonic() + SLOW_S + 5  # past the run's idle limit: unreleased, the run ends the stream
    while not RELEASED.is_set() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)


def test_heartbeat_under_xdist_reads_the_workers_records(tmp_path):
    """The same under pytest-xdist: the wait is in a worker, the controller prints it. Then the stream ends,
    unfinished."""
    RELEASED.clear()
    with HostileServer(_silent_stream, lifetime=RUN_S) as server:
        with running("run", "--url", server.url, "--idle-limit", str(SLOW_S), "--stream-limit", str(SLOW_S),
                     "--report", "rep", "--", "-n", "2", "-k", "test_stream_basic", cwd=tmp_path) as out:
            _, wait = out.expect(WAIT, within=RUN_S, before=LINE)
            RELEASED.set()
            assert (wait[1], wait[2]) == ("stream-basic", "a2a"), wait[0]
            assert wait[4].startswith("the next frame of SendStreamingMessage (stream, over JSON-RPC), 1 frame so far, "
                                      "nothing new for"), wait[0]
            _, done = out.expect(LINE, within=RUN_S)
            assert done[2] == "stream-basic" and done[1] in ("FAIL", "ERROR"), done[0]
            assert out.finish(within=RUN_S) == 1


# -- the record, the lines and the threads, in this process ------------------------------------------------

def test_waiting_records_nothing_outside_a_run(monkeypatch):
    ex = Exchange(label="get_task", method="POST", url="http://x", rpc_method="GetTask")
    assert hook._activity is None
    hook.waiting("card", ex, 30)  # the project's own tests and the fault meta-test drive scenarios like this
    activity = hook.Activity()
    monkeypatch.setattr(hook, "_activity", activity)
    hook.waiting("card", ex, 30)  # between tests: nothing either
    assert activity.snapshot() is None and not activity.waits


def test_the_record_says_what_has_come_and_forgets_what_ended(monkeypatch):
    activity = hook.Activity()
    monkeypatch.setattr(hook, "_activity", activity)
    activity.start("test_a2a_stream.py::test_stream_basic")
    unary = Exchange(label="get_task", method="POST", url="http://x", rpc_method="GetTask")
    stream = Exchange(label="stream", method="POST", url="http://x", rpc_method="SendStreamingMessage",
                      notes={"streaming": True})
    agent = Exchange(label="agent", method="STDIO", url="agent --stdio")
    hook.waiting("stream-basic", unary, 30)
    hook.waiting("stream-basic", stream, 15)
    hook.waiting("acp-v2-items", agent, 10, "the answer to initialize")
    whats = [w["what"] for w in activity.snapshot()["waits"]]
    assert whats == ["the answer to GetTask (get_task, over JSON-RPC)",
                     "the answer to SendStreamingMessage (stream, over JSON-RPC)",
                     "the answer to initialize from the agent"]
    stream.t_headers = 0.1
    stream.events.append(Event(index=0, t=0.2, data="{}"))
    unary.t_end = 0.3
    waits = activity.snapshot()["waits"]
    assert [w["what"] for w in waits] == ["the next frame of SendStreamingMessage (stream, over JSON-RPC)",
                                          "the answer to initialize from the agent"]
    line = live.wait_line(waits[0], time.time())
    assert re.match(r"  \.\.\. +stream-basic \(a2a\) waiting 0\.\d s for the next frame of SendStreamingMessage "
                    r"\(stream, over JSON-RPC\), 1 frame so far, nothing new for 0\.\d s; limit 15 s$", line), line
    activity.end()
    assert activity.snapshot() is None


def _report(when: str, outcome: str, findings=(), longrepr=None) -> SimpleNamespace:
    props = [(FINDINGS_KEY, json.dumps([{"id": rid, "outcome": out, "message": ""} for rid, out in findings]))]
    return SimpleNamespace(when=when, outcome=outcome, passed=outcome == "passed", failed=outcome == "failed",
                           skipped=outcome == "skipped", longrepr=longrepr, user_properties=props if findings else [])


def test_a_test_takes_the_worst_outcome_of_its_findings():
    same = str
    ok = _report("call", "passed", [("A2A-CARD-001", "PASS"), ("A2A-CARD-002", "WARNING")])
    assert live.outcome_of(ok, same) == ("WARNING", "A2A-CARD-002")
    bad = _report("call", "failed", [(f"A2A-ERR-00{n}", "FAIL") for n in range(1, 7)] + [("A2A-ERR-009", "ERROR")])
    assert live.outcome_of(bad, same) == ("FAIL", "A2A-ERR-001 A2A-ERR-002 A2A-ERR-003 A2A-ERR-004 +2")
    assert live.outcome_of(_report("setup", "failed", longrepr="boom\nmore"), same) == ("ERROR", "setup: boom")
    assert live.outcome_of(_report("call", "skipped"), same) == (None, "")  # its profile not selected
    line = live.finished_line("PASS", ["stream-basic"], 1.234)
    assert line == f"  {'PASS':<{live.WORD}} stream-basic (a2a) 1.23 s"
    assert live.named(["acp-v1-capability", "acp-v1-fallback", "card"]) == \
        "acp-v1-capability, acp-v1-fallback (acp), card (a2a)"


def test_the_heartbeat_stops_with_the_session():
    plugins = SimpleNamespace(get_plugin=lambda name: None)  # no terminal: nothing is printed
    config = SimpleNamespace(args=["streamcert.suite"], pluginmanager=plugins, option=SimpleNamespace(verbose=-1))
    progress = live.LiveProgress(config)
    assert progress.on
    progress.pytest_sessionstart()
    progress.pytest_runtest_logstart()
    assert any(t.name == "streamcert-live-heartbeat" and t.is_alive() for t in threading.enumerate())
    started = time.monotonic()
    progress.pytest_sessionfinish()
    assert time.monotonic() - started < 2 * live.TICK_S
    assert not [t for t in threading.enumerate() if t.name.startswith("streamcert-live")]
    assert hook._activity is None
    progress.pytest_unconfigure()


def test_the_controller_writes_a_line_per_test_scrubbed():
    written = []
    terminal = SimpleNamespace(write_line=lambda line, **markup: written.append(line), flush=lambda: None,
                               showfspath=None)
    run = SimpleNamespace(scrubber=Scrubber(secrets=[SECRET]))
    plugins = SimpleNamespace(get_plugin={"terminalreporter": terminal, "streamcert-run": run}.get)
    config = SimpleNamespace(args=["streamcert.suite"], pluginmanager=plugins, option=SimpleNamespace(verbose=-1))
    progress = live.LiveProgress(config)
    progress.pytest_sessionstart()
    try:
        stream, errors = "test_a2a_stream.py::test_stream_basic", "test_a2a_errors.py::test_errors"
        reports = [
            _report("setup", "passed"), _report("call", "failed", [("A2A-STREAM-014", "FAIL"), ("WIRE-001", "PASS")]),
            _report("teardown", "passed"),
        ]
        for n, report in enumerate(reports):
            progress.pytest_runtest_logreport(SimpleNamespace(**vars(report), nodeid=stream, duration=0.5 * n))
            assert len(written) == (n == 2), written  # at the teardown, not before
        failed = _report("setup", "failed", longrepr=f"ConnectError: http://127.0.0.1:9/?api_key={SECRET}")
        for report in (failed, _report("teardown", "passed")):
            progress.pytest_runtest_logreport(SimpleNamespace(**vars(report), nodeid=errors, duration=0.1))
    finally:
        progress.pytest_sessionfinish()
    assert written[0] == f"  {'FAIL':<{live.WORD}} stream-basic (a2a) 1.50 s  A2A-STREAM-014"
    assert written[1] == (f"  {'ERROR':<{live.WORD}} errors (a2a) 0.20 s  setup: ConnectError: "
                          "http://127.0.0.1:9/?api_key=***")
