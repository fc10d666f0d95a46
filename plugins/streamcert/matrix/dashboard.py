"""The matrix's dashboard (docs/matrix.md): index.html (one self-contained page: servers × bindings and clients ×
servers grids, each cell coloured by verdict with its MUST met out of selected and a link to its report, the known
failures with their reasons, the catalogue versions, when each cell ran), summary.md for a CI step summary, and
badges/<implementation>.json in the shields.io endpoint format."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from ..report.badge import COLORS, SCHEMA_VERSION
from ..safe_names import confined

ORDER = ("ERROR", "FAIL", "INCOMPLETE", "PASS")  # the worst first: an implementation shows its worst cell
COLORS_HTML = {"PASS": "#2e7d32", "FAIL": "#c62828", "INCOMPLETE": "#ef6c00", "ERROR": "#6a1b9a"}

CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;padding:.35em .6em;text-align:left}
td.cell{color:#fff;font-weight:600;min-width:9em}td.cell a{color:#fff}td.none{color:#999;background:#f4f4f4}
.known{display:block;font-weight:400;font-size:12px}.when{display:block;font-weight:400;font-size:11px;opacity:.85}
""" + "".join(f"td.v-{v}{{background:{c}}}" for v, c in COLORS_HTML.items())


def worst(verdicts: list[str]) -> str:
    return min(verdicts, key=lambda v: ORDER.index(v) if v in ORDER else 0) if verdicts else "ERROR"


def _by_id(matrix: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["id"]: c for c in matrix["cells"]}


