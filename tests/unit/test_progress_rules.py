"""PROG- rules on hand-made progress streams (both ways), and the reference's progress route driven by
the suite's own driver."""

from __future__ import annotations

import random

import httpx
import pytest
from logs import broken, frame_log, progress_sse, script

from streamcert.catalogue import Scenario, load_scenario
from streamcert.drivers import Target, run_scenario
from streamcert.outcomes import Outcome
from streamcert.reference.agent.server import ReferenceServer
from streamcert.rules import RuleContext, judge
from streamcert.rules.progress.progress import _worst_run

T0 = 1_795_000_000_000  # a since in Unix milliseconds


def item(progress, status="Working"):
    return {"status": status, "progress": progress}


def p(phase, since=T0, **data):
    return {"phase": phase, "since": since, **data}


def outcome_of(req_id, items, times=None, steps=None, notes=None):
    """The worst outcome of `req_id` on a progress stream of `items`, and the findings."""
    sc = script(*(steps or [{"think": 100}, {"finish": "ok"}]))
    log = frame_log(progress_sse(items, times=times, script=sc), script=sc, notes=notes)
    scenario = Scenario(id="t", profile="progress", title="", requirements=(req_id,), script=sc)
    findings = judge(log, [req_id], RuleContext(scenario=scenario))
    assert findings, f"no finding for {req_id}"
    return max((f.outcome for f in findings), key=lambda o: o.rank), findings


THINK = [item(p("thinking")), item(None)]


# -- the object -----------------------------------------------------------------------------------

def test_phase_names():
    assert outcome_of("PROG-001", THINK)[0] == Outcome.PASS
    assert outcome_of("PROG-001", [item(p("preparing")), *THINK])[0] == Outcome.FAIL
    assert outcome_of("PROG-001", [item("thinking"), item(None)])[0] == Outcome.FAIL


@pytest.mark.parametrize("since,want", [(T0, Outcome.PASS), (1_795_000_000, Outcome.FAIL),
                                        (1_795_000_000.25, Outcome.FAIL), (float(T0), Outcome.NON_STRICT),
                                        ("1795000000000", Outcome.FAIL)])
def test_since_is_integer_unix_ms(since, want):
    assert outcome_of("PROG-002", [item(p("thinking", since)), item(None)])[0] == want


@pytest.mark.parametrize("progress,want", [
    (p("running_tool", tool="bash", what="ls"), Outcome.PASS),
    (p("running_tool", what="ls"), Outcome.FAIL),  # tool is required
    (p("reading_prompt", done="5", total=10), Outcome.FAIL),
    (p("reading_prompt"), Outcome.PASS),  # without done/total where no prompt-progress came
    (p("reading_prompt", done=5, total=10), Outcome.PASS),
    (p("reading_prompt", done=5), Outcome.PASS),  # total not known: left out (§2 "without total")
    (p("reading_prompt", total=10), Outcome.FAIL),  # total known, done left out: done is known too
    (p("reading_prompt", done=5.5), Outcome.FAIL),
    (p("waiting_for_model", model="m", reason="tired"), Outcome.FAIL),
    (p("waiting_for_person", what="approval", tool="bash"), Outcome.PASS),
    (p("stopped", reason="boredom"), Outcome.FAIL),
    (p("retrying", reason="503", **{"in": 5}, attempt=2), Outcome.PASS),
    (p("writing", rate=12.5, extra="x"), Outcome.PASS),  # an unlisted member is tolerated
    (p("queued", ahead=2.0), Outcome.NON_STRICT),
])
def test_phase_fields(progress, want):
    assert outcome_of("PROG-003", [item(progress)])[0] == want


def test_unknown_field_left_out_never_null():
    assert outcome_of("PROG-004", [item(p("writing")), item(None)])[0] == Outcome.PASS
    worst, findings = outcome_of("PROG-004", [item(p("writing", rate=None)), item(None)])
    assert worst == Outcome.FAIL and "rate" in findings[0].message


