"""Progress while a conformance run goes on: one line per test as it finishes, and in a long silence what
the run is waiting for.

      PASS        card (a2a) 0.29 s
      FAIL        stream-basic (a2a) 0.20 s  A2A-STREAM-014
      ...         stream-basic (a2a) waiting 5.5 s for the next frame of SendStreamingMessage (stream), 1 frame
                  so far, nothing new for 5.1 s; limit 9 s                                  (one line)

The controller (the one pytest process, or pytest-xdist's controller, which sees every report) prints a
test's line from its reports, through the terminal reporter and flushed, so it shows under a pipe as it
happens; the line replaces pytest's letter for that test (`pytest_report_teststatus`), so the two never
share a line. A test's outcome is the worst of its findings (outcomes.py).

Where the tests run (the same process, or each xdist worker), the drivers' wire code calls `waiting()` as
a wait begins (wire/activity.py, which the wire layer imports without this plugin or pytest): the record
(`Activity`) names the scenario, the exchange and its limit, and is read from another thread, which counts
what has arrived since. A heartbeat thread of the controller prints the open
waits once nothing has been printed for `HEARTBEAT_S`. An xdist worker's stdout is not the terminal, so
each worker writes its record, scrubbed, to a small JSON file in a folder the controller names in
`workerinput` (execnet has no channel a plugin may use from a thread), and the heartbeat reads them.

Nothing here runs unless the run names the conformance modules (suite_map.runs_suite); `waiting()` is a
no-op otherwise (the project's own tests, the fault meta-test's threads).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# pytest.hookimpl is this marker; pluggy is imported instead of pytest (the plugin module imports this one
# at its own import, before pytest has loaded its plugins).
from pluggy import HookimplMarker

from ..suite_map import runs_suite, scenarios_of_test
from ..wire import activity as hook
from ..wire.activity import Activity
from .report_keys import FINDINGS_KEY, REGRESSIONS_KEY, XDIST_CRASH

hookimpl = HookimplMarker("pytest")

PLUGIN = "streamcert-live"  # the name the LiveProgress object is registered under
DIR_KEY = "streamcert_live_dir"  # workerinput: the folder where each xdist worker writes its record
HEARTBEAT_S = 5.0  # the longest silence: past it, the heartbeat says what the run waits for
TICK_S = 0.5  # how often the heartbeat (and a worker's writer) looks at the records
WORD = 11  # the width of the outcome column ("UNSUPPORTED")
WAIT_WORD = "..."  # the outcome column of a heartbeat line
SHOWN_IDS = 4  # requirement IDs named on a line that is not a pass
MAX_WAIT_LINES = 4  # open waits shown per worker in one heartbeat

_MARKUP = {"PASS": {"green": True}, "FAIL": {"red": True}, "ERROR": {"red": True}}


# -- the lines ---------------------------------------------------------------------------------------------

def named(scenarios: list[str]) -> str:
    """`stream-basic (a2a)`, `acp-v1-capability, acp-v1-fallback (acp)`: the scenarios by profile."""
    from ..catalogue import load_scenario

    groups: dict[str, list[str]] = {}
    for sid in scenarios:
        try:
            profile = load_scenario(sid).profile
        except (OSError, ValueError):
            profile = "?"
        groups.setdefault(profile, []).append(sid)
    return ", ".join(f"{', '.join(ids)} ({profile})" for profile, ids in groups.items())


def finished_line(word: str, scenarios: list[str], seconds: float, note: str = "") -> str:
    return f"  {word:<{WORD}} {named(scenarios)} {seconds:.2f} s" + (f"  {note}" if note else "")


def wait_line(record: dict[str, Any], now: float) -> str:
    text = f"{named([record['scenario']])} waiting {now - record['since']:.1f} s for {record['what']}"
    if record.get("unit"):
        count = record["count"]
        text += (f", {count} {record['unit']}{'' if count == 1 else 's'} so far, nothing new for "
                 f"{now - record['quiet_since']:.1f} s")
    if record.get("limit"):
        text += f"; limit {record['limit']:g} s"
    return f"  {WAIT_WORD:<{WORD}} {text}"


def running_line(scenarios: list[str], since: float, now: float) -> str:
    return f"  {WAIT_WORD:<{WORD}} {named(scenarios)} running {now - since:.1f} s, no request open"


def _scenarios(nodeid: str) -> list[str]:
    """The scenarios a test drives, by its id (suite_map.py)."""
    return list(scenarios_of_test(nodeid))


@dataclass
class _Finished:
    """What the controller gathers of one test's reports until its teardown."""

    seconds: float = 0.0
    word: str | None = None  # None: nothing to show (a test skipped for its profile or target)
    note: str = ""


