"""The one scrubbing mechanism: every secret of a run is replaced by `MASK` in everything it writes
(cassettes, compatibility.json, report.md, report.html, junit.xml, the terminal).

What is secret (`Scrubber.of`):
- every `--header` value, and for an Authorization-style value also the credential after its scheme
  (`Bearer X` → `X` too: a server may echo the token alone; `Basic` also its decoded `user:password`);
- the user info (user and password) of every target URL;
- the values of the target URLs' query parameters whose names match the name patterns;
- the values of environment variables whose names match the name patterns;
- the user info (and credential-named query parameters) of every URL inside an environment value, whatever
  the variable's name (`DATABASE_URL=postgres://app:pw@db/x`: a client command may echo it);
- the credentials the suite itself gives a webhook config (`WEBHOOK_CREDENTIALS`, one per process: an agent
  may echo them in List and Get answers, A2A 1.0.1 §13.2 has them treated as secrets).
Name patterns: `DEFAULT_PATTERNS` plus the run's `--scrub PATTERN` globs, compared in any case.

Secrets are replaced by value wherever they appear, also in the forms a server may echo them in
(percent-encoded, JSON-escaped, HTML-escaped). By name: a header, JSON field or query parameter whose
name is a credential name (`CREDENTIAL_NAMES`) or matches a pattern gets `MASK` whatever its value.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import html
import json
import os
import re
import secrets as _random
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, quote_plus, unquote, unquote_plus, urlsplit, urlunsplit

if TYPE_CHECKING:
    from .targets import Target

MASK = "***"
# The credentials of the webhook configs the push drivers make (Authorization: Bearer <this>): minted per
# process, so every scrubber of the run knows them without a channel from the driver.
WEBHOOK_CREDENTIALS = f"streamcert-webhook-{_random.token_hex(12)}"

DEFAULT_PATTERNS = ("*token*", "*key*", "*secret*", "*passw*", "*auth*", "*credential*", "*session*",
                    "*signature*", "*cookie*")
# Header names that always carry credentials, whatever their value looks like.
CREDENTIAL_NAMES = ("authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key")
# Field names the protocols themselves define that the default patterns happen to match: identifiers,
# cursors and counts, not credentials. Masking them would change what `streamcert check` judges in a
# cassette (ACP's sessionId, ListTasks' pageToken, the script's `tokens`). A `--scrub` pattern still masks them.
PROTOCOL_FIELDS = frozenset({"sessionid", "sessionupdate", "loadsession", "pagetoken", "nextpagetoken", "tokens",
                             "max_tokens", "authmethods"})
# Authorization schemes whose credential follows a space (RFC 9110 §11.4, and common vendor ones).
AUTH_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "apikey", "api-key", "negotiate", "hmac", "dpop",
                          "mac", "hoba", "aws4-hmac-sha256"})

# Values this short are not scrubbed by value: a credential is never that short, and masking "1" or
# "yes" would blank out frame numbers and words everywhere. Environment variables get a higher bar:
# many are named like credentials and hold short incidental values (XDG_SESSION_TYPE=x11,
# XDG_SESSION_ID=2). A short value under a credential name is still masked by name.
MIN_SECRET_CHARS = 4
NAMES_KEPT = 4096  # names whose is_credential_name answer a scrubber keeps
MIN_ENV_SECRET_CHARS = 6
# A URL inside an environment value: a scheme, `://`, and what follows up to a space, a quote or a separator
# of a list of URLs (`,`, `;`); `|` and `<>` end it too (a URL never holds them unencoded).
URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s,;\"'<>|]+")


class Scrubber:
    """Replaces a run's secrets (by value, in every echoed form) and credential-named values (by name)."""

    def __init__(self, secrets: Iterable[str] = (), patterns: Iterable[str] = (), names: Iterable[str] = (),
                 *, user_patterns: Iterable[str] = (), exempt: Iterable[str] = ()) -> None:
        """`secrets`: values to replace wherever they appear; `names`: exact names (any case) and
        `patterns` (globs, any case) whose values are masked, except the `exempt` names, which only the
        run's own `user_patterns` (from --scrub) reach."""
        self.secrets: tuple[str, ...] = tuple(sorted({s for s in secrets if s}, key=lambda s: (-len(s), s)))
        self.base_patterns = tuple(p.lower() for p in patterns)
        self.user_patterns = tuple(p.lower() for p in user_patterns)
        self.patterns = self.base_patterns + self.user_patterns
        self.names = frozenset(n.lower() for n in names)
        self.exempt = frozenset(n.lower() for n in exempt)
        # WEBHOOK_CREDENTIALS is masked by every scrubber, whatever the run's secrets.
        forms = sorted({form for s in (*self.secrets, WEBHOOK_CREDENTIALS) for form in echoed_forms(s)},
                       key=lambda s: (-len(s), s))
        self._needles = tuple(forms)
        self._bneedles = tuple(f.encode("utf-8") for f in forms)
        # One alternation, longest first, so a secret inside a longer one leaves nothing of the longer.
        self._text_re = re.compile("|".join(map(re.escape, forms))) if forms else None
        self._bytes_re = re.compile(b"|".join(map(re.escape, self._bneedles))) if forms else None
        self._longest = max((len(b) for b in self._bneedles), default=0)
        self._named: dict[str, bool] = {}  # is_credential_name's answers: a report repeats a few hundred names

    @classmethod
    def of(cls, target: Target, environ: Mapping[str, str] | None = None) -> Scrubber:
        """The scrubber of a run on `target` (its headers, URLs and `--scrub` patterns) in `environ`
        (default: this process's environment)."""
        environ = os.environ if environ is None else environ
        by_name = cls(patterns=DEFAULT_PATTERNS, names=CREDENTIAL_NAMES, user_patterns=target.scrub,
                      exempt=PROTOCOL_FIELDS)
        secrets: list[str] = []
        for name, value in target.headers.items():
            secrets += header_secrets(name, value, credential=by_name.is_credential_name(name))
        for url in target_urls(target):
            secrets += url_secrets(url, by_name.is_credential_name)
        for name, value in environ.items():
            if by_name.is_credential_name(name) and len(value.strip()) >= MIN_ENV_SECRET_CHARS:
                secrets.append(value.strip())
            secrets += env_url_secrets(value, by_name.is_credential_name)
        return by_name.with_secrets(secrets)

    def with_secrets(self, secrets: Iterable[str]) -> Scrubber:
        """The same names and patterns, with these secret values (more or fewer)."""
        return Scrubber(secrets, self.base_patterns, self.names, user_patterns=self.user_patterns,
                        exempt=self.exempt)

    # -- names ---------------------------------------------------------------------------------------
    def is_credential_name(self, name: str) -> bool:
        """Whether values under this header, field, parameter or variable name are credentials."""
        known = self._named.get(name)
        if known is None:
            low = name.lower()
            patterns = self.user_patterns if low in self.exempt else self.patterns
            known = low in self.names or any(fnmatch.fnmatchcase(low, p) for p in patterns)
            if len(self._named) < NAMES_KEPT:  # bounded: a hostile frame may hold any number of names
                self._named[name] = known
        return known

    # -- values --------------------------------------------------------------------------------------
    def text(self, s: str) -> str:
        if self._text_re is None or not isinstance(s, str) or not any(n in s for n in self._needles):
            return s
        return self._text_re.sub(MASK, s)

    def bytes(self, b: bytes) -> bytes:
        if self._bytes_re is None or not any(n in b for n in self._bneedles):
            return b
        return self._bytes_re.sub(MASK.encode("ascii"), bytes(b))

    def pieces(self, parts: Sequence[bytes]) -> list[bytes]:
        """`bytes()` over a body that arrived in `parts` (a stream's chunks), also where a secret is cut
        across two parts: the mask goes in the part where the secret begins, the rest of it is dropped
        from the parts after. The parts keep their number (and so their arrival times)."""
        return list(self.iter_pieces(parts))

    def iter_pieces(self, parts: Sequence[bytes]) -> Iterator[bytes]:
        """`pieces()` one part at a time: `parts` is read twice (where the secrets are, then each part
        scrubbed), so a sequence that reads its parts from disk on access never has them all in memory."""
        spans = self._spans(parts) if self._bytes_re is not None else []
        mask = MASK.encode("ascii")
        start, k = 0, 0
        for i in range(len(parts)):
            part = parts[i]
            end = start + len(part)
            while k < len(spans) and spans[k][1] <= start:
                k += 1
            if k >= len(spans) or spans[k][0] >= end:
                yield part
                start = end
                continue
            kept, pos, j = [], start, k
            while j < len(spans) and spans[j][0] < end:
                s, e = spans[j]
                if s > pos:
                    kept.append(part[pos - start:s - start])
                if s >= start:
                    kept.append(mask)
                pos = max(pos, min(e, end))
                if e > end:
                    break
                j += 1
            if pos < end:
                kept.append(part[pos - start:])
            yield b"".join(kept)
            start = end

    def _spans(self, parts: Sequence[bytes]) -> list[tuple[int, int]]:
        """Where secrets are in the concatenation of `parts` (start, end), as one pass of the regex over
        the whole body would find them, but part by part: each window is the part plus the last bytes
        of the ones before. A match is taken only once a whole needle's length follows its start (or
        at the very end), so a longer secret that the next part completes is never cut short."""
        assert self._bytes_re is not None
        spans: list[tuple[int, int]] = []
        reach = self._longest
        tail, tail_start = b"", 0  # the bytes not yet settled, from absolute offset tail_start
        for n in range(len(parts)):
            window, last = tail + parts[n], n == len(parts) - 1
            settled = len(window) if last else max(len(window) - reach + 1, 0)  # starts decided here
            pos = 0
            if any(needle in window for needle in self._bneedles):
                for m in self._bytes_re.finditer(window):
                    if m.start() >= settled:
                        break
                    spans.append((tail_start + m.start(), tail_start + m.end()))
                    pos = m.end()
            cut = max(pos, settled)
            tail, tail_start = window[cut:], tail_start + cut
        return spans

    def value(self, obj: Any) -> Any:
        """A JSON-like value with credential-named fields masked and every string scrubbed."""
        if isinstance(obj, dict):
            out = {}
            for key, item in obj.items():
                if isinstance(key, str) and _scalar(item) and self.is_credential_name(key):
                    out[key] = MASK
                else:
                    out[self.text(key) if isinstance(key, str) else key] = self.value(item)
            return out
        if isinstance(obj, (list, tuple)):
            return [self.value(item) for item in obj]
        if isinstance(obj, str):
            return self.text(obj)
        return obj

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """Header name → value, credential-named ones masked whatever their value, the rest scrubbed."""
        return {name: MASK if self.is_credential_name(name) else self.text(value) for name, value in headers.items()}

    def url(self, u: str) -> str:
        """The URL with its user info and credential-named query parameters masked, then scrubbed."""
        if not isinstance(u, str):
            return u
        try:
            parts = urlsplit(u)
        except ValueError:
            return self.text(u)
        netloc = parts.netloc
        if "@" in netloc and self.names:  # a credential by its place, as Authorization is by its name
            userinfo, _, host = netloc.rpartition("@")
            netloc = (f"{MASK}:{MASK}" if ":" in userinfo else MASK) + "@" + host
        query = "&".join(self._query_item(item) for item in parts.query.split("&")) if parts.query else ""
        return self.text(urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment)))

    def _query_item(self, item: str) -> str:
        name, eq, _ = item.partition("=")
        if eq and self.is_credential_name(unquote_plus(name)):
            return f"{name}={MASK}"
        return item

    def __bool__(self) -> bool:  # a scrubber is always something to call, even NOBODY
        return True


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def echoed_forms(secret: str) -> set[str]:
    """The forms in which a server (or one of our writers) may show `secret`."""
    forms = {secret, quote(secret, safe=""), quote(secret), quote_plus(secret), html.escape(secret),
             json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
             json.dumps(secret)[1:-1].replace("/", "\\/")}
    forms |= {_lower_hex(f) for f in list(forms) if "%" in f}
    return {f for f in forms if f}


