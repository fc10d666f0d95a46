"""The interactions driver (drivers/interactions.py) against a server whose subscriptions carry nothing: the
first such subscription is waited out to the stream limit and shows it; the later pauses open none, so a scenario
waits the limit once, not once per pause, and still plays every pause to the end."""

from __future__ import annotations

from streamcert.drivers import run_scenario
from streamcert.framelog import END_TIME_LIMIT
from streamcert.reference.agent.server import ReferenceServer
from streamcert.targets import Target

SCENARIO = "ix-two-questions"  # two pauses: a subscription opened at each
LIMIT_S = 1.5


def play(fault: str | None):
    with ReferenceServer(fault=fault) as server:
        return run_scenario(SCENARIO, Target(a2a_url=server.url, stream_limit=LIMIT_S))


def subscriptions(log) -> list:
    return [ex for ex in log.exchanges if ex.label.startswith("subscribe_")]


def test_a_subscription_that_carries_nothing_is_waited_out_once():
    log = play("subscribe-no-task")
    subs = subscriptions(log)
    assert [ex.label for ex in subs] == ["subscribe_1"]
    assert subs[0].end == END_TIME_LIMIT and subs[0].data_events() == []
    assert log.notes["interactions"]["silent_subscription"] == "subscribe_1"
    # both pauses were still met and answered, and the task read back once the streams ended
    assert len(log.notes["interactions"]["pauses"]) == 2
    assert log.get("answer_1") is not None and log.get("answer_2") is not None and log.get("get_final") is not None


def test_subscriptions_that_carry_the_task_are_opened_at_every_pause():
    log = play(None)
    assert [ex.label for ex in subscriptions(log)] == ["subscribe_1", "subscribe_2"]
    assert all(ex.data_events() for ex in subscriptions(log))
    assert "silent_subscription" not in log.notes["interactions"]
