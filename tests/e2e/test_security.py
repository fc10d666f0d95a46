"""Declared security (A2A-AUTH-) end to end: the reference's secured agent and `serve --auth`, the
embedded run's credentials, a run without credentials, and no token in anything a run writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from streamcert.protocols import a2a
from streamcert.reference.agent.auth import CHALLENGE, TEST_TOKEN
from streamcert.reference.agent.server import ReferenceServer
from streamcert.targets import REFERENCE_HEADERS, embedded_headers

AUTH_IDS = ("A2A-AUTH-001", "A2A-AUTH-002", "A2A-AUTH-003", "A2A-AUTH-004", "A2A-AUTH-005")
ONE = ["--scenario", "security", "--binding", "jsonrpc", "--stream-limit", "5"]
USER_TOKEN = "u5er-b3arer-7f3c"


def _run(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess, dict[str, str], dict[str, str]]:
    """`streamcert run ARGS` recording cassettes: the process, each requirement's status and message. One scenario
    over one binding: the verdict is INCOMPLETE (exit code 1), the statuses are what is read."""
    proc = subprocess.run([sys.executable, "-m", "streamcert", "run", *args, "--record", "cass", "--report", "rep"],
                          cwd=cwd, capture_output=True, text=True, timeout=120)
    rep = json.loads((cwd / "rep" / "compatibility.json").read_text("utf-8"))
    return (proc, {r["id"]: r["status"] for r in rep["requirements"]},
            {r["id"]: r.get("message", "") for r in rep["requirements"]})


def _leaks(cwd: Path, proc: subprocess.CompletedProcess, secret: str) -> list[str]:
    written = [p for p in cwd.rglob("*") if p.is_file()]
    assert any(p.parent.name == "cass" for p in written) and any(p.name == "report.html" for p in written)
    return [str(p) for p in written if secret.encode() in p.read_bytes()] + [
        name for name, text in (("stdout", proc.stdout), ("stderr", proc.stderr)) if secret in text]


def test_the_embedded_run_sends_the_test_token_and_writes_it_nowhere(tmp_path):
    proc, status, _ = _run(*ONE, cwd=tmp_path)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert all(status[rid] == "PASS" for rid in AUTH_IDS), {rid: status[rid] for rid in AUTH_IDS}
    assert _leaks(tmp_path, proc, TEST_TOKEN) == []


def test_a_users_bearer_token_is_the_one_the_embedded_secured_agent_takes_and_is_written_nowhere(tmp_path):
    proc, status, messages = _run(*ONE, "--header", f"Authorization: Bearer {USER_TOKEN}", cwd=tmp_path)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stdout[-3000:] + proc.stderr[-3000:]
    # served with the user's token, refused without it: the agent took the token the run sent
    assert all(status[rid] == "PASS" for rid in AUTH_IDS), messages
    assert _leaks(tmp_path, proc, USER_TOKEN) == []


def test_a_run_without_credentials_says_what_the_card_requires_and_judges_nothing():
    with ReferenceServer(auth="serve-t0ken-91") as server, TemporaryCwd() as cwd:
        proc, status, messages = _run("--url", server.url, *ONE, cwd=cwd)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stdout[-3000:] + proc.stderr[-3000:]
    for rid in AUTH_IDS:
        assert status[rid] == "NOT_TESTED", (rid, status[rid], messages[rid])
        assert "requires the security scheme(s) bearer" in messages[rid] and "--header" in messages[rid], messages[rid]


class TemporaryCwd:
    def __enter__(self) -> Path:
        import tempfile

        self._dir = tempfile.TemporaryDirectory()
        return Path(self._dir.name)

    def __exit__(self, *exc: object) -> None:
        self._dir.cleanup()


def test_serve_auth_secures_every_agent_on_both_http_bindings():
    token = "serve-t0ken-91"
    with ReferenceServer(auth=token) as server, httpx.Client(timeout=30) as client:  # a loaded machine: no 5 s default
        card = client.get(server.url + a2a.CARD_PATH).json()  # the card itself is public
        assert card["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]
        assert card["capabilities"]["extendedAgentCard"] is True
        rpc = {"jsonrpc": "2.0", "id": 1, "method": a2a.GET_EXTENDED_CARD, "params": {}}
        url = card["supportedInterfaces"][0]["url"]
        refused = client.post(url, json=rpc, headers={"A2A-Version": "1.0"})
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == CHALLENGE
        wrong = client.post(url, json=rpc, headers={"A2A-Version": "1.0", "Authorization": f"Bearer {TEST_TOKEN}"})
        assert wrong.status_code == 401  # under --auth the test token is no credential
        served = client.post(url, json=rpc, headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token}"})
        extended = served.json()["result"]
        assert {s["id"] for s in extended["skills"]} > {s["id"] for s in card["skills"]}
        assert extended["supportedInterfaces"] == card["supportedInterfaces"]
        rest = card["supportedInterfaces"][1]["url"] + "/extendedAgentCard"
        assert client.get(rest, headers={"A2A-Version": "1.0"}).status_code == 401
        assert client.get(rest, headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token}"}).status_code == 200
        # without --auth the root agent requires nothing and declares no extended card
    with ReferenceServer() as server, httpx.Client() as client:
        card = client.get(server.url + a2a.CARD_PATH).json()
        assert "securityRequirements" not in card and "extendedAgentCard" not in card["capabilities"]
        secured = client.get(server.agent_url("secured") + a2a.CARD_PATH).json()
        assert secured["securityRequirements"] and secured["capabilities"]["extendedAgentCard"] is True


@pytest.mark.parametrize("given, sent, token", [
    ({}, REFERENCE_HEADERS, None),
    ({"X-Tenant": "t1"}, {**REFERENCE_HEADERS, "X-Tenant": "t1"}, None),
    ({"authorization": "Bearer abc123"}, {"authorization": "Bearer abc123"}, "abc123"),
    ({"Authorization": "Basic dTpw"}, {"Authorization": "Basic dTpw"}, None),
])
def test_embedded_headers_send_the_users_credential_or_the_test_token(given, sent, token):
    assert embedded_headers(given) == (sent, token)