def _lower_hex(encoded: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)


def header_secrets(name: str, value: str, *, credential: bool) -> list[str]:
    """The secrets a `--header NAME: VALUE` gives: the value, and the credential after its scheme."""
    value = value.strip()
    found = [value] if len(value) >= MIN_SECRET_CHARS else []
    scheme, _, rest = value.partition(" ")
    rest = rest.strip()
    if rest and (credential or scheme.lower() in AUTH_SCHEMES):
        if len(rest) >= MIN_SECRET_CHARS:
            found.append(rest)
        if scheme.lower() == "basic":  # base64 of user:password; a server may echo either half
            try:
                decoded = base64.b64decode(rest, validate=True).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                decoded = ""
            user, _, password = decoded.partition(":")
            found += [s for s in (decoded, user, password) if len(s) >= MIN_SECRET_CHARS]
    return found


def url_secrets(url: str, is_credential_name) -> list[str]:
    """The user info of `url`, and the values of its credential-named query parameters."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        user, _, password = userinfo.partition(":")
        for raw in (user, password):
            if raw:
                found += [raw, unquote(raw)]
    for item in parts.query.split("&") if parts.query else ():
        name, eq, value = item.partition("=")
        if eq and value and is_credential_name(unquote_plus(name)):
            found += [value, unquote_plus(value)]
    return [s for s in found if len(s) >= MIN_SECRET_CHARS]


def env_url_secrets(value: str, is_credential_name) -> list[str]:
    """The secrets of the URLs inside an environment value (`DATABASE_URL=postgres://app:pw@db/x`, a proxy
    or index URL among others in a list): each one's user info, and its credential-named query parameters,
    as for a target URL (`url_secrets`). A client command may echo its environment: whatever the
    variable's name, a password in a URL is a secret."""
    if "://" not in value:
        return []
    return [secret for url in URL_IN_TEXT.findall(value) for secret in url_secrets(url, is_credential_name)]


def target_urls(target: Target) -> list[str]:
    from .targets import SLOTS

    urls = [getattr(target, slot.field) for slot in SLOTS if slot.field.endswith("_url")]
    return [u for u in urls if isinstance(u, str) and u]


NOBODY = Scrubber()  # scrubs nothing
# Credential names alone (no secret values): what a cassette saved without a run's scrubber still gets.
BY_NAME = Scrubber(patterns=DEFAULT_PATTERNS, names=CREDENTIAL_NAMES, exempt=PROTOCOL_FIELDS)
