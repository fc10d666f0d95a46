"""The driver for progress streams (profile `progress`, seed 003).

It POSTs the scenario's script to the progress URL (`{"urn:streamcert:script": …}`, docs/contracts.md §6) and
reads the answer as SSE whose events are JSON objects holding a progress object (at the JSON pointer
`target.progress_pointer`, default `/progress`) and the status text beside it.

Labels written (read by streamcert.rules.progress.progress):
  progress      the progress stream of one turn, bounded by target.stream_limit
Log notes: `progress_pointer` (the pointer the rules read with).
"""

from __future__ import annotations

from ..catalogue import Scenario
from ..contract.labels.line import PROGRESS
from ..contract.line import PROGRESS_POINTER
from ..framelog import FrameLog
from ..protocols.script import SCRIPT_KEY
from ..wire.clients import client_for
from . import Target, driver


@driver("progress-stream")
async def progress_stream(target: Target, scenario: Scenario, log: FrameLog) -> None:
    assert target.progress_url, "the progress profile runs only with a progress URL"
    log.target = target.progress_url
    log.notes[PROGRESS_POINTER] = target.progress_pointer
    async with client_for(target, log, target.progress_url) as client:
        await client.post_stream(target.progress_url, {SCRIPT_KEY: scenario.script}, label=PROGRESS)
