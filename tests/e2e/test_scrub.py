"""The one scrubbing mechanism (plugins/streamcert/scrub.py): what is a secret, every form it is replaced
in, the cassette and report writers that use it, and an end-to-end scan of every file and stream a run
writes against a server that echoes its credentials back."""

from __future__ import annotations

import base64
import html
import json
import os
import re
import subprocess
import sys
from urllib.parse import quote, quote_plus

from hostile import HostileServer, Request, card, head, response
from hypothesis import given
from hypothesis import strategies as st

from streamcert.framelog import Chunk, Event, Exchange, FrameLog
from streamcert.plugin import target_json
from streamcert.scrub import MASK, NAMES_KEPT, NOBODY, Scrubber
from streamcert.targets import Target

NO_ENV: dict[str, str] = {}


def scrubber(**target) -> Scrubber:
    return Scrubber.of(Target(**target), NO_ENV)


# -- what is a secret ------------------------------------------------------------------------------------

def test_every_header_value_and_the_credential_after_its_scheme():
    s = scrubber(headers={"Authorization": "Bearer tok-123456", "X-Tenant": "acme-tenant"})
    assert set(s.secrets) == {"Bearer tok-123456", "tok-123456", "acme-tenant"}
    assert s.secrets == tuple(sorted(s.secrets, key=len, reverse=True))  # longest first
    assert s.text("echo tok-123456 and Bearer tok-123456") == f"echo {MASK} and {MASK}"


def test_basic_credentials_also_give_user_and_password():
    token = base64.b64encode(b"alice-user:pa55word!").decode()
    s = scrubber(headers={"Authorization": f"Basic {token}"})
    assert {token, "alice-user:pa55word!", "alice-user", "pa55word!"} <= set(s.secrets)


def test_a_value_too_short_to_be_a_credential_is_not_scrubbed_by_value():
    s = scrubber(headers={"X-Debug": "1", "A2A-Version": "1.0"})
    assert s.secrets == ()
    assert s.text("A2A-STREAM-001 1.0") == "A2A-STREAM-001 1.0"
    assert s.headers({"X-Debug": "1", "Authorization": "x"}) == {"X-Debug": "1", "Authorization": MASK}


def test_url_user_info_and_credential_named_query_parameters():
    s = scrubber(a2a_url="http://alice:pw-98765@127.0.0.1:1/a?api_key=KEY-4242&tenant=acme&sig=x",
                 progress_url="http://127.0.0.1:2/p?Access_Token=TOK%2F77")
    assert {"alice", "pw-98765", "KEY-4242", "TOK%2F77", "TOK/77"} <= set(s.secrets)
    assert "acme" not in s.secrets  # `tenant` is not a credential name


def test_scrub_patterns_name_more_parameters_headers_and_fields():
    s = scrubber(a2a_url="http://127.0.0.1:1?tenant=acme-4242", scrub=("TENANT", "x-org*"))
    assert "acme-4242" in s.secrets
    assert s.value({"tenant": "t", "x-org-id": 7, "org": "o"}) == {"tenant": MASK, "x-org-id": MASK, "org": "o"}


def test_environment_variables_named_for_credentials():
    env = {"MY_SERVICE_TOKEN": "env-secret-1", "DB_PASSWORD": "hunter2!", "GH_KEY": "short",
           "HOME": "/home/someone-long", "XDG_SESSION_TYPE": "x11"}
    s = Scrubber.of(Target(), env)
    assert set(s.secrets) == {"env-secret-1", "hunter2!"}  # short values and other names are left


def test_the_default_environment_is_os_environ(monkeypatch):
    monkeypatch.setenv("STREAMCERT_TEST_API_KEY", "from-the-environment")
    assert "from-the-environment" in Scrubber.of(Target()).secrets


# -- the forms a secret is replaced in -------------------------------------------------------------------

