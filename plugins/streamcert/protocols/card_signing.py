"""What an agent card signature signs (A2A 1.0.1 §8.4): the card without its `signatures` member, its
default-valued members left out as §8.4.1 rule 1 says, in the RFC 8785 (JCS) canonical form.

The signer and the verifier compute the same bytes; the suite's rules verify against them and the reference
agent signs them. The members kept even at their default value are those a2a.proto v1.0.1 marks
REQUIRED or declares `optional` (explicit presence), and every member holding a message (a message field is
present when written, even as `{}`); any other member at its proto default (`""`, `false`, `0`, an empty list or
map, or `null`) is left out. A member the card's messages do not have is kept as written: the suite cannot know
its presence rules, and §5.7 has unknown members ignored, not rewritten.
"""

from __future__ import annotations

from typing import Any

import rfc8785

from .a2a import CARD_MESSAGES, CARD_ONEOFS

SIGNATURES = "signatures"

# The members kept at their default value, by message (REQUIRED or `optional` in a2a.proto v1.0.1, or a
# singular message field). The oneofs' members (SecurityScheme, OAuthFlows) are all kept: the one set is present.
KEPT_AT_DEFAULT: dict[str, frozenset[str]] = {
    "AgentCard": frozenset({"name", "description", "supportedInterfaces", "provider", "version", "documentationUrl",
                            "capabilities", "defaultInputModes", "defaultOutputModes", "skills", "iconUrl"}),
    "AgentInterface": frozenset({"url", "protocolBinding", "protocolVersion"}),
    "AgentProvider": frozenset({"url", "organization"}),
    "AgentCapabilities": frozenset({"streaming", "pushNotifications", "extendedAgentCard"}),
    "AgentExtension": frozenset({"params"}),
    "AgentSkill": frozenset({"id", "name", "description", "tags"}),
    "AgentCardSignature": frozenset({"protected", "signature", "header"}),
    "APIKeySecurityScheme": frozenset({"location", "name"}),
    "HTTPAuthSecurityScheme": frozenset({"scheme"}),
    "OAuth2SecurityScheme": frozenset({"flows"}),
    "OpenIdConnectSecurityScheme": frozenset({"openIdConnectUrl"}),
    "AuthorizationCodeOAuthFlow": frozenset({"authorizationUrl", "tokenUrl", "scopes"}),
    "ClientCredentialsOAuthFlow": frozenset({"tokenUrl", "scopes"}),
    "DeviceCodeOAuthFlow": frozenset({"deviceAuthorizationUrl", "tokenUrl", "scopes"}),
}
# Members holding a map of the message named (AgentCard.securitySchemes): its keys are the agent's own.
MAPS = frozenset({("AgentCard", "securitySchemes")})


def _is_default(value: Any) -> bool:
    return value is None or value is False or value == "" or (
        isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0) or value == [] or value == {}


def without_defaults(value: Any, message: str = "AgentCard") -> Any:
    """A copy of `value` (a JSON object of `message`) with the default-valued members §8.4.1 rule 1 leaves out."""
    if not isinstance(value, dict):
        return value
    fields = CARD_MESSAGES.get(message, {})
    kept = KEPT_AT_DEFAULT.get(message, frozenset())
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in fields and key not in kept and message not in CARD_ONEOFS and _is_default(item):
            continue
        inner = fields.get(key)
        if inner is None:
            out[key] = item
        elif (message, key) in MAPS and isinstance(item, dict):
            out[key] = {name: without_defaults(entry, inner) for name, entry in item.items()}
        elif isinstance(item, list):
            out[key] = [without_defaults(entry, inner) for entry in item]
        else:
            out[key] = without_defaults(item, inner)
    return out


def unsigned(card: dict[str, Any]) -> dict[str, Any]:
    """The card without its `signatures` member (§8.4.1 rule 3)."""
    return {key: value for key, value in card.items() if key != SIGNATURES}


def canonical(value: Any) -> bytes:
    """RFC 8785 canonical JSON of `value` (UTF-8)."""
    return rfc8785.dumps(value)


def signing_payload(card: dict[str, Any]) -> bytes:
    """The JWS payload every signature of `card` signs (§8.4.2 step 1, §8.4.3 steps 3–5)."""
    return canonical(without_defaults(unsigned(card)))
