"""The A2A service parameters (A2A 1.0.1 §3.2.6) as the reference reads them, the same on every binding: HTTP
headers on JSON-RPC and HTTP+JSON (§11.2), gRPC metadata (§10.2, lower-case keys).

    activated(headers, agent)      the extensions a request activates that the agent's card declares
    check_version(headers, opts)   VersionNotSupportedError for an A2A-Version the server does not speak
    check_extensions(headers, agent, opts)
                                   ExtensionSupportRequiredError for a required extension not activated
    echo_headers(activated, opts)  the response header (or initial metadata) echoing what was activated
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable, Mapping

from ...protocols import a2a
from ...protocols.script import SCRIPT_KEY
from ..faults import switch, variant
from . import auth, rpc
from .methods import Agent
from .options import Options

_VERSION_OK = re.compile(r"1\.0(\.\d+)?")  # Major.Minor; a patch number is not considered (A2A §3.6)


def value_of(headers: Mapping[str, str] | Iterable[tuple[str, str]], name: str) -> str:
    """A parameter's value, its name in any case (a gRPC key is lower-case, an HTTP header any case)."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return next((value for key, value in pairs if key.lower() == name.lower()), "")


def activated(headers: Mapping[str, str], agent: Agent) -> list[str]:
    """The extensions the request activates that this agent's card declares, in request order."""
    asked = [uri.strip() for uri in value_of(headers, a2a.EXTENSIONS_HEADER).split(",")]
    declared = agent.spec.extension_uris + ((SCRIPT_KEY,) if agent.options.script_steps is not None else ())
    return list(dict.fromkeys(uri for uri in asked if uri in declared))


def check_version(headers: Mapping[str, str], options: Options) -> None:
    # A missing or empty value reads as 0.3 (A2A §3.6), which this server does not speak.
    unset = a2a.PROTOCOL_VERSION if VERSION_MISSING_SERVED.on(options) else a2a.UNSET_VERSION
    version = value_of(headers, a2a.VERSION_HEADER).strip() or unset
    known = variant(options, _VERSION_OK, {VERSION_PATCH_REFUSED: _VERSION_EXACT})
    if not known.fullmatch(version) and not VERSION_IGNORED.on(options):
        raise rpc.RpcError(a2a.VERSION_NOT_SUPPORTED,
                           f"A2A version {version} is not supported; this server speaks {a2a.PROTOCOL_VERSION}")


def check_extensions(headers: Mapping[str, str], agent: Agent, options: Options) -> None:
    """ExtensionSupportRequiredError when the request does not activate an extension the card marks required
    (A2A §3.3.4, §4.6.3)."""
    missing = [uri for uri in agent.spec.required if uri not in activated(headers, agent)]
    if missing and not EXTENSION_REQUIRED_IGNORED.on(options):
        raise rpc.RpcError(a2a.EXTENSION_SUPPORT_REQUIRED,
                           f"This agent requires the extension(s) {', '.join(missing)}: activate them with "
                           f"{a2a.EXTENSIONS_HEADER}")


def echo_headers(activated: list[str], options: Options) -> dict[str, str]:
    if not activated or NO_EXTENSION_ECHO.on(options):
        return {}
    return {a2a.EXTENSIONS_HEADER: ",".join(activated)}


# -- fault variants ---------------------------------------------------------------------------------
VERSION_IGNORED = switch("version-ignored")
VERSION_PATCH_REFUSED = switch("version-patch-refused")
VERSION_MISSING_SERVED = switch("version-missing-served")  # a missing or empty A2A-Version read as 1.0
_VERSION_EXACT = re.compile(r"1\.0")  # (fault: version-patch-refused) the patch number is considered
NO_EXTENSION_ECHO = switch("no-extension-echo")
EXTENSION_REQUIRED_IGNORED = switch("extension-required-ignored")


async def unauthenticated(headers: Mapping[str, str], operation: str | None, params: object, agent: Agent) -> str | None:
    """Why the request is refused for want of the agent's credential (A2A §7: HTTP 401, gRPC UNAUTHENTICATED), or
    None when it may be served. Nothing is done for a refused request (a fault does it all the same)."""
    try:
        auth.check(headers, operation, agent.secured, agent.options)
    except auth.Unauthenticated as refusal:
        if auth.acts_anyway(operation, agent.options) and operation in agent.handlers:
            with contextlib.suppress(rpc.RpcError):
                await agent.handlers[operation](params)  # (fault auth-task-created) a task made, then refused
        return str(refusal)
    return None