def test_echoed_forms_are_replaced():
    secret = 'sk/"live"+key 42&'
    s = Scrubber([secret])
    lower_hex = re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(secret, safe=""))
    forms = [secret, quote(secret, safe=""), lower_hex, quote_plus(secret), html.escape(secret),
             json.dumps(secret)[1:-1], json.dumps(secret)[1:-1].replace("/", "\\/")]
    for form in forms:
        assert s.text(f"<{form}>") == f"<{MASK}>", form
    assert secret not in json.dumps(s.value({"a": [secret, {"b": json.dumps({"x": secret})}]}))


def test_a_secret_inside_a_longer_one_leaves_nothing():
    s = Scrubber(["abcdef", "abcdefghij"])
    assert s.text("xabcdefghijx abcdefx") == f"x{MASK}x {MASK}x"


def test_nobody_scrubs_nothing():
    value = {"authorization": "Bearer x", "l": ["s3cr3t"]}
    assert NOBODY.value(value) == value and NOBODY.text("s3cr3t") == "s3cr3t"
    assert NOBODY.url("http://u:p@h/?token=1") == "http://u:p@h/?token=1"


def test_value_masks_credential_names_but_not_the_protocols_own_fields():
    s = scrubber()
    data = {"headers": {"Authorization": "Bearer x", "Cookie": "a=b", "Set-Cookie": "c", "X-API-Key": "k",
                        "Content-Type": "application/json"},
            "access_token": "t", "client_secret": 3, "authRequired": True,
            "params": {"sessionId": "s-1", "pageToken": "p", "nextPageToken": "n", "tokens": 40}}
    out = s.value(data)
    assert out["headers"] == {"Authorization": MASK, "Cookie": MASK, "Set-Cookie": MASK, "X-API-Key": MASK,
                              "Content-Type": "application/json"}
    assert (out["access_token"], out["client_secret"], out["authRequired"]) == (MASK, MASK, True)
    assert out["params"] == data["params"]  # identifiers and counts the rules read
    assert scrubber(scrub=("sessionid",)).value(data)["params"]["sessionId"] == MASK  # unless asked



def test_names_answer_alike_asked_again_and_past_the_names_kept():
    s = scrubber()
    names = ["Authorization", "X-API-Key", "id", "status", "access_token", "sessionId"]
    first = [s.is_credential_name(n) for n in names]
    assert first == [True, True, False, False, True, False]
    for n in range(NAMES_KEPT + 10):  # a frame with more names than are kept
        assert s.is_credential_name(f"field{n}") is False
    assert [s.is_credential_name(n) for n in names] == first and s.is_credential_name("my_password") is True
    assert s.value({"Authorization": "x", "field5000": "y"}) == {"Authorization": MASK, "field5000": "y"}


def test_url_masks_user_info_and_named_parameters_and_keeps_the_rest_as_written():
    s = scrubber(a2a_url="http://127.0.0.1:1?api_key=KEY-4242")
    assert s.url("http://bob:pw@h:1/x/y?api_key=KEY-4242&q=a%20b&token=zz#f") == \
        f"http://{MASK}:{MASK}@h:1/x/y?api_key={MASK}&q=a%20b&token={MASK}#f"
    assert s.url("http://h/x?note=KEY-4242") == f"http://h/x?note={MASK}"  # by value, whatever the name


def test_bytes_and_a_secret_cut_across_chunks():
    s = Scrubber(["SECRETTOKEN"])
    assert s.bytes(b"a SECRETTOKEN b") == b"a *** b"
    parts = [b"data: SECR", b"ETTO", b"KEN\n\n", b"SECRETTOKEN"]
    assert s.pieces(parts) == [b"data: ***", b"", b"\n\n", b"***"]


@given(st.lists(st.sampled_from([b"ab", b"cd", b"abcd", b"abcdef", b"x", b"efab"]), max_size=12),
       st.lists(st.integers(min_value=0, max_value=60), max_size=6))
def test_pieces_find_what_one_pass_over_the_whole_body_finds(words, cuts):
    """Cut anywhere, the chunks keep their number and join to the whole body scrubbed at once."""
    s = Scrubber(["abcd", "abcdef", "cdab"])
    body = b"".join(words)
    points = sorted({min(c, len(body)) for c in cuts})
    parts = [body[i:j] for i, j in zip([0, *points], [*points, len(body)])]
    scrubbed = s.pieces(parts)
    assert len(scrubbed) == len(parts)
    assert b"".join(scrubbed) == s.bytes(body)


