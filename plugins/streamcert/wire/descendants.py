"""Every process a program under test started, found and ended: unprivileged, without cgroups.

A program runs in a session and process group of its own (wire/stdio.py), so signalling its group reaches a
wrapper's child; but a descendant that calls `setsid` (or `setpgid`) leaves the group, and a daemon that
double-forks leaves its parent too. So each program is started with a mark in its environment,
`STREAMCERT_PEER=<random token>`, which every descendant inherits (a process's /proc/<pid>/environ is the
environment it was started with, whatever it changed since). At the end, every live process whose
environment holds the mark, or that is still in the program's session, is signalled.

Limits, said plainly: Linux only (/proc; elsewhere the group alone is ended, as before); a process that both
leaves the session and is exec'd with an environment rewritten without the mark is not found.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path

MARK = "STREAMCERT_PEER"
PROC = Path("/proc")


def new_token() -> str:
    return secrets.token_hex(16)


def marked_env(env: Mapping[str, str] | None, token: str) -> dict[str, str]:
    """The environment to start a program in: `env` (None: this process's) with the mark."""
    return {**(os.environ if env is None else env), MARK: token}


def members(token: str, session: int | None = None) -> list[int]:
    """The live processes carrying the mark `token`, or in session `session` (not this process, no zombie)."""
    if not PROC.is_dir():
        return []
    needle = f"{MARK}={token}".encode()
    own = os.getpid()
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == own:
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if stat[0] == "Z":  # ended, not yet reaped by whoever is its parent now
                continue
            if session is not None and int(stat[3]) == session:
                found.append(int(entry.name))
                continue
            environ = (entry / "environ").read_bytes()
        except (OSError, IndexError, ValueError):  # gone meanwhile, or another user's
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def signal_all(token: str, session: int | None, sig: int) -> bool:
    """Send `sig` (0: only look) to every member; whether there was any."""
    alive = False
    for pid in members(token, session):
        try:
            os.kill(pid, sig)
            alive = True
        except (ProcessLookupError, PermissionError):
            continue
    return alive
