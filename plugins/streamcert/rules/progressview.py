"""A progress stream as the PROG- rules read it (seed 003): frames, phase instances, and the script's
expected phases aligned with them.

A frame is one event's object; its progress sits at a JSON pointer (log note `progress_pointer`,
default `/progress`) and its status text beside it (the member `status` of the same parent).
An instance is a run of consecutive frames showing one phase for one thing: a new instance starts
when the phase, `since` or an identifying field (the tool, the question's kind, the model…) changes;
inside an instance only the data changes (done, total, rate, ahead, running).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..framelog import Event, Exchange, FrameLog
from ..protocols.progress import IDENTITY
from .engine import RuleContext, Unjudgeable, answered, ev_evidence, ex_evidence

LABEL = "progress"
DEFAULT_POINTER = "/progress"

_MISSING = object()


def resolve(doc: Any, pointer: str) -> Any:
    """RFC 6901: the value at `pointer` in `doc`, or _MISSING."""
    if pointer == "":
        return doc
    if not pointer.startswith("/"):
        return _MISSING
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(doc, dict) and token in doc:
            doc = doc[token]
        elif isinstance(doc, list) and token.isdigit() and (token == "0" or not token.startswith("0")) \
                and int(token) < len(doc):
            doc = doc[int(token)]
        else:
            return _MISSING
    return doc


def parent_pointer(pointer: str) -> str | None:
    return pointer.rsplit("/", 1)[0] if pointer else None


@dataclass
class Frame:
    ev: Event
    t: float
    problem: str | None = None  # why no progress could be read (not JSON, nothing at the pointer)
    progress: Any = None  # the value at the pointer (dict, None, or anything else)
    status: Any = _MISSING  # the status text beside it, or _MISSING

    @property
    def obj(self) -> dict[str, Any] | None:
        return self.progress if isinstance(self.progress, dict) else None

    @property
    def phase(self) -> Any:
        return self.obj.get("phase") if self.obj else None

    def identity(self) -> tuple:
        p = self.obj or {}
        return (p.get("phase"), p.get("since"), *(repr(p.get(k)) for k in IDENTITY.get(p.get("phase"), ())))


@dataclass
class Instance:
    frames: list[Frame]
    expected: "Expected | None" = None
    repeat: bool = False  # a further since for a scripted thing that had one already

    @property
    def first(self) -> Frame:
        return self.frames[0]

    @property
    def phase(self) -> Any:
        return self.first.phase

    def data_updates(self) -> list[Frame]:
        """Frames after the first whose progress differs from the frame before (status-only frames excluded)."""
        out = []
        for before, frame in zip(self.frames, self.frames[1:]):
            if frame.progress != before.progress:
                out.append(frame)
        return out


@dataclass
class Expected:
    """One phase instance the script asks for."""

    index: int  # the step's position in the script
    step: str
    arg: Any
    phase: str
    offset_s: float  # scripted start, from the start of the turn
    match: dict[str, Any] = field(default_factory=dict)  # fields the shown progress must agree with
    changing: bool = False  # the step changes the phase's data continually (read_prompt, write)
    seen: list[Instance] = field(default_factory=list)

    def matches(self, frame: Frame) -> bool:
        """The frame shows this step: its phase, and the fields the script fixes (tool, kind of wait,
        stop reason). An optional field left out does not disagree."""
        p = frame.obj
        if not p or p.get("phase") != self.phase:
            return False
        required = {"running_tool": ("tool",), "waiting_for_person": ("what",)}.get(self.phase, ())
        for key, want in self.match.items():
            have = p.get(key)
            if have is None and key not in required:
                continue
            if have != want:
                return False
        return True

    def same_thing(self, other: "Expected") -> bool:
        return self.phase == other.phase and self.match == other.match


@dataclass
class ScriptPlan:
    expected: list[Expected]
    ending: str  # "finish" | "stop" | "fail"
    end_s: float  # scripted end of the turn
    status_texts: list[str]  # status texts that a later frame must carry


_CHANGES_PROGRESS = ("read_prompt", "think", "write", "tool", "ask", "call", "stop", "fail", "finish")


def plan_of(script: dict[str, Any] | None) -> ScriptPlan | None:
    """What the script makes the runtime show, in order, with scripted times."""
    if not isinstance(script, dict) or not isinstance(script.get("steps"), list):
        return None
    expected: list[Expected] = []
    offset = 0.0
    ending = "finish"
    status_texts: list[str] = []
    pending_status: str | None = None
    for index, step in enumerate(script["steps"]):
        if not isinstance(step, dict) or len(step) != 1:
            continue
        name, arg = next(iter(step.items()))
        if name in _CHANGES_PROGRESS and pending_status is not None:
            status_texts.append(pending_status)
            pending_status = None
        obj = arg if isinstance(arg, dict) else {}
        if name == "status" and isinstance(arg, str):
            pending_status = arg
        elif name == "sleep" and isinstance(arg, (int, float)):
            offset += arg / 1000
        elif name == "read_prompt":
            expected.append(Expected(index, name, arg, "reading_prompt", offset,
                                     changing=int(obj.get("updates", 0) or 0) >= 2))
            offset += _ms(obj.get("ms"))
        elif name == "think":
            expected.append(Expected(index, name, arg, "thinking", offset))
            offset += _ms(arg)
        elif name == "write":
            expected.append(Expected(index, name, arg, "writing", offset, changing=True))
            offset += _ms(obj.get("ms"))
        elif name == "tool":
            expected.append(Expected(index, name, arg, "running_tool", offset, {"tool": obj.get("name")}))
            offset += _ms(obj.get("ms"))
        elif name == "ask":
            expected.append(Expected(index, name, arg, "waiting_for_person", offset, {"what": "question"}))
        elif name == "call":
            match = {"what": "approval"}
            if isinstance(obj.get("tool"), str):
                match["tool"] = obj["tool"]
            expected.append(Expected(index, name, arg, "waiting_for_person", offset, match))
        elif name in ("stop", "fail", "finish"):
            ending = name
            if name == "stop":
                expected.append(Expected(index, name, arg, "stopped", offset,
                                         {"reason": arg} if isinstance(arg, str) else {}))
            elif name == "fail":
                expected.append(Expected(index, name, arg, "failed", offset))
            break
    return ScriptPlan(expected, ending, offset, status_texts)


def _ms(value: Any) -> float:
    return value / 1000 if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


@dataclass
class ProgressStream:
    """The progress stream of one turn: its frames, the phase instances they show, and the script's
    expected phases aligned with them."""

    exchange: Exchange
    pointer: str
    frames: list[Frame]
    instances: list[Instance]
    plan: ScriptPlan | None
    unaligned: list[Instance]

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> "ProgressStream":
        ex = answered(log, LABEL)
        if ex.status != 200 or not ex.is_sse:
            raise Unjudgeable(f"the progress URL answered HTTP {ex.status} {ex.content_type!r}, not an event stream: "
                              "the suite could not drive it", [ex_evidence(ex)])
        return cls.read(log, ex, ctx.script or log.script)

    @classmethod
    def read(cls, log: FrameLog, ex: Exchange, script: dict[str, Any] | None) -> "ProgressStream":
        pointer = log.notes.get("progress_pointer", DEFAULT_POINTER)
        parent = parent_pointer(pointer)
        frames: list[Frame] = []
        for ev in ex.data_events():
            value, err = ev.json()
            frame = Frame(ev, ev.t)
            if err is not None:
                frame.problem = f"not JSON ({err})"
            else:
                frame.progress = resolve(value, pointer)
                if frame.progress is _MISSING:
                    frame.progress = None
                    frame.problem = f"nothing at the pointer {pointer!r}"
                holder = resolve(value, parent) if parent is not None else _MISSING
                if isinstance(holder, dict) and "status" in holder:
                    frame.status = holder["status"]
            frames.append(frame)
        instances: list[Instance] = []
        prev: Frame | None = None
        for frame in frames:
            if frame.obj is None:
                prev = None  # a frame after a null (or unreadable) one starts afresh
                continue
            if prev is not None and prev.identity() == frame.identity():
                instances[-1].frames.append(frame)
            else:
                instances.append(Instance([frame]))
            prev = frame
        plan = plan_of(script)
        unaligned = _align(instances, plan) if plan else list(instances)
        return cls(ex, pointer, frames, instances, plan, unaligned)

    @property
    def progress_frames(self) -> list[Frame]:
        return [f for f in self.frames if f.obj is not None]

    def instance_end(self, inst: Instance) -> float:
        """When the instance stopped showing: the next frame that is not part of it, or the stream's end."""
        last = inst.frames[-1]
        later = [f for f in self.frames if f.ev.index > last.ev.index]
        if later:
            return later[0].t
        return self.exchange.t_end if self.exchange.t_end is not None else last.t

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