# -- the writers that use it ---------------------------------------------------------------------------------

def _echoing_log(secret: str) -> FrameLog:
    body = f'data: {{"echo": "{secret}"}}\n\n'.encode()
    ex = Exchange(label="stream", method="POST", url=f"http://h/a?api_key={secret}",
                  request_headers={"Authorization": f"Bearer {secret}", "X-Tenant": "acme"},
                  request_body={"params": {"token": secret, "sessionId": "s-1"}}, status=200,
                  response_headers={"set-cookie": "sid=1", "content-type": "text/event-stream"},
                  chunks=[Chunk(0.1, body[:12]), Chunk(0.2, body[12:])],
                  events=[Event(0, 0.2, data=json.dumps({"echo": secret}))], error=f"echoed {secret}",
                  notes={"streaming": True})
    return FrameLog(scenario="stream-basic", target=f"http://u:{secret}@h/a", exchanges=[ex], notes={"n": secret})


def test_cassette_is_scrubbed_everywhere_and_keeps_its_shape(tmp_path):
    secret = "s3cr3t-T0KEN"
    s = Scrubber.of(Target(headers={"Authorization": f"Bearer {secret}"}), NO_ENV)
    log = _echoing_log(secret)
    path = log.save(tmp_path / "c.json", scrubber=s)
    text = path.read_text("utf-8")
    again = FrameLog.load(path)
    raw = b"".join(c.data for c in again.exchanges[0].chunks)
    assert secret not in text and secret.encode() not in raw
    ex = again.exchanges[0]
    assert [c.t for c in ex.chunks] == [0.1, 0.2] and raw == b'data: {"echo": "***"}\n\n'
    assert ex.request_headers == {"Authorization": MASK, "X-Tenant": "acme"}
    assert ex.response_headers["set-cookie"] == MASK and ex.request_body["params"]["sessionId"] == "s-1"
    assert ex.events[0].payload == {"echo": MASK}
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]  # written through a temporary file, replaced


def test_cassette_without_a_scrubber_still_masks_credential_names():
    out = _echoing_log("s3cr3t-T0KEN").to_json()
    assert out["exchanges"][0]["request_headers"]["Authorization"] == MASK


def test_report_target_block_shows_urls_scrubbed():
    target = Target(a2a_url="http://u:pw-98765@127.0.0.1:1?api_key=KEY-4242")
    block = target_json(target, Scrubber.of(target, NO_ENV), fault=None, embedded=False)
    assert block["a2a"] == f"http://{MASK}:{MASK}@127.0.0.1:1?api_key={MASK}"


# -- end to end: a server that echoes every credential, and every byte the run writes ----------------------

SECRET_TOKEN = "SECRETTOKEN-7c1d"
SECRET_KEY = "SECRETKEY-5b2e"
SECRET_TENANT = "SECRETTENANT/+9a"  # "/" and "+": its percent-encoded forms differ from it
SECRET_ENV = "SECRETENV-3f8c"
SECRETS = (SECRET_TOKEN, SECRET_KEY, SECRET_TENANT, SECRET_ENV)


def _echo(request: Request) -> str:
    """Every credential the server was given, in the forms servers echo them: header values, the token
    alone, the query string, percent-encoded, and the environment value (as if it had leaked)."""
    values = list(request.headers.values())
    return " | ".join([*values, SECRET_TOKEN, request.target, quote(SECRET_TENANT, safe=""), SECRET_ENV,
                       quote_plus(SECRET_TENANT)])


