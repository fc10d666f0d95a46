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


class _NotFound(http.server.BaseHTTPRequestHandler):
    def _answer(self):
        body = b"Not Found"
        self.send_response(404)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def not_found_url():
    """A loopback server that answers every request 404 (a wrong --url)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


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
    failures = md[md.index("## Failures"):]
    assert failures.splitlines()[0].endswith(", 1 root cause(s)")
    assert f"**Root cause: the agent card could not be read: {tried}.**" in failures
    html = (tmp_path / "rep" / "report.html").read_text("utf-8")
    assert html.count('class="root grouped card-root"') == 1 and "Root cause: the agent card could not be read" in html
    assert json.loads((tmp_path / "rep" / "compatibility.json").read_text("utf-8"))["verdict"] == "FAIL"
