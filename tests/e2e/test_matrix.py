"""The interoperability matrix (docs/matrix.md, plugins/streamcert/matrix/): the file refused in one line per
problem before anything starts, the plan and its CI groups, merge and diff on synthetic cells, the known failures,
a server command that never prints its URL, one small live run (two stand-in servers, one profile, stream limit
5 s, two jobs) and the dashboard in the real browser (test_report_html's fixture)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from processes import ended_within
from test_report_html import VIEWPORT, browser  # noqa: F401  (the one browser launcher; pytest finds the fixture)

from streamcert.cli import main
from streamcert.matrix import file as matrix_file
from streamcert.matrix.command import unexcused
from streamcert.matrix.dashboard import badge, render_markdown
from streamcert.matrix.merge import build_matrix, load_matrix, write_matrix
from streamcert.matrix.plan import cells, select
from streamcert.matrix.run import run_server_cell

GOOD = """
servers:
  - name: alpha
    url: http://127.0.0.1:1
    bindings: [jsonrpc, grpc]
  - name: beta
    command: streamcert serve --port 0
clients:
  - name: cli
    command: streamcert client
known_failures:
  - cells: beta@*
    requirement: A2A-STREAM-009
    reason: beta closes early
    link: https://example.invalid/issue/1
"""


def write(tmp_path: Path, text: str, name: str = "matrix.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), "utf-8")
    return path


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


# -- the file ---------------------------------------------------------------------------------------------------

def test_a_good_file_plans_server_and_client_cells(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "matrix", "plan", str(write(tmp_path, GOOD)), "--json")
    assert code == 0
    assert json.loads(out) == {"include": [{"group": "alpha", "cells": "alpha@jsonrpc alpha@grpc cli~alpha"},
                                           {"group": "beta", "cells": "beta@jsonrpc cli~beta"}]}


@pytest.mark.parametrize("text, expected", [
    ("servers:\n  - name: a\n    url: http://127.0.0.1:1\n    colour: red\n",
     ["servers[0] (a): unknown key(s) 'colour'"]),
    ("servers:\n  - name: a\n", ["servers[0] (a): give exactly one of url (a running server) or command"]),
    ("servers:\n  - name: a\n    url: http://127.0.0.1:1\n    command: x\n", ["servers[0] (a): give exactly one"]),
    ("servers:\n  - {name: a, url: 'http://127.0.0.1:1'}\n  - {name: a, command: x}\n",
     ["server 'a': the name is used twice"]),
    ("servers:\n  - {name: a, url: 'http://127.0.0.1:1'}\nclients:\n  - {name: a, command: x}\n",
     ["client 'a': the name is used twice"]),
    ("servers:\n  - {name: a, url: 'http://127.0.0.1:1'}\nknown_failures:\n  - {cells: 'b@*', reason: r}\n",
     ["known_failures[0]: cells 'b@*' matches no cell of the matrix (a@jsonrpc)"]),
    ("servers:\n  - {name: a, url: 'http://127.0.0.1:1'}\nknown_failures:\n  - {cells: 'a@*'}\n",
     ["known_failures[0]: 'reason' is a required property"]),
    ("servers:\n  - {name: a, url: 'http://127.0.0.1:1'}\nextra: 1\nalso: 2\n",
     ["the file: unknown key(s) 'also', 'extra'"]),
    ("servers: [\n", ["not YAML"]),
])
def test_a_bad_file_is_refused_one_line_each_before_anything_starts(tmp_path, capsys, text, expected):
    path = write(tmp_path, text)
    out_dir = tmp_path / "out"
    code, out, err = run_cli(capsys, "matrix", "run", str(path), "--out", str(out_dir))
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == len(expected), err
    for line, want in zip(lines, expected):
        assert line.startswith(f"streamcert matrix: {path}: ") and want in line, line
    assert not out_dir.exists()  # refused before anything started


def test_every_problem_is_its_own_line(tmp_path):
    path = write(tmp_path, "servers:\n  - {name: a}\n  - {name: a, url: 'http://127.0.0.1:1'}\n")
    with pytest.raises(matrix_file.MatrixError) as caught:
        matrix_file.load(path)
    assert [line.split(": ", 1)[1][:19] for line in caught.value.lines] == ["servers[0] (a): giv", "server 'a': the nam"]


def test_only_selects_a_cell_or_a_group_and_brings_the_recording_a_client_replays(tmp_path, capsys):
    matrix = matrix_file.load(write(tmp_path, GOOD))
    assert [c.id for c in select(cells(matrix), ["cli~beta"])] == ["beta@jsonrpc", "cli~beta"]
    assert [c.id for c in select(cells(matrix), ["alpha"])] == ["alpha@jsonrpc", "alpha@grpc", "cli~alpha"]
    code, _, err = run_cli(capsys, "matrix", "run", str(write(tmp_path, GOOD)), "--out", str(tmp_path / "o"),
                           "--only", "gamma")
    assert code == 2 and "--only 'gamma': no cell or group of that name" in err


# -- merge, diff, known failures (synthetic cells) ----------------------------------------------------------------

def report(verdict: str, statuses: dict[str, str], version: str = "2026.12.1", finished: str = "2026-12-01T10:00:00.000Z"):
    return {"verdict": verdict, "catalogue": {"version": version}, "started": finished, "finished": finished,
            "requirements": [{"id": r, "level": "MUST", "status": s} for r, s in statuses.items()]}


def matrix_dir(root: Path, reports: dict[str, dict], known: list[dict] | None = None) -> Path:
    """A matrix directory as `matrix run` leaves it, from reports by cell id (None: the cell wrote none)."""
    from streamcert.matrix.merge import cell_entry

    entries = []
    for cell_id, rep in reports.items():
        kind = "client" if "~" in cell_id else "server"
        server = cell_id.split("~")[-1].split("@")[0]
        meta = {"id": cell_id, "kind": kind, "server": server, "client": cell_id.split("~")[0] if kind == "client"
                else None, "binding": "jsonrpc" if kind == "client" else cell_id.split("@")[1], "group": server}
        if rep is not None:
            folder = root / "cells" / cell_id
            folder.mkdir(parents=True)
            (folder / "compatibility.json").write_text(json.dumps(rep), "utf-8")
            (folder / "report.html").write_text(f"<!doctype html><title>{cell_id}</title><h1>report of {cell_id}</h1>")
        result = {"started": "2026-12-01T09:59:00.000Z", "finished": "2026-12-01T10:00:00.000Z",
                  "error": None if rep is not None else "the cell was cut at its limit of 300 s"}
        entries.append(cell_entry(meta, result, rep))
    write_matrix(root, build_matrix(entries, known or [], "test", {"servers": [], "clients": []}))
    return root


def test_merge_takes_cells_from_several_runners_and_refuses_mixed_catalogues(tmp_path, capsys):
    a = matrix_dir(tmp_path / "a", {"s1@jsonrpc": report("PASS", {"X-1": "PASS", "X-2": "PASS"})})
    b = matrix_dir(tmp_path / "b", {"s2@jsonrpc": report("FAIL", {"X-1": "PASS", "X-2": "FAIL"}),
                                    "c~s2": None})
    code, _, err = run_cli(capsys, "matrix", "merge", str(a), str(b), "--out", str(tmp_path / "m"))
    assert code == 0, err
    merged = load_matrix(tmp_path / "m")
    got = {c["id"]: (c["verdict"], c["must"], c["failed"]) for c in merged["cells"]}
    assert got == {"s1@jsonrpc": ("PASS", {"met": 2, "selected": 2}, []),
                   "s2@jsonrpc": ("FAIL", {"met": 1, "selected": 2}, ["X-2"]),
                   "c~s2": ("ERROR", {"met": 0, "selected": 0}, [])}
    assert (tmp_path / "m" / "cells" / "s2@jsonrpc" / "compatibility.json").is_file()
    assert json.loads((tmp_path / "m" / "badges" / "s2.json").read_text()) == {
        "schemaVersion": 1, "label": "streamcert s2", "message": "FAIL · 1/2 MUST · 1 cell", "color": "red"}

    old = matrix_dir(tmp_path / "old", {"s3@jsonrpc": report("PASS", {"X-1": "PASS"}, version="2026.11.1")})
    code, _, err = run_cli(capsys, "matrix", "merge", str(a), str(old), "--out", str(tmp_path / "mixed"))
    assert code == 2 and "different catalogue versions: 2026.11.1: s3@jsonrpc; 2026.12.1: s1@jsonrpc" in err
    assert not (tmp_path / "mixed").exists()
    code, _, _ = run_cli(capsys, "matrix", "merge", str(a), str(old), "--out", str(tmp_path / "mixed"),
                         "--allow-mixed-catalogues")
    assert code == 0 and load_matrix(tmp_path / "mixed")["catalogue"]["versions"] == ["2026.11.1", "2026.12.1"]


def test_merge_keeps_the_later_run_of_a_cell(tmp_path, capsys):
    early = matrix_dir(tmp_path / "e", {"s@jsonrpc": report("FAIL", {"X-1": "FAIL"}, finished="2026-12-01T08:00:00.000Z")})
    late = matrix_dir(tmp_path / "l", {"s@jsonrpc": report("PASS", {"X-1": "PASS"}, finished="2026-12-01T09:00:00.000Z")})
    for order in ((early, late), (late, early)):
        assert run_cli(capsys, "matrix", "merge", *map(str, order), "--out", str(tmp_path / "m"))[0] == 0
        assert [c["verdict"] for c in load_matrix(tmp_path / "m")["cells"]] == ["PASS"]


def test_diff_names_the_cells_that_changed_and_the_requirements_that_flipped(tmp_path, capsys):
    old = matrix_dir(tmp_path / "old", {"s@jsonrpc": report("PASS", {"X-1": "PASS", "X-2": "PASS"}),
                                        "t@jsonrpc": report("PASS", {"X-1": "PASS"}),
                                        "gone@jsonrpc": report("PASS", {"X-1": "PASS"})})
    new = matrix_dir(tmp_path / "new", {"s@jsonrpc": report("FAIL", {"X-1": "PASS", "X-2": "FAIL"}),
                                        "t@jsonrpc": report("PASS", {"X-1": "PASS"}),
                                        "c~t": report("PASS", {"C-1": "PASS"})})
    code, out, _ = run_cli(capsys, "matrix", "diff", str(old), str(new))
    assert code == 1
    assert out.splitlines() == ["c~t: added (PASS)", "gone@jsonrpc: removed (PASS)", "s@jsonrpc: PASS → FAIL",
                                "  X-2: PASS → FAIL"]
    code, out, _ = run_cli(capsys, "matrix", "diff", str(old), str(old / "matrix.json"), "--json")
    assert (code, json.loads(out)) == (0, [])
    code, _, err = run_cli(capsys, "matrix", "diff", str(old), str(tmp_path / "nowhere"))
    assert code == 2 and "cannot read it" in err


def test_known_failures_are_matched_shown_and_excuse_only_what_they_name(tmp_path):
    known = [{"cells": "s@*", "requirement": "X-2", "reason": "s breaks X-2", "link": None},
             {"cells": "t@*", "requirement": None, "reason": "t is broken", "link": "https://example.invalid/t"},
             {"cells": "u@*", "requirement": "X-9", "reason": "fixed long ago", "link": None}]
    root = matrix_dir(tmp_path / "k", {"s@jsonrpc": report("FAIL", {"X-1": "PASS", "X-2": "FAIL"}),
                                       "t@jsonrpc": report("FAIL", {"X-1": "FAIL"}),
                                       "u@jsonrpc": report("FAIL", {"X-1": "FAIL", "X-9": "PASS"})}, known)
    matrix = load_matrix(root)
    assert [(k["covers"], k["seen_in"]) for k in matrix["known_failures"]] == [
        (["s@jsonrpc"], ["s@jsonrpc"]), (["t@jsonrpc"], ["t@jsonrpc"]), (["u@jsonrpc"], [])]
    assert unexcused(matrix) == ["u@jsonrpc"]  # X-1 fails there and no known failure names it
    summary = render_markdown(matrix)
    assert "- `u@*` `X-9`: fixed long ago — seen in: none this run" in summary  # shown, seen or not
    assert "| s | FAIL 1/2 (known) |" in summary


def test_a_badge_shows_the_worst_cell():
    cells_ = [{"verdict": "PASS", "must": {"met": 5, "selected": 5}},
              {"verdict": "ERROR", "must": {"met": 0, "selected": 0}}]
    assert badge("x", cells_) == {"schemaVersion": 1, "label": "streamcert x", "message": "ERROR · 5/5 MUST · 2 cells",
                                  "color": "lightgrey"}


# -- running cells ------------------------------------------------------------------------------------------------

def test_a_server_command_that_never_prints_its_url_is_that_cells_error(tmp_path):
    script = tmp_path / "silent.py"
    script.write_text("import sys, time\nprint('binding the port failed: EADDRINUSE', file=sys.stderr, flush=True)\n"
                      "open(sys.argv[1], 'w').write(str(__import__('os').getpid()))\ntime.sleep(60)\n")
    pid_file = tmp_path / "pid"
    matrix = matrix_file.parse({"servers": [{"name": "mute", "command": f"{sys.executable} {script} {pid_file}"}],
                                "defaults": {"start_limit": 6}})  # room for Python to start on a loaded machine
    t0 = time.monotonic()
    result = run_server_cell(matrix, cells(matrix)[0], tmp_path / "out")
    assert time.monotonic() - t0 < 20
    assert result["error"].startswith("the server command printed no URL within 6 s; its stderr ends: binding the "
                                      "port failed: EADDRINUSE")
    # stopped by its process group
    assert ended_within(int(pid_file.read_text()), 10.0), "the server command outlived its cell"




def test_a_server_that_never_answers_is_that_cells_error_with_the_reason(tmp_path, capsys):
    import socket

    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    path = write(tmp_path, f"servers:\n  - {{name: gone, url: 'http://127.0.0.1:{port}'}}\n")
    code, _, _ = run_cli(capsys, "matrix", "run", str(path), "--out", str(tmp_path / "out"), "--jobs", "1")
    (cell,) = load_matrix(tmp_path / "out")["cells"]
    assert (code, cell["verdict"], cell["exit_code"]) == (1, "ERROR", 3)
    assert f"127.0.0.1:{port}" in cell["error"]


def test_a_small_live_matrix_run(tmp_path, capsys):
    """Two stand-in servers (the reference, and a fault variant whose stream closes early), one profile, a 5 s
    stream limit, two jobs: each cell its own server and report, the fault's cell FAIL on the requirement it
    breaks, excused by the known failure that names it; the reference's cell never FAIL."""
    path = write(tmp_path, """
        defaults: {profiles: [a2a], stream_limit: 5, start_limit: 30}
        servers:
          - {name: reference, command: streamcert serve --port 0}
          - {name: early, command: streamcert serve --port 0 --fault close-early}
        known_failures:
          - {cells: 'early@*', reason: the variant closes its stream before a terminal state}
        """)
    out = tmp_path / "out"
    code, summary, err = run_cli(capsys, "matrix", "run", str(path), "--out", str(out), "--jobs", "2")
    assert "known failure [0] early@*: the variant closes its stream before a terminal state" in err
    matrix = load_matrix(out)
    got = {c["id"]: c for c in matrix["cells"]}
    assert set(got) == {"reference@jsonrpc", "early@jsonrpc"}
    assert got["early@jsonrpc"]["verdict"] == "FAIL" and "A2A-STREAM-009" in got["early@jsonrpc"]["failed"], got
    assert got["reference@jsonrpc"]["verdict"] in ("PASS", "INCOMPLETE") and not got["reference@jsonrpc"]["failed"]
    for cell_id in got:
        report_ = json.loads((out / "cells" / cell_id / "compatibility.json").read_text())
        assert report_["target"]["a2a"].startswith("http://127.0.0.1:")
        assert (out / "cells" / cell_id / "cassettes" / "stream-basic.yaml").is_file()
    urls = {json.loads((out / "cells" / i / "compatibility.json").read_text())["target"]["a2a"] for i in got}
    assert len(urls) == 2  # each cell its own server on its own port
    assert code == 0 and "| early | FAIL" in summary and (out / "index.html").is_file()


