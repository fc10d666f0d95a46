"""What a test agent plays of the script (docs/script-extensions.md, "What a test agent plays"), and an agent judged
as it is (`--prompt`): hand-made logs for the rules, then the reference as a limited framework, as an agent that
ignores the script, and judged as it is."""

from __future__ import annotations

import dataclasses

import pytest
from logs import artifact_update, frame_log, script, sse, status_update, stream_task

from streamcert.catalogue import load_scenario
from streamcert.contract.run import BINDING
from streamcert.drivers import run_scenario
from streamcert.outcomes import Outcome
from streamcert.protocols.script import IGNORED_NOTE, NEEDS_SCRIPT, NO_SCRIPT_NOTE, PLAYED_NOTE, declared_steps
from streamcert.reference.agent.server import ReferenceServer
from streamcert.rules import RuleContext, judge
from streamcert.run_options import OptionError, resolve, target_of
from streamcert.targets import Target

SCRIPT = script({"status": "Working"}, {"artifact": {"artifactId": "out", "name": "out.txt", "chunks": ["hi"]}},
                {"finish": "Done it"})


def _log(*, said: str, artifact: bool, final: str, **notes):
    items = [stream_task(), status_update("TASK_STATE_WORKING", said)]
    if artifact:
        items.append(artifact_update("out", text="hi", name="out.txt", last=True))
    items.append(status_update("TASK_STATE_COMPLETED", final))
    log = frame_log(sse("stream", items), script=SCRIPT)
    log.notes.update(notes)
    return log


def _014(log):
    [finding] = judge(log, ["A2A-STREAM-014"], RuleContext())
    return finding


def test_the_whole_script_is_compared_when_every_step_is_played():
    assert _014(_log(said="Working", artifact=True, final="Done it")).outcome is Outcome.PASS
    assert _014(_log(said="Other", artifact=True, final="Done it")).outcome is Outcome.FAIL


def test_a_step_not_played_is_left_out_and_the_reading_names_it():
    log = _log(said="Thinking", artifact=True, final="Done it", **{PLAYED_NOTE: ["artifact", "finish"]})
    finding = _014(log)
    assert finding.outcome is Outcome.PASS and "`status`" in finding.reading
    # what it does play is still compared
    broken = _log(said="Thinking", artifact=False, final="Done it", **{PLAYED_NOTE: ["artifact", "finish"]})
    assert _014(broken).outcome is Outcome.FAIL


def test_nothing_left_to_compare_is_unsupported_with_the_steps():
    finding = _014(_log(said="x", artifact=False, final="y", **{PLAYED_NOTE: ["sleep"]}))
    assert finding.outcome is Outcome.UNSUPPORTED
    assert "the test agent does not play `status`, `artifact`, `finish`" in finding.message


def test_an_agent_ignoring_the_script_fails_once_saying_so_and_a_run_without_script_is_not_tested():
    ignored = _014(_log(said="x", artifact=False, final="y", **{PLAYED_NOTE: [], IGNORED_NOTE: "it said 'x'"}))
    assert ignored.outcome is Outcome.FAIL and "ignores the script" in ignored.message
    observed = _014(_log(said="x", artifact=False, final="y", **{PLAYED_NOTE: [], NO_SCRIPT_NOTE: True}))
    assert observed.outcome is Outcome.NOT_TESTED and observed.message == NEEDS_SCRIPT


def test_requirements_a_driver_could_not_reach_are_not_tested_with_its_reason():
    log = _log(said="Working", artifact=True, final="Done it")
    log.notes["not_tested"] = {"A2A-STREAM-001": "the test agent ignores the script (why)"}
    log.notes["unsupported"] = {"A2A-STREAM-014": "the test agent does not play `status`"}
    found = {f.req_id: f for f in judge(log, ["A2A-STREAM-001", "A2A-STREAM-014", "A2A-STREAM-018"])}
    assert (found["A2A-STREAM-001"].outcome, found["A2A-STREAM-001"].message) == (
        Outcome.NOT_TESTED, "the test agent ignores the script (why)")
    assert found["A2A-STREAM-014"].outcome is Outcome.UNSUPPORTED
    assert found["A2A-STREAM-018"].outcome is Outcome.PASS  # the others are judged as ever


def test_the_card_declares_steps_in_the_script_extension_params():
    card = {"capabilities": {"extensions": [{"uri": "urn:streamcert:script", "params": {"steps": ["sleep", "finish"]}}]}}
    assert declared_steps(card) == {"sleep", "finish"}
    assert declared_steps({"capabilities": {"extensions": [{"uri": "urn:streamcert:script"}]}}) is None
    assert declared_steps({}) is None


def test_script_steps_option_names_known_steps_only():
    values = resolve({"script_steps": None}, {"STREAMCERT_SUT_SCRIPT_STEPS": "artifact, sleep,finish"})
    assert target_of(values).script_steps == ("artifact", "sleep", "finish")
    with pytest.raises(OptionError, match="'dance': no such script step"):
        resolve({}, {"STREAMCERT_SUT_SCRIPT_STEPS": "artifact,dance"})
    prompts = resolve({}, {"STREAMCERT_SUT_PROMPT": "Hi, there\nBye", "STREAMCERT_SUT_ANSWER": '{"approved": true}'})
    assert (target_of(prompts).prompts, target_of(prompts).answers) == (("Hi, there", "Bye"), ({"approved": True},))


