"""Whether a process still runs, as the tests that end processes ask it: a zombie (exited, not reaped yet by its
parent or by whoever adopted it: this machine's init reaps slowly, and a crashed xdist worker waits for its
parent) does not run, although kill(pid, 0) still finds it."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path


def running(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie (Linux reads /proc; elsewhere `ps`)."""
    if Path("/proc/self/stat").exists():
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return False
        return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    return bool(state) and not state.startswith("Z")


def ended_within(pid: int, within_s: float) -> bool:
    """Whether process `pid` stops running within `within_s` (a killed process is not gone at once on a loaded
    machine)."""
    deadline = time.monotonic() + within_s
    while running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
