"""What a vendor meets in the first hour (issue 28): a wrong URL says so once, first; a bad command line or a
target that cannot be certified is refused in one line before the run; the verdict never overstates. Each run
is a subprocess in its own temporary directory."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

RUN_TIMEOUT = 300


def streamcert(*args: str, cwd: Path, timeout: float = RUN_TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "streamcert", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


class _Answer(http.server.BaseHTTPRequestHandler):
    """Answers every GET and POST with `answer(url)`: (status, content type, body)."""

    answer = staticmethod(lambda url: (404, "text/plain", b"Not Found"))

    def _answer(self):
        status, content_type, body = self.answer(f"http://127.0.0.1:{self.server.server_address[1]}")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args):  # quiet
        pass


def _serving(answer):
    """A loopback server answering every request with `answer` (see _Answer), its URL while it runs."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (_Answer,), {"answer": staticmethod(answer)}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def not_found_url():
    """Every request answered 404 (a wrong --url)."""
    yield from _serving(lambda url: (404, "text/plain", b"Not Found"))


def test_a_card_answering_404_is_one_root_cause_said_first(tmp_path, not_found_url):
    proc = streamcert("run", "--url", not_found_url + "/a2a", "--profile", "a2a", "--report", "rep",
                      "--stream-limit", "5", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr[-2000:]
    summary = proc.stdout[proc.stdout.index("streamcert verdict:"):].splitlines()
    tried = f"GET {not_found_url}/a2a/.well-known/agent-card.json answered HTTP 404"
    assert summary[1] == f"root cause: the agent card could not be read: {tried}", summary[:4]
    assert f"try --url {not_found_url} " in summary[2]
    assert "follow from it: " in summary[3] and "A2A-CARD-002" in summary[3]
    # what follows from the card is not listed again as causes of their own
    others = [line for line in summary if line.startswith("  A2A-CARD-002 ") or line.startswith("  WIRE-005 ")]
    assert others == []
    md = (tmp_path / "rep" / "report.md").read_text("utf-8")
    head = md[:md.index("| profile |")]  # the headline says it before any table
    assert f"**Root cause: the agent card could not be read: {tried}.** Likely fix: " in head
    failures = md[md.index("## Failures"):]
    assert failures.splitlines()[0].endswith(", 1 root cause(s)")
    assert f"**Root cause: the agent card could not be read: {tried}.**" in failures
    html = (tmp_path / "rep" / "report.html").read_text("utf-8")
    banner = html[html.index('<header class="banner'):html.index("</header>")]
    assert f"<strong>Root cause: the agent card could not be read: {tried}.</strong>" in banner
    assert html.count('class="root grouped card-root"') == 1 and "Root cause: the agent card could not be read" in html
    assert json.loads((tmp_path / "rep" / "compatibility.json").read_text("utf-8"))["verdict"] == "FAIL"


# -- one line, before the run ---------------------------------------------------------------------------------

def _jsonrpc_only_card(url: str) -> tuple[int, str, bytes]:
    card = {"name": "one-binding", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []}
    return 200, "application/json", json.dumps(card).encode()


@pytest.fixture
def jsonrpc_only_url():
    """An agent card that declares one JSON-RPC interface, whatever is asked."""
    yield from _serving(_jsonrpc_only_card)


def one_line_usage(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and proc.stdout == "", proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_a_binding_the_card_does_not_declare_is_refused_before_the_run(tmp_path, jsonrpc_only_url):
    proc = streamcert("run", "--url", jsonrpc_only_url, "--binding", "grpc", "--binding", "jsonrpc", "--report", "rep",
                      cwd=tmp_path, timeout=60)
    line = one_line_usage(proc)
    assert line.startswith("streamcert run: error: --binding grpc: the card declares no gRPC interface"), line
    assert "(it declares JSON-RPC); give --binding jsonrpc or leave --binding out" in line
    assert not (tmp_path / "rep").exists()


def test_grpc_without_the_extra_is_refused_before_the_run(monkeypatch, capsys):
    from streamcert import cli
    from streamcert.drivers import binding_choice

    monkeypatch.setattr(binding_choice, "grpc_missing", lambda: "needs the grpc extra (grpcio is not installed)")
    with pytest.raises(SystemExit) as stop:
        cli.main(["run", "--binding", "grpc", "--report", "unused"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["streamcert run: error: --binding grpc: needs the grpc extra (grpcio is not installed) "
                   "(usage: streamcert run --help)"]


def test_serve_on_a_port_in_use_is_one_line(tmp_path, not_found_url):
    port = not_found_url.rsplit(":", 1)[1]
    line = one_line_usage(streamcert("serve", "--port", port, cwd=tmp_path, timeout=60))
    assert line == (f"streamcert serve: cannot listen on 127.0.0.1:{port} (Address already in use); give another "
                    "--port, or --port 0 for a free one")


@pytest.mark.parametrize(("args", "said"), [
    (["run", "--urll", "http://127.0.0.1:9"], "unrecognized argument(s): --urll (did you mean --url?)"),
    (["list", "--levle", "must"], "streamcert list: error: unrecognized argument(s): --levle (did you mean --level?)"),
    (["run", "-n", "2"], "options for pytest go after --, as in: streamcert run [options] -- -n 2 (usage:"),
])
def test_an_unknown_option_gets_the_close_one_or_the_place_of_pytest_options(capsys, args, said):
    from streamcert import cli

    with pytest.raises(SystemExit) as stop:
        cli.main(args)
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0], err


def test_a_level_is_accepted_in_any_case():
    from streamcert.cli import build_parser
    from streamcert.run_options import OptionError, resolve

    parser = build_parser()
    assert parser.parse_args(["run", "--level", "MUST"]).level == "must"
    assert parser.parse_args(["list", "--level", "Should"]).level == "should"
    assert resolve({}, {"STREAMCERT_LEVEL": "MUST"})["level"] == "must"
    with pytest.raises(OptionError):
        resolve({}, {"STREAMCERT_LEVEL": "MUSTN'T"})


def test_waiting_for_the_target_says_what_it_waits_for(monkeypatch):
    from streamcert.running import preflight
    from streamcert.targets import Target

    monkeypatch.setattr(preflight, "SAY_EVERY_S", 0.3)
    said: list[str] = []
    checked = preflight.check_targets(Target(a2a_url="http://127.0.0.1:1", timeout=0.5), wait=3, say=said.append)
    assert checked.fatal and said, said
    assert all(line.startswith("still waiting, ") and " of 3 s (--wait-for-target): " in line
               and "http://127.0.0.1:1/.well-known/agent-card.json" in line for line in said), said


# -- the plugin used directly exits as the command does ----------------------------------------------------------

def test_pytest_with_the_plugin_exits_3_when_no_target_answered(tmp_path):
    from test_cli import _closed_port

    url = f"http://127.0.0.1:{_closed_port()}"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "--pyargs",
                           "streamcert.suite", "--sut-url", url, "-k", "card", "--streamcert-report", "rep"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert proc.returncode == 3, proc.stdout[-2000:] + proc.stderr[-2000:]
    report = json.loads((tmp_path / "rep" / "compatibility.json").read_text("utf-8"))
    assert report["verdict"] != "PASS" and {e["status"] for e in report["requirements"]
                                            if e["id"] == "A2A-CARD-001"} == {"ERROR"}


def test_the_exit_code_is_the_verdict_s():
    from streamcert.running.exit_codes import of_report

    assert of_report({"verdict": "PASS"}) == 0
    assert of_report({"verdict": "PASS", "regressions": {"found": [{"scenario": "stream-basic"}]}}) == 1
    assert of_report({"verdict": "INCOMPLETE"}) == of_report({"verdict": "FAIL"}) == 1
    assert of_report({"verdict": "INCOMPLETE", "could_not_run": "no answer"}) == 3
    assert of_report({"verdict": "INCOMPLETE"}, could_not_run=True) == 3


# -- never overstate -------------------------------------------------------------------------------------------

def _certified_report() -> dict:
    from report_cases import KINDS

    report = KINDS["passing"]()
    report["bindings"] = {"certified": ["jsonrpc"], "declared": ["jsonrpc", "http-json"],
                          "skipped": {"http-json": "not selected (the first binding the card declares (JSON-RPC))",
                                      "grpc": "not selected (the first binding the card declares (JSON-RPC))"}}
    return report


def test_the_verdict_names_what_was_certified_and_what_the_card_declared_beside_it():
    from streamcert.report.badge import badges
    from streamcert.report.common import must_count
    from streamcert.report.html import render_html
    from streamcert.report.markdown import render_markdown
    from streamcert.report.summary import terminal_summary

    report = _certified_report()
    met, selected = must_count(report["requirements"])
    claim = f"PASS · A2A over JSON-RPC · {met}/{selected} MUST"
    note = "the card also declares HTTP+JSON: not certified by this run (--binding all certifies every binding"
    lines = terminal_summary(report)
    assert lines[0] == f"streamcert verdict: {claim}" and lines[1].startswith(f"  {note}")
    md = render_markdown(report)
    assert md.startswith("# streamcert verdict: **PASS** · A2A over JSON-RPC · ") and ("The" + note[3:]) in md
    page = render_html(report)
    assert f"streamcert verdict: {claim}</h1>" in page and "The card also declares HTTP+JSON" in page
    made = badges(report)
    assert made["badge.json"]["message"] == claim
    assert made["badge-a2a.json"]["message"].startswith("PASS · over JSON-RPC · ")


def test_a_run_without_bindings_keeps_its_verdict_line():
    from report_cases import KINDS

    from streamcert.report.summary import terminal_summary

    assert terminal_summary(KINDS["failing"]())[0] == "streamcert verdict: FAIL"


def test_a_profile_with_nothing_judged_is_not_applicable_in_grey():
    from report_cases import KINDS

    from streamcert.report.badge import badges

    report = KINDS["passing"]()
    for entry in report["requirements"]:
        if entry["id"].startswith(("IX-", "A2A-INT-", "IDEM-")) and entry["status"] != "SKIPPED":
            entry["status"] = "UNSUPPORTED"  # an agent that does not declare the extension
    badge = badges(report)["badge-interactions.json"]
    assert badge["color"] == "lightgrey" and badge["message"].startswith("not applicable")
    assert "PASS" not in badge["message"]


def test_ctrl_c_leaves_a_report_that_says_the_run_was_interrupted_and_where(tmp_path):
    import os
    import signal

    proc = subprocess.Popen([sys.executable, "-u", "-m", "streamcert", "run", "--profile", "a2a", "--report", "rep",
                             "--stream-limit", "5"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        for line in proc.stdout:  # the live line of the first scenario: the run is under way
            if "(a2a)" in line:
                os.kill(proc.pid, signal.SIGINT)
                break
        out = proc.stdout.read()
        proc.wait(timeout=RUN_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, out[-2000:]
    report = json.loads((tmp_path / "rep" / "compatibility.json").read_text("utf-8"))
    assert report["verdict"] == "INCOMPLETE"
    said = report["interrupted"]
    assert said.startswith("the run was interrupted (Ctrl-C) ") and "test_" in said, said
    assert f"interrupted: {said}" in out
    assert "**Interrupted:** " in (tmp_path / "rep" / "report.md").read_text("utf-8")