def _judged(sid: str, target: Target) -> dict[str, object]:
    scenario = load_scenario(sid)
    log = run_scenario(sid, target)
    return {f.req_id: f for f in judge(log, scenario.requirements, RuleContext(scenario=scenario))}


@pytest.fixture(scope="module")
def limited():
    with ReferenceServer(script_steps=("artifact", "sleep", "finish")) as server:
        yield server


def test_a_limited_test_agent_is_judged_on_structure_and_what_it_plays(limited):
    found = _judged("stream-basic", Target(a2a_url=limited.url))
    assert not [f for f in found.values() if f.outcome.is_failure], [f.message for f in found.values()]
    assert found["A2A-STREAM-014"].outcome is Outcome.PASS and "`status`" in found["A2A-STREAM-014"].reading
    assert found["A2A-STREAM-008"].outcome is Outcome.PASS  # the structure is judged


def test_a_test_agent_that_plays_no_status_is_still_canceled_and_one_that_cannot_sleep_is_not(limited):
    # cancel-subscribe waits for the task to run, not for a status text: the `sleep` is what it rests on
    found = _judged("cancel-subscribe", Target(a2a_url=limited.url, stream_limit=5))
    assert not [f for f in found.values() if f.outcome.is_failure], [f.message for f in found.values()]
    assert found["A2A-TASK-010"].outcome is Outcome.PASS and found["A2A-STREAM-008"].outcome is Outcome.PASS
    with ReferenceServer() as server:  # its card declares nothing; the option says it cannot sleep
        sleepless = _judged("cancel-subscribe", Target(a2a_url=server.url, script_steps=("status", "finish")))
    assert sleepless["A2A-TASK-010"].outcome is Outcome.UNSUPPORTED
    assert sleepless["A2A-TASK-010"].message == "the test agent does not play `sleep`"


def test_an_interaction_scenario_for_an_agent_that_cannot_ask_is_unsupported(limited):
    found = _judged("ix-question", Target(a2a_url=limited.url))
    assert {f.outcome for f in found.values()} == {Outcome.UNSUPPORTED}
    assert "the test agent does not play `status`, `ask`, `say`" == found["A2A-INT-001"].message


def test_the_option_speaks_for_a_card_that_cannot(limited):
    with ReferenceServer() as server:  # its card declares nothing; the option says what it plays
        found = _judged("ix-question", Target(a2a_url=server.url, script_steps=("finish",)))
    assert found["IX-001"].outcome is Outcome.UNSUPPORTED and "`ask`" in found["IX-001"].message


@pytest.fixture(scope="module")
def ignoring():
    with ReferenceServer(ignore_script=True) as server:
        yield server


def test_an_agent_that_ignores_the_script_is_reported_once_as_such(ignoring):
    target = Target(a2a_url=ignoring.url)
    basic = _judged("stream-basic", target)
    assert [r for r, f in basic.items() if f.outcome.is_failure] == ["A2A-STREAM-014"]
    assert "ignores the script" in basic["A2A-STREAM-014"].message
    ix = _judged("ix-question", target)
    assert {f.outcome for f in ix.values()} == {Outcome.NOT_TESTED}
    assert all(f.message.startswith("the test agent ignores the script") for f in ix.values())


def test_the_plays_over_every_binding_at_once_share_one_probe_and_its_verdict(ignoring, monkeypatch):
    """drivers.run_scenarios plays the bindings at once: the first play to ask probes the agent, the others wait for
    that verdict (three probes racing would leave the run whichever verdict came last)."""
    from streamcert.drivers import run_scenarios, script_steps

    asked = []
    ask = script_steps._ask

    async def counted(client, card, target, url):
        asked.append(target.binding)
        return await ask(client, card, target, url)

    monkeypatch.setattr(script_steps, "_ask", counted)
    target = Target(a2a_url=ignoring.url, stream_limit=5)
    plays = [dataclasses.replace(target, binding=b) for b in ("jsonrpc", "http-json", "grpc")]
    logs = run_scenarios("stream-basic", plays)
    assert len(asked) == 1, asked
    assert [log.notes[BINDING] for log in logs] == ["jsonrpc", "http-json", "grpc"]
    assert all("showed neither text" in log.notes[IGNORED_NOTE] for log in logs), [log.notes for log in logs]
    run_scenarios("ix-question", plays)
    assert len(asked) == 1  # once a run: the verdict is kept


def test_an_agent_judged_as_it_is_shows_its_structure_and_no_content_failure(ignoring):
    target = Target(a2a_url=ignoring.url, prompts=("What is 2+2?", "And 3+3?"))
    found = _judged("stream-basic", target)
    assert not [f for f in found.values() if f.outcome.is_failure], [f.message for f in found.values()]
    assert found["A2A-STREAM-014"].message == NEEDS_SCRIPT
    assert found["A2A-STREAM-001"].outcome is Outcome.PASS and "stream_2" in " ".join(
        f.message for f in judge(run_scenario("stream-basic", target), ["A2A-STREAM-001"]))
    ix = _judged("ix-question", target)
    assert {(f.outcome, f.message) for f in ix.values()} == {(Outcome.NOT_TESTED, NEEDS_SCRIPT)}
