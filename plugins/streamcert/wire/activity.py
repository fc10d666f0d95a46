"""What the process running a conformance test waits for, as the wire code starts each wait: the activity
record the live-progress plugin (running/live.py) shows in a long silence.

The wire code (a2a_client.py, grpc.py, stdio.py) calls `waiting()` as a wait begins: the record names the
scenario, the exchange and its limit, and is read from another thread, which counts what has arrived since.
While no conformance test runs in this process (`attach` not called: the project's own tests, the fault
meta-test's threads, `streamcert check` or `replay`), `waiting()` is a no-op. Nothing here imports pytest.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..contract.capture import STREAMING
from ..protocols.bindings import TITLE


@dataclass
class Wait:
    """One wait on the target: an exchange (HTTP request or subprocess run) and what it awaits."""

    scenario: str
    ex: Any  # framelog.Exchange, filled by the wire code as frames arrive
    limit: float | None
    awaiting: str | None  # a subprocess wait: what it waits for ("the answer to initialize")
    since: float = field(default_factory=time.time)
    seen: tuple[int, int] = (0, 0)  # frames and chunks at the last look
    quiet_since: float = 0.0  # when the last look found something new (or the wait began)


class Activity:
    """The test a process is running and the waits it opened. The drivers' thread adds waits; the sampler
    (heartbeat or worker writer) reads them: only whole-object swaps and dict inserts cross threads."""

    def __init__(self) -> None:
        self.test: str | None = None
        self.test_since = 0.0
        self.waits: dict[int, Wait] = {}

    def start(self, nodeid: str) -> None:
        self.waits = {}
        self.test, self.test_since = nodeid, time.time()

    def end(self) -> None:
        self.test, self.waits = None, {}

    def snapshot(self) -> dict[str, Any] | None:
        """The running test and its open waits, each described as of now (wall-clock times: a worker's
        record is read by another process)."""
        test, waits = self.test, list(self.waits.values())
        if test is None:
            return None
        return {"test": test, "since": self.test_since,
                "waits": [d for w in waits if (d := _describe(w)) is not None]}


def _describe(w: Wait) -> dict[str, Any] | None:
    ex = w.ex
    if ex.t_end is not None:  # over
        return None
    frames, chunks = len(ex.events), len(ex.chunks)
    if (frames, chunks) != w.seen:
        w.seen, w.quiet_since = (frames, chunks), time.time()
    # an A2A operation names its binding: a scenario's plays over the bindings wait at once (drivers.run_scenarios)
    op = f"{ex.rpc_method} ({ex.label}, over {TITLE.get(ex.binding, ex.binding)})" if ex.rpc_method else \
        f"{ex.method} ({ex.label})"
    if ex.method == "STDIO":
        what, unit, count = f"{w.awaiting or 'output'} from the {ex.label}", "line", frames
    elif ex.t_headers is None:
        what, unit, count = f"the answer to {op}", None, 0
    elif ex.notes.get(STREAMING) or ex.is_sse:
        what = f"the {'next' if frames else 'first'} frame of {op}"
        unit, count = ("frame", frames) if frames else ("chunk", chunks) if chunks else (None, 0)
    else:
        what, unit, count = f"the rest of the body of {op}", "chunk", chunks
    return {"scenario": w.scenario, "what": what, "unit": unit, "count": count, "since": w.since,
            "quiet_since": w.quiet_since, "limit": w.limit}


_activity: Activity | None = None  # set while this process runs conformance tests


def waiting(scenario: str, ex: Any, limit: float | None = None, awaiting: str | None = None) -> None:
    """The wire code starts a wait on `ex` for `scenario` (at most `limit` seconds): shown by the heartbeat
    while it lasts. Costs a dict insert, and nothing outside a conformance run."""
    act = _activity
    if act is not None and act.test is not None:
        act.waits[id(ex)] = Wait(scenario, ex, limit, awaiting, seen=(len(ex.events), len(ex.chunks)),
                                 quiet_since=time.time())


def attach(activity: Activity) -> None:
    """This process runs conformance tests: `waiting()` records into `activity` from now on."""
    global _activity
    _activity = activity


def detach(activity: Activity) -> None:
    """The run that attached `activity` is over: `waiting()` is a no-op again."""
    global _activity
    if _activity is activity:
        _activity = None