TOOL_NO_TITLE = [{"tool": {"name": "read_file", "ms": 100}}, {"finish": "ok"}]


def test_unknown_field_never_guessed():
    good = [item(p("running_tool", tool="read_file")), item(None)]
    guessed = [item(p("running_tool", tool="read_file", what="read_file")), item(None)]
    assert outcome_of("PROG-005", good, steps=TOOL_NO_TITLE)[0] == Outcome.PASS
    assert outcome_of("PROG-005", guessed, steps=TOOL_NO_TITLE)[0] == Outcome.FAIL


@pytest.mark.parametrize("progress,want", [
    (p("running_tool", tool="bash", what="x" * 80), Outcome.PASS),
    (p("running_tool", tool="bash", what="x" * 81), Outcome.FAIL),
    (p("running_tool", tool="bash", what="make\nmake install"), Outcome.FAIL),
    (p("failed", reason="Error 2\nsee build.log"), Outcome.FAIL),
    (p("failed", reason="Error 2"), Outcome.PASS),
])
def test_one_line_texts(progress, want):
    assert outcome_of("PROG-006", [item(progress)])[0] == want


# -- since ----------------------------------------------------------------------------------------

READ = [{"read_prompt": {"total": 100, "updates": 4, "ms": 1000}}, {"finish": "ok"}]


def test_since_kept_on_data_change():
    kept = [item(p("reading_prompt")), item(p("reading_prompt", done=50, total=100)),
            item(p("reading_prompt", done=100, total=100)), item(None)]
    reset = [item(p("reading_prompt")), item(p("reading_prompt", T0 + 250, done=50, total=100)), item(None)]
    assert outcome_of("PROG-007", kept, steps=READ)[0] == Outcome.PASS
    assert outcome_of("PROG-007", reset, steps=READ)[0] == Outcome.FAIL


TWO_CALLS = [{"tool": {"name": "bash", "what": "bun test", "ms": 100}},
             {"tool": {"name": "bash", "what": "bun test", "ms": 100}}, {"finish": "ok"}]


def test_since_renewed_for_another_call_of_the_same_tool():
    renewed = [item(p("running_tool", tool="bash", what="bun test")),
               item(p("running_tool", T0 + 100, tool="bash", what="bun test")), item(None)]
    kept = [item(p("running_tool", tool="bash", what="bun test")), item(None)]
    assert outcome_of("PROG-008", renewed, steps=TWO_CALLS)[0] == Outcome.PASS
    worst, findings = outcome_of("PROG-008", kept, steps=TWO_CALLS)
    assert worst == Outcome.FAIL and "twice" in findings[0].message


def test_since_renewed_on_a_new_phase():
    steps = [{"think": 300}, {"write": {"tokens": 10, "ms": 100}}, {"finish": "ok"}]
    same_later = [item(p("thinking")), item(p("writing")), item(None)]
    assert outcome_of("PROG-008", same_later, steps=steps, times=[0.05, 0.35, 0.45])[0] == Outcome.FAIL
    # Two phases that began in the same millisecond may share it.
    assert outcome_of("PROG-008", same_later, steps=steps, times=[0.05, 0.06, 0.45])[0] == Outcome.PASS
    backwards = [item(p("thinking")), item(p("writing", T0 - 5)), item(None)]
    assert outcome_of("PROG-008", backwards, steps=steps, times=[0.05, 0.06, 0.45])[0] == Outcome.FAIL


# -- pacing ------------------------------------------------------------------------------------------

def _reading(n, gap, start=0.0):
    items = [item(p("reading_prompt"))] + [item(p("reading_prompt", done=k, total=n)) for k in range(1, n + 1)]
    times = [start] + [start + gap * k for k in range(1, n + 1)]
    return items + [item(None)], times + [times[-1] + 0.01]


