"""The agent card (A2A §8), with the card fault variants applied in one place each."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from ... import __version__
from ...protocols import a2a, card_signing
from ...protocols.script import SCRIPT_KEY
from ..faults import switch
from . import auth
from .agents import JSONRPC_PATH, AgentSpec
from .options import Options
from .rest import REST_PATH


def build_card(spec: AgentSpec, base_url: str, options: Options, grpc_url: str | None = None,
               secured: bool = False) -> dict[str, Any]:
    """The agent's card; `grpc_url`: its gRPC interface (listed last), None when no gRPC server runs; `secured`: it
    requires its bearer token (auth.py)."""
    interface = {"url": base_url + spec.prefix + JSONRPC_PATH, "protocolBinding": "JSONRPC",
                 "protocolVersion": a2a.PROTOCOL_VERSION}
    rest = {"url": base_url + spec.prefix + REST_PATH, "protocolBinding": "HTTP+JSON",
            "protocolVersion": a2a.PROTOCOL_VERSION}
    extensions = [{"uri": uri, "description": text, "required": uri in spec.required} for uri, text in spec.extensions]
    if options.script_steps is not None:  # a test agent of limited reach says which steps it plays
        extensions.append({"uri": SCRIPT_KEY, "description": "The test-agent script steps this agent plays",
                           "required": False, "params": {"steps": list(options.script_steps)}})
    card: dict[str, Any] = {
        "name": spec.title,
        "description": spec.description,
        "version": __version__,
        "supportedInterfaces": [interface, rest],
        "capabilities": {"streaming": spec.streaming, "pushNotifications": spec.push, "extensions": extensions},
        # Declared on every card, required only by a secured one (auth.declare): a oneof, written as ProtoJSON does.
        "securitySchemes": {auth.SCHEME: {"httpAuthSecurityScheme": {
            "scheme": "Bearer", "description": SECURED_NOTE if secured else UNSECURED_NOTE}}},
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [{
            "id": "play-script",
            "name": "Play a test script",
            "description": f"Performs the script in the first message's {SCRIPT_KEY} metadata.",
            "tags": ["testing", "conformance", "streamcert"],
        }],
    }
    if grpc_url is not None:
        card["supportedInterfaces"].append({"url": grpc_url, "protocolBinding": "GRPC",
                                            "protocolVersion": a2a.PROTOCOL_VERSION})
    if secured:
        auth.declare(card)
    _break(card, options)
    _sign(card, options)
    return card


UNSECURED_NOTE = "Accepted and ignored: the reference agent checks no credential."
SECURED_NOTE = "Required: a TEST token (docs/security.md); without it a request is refused with HTTP 401."


# The key the reference signs its card with (A2A §8.4): a TEST key, shipped with its private part in the package,
# so anyone can sign with it. The embedded run trusts its public part (card_test_key.pub.json) and nothing else does.
TEST_KEY_FILE = Path(__file__).parent.parent / "card_test_key.json"  # in reference/, beside the programs
TEST_KEY_NOTE = ("signed with streamcert's TEST key, shipped in the package with its private part: it proves the "
                 "signing works, never who made the card")


@functools.cache
def _test_key() -> Any:
    from joserfc.jwk import ECKey

    return ECKey.import_key(json.loads(TEST_KEY_FILE.read_text(encoding="utf-8")))


@functools.lru_cache(maxsize=32)
def _signature(protected: str, payload: bytes, alg: str) -> str:
    """The base64url signature of the JWS signing input (RFC 7515 §5.1) under `alg` with the test key. Cached:
    ECDSA signs with a fresh random each time, and one card must have one signature (its ETag hashes it)."""
    from joserfc import jws
    from joserfc.util import urlsafe_b64encode

    signing_input = protected.encode("ascii") + b"." + urlsafe_b64encode(payload)
    return urlsafe_b64encode(jws.JWSRegistry.algorithms[alg].sign(signing_input, _test_key())).decode("ascii")


def _sign(card: dict[str, Any], options: Options) -> None:
    from joserfc.util import json_b64encode

    header = {"alg": "ES256", "typ": "JOSE", "kid": _test_key().kid}
    if CARD_SIGNATURE_ALG_NONE.on(options):
        header["alg"] = "none"
    if CARD_SIGNATURE_ALG_MISMATCH.on(options):  # signed with ES256, the header naming another algorithm
        header["alg"] = "ES384"
    payload = card_signing.signing_payload(card)
    if CARD_SIGNATURE_PRETTY.on(options):  # the card pretty-printed, not its canonical form
        payload = json.dumps(card_signing.unsigned(card), indent=2).encode()
    protected = json_b64encode(header).decode("ascii")
    signature = "" if header["alg"] == "none" else _signature(protected, payload, "ES256")
    card[card_signing.SIGNATURES] = [{"protected": protected, "signature": signature, "header": {"note": TEST_KEY_NOTE}}]
    if CARD_CHANGED_AFTER_SIGNING.on(options):
        card["description"] += " (changed after it was signed)"


CARD_MAX_AGE_S = 300  # the card changes only when the reference is upgraded; five minutes keeps a test run fresh


def caching_headers(body: bytes, options: Options) -> dict[str, str]:
    """The card response's HTTP caching headers (A2A §8.6.1): Cache-Control with max-age, and an ETag that is a
    hash of the card as sent (it names the request's host, so one card per host)."""
    if CARD_NO_CACHE_HEADERS.on(options):
        return {}
    return {"Cache-Control": f"public, max-age={CARD_MAX_AGE_S}",
            "ETag": '"' + hashlib.sha256(body).hexdigest()[:32] + '"'}


def not_modified(request_headers: Any, headers: dict[str, str], options: Options) -> bool:
    """Whether a conditional GET of the card is answered 304: its If-None-Match names the card's ETag, or is `*`
    (RFC 9110 §13.1.2, weak comparison)."""
    etag = headers.get("ETag")
    condition = request_headers.get("if-none-match")
    if etag is None or condition is None or CARD_IGNORES_REVALIDATION.on(options):
        return False
    tags = {tag.strip().removeprefix("W/") for tag in condition.split(",")}
    return "*" in tags or etag.removeprefix("W/") in tags


def _break(card: dict[str, Any], options: Options) -> None:
    interface = card["supportedInterfaces"][0]
    extensions = card["capabilities"]["extensions"]
    if CARD_MISSING_FIELD.on(options):
        del card["version"]
    if CARD_NO_JSONRPC.on(options):  # the JSON-RPC URL declared as GRPC, and nothing else
        interface["protocolBinding"] = "GRPC"
        card["supportedInterfaces"] = [interface]
    if CARD_OLD_VERSION.on(options):  # every interface: one of 1.0 would be enough (A2A-CARD-003)
        for each in card["supportedInterfaces"]:
            each["protocolVersion"] = "0.3"
    if EXTENSION_NO_URI.on(options) and extensions:
        del extensions[0]["uri"]
    if EXTENSION_REQUIRED_NOT_BOOL.on(options):
        for extension in extensions:
            extension["required"] = "false"
    if CARD_ONEOF_INTERNAL.on(options):
        # an SDK's own encoding of the oneof: wrapped in the oneof's name, the member under its proto name
        for name, scheme in card["securitySchemes"].items():
            card["securitySchemes"][name] = {"scheme": {"http_auth_security_scheme": scheme["httpAuthSecurityScheme"]}}
    if CARD_SNAKE_CASE.on(options):
        card["capabilities"]["push_notifications"] = card["capabilities"].pop("pushNotifications")


# -- fault variants ---------------------------------------------------------------------------------
CARD_MISSING_FIELD = switch("card-missing-field")
CARD_NO_JSONRPC = switch("card-no-jsonrpc")
CARD_OLD_VERSION = switch("card-old-version")
EXTENSION_NO_URI = switch("extension-no-uri")
EXTENSION_REQUIRED_NOT_BOOL = switch("extension-required-not-bool")
CARD_ONEOF_INTERNAL = switch("card-oneof-internal")
CARD_SNAKE_CASE = switch("card-snake-case")
CARD_NO_CACHE_HEADERS = switch("card-no-cache-headers")
CARD_IGNORES_REVALIDATION = switch("card-ignores-revalidation")
CARD_SIGNATURE_PRETTY = switch("card-signature-pretty")
CARD_CHANGED_AFTER_SIGNING = switch("card-changed-after-signing")
CARD_SIGNATURE_ALG_MISMATCH = switch("card-signature-alg-mismatch")
CARD_SIGNATURE_ALG_NONE = switch("card-signature-alg-none")
