"""Driver for certifying a progress-line renderer (profile `line`, DESIGN §7).

The renderer (`target.line_cmd`) is started once and fed every case of cases/progress.json (or
of `target.progress_cases`) three times, one JSON object per line:
  pass 1  {"progress", "now"}                  every case in order: the line
  pass 2  {"progress", "now", "form": "text"}  every case in order: the text alone
  pass 3  {"progress", "now"}                  every case in reverse order: the same line again
Then its input is closed and its lines are read until it has answered every input, exits, or
`target.stream_limit` passes (a renderer that writes nothing never holds the run).

Labels written:
  line    the renderer's run (wire/stdio.py): request_body the inputs, events its output lines
Log notes: `cases` (the cases judged by), `cases_source`, `inputs` ([{"case", "form", "pass"}] in
the order sent), `cases_error` (a cases file that could not be used: nothing was run).
"""

from __future__ import annotations

import asyncio

from ..catalogue import Scenario
from ..framelog import FrameLog
from ..progress_cases import CasesError, load_cases
from ..wire.stdio import StdioPeer
from . import Target, driver

LABEL = "line"


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
        log.notes["cases_error"] = str(exc)
        return
    cases = doc["cases"]
    plan = plan_inputs(cases)
    log.notes.update(cases=cases, cases_source=source,
                     inputs=[{"case": cases[i]["name"], "form": form, "pass": p} for i, form, p in plan])
    peer = StdioPeer(target.line_cmd or "", log, label=LABEL, limit=target.stream_limit)
    await peer.start()
    if not peer.started:
        return
    loop = asyncio.get_running_loop()
    deadline = loop.time() + target.stream_limit

    async def feed() -> None:
        for i, form, _ in plan:
            await peer.send(input_object(cases[i], form))
        await peer.end_input()

    try:  # a renderer that never reads its input must not block the writer past the limit
        await asyncio.wait_for(feed(), target.stream_limit)
    except TimeoutError:
        peer.ex.notes["input_blocked"] = True
    want = len(plan)
    await peer.wait_for(lambda ev: ev.index >= want - 1, timeout=max(0.0, deadline - loop.time()))
    if len(peer.ex.events) < want:
        peer.ex.notes["lines_missing"] = want - len(peer.ex.events)
    await peer.close()