@pytest.mark.parametrize("n,gap,want", [
    (6, 0.25, Outcome.PASS),
    (6, 0.17, Outcome.WARNING),  # a burst: five in 0.68 s
    (6, 0.1, Outcome.WARNING),  # ten a second, but six updates in all: not sustained
    (20, 0.125, Outcome.FAIL),  # eight a second over two seconds
    (20, 1 / 6, Outcome.FAIL),  # six a second over two seconds (13 updates within 2 s)
    (20, 0.19, Outcome.FAIL),  # 5.3 a second, sustained: 13 updates in 2.28 s, 0.72 s short of 3 s
    (20, 0.2, Outcome.FAIL),  # five a second, sustained
    (9, 0.2, Outcome.FAIL),  # five a second, nine updates (two seconds' worth) in 1.6 s: 0.4 s short
    (8, 0.2, Outcome.WARNING),  # five a second for 1.4 s: a run of five 0.2 s short, none two seconds' worth
    (40, 0.025, Outcome.FAIL),  # 40 a second
])
def test_data_only_at_most_four_a_second(n, gap, want):
    items, times = _reading(n, gap)
    worst, findings = outcome_of("PROG-009", items, times=times, steps=READ)
    assert worst == want, findings
    assert findings[0].measured["min_span_5_s"] == pytest.approx(4 * gap, abs=1e-3)


def test_a_four_a_second_sender_bunched_by_a_loaded_reader_never_fails():
    # frames sent every 0.25 s, read in lumps: every third read late, so two or three share one arrival time
    times = []
    for k in range(1, 25):
        times.append(round(0.25 * k + (0.3 if k % 3 else 0.0), 3))
    items, _ = _reading(24, 0.25)
    worst, findings = outcome_of("PROG-009", items, times=[0.0] + sorted(times) + [7.0], steps=READ)
    assert worst in (Outcome.PASS, Outcome.WARNING), findings


