"""The operations of capabilities the reference's cards do not declare (A2A 1.0.1 §3.3.4): every card says
`pushNotifications: false` and declares no `extendedAgentCard`, so the four push-notification-config methods
answer PushNotificationNotSupportedError and GetExtendedAgentCard UnsupportedOperationError, on every binding
(each binding writes the error in its own form, §5.4). They are operations the agent has, refused: never a
method it lacks (-32601, HTTP 404 without an ErrorInfo, gRPC UNIMPLEMENTED)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ...protocols import a2a
from ..faults import switch
from .options import Options
from .rpc import RpcError

Handler = Callable[[dict[str, Any]], Awaitable[Any]]


async def _push_not_supported(_params: dict[str, Any]) -> Any:
    raise RpcError(a2a.PUSH_NOT_SUPPORTED, "This agent sends no push notifications "
                                          "(its card declares capabilities.pushNotifications: false)")


async def _no_extended_card(_params: dict[str, Any]) -> Any:
    raise RpcError(a2a.UNSUPPORTED_OPERATION, "This agent has no extended agent card "
                                              "(its card does not declare capabilities.extendedAgentCard)")


def refusals(options: Options) -> dict[str, Handler]:
    """The handlers of the undeclared capabilities' operations, by method name."""
    if CAPABILITY_METHODS_UNIMPLEMENTED.on(options):
        return {}  # (fault) answered as methods the server does not have
    out: dict[str, Handler] = {method: _push_not_supported for method in a2a.PUSH_CONFIG_METHODS}
    out[a2a.GET_EXTENDED_CARD] = _no_extended_card
    return out


# -- fault variants ---------------------------------------------------------------------------------
CAPABILITY_METHODS_UNIMPLEMENTED = switch("capability-methods-unimplemented")