def test_client_cases_are_built_from_the_servers_recordings(tmp_path):
    """`run --client-base DIR` builds the cases from DIR: a case whose base DIR holds is run and judged, one whose
    base it lacks is ERROR naming the file in DIR (never served from the shipped reference behind its back); the
    matrix runs only the cases that build."""
    from streamcert.matrix.run import client_case_ids
    from streamcert.recordings.client_cases import reference_dir

    base = tmp_path / "recorded"
    base.mkdir()
    (base / "stream-basic.yaml").write_bytes((reference_dir() / "stream-basic.yaml").read_bytes())
    served, left = client_case_ids(base)
    assert "client-basic" in served and "client-approval" not in served
    assert any(line.startswith("client-approval: ") and "ix-approval-denied" in line for line in left)
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    proc = subprocess.run([sys.executable, "-m", "streamcert", "run", "--client-cmd", "streamcert client",
                           "--profile", "client", "--client-base", str(base), "--scenario", "client-basic",
                           "--scenario", "client-approval", "--stream-limit", "5", "--report", str(tmp_path / "rep")],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    report_ = json.loads((tmp_path / "rep" / "compatibility.json").read_text())
    by_id = {r["id"]: r for r in report_["requirements"]}
    assert by_id["CLIENT-019"]["status"] == "ERROR", proc.stdout[-2000:]
    assert f"no base recording {base}/ix-approval-denied.yaml" in by_id["CLIENT-019"]["message"]
    assert "  PASS        client-basic (client)" in proc.stdout


# -- the dashboard in the browser ------------------------------------------------------------------------------

def test_the_dashboard_in_the_browser(browser, tmp_path):  # noqa: F811
    hostile = "</td><script>window.pwned=1</script>"
    known = [{"cells": "s@*", "requirement": "X-2", "reason": f"s breaks X-2 {hostile}", "link": "https://example.invalid/1"}]
    root = matrix_dir(tmp_path / "d", {"s@jsonrpc": report("FAIL", {"X-1": "PASS", "X-2": "FAIL"}),
                                       "s@grpc": report("PASS", {"X-1": "PASS", "X-2": "PASS"}),
                                       "t@jsonrpc": None,
                                       "c~s": report("PASS", {"C-1": "PASS"}),
                                       "c~t": report("INCOMPLETE", {"C-1": "NOT_TESTED"})}, known)
    page = browser.new_page(viewport=VIEWPORT)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.goto((root / "index.html").as_uri())
    verdicts = page.eval_on_selector_all("td.cell", "els => els.map(e => [e.dataset.cell, e.dataset.verdict, "
                                         "getComputedStyle(e).backgroundColor])")
    assert {(c, v) for c, v, _ in verdicts} == {("s@jsonrpc", "FAIL"), ("s@grpc", "PASS"), ("t@jsonrpc", "ERROR"),
                                                ("c~s", "PASS"), ("c~t", "INCOMPLETE")}
    colours = {v: bg for _, v, bg in verdicts}
    assert len(set(colours.values())) == 4  # each verdict its own colour
    assert page.locator("table.servers td.none").count() == 1  # t has no gRPC cell
    assert "the cell was cut at its limit of 300 s" in page.locator('td[data-cell="t@jsonrpc"]').inner_text()
    assert page.locator("table.known-failures tr.known-failure").inner_text().count("s breaks X-2 </td><script>") == 1
    assert page.evaluate("window.pwned") is None
    page.locator('td[data-cell="s@jsonrpc"] a').click()
    page.wait_for_url("**/cells/s@jsonrpc/report.html")
    assert page.locator("h1").inner_text() == "report of s@jsonrpc"
    assert not errors, errors
    page.close()
