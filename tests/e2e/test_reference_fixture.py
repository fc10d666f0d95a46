"""The `streamcert_reference` fixture (the plugin's form of `streamcert serve --fault NAME`)."""

from streamcert.catalogue import load_scenario
from streamcert.drivers import Target, run_scenario
from streamcert.outcomes import Outcome
from streamcert.rules import RuleContext, judge


def first_frame_outcome(server) -> Outcome:
    scenario = load_scenario("stream-basic")
    log = run_scenario("stream-basic", Target(a2a_url=server.url, stream_limit=5))
    found = judge(log, ["A2A-STREAM-001"], RuleContext(scenario=scenario))
    return found[0].outcome


def test_fixture_serves_the_reference_and_its_faults(streamcert_reference):
    assert first_frame_outcome(streamcert_reference()) == Outcome.PASS
    assert first_frame_outcome(streamcert_reference(fault="status-first")) == Outcome.FAIL
