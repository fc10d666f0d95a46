"""Running the cells: each a `streamcert run` in a process (and process group) of its own, at most `jobs` at
once, each with its own report directory and its own ports (servers and replays take free ones). A server given
by `command` is started for its cell, its URL read from its standard output within the start-up limit, and
stopped by its process group and the mark its descendants inherit (wire/descendants.py). A cell that crashes,
hangs past its limit or whose server never prints a URL is that cell's ERROR; the other cells run on."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from ..wallclock import now
from ..wire import descendants
from .file import Matrix
from .plan import Cell

URL = re.compile(r"https?://[^\s\"'<>]+")
TAIL = 2000  # characters of a server's or a cell's stderr kept in its ERROR


def cell_dir(out: Path, cell_id: str) -> Path:
    return out / "cells" / cell_id


def _env(token: str) -> dict[str, str]:
    """This interpreter's scripts first on PATH (a `streamcert …` command runs this install), and the mark."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return descendants.marked_env(env, token)


def _stop(proc: subprocess.Popen, token: str) -> None:
    """SIGTERM to the group and every marked descendant, SIGKILL a second later to what is left."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        descendants.signal_all(token, proc.pid, sig)
        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            continue
        if not descendants.signal_all(token, proc.pid, 0):
            return


def _tail(path: Path) -> str:
    try:
        return path.read_text("utf-8", errors="replace")[-TAIL:].strip()
    except OSError:
        return ""


class StartedServer:
    """A server command, started; `url` is the first URL it printed (None: none within the limit)."""

    def __init__(self, command: str, limit: float, log: Path) -> None:
        self.token = descendants.new_token()
        self.log = log
        self.stderr = open(log, "wb")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(command, shell=True, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=self.stderr, start_new_session=True, env=_env(self.token))
        found: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, args=(found,), daemon=True).start()
        try:
            self.url = found.get(timeout=limit)
        except queue.Empty:
            self.url = None

    def _read(self, found: queue.Queue) -> None:
        told = False
        for raw in self.proc.stdout:  # read to the end, so the server never blocks on a full pipe
            match = URL.search(raw.decode("utf-8", errors="replace"))
            if match and not told:
                found.put(match.group(0).rstrip("/.,;"))
                told = True
        if not told:
            found.put(None)  # it ended without printing one

    def stop(self) -> None:
        _stop(self.proc, self.token)
        self.stderr.close()


def _run_cell_process(args: list[str], log: Path, limit: float) -> tuple[int | None, str]:
    """One `streamcert run`, bounded; (exit code or None when cut at the limit, its output's tail)."""
    token = descendants.new_token()
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "streamcert", "run", *args], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True, env=_env(token))
        try:
            code: int | None = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            code = None
        _stop(proc, token)  # also whatever it left behind
    return code, _tail(log)


def _run_into(result: dict[str, Any], args: list[str], matrix: Matrix, folder: Path, extra: tuple[str, ...]) -> None:
    """Run the cell's `streamcert run` (its report into `folder`) and note in `result` how it ended: its exit
    code, and an error when it was cut at the cell limit or wrote no report."""
    limit = matrix.limits["cell_limit"]
    code, tail = _run_cell_process([*args, "--report", str(folder), "--stream-limit",
                                    f"{matrix.limits['stream_limit']:g}", *extra], folder / "run.log", limit)
    result["exit_code"] = code
    if code is None:
        result["error"] = f"the cell was cut at its limit of {limit:g} s"
    elif not (folder / "compatibility.json").is_file():
        result["error"] = f"no report was written (exit {code}); its output ends: {tail}"


