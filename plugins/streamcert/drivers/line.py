"""Driver for certifying a progress-line renderer (profile `line`, docs/contracts.md §7).

The renderer (`target.line_cmd`; the embedded run's reference renderer is played in the suite's process instead,
`target.in_process["line_cmd"]`, wire/inprocess.py, recorded the same way) is started once and fed every case of
cases/progress.json (or of `target.progress_cases`) three times, one JSON object per line:
  pass 1  {"progress", "now"}                  every case in order: the line
  pass 2  {"progress", "now", "form": "text"}  every case in order: the text alone
  pass 3  {"progress", "now"}                  every case in reverse order: the same line again
Then its input is closed and its lines are read until it has answered every input or exits. Its
first line must come within `target.start_limit` of its start, each next one within `target.timeout`
of the one before, and the last within `target.stream_limit` of its start; at the first limit
reached it is stopped, and its run records which (wire/stdio.py). The inputs are all written at once:
a renderer that buffers its output until its input ends is answered the same.

Labels written:
  line    the renderer's run (wire/stdio.py): request_body the inputs, events its output lines
Log notes: `cases` (the cases judged by), `cases_source`, `inputs` ([{"case", "form", "pass"}] in
the order sent), `cases_error` (a cases file that could not be used: nothing was run).
"""

from __future__ import annotations

from .. import limits
from ..catalogue import Scenario
from ..contract.labels.line import LINE
from ..contract.line import CASES, CASES_ERROR, CASES_SOURCE, INPUTS, LINES_MISSING
from ..framelog import FrameLog
from ..recordings.progress_cases import CasesError, load_cases
from ..wire.inprocess import command_peer
from . import Target, driver


def plan_inputs(cases: list[dict]) -> list[tuple[int, str, int]]:
    """(case index, form, pass) for every line the suite writes, in order."""
    n = len(cases)
    return ([(i, "line", 1) for i in range(n)] + [(i, "text", 2) for i in range(n)]
            + [(i, "line", 3) for i in reversed(range(n))])


def input_object(case: dict, form: str) -> dict:
    item = {"progress": case["progress"], "now": case["now"]}
    if form == "text":
        item["form"] = "text"
    return item


@driver("line-cases")
async def line_cases(target: Target, scenario: Scenario, log: FrameLog) -> None:
    log.target = target.line_cmd or ""
    try:
        doc, source = load_cases(target.progress_cases)
    except CasesError as exc:
        log.notes[CASES_ERROR] = str(exc)
        return
    cases = doc["cases"]
    plan = plan_inputs(cases)
    log.notes.update({CASES: cases, CASES_SOURCE: source,
                      INPUTS: [{"case": cases[i]["name"], "form": form, "pass": p} for i, form, p in plan]})
    peer = command_peer(target.line_cmd or "", target.in_process.get("line_cmd"), log, label=LINE,
                        max_bytes=target.max_stream_bytes, max_line=target.max_event_bytes)
    await peer.start()
    if not peer.started:
        return
    for i, form, _ in plan:
        await peer.send(input_object(cases[i], form))
    await peer.end_input()
    want = len(plan)
    for n in range(want):
        cap, seconds = (limits.START, target.start_limit) if n == 0 else (limits.EXCHANGE, target.timeout)
        bound = peer.bound(cap, seconds, target.stream_limit)
        if await peer.expect(lambda ev, n=n: ev.index >= n, bound, f"the line for input {n + 1} of {want}",
                             start=n) is None:
            break
    if len(peer.ex.events) < want:
        peer.ex.notes[LINES_MISSING] = want - len(peer.ex.events)
    await peer.close()
