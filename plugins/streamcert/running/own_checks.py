"""What a user's own tests get from the plugin (docs/plugin.md): the frame log of a scenario, driven once per
process and shared with the conformance test that drove it (`Captures`), a client on the run's target, and the
values a user's `streamcert_target` fixture gives, read as run options (`adopted_values`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import run_options
from ..catalogue import BOUND_PROFILES, load_scenario
from ..framelog import FrameLog
from ..targets import Target
from ..wallclock import now

if TYPE_CHECKING:
    from ..plugin import StreamcertRun
    from ..wire.a2a_client import A2AClient


def adopted_values(given: Any) -> dict[str, Any]:
    """The run options a `streamcert_target` override names: a URL (the A2A agent's), or a mapping of run option
    names (`a2a_url`, `acp_cmd`, `headers`, …, as docs/contracts.md §5 lists them by their `streamcert run`
    flag) to values. A URL is checked as `--url` checks it; an unknown name is refused."""
    if isinstance(given, str):
        return {"a2a_url": run_options.http_url(given)}
    if not isinstance(given, Mapping):
        raise TypeError(f"streamcert_target gave {type(given).__name__}: give a URL or a mapping of run options")
    known = {opt.name: opt for opt in run_options.RUN_OPTIONS}
    if unknown := sorted(set(given) - set(known)):
        raise ValueError(f"streamcert_target: no run option named {', '.join(unknown)} (the names: {', '.join(known)})")
    values = dict(given)
    for name, value in values.items():
        if isinstance(value, str) and known[name].type is run_options.http_url:
            values[name] = run_options.http_url(value)
    return values


class Captures:
    """The `streamcert_capture` fixture: `streamcert_capture("stream-basic")` is that scenario's frame log
    against the run's target, driven at most once in this process (a conformance test that drove it already
    leaves its log here); `.target` is the Target, `.client()` an A2A client on it."""

    def __init__(self, run: StreamcertRun) -> None:
        self.run = run

    @property
    def target(self) -> Target:
        return self.run.target

    def __call__(self, scenario_id: str, binding: str | None = None) -> FrameLog:
        """The scenario's log: over `binding`, else the first A2A binding the run certifies (A2A profiles)."""
        scenario = load_scenario(scenario_id)
        if scenario.profile in BOUND_PROFILES:
            if binding is None:
                choice = self.run.bindings()
                binding = choice.certified[0] if choice is not None and choice.certified else self.target.binding
        else:
            binding = None
        key = (scenario.id, binding)
        if key not in self.run.captures:
            from ..drivers import run_scenario

            target = self.target if binding is None else _with_binding(self.target, binding)
            self.run.captures[key] = run_scenario(scenario.id, target)
        return self.run.captures[key]

    def client(self, log: FrameLog | None = None, binding: str | None = None) -> A2AClient:
        """An A2A client on the run's A2A target (its credentials, limits and binding), writing into `log` (a new
        one when None; `client.log`). Use it in `async with`."""
        from ..wire.clients import client_for

        target = self.target if binding is None else _with_binding(self.target, binding)
        return client_for(target, log if log is not None else FrameLog(scenario="own", target=target.a2a_url or "",
                                                                       started=now()))


def _with_binding(target: Target, binding: str) -> Target:
    import dataclasses

    return dataclasses.replace(target, binding=binding)