def _align(instances: list[Instance], plan: ScriptPlan) -> list[Instance]:
    """Give each observed instance the scripted one it shows; return those that show none (extra phases).

    The pairing is a longest common subsequence (order kept, most matches), preferring the earliest
    scripted step; an unpaired instance right after those of a step it also matches is a further
    `since` for that one step (a repeat)."""
    exp, obs = plan.expected, instances
    m, n = len(obs), len(exp)
    best = [[0] * (n + 1) for _ in range(m + 1)]
    for i in range(m - 1, -1, -1):
        for j in range(n - 1, -1, -1):
            best[i][j] = max(best[i + 1][j], best[i][j + 1],
                             1 + best[i + 1][j + 1] if exp[j].matches(obs[i].first) else 0)
    i = j = 0
    while i < m and j < n:
        if exp[j].matches(obs[i].first) and best[i][j] == 1 + best[i + 1][j + 1]:
            obs[i].expected = exp[j]
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    unaligned, last = [], None
    for inst in obs:
        if inst.expected is not None:
            last = inst.expected
        elif last is not None and last.matches(inst.first):
            inst.expected, inst.repeat = last, True
        else:
            unaligned.append(inst)
    for inst in obs:
        if inst.expected is not None:
            inst.expected.seen.append(inst)
    return unaligned


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