def run_server_cell(matrix: Matrix, cell: Cell, out: Path) -> dict[str, Any]:
    server = next(s for s in matrix.servers if s.name == cell.server)
    folder = cell_dir(out, cell.id)
    folder.mkdir(parents=True, exist_ok=True)
    started, t0 = now(), time.monotonic()
    result = {"id": cell.id, "started": started, "error": None, "exit_code": None}
    running = None
    try:
        url = server.url
        if server.command:
            running = StartedServer(server.command, matrix.limits["start_limit"], folder / "server.log")
            url = running.url
            if url is None:
                result["error"] = (f"the server command printed no URL within {matrix.limits['start_limit']:g} s; "
                                   f"its stderr ends: {_tail(running.log) or '(nothing)'}")
        if url:
            args = ["--url", url, "--binding", cell.binding, *(a for p in server.profiles for a in ("--profile", p)),
                    "--record", str(folder / "cassettes"), "--overwrite"]
            extra = tuple(a.replace("{url}", url) for a in server.args)  # e.g. --nostream-url {url}/agents/…
            _run_into(result, args, matrix, folder, extra)
    finally:
        if running:
            running.stop()
    result.update(finished=now(), seconds=round(time.monotonic() - t0, 2))
    return result


def client_case_ids(recordings: Path) -> tuple[list[str], list[str]]:
    """(served, left out): the client cases that build from the server's recordings (their base recorded, with
    the exchanges they serve), and the others, each with why (a server certified on fewer profiles, or without the
    twin agents a case needs, recorded no base for them)."""
    from ..catalogue import load_scenario
    from ..recordings import client_cases

    served, left = [], []
    for case_id in client_cases.case_ids():
        if load_scenario(case_id).profile != "client":
            continue
        try:
            client_cases.build(client_cases.load_case(case_id), recordings)
        except client_cases.CaseError as exc:
            left.append(f"{case_id}: {exc}")
            continue
        served.append(case_id)
    return served, left


def run_client_cell(matrix: Matrix, cell: Cell, out: Path, server_result: dict[str, Any]) -> dict[str, Any]:
    client = next(c for c in matrix.clients if c.name == cell.client)
    folder = cell_dir(out, cell.id)
    folder.mkdir(parents=True, exist_ok=True)
    started, t0 = now(), time.monotonic()
    result: dict[str, Any] = {"id": cell.id, "started": started, "error": None, "exit_code": None}
    recordings = cell_dir(out, cell.recording) / "cassettes"
    served, left = client_case_ids(recordings) if recordings.is_dir() else ([], [])
    result["cases_left_out"] = left
    if not served:
        why = (f"failed: {server_result['error']}" if server_result.get("error")
               else "recorded no base of a client case")
        result["error"] = f"no recording of {cell.server} to replay: its cell {cell.recording} {why}"
    else:
        args = ["--client-cmd", client.command, "--profile", "client", "--client-base", str(recordings),
                *(a for case in served for a in ("--scenario", case))]
        _run_into(result, args, matrix, folder, client.args)
    result.update(finished=now(), seconds=round(time.monotonic() - t0, 2))
    return result


def run_cells(matrix: Matrix, cells: list[Cell], out: Path, jobs: int,
              say: Callable[[str], None] = lambda line: None) -> dict[str, dict[str, Any]]:
    """Every cell's result by id: the server cells first, each client cell as soon as its recording is there."""
    results: dict[str, dict[str, Any]] = {}

    def guarded(fn: Callable[..., dict[str, Any]], cell: Cell, *args: Any) -> dict[str, Any]:
        try:
            return fn(matrix, cell, out, *args)
        except Exception as exc:  # the harness's own failure is this cell's ERROR, never the matrix's
            return {"id": cell.id, "started": now(), "finished": now(), "exit_code": None,
                    "error": f"the cell could not be run: {type(exc).__name__}: {exc}"}

    def done(result: dict[str, Any]) -> None:
        results[result["id"]] = result
        say(f"{result['id']}: {'ERROR: ' + result['error'] if result['error'] else 'ran'} "
            f"({result.get('seconds', 0):g} s)")

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        servers = {pool.submit(guarded, run_server_cell, c): c for c in cells if c.kind == "server"}
        clients = []
        for future in as_completed(servers):
            cell = servers[future]
            done(future.result())
            clients += [pool.submit(guarded, run_client_cell, c, results[cell.id])
                        for c in cells if c.kind == "client" and c.recording == cell.id]
        for future in as_completed(clients):
            done(future.result())
    return results
