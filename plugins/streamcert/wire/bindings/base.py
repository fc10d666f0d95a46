"""The transport of one A2A protocol binding: the interface every binding's class keeps (httpx's transport model).

The A2A client (wire/a2a_client.py) holds one transport, chosen by the binding's name from the table in
`wire/bindings/__init__.py`, and hands it each operation the drivers ask for (`Operation`: SendMessage,
GetTask…, with its request message as JSON). The transport

- `send`s a unary operation and `open_stream`s a streaming one over its binding, each into one exchange of the
  frame log (its `binding`, its `rpc_method`, its label), within the client's caps and with the credentials only
  where they may go (wire/urls.py);
- says where on the card its interface is (`interface_url`);
- reads its binding's error form into the binding-neutral error of protocols/bindings.py (`error`).

A transport reaches the network through the client (`ClientSide`): an HTTP binding through `send_http`, the one
place an HTTP request goes out; the gRPC binding through wire/grpc.py.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from ...framelog import Exchange, FrameLog
from ...protocols import a2a, bindings
from ..bounds import Bounds, OnEvent, Until
from ..capture import Clock
from ..urls import Origins

UNSET: Any = object()  # no JSON-RPC id given: the client numbers the request


@dataclass(frozen=True)
class Operation:
    """One A2A operation as a driver asks for it: its name, its request message (JSON), the label of its exchange,
    the service parameters (§3.2.6: the extensions to activate, the A2A-Version to send, None for none), and
    where to send it (`url`: another interface URL than the card's)."""

    name: str
    params: Any
    label: str
    extensions: tuple[str, ...] | list[str] = ()
    version: str | None = a2a.PROTOCOL_VERSION
    url: str | None = None
    rpc_id: Any = UNSET

    def service(self) -> dict[str, str]:
        """The service parameters as headers (HTTP) or metadata (gRPC, lower-cased by its transport)."""
        out = {}
        if self.version is not None:
            out[a2a.VERSION_HEADER] = self.version
        if self.extensions:
            out[a2a.EXTENSIONS_HEADER] = ",".join(self.extensions)
        return out


class ClientSide(Protocol):
    """What a transport uses of the client that holds it (wire/a2a_client.A2AClient)."""

    base_url: str
    rpc_url: str | None
    log: FrameLog
    clock: Clock
    timeout: float
    stream_limit: float
    bounds: Bounds
    extra_headers: dict[str, str]
    origins: Origins

    def envelope(self, method: str, params: Any, rpc_id: Any = ...) -> dict[str, Any]: ...

    def rpc_headers(self, extensions: tuple[str, ...] | list[str] = (), version: str | None = ...,
                    accept: str = ...) -> dict[str, str]: ...

    async def send_http(self, http_method: str, url: str, *, label: str, headers: dict[str, str],
                        json_body: Any = None, raw_body: bytes | None = None, rpc_method: str | None = None,
                        streaming: bool = False, until: Until | None = None, on_event: OnEvent | None = None,
                        limit: float | None = None) -> Exchange: ...


class BindingTransport(ABC):
    """The transport of one binding for one client. A subclass names its binding (`name`, one of
    protocols/bindings.BINDINGS) and has its row in the table of wire/bindings/__init__.py."""

    name: ClassVar[str]

    def __init__(self, client: ClientSide) -> None:
        self.client = client

    def interface_url(self, card: Any) -> str | None:
        """The URL of the card's first interface of this binding for protocol 1.x (bindings.declared)."""
        return next((url for b, url in bindings.declared(card) if b == self.name), None)

    @abstractmethod
    async def send(self, op: Operation) -> Exchange:
        """A unary operation, sent and its answer read into one exchange."""

    @abstractmethod
    async def open_stream(self, op: Operation, *, limit: float, until: Until | None = None,
                          on_event: OnEvent | None = None) -> Exchange:
        """A streaming operation, read until the server ends it, `until(event)` holds, or `limit` seconds."""

    def error(self, ex: Exchange) -> dict[str, Any] | None:
        """The A2A error of an answer over this binding (of a unary exchange, or of a stream's only event), in the
        binding-neutral form of protocols/bindings.py, None when it holds none. protocols/bindings.read_answer
        reads every binding's form there (a JSON-RPC `error` member, an HTTP+JSON status and google.rpc.Status
        body, a gRPC status), so that the rules, which never import the wire layer, read it the same way."""
        return bindings.read_answer(ex).error

    async def aclose(self) -> None:  # noqa: B027 - most transports open nothing of their own
        """Close what the transport opened of its own (the HTTP connections are the client's)."""

