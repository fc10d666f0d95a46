"""Declared security, enforced (A2A 1.0.1 §7), and the extended card it guards (§3.1.11).

A secured agent (the one at /agents/secured, or every agent of `streamcert serve --auth TOKEN`) declares a bearer
scheme in `securityRequirements` and serves a request only with `Authorization: Bearer TOKEN`; any other request is
refused before the agent acts on it: HTTP 401 with `WWW-Authenticate: Bearer` on JSON-RPC and HTTP+JSON, status
UNAUTHENTICATED on gRPC. Its card declares `capabilities.extendedAgentCard`, and GetExtendedAgentCard, behind the
same token, answers the public card with one more skill.

TEST_TOKEN (targets.py) is the token when none is given: a TEST credential, written in the package and in
docs/security.md, so it proves that the refusal works and protects nothing. The embedded run sends it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ...protocols import a2a
from ...targets import TEST_TOKEN
from ..faults import switch
from .options import Options

# The environment variable `streamcert serve` reads the secured agent's token from (never its command line, which
# other users of the machine can read): the embedded run sets it to the bearer credential its --header gives.
SECURED_TOKEN_ENV = "STREAMCERT_SECURED_TOKEN"
SCHEME = "bearer"  # the name of the card's security scheme (reference/agent/card.py declares it on every card)
CHALLENGE = 'Bearer realm="streamcert reference agent"'  # RFC 6750 §3
EXTENDED_SKILL = {
    "id": "extended-card",
    "name": "Shown to authenticated clients",
    "description": "A skill only the extended agent card lists: it shows the extended card is not the public one.",
    "tags": ["testing", "streamcert"],
}


class Unauthenticated(Exception):
    """A request without the agent's credential: refused before anything is done (§7)."""


def token(options: Options) -> str:
    return options.auth or options.secured_token or TEST_TOKEN


def check(headers: Mapping[str, str], operation: str | None, secured: bool, options: Options) -> None:
    """Raise Unauthenticated when a secured agent's request (`operation`: its A2A method, if known) lacks the token.
    `headers`: the request's headers or gRPC metadata (lower-case names are looked up first)."""
    if not secured:
        return
    if AUTH_NOT_ENFORCED.on(options) and operation != a2a.GET_EXTENDED_CARD:
        return
    if EXTENDED_CARD_TO_ANYONE.on(options) and operation == a2a.GET_EXTENDED_CARD:
        return
    given = headers.get("authorization") or headers.get("Authorization") or ""
    scheme, _, credential = given.partition(" ")
    if scheme.lower() != "bearer" or credential.strip() != token(options):
        raise Unauthenticated("this agent needs Authorization: Bearer with its token (its card's securityRequirements)")


def challenge(options: Options) -> dict[str, str]:
    """The headers of a 401 (RFC 9110 §11.6.1: a 401 carries WWW-Authenticate)."""
    return {} if AUTH_NO_WWW_AUTHENTICATE.on(options) else {"WWW-Authenticate": CHALLENGE}


def acts_anyway(operation: str | None, options: Options) -> bool:
    """(fault auth-task-created) Whether the refused request is performed all the same."""
    return AUTH_TASK_CREATED.on(options) and operation in (a2a.SEND_MESSAGE, a2a.SEND_STREAMING_MESSAGE)


def declare(card: dict[str, Any]) -> None:
    """What a secured agent's card adds: the scheme required, and the extended card."""
    card["securityRequirements"] = [{"schemes": {SCHEME: {"list": []}}}]
    card["capabilities"]["extendedAgentCard"] = True


def extended(card: dict[str, Any], options: Options) -> dict[str, Any]:
    """The extended card: the public `card` (as last served) with one more skill, its signatures dropped."""
    out = copy.deepcopy(card)
    out.pop("signatures", None)
    out["skills"].append(dict(EXTENDED_SKILL))
    if EXTENDED_CARD_CONTRADICTS.on(options):  # its first interface moved elsewhere: the public card's is gone
        out["supportedInterfaces"][0]["url"] += "/elsewhere"
    return out


# -- fault variants ---------------------------------------------------------------------------------
AUTH_NOT_ENFORCED = switch("auth-not-enforced")
AUTH_TASK_CREATED = switch("auth-task-created")
AUTH_NO_WWW_AUTHENTICATE = switch("auth-no-www-authenticate")
EXTENDED_CARD_TO_ANYONE = switch("extended-card-to-anyone")
EXTENDED_CARD_CONTRADICTS = switch("extended-card-contradicts")
