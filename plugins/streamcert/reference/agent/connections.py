"""How the reference server treats its connections: kept alive between requests (HTTP/1.1), and, under one fault
variant, dropped after an error answer without saying so.

The correct server keeps every connection open for its next request (KEEP_ALIVE_S in server.py). `wrapped(app)`
is the ASGI app uvicorn serves: the app itself, or under close-after-error the app whose connections close after
each error answer.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ..faults import switch

# -- fault variants ---------------------------------------------------------------------------------
# A legal server (RFC 9112 §9.6: a connection may be closed at any time) that the suite must judge as it judges
# the correct one: after an answer that is an error (an HTTP error status, or a JSON-RPC error object) it serves
# nothing more on the connection, without Connection: close: the next request that comes on it is dropped unread
# and the connection closed (whenever it comes: the race a client meets now and then is met every time), and a
# connection nothing comes on is closed CLOSE_AFTER_S later.
CLOSE_AFTER_ERROR = switch("close-after-error")
CLOSE_AFTER_S = 2.0


def wrapped(app: Any) -> Any:
    """The ASGI app to serve: `app`, or `app` with its connections closed after each error answer."""
    return _ClosingAfterError(app) if CLOSE_AFTER_ERROR.on(app.state.options) else app


class _ClosingAfterError:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status, body = 0, b""

        async def sending(message: dict[str, Any]) -> None:
            nonlocal status, body
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and len(body) < 65536:
                body += message.get("body", b"")
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body") and _error(status, body):
                # uvicorn calls the app with its cycle's bound `send`, whose cycle holds the connection
                transport = getattr(getattr(send, "__self__", None), "transport", None)
                if transport is not None and not transport.is_closing():
                    _drop_what_comes(transport)

        await self.app(scope, receive, sending)


def _drop_what_comes(transport: asyncio.Transport) -> None:
    """Close the connection when its next bytes come, unread (or CLOSE_AFTER_S from now if none come)."""
    protocol = transport.get_protocol()
    protocol.data_received = lambda data: transport.close()  # asyncio hands the next bytes to this instead
    asyncio.get_running_loop().call_later(CLOSE_AFTER_S, transport.close)


def _error(status: int, body: bytes) -> bool:
    if status >= 400:
        return True
    try:
        doc = json.loads(body) if body[:1] == b"{" else None
    except ValueError:
        return False
    return isinstance(doc, dict) and isinstance(doc.get("error"), dict)
