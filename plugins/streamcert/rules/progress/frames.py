"""A progress stream's frames as the PROG- rules read them: the progress at its JSON pointer (RFC 6901), the
status text and the subagent beside it, and the phase instances consecutive frames form (progressview.py says
what an instance is)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...framelog import Event
from ...protocols.progress import IDENTITY

if TYPE_CHECKING:  # an instance names the scripted step it shows; script_plan.py reads frames
    from .script_plan import Expected


DEFAULT_POINTER = "/progress"
MAIN = None  # the sequence key of the main agent's frames (no `agent`)

MISSING = object()


def resolve(doc: Any, pointer: str) -> Any:
    """RFC 6901: the value at `pointer` in `doc`, or MISSING."""
    if pointer == "":
        return doc
    if not pointer.startswith("/"):
        return MISSING
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(doc, dict) and token in doc:
            doc = doc[token]
        elif isinstance(doc, list) and token.isdigit() and (token == "0" or not token.startswith("0")) \
                and int(token) < len(doc):
            doc = doc[int(token)]
        else:
            return MISSING
    return doc


def parent_pointer(pointer: str) -> str | None:
    return pointer.rsplit("/", 1)[0] if pointer else None


@dataclass
class Frame:
    ev: Event
    t: float
    problem: str | None = None  # why no progress could be read (not JSON, nothing at the pointer)
    progress: Any = None  # the value at the pointer (dict, None, or anything else)
    status: Any = MISSING  # the status text beside it, or MISSING
    agent: Any = MISSING  # the subagent's id beside it, or MISSING (the main agent's progress)

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
        if self.agent is MISSING or self.agent is None:
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


def instances_of(frames: list[Frame]) -> list[Instance]:
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


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