def outcome_of(report: Any, scrub: Any) -> tuple[str | None, str]:
    """The word and note of a test's deciding report: the worst of its findings with the IDs that had it;
    ERROR for a failure without findings (a harness fault, a worker that died); None for a skip without."""
    from ..outcomes import Finding, Outcome, worst

    props = getattr(report, "user_properties", [])
    findings = [Finding.from_json(d) for k, v in props if k == FINDINGS_KEY for d in json.loads(v)]
    regressions = [json.loads(v) for k, v in props if k == REGRESSIONS_KEY]
    changed = sum(int(r.get("differences") or 0) for r in regressions)
    note = f"differs from its cassette ({changed} difference(s))" if changed else ""
    if findings:
        top = worst(f.outcome for f in findings)
        assert top is not None
        if top not in (Outcome.PASS, Outcome.UNSUPPORTED):
            ids = sorted({f.req_id for f in findings if f.outcome == top})
            more = f" +{len(ids) - SHOWN_IDS}" if len(ids) > SHOWN_IDS else ""
            note = " ".join(ids[:SHOWN_IDS]) + more + (f"; {note}" if note else "")
        return top.value, note
    if report.failed:
        crash = getattr(report.longrepr, "reprcrash", None)
        text = crash.message if crash is not None else str(report.longrepr or "").strip()
        first = text.splitlines()[0] if text else ""
        phase = f"{report.when}: " if report.when in ("setup", "call", "teardown") else ""  # else a worker crash
        return "ERROR", scrub(f"{phase}{first}"[:160])
    return ("PASS", note) if report.passed else (None, "")


# -- the plugin ---------------------------------------------------------------------------------------------

