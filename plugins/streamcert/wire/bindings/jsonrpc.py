"""The JSON-RPC binding (A2A 1.0.1 §9): every operation a JSON-RPC 2.0 envelope POSTed to the interface URL, a
stream answered as Server-Sent Events of JSON-RPC responses."""

from __future__ import annotations

from typing import Any

from ...framelog import Exchange
from ...protocols import a2a, bindings
from ..bounds import OnEvent, Until
from ..urls import join
from .base import BindingTransport, ClientSide, Operation

DEFAULT_PATH = "/a2a/jsonrpc"  # where the requests go before a card names the interface


class JsonRpcTransport(BindingTransport):
    name = bindings.JSONRPC

    def interface_url(self, card: Any) -> str | None:
        return bindings.jsonrpc_url(card)

    async def send(self, op: Operation) -> Exchange:
        c = self.client
        return await c.send_http("POST", op.url or endpoint(c), label=op.label,
                                 json_body=c.envelope(op.name, op.params, op.rpc_id),
                                 headers=c.rpc_headers(op.extensions, op.version), rpc_method=op.name)

    async def open_stream(self, op: Operation, *, limit: float, until: Until | None = None,
                          on_event: OnEvent | None = None) -> Exchange:
        c = self.client
        body = c.envelope(op.name, op.params, op.rpc_id)
        headers = c.rpc_headers(op.extensions, op.version, accept=a2a.SSE_MEDIA_TYPE)
        return await c.send_http("POST", op.url or endpoint(c), label=op.label, json_body=body, headers=headers,
                                 rpc_method=op.name, streaming=True, until=until, on_event=on_event, limit=limit)


async def send_raw(client: ClientSide, op: Operation, raw_body: bytes) -> Exchange:
    """Bytes as they are, POSTed as a JSON-RPC request would be (for the tests of JSON-RPC's own errors), whatever
    the client's binding."""
    return await client.send_http("POST", op.url or endpoint(client), label=op.label, json_body=None,
                                  raw_body=raw_body, headers=client.rpc_headers(op.extensions, op.version),
                                  rpc_method=op.name)


def endpoint(client: ClientSide) -> str:
    """Where the client's JSON-RPC requests go: the card's interface, else the default path below the base URL."""
    return client.rpc_url or join(client.base_url, DEFAULT_PATH)

