"""What bounds one A2A answer as a client reads it, on every binding: the run's caps (`Bounds`) and the
callbacks a stream is read with (`OnEvent` sees each data event, `Until` says when the reader stops).

Shared by the A2A client (a2a_client.py), its binding transports (bindings/) and the gRPC call (grpc.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from .. import limits
from ..framelog import Event

OnEvent = Callable[[Event], "Awaitable[None] | None"]
Until = Callable[[Event], bool]


@dataclass(frozen=True)
class Bounds:
    """The caps one client keeps to (limits.py names each: its option, default and sentence)."""

    max_event: int = int(limits.MAX_EVENT.default)
    max_body: int = int(limits.MAX_BODY.default)
    max_stream: int = int(limits.MAX_STREAM.default)
    max_decompressed: int = int(limits.MAX_DECOMPRESSED.default)
    idle: float = limits.IDLE.default

    @classmethod
    def of(cls, target: Any) -> Bounds:
        """The bounds of a run's Target (its max_*_bytes and idle_limit)."""
        return cls(int(target.max_event_bytes), int(target.max_body_bytes), int(target.max_stream_bytes),
                   int(target.max_decompressed_bytes), float(target.idle_limit))
