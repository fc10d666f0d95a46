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
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...contract.labels.line import PROGRESS
from ...contract.line import PROGRESS_POINTER
from ...framelog import Event, Exchange, FrameLog
from ...protocols.progress import IDENTITY
from ..engine import RuleContext, Unjudgeable, answered, ev_evidence, ex_evidence

DEFAULT_POINTER = "/progress"
MAIN = None  # the sequence key of the main agent's frames (no `agent`)

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
    agent: Any = _MISSING  # the subagent's id beside it, or _MISSING (the main agent's progress)

    @property
    def obj(self) -> dict[str, Any] | None:
        return self.progress if isinstance(self.progress, dict) else None

    @property
    def phase(self) -> Any:
        return self.obj.get("phase") if self.obj else None

    @property
    def key(self) -> Any:
        """Whose sequence the frame belongs to: MAIN without `agent` (or with agent null), else the id (a
        value that is not a string is kept apart, as its JSON text in a tuple)."""
        if self.agent is _MISSING or self.agent is None:
            return MAIN
        return self.agent if isinstance(self.agent, str) else ("not a string", repr(self.agent))

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


# Fields a shown progress must carry to show a step at all (they say which thing it is about); the
# other fields the script fixes may be left out (optional, or PROG-003's when required) and then do
# not disagree.
_IDENTIFYING = {"running_tool": ("tool",), "waiting_for_person": ("what",), "waiting_for_model": ("model",),
                "loading_model": ("model",)}


@dataclass
class Expected:
    """One phase instance the script asks for."""

    index: int  # the step's position in its steps list
    step: str
    arg: Any  # the step's argument (for a call of a `tools` set: that call)
    phase: str
    offset_s: float  # scripted start, from the start of the agent's turn
    match: dict[str, Any] = field(default_factory=dict)  # fields the shown progress must agree with
    changing: bool = False  # the step changes the phase's data continually (read_prompt, write)
    seen: list[Instance] = field(default_factory=list)

    def matches(self, frame: Frame) -> bool:
        """The frame shows this step: its phase, and the fields the script fixes (tool, kind of wait,
        model, stop reason, …). An optional field left out does not disagree."""
        p = frame.obj
        if not p or p.get("phase") != self.phase:
            return False
        required = _IDENTIFYING.get(self.phase, ())
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
class ParallelSet:
    """A `tools` step: calls running at once, and the calls running_tool must show, in order (of the
    calls running, the one that started first)."""

    index: int
    calls: list[dict[str, Any]]
    shown: list[int]  # indexes into calls, in the order they show
    expected: list[Expected]  # one per entry of shown

    def call_of(self, frame: Frame) -> int | None:
        """The call of this set a running_tool frame shows, if any."""
        p = frame.obj or {}
        hits = [i for i, c in enumerate(self.calls) if c.get("name") == p.get("tool")]
        if len(hits) > 1:  # calls of one tool are told apart by their title
            hits = [i for i in hits if self.calls[i].get("what") == p.get("what")]
        return hits[0] if len(hits) == 1 else None


@dataclass
class ScriptPlan:
    expected: list[Expected]
    ending: str  # "finish" | "stop" | "fail"
    end_s: float  # scripted end of the agent's turn
    status_texts: list[str]  # status texts that a later frame must carry
    parallel: list[ParallelSet] = field(default_factory=list)
    subagents: dict[str, "ScriptPlan"] = field(default_factory=dict)  # every subagent's, nested ones too, by id


_CHANGES_PROGRESS = ("read_prompt", "think", "write", "write_call", "tool", "tools", "ask", "call", "propose_plan",
                     "queued", "wait_model", "load_model", "compact", "retry", "subagents", "stop", "fail", "finish")


def plan_of(script: dict[str, Any] | None) -> ScriptPlan | None:
    """What the script makes the runtime show, in order, with scripted times (each subagent's too)."""
    if not isinstance(script, dict) or not isinstance(script.get("steps"), list):
        return None
    registry: dict[str, ScriptPlan] = {}
    main = _plan(script["steps"], registry)
    main.subagents = registry
    return main


