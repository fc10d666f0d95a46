"""The agent card (A2A §8), with the card fault variants applied in one place each."""

from __future__ import annotations

import hashlib
from typing import Any

from .. import __version__
from ..protocols import a2a
from ..protocols.script import SCRIPT_KEY
from .agents import JSONRPC_PATH, AgentSpec
from .faults import switch
from .options import Options
from .rest import REST_PATH


def build_card(spec: AgentSpec, base_url: str, options: Options, grpc_url: str | None = None) -> dict[str, Any]:
    """The agent's card; `grpc_url`: its gRPC interface (listed last), None when no gRPC server runs."""
    interface = {"url": base_url + spec.prefix + JSONRPC_PATH, "protocolBinding": "JSONRPC",
                 "protocolVersion": a2a.PROTOCOL_VERSION}
    rest = {"url": base_url + spec.prefix + REST_PATH, "protocolBinding": "HTTP+JSON",
            "protocolVersion": a2a.PROTOCOL_VERSION}
    extensions = [{"uri": uri, "description": text, "required": uri in spec.required} for uri, text in spec.extensions]
    card: dict[str, Any] = {
        "name": spec.title,
        "description": spec.description,
        "version": __version__,
        "supportedInterfaces": [interface, rest],
        "capabilities": {"streaming": spec.streaming, "pushNotifications": spec.push, "extensions": extensions},
        # Declared, never required (no securityRequirements): a oneof on the card, written as ProtoJSON does.
        "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {
            "scheme": "Bearer", "description": "Accepted and ignored: the reference agent checks no credential."}}},
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
    _break(card, options)
    return card


CARD_MAX_AGE_S = 300  # the card changes only when the reference is upgraded; five minutes keeps a test run fresh


def caching_headers(body: bytes, options: Options) -> dict[str, str]:
    """The card response's HTTP caching headers (A2A §8.6.1): Cache-Control with max-age, and an ETag that is a
    hash of the card as sent (it names the request's host, so one card per host)."""
    if CARD_NO_CACHE_HEADERS.on(options):
        return {}
    return {"Cache-Control": f"public, max-age={CARD_MAX_AGE_S}",
            "ETag": '"' + hashlib.sha256(body).hexdigest()[:32] + '"'}


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