async def _echoing_agent(request: Request, writer) -> None:
    echo = _echo(request)
    if request.method == "GET":
        body = card("http://" + request.headers["host"], description=echo)
        writer.write(response(body, headers_echo=echo.replace("\r", " ").replace("\n", " ")[:4000]))
        return
    rpc = request.json() if request.body else {}
    rid = rpc.get("id", 1) if isinstance(rpc, dict) else 1
    task = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING",
            "message": {"role": "ROLE_AGENT", "messageId": "m-1", "parts": [{"text": echo}]}}}
    if "text/event-stream" in request.headers.get("accept", ""):
        frames = [{"task": task}, {"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {
            "state": "TASK_STATE_COMPLETED", "message": {"role": "ROLE_AGENT", "messageId": "m-2",
                                                         "parts": [{"text": echo}]}}}}]
        writer.write(head(200, "text/event-stream"))
        for frame in frames:
            data = json.dumps({"jsonrpc": "2.0", "id": rid, "result": frame}).encode()
            writer.write(b"data: " + data + b"\n\n")
        return
    writer.write(response({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": echo}}))


def _secret_forms(secret: str) -> list[str]:
    """The secret raw, percent-encoded, and as base64 at each of the three alignments it can take
    inside a longer base64 text (a cassette's chunk bodies)."""
    forms = {secret, quote(secret, safe=""), quote_plus(secret)}
    raw = secret.encode()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode()
        first = -(-shift // 3) * 4  # the first group made of the secret's bytes alone
        last = ((shift + len(raw)) // 3) * 4
        forms.add(encoded[first:last])
    return sorted(f for f in forms if f)


# A pytest plugin given with -p: a fault outside the scenario whose traceback (with -l, its locals), captured
# output and log all hold a secret, as a harness fault or a user's own conftest might.
LEAKY_PLUGIN = """
import logging, os, pytest

@pytest.fixture(autouse=True)
def leaky(request):
    token = os.environ["MY_SERVICE_TOKEN"]
    print("captured", token)
    logging.getLogger("leaky").warning("logged %s", token)
    if request.node.name == "test_card":
        raise RuntimeError(f"harness fault holding {token}")
"""


def test_no_secret_in_any_file_or_stream_a_run_writes(tmp_path):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "leaky.py").write_text(LEAKY_PLUGIN)
    with HostileServer(_echoing_agent, lifetime=120) as server:
        env = {**os.environ, "MY_SERVICE_TOKEN": SECRET_ENV,
               "PYTHONPATH": os.pathsep.join([str(tmp_path / "plugins"), os.environ.get("PYTHONPATH", "")])}
        args = [sys.executable, "-m", "streamcert", "run", "--url", f"{server.url}?api_key={SECRET_KEY}",
                "--header", f"Authorization: Bearer {SECRET_TOKEN}", "--scrub", "x-tenant",
                "--header", f"X-Tenant: {SECRET_TENANT}", "--record", "cass", "--report", "rep",
                "--profile", "a2a", "--timeout", "3", "--stream-limit", "3",
                "--", "-k", "test_card or test_stream_basic", "-vv", "--log-level=INFO", "-l", "-p", "leaky"]
        proc = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        asked = list(server.requests)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    # The run really carried the secrets to the server, so there was something to scrub.
    assert any(SECRET_TOKEN in r.headers.get("authorization", "") and SECRET_KEY in r.target for r in asked)
    assert any(r.method == "POST" for r in asked), [r.target for r in asked]
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    names = {p.name for p in written}
    assert {"compatibility.json", "report.md", "report.html", "junit.xml"} <= names, names
    assert any(p.parent.name == "cass" for p in written), names
    texts = {str(p.relative_to(tmp_path)): p.read_bytes().decode("utf-8", "replace") for p in written}
    for path in written:  # a body stored as !!binary would hide a secret from the text: read back, too
        if path.parent.name == "cass":
            for ex in FrameLog.load(path).exchanges:
                texts[f"{path.name} {ex.label} body"] = ex.wire_bytes.decode("utf-8", "replace")
    texts["stdout"], texts["stderr"] = proc.stdout, proc.stderr
    assert (tmp_path / "plugins" / "leaky.py").is_file()
    del texts["plugins/leaky.py"]
    # What carried the secrets was shown: httpx's URL lines, the fault's traceback, locals, output and log.
    for shown in ("HTTP Request", "harness fault holding ***", "captured ***", "logged ***"):
        assert shown in proc.stdout, shown
    assert re.search(r"token\s+= '\*\*\*'", proc.stdout)  # the local, shown by -l
    leaks = [(where, secret, form) for secret in SECRETS for form in _secret_forms(secret)
             for where, text in texts.items() if form in text]
    assert not leaks, leaks
    rep = json.loads((tmp_path / "rep" / "compatibility.json").read_text("utf-8"))
    assert rep["target"]["a2a"] == f"{server.url}?api_key={MASK}"
    assert MASK in texts["rep/junit.xml"] or MASK in texts["rep/compatibility.json"]


# -- credentials inside URL-shaped environment values -----------------------------------------------------

DB_PASSWORD = "db-pa55-7e1c"
PROXY_TOKEN = "pr0xy-t0k-4d2a"


def test_the_user_info_of_a_url_in_any_environment_value_is_a_secret():
    env = {"DATABASE_URL": f"postgres://app:{DB_PASSWORD}@db/x", "HTTPS_PROXY": f"http://:{PROXY_TOKEN}@p:3128",
           "MIRRORS": "https://a.example/simple, https://bob-user:p%40ss-word@b.example/simple?api_key=k3y-9c1e",
           "HOME": "/home/x", "PLAIN_URL": "https://example.org/no-credentials"}
    s = Scrubber.of(Target(), env)
    assert {DB_PASSWORD, PROXY_TOKEN, "bob-user", "p%40ss-word", "p@ss-word", "k3y-9c1e"} <= set(s.secrets)
    assert "app" not in s.secrets and "example.org" not in " ".join(s.secrets)  # too short; no user info there
    assert s.text(f"DATABASE_URL=postgres://app:{DB_PASSWORD}@db/x") == "DATABASE_URL=postgres://app:***@db/x"
    assert set(Scrubber.of(Target(), {"PLAIN_URL": "https://example.org/x?page=2"}).secrets) == set()


ECHOING_CLIENT = """
import json, os, sys, httpx
url, db = os.environ["STREAMCERT_URL"], os.environ["DATABASE_URL"]
print("connecting with", db, file=sys.stderr)
h = {"A2A-Version": "1.0", "X-Debug-Db": db}
rpc = httpx.get(url + "/.well-known/agent-card.json", headers=h).json()["supportedInterfaces"][0]["url"]
ctx = json.loads(os.environ["STREAMCERT_CONTEXT"])
body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
        "params": {"message": dict(ctx["message"], messageId="m-1"), "metadata": {"db": db}}}
with httpx.stream("POST", rpc, json=body, headers={**h, "Accept": "text/event-stream"}) as r:
    r.read()
print("using", db)
print(json.dumps({"task": {"id": "task-basic"}, "db": db}))
sys.exit(4)
"""


def test_a_client_command_echoing_a_url_with_a_password_leaks_it_nowhere(tmp_path):
    """A client that echoes DATABASE_URL (stderr, stdout, its view, a request header and body): the password
    is in no file and no stream the run writes."""
    (tmp_path / "client.py").write_text(ECHOING_CLIENT, "utf-8")
    env = {**os.environ, "DATABASE_URL": f"postgres://app:{DB_PASSWORD}@db/x"}
    args = [sys.executable, "-m", "streamcert", "run", "--client-cmd", f"{sys.executable} client.py",
            "--profile", "client", "--scenario", "client-basic", "--record", "cass", "--report", "rep",
            "--timeout", "10"]
    proc = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file() and p.name != "client.py")
    assert {"compatibility.json", "report.md", "report.html", "junit.xml"} <= {p.name for p in written}
    assert any(p.parent.name == "cass" for p in written)
    texts = {str(p.relative_to(tmp_path)): p.read_bytes().decode("utf-8", "replace") for p in written}
    for path in written:
        if path.parent.name == "cass":
            for ex in FrameLog.load(path).exchanges:
                texts[f"{path.name} {ex.label} body"] = ex.wire_bytes.decode("utf-8", "replace")
    texts["stdout"], texts["stderr"] = proc.stdout, proc.stderr
    leaks = [(where, form) for form in _secret_forms(DB_PASSWORD) for where, text in texts.items() if form in text]
    assert not leaks, leaks
    shown = "".join(texts.values())
    assert f"postgres://app:{MASK}@db/x" in shown  # the client's echo was kept, the password masked
