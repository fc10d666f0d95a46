"""The reference's stdio programs the embedded run plays in its own process instead of starting a Python process
per case (issue 29; wire/inprocess.py; docs/clients.md): the A2A client, the ACP client (with the agent it starts),
the ACP agent and the line renderer, each found by its command line. Only the reference's own command lines, as the
run that starts the reference gives them (`targets.reference_command`, with or without one of the program's own
faults), are played here; a command a user gives runs as itself, even when it is the same line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib import import_module
from typing import Any

from ..targets import SLOTS, reference_command
from .faults import FAULTS

# reference program (targets.Slot.program) → the module whose `in_process(fault)` is its program
MODULES = {"client": "streamcert.reference.client.client", "acp_client": "streamcert.reference.acp_client.in_process",
           "acp": "streamcert.reference.acp.agent", "line": "streamcert.reference.line.renderer"}


def played_here(program: str, command: str | None, make: Callable[[str | None], Any]) -> Any:
    """`make(fault)` when `command` is the reference `program`'s own command line (broken by `fault`, one of its own,
    or none), else None."""
    for fault in (None, *(f.name for f in FAULTS.values() if f.target == program)):
        if command == reference_command(program, fault):
            return make(fault)
    return None


def programs(target: Any, profiles: Iterable[str]) -> dict[str, Any]:
    """The programs of `target`'s stdio commands (by Target field) to play in this process: those of the `profiles`
    a run plays whose command is the reference's own; each module imported only when its profile is played."""
    chosen = {}
    for slot in SLOTS:
        if slot.program in MODULES and set(slot.profiles) & set(profiles):
            make = import_module(MODULES[slot.program]).in_process
            program = played_here(slot.program, getattr(target, slot.field), make)
            if program is not None:
                chosen[slot.field] = program
    return chosen
