"""Scenario drivers: each plays one scenario of cases/scenarios/ against a target and returns the
frame log. Drivers speak the protocol and decide nothing; the rules judge the log afterwards.

Exchange labels are the contract between a driver and the rules that read its log; each driver
module lists the labels it writes.
"""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Awaitable, Callable

from ..catalogue import Scenario, load_scenario
from ..framelog import FrameLog


@dataclass
class Target:
    """Where the implementation under test is, and the limits the drivers keep to."""

    a2a_url: str | None = None
    nostream_url: str | None = None  # an agent whose card declares streaming: false (A2A-ERR-001)
    stream_limit: float = 15.0  # seconds a single stream may stay open before it is cut
    timeout: float = 10.0  # seconds for a unary answer
    headers: dict[str, str] = field(default_factory=dict)  # e.g. credentials; scrubbed from output
    progress_url: str | None = None  # a progress stream: POST the script, read SSE (DESIGN §6)
    progress_pointer: str = "/progress"  # JSON pointer to the progress object in each event
    progress_cases: str | None = None  # another copy of cases/progress.json to judge by
    line_cmd: str | None = None  # a progress-line renderer (DESIGN §7)
    acp_cmd: str | None = None  # an ACP agent, started as a subprocess
    client_cmd: str | None = None  # a client to certify (DESIGN §7)

    def has(self, profile: str) -> bool:
        """Whether this target can be judged on a profile."""
        return bool({"a2a": self.a2a_url, "interactions": self.a2a_url, "plans": self.a2a_url,
                     "acp": self.acp_cmd, "progress": self.progress_url, "line": self.line_cmd,
                     "client": self.client_cmd}.get(profile))

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
    """Import every driver module of this package once: each registers its drivers."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")


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