def _plan(steps: list[Any], registry: dict[str, ScriptPlan]) -> ScriptPlan:
    expected: list[Expected] = []
    parallel: list[ParallelSet] = []
    offset = 0.0
    ending = "finish"
    status_texts: list[str] = []
    pending_status: str | None = None
    for index, step in enumerate(steps):
        if not isinstance(step, dict) or len(step) != 1:
            continue
        name, arg = next(iter(step.items()))
        if name in _CHANGES_PROGRESS and pending_status is not None:
            status_texts.append(pending_status)
            pending_status = None
        obj = arg if isinstance(arg, dict) else {}
        last = expected[-1] if expected else None
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
        elif name in ("write", "write_call"):  # reply text, or a tool call's arguments (§4: writing)
            expected.append(Expected(index, name, arg, "writing", offset, changing=True))
            offset += _ms(obj.get("ms"))
        elif name == "tool":
            expected.append(Expected(index, name, arg, "running_tool", offset, {"tool": obj.get("name")}))
            offset += _ms(obj.get("ms"))
        elif name == "tools" and isinstance(arg, list):
            pset = _parallel(index, arg, offset)
            if pset is not None:
                parallel.append(pset)
                expected.extend(pset.expected)
                offset += max(c["end_s"] for c in pset.calls)
        elif name == "ask":
            expected.append(Expected(index, name, arg, "waiting_for_person", offset, {"what": "question"}))
        elif name == "call":
            match = {"what": "approval"}
            if isinstance(obj.get("tool"), str):
                match["tool"] = obj["tool"]
            expected.append(Expected(index, name, arg, "waiting_for_person", offset, match))
        elif name == "propose_plan":
            expected.append(Expected(index, name, arg, "waiting_for_person", offset, {"what": "plan"}))
        elif name == "queued":
            # The same prompt waiting on: its ahead is data of the phase already showing.
            if not (last and last.phase == "queued"):
                match = {"ahead": obj["ahead"]} if _is_count(obj.get("ahead")) else {}
                expected.append(Expected(index, name, arg, "queued", offset, match))
            offset += _ms(obj.get("ms"))
        elif name == "wait_model":
            # The same model again: its reason is data of the phase already showing; another model is another thing.
            if not (last and last.phase == "waiting_for_model" and last.match.get("model") == obj.get("model")):
                match = {k: obj[k] for k in ("model", "reason") if k in obj}
                expected.append(Expected(index, name, arg, "waiting_for_model", offset, match))
            offset += _ms(obj.get("ms"))
        elif name == "load_model":
            expected.append(Expected(index, name, arg, "loading_model", offset, {"model": obj.get("model")}))
            offset += _ms(obj.get("ms"))
        elif name == "compact":
            expected.append(Expected(index, name, arg, "compacting", offset))
            offset += _ms(arg)
        elif name == "retry":
            match = {k: obj[k] for k in ("in", "attempt") if _is_count(obj.get(k))}
            expected.append(Expected(index, name, arg, "retrying", offset, match))
            offset += _ms(obj.get("ms"))
        elif name == "subagents" and isinstance(arg, list):
            subs = [(s.get("id"), s.get("steps")) for s in arg if isinstance(s, dict)]
            subs = [(sid, sub_steps) for sid, sub_steps in subs if isinstance(sid, str) and isinstance(sub_steps, list)]
            expected.append(Expected(index, name, arg, "waiting_for_subagents", offset, {"running": len(subs)}))
            longest = 0.0
            for sid, sub_steps in subs:
                sub = _plan(sub_steps, registry)
                registry.setdefault(sid, sub)
                longest = max(longest, sub.end_s)
            offset += longest
        elif name in ("stop", "fail", "finish"):
            ending = name
            if name == "stop":
                expected.append(Expected(index, name, arg, "stopped", offset,
                                         {"reason": arg} if isinstance(arg, str) else {}))
            elif name == "fail":
                expected.append(Expected(index, name, arg, "failed", offset))
            break
    return ScriptPlan(expected, ending, offset, status_texts, parallel)


