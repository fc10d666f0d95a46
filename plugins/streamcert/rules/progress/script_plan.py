"""The phases a progress script asks for (`ScriptPlan`: each step's expected instance, the parallel sets), and how
the observed instances are aligned with them: a longest common subsequence, order kept, a repeat of the same
thing taken as a further `since` of its step."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .frames import Frame, Instance

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


def _lcs(obs: list[Instance], exp: list[Expected]) -> list[list[int]]:
    """best[i][j]: the most pairs (order kept) of obs[i:] with exp[j:]."""
    m, n = len(obs), len(exp)
    best = [[0] * (n + 1) for _ in range(m + 1)]
    for i in range(m - 1, -1, -1):
        for j in range(n - 1, -1, -1):
            best[i][j] = max(best[i + 1][j], best[i][j + 1],
                             1 + best[i + 1][j + 1] if exp[j].matches(obs[i].first) else 0)
    return best


def count_matched(obs: list[Instance], exp: list[Expected]) -> int:
    return _lcs(obs, exp)[0][0] if obs and exp else 0


def align(instances: list[Instance], plan: ScriptPlan) -> list[Instance]:
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
