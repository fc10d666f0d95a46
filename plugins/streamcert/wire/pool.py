"""The connection pool under every HTTP client the suite opens, with one TLS context per process.

httpx builds a new SSL context for each transport it makes, loading the certifi bundle again (tens of
milliseconds each, more on a loaded machine), and a run opens a client for each scenario it plays. Here the
verifying context is built once per process, and only when an https request first needs it: a run against
plain-HTTP targets (the embedded reference, a loopback agent) builds none. It is the context httpx's own default
is (`httpx.create_ssl_context()`: certifi's bundle, or SSL_CERT_FILE / SSL_CERT_DIR when set), so TLS is
verified exactly as before.

`Pool` sends each request to httpx's connection pool for its scheme: https requests to one made with the shared
verifying context, http requests to one made with `NO_TLS`, a context that trusts no certificate at all (a
plain-HTTP request never starts TLS; were one ever to, it could not succeed unverified).
"""

from __future__ import annotations

import ssl
from functools import cache

import httpx


@cache
def verifying_context() -> ssl.SSLContext:
    """The process's one verifying TLS context: httpx's default, built on first use."""
    return httpx.create_ssl_context()


@cache
def no_tls() -> ssl.SSLContext:
    """A context for pools that serve plain HTTP only: hostname checked, certificates required, none trusted."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class Pool(httpx.AsyncBaseTransport):
    """httpx's connection pool (`httpx.AsyncHTTPTransport` with `limits`), one per scheme, each made on first use."""

    def __init__(self, limits: httpx.Limits | None = None) -> None:
        self.limits = limits
        self._pools: dict[bool, httpx.AsyncHTTPTransport] = {}

    def _for(self, tls: bool) -> httpx.AsyncHTTPTransport:
        pool = self._pools.get(tls)
        if pool is None:
            more = {} if self.limits is None else {"limits": self.limits}
            pool = self._pools[tls] = httpx.AsyncHTTPTransport(verify=verifying_context() if tls else no_tls(), **more)
        return pool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._for(request.url.scheme != "http").handle_async_request(request)

    async def aclose(self) -> None:
        for pool in list(self._pools.values()):
            await pool.aclose()
        self._pools.clear()
