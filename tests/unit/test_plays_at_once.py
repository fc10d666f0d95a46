"""A scenario's plays over several bindings go at once, in one event loop (drivers.run_scenarios): each play keeps
its own log, a harness fault ends its own play alone, Ctrl-C still ends them all; and the plays that would share a
pinned webhook receiver go one after the other (drivers.plays_at_once)."""

from __future__ import annotations

import asyncio
import signal
import time

import pytest

import streamcert.drivers as drivers
from streamcert.catalogue import load_scenario
from streamcert.contract.run import BINDING
from streamcert.drivers import NotDriven, Target, plays_at_once, run_scenario, run_scenarios
from streamcert.framelog import FrameLog

BINDINGS = ("jsonrpc", "http-json", "grpc")


def _targets() -> list[Target]:
    return [Target(a2a_url="http://127.0.0.1:9", binding=b) for b in BINDINGS]


@pytest.fixture
def driver(monkeypatch):
    """stream-basic played by a stand-in driver: `driver.behave[binding]` is what its play does."""
    events: list[str] = []
    behave: dict[str, str] = {}

    async def stand_in(target: Target, scenario, log: FrameLog) -> None:
        events.append(f"start {target.binding}")
        await asyncio.sleep(0.05)
        what = behave.get(target.binding, "")
        if what == "fault":
            raise ValueError(f"no such thing over {target.binding}")
        if what == "not-driven":
            raise NotDriven
        if what == "ctrl-c":
            signal.raise_signal(signal.SIGINT)
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:  # taken once, as a driver's cleanup may: it must be cancelled again
                await asyncio.sleep(30)
        if what == "cancelled":
            raise asyncio.CancelledError  # let out by a driver, not sent by the run
        log.notes["played"] = target.binding
        events.append(f"end {target.binding}")

    monkeypatch.setattr(drivers, "load_driver", lambda name: stand_in)
    stand_in.events, stand_in.behave = events, behave
    return stand_in


def test_the_plays_of_a_scenario_go_at_once_each_into_its_own_log(driver):
    logs = run_scenarios("stream-basic", _targets())
    assert driver.events[:3] == [f"start {b}" for b in BINDINGS]  # every play began before any ended
    assert [log.notes[BINDING] for log in logs] == list(BINDINGS)
    assert [log.notes["played"] for log in logs] == list(BINDINGS)
    assert len({id(log) for log in logs}) == 3


def test_a_harness_fault_ends_its_own_play_and_the_others_run_to_their_end(driver):
    driver.behave.update(grpc="fault", jsonrpc="not-driven")
    logs = run_scenarios("stream-basic", _targets())
    assert isinstance(logs[2], ValueError) and "over grpc" in str(logs[2])
    assert isinstance(logs[0], FrameLog) and "played" not in logs[0].notes  # NotDriven: its log, as far as it went
    assert logs[1].notes["played"] == "http-json" and "end http-json" in driver.events
    with pytest.raises(ValueError, match="over grpc"):  # one play alone raises it, as it always did
        run_scenario("stream-basic", _targets()[2])


def test_a_cancellation_a_driver_lets_out_is_its_own_plays_fault(driver):
    driver.behave.update(jsonrpc="cancelled")
    logs = run_scenarios("stream-basic", _targets())
    assert isinstance(logs[0], RuntimeError) and "over jsonrpc was cancelled" in str(logs[0])
    assert [log.notes["played"] for log in logs[1:]] == ["http-json", "grpc"]


def test_ctrl_c_during_the_plays_ends_them_all(driver):
    driver.behave.update(jsonrpc="ctrl-c")
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_scenarios("stream-basic", _targets())
    assert time.monotonic() - started < 10  # the play waiting 30 s was cancelled
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("pin", [{"push_receiver": "127.0.0.1:8765"}, {"push_url": "http://hooks.test:8765"}])
def test_plays_that_would_share_a_pinned_webhook_receiver_go_one_after_the_other(pin):
    for scenario_id in ("push-configs", "push-deliveries"):
        assert plays_at_once(load_scenario(scenario_id), Target())
        assert not plays_at_once(load_scenario(scenario_id), Target(**pin)), scenario_id
    assert plays_at_once(load_scenario("stream-basic"), Target(**pin))  # no receiver in it
