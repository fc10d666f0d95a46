"""Which A2A bindings a run certifies (`--binding jsonrpc|http-json|grpc|all`, repeatable).

Asked for nothing: the embedded reference is certified over every binding; a target given with `--url` over the
first of JSON-RPC, HTTP+JSON and gRPC its card declares. `all`: every binding the card declares. A binding asked
for that the card does not declare, or that this install cannot speak (gRPC without the `grpc` extra), is not
certified: its requirements are SKIPPED with the reason (docs/contracts.md §3), never blamed on the implementation.
The card is read once per process, at run time (collection never touches the network).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from ..protocols import bindings

ALL = "all"
CHOICES = (*bindings.BINDINGS, ALL)


@dataclass
class BindingChoice:
    certified: list[str]
    skipped: dict[str, str] = field(default_factory=dict)  # binding → why it is not certified
    declared: list[str] | None = None  # the bindings the card declares (None: not read)

    def to_json(self) -> dict[str, Any]:
        return {"certified": list(self.certified), "skipped": dict(self.skipped), "declared": self.declared}


def grpc_missing() -> str | None:
    """Why this install cannot speak gRPC (None when it can)."""
    from ..protocols.grpc_messages import grpc_available

    return grpc_available()


def read_card(target: Any) -> Any:
    """The card's JSON value, read with the suite's own bounded client (a card that trickles, a bomb, a silent
    server: cut at the run's caps, never waited on); None when it cannot be read (the card requirements say why)."""
    from ..framelog import FrameLog
    from ..wire.clients import client_for

    async def fetch() -> Any:
        async with client_for(target, FrameLog(scenario="binding-choice")) as client:
            ex = await client.get_card()
        value, complaint = ex.json() if ex.status == 200 else (None, "no card")
        return value if complaint is None else None

    return asyncio.run(fetch())


IDENTITY_CHARS = 120  # the longest name or version a report shows of a card (a card is the implementation's text)


def implementation_of(card: Any) -> dict[str, str] | None:
    """The implementation as its agent card names it: the AgentCard's `name` and `version` (A2A 1.0.1 §8, both
    required strings), each cut to IDENTITY_CHARS; None when the card was not read or gives neither as a string."""
    if not isinstance(card, dict):
        return None
    named = {key: " ".join(card[key].split())[:IDENTITY_CHARS] for key in ("name", "version")
             if isinstance(card.get(key), str) and card[key].strip()}
    return named or None


def choose(asked: list[str] | None, card: Any, *, embedded: bool) -> BindingChoice:
    """The bindings to certify, given what was asked for and the card (None: not readable)."""
    asked = list(dict.fromkeys(asked or []))
    declared = list(dict.fromkeys(b for b, _ in bindings.declared(card))) if card is not None else None
    every = ALL in asked or (not asked and embedded)  # every binding there is (the card says which)
    if every:
        wanted, how = list(bindings.BINDINGS), "--binding all" if ALL in asked else "the embedded reference"
    elif asked:
        wanted, how = [b for b in bindings.BINDINGS if b in asked], "--binding " + ",".join(asked)
    else:
        first = next((b for b in bindings.BINDINGS if b in (declared or [])), bindings.JSONRPC)
        wanted, how = [first], f"the first binding the card declares ({bindings.TITLE[first]})"
        if declared is None:
            how = "the card could not be read: JSON-RPC is tried"
    choice = BindingChoice([], declared=declared)
    for b in bindings.BINDINGS:
        if b not in wanted:
            choice.skipped[b] = f"not selected ({how})"
        elif b == bindings.GRPC and (missing := grpc_missing()):  # gRPC is imported only for a run that wants it
            choice.skipped[b] = missing
        elif declared is not None and b not in declared:
            asked_for = "" if every else f"asked for ({how}), but "
            choice.skipped[b] = f"{asked_for}the card declares no {bindings.CARD_NAME[b]} interface for protocol 1.x"
        else:
            choice.certified.append(b)
    return choice


def refusal(asked: list[str] | None, target: Any, *, embedded: bool) -> str | None:
    """Why a run asked for bindings by name (`--binding grpc`, not `all`) must be refused before it starts: a
    binding this install cannot speak, or one the card (read when a target is given) does not declare. None when
    every binding named can be certified, or when the card cannot be read (its requirements say so in the run)."""
    named = [b for b in dict.fromkeys(asked or []) if b != ALL]
    if not named:
        return None
    missing = grpc_missing() if bindings.GRPC in named else None
    if missing:
        return f"--binding grpc: {missing}"
    if embedded:
        return None
    card = read_card(target)
    choice = choose(named, card, embedded=False)
    refused = [b for b in named if b not in choice.certified]
    if not refused or choice.declared is None:
        return None
    has = ", ".join(bindings.TITLE[b] for b in choice.declared) or "no A2A 1.x interface"
    instead = " ".join(f"--binding {b}" for b in choice.declared)
    return (" ".join(f"--binding {b}" for b in refused)
            + f": the card declares no {' or '.join(bindings.TITLE[b] for b in refused)} interface for protocol 1.x "
            f"(it declares {has}); " + (f"give {instead} or leave --binding out" if instead else "leave --binding out"))
