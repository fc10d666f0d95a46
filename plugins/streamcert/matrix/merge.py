"""matrix.json (docs/matrix.md): one entry per cell, read off the cell's compatibility.json, and the known
failures with the cells each matched. `streamcert matrix run` writes it; `streamcert matrix merge` builds it again
from cell directories run elsewhere (other CI jobs, other days), refusing cells judged by different catalogue
versions unless told."""

from __future__ import annotations

import fnmatch
import json
import shutil
from pathlib import Path
from typing import Any

from ..report.common import must_count
from ..safe_names import UnsafeName, confined

MATRIX_FILE = "matrix.json"
FORMAT = 1
FAILED = ("FAIL", "ERROR")
KNOWN_KEYS = ("cells", "requirement", "reason", "link")


def read_report(folder: Path) -> dict[str, Any] | None:
    try:
        report = json.loads((folder / "compatibility.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return report if isinstance(report, dict) else None


def cell_entry(meta: dict[str, Any], result: dict[str, Any], report: dict[str, Any] | None) -> dict[str, Any]:
    """A cell of matrix.json: what it is (`meta`: id, kind, server, client, binding, group), how it ran
    (`result`), and what its report says. No report, a report of a run that could not run, or an error: ERROR."""
    entry = {**meta, "started": result.get("started"), "finished": result.get("finished"),
             "error": result.get("error"), "exit_code": result.get("exit_code"),
             "cases_left_out": result.get("cases_left_out") or [], "report": None, "html": None,
             "catalogue": None, "verdict": "ERROR", "must": {"met": 0, "selected": 0}, "failed": []}
    if report is not None:
        met, selected = must_count(report.get("requirements") or [])
        entry.update(report=f"cells/{meta['id']}/compatibility.json", html=f"cells/{meta['id']}/report.html",
                     catalogue=(report.get("catalogue") or {}).get("version"), must={"met": met, "selected": selected},
                     failed=sorted(r["id"] for r in report.get("requirements") or [] if r.get("status") in FAILED),
                     started=report.get("started") or entry["started"],
                     finished=report.get("finished") or entry["finished"])
        if not entry["error"]:
            entry["verdict"] = "ERROR" if report.get("could_not_run") else report.get("verdict", "ERROR")
        if report.get("could_not_run") and not entry["error"]:
            entry["error"] = str(report["could_not_run"])
    return entry


def apply_known(cells: list[dict[str, Any]], known: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each known failure with the cells it covers and, of those, the ones where it was seen this time (a
    requirement it names FAIL or ERROR; for a whole-cell entry, a verdict other than PASS). Each cell lists the
    known failures that cover it (by index). Every one is kept, seen or not: an exclusion nobody sees is lost."""
    out = []
    for cell in cells:
        cell["known"] = []
    for n, k in enumerate(known):
        covered, seen = [], []
        for cell in cells:
            if not fnmatch.fnmatchcase(cell["id"], k["cells"]):
                continue
            covered.append(cell["id"])
            if k.get("requirement"):
                hits = [r for r in cell["failed"] if fnmatch.fnmatchcase(r, k["requirement"])]
            else:
                hits = cell["failed"] or ([] if cell["verdict"] == "PASS" else [cell["verdict"]])
            if hits:
                seen.append(cell["id"])
            cell["known"].append({"index": n, "seen": bool(hits), "requirements": hits})
        out.append({**k, "covers": covered, "seen_in": seen})
    return out


def build_matrix(cells: list[dict[str, Any]], known: list[dict[str, Any]], source: str,
                 implementations: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    from .. import __version__
    from ..wallclock import now

    cells = sorted(cells, key=lambda c: (c["kind"] != "server", c["id"]))
    versions = sorted({c["catalogue"] for c in cells if c["catalogue"]})
    return {"format": FORMAT, "tool": {"name": "streamcert", "version": __version__}, "source": source,
            "generated": now(), "catalogue": {"versions": versions}, "implementations": implementations,
            "cells": cells, "known_failures": apply_known(cells, [_known(k) for k in known])}


def _known(k: dict[str, Any]) -> dict[str, Any]:
    return {key: k.get(key) for key in KNOWN_KEYS}


def write_matrix(out: Path, matrix: dict[str, Any]) -> None:
    from .dashboard import write_dashboard

    out.mkdir(parents=True, exist_ok=True)
    (out / MATRIX_FILE).write_text(json.dumps(matrix, indent=1, ensure_ascii=False) + "\n", "utf-8")
    write_dashboard(out, matrix)


def load_matrix(folder: Path) -> dict[str, Any]:
    """A matrix directory's matrix.json; ValueError saying why it is not one."""
    path = folder / MATRIX_FILE if folder.is_dir() else folder
    try:
        matrix = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise ValueError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    if not isinstance(matrix, dict) or matrix.get("format") != FORMAT or not isinstance(matrix.get("cells"), list):
        raise ValueError(f"{path}: not a matrix.json of format {FORMAT}")
    # A cell's id names its folder under cells/ (read, and replaced by merge), its server's or client's name the
    # badge written under badges/: each must be a plain file name.
    for cell in matrix["cells"]:
        cell = cell if isinstance(cell, dict) else {}
        named = [("cell id", cell.get("id"))] + [(f"{kind} name", f"{cell[kind]}.json") for kind in ("server", "client")
                                                 if cell.get(kind) is not None]
        try:
            for what, name in named:
                confined("cells", name, what=what)
        except UnsafeName as exc:
            raise ValueError(f"{path}: {exc}") from None
    return matrix


def merge(folders: list[Path], out: Path, allow_mixed: bool = False) -> dict[str, Any]:
    """One matrix from several directories: each cell's entry read again from its report; the same cell in two
    directories is taken from the one that finished later. Raises ValueError (nothing written) on a bad input or
    on cells of different catalogue versions without `allow_mixed`."""
    cells: dict[str, tuple[dict[str, Any], Path]] = {}
    known: list[dict[str, Any]] = []
    implementations: dict[str, dict[str, dict[str, Any]]] = {"servers": {}, "clients": {}}
    for folder in folders:
        matrix = load_matrix(folder)
        root = folder if folder.is_dir() else folder.parent
        for cell in matrix["cells"]:
            report = read_report(root / "cells" / cell["id"])
            meta = {key: cell.get(key) for key in ("id", "kind", "server", "client", "binding", "group")}
            entry = cell_entry(meta, cell, report)
            old = cells.get(cell["id"])
            if old is None or (entry["finished"] or "") >= (old[0]["finished"] or ""):
                cells[cell["id"]] = (entry, root)
        for k in matrix.get("known_failures") or []:
            k = _known(k)
            if k not in known:
                known.append(k)
        for kind in ("servers", "clients"):
            for impl in (matrix.get("implementations") or {}).get(kind) or []:
                implementations[kind].setdefault(impl["name"], impl)
    versions = sorted({e["catalogue"] for e, _ in cells.values() if e["catalogue"]})
    if len(versions) > 1 and not allow_mixed:
        by = {v: [i for i, (e, _) in cells.items() if e["catalogue"] == v] for v in versions}
        raise ValueError("cells judged by different catalogue versions: "
                         + "; ".join(f"{v}: {', '.join(ids)}" for v, ids in by.items())
                         + " (give --allow-mixed-catalogues to merge them anyway)")
    for cell_id, (_, root) in cells.items():
        source, target = root / "cells" / cell_id, out / "cells" / cell_id
        if source.is_dir() and source.resolve() != target.resolve():
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(source, target)
    matrix = build_matrix([e for e, _ in cells.values()], known, "merge of " + ", ".join(map(str, folders)),
                          {kind: list(v.values()) for kind, v in implementations.items()})
    write_matrix(out, matrix)
    return matrix
