"""Pacing of a progress stream (seed 003 §5): a new phase at once, a data-only change at most four
times a second. Data-only changes are coalesced: the latest is kept and sent when the pace allows;
a new phase supersedes a change still waiting.

The pacer deals in progress values (an object or None) and reads the event loop's clock; what it lets
through goes to `send`, which writes the frame (the status text is added there, as it is at that moment).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from ...protocols.progress import PACING_INTERVAL_S  # four data-only changes a second, at most
from ..agent.options import Options
from ..faults import Switch, switch, variant

Progress = dict[str, Any] | None


class Pacer:
    INTERVAL_S = PACING_INTERVAL_S  # between data-only frames, at least

    def __init__(self, send: Callable[[Progress], None]) -> None:
        self._send = send
        self._loop = asyncio.get_running_loop()
        self._last_sent = float("-inf")  # loop time of the last frame of the current phase
        self._pending: Progress | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def phase(self, progress: Progress) -> None:
        """A new phase (or the turn's end): sent at once; a data-only change still waiting is dropped."""
        self._cancel()
        self._emit(progress, data=False)

    def data(self, progress: Progress) -> None:
        """A data-only change of the current phase: sent now if the pace allows, else kept for later."""
        due = self._last_sent + self.INTERVAL_S
        if self._loop.time() >= due:
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
        self._send(progress)


def pacer_for(options: Options, send: Callable[[Progress], None]) -> Pacer:
    """The pacer of a progress stream: the correct one, or the variant of the pacing fault `options` runs."""
    return variant(options, Pacer, VARIANTS)(send)


# -- fault variants ---------------------------------------------------------------------------------
class _PacingOff(Pacer):
    """Every data-only change is sent at once."""

    def data(self, progress: Progress) -> None:
        self._cancel()
        self._emit(progress, data=True)


class _FiveASecond(Pacer):
    """Data-only changes paced, but five a second: one every 0.2 s, on a grid (a frame sent late does not
    push the next one later, so a loaded machine does not slow the rate down)."""

    INTERVAL_S = 0.2

    def _emit(self, progress: Progress, *, data: bool) -> None:
        due = self._last_sent + self.INTERVAL_S
        super()._emit(progress, data=data)
        if data and self._last_sent - due < self.INTERVAL_S:
            self._last_sent = due


class _DataFrozen(Pacer):
    """Data-only changes are never sent."""

    def data(self, progress: Progress) -> None:
        pass


class _DelaysPhase(Pacer):
    """A new phase right after data-only frames waits behind their pacing."""

    HOLD_S = 1.0  # after the data-only frame before it
    _last_was_data = False

    async def phase(self, progress: Progress) -> None:
        self._cancel()
        if self._last_was_data:
            wait = self._last_sent + self.HOLD_S - self._loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
        await super().phase(progress)

    def _emit(self, progress: Progress, *, data: bool) -> None:
        self._last_was_data = data
        super()._emit(progress, data=data)


VARIANTS: dict[Switch, type[Pacer]] = {
    switch("prog-pacing-off"): _PacingOff,
    switch("prog-pacing-five"): _FiveASecond,
    switch("prog-data-frozen"): _DataFrozen,
    switch("prog-pacing-delays-phase"): _DelaysPhase,
}
