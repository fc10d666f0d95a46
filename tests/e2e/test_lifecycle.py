"""A run that always ends well: the target checked before any scenario (bounded in time, size and
decompressed size; waited for with --wait-for-target), exit codes (0 PASS, 1 FAIL or INCOMPLETE,
2 usage, 3 could not run), every option refused before the run, reports written atomically, a dead
pytest-xdist worker, the per-run time limit and SIGINT.

Each run is `python -m streamcert run …` in a subprocess with a timeout, narrowed with `--profile a2a
-- -k …` to what it proves."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hostile import CARD_PATH, HostileServer, Request, card, head, response

from streamcert import limits
from streamcert.catalogue import load_scenario
from streamcert.report import writers
from streamcert.report.writers import write_all, write_atomic

FAST = ["--timeout", "2", "--stream-limit", "3"]


def run(*args: str, cwd: Path, timeout: float = 120, env: dict | None = None) -> tuple[subprocess.CompletedProcess,
                                                                                     float]:
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "streamcert", "run", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=env)
    return proc, time.monotonic() - started


def report(folder: Path) -> dict:
    return json.loads((folder / "compatibility.json").read_text("utf-8"))


def statuses(rep: dict) -> dict[str, str]:
    return {r["id"]: r["status"] for r in rep["requirements"]}


def said(proc) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("streamcert")]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def assert_could_not_run(proc, folder: Path, *words: str) -> dict:
    """Exit 3, one line on stderr naming the cause, and a report that says so once."""
    assert proc.returncode == 3, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = said(proc)
    assert len(lines) == 1 and all(w in lines[0] for w in words), proc.stderr
    rep = report(folder)
    assert rep["verdict"] == "INCOMPLETE" and rep["could_not_run"] in lines[0]
    selected = {k: v for k, v in statuses(rep).items() if k.startswith(("WIRE-", "A2A-CARD", "A2A-STREAM",
                                                                         "A2A-TASK", "A2A-ERR"))}
    assert selected and set(selected.values()) == {"ERROR"}
    assert all(r["message"] == rep["could_not_run"] for r in rep["requirements"] if r["status"] == "ERROR")
    md = (folder / "report.md").read_text("utf-8")
    assert [line for line in md.splitlines() if line.startswith("## ")] == ["## Could not run"], md
    assert rep["could_not_run"] in (folder / "junit.xml").read_text("utf-8")
    return rep


# -- could not run: exit 3 -------------------------------------------------------------------------------

def test_unreachable_target_stops_before_the_scenarios(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}"
    proc, took = run("--url", url, "--report", "rep", cwd=tmp_path)
    assert_could_not_run(proc, tmp_path / "rep", "cannot reach", url)
    assert took < 10, took
    assert "streamcert verdict: INCOMPLETE" in proc.stdout and len(proc.stdout.splitlines()) < 10


def test_the_pytest_plugin_drives_nothing_into_an_unreachable_target(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}"
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs", "streamcert.suite",
                           "--sut-url", url, "--streamcert-report", "rep", "-k", "stream_basic or list_tasks"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert time.monotonic() - started < 30, proc.stdout[-2000:]
    rep = report(tmp_path / "rep")
    errors = [r for r in rep["requirements"] if r["status"] == "ERROR"]
    assert errors and all("not driven: cannot reach" in r["message"] for r in errors), errors[:2]


def test_unreachable_progress_url_stops_the_run_too(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/progress"
    proc, took = run("--progress-url", url, "--report", "rep", cwd=tmp_path)
    assert proc.returncode == 3 and took < 10, (proc.returncode, took, proc.stderr)
    rep = report(tmp_path / "rep")
    progress = {r["status"] for r in rep["requirements"] if r["id"].startswith("PROG-")}
    assert rep["verdict"] == "INCOMPLETE" and progress == {"ERROR"} and url in rep["could_not_run"]


async def _html_404(request: Request, writer) -> None:
    writer.write(response(b"<html><body>Not Found</body></html>", 404, "text/html"))


def test_a_broken_card_is_judged_not_could_not_run(tmp_path):
    with HostileServer(_html_404) as server:
        proc, took = run("--url", server.url, "--report", "rep", "--profile", "a2a", *FAST, "--", "-k", "test_card",
                         cwd=tmp_path)
    assert proc.returncode == 1 and not said(proc), (proc.returncode, proc.stderr)
    rep = report(tmp_path / "rep")
    assert "could_not_run" not in rep and statuses(rep)["A2A-CARD-001"] == "FAIL"


async def _silent(request: Request, writer) -> None:
    await asyncio.sleep(3600)  # accepts, reads the request, never answers (cancelled with the server)


def test_silent_target_stops_within_its_timeout(tmp_path):
    with HostileServer(_silent) as server:
        proc, took = run("--url", server.url, "--report", "rep", "--profile", "a2a", *FAST, cwd=tmp_path)
    assert_could_not_run(proc, tmp_path / "rep", server.url, "no answer within 2 s")
    assert took < 10, took


async def _trickle(request: Request, writer) -> None:
    if request.path != CARD_PATH:
        writer.write(response({"detail": "not found"}, 404))
        return
    writer.write(head())
    while True:  # one byte every 50 ms, forever
        writer.write(b" ")
        await writer.drain()
        await asyncio.sleep(0.05)


def test_trickling_card_is_bounded_and_judged(tmp_path):
    with HostileServer(_trickle) as server:
        proc, took = run("--url", server.url, "--report", "rep", "--profile", "a2a", *FAST,
                         "--", "-k", "test_card", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]  # it answered: judged, not exit 3
    assert any("still arriving after 2 s" in line for line in said(proc)), proc.stderr
    assert statuses(report(tmp_path / "rep"))["A2A-CARD-001"] in ("FAIL", "ERROR")
    assert took < 30, took


def _bomb(request: Request) -> bool:
    return request.path == CARD_PATH


BOMB_MIB = 1024  # what the bomb inflates to
BOMB_TIMEOUT_S = 30


@functools.cache  # the CRC of 1 GiB of zeros, once per process rather than once per request
def _gzip_of_zeros(mib: int) -> tuple[bytes, bytes, int, bytes]:
    """A gzip member of `mib` MiB of zeros as (header, block, times, end): the header, then one deflate block
    sent `times` times, then the end (the final block and the trailer: CRC-32 and length of what it inflates to).
    A 1 MiB block compressed after a full flush starts from an empty window, so every MiB compresses to the same
    bytes: compressing it once stands for compressing them all (which took seconds of CPU)."""
    zeros = bytes(1 << 20)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)  # raw deflate: the gzip framing is written here
    block = deflate.compress(zeros) + deflate.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # RFC 1952: deflate, no name, no time, unknown OS
    end = deflate.flush() + crc.to_bytes(4, "little") + ((mib << 20) & 0xFFFFFFFF).to_bytes(4, "little")
    return header, block, mib, end


def test_the_gzip_bomb_is_gzip_of_zeros():
    """The bomb the card test sends is a valid gzip stream: here at 3 MiB, decoded whole and checked."""
    header, block, times, end = _gzip_of_zeros(3)
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    assert inflate.decompress(header + block * times + end) == bytes(3 << 20) and inflate.eof
    assert inflate.unused_data == b""


async def _gzip_bomb(request: Request, writer) -> None:
    """A card of 1 MiB gzip that inflates to 1 GiB of zeros, sent block by block."""
    if not _bomb(request):
        writer.write(response({"detail": "not found"}, 404))
        return
    header, block, times, end = _gzip_of_zeros(BOMB_MIB)
    writer.write(head(content_encoding="gzip") + header)
    for _ in range(times):
        writer.write(block)
        await writer.drain()
    writer.write(end)


PEAK = """
import resource, subprocess, sys
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stdout.write(proc.stdout)
sys.stderr.write(proc.stderr)
print("PEAK_KIB", resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(proc.returncode)
"""


def test_gzip_bomb_card_is_not_inflated_past_the_cap(tmp_path):
    """The peak resident memory of the streamcert process (RUSAGE_CHILDREN of a wrapper whose only child it
    is) stays far below the bomb, and the cap that stopped it names gzip. The --timeout is generous: what is proven
    is the size cap and the memory, and with FAST's 2 s a loaded machine had the card read time out (79 KB in, the
    cap not yet met) before the cap could be named."""
    with HostileServer(_gzip_bomb) as server:
        # Not FAST's --timeout 2: the bound proven here is the cap, and the card must reach it before the timeout
        # cuts the read (at load 16, 2 s was not enough: "still arriving after 2 s", no cap). On an idle machine the
        # cap stops the card in well under a second, so the longer timeout costs a passing run nothing.
        proc = subprocess.run([sys.executable, "-c", PEAK, sys.executable, "-m", "streamcert", "run", "--url",
                               server.url, "--report", "rep", "--profile", "a2a", "--timeout", str(BOMB_TIMEOUT_S),
                               "--stream-limit", "3", "--", "-k", "test_card"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
    peak_mib = int(proc.stdout.rsplit("PEAK_KIB", 1)[1]) / 1024
    print(f"gzip bomb: peak {peak_mib:.0f} MiB")
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    cap = [line for line in said(proc) if "gzip" in line]
    assert cap and limits.MAX_DECOMPRESSED.option in cap[0] and "decompressed size cap of 64 MiB" in cap[0], \
        proc.stderr
    assert peak_mib < 200, peak_mib


# -- waiting for a target that comes up later ---------------------------------------------------------

DROPPED_POLLS = 2  # POLL_S (0.25 s) apart: the 0.5 s a wait must last to be told ("answered after")


def test_wait_for_target_polls_until_the_server_is_up(tmp_path):
    port = closed_port()
    base = f"http://127.0.0.1:{port}"

    dropped = []

    class Card(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            if len(dropped) < DROPPED_POLLS:  # still coming up: the connection closes with no answer
                dropped.append(self.path)
                return
            body = json.dumps(card(base)).encode()
            self.send_response(200 if self.path == CARD_PATH else 404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    servers = []

    def come_up():
        servers.append(ThreadingHTTPServer(("127.0.0.1", port), Card))
        servers[0].serve_forever()

    # The server comes up beside the job, a second late, and answers only from its third poll on: however late the
    # job starts on a loaded machine, it has polled a target that was not up for at least two pauses between polls.
    later = threading.Timer(1.0, come_up)
    later.start()
    try:
        proc, took = run("--url", base, "--wait-for-target", "20", "--report", "rep", "--profile", "a2a", *FAST,
                         "--", "-k", "test_card", cwd=tmp_path)
    finally:
        later.join(5)
        for server in servers:
            server.shutdown()
            server.server_close()
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert len(dropped) == DROPPED_POLLS, dropped
    assert any("answered after" in line for line in said(proc)), proc.stderr
    assert statuses(report(tmp_path / "rep"))["A2A-CARD-001"] == "PASS"
    assert took < 20, took


def test_wait_for_target_gives_up_when_its_time_runs_out(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}"
    proc, took = run("--url", url, "--wait-for-target", "1.5", "--report", "rep", cwd=tmp_path)
    assert_could_not_run(proc, tmp_path / "rep", "cannot reach", "waited 1.5 s")
    assert 1.4 < took < 10, took


# -- every option checked before the run: exit 2, one line ----------------------------------------------

def _bad_options(tmp: Path) -> list[tuple[list[str], str]]:
    (tmp / "bad.json").write_text("{not json")
    (tmp / "shape.json").write_text('{"expected": ["WIRE-001"]}')
    (tmp / "typo.json").write_text('{"expected_failures": ["A2A-STREAM-04"]}')
    (tmp / "cases.json").write_text("[]")
    (tmp / "afile").write_text("")
    cases = [
        (["--baseline", "bad.json"], "bad.json: not JSON"),
        (["--baseline", "shape.json"], 'expected {"expected_failures"'),
        (["--baseline", "typo.json"], "A2A-STREAM-04 (did you mean A2A-STREAM-014?)"),
        (["--baseline", "missing.json"], "missing.json: cannot read it"),
        (["--report", "afile"], "afile: cannot be a directory: it is a file"),
        (["--report", "afile/deeper/rep"], "is under afile, which is a file"),
        (["--record", "afile/cass"], "is under afile, which is a file"),
        (["--line-cmd", "x", "--progress-cases", "missing-cases.json"], "missing-cases.json"),
        (["--line-cmd", "x", "--progress-cases", "cases.json"], "cases.json"),
        (["--profile", "nope"], "nope"),
        (["--fault", "nope"], "nope"),
        (["--allow-origin", "http://127.0.0.1:1/path"], "is not an origin"),
        (["--scrub", " "], "--scrub"),
        (["--run-limit", "0"], "--run-limit"),
    ]
    locked = Path("/sys/streamcert-report")  # unwritable even for root (sysfs)
    if os.geteuid() != 0:
        locked = tmp / "locked" / "rep"
        locked.parent.mkdir()
        locked.parent.chmod(0o500)
    cases.append((["--report", str(locked)], "cannot be written"))
    return cases


def test_every_bad_option_is_refused_at_once_in_one_line(tmp_path):
    for args, words in _bad_options(tmp_path):
        proc, took = run(*args, "--url", "http://127.0.0.1:1", cwd=tmp_path, timeout=60)
        lines = proc.stderr.splitlines()
        assert proc.returncode == 2, (args, proc.returncode, proc.stderr)
        assert len(lines) == 1 and words in lines[0] and "usage:" in lines[0], (args, proc.stderr)
        assert proc.stdout == "" and took < 10, (args, took)  # nothing ran: not even the target check
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["bad.json", "shape.json", "typo.json", "cases.json", "afile"] + (["locked"] if os.geteuid() else []))


def test_a_pytest_option_pytest_refuses_is_a_usage_error(tmp_path):
    proc, _ = run("--profile", "a2a", "--", "--no-such-pytest-flag", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "--no-such-pytest-flag" in proc.stderr


# -- reports written atomically -----------------------------------------------------------------------

REPORT = {"tool": {"name": "streamcert", "version": "0"}, "catalogue": {"version": "1"}, "target": {},
          "started": "s", "finished": "f", "verdict": "PASS", "summary": {"MUST": {}}, "requirements": []}


def test_a_report_that_fails_to_render_leaves_the_previous_one_whole(tmp_path, monkeypatch):
    write_all(REPORT, tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def broken(report):
        raise RuntimeError("rendering failed")

    monkeypatch.setattr(writers, "render_html", broken)
    with pytest.raises(RuntimeError):
        write_all(dict(REPORT, verdict="FAIL"), tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary_one(tmp_path, monkeypatch):
    path = write_atomic(tmp_path / "compatibility.json", "old\n")
    assert path.read_text() == "old\n" and oct(path.stat().st_mode & 0o777) == oct(0o644)

    def no_space(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_space)
    with pytest.raises(OSError):
        write_atomic(path, "new\n")
    assert [p.name for p in tmp_path.iterdir()] == ["compatibility.json"] and path.read_text() == "old\n"


# -- a pytest-xdist worker that dies ------------------------------------------------------------------

CRASHER = """
import os, pytest

