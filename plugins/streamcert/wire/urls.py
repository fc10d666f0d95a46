"""The URLs the suite builds from the target's, and where the target's credentials may go.

A base URL may carry a query (`http://host:port?api_key=…`): paths are joined before it and the query
is kept on every request to the target's origin. An origin is scheme, host and port (RFC 6454): a card
whose interface URL, or a redirect, names another origin is another server, and the credentials given
for the target (its headers, the user info and the query of its URL) go there only when the run
allows that origin (`--allow-origin`).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def join(base: str, path: str) -> str:
    """`base` with `path` added to its path, its query kept after it (…/agent?k=1 + /x → …/agent/x?k=1)."""
    parts = urlsplit(base)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + path, parts.query, ""))


def origin(url: str) -> str:
    """scheme://host:port of a URL, the host in lower case and the port explicit (80 and 443 when none is
    given); the URL itself when it names no host."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if not scheme or not host:
        return url
    if ":" in host:
        host = f"[{host}]"
    port = port or DEFAULT_PORTS.get(scheme)
    return f"{scheme}://{host}:{port}" if port else f"{scheme}://{host}"


def carry(url: str, base: str) -> str:
    """`url` (on the origin of `base`) with what `base` carries that it lacks: the user info, and the
    query parameters it does not name itself."""
    parts, given = urlsplit(url), urlsplit(base)
    netloc = parts.netloc
    if given.username is not None and "@" not in netloc:
        netloc = given.netloc.rpartition("@")[0] + "@" + netloc
    query = parts.query
    if given.query:
        have = {name for name, _ in parse_qsl(query, keep_blank_values=True)}
        extra = [(n, v) for n, v in parse_qsl(given.query, keep_blank_values=True) if n not in have]
        if extra:
            query = "&".join(q for q in (query, urlencode(extra)) if q)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


@dataclass(frozen=True)
class Passage:
    """Whether a request may go to a URL, and with what: `refused` (the sentence of an exchange not sent),
    else `credentials` (send the target's headers and URL credentials) and a `note` for the log."""

    url: str  # the URL to send to (carrying the target's query and user info where they may go)
    credentials: bool = True
    refused: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Origins:
    """The target's origin, whether credentials were given for it, and the other origins allowed them."""

    base: str  # the target's URL
    credentials: bool  # headers were given, or the URL carries user info or a query
    allowed: tuple[str, ...] = ()

    @classmethod
    def of(cls, base: str, headers: dict[str, str] | None = None, allowed: tuple[str, ...] | list[str] = ()) -> Origins:
        parts = urlsplit(base)
        given = bool(headers) or bool(parts.query) or parts.username is not None
        return cls(base, given, tuple(origin(a.rstrip("/")) for a in allowed))

    @property
    def target(self) -> str:
        return origin(self.base)

    def passage(self, url: str) -> Passage:
        there = origin(url)
        if there == self.target:
            return Passage(carry(url, self.base))
        if there in self.allowed:
            return Passage(carry(url, self.base), note=f"sent to {there}, another origin than the target "
                                                       f"({self.target}), with the credentials: allowed by --allow-origin")
        if self.credentials:
            return Passage(url, credentials=False, refused=(
                f"not sent: {there} is another origin than the target ({self.target}), and the credentials "
                f"given for the target (--header, the user info or query of its URL) go only there; allow it "
                f"with --allow-origin {there}"))
        return Passage(url, credentials=False, note=f"sent to {there}, another origin than the target "
                                                    f"({self.target}): no credentials were given, so none went there")
