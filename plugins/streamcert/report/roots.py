"""Failures grouped by root cause, for the reports' presentation only: every requirement keeps its own status.

One broken frame often fails several requirements at once (a frame whose data is not JSON fails WIRE-002 and
leaves the content requirements without what they needed). Findings share a root when their evidence names the
same first frame: for each test, the first evidence item that names a frame gives the key (test, exchange,
frame, and the binding it went over: the same scenario's frame 2 over JSON-RPC and over gRPC are two frames);
two failures with a key in common are in one group, and so is anything either shares a key with. The
group's head is its member first in catalogue order (the report lists requirements in that order); the others
are shown under it. A failure whose evidence names no frame is a root of its own.

A content requirement that could not read a frame names it too: the rules' evidence of an event stream
(rules/engine.py `ex_evidence`) carries the first frame that could not be read as it was sent (`unread`), so
"frame 2 is not JSON" (WIRE-002) and "the stream does not carry the script's status" (A2A-STREAM-014, which
never saw frame 2) share a root. `names_frame` and `frames_first` are how the reports tell and order the items.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FrameKey = tuple[str, str, int, str]  # test, exchange, frame, binding ("" for none)


@dataclass
class Root:
    head: dict[str, Any]  # the report entry first in catalogue order
    members: list[dict[str, Any]] = field(default_factory=list)  # the other entries of the group, in catalogue order
    frame: dict[str, Any] | None = None  # the head's evidence item that names the shared first frame

    @property
    def entries(self) -> list[dict[str, Any]]:
        return [self.head, *self.members]

    @property
    def ids(self) -> list[str]:
        return [entry["id"] for entry in self.entries]


def names_frame(item: dict[str, Any]) -> bool:
    """Whether an evidence item names a frame (a frame's evidence, or an exchange's that names the first frame
    of it that could not be read: rules/engine.py ex_evidence)."""
    return isinstance(item.get("frame"), int) and not isinstance(item.get("frame"), bool)


def frames_first(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Evidence items as the reports show them: those naming a frame first, then the exchanges' metadata, each
    part in its own order."""
    return [item for item in items if names_frame(item)] + [item for item in items if not names_frame(item)]


def first_frames(entry: dict[str, Any]) -> dict[FrameKey, dict[str, Any]]:
    """Each test's first evidence item that names a frame (over each binding), by its key (test, exchange,
    frame, binding)."""
    firsts: dict[tuple[str, str], tuple[FrameKey, dict[str, Any]]] = {}
    for item in entry.get("evidence") or ():
        if not names_frame(item):
            continue
        test, binding = str(item.get("test") or ""), str(item.get("binding") or "")
        if (test, binding) not in firsts:
            firsts[(test, binding)] = ((test, str(item.get("exchange") or ""), item["frame"], binding), item)
    return dict(firsts.values())


def group(entries: list[dict[str, Any]]) -> list[Root]:
    """The entries (report entries in catalogue order, usually the failures) grouped by root cause; the
    groups in the order of their heads."""
    parent = list(range(len(entries)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    keys = [first_frames(entry) for entry in entries]
    owner: dict[FrameKey, int] = {}
    for i, found in enumerate(keys):
        for key in found:
            if key in owner:
                a, b = find(owner[key]), find(i)
                parent[max(a, b)] = min(a, b)  # the smaller index (earlier in catalogue order) stays the root
            else:
                owner[key] = i
    groups: dict[int, list[int]] = {}
    for i in range(len(entries)):
        groups.setdefault(find(i), []).append(i)
    roots = []
    for r, members in sorted(groups.items()):
        others = [keys[i] for i in members if i != r]
        shared = [item for key, item in keys[r].items() if any(key in other for other in others)]
        roots.append(Root(head=entries[r], members=[entries[i] for i in members if i != r],
                          frame=shared[0] if shared else next(iter(keys[r].values()), None)))
    return roots