class LiveProgress:
    """Registered by plugin.py beside StreamcertRun; does nothing unless the run names the conformance
    modules. Controller side: the lines and the heartbeat. Runner side (the one process, or a worker):
    the Activity record, and under xdist its file."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.is_worker = hasattr(config, "workerinput")
        self.worker_dir = config.workerinput.get(DIR_KEY) if self.is_worker else None
        self.on = bool(self.worker_dir) if self.is_worker else runs_suite(config)
        self.dir: Path | None = None  # controller under xdist: where the workers' records are
        self.lines = False  # the controller prints a line per test (pytest's letters left out)
        self.activity = Activity()
        self.finished: dict[str, _Finished] = {}
        self.done: set[str] = set()  # tests whose line is printed (a worker's record may lag behind)
        self._lock = threading.Lock()  # one writer at a time on the terminal
        self._last_output = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._out: Any = None  # the heartbeat's copy of the terminal's file descriptor (tests in this process)

    # -- helpers ---------------------------------------------------------------------------------------
    @property
    def terminal(self) -> Any:
        return self.config.pluginmanager.get_plugin("terminalreporter")

    def scrub(self, text: str) -> str:
        run = self.config.pluginmanager.get_plugin("streamcert-run")
        return run.scrubber.text(text) if run is not None else text

    def write(self, line: str, *, direct: bool = False, **markup: bool) -> None:
        """One line on the terminal, flushed (a pipe is block-buffered: it must leave now). `direct`: from
        the heartbeat while this process runs a test, whose output capture holds file descriptor 1 then:
        the line goes to the copy of the terminal's descriptor taken before the tests."""
        tr = self.terminal
        if tr is None:
            return
        with self._lock:
            if direct and self._out is not None:
                ahead = "\n" if self.config.option.verbose > 0 else ""  # -v: pytest's line is open
                self._out.write(ahead + self.scrub(line) + "\n")
                self._out.flush()
            else:
                tr.write_line(self.scrub(line), **markup)
                tr.flush()
            self._last_output = time.monotonic()

    def _start_thread(self, target: Any, name: str) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=target, name=name, daemon=True)
            self._thread.start()

    def _stop_thread(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        if self._out is not None:
            with self._lock:
                self._out.close()
                self._out = None

    # -- both sides --------------------------------------------------------------------------------------
    @hookimpl(trylast=True)
    def pytest_sessionstart(self) -> None:
        if not self.on:
            return
        hook.attach(self.activity)
        tr = None if self.is_worker else self.terminal
        self.lines = tr is not None and self.config.option.verbose <= 0
        if self.lines and self.config.option.verbose == 0:
            tr.showfspath = False  # as pytest-xdist does: no file names for the letters there are none of
        if tr is not None:
            try:  # output capture is off between tests: descriptor 1 is the terminal (or the pipe) here
                fd = os.dup(sys.stdout.fileno())
            except (AttributeError, OSError, ValueError):  # no descriptor (an in-process run): write through tr
                return
            self._out = os.fdopen(fd, "w", encoding=sys.stdout.encoding or "utf-8", errors="replace")

    @hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: Any) -> Any:
        """Where the test runs: the record names it while it runs."""
        if not self.on:
            return (yield)
        self.activity.start(item.nodeid)
        if self.worker_dir:
            self._start_thread(self._write_records, "streamcert-live-writer")
        try:
            return (yield)
        finally:
            self.activity.end()

    @hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        """Before the report and the summary: the threads end here, and nothing is written after."""
        if not self.on:
            return
        self._stop_thread()
        hook.detach(self.activity)
        if self.worker_dir:
            Path(self.worker_dir, f"{self.config.workerinput['workerid']}.json").unlink(missing_ok=True)

    def pytest_unconfigure(self) -> None:
        self._stop_thread()
        hook.detach(self.activity)
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- controller ---------------------------------------------------------------------------------------
    @hookimpl(optionalhook=True)  # pytest-xdist: a worker is set up
    def pytest_configure_node(self, node: Any) -> None:
        if self.on:
            if self.dir is None:
                self.dir = Path(tempfile.mkdtemp(prefix="streamcert-live-"))
            node.workerinput[DIR_KEY] = str(self.dir)

    @hookimpl(wrapper=True)
    def pytest_report_teststatus(self, report: Any) -> Any:
        """No letter for a conformance test: its line says more, and a letter would share that line."""
        status = yield
        if self.lines and isinstance(status, tuple) and status[1] and _scenarios(report.nodeid):
            return (status[0], "", *status[2:])
        return status

    def pytest_runtest_logstart(self) -> None:
        if self.on and not self.is_worker:
            self._start_thread(self._heartbeat, "streamcert-live-heartbeat")

    def pytest_runtest_logreport(self, report: Any) -> None:
        if not self.lines:
            return
        state = self.finished.setdefault(report.nodeid, _Finished())
        state.seconds += report.duration or 0.0
        if report.when == "call" or (not report.passed and state.word not in ("FAIL", "ERROR")):
            state.word, state.note = outcome_of(report, self.scrub)
        if report.when not in ("teardown", XDIST_CRASH):
            return
        del self.finished[report.nodeid]
        self.done.add(report.nodeid)
        scenarios = _scenarios(report.nodeid)
        if state.word is not None and scenarios:
            self.write(finished_line(state.word, scenarios, state.seconds, state.note),
                       **_MARKUP.get(state.word, {"yellow": True}))

    def _records(self) -> list[dict[str, Any]]:
        """The running tests' records: this process's, or the xdist workers' files."""
        if self.dir is None:
            mine = self.activity.snapshot()
            return [mine] if mine else []
        found = []
        for path in sorted(self.dir.glob("*.json")):
            try:
                found.append(json.loads(path.read_text("utf-8")))
            except (OSError, ValueError):  # a worker that ended meanwhile
                continue
        return [r for r in found if isinstance(r, dict) and r.get("test")]

    def _heartbeat(self) -> None:
        while not self._stop.wait(TICK_S):
            try:
                records = self._records()  # looked at every tick: it is what notices new frames
                if time.monotonic() - self._last_output < HEARTBEAT_S:
                    continue
                now = time.time()
                for record in records:
                    if record["test"] in self.done:
                        continue
                    waits = record.get("waits") or []
                    direct = self.dir is None  # the test runs here, its output captured
                    if not waits:
                        self.write(running_line(_scenarios(record["test"]), record["since"], now), direct=direct)
                    for wait in waits[:MAX_WAIT_LINES]:
                        self.write(wait_line(wait, now), direct=direct)
            except OSError:  # the terminal went away (a closed pipe): nothing more to say
                return
            except Exception:  # noqa: BLE001  (progress is a courtesy: it never breaks a run)
                continue

    # -- xdist worker ---------------------------------------------------------------------------------------
    def _write_records(self) -> None:
        """Write this worker's record, scrubbed, whenever it changes (atomically: the controller reads it)."""
        path = Path(self.worker_dir or ".", f"{self.config.workerinput['workerid']}.json")
        part = path.with_suffix(".part")
        written = None
        while not self._stop.wait(TICK_S):
            try:
                record = self.activity.snapshot() or {"test": None}
                for wait in record.get("waits", []):
                    wait["what"] = self.scrub(wait["what"])
                text = json.dumps(record)
                if text != written:
                    part.write_text(text, "utf-8")
                    os.replace(part, path)
                    written = text
            except Exception:  # noqa: BLE001  (as above: never breaks a run)
                continue
