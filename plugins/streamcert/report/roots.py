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

An agent card that could not be read (A2A-CARD-001 failed on an answer other than HTTP 200, or on a body that is
not a JSON object) is the root of every failure judged on that agent: without the card the suite cannot know the
agent's bindings, capabilities or extensions, and a wrong --url makes every request miss. Its root comes first,
says which URL was tried and the likely fix (`cause`, `fix`), and holds every failure of the profiles served by
the A2A target (a2a, interactions, plans); the failures of other targets are grouped as above.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..catalogue import family_of
from ..protocols.a2a import CARD_PATH
from ..targets import SLOT_OF_PROFILE
from ..wire.urls import join

FrameKey = tuple[str, str, int, str]  # test, exchange, frame, binding ("" for none)


@dataclass
class Root:
    head: dict[str, Any]  # the report entry first in catalogue order
    members: list[dict[str, Any]] = field(default_factory=list)  # the other entries of the group, in catalogue order
    frame: dict[str, Any] | None = None  # the head's evidence item that names the shared first frame
    cause: str | None = None  # a root in the run's set-up (the card could not be read): what went wrong
    fix: str | None = None  # ... and the likely fix

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


CARD_ID = "A2A-CARD-001"
_CUT_BODY = re.compile(r"… \(\d+ bytes\)$")  # how rules/engine.py ex_evidence marks a body it quotes in part


def unreadable_card(entry: dict[str, Any]) -> dict[str, Any] | None:
    """The card's exchange (an evidence item of A2A-CARD-001) when the card could not be read: an answer other
    than HTTP 200, no answer, or a whole body that is not a JSON object; None otherwise (a card served with the
    wrong Content-Type can still be read)."""
    if entry.get("id") != CARD_ID or entry.get("status") not in ("FAIL", "ERROR"):
        return None
    for item in entry.get("evidence") or ():
        if item.get("exchange") != "card":
            continue
        if item.get("error") or item.get("status") != 200:
            return item
        body = item.get("body")
        if isinstance(body, str) and not _CUT_BODY.search(body):
            try:
                value = json.loads(body)
            except ValueError:
                return item
            if not isinstance(value, dict):
                return item
    return None


def card_fix(a2a_url: str | None) -> str:
    """The likely fix of a card that could not be read at --url's /.well-known/agent-card.json."""
    if not a2a_url:
        return f"give --url the agent's base URL: its card is served at the origin's {CARD_PATH}"
    parts = urlsplit(a2a_url)
    if parts.path.strip("/"):
        base = f"{parts.scheme}://{parts.netloc}" + (f"?{parts.query}" if parts.query else "")
        return (f"the card lives at the origin's {CARD_PATH} (A2A 1.0.1 §8.2), not under a path: try --url {base} "
                "(the card's interfaces then say where the agent's endpoint is)")
    return (f"check that --url is the A2A agent's base URL: an A2A 1.0 agent serves its card at the origin's "
            f"{CARD_PATH} (A2A 1.0.1 §8.2); is the agent running there, and is it this agent's port?")


def card_root(entries: list[dict[str, Any]], a2a_url: str | None = None) -> Root | None:
    """The root of a card that could not be read: A2A-CARD-001 at its head, every other failure judged on the A2A
    target under it. None when the card was read (or A2A-CARD-001 is not among `entries`)."""
    head = next((e for e in entries if unreadable_card(e) is not None), None)
    if head is None:
        return None
    item = unreadable_card(head) or {}
    answered = (f"no answer ({item['error']})" if item.get("error") else f"HTTP {item.get('status')}"
                + (f" {item['body']!r}" if item.get("status") == 200 and item.get("body") else ""))
    tried = join(a2a_url, CARD_PATH) if a2a_url else CARD_PATH
    on_card = SLOT_OF_PROFILE["a2a"].profiles
    members = [e for e in entries if e is not head and _profile(e["id"]) in on_card]
    return Root(head=head, members=members, frame=None,
                cause=f"the agent card could not be read: GET {tried} answered {answered}", fix=card_fix(a2a_url))


def _profile(req_id: str) -> str | None:
    try:
        return family_of(req_id)[1]
    except KeyError:
        return None


def group(entries: list[dict[str, Any]], a2a_url: str | None = None) -> list[Root]:
    """The entries (report entries in catalogue order, usually the failures) grouped by root cause; the
    groups in the order of their heads, except that a card that could not be read (`card_root`, the URL tried
    built from `a2a_url`, the report's target) is first."""
    card = card_root(entries, a2a_url)
    if card is not None:
        taken = {id(e) for e in card.entries}
        return [card, *_group([e for e in entries if id(e) not in taken])]
    return _group(entries)


def _group(entries: list[dict[str, Any]]) -> list[Root]:
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
