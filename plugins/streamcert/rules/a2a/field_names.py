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
from typing import Any

from ...framelog import END_ERROR, Event, Exchange
from ...protocols import a2a, bindings
from .. import Run, Verdict, ev_evidence, ex_evidence, rule
from ..engine import cannot_judge

# Each message's members by their folded names, built once (not once per value walked: a flood walks 100 000 frames).
_FOLDED = {message: {a2a.folded(f): f for f in fields} for message, fields in a2a.ANSWER_MESSAGES.items()}


def misspelt(value: Any, message: str, path: str) -> list[str]:
    """The members of `value` (a `message` as JSON) and of the messages it holds that are spelt otherwise than
    their ProtoJSON names, each as `path.key (ProtoJSON writes name)`."""
    fields = a2a.ANSWER_MESSAGES[message]
    if not isinstance(value, dict):
        return []
    folded = _FOLDED[message]
    found = []
    for key, item in value.items():
        name = key if key in fields else folded.get(a2a.folded(key))
        if name is None:
            continue  # a member the proto does not have: ignored
        if name != key:
            found.append(f"{path}.{key} (ProtoJSON writes {name})")
        inner = fields[name]
        if inner is not None:
            for i, each in enumerate(item if isinstance(item, list) else [item]):
                found += misspelt(each, inner, f"{path}.{name}[{i}]" if isinstance(item, list) else f"{path}.{name}")
    return found


def _answers(ex: Exchange) -> Iterator[tuple[Event | None, Any, str]]:
    """(frame or None, result, message type) of each result an exchange carried: its body's, or each frame's,
    one at a time (a stream's parsed frames are never all held at once: 100 000 of them are 200 MB)."""
    message = a2a.ANSWER_TYPES.get(ex.rpc_method or "")
    if message is None:
        return
    if ex.is_stream:
        for ev in ex.data_events():
            yield ev, bindings.frame_answer(ex.binding, ev.payload)[0], "StreamResponse"
        return
    result = bindings.read_answer(ex).result
    if result is not None:
        yield None, result, message


@rule("WIRE-010", view=Run)
def protojson_names(run: Run, out: Verdict) -> None:
    judged, bad = 0, []
    for ex in run.log.exchanges:
        if ex.binding == bindings.GRPC or ex.end == END_ERROR or ex.status is None or cannot_judge(ex):
            continue  # no JSON of the server's, or nothing that can be read (other requirements say why)
        for ev, result, message in _answers(ex):
            judged += 1
            if wrong := misspelt(result, message, message):
                where = f"{ex.label} ({ex.rpc_method})" + (f" frame {ex.frame_number(ev)}" if ev else "")
                note = "; ".join(wrong[:5]) + (f"; and {len(wrong) - 5} more" if len(wrong) > 5 else "")
                bad.append((f"{where}: {note}", ev_evidence(ex, ev, note) if ev else ex_evidence(ex, note)))
    if not out.fail_each("answer(s) whose members are not under their ProtoJSON (lowerCamelCase) names", bad) \
            and judged:
        out.passed(f"{judged} answer(s) and frame(s), every member under its ProtoJSON name")
