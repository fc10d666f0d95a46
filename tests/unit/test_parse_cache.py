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
