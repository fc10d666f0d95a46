"""Every stream a scenario opens is a valid task stream, whichever A2A profile runs (docs/streams.md).

The WIRE- and A2A-STREAM- rules read every task stream of a log by what it is (streamview.StreamFrames),
but they belong to the `a2a` profile: a run of `--profile interactions` alone would skip them. So each
A2A profile whose scenarios open streams has one requirement, "its streams are valid task streams",
decided here by running those same rules on its log (no rule is written twice) and failing with the
rule broken, its title and its frames.

    STREAM_RULES            the requirements a valid task stream meets (each judged by its own rule)
    EveryStream.of(log)     their findings on this log, kept to the task streams
    judge_every_stream      one verdict from them: FAIL naming each MUST broken, ERROR for what could not
                            be judged, NON_STRICT naming each weaker reading taken, else PASS
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...catalogue import load_catalogue
from ...contract.capture import STREAMING
from ...contract.run import BINDING
from ...framelog import FrameLog
from ...outcomes import Finding, Outcome
from .. import RuleContext, Unjudgeable, Verdict, load_rules, rule
from ..common.streamview import StreamFrames
from ..engine import SHOWN, run_rules

# What a valid task stream meets: its envelope and framing, the sequence (Task first, updates naming it,
# one member per result, chunks, the end and the close), the 1.0 forms, and for a subscription its Task
# and its end. The requirements about the scenario's own task (ids minted, history, the script played,
# the first answer) and WIRE-005 (unary answers) are not here. WIRE-001 is: every streaming request is answered
# as an event stream, a streamed answer's too (one answered as JSON is no task stream, yet its finding is kept).
STREAM_RULES = (
    "WIRE-001", "WIRE-002", "WIRE-003", "WIRE-004", "WIRE-006",
    "A2A-STREAM-001", "A2A-STREAM-004", "A2A-STREAM-005", "A2A-STREAM-006", "A2A-STREAM-007",
    "A2A-STREAM-008", "A2A-STREAM-009", "A2A-STREAM-010", "A2A-STREAM-011", "A2A-STREAM-012",
    "A2A-STREAM-013", "A2A-STREAM-016", "A2A-STREAM-017", "A2A-STREAM-018",
    "A2A-TASK-011",
)
_SOURCE = re.compile(r" \[[^\[\]]*\]$")  # the citation Verdict.add appends to a message


@dataclass
class EveryStream:
    """The findings of the task-stream requirements on one log, about its task streams only."""

    labels: list[str]  # the task streams of the log, in order
    findings: list[Finding]

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> EveryStream:
        frames = StreamFrames.of(log, ctx)
        labels = [s.label for s in frames.streams]
        streaming = labels + [message.split(" ", 1)[0] for message, _ in frames.unjudged] + \
            [ex.label for ex in log.exchanges if ex.notes.get(STREAMING) and ex.label not in labels]
        if not streaming:
            raise Unjudgeable()
        # the envelope requirements of a binding other than the log's (WIRE-002 on a gRPC log) do not apply
        catalogue, binding = load_catalogue(), log.notes.get(BINDING)
        wanted = [r for r in STREAM_RULES if catalogue[r].applies_to(binding)]
        # their rules registered first: a run of one profile (or a `check`) imports only the rule modules of the
        # requirements it judges, and a rule not registered would be no finding, so no failure, here
        load_rules(wanted)
        found = run_rules(log, wanted, RuleContext(scenario=ctx.scenario, options=ctx.options))
        return cls(labels, [f for f in found if _about_streams(f, set(streaming))])


def _about_streams(finding: Finding, streams: set[str]) -> bool:
    """A finding about a task stream: the envelope rules judge unary answers too, which are not kept here."""
    if not finding.req_id.startswith("WIRE-") or finding.outcome == Outcome.PASS or not finding.evidence:
        return True
    return any(item.get("exchange") in streams for item in finding.evidence)


def judge_every_stream(v: EveryStream, out: Verdict) -> None:
    catalogue = load_catalogue()

    def must(f: Finding) -> bool:
        return catalogue[f.req_id].level == "MUST" if f.req_id in catalogue else True

    def line(f: Finding) -> str:
        title = catalogue[f.req_id].title if f.req_id in catalogue else ""
        return f"{f.req_id} ({title.rstrip('.')}): {_SOURCE.sub('', f.message)}"

    broken = [f for f in v.findings if f.outcome == Outcome.FAIL and must(f)]
    errors = [f for f in v.findings if f.outcome == Outcome.ERROR]
    streams = ", ".join(v.labels) or "none"
    for what, found, say in (("broken", broken, out.failed), ("could not be judged", errors, out.error)):
        if found:
            ids = sorted({f.req_id for f in found})
            shown = [next(f for f in found if f.req_id == rid) for rid in ids[:SHOWN]]
            say(f"the task-stream requirement(s) {', '.join(ids)} {what} on this scenario's streams ({streams}): "
                + "; ".join(line(f) for f in shown), [item for f in shown for item in f.evidence[:2]])
            return
    # A weaker reading taken (a NON_STRICT finding: a Task in the middle of a subscription, a 0.3 `final`
    # member, …) does not make a stream invalid, but it is this requirement's own outcome, NON_STRICT, with the
    # reading in its message: a reader of an interactions-only or plans-only report sees it without the
    # evidence. A tolerance exceeded (WARNING: a measure, which load moves) is named in the PASS.
    weaker = [f for f in v.findings if f.outcome == Outcome.NON_STRICT]
    if weaker:
        readings = sorted({f"{f.req_id}: {f.reading or f.outcome.value}" for f in weaker})
        out.non_strict(f"{len(v.labels)} task stream(s) ({streams}) meet the task-stream MUSTs under weaker "
                       f"reading(s): " + "; ".join(line(f) for f in weaker[:SHOWN]),
                       [item for f in weaker[:SHOWN] for item in f.evidence[:1]], reading="; ".join(readings))
        return
    warned = sorted({f"{f.req_id}: {f.reading or f.outcome.value}" for f in v.findings if f.outcome == Outcome.WARNING})
    out.passed(f"{len(v.labels)} task stream(s) ({streams}) meet the {len(STREAM_RULES)} task-stream "
               f"requirements" + (f"; reported under their own requirements: {', '.join(warned)}" if warned else ""),
               reading="; ".join(warned) or None)


@rule("A2A-INT-006", view=EveryStream)
def interrupted_task_streams_are_valid(v: EveryStream, out: Verdict) -> None:
    judge_every_stream(v, out)


@rule("PLAN-018", view=EveryStream)
def plan_task_streams_are_valid(v: EveryStream, out: Verdict) -> None:
    judge_every_stream(v, out)
