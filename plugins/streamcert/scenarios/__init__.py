"""Scenario drivers: each plays one scenario of cases/scenarios/ against a target and returns the
frame log. Drivers speak the protocol and decide nothing; the rules judge the log afterwards.

Exchange labels are the contract between a driver and the rules that read its log; each driver
module lists the labels it writes.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Awaitable, Callable

from ..catalogue import Scenario, load_scenario
from ..framelog import FrameLog
from ..wire.capture import Clock


@dataclass
class Target:
    """Where the implementation under test is, and the limits the drivers keep to."""

    a2a_url: str | None = None
    nostream_url: str | None = None  # an agent whose card declares streaming: false (A2A-ERR-001)
    stream_limit: float = 15.0  # seconds a single stream may stay open before it is cut
    timeout: float = 10.0  # seconds for a unary answer
    headers: dict[str, str] = field(default_factory=dict)  # e.g. credentials; scrubbed from output

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(v for v in self.headers.values() if v)


Driver = Callable[[Target, Scenario, FrameLog], Awaitable[None]]
_DRIVERS: dict[str, Driver] = {}


def driver(name: str) -> Callable[[Driver], Driver]:
    def deco(fn: Driver) -> Driver:
        _DRIVERS[name] = fn
        return fn

    return deco


def _load() -> None:
    from . import a2a  # noqa: F401  (registers the A2A drivers)


def run_scenario(scenario_id: str, target: Target) -> FrameLog:
    """Play one scenario synchronously and return its frame log (never raises for target faults)."""
    _load()
    scenario = load_scenario(scenario_id)
    name = scenario.data.get("driver", scenario_id)
    fn = _DRIVERS[name]
    log = FrameLog(scenario=scenario.id, target=target.a2a_url or "", script=scenario.script,
                   started=datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"))
    log.notes["stream_limit_s"] = target.stream_limit
    asyncio.run(fn(target, scenario, log))
    return log


def new_clock() -> Clock:
    return Clock()
