"""The hostile cases of issues 12 and 25 as one table: for each, how it ended (exit code, verdict), the first
thing it says, its wall time, the peak resident memory of streamcert's process and the size of the report it
wrote and printed, each with its bound beside it, and a last line with the worst ratio to each bound.

Two kinds of case, each run in a process of its own, one at a time:
- `streamcert run` against a hostile server or with a hostile client command: tests/common/hostile_cases.py (the
  same runs tests/e2e/test_hostile.py asserts, where each heavy case has a small twin). The heavy ones are here: a
  100 000-chunk flood with and without --record, a 1 GiB gzip bomb, a 64 MiB event, a 200 MiB line, a 64 MiB
  status text, a chatty agent (1 200 repeats), a client sending a 600 MiB request body, a client's final view
  of 64 MiB and one cut at 65 MiB.
- the commands that read untrusted cassettes (OFFLINE below): `check` and `replay` of a 30 MB cassette (50 000
  frames), `check` of a 500 MiB one, an alias bomb through `check` and `replay`, `diff` of two 100 000-frame
  cassettes, and `replay` sent a 600 MiB chunked request body. Their twins are in tests/unit/test_untrusted_cassettes.py,
  tests/e2e/test_replay_bounds.py and tests/unit/test_diff.py.

Peak memory is the process's VmHWM (its high-water mark since exec), read every 10 ms until it exits: not
`wait4`'s ru_maxrss, which Linux carries across exec from this process, where the hostile servers and their
payloads live. "report" is what the run wrote under its report directory and printed (not the cassettes a
--record asked for).

    python bench/hostile.py [--only SUBSTRING] [--heavy]
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "common"))  # hostile.py (the servers) and hostile_cases.py

from hostile_cases import CASES, _high_water_kib, run_case  # noqa: E402

GOAL_MIB = 200  # peak memory, whatever the other side sends (issue 25)
REPORT_MIB = 4  # a report stays within a few MiB whatever the server sent (issue 25)
MIB = 1024 * 1024
SHIPPED = HERE.parent / "cassettes" / "reference"


# -- the offline cases: what reads an untrusted cassette ---------------------------------------------------------

def stream_cassette(folder: Path, frames: int, name: str = "c.yaml", text: str = "t" * 40) -> Path:
    """A stream-basic cassette of `frames` artifact chunks (50 000 of 40 characters: about 30 MB)."""
    from logs import artifact_update, frame_log, sse, status_update, stream_task

    from streamcert.recordings import cassette

    chunks = [artifact_update("a1", text=f"token {n} {text}", append=n > 0) for n in range(frames)]
    items = [stream_task(), status_update("TASK_STATE_WORKING"), *chunks, status_update("TASK_STATE_COMPLETED")]
    return cassette.write(frame_log(sse("stream", items, dt=0.0001), scenario="stream-basic"), folder / name)


def diff_pair(folder: Path, frames: int) -> list[str]:
    from diff import capture

    old = capture(frames, False).save(folder / "old.yaml")
    new = capture(frames, True).save(folder / "new.yaml")
    return ["diff", str(old), str(new)]


def alias_bomb(folder: Path) -> Path:
    from test_untrusted_cassettes import alias_bomb as bomb

    return bomb(folder / "bomb.yaml", levels=14)


def sparse(folder: Path, size: int) -> Path:
    """A file of `size` bytes that takes no room on disk (its size is what the cap reads first)."""
    path = folder / "big.yaml"
    with open(path, "wb") as out:
        out.write(b"version: 1\ninteractions: []\n")
        out.truncate(size)
    return path


def read_stream(url: str) -> str:
    """POST the recorded SendStreamingMessage and read its answer to the end."""
    import httpx

    got = 0
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {}}
    with httpx.Client(timeout=120) as client, client.stream(
            "POST", url + "/a2a/jsonrpc", json=body, headers={"accept": "text/event-stream"}) as answer:
        for data in answer.iter_bytes():
            got += len(data)
    return f"served {got / 1e6:.1f} MB"


def chunked_body(mib: int) -> Callable[[str], str]:
    def send(url: str) -> str:
        host, port = url.removeprefix("http://").split(":")
        sent = 0
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            sock.sendall(b"POST /a2a/jsonrpc HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n")
            block = b"%x\r\n" % MIB + b"x" * MIB + b"\r\n"
            try:
                for _ in range(mib):
                    sock.sendall(block)
                    sent += 1
            except OSError:
                pass
            answer = sock.recv(200).split(b"\r\n", 1)[0].decode("latin-1")
        return f"{answer!r} after {sent} MiB sent"
    return send


@dataclass
class Offline:
    name: str
    make: Callable[[Path], list[str]]  # writes its inputs into the folder; the streamcert arguments
    exit: set[int]
    seconds: float  # killed past this
    drive: Callable[[str], str] | None = None  # a replay: given its URL, plays the client; what it saw


OFFLINE = [
    Offline("check of a 30 MB cassette (50 000 frames)",
            lambda f: ["check", str(stream_cassette(f, 50_000)), "--report", str(f / "report")], {0, 1}, 180),
    Offline("replay of a 30 MB cassette (50 000 frames), its stream read",
            lambda f: ["replay", str(stream_cassette(f, 50_000)), "--pace", "fast"], {0}, 180, read_stream),
    Offline("check of a 500 MiB cassette", lambda f: ["check", str(sparse(f, 500 * MIB)), "--report",
                                                      str(f / "report")], {2}, 30),
    Offline("an alias bomb through check", lambda f: ["check", str(alias_bomb(f)), "--report", str(f / "report")],
            {2}, 30),
    Offline("an alias bomb through replay", lambda f: ["replay", str(alias_bomb(f))], {2}, 30),
    Offline("diff of two 100 000-frame cassettes", lambda f: diff_pair(f, 100_000), {1}, 300),
    Offline("replay sent a 600 MiB chunked request body",
            lambda f: ["replay", str(SHIPPED / "stream-basic.yaml"), "--pace", "fast"], {0}, 120, chunked_body(600)),
]


@dataclass
class Row:
    name: str
    exit: int | None
    verdict: str
    said: str
    seconds: float
    bound_s: float
    peak_mib: float
    report_mib: float


def run_offline(case: Offline, folder: Path) -> Row:
    args = case.make(folder)
    cmd = [sys.executable, "-m", "streamcert", *args]
    with tempfile.TemporaryFile() as err:
        started = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, cwd=folder, start_new_session=True)
        peak, lines, saw = [0], [], [""]
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                peak[0] = max(peak[0], _high_water_kib(proc.pid))
                time.sleep(0.01)

        def read() -> None:
            assert proc.stdout is not None
            for raw in proc.stdout:
                line = raw.decode("utf-8", "replace")
                lines.append(line)
                found = re.match(r"http://127\.0\.0\.1:\d+", line)
                if found and case.drive is not None:
                    try:
                        saw[0] = case.drive(found.group(0))
                    finally:
                        os.killpg(proc.pid, signal.SIGTERM)  # the replay's own way to stop

        threads = [threading.Thread(target=watch, daemon=True), threading.Thread(target=read, daemon=True)]
        for thread in threads:
            thread.start()
        try:
            code = proc.wait(case.seconds)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
        seconds = time.monotonic() - started
        done.set()
        for thread in threads:
            thread.join(5)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    printed = "".join(lines) + stderr
    written = len(printed.encode()) + sum(p.stat().st_size for p in (folder / "report").rglob("*") if p.is_file())
    said = saw[0] or next((line for line in stderr.splitlines() if line.startswith("streamcert")
                           and "from" not in line and "stopped after" not in line), "")
    if not said:
        said = next((line for line in printed.splitlines() if line.strip()), "")
    verdict = next((m.group(1) for m in [re.search(r"verdict: (\w+)", printed)] if m), "—")
    return Row(case.name, code, verdict, said, seconds, case.seconds, peak[0] / 1024, written / MIB)


def run_online(case, folder: Path) -> Row:
    out = run_case(case, folder)
    report = folder / "report"
    written = len(out.output.encode()) + sum(len(data) for name, data in out.files.items()
                                             if (folder / name).is_relative_to(report))
    return Row(case.name, out.exit, (out.report or {}).get("verdict", "—"), out.first_finding(case.named),
               out.seconds, case.seconds, out.peak_mib, written / MIB)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run only the cases whose name holds this")
    parser.add_argument("--heavy", action="store_true", help="only the heavy cases (the twins are tests)")
    args = parser.parse_args()
    print(f"| case | exit | verdict | first finding or line | wall s (bound) | peak MiB (bound {GOAL_MIB}) | "
          f"report MiB (bound {REPORT_MIB}) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    worst = {"peak": (0.0, ""), "report": (0.0, ""), "wall": (0.0, "")}
    cases = [(c, run_online) for c in CASES if c.heavy or not args.heavy] + [(c, run_offline) for c in OFFLINE]
    for case, runner in cases:
        if args.only and args.only not in case.name:
            continue
        with tempfile.TemporaryDirectory() as folder:
            row = runner(case, Path(folder))
        said = row.said.replace("|", "\\|").replace("\n", " ")
        if len(said) > 200:
            said = said[:197] + "…"
        exit_code = "killed" if row.exit is None else str(row.exit)
        print(f"| {row.name} | {exit_code} | {row.verdict} | {said} | {row.seconds:.1f} ({row.bound_s:g}) | "
              f"{row.peak_mib:.0f} | {row.report_mib:.2f} |", flush=True)
        for key, ratio in (("peak", row.peak_mib / GOAL_MIB), ("report", row.report_mib / REPORT_MIB),
                           ("wall", row.seconds / row.bound_s)):
            if ratio > worst[key][0]:
                worst[key] = (ratio, row.name)
    print("worst ratio to its bound: " + "; ".join(f"{key} {ratio:.2f}x ({name})" for key, (ratio, name)
                                                   in worst.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
