"""Pacing of a progress stream (seed 003 §5): a new phase at once, a data-only change at most four
times a second. Data-only changes are coalesced: the latest is kept and sent when the pace allows;
a new phase supersedes a change still waiting.

The pacer deals in progress values (an object or None) and reads the event loop's clock; what it lets
through goes to `send`, which writes the frame (the status text is added there, as it is at that moment).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

DATA_INTERVAL_S = 0.25  # four data-only changes a second, at most
# The `pacing-delays-phase` fault: a new phase waits this long after the data-only frame before it.
FAULT_PHASE_HOLD_S = 1.0

Progress = dict[str, Any] | None


class Pacer:
    def __init__(self, send: Callable[[Progress], None], *, pace_data: bool = True, send_data: bool = True,
                 hold_phase_s: float = 0.0) -> None:
        self._send = send
        self._pace_data = pace_data  # False: the `pacing-off` fault
        self._send_data = send_data  # False: the `data-frozen` fault
        self._hold_phase_s = hold_phase_s  # > 0: the `pacing-delays-phase` fault
        self._loop = asyncio.get_running_loop()
        self._last_sent = float("-inf")  # loop time of the last frame of the current phase
        self._last_was_data = False
        self._pending: Progress | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def phase(self, progress: Progress) -> None:
        """A new phase (or the turn's end): sent at once; a data-only change still waiting is dropped."""
        self._cancel()
        if self._hold_phase_s and self._last_was_data:
            wait = self._last_sent + self._hold_phase_s - self._loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
        self._emit(progress, data=False)

    def data(self, progress: Progress) -> None:
        """A data-only change of the current phase: sent now if the pace allows, else kept for later."""
        if not self._send_data:
            return
        due = self._last_sent + DATA_INTERVAL_S
        if not self._pace_data or self._loop.time() >= due:
            self._cancel()
            self._emit(progress, data=True)
            return
        self._pending = progress  # the latest wins
        if self._timer is None:
            self._timer = self._loop.call_at(due, self._flush)

    def close(self) -> None:
        self._cancel()

    def _flush(self) -> None:
        self._timer = None
        if self._pending is not None:
            progress, self._pending = self._pending, None
            self._emit(progress, data=True)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._pending = None

    def _emit(self, progress: Progress, *, data: bool) -> None:
        self._last_sent = self._loop.time()
        self._last_was_data = data
        self._send(progress)
