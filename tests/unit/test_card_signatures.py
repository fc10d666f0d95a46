"""A2A-CARD-008, -009 (A2A §8.4): agent card signatures, both ways, with keys the tests make; the trusted-key
files (`--card-key`) and their bounds; the canonical form against the specification's own example."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from joserfc import jws
from joserfc.jwk import ECKey, OctKey, RSAKey
from joserfc.util import json_b64encode, urlsafe_b64encode
from logs import agent_card, card_get, frame_log

from streamcert import card_keys
from streamcert.contract.a2a import CARD_KEYS
from streamcert.outcomes import Outcome
from streamcert.protocols import card_signing
from streamcert.rules import RuleContext, judge

P, F, UNS, NT = Outcome.PASS, Outcome.FAIL, Outcome.UNSUPPORTED, Outcome.NOT_TESTED
EC = ECKey.generate_key("P-256", {"kid": "k1"}, private=True)
OTHER = ECKey.generate_key("P-256", {"kid": "k2"}, private=True)


def public(key) -> dict:
    return key.as_dict(private=False)


def sign(card: dict, key=EC, *, alg: str = "ES256", header_alg: str | None = None, payload: bytes | None = None,
         kid: str | None = None, extra: dict | None = None) -> dict:
    """One AgentCardSignature of `card`: over its canonical payload unless `payload` is given; `header_alg`: the
    alg the protected header names when it is not the one signed with."""
    header = {"alg": header_alg or alg, "typ": "JOSE", "kid": kid or key.kid, **(extra or {})}
    protected = json_b64encode(header).decode()
    data = card_signing.signing_payload(card) if payload is None else payload
    signed = jws.JWSRegistry.algorithms[alg].sign(protected.encode() + b"." + urlsafe_b64encode(data), key)
    return {"protected": protected, "signature": urlsafe_b64encode(signed).decode()}


def signed_log(card: dict, *signatures: dict, keys=(EC,)):
    log = frame_log(card_get({**card, "signatures": list(signatures)}))
    log.notes[CARD_KEYS] = [public(k) for k in keys]
    return log


def one(rid: str, log, expected: Outcome, *words: str):
    found = [f for f in judge(log, [rid], RuleContext()) if f.req_id == rid]
    assert len(found) == 1, found
    assert found[0].outcome == expected, f"{rid}: {found[0].outcome} {found[0].message}"
    for word in words:
        assert word in found[0].message, found[0].message
    return found[0]


def test_canonical_form_is_the_specification_example():
    # A2A §8.4.1's own example: default-valued members not REQUIRED nor `optional` are left out, then RFC 8785
    fragment = {"name": "Example Agent", "description": "",
                "capabilities": {"streaming": False, "pushNotifications": False, "extensions": []}, "skills": []}
    assert card_signing.canonical(card_signing.without_defaults(fragment)) == (
        b'{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent",'
        b'"skills":[]}')
    # signatures are excluded; an extension's required: false is a plain bool's default, its params kept even empty
    card = agent_card(signatures=[{"protected": "x", "signature": "y"}])
    card["capabilities"]["extensions"][0]["params"] = {}
    payload = json.loads(card_signing.signing_payload(card))
    assert "signatures" not in payload and payload["capabilities"]["extensions"][0] == {
        "uri": "https://example.com/ext/v1", "description": "an extension", "params": {}}


def test_a_good_signature_verifies_naming_key_and_algorithm():
    card = agent_card()
    log = signed_log(card, sign(card))
    one("A2A-CARD-008", log, P, "ES256", "'k1'")
    one("A2A-CARD-009", log, P, "verified with trusted key kid 'k1' under ES256", "RFC 8785")


def test_rsa_and_a_jwks_of_several_keys():
    rsa = RSAKey.generate_key(2048, {"kid": "r1"}, private=True)
    card = agent_card()
    one("A2A-CARD-009", signed_log(card, sign(card, rsa, alg="PS256"), keys=(EC, rsa)), P, "kid 'r1' under PS256")


def test_unsigned_card_is_unsupported_never_a_failure():
    log = frame_log(card_get(agent_card()))
    one("A2A-CARD-008", log, UNS, "no signatures")
    one("A2A-CARD-009", log, UNS, "optional")
    log.notes[CARD_KEYS] = [public(EC)]
    one("A2A-CARD-009", log, UNS, "1 key(s) from --card-key and had nothing to verify")


def test_signed_card_without_trusted_keys_is_not_tested_and_jku_is_never_trusted():
    card = agent_card()
    log = signed_log(card, sign(card, extra={"jku": "https://evil.example/jwks.json"}), keys=())
    one("A2A-CARD-009", log, NT, "no --card-key", "jku 'https://evil.example/jwks.json'", "never trusted")


@pytest.mark.parametrize("payload, says", [
    (lambda c: json.dumps(c, indent=2).encode(), "pretty-printed"),
    (lambda c: card_signing.canonical(c), "default-valued members left in"),
    (lambda c: json.dumps(card_signing.without_defaults(c), separators=(",", ":")).encode(), "without RFC 8785"),
])
def test_a_signature_over_other_bytes_fails_saying_which(payload, says):
    card = agent_card()  # its extension's required: false is a default-valued member
    one("A2A-CARD-009", signed_log(card, sign(card, payload=payload(card))), F, "kid 'k1'", says)


def test_a_second_signature_over_the_card_with_the_first_left_in():
    card = agent_card()
    first = sign(card)
    with_first = card_signing.without_defaults({**card, "signatures": [first]})
    second = sign(card, OTHER, payload=card_signing.canonical(with_first))
    one("A2A-CARD-009", signed_log(card, first, second, keys=(EC, OTHER)), F, "signatures[1]", "signatures member left in")


def test_card_changed_after_signing_fails():
    card = agent_card()
    signature = sign(card)
    one("A2A-CARD-009", signed_log({**card, "description": "changed"}, signature), F, "changed after signing")


def test_header_naming_another_algorithm_fails():
    card = agent_card()
    one("A2A-CARD-009", signed_log(card, sign(card, header_alg="ES384")), F, "names alg ES384", "verifies as ES256")


@pytest.mark.parametrize("header, says", [({"alg": "none", "kid": "k1"}, "alg 'none'"), ({"kid": "k1"}, "no alg"),
                                          ({"alg": "ES256"}, "no kid")])
def test_protected_header_must_name_a_real_alg_and_a_kid(header, says):
    card = agent_card()
    entry = {"protected": json_b64encode(header).decode(), "signature": sign(card)["signature"]}
    one("A2A-CARD-008", signed_log(card, entry), F, says)


@pytest.mark.parametrize("entry, says", [
    ({"protected": "eyJ+bad/==", "signature": "AA"}, "not the base64url"),
    ({"protected": json_b64encode({"alg": "ES256", "kid": "k1"}).decode(), "signature": "A" * (10 * 1024 * 1024)},
     "longer than any JWS algorithm's signature"),
    ({"protected": urlsafe_b64encode(b"[1]").decode(), "signature": "AA"}, "not an object"),
    ("a string", "not an object"),
])
def test_malformed_entries_are_findings_of_008_not_tracebacks(entry, says):
    log = signed_log(agent_card(), entry)
    one("A2A-CARD-008", log, F, says)
    one("A2A-CARD-009", log, NT, "A2A-CARD-008")


def test_kid_of_no_trusted_key_key_rotation_and_forgery():
    card = agent_card()
    rotated = sign(card, OTHER)  # signed with a key the run does not trust
    one("A2A-CARD-009", signed_log(card, sign(card), rotated), P, "signatures[1]", "not verified (key rotation)")
    one("A2A-CARD-009", signed_log(card, rotated), F, "no trusted key (kid 'k1') verifies it")
    # a kid that names a trusted key is verified with that key only: another key's signature under it fails
    one("A2A-CARD-009", signed_log(card, sign(card, OTHER, kid="k1"), keys=(EC, OTHER)), F,
        "does not verify with the trusted key of that kid")


# -- --card-key files ---------------------------------------------------------------------------------------

def write(tmp_path, name, value) -> str:
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return str(path)


def test_key_files_keep_public_parts_only(tmp_path):
    keys = card_keys.load(write(tmp_path, "private.json", EC.as_dict(private=True)))
    assert keys == [public(EC)] and "d" not in keys[0]
    jwks = card_keys.load(write(tmp_path, "set.json", {"keys": [public(EC), public(OTHER)]}))
    assert [k["kid"] for k in jwks] == ["k1", "k2"]


@pytest.mark.parametrize("content, says", [
    ("not json {", "not JSON"),
    ({"keys": [{"kty": "EC"}] * 10_000}, "a JWKS of 10000 keys; a run trusts at most 64"),
    ({"keys": [public(EC)] * 10_000}, "a key file is read up to"),
    ({"keys": []}, "non-empty"),
    (OctKey.generate_key(256).as_dict(private=True), "symmetric"),
    ({"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"}, "not a usable EC key"),
    ("x" * (card_keys.MAX_FILE_BYTES + 1), "read up to"),
    ([1, 2], "not a JWK"),
])
def test_bad_key_files_are_one_sentence(tmp_path, content, says):
    path = write(tmp_path, "bad.json", content)
    with pytest.raises(card_keys.CardKeyError) as caught:
        card_keys.load(path)
    assert says in str(caught.value) and "\n" not in str(caught.value) and path in str(caught.value)


def test_a_bad_card_key_is_a_usage_error_before_the_run(tmp_path):
    secret = OctKey.generate_key(256).as_dict(private=True)
    path = write(tmp_path, "k.json", secret)
    proc = subprocess.run([sys.executable, "-m", "streamcert", "run", "--card-key", path], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--card-key" in proc.stderr and "symmetric" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and secret["k"] not in proc.stderr + proc.stdout
    assert not (tmp_path / "reports").exists()
