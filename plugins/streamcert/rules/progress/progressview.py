"""A progress stream as the PROG- rules read it (seed 003): frames, each agent's sequence of phase
instances, and the script's expected phases aligned with them.

A frame is one event's object; its progress sits at a JSON pointer (log note `progress_pointer`,
default `/progress`), its status text beside it (the member `status` of the same parent) and, for a
subagent's progress, the subagent's id beside it too (the member `agent`: the link's phase event
`{progress, agent?}` passed on, §5; absent for the main agent's).
Each agent's frames form a sequence of their own, judged on its own: the main agent's (no `agent`) and
each subagent's. An instance is a run of consecutive frames of one sequence showing one phase for one
thing: a new instance starts when the phase, `since` or an identifying field (the tool, the question's
kind, the model…) changes; inside an instance only the data changes (done, total, rate, ahead, running).

The frames and their instances are read in frames.py, the script's expected phases and their alignment with
the instances in script_plan.py; this module builds the view the rules read (`ProgressStream`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...contract.labels.line import PROGRESS
from ...contract.line import PROGRESS_POINTER
from ...framelog import Exchange, FrameLog
from ..engine import RuleContext, Unjudgeable, answered, ev_evidence, ex_evidence
from .frames import DEFAULT_POINTER, MAIN, MISSING, Frame, Instance, instances_of, parent_pointer, resolve
from .script_plan import ScriptPlan, align, count_matched, plan_of


@dataclass
class Sequence:
    """One agent's frames (the main agent's: key MAIN; a subagent's: its id), the phase instances they
    show, and the script's expected phases for that agent aligned with them."""

    stream: "ProgressStream"
    key: Any
    frames: list[Frame]
    instances: list[Instance]
    plan: ScriptPlan | None = None
    scripted_id: str | None = None  # the script's id of the subagent these frames were matched to
    unaligned: list[Instance] = field(default_factory=list)

    @property
    def is_main(self) -> bool:
        return self.key is MAIN

    @property
    def name(self) -> str:
        """How a finding names the agent: "" for the main agent, else "subagent X: "."""
        if self.is_main:
            return ""
        shown = self.key if isinstance(self.key, str) else self.key[1]
        also = f" (the script's {self.scripted_id!r})" if self.scripted_id not in (None, self.key) else ""
        return f"subagent {shown!r}{also}: "

    @property
    def progress_frames(self) -> list[Frame]:
        return [f for f in self.frames if f.obj is not None]

    def instance_end(self, inst: Instance) -> float:
        """When the instance stopped showing: the agent's next frame that is not part of it, or the stream's end."""
        last = inst.frames[-1]
        later = [f for f in self.frames if f.ev.index > last.ev.index]
        if later:
            return later[0].t
        ex = self.stream.exchange
        return ex.t_end if ex.t_end is not None else last.t

    def evidence(self, frame: Frame, note: str = "") -> dict[str, Any]:
        return self.stream.evidence(frame, note)


@dataclass
class ProgressStream:
    """The progress stream of one turn: its frames, each agent's sequence, and the script's expected
    phases aligned with them."""

    exchange: Exchange
    pointer: str
    frames: list[Frame]
    sequences: list[Sequence]  # the main agent's first, then the subagents' in the order they first show
    plan: ScriptPlan | None

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> "ProgressStream":
        ex = answered(log, PROGRESS)
        if ex.status != 200 or not ex.is_sse:
            raise Unjudgeable(f"the progress URL answered HTTP {ex.status} {ex.content_type!r}, not an event stream: "
                              "the suite could not drive it", [ex_evidence(ex)])
        return cls.read(log, ex, ctx.script or log.script)

    @classmethod
    def read(cls, log: FrameLog, ex: Exchange, script: dict[str, Any] | None) -> "ProgressStream":
        pointer = log.notes.get(PROGRESS_POINTER, DEFAULT_POINTER)
        parent = parent_pointer(pointer)
        frames: list[Frame] = []
        for ev in ex.data_events():
            value, err = ev.json()
            frame = Frame(ev, ev.t)
            if err is not None:
                frame.problem = f"not JSON ({err})"
            else:
                frame.progress = resolve(value, pointer)
                if frame.progress is MISSING:
                    frame.progress = None
                    frame.problem = f"nothing at the pointer {pointer!r}"
                holder = resolve(value, parent) if parent is not None else MISSING
                if isinstance(holder, dict):
                    frame.status = holder.get("status", MISSING)
                    frame.agent = holder.get("agent", MISSING)
            frames.append(frame)
        stream = cls(ex, pointer, frames, [], plan_of(script))
        by_key: dict[Any, list[Frame]] = {MAIN: []}
        for frame in frames:
            by_key.setdefault(frame.key, []).append(frame)
        stream.sequences = [Sequence(stream, key, fs, instances_of(fs)) for key, fs in by_key.items()]
        stream._assign_plans()
        return stream

    def _assign_plans(self) -> None:
        """Give each sequence the script's plan for its agent: the main agent's to MAIN; a subagent's to the
        frames carrying its id, else (a runtime that names its subagents itself) to the unclaimed sequence
        whose phases it matches best, in the order the sequences first show."""
        if self.plan is None:
            for seq in self.sequences:
                seq.unaligned = list(seq.instances)
            return
        main, subs = self.sequences[0], self.sequences[1:]
        main.plan = self.plan
        free = dict(self.plan.subagents)
        for seq in subs:
            if isinstance(seq.key, str) and seq.key in free:
                seq.plan, seq.scripted_id = free.pop(seq.key), seq.key
        for seq in subs:
            if seq.plan is None and free:
                sid, score = max(((sid, count_matched(seq.instances, plan.expected)) for sid, plan in free.items()),
                                 key=lambda pair: pair[1])
                if score:
                    seq.plan, seq.scripted_id = free.pop(sid), sid
        for seq in self.sequences:
            seq.unaligned = align(seq.instances, seq.plan) if seq.plan else list(seq.instances)

    def sequence_of(self, scripted_id: str) -> Sequence | None:
        return next((s for s in self.sequences if s.scripted_id == scripted_id), None)

    @property
    def main(self) -> Sequence:
        return self.sequences[0]

    @property
    def scripted(self) -> list[Sequence]:
        """The sequences the script says something about (the main agent's and each matched subagent's)."""
        return [s for s in self.sequences if s.plan is not None]

    @property
    def instances(self) -> list[Instance]:
        return [inst for seq in self.sequences for inst in seq.instances]

    @property
    def progress_frames(self) -> list[Frame]:
        return [f for f in self.frames if f.obj is not None]

    def evidence(self, frame: Frame, note: str = "") -> dict[str, Any]:
        return ev_evidence(self.exchange, frame.ev, note)


class ScriptedProgress(ProgressStream):
    """The same stream, for the rules that compare it with the script: nothing to judge without one."""

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> "ProgressStream":
        stream = ProgressStream.of(log, ctx)
        if stream.plan is None:
            raise Unjudgeable()
        return stream
