"""Scenario drivers: each plays one scenario of cases/scenarios/ against a target and returns the
frame log. Drivers speak the protocol and decide nothing; the rules judge the log afterwards.

Exchange labels and notes keys are the contract between a driver and the rules that read its log: they are
declared in streamcert.contract (docs/architecture.md), and each driver module's docstring describes the ones
it writes.
"""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
from typing import Awaitable, Callable

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


def _load() -> None:
    """Import every driver module of this package once: each registers its drivers."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")


def run_scenario(scenario_id: str, target: Target) -> FrameLog:
    """Play one scenario synchronously and return its frame log (never raises for target faults)."""
    _load()
    scenario = load_scenario(scenario_id)
    name = scenario.data.get("driver", scenario_id)
    fn = _DRIVERS[name]
    log = FrameLog(scenario=scenario.id, target=target.a2a_url or "", script=scenario.script, started=now())
    log.notes[STREAM_LIMIT_S] = target.stream_limit
    if scenario.profile in BOUND_PROFILES:
        log.notes[BINDING] = target.binding  # the A2A binding this play of the scenario went over
    try:
        asyncio.run(fn(target, scenario, log))
    except NotDriven:  # its requirements are noted in the log (UNSUPPORTED or NOT_TESTED, with the reason)
        pass
    return log