def implementation_cells(matrix: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each implementation's cells: a server's its own server cells, a client's its client cells."""
    out: dict[str, list[dict[str, Any]]] = {}
    for c in matrix["cells"]:
        out.setdefault(c["server"] if c["kind"] == "server" else c["client"], []).append(c)
    return out


def badge(name: str, cells: list[dict[str, Any]]) -> dict[str, Any]:
    status = worst([c["verdict"] for c in cells])
    met = sum(c["must"]["met"] for c in cells)
    selected = sum(c["must"]["selected"] for c in cells)
    return {"schemaVersion": SCHEMA_VERSION, "label": f"streamcert {name}",
            "message": f"{status} · {met}/{selected} MUST · {len(cells)} cell{'s' * (len(cells) != 1)}",
            "color": COLORS.get(status, "lightgrey")}


def _cell_td(cell: dict[str, Any] | None, known: list[dict[str, Any]]) -> str:
    if cell is None:
        return '<td class="none">—</td>'
    text = f"{cell['verdict']} {cell['must']['met']}/{cell['must']['selected']} MUST"
    body = f'<a href="{escape(cell["html"])}">{escape(text)}</a>' if cell.get("html") else escape(text)
    if cell.get("error"):
        body += f'<span class="known">{escape(cell["error"][:300])}</span>'
    for k in cell.get("known") or []:
        entry = known[k["index"]]
        body += (f'<span class="known">known failure{" (seen)" if k["seen"] else " (not seen)"}: '
                 f'{escape(entry["reason"])}</span>')
    body += f'<span class="when">{escape(cell.get("finished") or "")}</span>'
    return (f'<td class="cell v-{escape(cell["verdict"])}" data-cell="{escape(cell["id"])}" '
            f'data-verdict="{escape(cell["verdict"])}">{body}</td>')


def _grid(title: str, rows: list[str], cols: list[str], pick, known: list[dict[str, Any]], cls: str) -> str:
    if not rows or not cols:
        return ""
    head = "".join(f"<th>{escape(c)}</th>" for c in cols)
    body = "".join(f"<tr><th>{escape(r)}</th>{''.join(_cell_td(pick(r, c), known) for c in cols)}</tr>"
                   for r in rows)
    return (f'<h2>{escape(title)}</h2><table class="{cls}"><thead><tr><th></th>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def _axes(matrix: dict[str, Any]) -> tuple[list[str], list[str], list[str]]:
    servers = sorted({c["server"] for c in matrix["cells"]})
    bindings = sorted({c["binding"] for c in matrix["cells"] if c["kind"] == "server"})
    clients = sorted({c["client"] for c in matrix["cells"] if c["kind"] == "client"})
    return servers, bindings, clients


def render_html(matrix: dict[str, Any]) -> str:
    cells, known = _by_id(matrix), matrix.get("known_failures") or []
    servers, bindings, clients = _axes(matrix)
    grids = (_grid("Servers × bindings", servers, bindings, lambda s, b: cells.get(f"{s}@{b}"), known, "servers")
             + _grid("Servers × clients (the client against the server's recordings, replayed)", servers, clients,
                     lambda s, c: cells.get(f"{c}~{s}"), known, "clients"))
    rows = "".join(
        f'<tr class="known-failure"><td><code>{escape(k["cells"])}</code></td>'
        f'<td><code>{escape(k.get("requirement") or "(the whole cell)")}</code></td><td>{escape(k["reason"])}'
        + (f' (<a href="{escape(k["link"])}">link</a>)' if k.get("link") else "")
        + f'</td><td>{escape(", ".join(k.get("seen_in") or []) or "not seen in this run")}</td></tr>'
        for k in known)
    known_html = (f"<h2>Known failures ({len(known)})</h2><table class=\"known-failures\"><thead><tr><th>cells</th>"
                  f"<th>requirement</th><th>reason</th><th>seen in</th></tr></thead><tbody>{rows}</tbody></table>"
                  if known else "<h2>Known failures (0)</h2><p>none declared</p>")
    badges = "".join(f"<li><code>badges/{escape(n)}.json</code>: {escape(badge(n, cs)['message'])}</li>"
                     for n, cs in sorted(implementation_cells(matrix).items()))
    versions = ", ".join(matrix["catalogue"]["versions"]) or "none (no cell wrote a report)"
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>streamcert matrix</title>'
            f"<style>{CSS}</style></head><body><h1>streamcert interoperability matrix</h1>"
            f'<p class="meta">catalogue {escape(versions)} · generated {escape(matrix.get("generated") or "")} · '
            f'{len(cells)} cells · {escape(matrix.get("source") or "")}</p>'
            f"{grids}{known_html}<h2>Badges</h2><ul>{badges}</ul></body></html>\n")


def render_markdown(matrix: dict[str, Any]) -> str:
    cells, known = _by_id(matrix), matrix.get("known_failures") or []
    servers, bindings, clients = _axes(matrix)

    def show(cell: dict[str, Any] | None) -> str:
        if cell is None:
            return "—"
        mark = " (known)" if any(k["seen"] for k in cell.get("known") or []) else ""
        return f"{cell['verdict']} {cell['must']['met']}/{cell['must']['selected']}{mark}"

    lines = ["## streamcert interoperability matrix", "",
             f"catalogue {', '.join(matrix['catalogue']['versions']) or 'none'} · {len(cells)} cells", ""]
    for title, cols, pick in (("server \\ binding", bindings, lambda s, b: cells.get(f"{s}@{b}")),
                              ("server \\ client", clients, lambda s, c: cells.get(f"{c}~{s}"))):
        if cols:
            lines += [f"| {title} | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
            lines += [f"| {s} | " + " | ".join(show(pick(s, c)) for c in cols) + " |" for s in servers]
            lines.append("")
    lines += [f"### Known failures ({len(known)})", ""]
    lines += [f"- `{k['cells']}` {('`' + k['requirement'] + '`') if k.get('requirement') else '(whole cell)'}: "
              f"{k['reason']}" + (f" ([link]({k['link']}))" if k.get("link") else "")
              + f" — seen in: {', '.join(k.get('seen_in') or []) or 'none this run'}" for k in known] or ["none"]
    errors = [c for c in matrix["cells"] if c.get("error")]
    if errors:
        lines += ["", "### Cells in ERROR", ""] + [f"- {c['id']}: {c['error'][:300]}" for c in errors]
    return "\n".join(lines) + "\n"


def write_dashboard(out: Path, matrix: dict[str, Any]) -> None:
    (out / "index.html").write_text(render_html(matrix), "utf-8")
    (out / "summary.md").write_text(render_markdown(matrix), "utf-8")
    folder = out / "badges"
    folder.mkdir(exist_ok=True)
    for name, cells in implementation_cells(matrix).items():
        confined(folder, f"{name}.json", what="badge name").write_text(json.dumps(badge(name, cells)) + "\n", "utf-8")
