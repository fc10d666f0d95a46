"""`streamcert run --record` and `--against`: cassettes are written as vcrpy YAML, never over earlier ones
without --overwrite (refused before the run, exit 2, naming them), never with a secret in them; a run compared
with earlier captures reports each regression in the report's additive `regressions` section and fails (exit 1)
with its verdict unchanged."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hostile import HostileServer, Request, card, head, response
from test_cassettes import schema_problems

from streamcert.catalogue import load_scenario, scenario_ids
from streamcert.framelog import FrameLog

ONE = ["--profile", "a2a", "--", "-k", "test_stream_basic", "-p", "no:cacheprovider"]
A2A = ["--profile", "a2a", "--binding", "jsonrpc"]  # its scenarios (A2A_SCENARIOS): a run that ends PASS


def streamcert(*args: str, cwd: Path, env: dict | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "streamcert", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def test_record_refuses_to_replace_cassettes_before_the_run(tmp_path):
    (tmp_path / "cass").mkdir()
    (tmp_path / "cass" / "stream-basic.yaml").write_text("an earlier capture\n")
    proc = streamcert("run", "--record", "cass", "--report", "rep", *ONE, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "cass/stream-basic.yaml" in proc.stderr and "--overwrite" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not (tmp_path / "rep").exists()  # refused before anything ran
    assert (tmp_path / "cass" / "stream-basic.yaml").read_text() == "an earlier capture\n"
    # The pytest plugin refuses the same way, for a run started by pytest itself.
    plain = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "streamcert.suite", "--record", "cass",
                            "-p", "no:cacheprovider", "-k", "test_stream_basic"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=60)
    assert plain.returncode == 4 and "cass/stream-basic.yaml" in plain.stdout + plain.stderr


def test_against_earlier_captures_a_regression_fails_the_run(tmp_path):
    first = streamcert("run", "--record", "cass", "--report", "rep1", *A2A, cwd=tmp_path)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    path = tmp_path / "cass" / "stream-basic.yaml"
    log = FrameLog.load(path)
    assert path.read_text("utf-8").startswith("version: 1\ninteractions:\n") and log.get("stream").events
    recorded = sorted((tmp_path / "cass").glob("*.yaml"))
    a2a_scenarios = [sid for sid in scenario_ids() if load_scenario(sid).profile == "a2a"]
    assert [p.stem for p in recorded] == sorted(a2a_scenarios)
    assert {p.name: schema_problems(p) for p in recorded} == {p.name: [] for p in recorded}
    # The earlier capture said something else at the end: the live run now differs in one field.
    text = path.read_text("utf-8").replace("1 failed, 11 passed", "1 failed, 10 passed")
    path.write_text(text, "utf-8")
    proc = streamcert("run", "--report", "rep2", "--against", "cass", *A2A, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    rep = json.loads((tmp_path / "rep2" / "compatibility.json").read_text("utf-8"))
    assert rep["verdict"] == "PASS"  # unchanged: a regression is no outcome of a requirement
    section = rep["regressions"]
    a2a_scenarios = [sid for sid in scenario_ids() if load_scenario(sid).profile == "a2a"]
    assert section["against"] == "cass" and len(section["compared"]) == len(a2a_scenarios)
    assert section["without_cassette"] == []
    (found,) = section["found"]
    assert found["scenario"] == "stream-basic" and found["cassette"] == "cass/stream-basic.yaml"
    lines = [ln for ln in found["lines"] if "'1 failed, 10 passed' → '1 failed, 11 passed'" in ln]
    assert lines and all(ln.startswith(("stream:", "get_task")) for ln in lines), found["lines"]
    assert f"regressions against cass: 1 of {len(a2a_scenarios)} scenario(s) differ (the run fails)" in proc.stdout
    assert "Regressions against cass" in (tmp_path / "rep2" / "report.md").read_text("utf-8")
    assert "Regressions against cass" in (tmp_path / "rep2" / "report.html").read_text("utf-8")


# A scenario whose recording holds what a run may legally change: over gRPC the agent echoes a JSON object
# whose member order follows the reference process's protobuf map order (a new process, maybe another order).
UNSTABLE = ["--profile", "interactions", "--binding", "grpc", "--scenario", "ix-answer-forms"]
AGAINST_RUNS = 2  # cheap; bench/against.py compares 20 times, over two bindings and four scenarios


def test_against_an_unchanged_implementation_finds_no_regression(tmp_path):
    first = streamcert("run", "--record", "cass", "--report", "rec", *UNSTABLE, cwd=tmp_path)
    assert (tmp_path / "cass" / "ix-answer-forms@grpc.yaml").is_file(), first.stdout[-3000:] + first.stderr[-3000:]
    for run in range(AGAINST_RUNS):  # each run starts the reference anew, as a later CI run does
        proc = streamcert("run", "--report", f"rep{run}", "--against", "cass", *UNSTABLE, cwd=tmp_path)
        section = json.loads((tmp_path / f"rep{run}" / "compatibility.json").read_text("utf-8"))["regressions"]
        assert section["compared"] == ["ix-answer-forms"] and section["found"] == [], \
            (run, section["found"], proc.stdout[-2000:])


SECRET_TOKEN = "SECRETTOKEN-9e2a"
SECRET_KEY = "SECRETKEY-41bc"


def _echo(request: Request, writer) -> None:
    """Every credential the server was given, sent back in its answers (headers, query string)."""
    echo = f"{request.headers.get('authorization', '')} {request.target}"
    if request.method == "GET":
        writer.write(response(card("http://" + request.headers["host"], description=echo)))
        return
    rpc = request.json() if request.body else {}
    rid = rpc.get("id", 1) if isinstance(rpc, dict) else 1
    status = {"state": "TASK_STATE_COMPLETED", "message": {"role": "ROLE_AGENT", "messageId": "m-1",
                                                           "parts": [{"text": echo}]}}
    writer.write(head(200, "text/event-stream"))
    for frame in ({"task": {"id": "t-1", "contextId": "c-1", "status": status}},
                  {"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": status}}):
        writer.write(b"data: " + json.dumps({"jsonrpc": "2.0", "id": rid, "result": frame}).encode() + b"\n\n")


def test_no_secret_reaches_a_cassette(tmp_path):
    with HostileServer(_echo, lifetime=120) as server:
        proc = streamcert("run", "--url", f"{server.url}?api_key={SECRET_KEY}", "--header",
                          f"Authorization: Bearer {SECRET_TOKEN}", "--record", "cass", "--report", "rep",
                          "--timeout", "3", "--stream-limit", "3", *ONE, cwd=tmp_path,
                          env={**os.environ, "MY_API_TOKEN": "SECRETENV-77aa"})
        asked = list(server.requests)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    assert any(SECRET_TOKEN in r.headers.get("authorization", "") and SECRET_KEY in r.target for r in asked)
    cassettes = sorted((tmp_path / "cass").glob("*.yaml"))
    assert cassettes
    for path in cassettes:  # the file as written, and the bodies read back (a !!binary body is base64)
        texts = [path.read_text("utf-8")] + [ex.wire_bytes.decode("utf-8", "replace")
                                             for ex in FrameLog.load(path).exchanges]
        assert "***" in texts[0]
        for secret in (SECRET_TOKEN, SECRET_KEY):
            assert not any(secret in text for text in texts), (path.name, secret)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert SECRET_TOKEN.encode() not in data and SECRET_KEY.encode() not in data, path
