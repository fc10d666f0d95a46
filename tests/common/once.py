"""One expensive piece of set-up (a full run in a subprocess, a wheel installed in a venv) made once per test
session, read by every test that proves something about it, on whichever pytest-xdist worker that test lands.

The first worker to ask claims the piece by creating its folder in the folder all workers of the session share
(the parent of each worker's base temporary directory), makes it there and writes its result beside it (JSON,
renamed into place whole); a worker asking later waits for that result, bounded. A module-scoped fixture would
make the piece again on each worker its tests are spread over."""

from __future__ import annotations

import json
import os
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

POLL_S = 0.1


def shared_folder(factory: pytest.TempPathFactory) -> Path:
    """The folder every worker of this session sees (the base temporary directory without xdist)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], dict], bound_s: float) -> tuple[Path, dict]:
    """`make(folder)` for this session's `name`, made here or by another worker: (its folder, what it returned).
    A `make` that raised fails every test that reads it, with its traceback; one that is not done `bound_s`
    seconds after it was claimed fails them too."""
    folder = shared_folder(factory) / "once" / name
    result = folder.with_name(name + ".json")
    try:
        folder.mkdir(parents=True)
    except FileExistsError:  # another worker makes it
        claimed = folder.stat().st_mtime
        while not result.exists():
            if time.time() - claimed > bound_s:
                raise AssertionError(f"{name}: not made within {bound_s:.0f} s by the worker that claimed it") from None
            time.sleep(POLL_S)
    else:
        try:
            made = make(folder)
        except BaseException as exc:  # reported by every test that reads it
            _write(result, {"error": traceback.format_exc()})
            if not isinstance(exc, Exception):
                raise
        else:
            _write(result, {"made": made})
    doc = json.loads(result.read_text("utf-8"))
    if "error" in doc:
        raise AssertionError(f"{name}: making it failed:\n{doc['error']}")
    return folder, doc["made"]


def _write(result: Path, doc: dict) -> None:
    part = result.with_suffix(".part")
    part.write_text(json.dumps(doc), "utf-8")
    part.replace(result)  # a reader sees all of it or nothing
