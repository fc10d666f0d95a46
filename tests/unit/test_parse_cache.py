"""The parse of an event past its exchange's parse budget (framelog.Event.json): not kept with the event, but the
last one read is, so two reads of one event in a row parse it once, and a large event is never held parsed twice
(issue 29: a rule's body and then its evidence). Judging a log lets it go."""

from __future__ import annotations

import json

import pytest

from streamcert import framelog
from streamcert.framelog import Event, FrameLog, ParseBudget, forget_last_parse


@pytest.fixture
def parses(monkeypatch):
    """How many times the frame log's JSON reader ran."""
    count = {"n": 0}
    real = framelog.read_json

    def counting(text):
        count["n"] += 1
        return real(text)

    monkeypatch.setattr(framelog, "read_json", counting)
    forget_last_parse()
    yield count
    forget_last_parse()


def _events(n: int, budget: int = 0) -> list[Event]:
    shared = ParseBudget(budget)  # 0: no parse is kept with its event
    events = [Event(index=i, t=float(i), data=json.dumps({"i": i, "text": "x" * 10})) for i in range(n)]
    for ev in events:
        ev._budget = shared
    return events


def _read(*events: Event) -> list:
    return [ev.payload for ev in events]


def test_an_event_past_the_budget_read_twice_in_a_row_is_parsed_once_and_the_same_value_given(parses):
    first, _ = _events(2)
    body = first.payload
    assert first.payload is body and first.json() == ({"i": 0, "text": "x" * 10}, None)
    assert parses["n"] == 1


def test_only_the_last_event_past_the_budget_is_kept(parses):
    a, b = _events(2)
    _read(a, b, a, b)
    assert parses["n"] == 4  # alternating reads parse each time: one parse kept, never a second
    within = _events(1, budget=1 << 20)[0]
    _read(within, within)
    assert parses["n"] == 5  # kept with its event (within its budget), as before
    _read(b)
    assert parses["n"] == 5  # the last parse past the budget is still b's


def test_judging_a_log_lets_the_last_parse_go(parses):
    from streamcert.rules import judge

    ev = _events(1)[0]
    _read(ev)
    assert framelog._last_parse[0] is ev
    judge(FrameLog(scenario="stream-basic"), ["WIRE-002"])
    assert framelog._last_parse == (None, None, None)
    _read(ev)
    assert parses["n"] == 2


def test_an_exchange_let_go_of_its_events_keeps_nothing_made_of_them_while_it_is_held():
    """Issue 29: the script probe cleared its stream's events, but the exchange's data-event list (`derived`)
    still held a 64 MiB event, carried into the scenario the probe precedes (254 MiB at the peak, 193 without).
    `Exchange.let_go_of_events` drops the events and every view, number and parse made of them."""
    import tracemalloc

    import logs

    from streamcert.rules.common.streamview import frame_facts

    text = "s" * (4 << 20)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        ex = logs.sse("stream", [logs.task(), logs.status_update("TASK_STATE_COMPLETED", text)])
        ex.chunks = []  # a capture keeps a large stream's bytes in a file (framelog.Spool), not in memory
        assert ex.data_events() and ex.frame_number(ex.data_events()[-1]) == 2 and frame_facts(ex)
        held = tracemalloc.get_traced_memory()[0] - before
        ex.let_go_of_events()
        forget_last_parse()
        left = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held > len(text), "the event is held while it is read"
    assert left < 256 * 1024, f"{left} bytes of the events are still held by the exchange"
    assert ex.events == [] and ex.data_events() == [] and not frame_facts(ex)
