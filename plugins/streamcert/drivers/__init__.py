"""Scenario drivers: each plays one scenario of cases/scenarios/ against a target and returns the
frame log. Drivers speak the protocol and decide nothing; the rules judge the log afterwards.

Exchange labels and notes keys are the contract between a driver and the rules that read its log: they are
declared in streamcert.contract (docs/architecture.md), and each driver module's docstring describes the ones
it writes.
"""

from __future__ import annotations

import asyncio
import importlib
import signal
import threading
from typing import Any, Awaitable, Callable

from ..catalogue import BOUND_PROFILES, Scenario, load_scenario
from ..contract.run import BINDING, STREAM_LIMIT_S
from ..framelog import FrameLog
from ..targets import Target  # where drivers and tests have always imported it from
from ..wallclock import now
from .script_steps import NotDriven

Driver = Callable[[Target, Scenario, FrameLog], Awaitable[None]]
_DRIVERS: dict[str, Driver] = {}


def driver(name: str) -> Callable[[Driver], Driver]:
    def deco(fn: Driver) -> Driver:
        _DRIVERS[name] = fn
        return fn

    return deco


# The module of this package that defines each driver (a scenario's `driver`). A run imports only the modules of the
# scenarios it plays: an a2a run never pays for the client, ACP or push drivers and what they import (vcrpy and
# PyYAML, subprocess capture). tests/unit/test_imports.py checks this table against the drivers each module registers.
DRIVER_MODULES = {
    "card": "a2a", "stream-task": "a2a", "list-tasks": "a2a", "cancel-subscribe": "a2a", "errors": "a2a",
    "extension-required": "a2a", "no-streaming": "a2a", "security": "a2a",
    "multi-client": "multi", "push": "push", "push-deliveries": "push_deliveries",
    "interactions": "interactions", "plans": "plans", "progress-stream": "progress", "line-cases": "line",
    "acp": "acp", "acp-client-case": "acp_client", "client-case": "client",
}


# The drivers whose plays open the suite's webhook receiver (wire/push_receiver.py). A run that pins it, where it
# listens (--push-receiver) or the URL the agent reaches it by (--push-url), has one for every play: those plays
# go one after the other (plays_at_once).
RECEIVER_DRIVERS = frozenset({"push", "push-deliveries"})


def plays_at_once(scenario: Scenario, target: Target) -> bool:
    """Whether the plays of this scenario over several bindings may go at once (run_scenarios): not when they would
    share the webhook receiver the run pins."""
    pinned = target.push_receiver is not None or target.push_url is not None
    return not (pinned and scenario.data.get("driver", scenario.id) in RECEIVER_DRIVERS)


def load_driver(name: str) -> Driver:
    """The driver called `name`, its module imported on first use."""
    if name not in _DRIVERS:
        importlib.import_module(f"{__name__}.{DRIVER_MODULES[name]}")
    return _DRIVERS[name]


def run_scenario(scenario_id: str, target: Target) -> FrameLog:
    """Play one scenario synchronously and return its frame log (never raises for target faults)."""
    played = run_scenarios(scenario_id, [target])[0]
    if isinstance(played, BaseException):
        raise played
    return played


def run_scenarios(scenario_id: str, targets: list[Target]) -> list[FrameLog | Exception]:
    """Play one scenario once per target, the plays at once in one event loop, and return each play's frame log,
    or the exception that ended its driver (a harness fault, reported for that play alone). The A2A profiles' plays
    over each binding (plugin.check) go this way: their waits overlap, so a scenario costs its longest play rather
    than the sum of its plays. Each play has its own log, clients, tasks and webhook receiver (docs/architecture.md);
    what the plays share is the run's, and waited for by the others (the script probe: script_steps._probe)."""
    scenario = load_scenario(scenario_id)
    fn = load_driver(scenario.data.get("driver", scenario_id))
    logs = []
    for target in targets:
        log = FrameLog(scenario=scenario.id, target=target.a2a_url or "", script=scenario.script, started=now())
        log.notes[STREAM_LIMIT_S] = target.stream_limit
        if scenario.profile in BOUND_PROFILES:
            log.notes[BINDING] = target.binding  # the A2A binding this play of the scenario went over
        logs.append(log)

    async def play(target: Target, log: FrameLog) -> FrameLog:
        try:
            await fn(target, scenario, log)
        except NotDriven:  # its requirements are noted in the log (UNSUPPORTED or NOT_TESTED, with the reason)
            pass
        return log

    async def plays() -> list[Any]:
        return await asyncio.gather(*(play(t, log) for t, log in zip(targets, logs)), return_exceptions=True)

    results: list[Any] = _run_interruptibly(plays())  # (Ctrl-C raised KeyboardInterrupt there)
    for i, r in enumerate(results):
        if isinstance(r, asyncio.CancelledError):  # not by the run: a driver let one out, that play's harness fault
            results[i] = RuntimeError(f"the play over {targets[i].binding} was cancelled inside its driver")
        elif isinstance(r, BaseException) and not isinstance(r, Exception):
            raise r  # an exit is not one play's fault
    return results


CANCEL_AGAIN_S = 0.5


def _run_interruptibly(driving: Awaitable[Any]) -> Any:
    """asyncio.run, with Ctrl-C (SIGINT) ending the run as it ends one outside a scenario. asyncio's own handler
    only cancels the main task, and a driver that waits on several tasks may go on (a cancellation taken by a
    task it gathers): the interrupt was then lost, and the run went on to PASS. Here a SIGINT cancels every task
    of the loop (again every CANCEL_AGAIN_S until the driver is out) and is then raised as KeyboardInterrupt."""
    interrupted: list[bool] = []

    async def main() -> Any:
        loop = asyncio.get_running_loop()
        previous: Any = signal.getsignal(signal.SIGINT)
        # asyncio's handler is installed by now (it replaces the default one); an ignored SIGINT stays ignored
        mine = threading.current_thread() is threading.main_thread() and callable(previous)

        def cancel_all() -> None:
            # again every half second: a task that took one cancellation (a cleanup that waits) gets another
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.call_later(CANCEL_AGAIN_S, cancel_all)

        def on_sigint(signum: int, frame: Any) -> None:
            if interrupted:  # a second Ctrl-C: at once
                raise KeyboardInterrupt
            interrupted.append(True)
            loop.call_soon_threadsafe(cancel_all)

        if mine:
            signal.signal(signal.SIGINT, on_sigint)
        try:
            return await driving
        finally:
            if mine:
                signal.signal(signal.SIGINT, previous)

    value = None
    try:
        value = asyncio.run(main())
    except asyncio.CancelledError:
        if not interrupted:
            raise
    if interrupted:
        raise KeyboardInterrupt
    return value
