"""The tables of report.html: profiles × outcomes, outcomes × bindings, levels × outcomes, the filters, and every
requirement with its status over each certified binding."""

from __future__ import annotations

from typing import Any

from ..common import (
    OUTCOME_ORDER,
    binding_counts,
    binding_title,
    by_run_profile,
    certified_bindings,
    first_line,
    run_profile,
)
from .requirements import binding_attrs
from .text import badge, esc, html_source

# -- the page's parts -------------------------------------------------------------------------------------

def html_matrix(report: dict[str, Any]) -> str:
    """Profiles (as the catalogue names them, in its order) × outcomes, with counts; a count filters to its cell, a
    profile's name to its row, an outcome's name to its column."""
    counts = by_run_profile(report)
    head = ("<tr><th>profile</th>" + "".join(
        f'<th><button type="button" class="col" data-set-outcome="{esc(o)}">{esc(o)}</button></th>'
        for o in OUTCOME_ORDER) + "<th>total</th></tr>")
    body = []
    for family, row in counts.items():
        cells = "".join(
            f'<td class="n"><button type="button" class="cell s-{esc(o)}" data-set-outcome="{esc(o)}" '
            f'data-set-profile="{esc(family)}">{row[o]}</button></td>' if row[o] else '<td class="n zero">·</td>'
            for o in OUTCOME_ORDER)
        body.append(f'<tr data-row-profile="{esc(family)}"><th>{esc(family)}</th>{cells}'
                    f'<td class="n total">{sum(row.values())}</td></tr>')
    return f'<table class="matrix">{head}{"".join(body)}</table>'


def html_binding_table(report: dict[str, Any]) -> str:
    """Outcomes × certified bindings (the outcomes that occur), a count filtering to its outcome over that
    binding; which bindings were not certified and why; which the card declares."""
    given = report.get("bindings") or {}
    certified = certified_bindings(report)
    counts = binding_counts(report)
    parts = []
    if certified:
        shown = [o for o in OUTCOME_ORDER if any(counts[b][o] for b in certified)]
        head = "<tr><th>outcome</th>" + "".join(
            f'<th><button type="button" class="col" data-set-binding="{esc(b)}">{esc(binding_title(b))}</button></th>'
            for b in certified) + "</tr>"
        body = "".join(
            f"<tr><th>{badge(o)}</th>" + "".join(
                f'<td class="n"><button type="button" class="cell s-{esc(o)}" data-set-outcome="{esc(o)}" '
                f'data-set-binding="{esc(b)}">{counts[b][o]}</button></td>' if counts[b][o]
                else '<td class="n zero">·</td>' for b in certified) + "</tr>" for o in shown)
        parts.append(f'<table class="matrix bindings">{head}{body}</table>')
    for binding, why in (given.get("skipped") or {}).items():
        parts.append(f'<p class="meta">not certified: <strong>{esc(binding_title(binding))}</strong> — {esc(why)}</p>')
    if given.get("declared") is not None:
        declared = ", ".join(binding_title(b) for b in given["declared"]) or "none"
        parts.append(f'<p class="meta">declared by the agent card: {esc(declared)}</p>')
    return "".join(parts)


def html_level_table(report: dict[str, Any]) -> str:
    """Levels × outcomes, only the outcomes that occur (the profile matrix shows every column)."""
    rows = []
    for level, counts in report["summary"].items():
        shown = " ".join(f'{badge(o)}&nbsp;{counts[o]}' for o in OUTCOME_ORDER if counts.get(o))
        rows.append(f'<tr><th>{esc(level)}</th><td>{shown or "<span class=zero>none</span>"}</td></tr>')
    return f'<table class="levels">{"".join(rows)}</table>'


def html_filters(report: dict[str, Any]) -> str:
    statuses: dict[str, int] = {}
    for entry in report["requirements"]:
        statuses[entry["status"]] = statuses.get(entry["status"], 0) + 1
    outcomes = "".join(f'<button type="button" data-set-outcome="{esc(o)}">{badge(o)} {statuses[o]}</button>'
                       for o in OUTCOME_ORDER if statuses.get(o))
    profiles = "".join(f'<button type="button" data-set-profile="{esc(p)}">{esc(p)}</button>'
                       for p in by_run_profile(report))
    bindings = "".join(f'<button type="button" data-set-binding="{esc(b)}">{esc(binding_title(b))}</button>'
                       for b in certified_bindings(report))
    return ('<div class="filters" id="filters"><div><span class="what">outcome</span>'
            f'<button type="button" data-set-outcome="">all</button>{outcomes}</div>'
            '<div><span class="what">profile</span>'
            f'<button type="button" data-set-profile="">all</button>{profiles}</div>'
            + ('<div><span class="what">binding</span>'
               f'<button type="button" data-set-binding="">all</button>{bindings}</div>' if bindings else "")
            + '<div class="showing" id="filter-state" aria-live="polite"></div></div>')


def binding_cell(entry: dict[str, Any], binding: str) -> str:
    """A requirement's status over one certified binding, its message as the tooltip; "—": it does not run over
    that binding."""
    status = (entry.get("bindings") or {}).get(binding)
    if status is None:
        return '<td class="b"><span class="zero" title="does not apply">—</span></td>'
    said = (entry.get("binding_messages") or {}).get(binding)
    tip = f' title="{esc(first_line(said))}"' if said else ""
    return f'<td class="b" data-binding="{esc(binding)}"{tip}>{badge(status)}</td>'


def html_requirement_rows(report: dict[str, Any], opened: set[str]) -> str:
    """Every requirement: its own status (the worst over the bindings), then its status over each certified
    binding side by side."""
    certified = certified_bindings(report)
    rows = []
    for e in report["requirements"]:
        ident = (f'<button type="button" class="link" data-open="req-{esc(e["id"])}">{esc(e["id"])}</button>'
                 if e["id"] in opened else esc(e["id"]))
        rows.append(f'<tr data-id="{esc(e["id"])}" data-status="{esc(e["status"])}" data-profile="{esc(run_profile(e))}"'
                    f'{binding_attrs(e)}><td class="id">{ident}</td><td>{esc(e["level"])}</td><td>{badge(e["status"])}'
                    f'</td>{"".join(binding_cell(e, b) for b in certified)}'
                    f'<td>{esc(e["title"])}<div class="source">{html_source(e["source"])}</div></td>'
                    f'<td class="msg">{esc(first_line(e["message"]))}</td></tr>')
    columns = "".join(f'<th class="b">{esc(binding_title(b))}</th>' for b in certified)
    return ('<table class="all"><thead><tr><th>id</th><th>level</th><th>status</th>' + columns
            + '<th>requirement · source</th><th>message</th></tr></thead><tbody>' + "".join(rows)
            + f'<tr id="no-match" hidden><td colspan="{5 + len(certified)}">No requirement matches the filter.</td>'
            "</tr></tbody></table>")
