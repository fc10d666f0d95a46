"""The agent card (A2A §8), with the card fault variants applied in one place each."""

from __future__ import annotations

from typing import Any

from .. import __version__, a2a
from .agents import JSONRPC_PATH, AgentSpec
from .options import Options


def build_card(spec: AgentSpec, base_url: str, options: Options) -> dict[str, Any]:
    interface = {"url": base_url + spec.prefix + JSONRPC_PATH, "protocolBinding": "JSONRPC",
                 "protocolVersion": a2a.PROTOCOL_VERSION}
    extensions = [{"uri": uri, "description": text, "required": False} for uri, text in spec.extensions]
    card: dict[str, Any] = {
        "name": spec.title,
        "description": spec.description,
        "version": __version__,
        "supportedInterfaces": [interface],
        "capabilities": {"streaming": spec.streaming, "pushNotifications": False, "extensions": extensions},
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": [{
            "id": "play-script",
            "name": "Play a test script",
            "description": f"Performs the script in the first message's {a2a.SCRIPT_KEY} metadata.",
            "tags": ["testing", "conformance", "streamcert"],
        }],
    }
    _break(card, options)
    return card


def _break(card: dict[str, Any], options: Options) -> None:
    interface = card["supportedInterfaces"][0]
    extensions = card["capabilities"]["extensions"]
    if options.has("card-missing-field"):
        del card["version"]
    if options.has("card-no-jsonrpc"):
        interface["protocolBinding"] = "GRPC"
    if options.has("card-old-version"):
        interface["protocolVersion"] = "0.3"
    if options.has("extension-no-uri") and extensions:
        del extensions[0]["uri"]
    if options.has("extension-required-not-bool"):
        for extension in extensions:
            extension["required"] = "false"
