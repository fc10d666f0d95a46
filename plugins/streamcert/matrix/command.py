"""`streamcert matrix plan|run|merge|diff` (docs/matrix.md): the subcommands' arguments and what each does."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..running.exit_codes import EXIT_FAIL, EXIT_PASS, EXIT_USAGE


def add_parser(sub: argparse._SubParsersAction) -> None:
    matrix = sub.add_parser("matrix", help="the interoperability matrix: servers × bindings, clients × servers")
    verbs = matrix.add_subparsers(dest="verb", required=True, metavar="{plan,run,merge,diff}")
    plan = verbs.add_parser("plan", help="check a matrix file and print its cells")
    plan.add_argument("file", metavar="FILE")
    plan.add_argument("--json", action="store_true",
                      help="print {\"include\": [{\"group\", \"cells\"}, …]} for a GitHub Actions strategy.matrix")
    run = verbs.add_parser("run", help="run a matrix file's cells in parallel processes")
    run.add_argument("file", metavar="FILE")
    run.add_argument("--out", required=True, metavar="DIR", help="where matrix.json, the dashboard and cells/ go")
    run.add_argument("--jobs", type=_jobs, default=os.cpu_count() or 1, metavar="N",
                     help="cells at once (default: the number of cores)")
    run.add_argument("--only", action="append", default=[], metavar="CELL",
                     help="run only this cell or group (repeatable; a client cell brings its server's cell)")
    merge = verbs.add_parser("merge", help="merge matrix directories run elsewhere into one matrix and dashboard")
    merge.add_argument("dirs", nargs="+", metavar="DIR")
    merge.add_argument("--out", required=True, metavar="DIR")
    merge.add_argument("--allow-mixed-catalogues", action="store_true",
                       help="merge cells judged by different catalogue versions")
    diff = verbs.add_parser("diff", help="the cells that changed between two matrices, and the requirements that flipped")
    diff.add_argument("old", metavar="OLD")
    diff.add_argument("new", metavar="NEW")
    diff.add_argument("--json", action="store_true", help="print the changes as one JSON document")


def _jobs(value: str) -> int:
    try:
        jobs = int(value)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of jobs (1 or more)")
    return jobs


def _say(line: str) -> None:
    print(f"streamcert matrix: {line}", file=sys.stderr, flush=True)


def _load(path: str):
    from .file import MatrixError, load
    from .plan import checked

    try:
        return checked(load(path))
    except MatrixError as exc:
        for line in exc.lines:
            print(f"streamcert matrix: {line}", file=sys.stderr)
        return None


def main(args: argparse.Namespace) -> int:
    return {"plan": cmd_plan, "run": cmd_run, "merge": cmd_merge, "diff": cmd_diff}[args.verb](args)


def cmd_plan(args: argparse.Namespace) -> int:
    from .plan import cells, groups, lines

    matrix = _load(args.file)
    if matrix is None:
        return EXIT_USAGE
    print(json.dumps({"include": groups(cells(matrix))}) if args.json else "\n".join(lines(matrix)))
    return EXIT_PASS


def unexcused(matrix: dict) -> list[str]:
    """The cells FAIL or ERROR beyond the known failures that cover them."""
    known = matrix.get("known_failures") or []
    out = []
    for cell in matrix["cells"]:
        if cell["verdict"] not in ("FAIL", "ERROR"):
            continue
        marks = [known[k["index"]] for k in cell.get("known") or []]
        if any(not k.get("requirement") for k in marks):
            continue
        excused = {r for k in cell.get("known") or [] for r in k["requirements"]}
        if not cell["failed"] or set(cell["failed"]) - excused:
            out.append(cell["id"])
    return out


def cmd_run(args: argparse.Namespace) -> int:
    from .merge import build_matrix, cell_entry, read_report, write_matrix
    from .plan import cells, select
    from .run import cell_dir, run_cells

    matrix = _load(args.file)
    if matrix is None:
        return EXIT_USAGE
    try:
        chosen = select(cells(matrix), args.only)
    except ValueError as exc:
        _say(str(exc))
        return EXIT_USAGE
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _say(f"cannot create {out} ({exc.strerror or exc})")
        return EXIT_USAGE
    for n, k in enumerate(matrix.known_failures):  # every one, on every run
        _say(f"known failure [{n}] {k.cells}{' ' + k.requirement if k.requirement else ''}: {k.reason}"
             + (f" ({k.link})" if k.link else ""))
    _say(f"{len(chosen)} cell(s), {args.jobs} at once, into {out}")
    results = run_cells(matrix, chosen, out, args.jobs, _say)
    entries = [cell_entry({"id": c.id, "kind": c.kind, "server": c.server, "client": c.client,
                           "binding": c.binding, "group": c.group}, results[c.id], read_report(cell_dir(out, c.id)))
               for c in chosen]
    implementations = {
        "servers": [{"name": s.name, "url": s.url, "command": s.command, "profiles": list(s.profiles),
                     "bindings": list(s.bindings)} for s in matrix.servers],
        "clients": [{"name": c.name, "command": c.command} for c in matrix.clients]}
    built = build_matrix(entries, [k.json() for k in matrix.known_failures], matrix.path, implementations)
    write_matrix(out, built)
    from .dashboard import render_markdown

    print(render_markdown(built), end="")
    bad = unexcused(built)
    _say(f"dashboard: {out / 'index.html'}" + (f"; failing beyond the known failures: {', '.join(bad)}" if bad else ""))
    return EXIT_FAIL if bad else EXIT_PASS


def cmd_merge(args: argparse.Namespace) -> int:
    from .merge import merge

    try:
        built = merge([Path(d) for d in args.dirs], Path(args.out), args.allow_mixed_catalogues)
    except (OSError, ValueError) as exc:
        _say(str(exc))
        return EXIT_USAGE
    _say(f"{len(built['cells'])} cell(s) merged into {args.out}/matrix.json; dashboard {args.out}/index.html")
    return EXIT_PASS


def cmd_diff(args: argparse.Namespace) -> int:
    from .diff import diff_lines, diff_matrices

    try:
        changes = diff_matrices(Path(args.old), Path(args.new))
    except ValueError as exc:
        _say(str(exc))
        return EXIT_USAGE
    print(json.dumps(changes, indent=1, ensure_ascii=False) if args.json else "\n".join(diff_lines(changes)))
    return EXIT_FAIL if changes else EXIT_PASS
