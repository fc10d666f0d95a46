"""The rule engine's mechanics, on rules made up for the test (registered in a private registry)."""

from __future__ import annotations

import pytest
from logs import broken, frame_log, unary

from streamcert.catalogue import load_catalogue
from streamcert.outcomes import Outcome
from streamcert.rules import Run, Unjudgeable, Verdict, Verdicts, engine, judge, rule


@pytest.fixture(autouse=True)
def private_registry(monkeypatch):
    judge(frame_log(), [])  # load the real rules first, so they do not land in the private registry
    monkeypatch.setattr(engine, "_REGISTRY", {})


class Counted:
    built = 0

    @classmethod
    def of(cls, log, ctx):
        cls.built += 1
        return cls()


class Lost:
    @classmethod
    def of(cls, log, ctx):
        return Run(log, ctx).answered("card")


def test_a_view_is_built_once_per_log_and_shared():
    Counted.built = 0

    @rule("X-001", view=Counted)
    def one(v, out: Verdict):
        out.passed("seen")

    @rule("X-002", view=Counted)
    def two(v, out: Verdict):
        out.passed("seen")

    found = judge(frame_log(), ["X-001", "X-002"])
    assert [(f.req_id, f.outcome) for f in found] == [("X-001", Outcome.PASS), ("X-002", Outcome.PASS)]
    assert Counted.built == 1


def test_a_view_without_an_answer_is_error_and_without_the_exchange_nothing():
    @rule("X-001", "X-002", view=Lost)
    def both(v, out: Verdicts):
        out["X-001"].passed("never reached")

    failed = judge(frame_log(broken("card", "connection refused")), ["X-001", "X-002"])
    assert {(f.req_id, f.outcome) for f in failed} == {("X-001", Outcome.ERROR), ("X-002", Outcome.ERROR)}
    assert "connection refused" in failed[0].message and failed[0].evidence
    assert judge(frame_log(), ["X-001", "X-002"]) == []


def test_unjudgeable_raised_in_a_rule_body_is_handled_like_a_view():
    @rule("X-001", view=Run)
    def reads(run: Run, out: Verdict):
        run.answered("card")
        out.passed("never reached")

    assert judge(frame_log(), ["X-001"]) == []
    [f] = judge(frame_log(broken("card", "reset")), ["X-001"])
    assert f.outcome == Outcome.ERROR and "reset" in f.message


def test_a_rule_that_raises_is_a_harness_fault_never_a_pass():
    @rule("X-001", view=Run)
    def crashes(run: Run, out: Verdict):
        raise KeyError("oops")

    [f] = judge(frame_log(), ["X-001"])
    assert f.outcome == Outcome.ERROR and "harness fault in rule crashes" in f.message


def test_failures_cite_the_catalogue_source_and_passes_do_not():
    rid = "A2A-ERR-008"
    source = load_catalogue()[rid].source

    @rule(rid, view=Run)
    def decides(run: Run, out: Verdict):
        out.failed("seen X, expected Y", [{"exchange": "card"}])
        out.non_strict("weaker", reading="a reading")
        out.passed("fine")

    found = judge(frame_log(unary("card", result={})), [rid])
    assert [f.message for f in found] == [f"seen X, expected Y [{source}]", f"weaker [{source}]", "fine"]
    assert found[1].reading == "a reading"


def test_fail_each_counts_shows_the_first_and_keeps_three_frames():
    @rule("X-001", view=Run)
    def many(run: Run, out: Verdict):
        bad = [(f"item {n} is wrong", {"n": n}) for n in range(5)]
        assert out.fail_each("items are wrong", bad)
        assert not out.fail_each("nothing", [])

    [f] = judge(frame_log(), ["X-001"])
    assert f.outcome == Outcome.FAIL
    assert f.message == "5 items are wrong; the first: item 0 is wrong"
    assert [e["n"] for e in f.evidence] == [0, 1, 2]


def test_only_the_asked_ids_are_kept():
    @rule("X-001", "X-002", view=Run)
    def both(run: Run, out: Verdicts):
        out["X-001"].passed()
        out["X-002"].failed("no")

    assert [f.req_id for f in judge(frame_log(), ["X-001"])] == ["X-001"]


def test_unsupported_ids_skip_their_rules():
    @rule("X-001", view=Run)
    def decides(run: Run, out: Verdict):
        out.failed("should not run")

    log = frame_log()
    log.notes["unsupported"] = {"X-001": "the card declares no such extension"}
    [f] = judge(log, ["X-001"])
    assert f.outcome == Outcome.UNSUPPORTED and "no such extension" in f.message


def test_unjudgeable_carries_its_message():
    assert Unjudgeable().message == ""
    assert Unjudgeable("why", [{"a": 1}]).evidence == [{"a": 1}]


def test_evidence_numbers_frames_among_data_events_and_follows_a_copy():
    import copy

    from logs import sse

    from streamcert.framelog import Event
    from streamcert.rules import ev_evidence

    ex = sse("stream", ["a", "b", "c"])
    ping = Event(index=1, t=0.0, kind="comment", data="ping")
    ex.events.insert(1, ping)
    a, b, c = (ev for ev in ex.events if not ev.is_comment)
    assert [ev_evidence(ex, ev)["frame"] for ev in (a, ping, b, c)] == [1, 1, 2, 3]
    assert ex.frame_number(Event(index=9, t=0.0, data="elsewhere")) == 0
    twin = copy.deepcopy(ex)  # a copy is numbered on its own events, not on the original's
    del twin.events[0]
    assert [twin.frame_number(ev) for ev in twin.events] == [0, 1, 2]
    assert "_frame_numbers" not in ex.to_json()  # the numbering is never saved