def test_five_a_second_sustained_fails_with_its_figures():
    items, times = _reading(15, 0.2)
    worst, findings = outcome_of("PROG-009", items, times=times, steps=READ)
    assert worst == Outcome.FAIL and "13 data-only updates in a row within 2.400 s, 5.0 a second" in findings[0].message
    assert findings[0].measured["max_sustained_deficit_s"] == pytest.approx(0.6, abs=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_four_a_second_with_jitter_passes(seed):
    # sent every 0.25 s, each arrival up to 70 ms late, at random: never more than four a second
    rng = random.Random(seed)
    items, times = _reading(24, 0.25)
    times = [times[0]] + sorted(t + rng.uniform(0, 0.07) for t in times[1:-1]) + [times[-1] + 0.1]
    worst, findings = outcome_of("PROG-009", items, times=times, steps=READ)
    assert worst == Outcome.PASS, findings[0].message


def test_the_worst_run_is_found_as_by_trying_every_run():
    rng = random.Random(7)
    for _ in range(200):
        times = sorted(rng.uniform(0, 5) for _ in range(rng.randint(0, 30)))
        for least in (1, 2):
            runs = [(m - (times[i + 4 * m] - times[i]), i, i + 4 * m) for m in range(least, len(times) // 4 + 1)
                    for i in range(len(times) - 4 * m)]
            found = _worst_run(times, least)
            if not runs:
                assert found is None
            else:
                deficit, i, j = found
                assert deficit == pytest.approx(max(runs)[0], abs=1e-9)
                assert (j - i) % 4 == 0 and (j - i) // 4 >= least
                assert deficit == pytest.approx((j - i) / 4 - (times[j] - times[i]), abs=1e-9)


def test_data_pacing_with_fewer_than_five_updates_passes():
    items, times = _reading(3, 0.01)
    worst, findings = outcome_of("PROG-009", items, times=times, steps=READ)
    assert worst == Outcome.PASS and findings[0].measured["most_data_updates"] == 3


@pytest.mark.parametrize("gap,want", [(0.25, Outcome.PASS), (0.8, Outcome.WARNING)])
def test_data_changes_reach_the_stream(gap, want):
    items, times = _reading(2, gap)
    assert outcome_of("PROG-010", items, times=times, steps=READ)[0] == want


def test_data_changes_withheld_fail():
    items = [item(p("reading_prompt")), item(None)]
    assert outcome_of("PROG-010", items, times=[0.0, 1.0], steps=READ)[0] == Outcome.FAIL


PHASES = [{"think": 500}, {"tool": {"name": "bash", "what": "ls", "ms": 500}}, {"finish": "ok"}]


@pytest.mark.parametrize("late,want", [(0.0, Outcome.PASS), (0.3, Outcome.WARNING), (0.7, Outcome.FAIL)])
def test_new_phase_at_once(late, want):
    items = [item(p("thinking")), item(p("running_tool", T0 + 500, tool="bash", what="ls")), item(None)]
    worst, findings = outcome_of("PROG-011", items, times=[0.02, 0.52 + late, 1.02 + late], steps=PHASES)
    assert worst == want
    assert findings[0].measured["max_phase_delay_s"] == pytest.approx(late, abs=1e-6)


DRIFT_STEPS = [{"think": 200}, {"tool": {"name": "bash", "what": "a", "ms": 200}}, {"think": 200},
               {"tool": {"name": "bash", "what": "b", "ms": 200}}, {"think": 200},
               {"tool": {"name": "bash", "what": "c", "ms": 200}}, {"finish": "ok"}]


def _drifting(extra):
    """DRIFT_STEPS played by a runtime whose steps each take `extra` s longer than scripted, every phase (and
    the end) sent the moment it begins."""
    items, times = [], []
    for n, step in enumerate(DRIFT_STEPS[:-1]):
        since = T0 + round(n * (0.2 + extra) * 1000)
        items.append(item(p("thinking", since) if "think" in step else
                          p("running_tool", since, tool="bash", what=step["tool"]["what"])))
        times.append(n * (0.2 + extra))
    return items + [item(None)], times + [6 * (0.2 + extra)]


@pytest.mark.parametrize("extra", [0.06, 0.1])
def test_schedule_drift_is_not_delay(extra):
    # Before: the script's clock accumulated 6 × 0.1 s of drift and the turn's end FAILed "not sent at once".
    items, times = _drifting(extra)
    worst, findings = outcome_of("PROG-011", items, times=times, steps=DRIFT_STEPS)
    assert worst == Outcome.PASS, findings[0].message
    assert findings[0].measured["max_phase_delay_s"] == pytest.approx(extra, abs=1e-6)


def test_a_phase_that_trails_its_start_fails_even_on_a_drifting_runtime():
    items, times = _drifting(0.1)
    times[3:] = [t + 0.7 for t in times[3:]]  # the fourth phase held 0.7 s after its step began
    worst, findings = outcome_of("PROG-011", items, times=times, steps=DRIFT_STEPS)
    assert worst == Outcome.FAIL and "running_tool (step 4) arrived 0.800 s" in findings[0].message


WRITE_THEN_TOOL = [{"write": {"tokens": 50, "ms": 500}}, {"tool": {"name": "bash", "what": "ls", "ms": 100}},
                   {"finish": "ok"}]


def _writing(last_data, tool_at):
    items = [item(p("writing"))] + [item(p("writing", rate=float(k))) for k in range(1, 4)]
    times = [0.0, 0.25, 0.5, last_data]
    items += [item(p("running_tool", T0 + 900, tool="bash", what="ls")), item(None)]
    return items, times + [tool_at, tool_at + 0.1]


def test_a_step_that_ran_long_is_read_from_the_frame_before():
    # writing's data kept changing 0.4 s past its scripted end; the tool's phase came right after the last of it
    items, times = _writing(0.9, 0.92)
    worst, findings = outcome_of("PROG-011", items, times=times, steps=WRITE_THEN_TOOL)
    assert worst == Outcome.PASS, findings[0].message
    assert "running_tool (step 2)" in str(findings[0].measured["delays_s"])


def test_a_phase_held_behind_the_pacing_of_the_phase_before_fails():
    # the last data-only frame at the step's end, the new phase a second after it
    items, times = _writing(0.5, 1.5)
    worst, findings = outcome_of("PROG-011", items, times=times, steps=WRITE_THEN_TOOL)
    assert worst == Outcome.FAIL and "(the frame before it)" not in findings[0].message
    assert findings[0].measured["max_phase_delay_s"] == pytest.approx(1.0, abs=1e-6)


# -- the turn's end and the status ---------------------------------------------------------------------

STOP = [{"think": 100}, {"stop": "person"}]


def test_stopped_is_the_last_progress():
    stays = [item(p("thinking")), item(p("stopped", T0 + 100, reason="person")),
             item(p("stopped", T0 + 100, reason="person"), status="Stopped by you")]
    then_null = [item(p("thinking")), item(p("stopped", T0 + 100, reason="person")), item(None)]
    assert outcome_of("PROG-012", stays, steps=STOP)[0] == Outcome.PASS
    assert outcome_of("PROG-012", then_null, steps=STOP)[0] == Outcome.FAIL


def test_finished_turn_ends_with_null():
    assert outcome_of("PROG-013", THINK)[0] == Outcome.PASS
    assert outcome_of("PROG-013", [item(p("thinking"))])[0] == Outcome.FAIL


def test_a_stream_that_broke_off_is_not_blamed_for_its_last_progress():
    sc = script({"think": 100}, {"finish": "ok"})
    stream = progress_sse([item(p("thinking"))], script=sc, end="reset")
    stream.error = "the connection was reset after 80 bytes"
    scenario = Scenario(id="t", profile="progress", title="", requirements=("PROG-013",), script=sc)
    found = judge(frame_log(stream, script=sc), ["PROG-013"], RuleContext(scenario=scenario))
    assert [f.outcome for f in found] == [Outcome.ERROR] and "reset after 80 bytes" in found[0].message


def test_status_beside_progress_unchanged():
    steps = [{"status": "Planning"}, {"think": 100}, {"finish": "ok"}]
    good = [item(p("thinking"), "Planning"), item(None, "Planning")]
    replaced = [item(p("thinking"), "Thinking"), item(None, "Thinking")]
    never = [{"progress": p("thinking")}, {"progress": None}]
    assert outcome_of("PROG-014", good, steps=steps)[0] == Outcome.PASS
    assert outcome_of("PROG-014", replaced, steps=steps)[0] == Outcome.FAIL
    assert outcome_of("PROG-014", never, steps=steps)[0] == Outcome.FAIL  # the script's text never shows


def test_every_frame_with_the_status_text_carries_progress():
    # §5: "every frame … that carries the status text carries progress beside it" — not the converse
    steps = [{"status": "Reading"}, {"read_prompt": {"total": 100, "updates": 2, "ms": 500}}, {"finish": "ok"}]
    data_only = [item(p("reading_prompt"), "Reading"), {"progress": p("reading_prompt", done=50, total=100)},
                 {"progress": p("reading_prompt", done=100, total=100)}, item(None, "Reading")]
    outcome, findings = outcome_of("PROG-014", data_only, steps=steps)
    assert outcome == Outcome.PASS, findings[0].message
    assert "2 frame(s) carried progress without the status text" in findings[0].message
    status_alone = [item(p("reading_prompt"), "Reading"), {"status": "Reading"}, item(None, "Reading")]
    outcome, findings = outcome_of("PROG-014", status_alone, steps=steps)
    assert outcome == Outcome.FAIL and "status text without progress" in findings[0].message
    not_text = [item(p("reading_prompt"), "Reading"), item(None, 7)]
    assert outcome_of("PROG-014", not_text, steps=steps)[0] == Outcome.FAIL


def test_a_frame_with_neither_status_nor_progress_is_not_bound():
    # "every frame … that carries the status text carries progress beside it": the sentence is conditional
    steps = [{"status": "Planning"}, {"think": 100}, {"finish": "ok"}]
    frames = [{"kind": "keep-alive"}, item(p("thinking"), "Planning"), "not json", item(None, "Planning")]
    outcome, findings = outcome_of("PROG-014", frames, steps=steps)
    assert outcome == Outcome.PASS and "2 frame(s) carried neither" in findings[0].message


def test_phase_follows_the_steps():
    steps = [{"think": 100}, {"ask": "Which branch?"}, {"sleep": 100}, {"finish": "ok"}]
    good = [item(p("thinking")), item(p("waiting_for_person", T0 + 100, what="question")), item(None)]
    extra = [item(p("loading_model", T0 - 50, model="m")), *good]
    wrong = [item(p("thinking")), item(p("waiting_for_person", T0 + 100, what="approval")), item(None)]
    assert outcome_of("PROG-015", good, steps=steps)[0] == Outcome.PASS
    assert outcome_of("PROG-015", extra, steps=steps)[0] == Outcome.PASS
    assert outcome_of("PROG-015", wrong, steps=steps)[0] == Outcome.FAIL


def test_pointer_from_the_log():
    items = [{"data": {"status": "S", "progress": p("thinking")}}, {"data": {"status": "S", "progress": None}}]
    notes = {"progress_pointer": "/data/progress"}
    assert outcome_of("PROG-013", items, notes=notes)[0] == Outcome.PASS
    assert outcome_of("PROG-014", items, notes=notes)[0] == Outcome.PASS
    assert outcome_of("PROG-013", items)[0] == Outcome.FAIL  # nothing at /progress


def test_no_answer_is_error():
    log = frame_log(broken("progress"))
    findings = judge(log, ["PROG-001", "PROG-013"])
    assert {f.outcome for f in findings} == {Outcome.ERROR}


# -- the reference's progress route, driven by the suite's driver -------------------------------------

@pytest.fixture(scope="module")
def reference():
    with ReferenceServer() as server:
        yield server


def _events(log):
    return [ev.payload for ev in log.get("progress").data_events()]


def test_route_plays_tool_calls(reference):
    target = Target(progress_url=reference.url + "/progress", stream_limit=4.0)
    log = run_scenario("progress-tools", target)
    ex = log.get("progress")
    assert ex.status == 200 and ex.media_type == "text/event-stream"
    frames = _events(log)
    tools = [f["progress"] for f in frames if f["progress"]]
    assert [t["tool"] for t in tools] == ["bash", "bash", "read_file", "bash"]
    assert tools[0]["since"] < tools[1]["since"]  # the same call twice: a new since
    assert "what" not in tools[2]
    assert len(tools[3]["what"]) <= 80 and "\n" not in tools[3]["what"]
    assert frames[-1] == {"status": "Running the tests", "progress": None}
    scenario = load_scenario("progress-tools")
    findings = judge(log, scenario.requirements, RuleContext(scenario=scenario))
    assert {f.req_id for f in findings} == set(scenario.requirements)
    assert all(f.outcome == Outcome.PASS for f in findings), [f.to_json() for f in findings if f.outcome != Outcome.PASS]


def test_route_ends_stopped_and_failed(reference):
    target = Target(progress_url=reference.url + "/progress", stream_limit=4.0)
    stopped = _events(run_scenario("progress-stopped", target))
    assert stopped[-1]["progress"]["phase"] == "stopped" and stopped[-1]["progress"]["reason"] == "person"
    failed = _events(run_scenario("progress-failed", target))
    assert failed[-1]["progress"] == {**failed[-1]["progress"], "phase": "failed", "reason": "make: *** [all] Error 2"}


def test_route_refuses_a_body_without_script(reference):
    answer = httpx.post(reference.url + "/progress", json={"hello": 1})
    assert answer.status_code == 400 and "urn:streamcert:script" in answer.json()["error"]
