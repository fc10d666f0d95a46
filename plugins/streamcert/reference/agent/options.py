"""The settings one reference server runs with, shared by every agent it hosts."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..faults import check_fault, switch
from .clock import Clock

D3_READINGS = ("close", "open")


@dataclass
class Options:
    fault: str | None = None
    deterministic: bool = False
    keepalive: float | None = None  # seconds between `: ping` comments; None: none
    # Conflict D3: at an interrupted state the task stream "close"s (the default) or stays "open".
    d3: str = "close"
    # A test agent with a limited framework's reach (docs/script-extensions.md): it plays only these steps, ignores
    # the others, and its card says so. None: every step.
    script_steps: tuple[str, ...] | None = None
    # An agent that plays no script (a production agent): whatever it is sent, it gives the same answer.
    ignore_script: bool = False
    # `streamcert serve --auth TOKEN`: every agent requires this bearer token (auth.py); None: only /agents/secured,
    # with the test token.
    auth: str | None = None
    # The token /agents/secured requires when there is no --auth (None: auth.TEST_TOKEN): the embedded run hands it
    # the credential its user gave (auth.SECURED_TOKEN_ENV), so the run's --header is the one the agent takes.
    secured_token: str | None = None
    clock: Clock = field(init=False)

    def __post_init__(self) -> None:
        check_fault(self.fault)
        if self.d3 not in D3_READINGS:
            raise ValueError(f"d3 must be one of {', '.join(D3_READINGS)}, got {self.d3!r}")
        self.clock = Clock(self.deterministic, style=_timestamp_style(self))


# -- fault variants: the timestamp faults write another style ---------------------------------------
OFFSET_TIMESTAMPS = switch("offset-timestamps")
SECOND_TIMESTAMPS = switch("second-timestamps")


def _timestamp_style(options: Options) -> str:
    if OFFSET_TIMESTAMPS.on(options):
        return "offset"
    if SECOND_TIMESTAMPS.on(options):
        return "seconds"
    return "ms"
