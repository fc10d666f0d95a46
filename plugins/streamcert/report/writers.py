"""Write the report files: compatibility.json, report.md (CI step summary, markdown/), report.html
(one page, html/), junit.xml (one test case per requirement, junit.py) and the shields.io badges
(badge.json, badge-<profile>.json, badge.py)."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ..catalogue import PROFILES
from .badge import badges, profile_file
from .html import render_html
from .junit import render_junit
from .markdown import render_markdown


def write_all(report: dict[str, Any], directory: Path) -> list[Path]:
    """Write the files, each atomically; all are rendered before any is written, so a rendering
    error leaves the previous report whole."""
    directory = Path(directory)
    contents = {
        "compatibility.json": json.dumps(report, indent=2, ensure_ascii=False) + "\n",
        "report.md": render_markdown(report),
        "report.html": render_html(report),
    }
    contents["junit.xml"] = render_junit(report)
    contents.update({name: json.dumps(badge, ensure_ascii=False) + "\n" for name, badge in badges(report).items()})
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in contents.items():
        written.append(write_atomic(directory / name, text))
    for profile in PROFILES:  # a profile this run did not select has no badge, not the last run's one
        if profile_file(profile) not in contents:
            with contextlib.suppress(FileNotFoundError):
                (directory / profile_file(profile)).unlink()
    return written


def write_atomic(path: Path, data: str | bytes) -> Path:
    """Write `path` through a temporary file in the same directory and `os.replace`: a reader (or a
    run killed half-way) sees the old file or the new one, never a part of it."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path