@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    if item.name == "test_stream_basic" and hasattr(item.config, "workerinput"):
        os._exit(17)  # the worker dies in the middle of the test: no report, no findings
"""


def _crash_run(tmp_path: Path, *pytest_args: str):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "crasher.py").write_text(CRASHER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "plugins"), os.environ.get("PYTHONPATH", "")])}
    return run("--profile", "a2a", "--report", "rep", *FAST, "--", "-p", "crasher", *pytest_args, cwd=tmp_path,
               env=env)


def test_a_dead_worker_leaves_its_requirements_error_never_pass(tmp_path):
    proc, took = _crash_run(tmp_path, "-n", "2", "-k", "test_stream_basic or test_stream_fail or test_card")
    assert "crashed" in proc.stdout + proc.stderr, proc.stdout[-3000:]
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    rep = report(tmp_path / "rep")
    st = statuses(rep)
    basic = load_scenario("stream-basic").requirements
    assert {st[r] for r in basic} == {"ERROR"}, {r: st[r] for r in basic}
    entry = next(e for e in rep["requirements"] if e["id"] == basic[0])
    assert "crashed while running" in entry["message"] and "test_stream_basic" in entry["message"], entry
    assert rep["verdict"] == "FAIL"
    assert st["A2A-CARD-001"] == "PASS"  # the other worker's tests still count
    print(f"worker death: {took:.1f} s")


def test_tests_never_reported_after_a_crash_are_error(tmp_path):
    """One worker, no restart: the crash ends the session, and the test that never ran is ERROR too."""
    proc, _ = _crash_run(tmp_path, "-n", "1", "--max-worker-restart", "0", "-k", "test_stream_basic or test_list_tasks")
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    rep = report(tmp_path / "rep")
    never = [e for e in rep["requirements"] if e["id"] in load_scenario("list-tasks").requirements
             and e["id"] not in load_scenario("stream-basic").requirements]
    assert never and {e["status"] for e in never} == {"ERROR"}, never
    assert all("test_list_tasks never reported after worker 'gw0' crashed" in e["message"] for e in never), never
    assert rep["verdict"] == "FAIL"


# -- the per-run time limit ------------------------------------------------------------------------

def test_past_the_run_limit_no_scenario_is_driven(tmp_path):
    with HostileServer() as server:
        proc, _ = run("--url", server.url, "--run-limit", "0.001", "--report", "rep", "--profile", "a2a", *FAST,
                      "--", "-k", "test_card or test_stream_basic", cwd=tmp_path)
        asked = [r.target for r in server.requests]
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert asked == [CARD_PATH], asked  # the check before the run, and no scenario after it
    rep = report(tmp_path / "rep")
    card = next(e for e in rep["requirements"] if e["id"] == "A2A-CARD-001")
    assert card["status"] == "ERROR" and "card not driven: the run's" in card["message"], card
    assert "per-run time cap of 0.001 s (raise it with --run-limit)" in card["message"]


# -- SIGINT --------------------------------------------------------------------------------------------

async def _hold_the_stream(request: Request, writer) -> None:
    if request.method == "GET":
        writer.write(response(card("http://" + request.headers["host"])))
        return
    writer.write(head(content_type="text/event-stream"))
    await writer.drain()
    await asyncio.sleep(3600)  # a stream that stays open (cancelled with the server)


def test_sigint_during_a_run_gives_an_incomplete_report(tmp_path):
    with HostileServer(_hold_the_stream) as server:
        proc = subprocess.Popen([sys.executable, "-m", "streamcert", "run", "--url", server.url, "--report", "rep",
                                 "--profile", "a2a", "--timeout", "30", "--stream-limit", "30", "--", "-k",
                                 "test_stream_basic"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        deadline = time.monotonic() + 30
        while not any(r.method == "POST" for r in server.requests) and time.monotonic() < deadline:
            time.sleep(0.05)  # waiting for the stream to open, bounded; the interrupt must land inside it
        assert any(r.method == "POST" for r in server.requests), "the stream never opened"
        interrupted = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert time.monotonic() - interrupted < 10
    assert proc.returncode == 1, (proc.returncode, out[-2000:], err[-2000:])
    rep = report(tmp_path / "rep")
    assert rep["verdict"] == "INCOMPLETE"
    assert statuses(rep)["A2A-STREAM-001"] == "NOT_TESTED"
    assert (tmp_path / "rep" / "report.md").is_file()
