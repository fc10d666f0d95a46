"""The A2A protocol bindings the client speaks, one transport class each (the interface: base.py), chosen by
the binding's name. A binding is added by its module here and its row in TRANSPORTS (docs/bindings.md)."""

from __future__ import annotations

from ...protocols import bindings
from .base import BindingTransport, ClientSide
from .grpc import GrpcBindingTransport
from .http_json import HttpJsonTransport
from .jsonrpc import JsonRpcTransport

TRANSPORTS: dict[str, type[BindingTransport]] = {
    bindings.JSONRPC: JsonRpcTransport,
    bindings.HTTP_JSON: HttpJsonTransport,
    bindings.GRPC: GrpcBindingTransport,
}


def transport_for(binding: str, client: ClientSide) -> BindingTransport:
    """The transport of `binding` (a name of protocols/bindings.BINDINGS) for `client`."""
    try:
        kind = TRANSPORTS[binding]
    except KeyError:
        raise ValueError(f"no transport for the binding {binding!r}; the suite speaks {', '.join(TRANSPORTS)}") \
            from None
    return kind(client)

