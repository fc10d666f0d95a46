"""The gRPC binding (A2A 1.0.1 §10): every operation a call of `/lf.a2a.v1.A2AService/<Operation>` at the
interface's host and port, the service parameters and the credentials as metadata. The call itself (channels,
messages, statuses, caps) is wire/grpc.py's, imported on the first call: grpcio is the optional extra `grpc`.
"""

from __future__ import annotations

from typing import Any

from ...contract.capture import NOT_SENT, ORIGIN
from ...framelog import END_ERROR, Exchange
from ...protocols import bindings
from ..bounds import OnEvent, Until
from .base import BindingTransport, Operation


class GrpcBindingTransport(BindingTransport):
    name = bindings.GRPC

    _calls: Any = None  # wire/grpc.GrpcTransport, made on the first call

    async def send(self, op: Operation) -> Exchange:
        return await self._call(op, streaming=False)

    async def open_stream(self, op: Operation, *, limit: float, until: Until | None = None,
                          on_event: OnEvent | None = None) -> Exchange:
        return await self._call(op, streaming=True, until=until, on_event=on_event, limit=limit)

    async def aclose(self) -> None:
        if self._calls is not None:
            await self._calls.aclose()

    async def _call(self, op: Operation, *, streaming: bool, until: Until | None = None,
                    on_event: OnEvent | None = None, limit: float | None = None) -> Exchange:
        from ...protocols.grpc_messages import grpc_available

        c = self.client
        base = op.url or c.rpc_url or c.base_url
        params = op.params
        # The target's credentials go to a gRPC interface of another origin only when allowed, as over HTTP
        # (wire/urls.py).
        passage = c.origins.passage(bindings.schemed(base))
        why = grpc_available() or passage.refused
        if why is not None:
            ex = c.log.add(Exchange(label=op.label, method="POST", url=base + bindings.grpc_path(op.name),
                                    rpc_method=op.name, request_body=params, t_sent=c.clock(), end=END_ERROR,
                                    error=why, binding=bindings.GRPC))
            ex.t_end = ex.t_sent
            if passage.refused:
                ex.notes[NOT_SENT] = True
            return ex
        if self._calls is None:
            from ..grpc import GrpcTransport

            self._calls = GrpcTransport(c.clock, c.log, timeout=c.timeout, stream_limit=c.stream_limit,
                                        bounds=c.bounds)
        given = c.extra_headers if passage.credentials else {}
        metadata = {k.lower(): v for k, v in {**given, **op.service()}.items()}
        ex = await self._calls.call(op.name, params if isinstance(params, dict) else {}, label=op.label,
                                    target_url=base, metadata=metadata, streaming=streaming, until=until,
                                    on_event=on_event, limit=limit)
        if passage.note:
            ex.notes[ORIGIN] = passage.note
        return ex
