"""The keys a run trusts to verify agent card signatures (`--card-key FILE`, A2A 1.0.1 §8.4.3: a trusted key
store). A file holds one JWK or a JWKS (RFC 7517 §4, §5); only public keys are kept: a private key's public part
is taken and its private members never leave this module, and a symmetric (`oct`) key is refused, since a card
signature is checked with a key anyone may hold. Public keys are not secrets: the run records them (the card
scenario's notes, so that `streamcert check` verifies a cassette offline) and the report may name their `kid`.

A file is read within bounds before any parsing: at most MAX_FILE_BYTES, at most MAX_KEYS keys in all. Whatever
is wrong with a file is one sentence (CardKeyError), which the command line turns into a usage error (exit 2).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

MAX_FILE_BYTES = 256 * 1024  # a JWKS of a few dozen RSA-4096 keys fits many times over
MAX_KEYS = 64  # keys trusted in one run, over every --card-key file
PUBLIC_KTY = ("RSA", "EC", "OKP")


class CardKeyError(ValueError):
    """A --card-key file the run cannot use; the message is one line naming the file."""


def _read(path: str) -> Any:
    file = Path(path)
    try:
        size = file.stat().st_size
        if size > MAX_FILE_BYTES:
            raise CardKeyError(f"{path}: {size} bytes; a key file is read up to {MAX_FILE_BYTES} bytes")
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise CardKeyError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise CardKeyError(f"{path}: not UTF-8 text, so not a JWK or JWKS (JSON)") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CardKeyError(f"{path}: not JSON ({exc.msg} at line {exc.lineno}), so not a JWK or JWKS") from None


def _public(path: str, where: str, jwk: Any) -> dict[str, Any]:
    from joserfc.errors import JoseError
    from joserfc.jwk import JWKRegistry

    if not isinstance(jwk, dict) or not isinstance(jwk.get("kty"), str):
        raise CardKeyError(f"{path}: {where} is not a JWK (an object with kty)")
    if jwk["kty"] not in PUBLIC_KTY:
        raise CardKeyError(f"{path}: {where} has kty {jwk['kty']!r}; card signatures are verified with public keys "
                           f"({', '.join(PUBLIC_KTY)}), and a symmetric key would be a secret")
    try:
        key = JWKRegistry.import_key(jwk)
        public = key.as_dict(private=False)
    except (JoseError, ValueError, TypeError, KeyError) as exc:  # the library's word on a malformed key
        raise CardKeyError(f"{path}: {where} is not a usable {jwk['kty']} key ({type(exc).__name__})") from None
    for member in ("kid", "alg", "use"):  # what names and restricts the key, kept as given
        if isinstance(jwk.get(member), str):
            public[member] = jwk[member]
    return public


def load(path: str) -> list[dict[str, Any]]:
    """The public JWKs a --card-key file holds (a JWK, or a JWKS's `keys`). Raises CardKeyError."""
    doc = _read(path)
    if isinstance(doc, dict) and "keys" in doc:
        keys = doc["keys"]
        if not isinstance(keys, list) or not keys:
            raise CardKeyError(f"{path}: a JWKS whose keys is not a non-empty array")
        if len(keys) > MAX_KEYS:
            raise CardKeyError(f"{path}: a JWKS of {len(keys)} keys; a run trusts at most {MAX_KEYS}")
        return [_public(path, f"keys[{i}]", jwk) for i, jwk in enumerate(keys)]
    return [_public(path, "the JWK", doc)]


def load_all(paths: Iterable[str]) -> list[dict[str, Any]]:
    """The public keys of every --card-key file, in order. Raises CardKeyError (also past MAX_KEYS in all)."""
    keys: list[dict[str, Any]] = []
    for path in paths:
        keys += load(path)
        if len(keys) > MAX_KEYS:
            raise CardKeyError(f"{path}: the --card-key files hold more than {MAX_KEYS} keys in all")
    return keys
