"""The HTTP+JSON binding (A2A 1.0.1 §11): every operation at its route below the interface URL (§5.3, §11.3;
protocols/bindings.rest_route), the request message as the body or in the path and query, the service parameters
as headers, a stream answered as Server-Sent Events of StreamResponses."""

from __future__ import annotations

from urllib.parse import urlencode

from ...contract.capture import PARAMS, ROUTE_RETRY
from ...framelog import Exchange
from ...protocols import a2a, bindings
from ..bounds import OnEvent, Until
from .base import BindingTransport, Operation


class HttpJsonTransport(BindingTransport):
    name = bindings.HTTP_JSON

    async def send(self, op: Operation) -> Exchange:
        return await self._route(op, streaming=False)

    async def open_stream(self, op: Operation, *, limit: float, until: Until | None = None,
                          on_event: OnEvent | None = None) -> Exchange:
        return await self._route(op, streaming=True, until=until, on_event=on_event, limit=limit)

    async def _route(self, op: Operation, *, streaming: bool, until: Until | None = None,
                     on_event: OnEvent | None = None, limit: float | None = None) -> Exchange:
        c = self.client
        base = op.url or c.rpc_url or c.base_url
        params = op.params
        method, path, query, body = bindings.rest_route(op.name, params if isinstance(params, dict) else {})
        media = a2a.SSE_MEDIA_TYPE if streaming else f"{bindings.A2A_JSON_MEDIA_TYPE}, {a2a.JSON_MEDIA_TYPE}"
        headers = {"Accept": media, **op.service()}
        if body is not None:
            headers["Content-Type"] = bindings.A2A_JSON_MEDIA_TYPE
        target = base.rstrip("/") + path + (("?" + urlencode(query)) if query else "")
        ex = await c.send_http(method, target, label=op.label, json_body=body, headers=headers, rpc_method=op.name,
                               streaming=streaming, until=until, on_event=on_event, limit=limit)
        if body is None or params != body:
            ex.notes[PARAMS] = params  # what the path and query carried, as the operation's request message
        if op.name == a2a.SUBSCRIBE_TO_TASK and ex.status == 405:
            # §11.3.2 says POST, the proto's google.api.http annotation GET: the other reading, asked again
            first = {"method": method, "status": ex.status}
            c.log.exchanges.remove(ex)
            again = await c.send_http("GET", target, label=op.label, json_body=None, headers=headers,
                                      rpc_method=op.name, streaming=streaming, until=until, on_event=on_event,
                                      limit=limit)
            again.notes.update({PARAMS: params, ROUTE_RETRY: {"first": first, "then": "GET"}})
            return again
        return ex
