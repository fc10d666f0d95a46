"""WIRE-010: the answers of the A2A operations name their members as ProtoJSON does (A2A 1.0.1 §5.5: the
lowerCamelCase JSON names), on the bindings whose answers are JSON (JSON-RPC, HTTP+JSON). A gRPC answer is a
binary message the suite itself renders as ProtoJSON: its names are the suite's, not the server's.

Each answer is walked against the message its operation answers with (a2a.ANSWER_MESSAGES: SendMessageResponse,
Task, ListTasksResponse; each frame of a stream a StreamResponse). A member the proto does not have is ignored
(§5.7), unless it is one of its members spelt another way (context_id, NextPageToken): that one is the finding.
The keys of metadata and of a Part's data are the agent's own and are not read.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...framelog import END_ERROR, Event, Exchange
from ...protocols import a2a, bindings
from .. import Run, Verdict, ev_evidence, ex_evidence, rule
from ..common.framewalk import misspelt
from ..common.streamview import frame_facts
from ..engine import cannot_judge


def _answers(ex: Exchange) -> Iterator[tuple[Event | None, tuple[str, ...] | list[str]]]:
    """(frame or None, its members spelt otherwise) of each result an exchange carried: its body's, or each
    frame's as the one walk over a stream's frames read it (framewalk: a stream is never parsed again here)."""
    message = a2a.ANSWER_TYPES.get(ex.rpc_method or "")
    if message is None:
        return
    if ex.is_stream:
        yield from zip(ex.data_events(), (f.misspelt for f in frame_facts(ex)))
        return
    result = bindings.read_answer(ex).result
    if result is not None:
        yield None, misspelt(result, message, message)


@rule("WIRE-010", view=Run)
def protojson_names(run: Run, out: Verdict) -> None:
    judged, bad = 0, []
    for ex in run.log.exchanges:
        if ex.binding == bindings.GRPC or ex.end == END_ERROR or ex.status is None or cannot_judge(ex):
            continue  # no JSON of the server's, or nothing that can be read (other requirements say why)
        for ev, wrong in _answers(ex):
            judged += 1
            if wrong:
                where = f"{ex.label} ({ex.rpc_method})" + (f" frame {ex.frame_number(ev)}" if ev else "")
                note = "; ".join(wrong[:5]) + (f"; and {len(wrong) - 5} more" if len(wrong) > 5 else "")
                bad.append((f"{where}: {note}", ev_evidence(ex, ev, note) if ev else ex_evidence(ex, note)))
    if not out.fail_each("answer(s) whose members are not under their ProtoJSON (lowerCamelCase) names", bad) \
            and judged:
        out.passed(f"{judged} answer(s) and frame(s), every member under its ProtoJSON name")
