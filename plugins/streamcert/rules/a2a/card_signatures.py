"""A2A-CARD-008, -009: the agent card's signatures (A2A 1.0.1 §8.4).

Each entry of `signatures` is a JWS (RFC 7515) with a detached payload: its protected header, its signature,
and the payload every entry signs, the card's canonical form (protocols/card_signing.py). The keys trusted are
the run's (`--card-key`), recorded by the card scenario in the log's notes (CARD_KEYS) as public JWKs, so that
a cassette is verified offline with the keys its run trusted. A key the card itself names (`jku`, `x5u`, `jwk`,
`x5c` in a header) is never fetched nor trusted: anyone who can change the card can change those too.

The cryptography is joserfc's (JWS, JWK); nothing here computes or compares a signature by hand.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

from ...contract.a2a import CARD_KEYS, CARD_KEYS_ERROR
from ...framelog import FrameLog
from ...protocols import card_signing
from .. import RuleContext, Unjudgeable, Verdict, rule
from .card import AgentCard

MAX_SIGNATURES = 16  # entries judged; the rest are named, not judged
MAX_PROTECTED_CHARS = 8 * 1024  # a protected header is a few dozen members at most
# RFC 7518's largest signatures are RSA's: a 16384-bit key signs 2048 bytes, 2731 base64url characters.
MAX_SIGNATURE_CHARS = 4 * 1024
BASE64URL = re.compile(r"^[A-Za-z0-9_-]*$")  # RFC 7515 §2: base64url, no padding
KEY_BY_REFERENCE = ("jku", "x5u", "jwk", "x5c")  # RFC 7515 §4.1.2–4.1.6: keys named by the JWS itself


def _b64url(text: str) -> bytes:
    if not BASE64URL.match(text) or len(text) % 4 == 1:
        raise ValueError("not base64url (RFC 7515 §2: the URL-safe alphabet, no padding)")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise ValueError("not base64url") from None


@dataclass
class Entry:
    """One entry of `signatures`: its header when well formed, else why not (A2A-CARD-008's finding)."""

    index: int
    protected: str = ""
    signature: str = ""
    header: dict[str, Any] | None = None
    problems: tuple[str, ...] = ()
    unprotected: dict[str, Any] | None = None  # its `header` member, when an object

    @property
    def alg(self) -> str:
        return str((self.header or {}).get("alg"))

    @property
    def kid(self) -> str:
        return str((self.header or {}).get("kid"))

    @property
    def by_reference(self) -> list[str]:
        """The key references (jku, x5u, …) its headers carry: named in the report, never followed."""
        seen = {**(self.unprotected or {}), **(self.header or {})}
        return [f"{name} {str(seen[name])[:200]!r}" for name in KEY_BY_REFERENCE if name in seen]

    @classmethod
    def read(cls, index: int, raw: Any) -> Entry:
        where = f"signatures[{index}]"
        if not isinstance(raw, dict):
            return cls(index, problems=(f"{where} is not an object",))
        problems = []
        protected, signature = raw.get("protected"), raw.get("signature")
        header = None
        if not isinstance(protected, str) or not protected:
            problems.append(f"{where}.protected is missing or not a string")
        elif len(protected) > MAX_PROTECTED_CHARS:
            problems.append(f"{where}.protected is {len(protected)} characters long (read up to {MAX_PROTECTED_CHARS})")
        else:
            try:
                decoded = json.loads(_b64url(protected).decode("utf-8"))
            except ValueError as exc:  # base64url, UTF-8 or JSON (UnicodeDecodeError is a ValueError)
                problems.append(f"{where}.protected is not the base64url of a JSON object ({exc})")
            else:
                if not isinstance(decoded, dict):
                    problems.append(f"{where}.protected decodes to JSON that is not an object")
                else:
                    header = decoded
                    alg, kid = decoded.get("alg"), decoded.get("kid")
                    if not isinstance(alg, str) or not alg:
                        problems.append(f"{where}'s protected header names no alg")
                    elif alg.lower() == "none":
                        problems.append(f"{where}'s protected header names alg {alg!r}: an unsecured JWS signs nothing")
                    if not isinstance(kid, str) or not kid:
                        problems.append(f"{where}'s protected header names no kid")
        if not isinstance(signature, str):
            problems.append(f"{where}.signature is missing or not a string")
        elif len(signature) > MAX_SIGNATURE_CHARS:
            problems.append(f"{where}.signature is {len(signature)} characters long, longer than any JWS algorithm's "
                            f"signature (read up to {MAX_SIGNATURE_CHARS})")
        elif not signature and not problems:
            problems.append(f"{where}.signature is empty")
        else:
            try:
                _b64url(signature)
            except ValueError as exc:
                problems.append(f"{where}.signature is {exc}")
        if "header" in raw and not isinstance(raw["header"], dict):
            problems.append(f"{where}.header is not an object")
        unprotected = raw.get("header") if isinstance(raw.get("header"), dict) else None
        return cls(index, protected if isinstance(protected, str) else "", signature if isinstance(signature, str)
                   else "", header, tuple(problems), unprotected)


@dataclass
class CardSignatures:
    """The card's signatures as read, the keys the run trusts, and the card they sign."""

    card: AgentCard
    raw: list[Any]
    entries: list[Entry]  # the first MAX_SIGNATURES
    keys: list[dict[str, Any]]
    keys_error: str

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> CardSignatures:
        card = AgentCard.of(log, ctx)
        if card.card is None:
            raise Unjudgeable()  # no card: A2A-CARD-001's finding
        raw = card.card.get(card_signing.SIGNATURES)
        raw_list = raw if isinstance(raw, list) else []
        entries = [Entry.read(i, item) for i, item in enumerate(raw_list[:MAX_SIGNATURES])]
        keys = [k for k in log.notes.get(CARD_KEYS) or [] if isinstance(k, dict)]
        return cls(card, raw if raw is not None else [], entries, keys, str(log.notes.get(CARD_KEYS_ERROR) or ""))

    @property
    def unsigned_reason(self) -> str:
        given = f"; the run trusts {len(self.keys)} key(s) from --card-key and had nothing to verify" if self.keys else ""
        return f"the card carries no signatures (signing a card is optional, A2A §8.4){given}"

    @property
    def beyond(self) -> str:
        n = len(self.raw) if isinstance(self.raw, list) else 0
        if n <= MAX_SIGNATURES:
            return ""
        return f"; {n - MAX_SIGNATURES} more entries not judged (the first {MAX_SIGNATURES} are)"


@rule("A2A-CARD-008", view=CardSignatures)
def signatures_well_formed(v: CardSignatures, out: Verdict) -> None:
    if not isinstance(v.raw, list):
        out.failed(f"signatures is {type(v.raw).__name__}, not an array of AgentCardSignature", [v.card.evidence])
        return
    if not v.raw:
        out.unsupported(v.unsigned_reason)
        return
    bad = [(p, v.card.evidence) for e in v.entries for p in e.problems]
    if not out.fail_each("problem(s) in the card's signatures", bad):
        named = ", ".join(f"alg {e.alg}, kid {e.kid!r}" for e in v.entries)
        out.passed(f"{len(v.entries)} signature(s), each a base64url protected header naming alg and kid and a "
                   f"base64url signature ({named}){v.beyond}")


# -- A2A-CARD-009: each signature verifies -----------------------------------------------------------------

def _import(jwk: dict[str, Any]) -> Any:
    from joserfc.jwk import JWKRegistry

    return JWKRegistry.import_key({k: val for k, val in jwk.items() if k != "alg"})


def _verifies(entry: Entry, jwk: dict[str, Any], payload: bytes, alg: str | None = None) -> bool:
    """Whether `entry`'s signature verifies with `jwk` over `payload`, under `alg` (default: its header's)."""
    from joserfc import jws
    from joserfc.errors import JoseError

    try:
        key = _import(jwk)
        if alg is None:
            jws.deserialize_compact(f"{entry.protected}..{entry.signature}", key, algorithms=[entry.alg],
                                    payload=payload)
            return True
        algorithm = jws.JWSRegistry.algorithms[alg]
        signing_input = entry.protected.encode("ascii") + b"." + base64.urlsafe_b64encode(payload).rstrip(b"=")
        return bool(algorithm.verify(signing_input, _b64url(entry.signature), key))
    except (JoseError, ValueError, TypeError, KeyError, AttributeError):  # a key or input the algorithm refuses
        return False


def _pretty(value: Any) -> list[bytes]:
    return [json.dumps(value, indent=n, ensure_ascii=ascii_).encode() for n in (2, 4) for ascii_ in (False, True)]


def _near_misses(card: dict[str, Any], index: int) -> list[tuple[str, bytes]]:
    """Payloads a signer may have signed instead of the canonical card, each with what it is (`index`: the
    signature's; a later signature may have been made over the card holding the earlier ones)."""
    bare = card_signing.unsigned(card)
    stripped = card_signing.without_defaults(bare)
    before = {**card, card_signing.SIGNATURES: card[card_signing.SIGNATURES][:index]}
    left_in = "the card with its signatures member left in (§8.4.1 rule 3 excludes it)"
    misses = [(left_in, card_signing.canonical(card_signing.without_defaults(before))),
              (left_in, card_signing.canonical(before)),
              ("the card with its default-valued members left in (§8.4.1 rule 1 omits them)",
               card_signing.canonical(bare))]
    for value in (bare, stripped):
        misses += [("the card pretty-printed, not in its RFC 8785 canonical form", p) for p in _pretty(value)]
        misses += [("the card serialized without RFC 8785 canonicalization (members in their order, not sorted)",
                    json.dumps(value, separators=sep, ensure_ascii=False).encode()) for sep in ((",", ":"), (", ", ": "))]
    return misses


def _why_not(entry: Entry, keys: list[dict[str, Any]], card: dict[str, Any], payload: bytes) -> str:
    """What a signature that does not verify was made over, when the suite can tell."""
    from joserfc import jws

    for what, other in _near_misses(card, entry.index):
        if other != payload and any(_verifies(entry, jwk, other) for jwk in keys):
            return f"it verifies over {what}"
    for alg in jws.JWSRegistry.algorithms:
        if alg not in ("none", entry.alg) and any(_verifies(entry, jwk, payload, alg) for jwk in keys):
            return f"its header names alg {entry.alg}, but it verifies as {alg}: the header does not name the algorithm used"
    return ("it does not verify over the canonical card under the header's algorithm: the card was changed after "
            "signing, or signed with another key")


def _key_name(jwk: dict[str, Any]) -> str:
    return f"kid {jwk['kid']!r}" if jwk.get("kid") else f"the {jwk.get('kty')} key without kid"


@rule("A2A-CARD-009", view=CardSignatures)
def signatures_verify(v: CardSignatures, out: Verdict) -> None:
    if not isinstance(v.raw, list):
        return  # A2A-CARD-008's finding
    if not v.raw:
        out.unsupported(v.unsigned_reason)
        return
    card = v.card.card or {}
    references = sorted({ref for e in v.entries for ref in e.by_reference})
    untrusted = (f"; the card names its key(s) by {', '.join(references)}: not fetched, and never trusted on the "
                 f"card's own word") if references else ""
    if v.keys_error:
        out.error(f"--card-key could not be read at run time: {v.keys_error}")
        return
    well_formed = [e for e in v.entries if not e.problems]
    if not v.keys:
        out.otherwise_not_tested(f"the card carries {len(v.raw)} signature(s) and the run was given no --card-key "
                                 f"to verify them with{untrusted}")
        return
    if not well_formed:
        out.otherwise_not_tested("no signature well formed enough to verify (A2A-CARD-008 says why)")
        return
    payload = card_signing.signing_payload(card)
    verified, failed, unmatched = [], [], []
    for entry in well_formed:
        named = [k for k in v.keys if k.get("kid") == entry.kid]
        key = next((k for k in named or v.keys if _verifies(entry, k, payload)), None)
        who = f"signatures[{entry.index}] (alg {entry.alg}, kid {entry.kid!r})"
        if key is not None:
            also = "" if named else ", whose kid names no trusted key"
            verified.append(f"{who} verified with trusted key {_key_name(key)} under {entry.alg}{also}")
        elif named:
            failed.append((f"{who} does not verify with the trusted key of that kid: "
                           f"{_why_not(entry, named, card, payload)}", v.card.evidence))
        else:
            unmatched.append((entry, who))
    if not verified and unmatched:  # no signature the run's keys verify: the card is not the one they sign
        failed += [(f"{who}: no trusted key ({', '.join(_key_name(k) for k in v.keys)}) verifies it: "
                    f"{_why_not(entry, v.keys, card, payload)}", v.card.evidence) for entry, who in unmatched]
        unmatched = []
    if out.fail_each("card signature(s) that do not verify", failed):
        return
    others = "".join(f"; {who} names a key the run does not trust, not verified (key rotation)" for _, who in unmatched)
    out.passed("; ".join(verified) + f", over the RFC 8785 canonical card ({len(payload)} bytes){others}"
               f"{untrusted}{v.beyond}")