def _parallel(index: int, calls_arg: list[Any], offset: float) -> ParallelSet | None:
    """The calls of a `tools` step with their scripted times (`at` from the first start), and which shows
    when: at every start or end, of the calls running, the one that started first (calls given the same
    `at` start in the order listed)."""
    calls = []
    for c in calls_arg:
        if not isinstance(c, dict):
            return None
        calls.append({**c, "at_s": _ms(c.get("at", 0)), "end_s": _ms(c.get("at", 0)) + _ms(c.get("ms"))})
    if not calls:
        return None
    first = min(c["at_s"] for c in calls)
    for c in calls:
        c["at_s"] -= first
        c["end_s"] -= first
    order = sorted(range(len(calls)), key=lambda i: (calls[i]["at_s"], i))
    shown: list[int] = []
    starts: list[float] = []
    for t in sorted({c["at_s"] for c in calls} | {c["end_s"] for c in calls}):
        running = [i for i in order if calls[i]["at_s"] <= t < calls[i]["end_s"]]
        if running and (not shown or shown[-1] != running[0]):
            shown.append(running[0])
            starts.append(t)
    names = [c.get("name") for c in calls]
    expected = []
    for i, t in zip(shown, starts):
        call = calls[i]
        match = {"tool": call.get("name")}
        if names.count(call.get("name")) > 1 and isinstance(call.get("what"), str):
            match["what"] = call["what"]  # told apart from the other calls of its tool by the title
        expected.append(Expected(index, "tools", call, "running_tool", offset + t, match))
    return ParallelSet(index, calls, shown, expected)


def _ms(value: Any) -> float:
    return value / 1000 if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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
                if frame.progress is _MISSING:
                    frame.progress = None
                    frame.problem = f"nothing at the pointer {pointer!r}"
                holder = resolve(value, parent) if parent is not None else _MISSING
                if isinstance(holder, dict):
                    frame.status = holder.get("status", _MISSING)
                    frame.agent = holder.get("agent", _MISSING)
            frames.append(frame)
        stream = cls(ex, pointer, frames, [], plan_of(script))
        by_key: dict[Any, list[Frame]] = {MAIN: []}
        for frame in frames:
            by_key.setdefault(frame.key, []).append(frame)
        stream.sequences = [Sequence(stream, key, fs, _instances(fs)) for key, fs in by_key.items()]
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
                sid, score = max(((sid, _matched(seq.instances, plan.expected)) for sid, plan in free.items()),
                                 key=lambda pair: pair[1])
                if score:
                    seq.plan, seq.scripted_id = free.pop(sid), sid
        for seq in self.sequences:
            seq.unaligned = _align(seq.instances, seq.plan) if seq.plan else list(seq.instances)

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


def _instances(frames: list[Frame]) -> list[Instance]:
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
    return instances


def _lcs(obs: list[Instance], exp: list[Expected]) -> list[list[int]]:
    """best[i][j]: the most pairs (order kept) of obs[i:] with exp[j:]."""
    m, n = len(obs), len(exp)
    best = [[0] * (n + 1) for _ in range(m + 1)]
    for i in range(m - 1, -1, -1):
        for j in range(n - 1, -1, -1):
            best[i][j] = max(best[i + 1][j], best[i][j + 1],
                             1 + best[i + 1][j + 1] if exp[j].matches(obs[i].first) else 0)
    return best


def _matched(obs: list[Instance], exp: list[Expected]) -> int:
    return _lcs(obs, exp)[0][0] if obs and exp else 0


def _align(instances: list[Instance], plan: ScriptPlan) -> list[Instance]:
    """Give each observed instance the scripted one it shows; return those that show none (extra phases).

    The pairing is a longest common subsequence (order kept, most matches), preferring the earliest
    scripted step; an unpaired instance after those of a step that shows the same phase about the same
    thing (its identifying fields equal; its data may have changed) is a further `since` for that one
    step (a repeat)."""
    exp, obs = plan.expected, instances
    m, n = len(obs), len(exp)
    best = _lcs(obs, exp)
    i = j = 0
    while i < m and j < n:
        if exp[j].matches(obs[i].first) and best[i][j] == 1 + best[i + 1][j + 1]:
            obs[i].expected = exp[j]
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    unaligned, last = [], None  # the instance last paired (or taken as a repeat)
    for inst in obs:
        if inst.expected is not None:
            last = inst
        elif last is not None and _same_thing_shown(last.first, inst.first):
            inst.expected, inst.repeat = last.expected, True
            last = inst
        else:
            unaligned.append(inst)
    for inst in obs:
        if inst.expected is not None:
            inst.expected.seen.append(inst)
    return unaligned


def _same_thing_shown(a: Frame, b: Frame) -> bool:
    """The same phase about the same thing (its identifying fields equal), whatever its since and data."""
    return a.identity()[:1] + a.identity()[2:] == b.identity()[:1] + b.identity()[2:]


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
