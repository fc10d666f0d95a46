"""Ctrl-C during a scenario ends the run (drivers._run_interruptibly), even when the driver waits on a task that
takes the cancellation asyncio's own handler sends its main task: the interrupt was lost there, and a run that
had been told to stop went on to PASS (seen in test_first_hour's Ctrl-C test, on a loaded machine)."""

from __future__ import annotations

import asyncio
import signal
import time

import pytest

from streamcert.drivers import _run_interruptibly


async def _driver_that_takes_one_cancel() -> None:
    async def stubborn() -> None:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:  # taken once, as a driver's cleanup may: then it waits on
            await asyncio.sleep(30)

    helper = asyncio.create_task(stubborn())
    await asyncio.sleep(0.05)
    signal.raise_signal(signal.SIGINT)  # the user's Ctrl-C
    await asyncio.gather(helper, return_exceptions=True)


def test_ctrl_c_in_a_scenario_is_a_keyboard_interrupt_even_when_a_task_takes_the_cancel():
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        _run_interruptibly(_driver_that_takes_one_cancel())
    assert time.monotonic() - started < 10  # every task cancelled: nobody waits out its 30 s
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # left as it was found


def test_a_scenario_without_ctrl_c_runs_to_its_end():
    async def quick() -> None:
        await asyncio.sleep(0.01)

    _run_interruptibly(quick())
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
