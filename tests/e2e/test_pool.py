"""wire/pool.py: one verifying TLS context per process, none built for plain HTTP, TLS verified as httpx's default
verifies it."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from pathlib import Path

import httpx
import pytest

from streamcert.framelog import FrameLog
from streamcert.wire import pool
from streamcert.wire.a2a_client import A2AClient
from streamcert.wire.pool import Pool

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(ANSWER)
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
        pass
    finally:
        writer.close()


async def _serve(tls: ssl.SSLContext | None, requests) -> list:
    """Start a loopback server (TLS with `tls`), run `requests(url)`, return what it returned."""
    server = await asyncio.start_server(_answer, "127.0.0.1", 0, ssl=tls)
    port = server.sockets[0].getsockname()[1]
    try:
        return await requests(f"{'https' if tls else 'http'}://127.0.0.1:{port}")
    finally:
        server.close()
        await server.wait_closed()


@pytest.fixture
def built(monkeypatch) -> list[ssl.SSLContext]:
    """Every verifying TLS context built from here on (httpx builds its default with ssl.create_default_context),
    the process's shared one forgotten first so that the test sees whether it gets built."""
    made: list[ssl.SSLContext] = []
    original = ssl.create_default_context

    def create_default_context(*args, **kwargs):
        made.append(original(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(ssl, "create_default_context", create_default_context)
    pool.verifying_context.cache_clear()
    yield made
    pool.verifying_context.cache_clear()


def test_plain_http_builds_no_tls_context(built):
    async def requests(url: str) -> list:
        async with A2AClient(url, FrameLog(scenario="pool")) as client:
            card = await client.get_card()
        async with httpx.AsyncClient(transport=Pool()) as http:
            answer = await http.get(url + "/x")
        return [card.status, answer.status_code]

    assert asyncio.run(_serve(None, requests)) == [200, 200]
    assert built == []


def test_every_https_pool_shares_the_one_verifying_context(built):
    first, second = Pool(), Pool()
    for p in (first, second):
        p._for(True)
    assert len(built) == 1
    shared = built[0]
    assert first._for(True)._pool._ssl_context is shared is second._for(True)._pool._ssl_context
    # httpx's default context: hostname checked, certificate required, the CA bundle loaded
    assert shared.check_hostname and shared.verify_mode == ssl.CERT_REQUIRED
    assert shared.cert_store_stats()["x509_ca"] > 0
    # the plain-HTTP pool's context trusts nothing: a TLS connection through it could never succeed unverified
    plain = pool.no_tls()
    assert plain.check_hostname and plain.verify_mode == ssl.CERT_REQUIRED
    assert plain.cert_store_stats()["x509_ca"] == 0


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test's self-signed certificate")
def test_an_untrusted_certificate_is_refused(tmp_path: Path, built):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)

    async def requests(url: str) -> list:
        async with httpx.AsyncClient(transport=Pool()) as http:
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await http.get(url + "/x")
        # with its certificate trusted the server answers: the refusal above was the verification
        trusting = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        trusting.load_verify_locations(cert)
        async with httpx.AsyncClient(verify=trusting) as http:
            return [(await http.get(url + "/x")).status_code]

    assert asyncio.run(_serve(tls, requests)) == [200]
    assert built == [pool.verifying_context()]
