"""`streamcert matrix diff OLD NEW`: the cells that changed between two matrices, and why: the verdict each had,
and the requirements whose outcome flipped, read from the two cells' compatibility.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .merge import load_matrix, read_report


def _statuses(root: Path, cell_id: str) -> dict[str, str]:
    report = read_report(root / "cells" / cell_id) or {}
    return {r["id"]: r.get("status", "") for r in report.get("requirements") or [] if isinstance(r, dict) and "id" in r}


def _root(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def diff_matrices(old_path: Path, new_path: Path) -> list[dict[str, Any]]:
    """One entry per cell that was added, removed, or whose verdict or any requirement's outcome changed."""
    old, new = load_matrix(old_path), load_matrix(new_path)
    before = {c["id"]: c for c in old["cells"]}
    after = {c["id"]: c for c in new["cells"]}
    changes = []
    for cell_id in sorted(before.keys() | after.keys()):
        a, b = before.get(cell_id), after.get(cell_id)
        if a is None or b is None:
            changes.append({"cell": cell_id, "change": "added" if a is None else "removed",
                            "old": a and a["verdict"], "new": b and b["verdict"], "flipped": []})
            continue
        sa, sb = _statuses(_root(old_path), cell_id), _statuses(_root(new_path), cell_id)
        flipped = [{"id": r, "old": sa.get(r), "new": sb.get(r)} for r in sorted(sa.keys() | sb.keys())
                   if sa.get(r) != sb.get(r)]
        if a["verdict"] != b["verdict"] or flipped:
            changes.append({"cell": cell_id, "change": "changed", "old": a["verdict"], "new": b["verdict"],
                            "flipped": flipped, "error": b.get("error")})
    return changes


def diff_lines(changes: list[dict[str, Any]]) -> list[str]:
    if not changes:
        return ["no cell changed"]
    lines = []
    for c in changes:
        if c["change"] != "changed":
            lines.append(f"{c['cell']}: {c['change']} ({c['old'] or c['new']})")
            continue
        lines.append(f"{c['cell']}: {c['old']} → {c['new']}" + (f" ({c['error']})" if c.get("error") else ""))
        lines += [f"  {f['id']}: {f['old'] or 'absent'} → {f['new'] or 'absent'}" for f in c["flipped"]]
    return lines
