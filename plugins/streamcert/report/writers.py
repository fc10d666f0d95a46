"""Write the report files: compatibility.json, report.md (CI step summary, markdown.py), report.html
(one page, html.py); junit.xml comes from pytest itself (`--junitxml`) except for a run that could not run."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from .html import render_html
from .markdown import render_markdown


def write_all(report: dict[str, Any], directory: Path) -> list[Path]:
    """Write the three files, each atomically; all are rendered before any is written, so a rendering
    error leaves the previous report whole."""
    directory = Path(directory)
    contents = {
        "compatibility.json": json.dumps(report, indent=2, ensure_ascii=False) + "\n",
        "report.md": render_markdown(report),
        "report.html": render_html(report),
    }
    if report.get("could_not_run"):  # pytest never ran, so nothing else writes junit.xml
        contents["junit.xml"] = render_junit_could_not_run(report)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in contents.items():
        written.append(write_atomic(directory / name, text))
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


# -- JUnit XML for a run that could not run ------------------------------------------------------------

def render_junit_could_not_run(report: dict[str, Any]) -> str:
    """One errored test case naming why the run could not run (CI systems show it like a test error)."""
    suite = ElementTree.Element("testsuite", name="streamcert", tests="1", errors="1", failures="0", skipped="0")
    case = ElementTree.SubElement(suite, "testcase", classname="streamcert", name="preflight")
    ElementTree.SubElement(case, "error", message=report["could_not_run"]).text = report["could_not_run"]
    root = ElementTree.Element("testsuites")
    root.append(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"
