"""The transports of the A2A bindings (wire/bindings/): one per binding, chosen by name, each sending an operation
in its binding's form through the client that holds it, and reading its binding's errors binding-neutrally.
No network: a stand-in client records what a transport asks it to send."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from logs import error_info, grpc_call, rest, rpc_error, status_body, unary

from streamcert.framelog import END_ERROR, Exchange, FrameLog
from streamcert.protocols import a2a, bindings
from streamcert.wire.a2a_client import A2AClient
from streamcert.wire.bindings import TRANSPORTS, transport_for
from streamcert.wire.bindings.base import Operation
from streamcert.wire.bindings.grpc import GrpcBindingTransport
from streamcert.wire.bindings.http_json import HttpJsonTransport
from streamcert.wire.bindings.jsonrpc import JsonRpcTransport, send_raw
from streamcert.wire.bounds import Bounds
from streamcert.wire.urls import Origins


class StandIn:
    """What a transport uses of the client, recording each HTTP request instead of sending it; `statuses` are
    the answers' statuses, in order."""

    def __init__(self, *statuses: int, base_url: str = "http://127.0.0.1:9/agent") -> None:
        self.base_url, self.rpc_url = base_url, None
        self.log, self.clock = FrameLog(scenario="t"), (lambda: 1.0)
        self.timeout, self.stream_limit, self.bounds = 5.0, 5.0, Bounds()
        self.extra_headers = {"Authorization": "Bearer S3CRET"}
        self.origins = Origins.of(base_url, self.extra_headers, ())
        self.statuses, self.sent = list(statuses), []
        self._real = A2AClient(base_url, self.log)  # its envelope and JSON-RPC headers

    def envelope(self, *args: Any) -> dict[str, Any]:
        return self._real.envelope(*args)

    def rpc_headers(self, *args: Any, **kwargs: Any) -> dict[str, str]:
        return self._real.rpc_headers(*args, **kwargs)

    async def send_http(self, http_method: str, url: str, **kw: Any) -> Exchange:
        self.sent.append((http_method, url, kw))
        return self.log.add(Exchange(label=kw["label"], method=http_method, url=url, rpc_method=kw.get("rpc_method"),
                                     request_headers=kw["headers"], request_body=kw.get("json_body"),
                                     status=self.statuses.pop(0) if self.statuses else 200))


def test_every_binding_has_one_transport_of_its_name() -> None:
    assert set(TRANSPORTS) == set(bindings.BINDINGS)
    assert all(kind.name == name for name, kind in TRANSPORTS.items())


def test_the_client_holds_the_transport_of_its_binding() -> None:
    kinds = {b: type(A2AClient("http://127.0.0.1:9", FrameLog("t"), binding=b).transport) for b in bindings.BINDINGS}
    assert kinds == {bindings.JSONRPC: JsonRpcTransport, bindings.HTTP_JSON: HttpJsonTransport,
                     bindings.GRPC: GrpcBindingTransport}
    with pytest.raises(ValueError, match="no transport for the binding 'soap'"):
        transport_for("soap", StandIn())


def test_json_rpc_posts_an_envelope_to_the_interface() -> None:
    client = StandIn()
    client.rpc_url = "http://127.0.0.1:9/rpc"
    ex = asyncio.run(JsonRpcTransport(client).send(Operation(a2a.GET_TASK, {"id": "t1"}, "get", ("urn:x",))))
    method, url, kw = client.sent[0]
    assert (method, url, ex.rpc_method) == ("POST", "http://127.0.0.1:9/rpc", a2a.GET_TASK)
    assert kw["json_body"] == {"jsonrpc": "2.0", "id": 1, "method": a2a.GET_TASK, "params": {"id": "t1"}}
    assert kw["headers"][a2a.VERSION_HEADER] == a2a.PROTOCOL_VERSION and kw["headers"][a2a.EXTENSIONS_HEADER] == "urn:x"


def test_raw_bytes_go_as_json_rpc_whatever_the_binding() -> None:
    client = StandIn()
    asyncio.run(send_raw(client, Operation(a2a.GET_TASK, None, "broken"), b"{not json"))
    method, url, kw = client.sent[0]
    assert (method, url, kw["raw_body"], kw["json_body"]) == ("POST", "http://127.0.0.1:9/agent/a2a/jsonrpc",
                                                               b"{not json", None)


def test_http_json_sends_the_route_with_the_request_in_path_and_query() -> None:
    client = StandIn()
    op = Operation(a2a.GET_TASK, {"id": "t1", "historyLength": 2}, "get", ("urn:x",))
    ex = asyncio.run(HttpJsonTransport(client).send(op))
    method, url, kw = client.sent[0]
    assert (method, url, kw["json_body"]) == ("GET", "http://127.0.0.1:9/agent/tasks/t1?historyLength=2", None)
    assert kw["headers"] == {"Accept": f"{bindings.A2A_JSON_MEDIA_TYPE}, {a2a.JSON_MEDIA_TYPE}",
                             a2a.VERSION_HEADER: a2a.PROTOCOL_VERSION, a2a.EXTENSIONS_HEADER: "urn:x"}
    assert ex.notes["params"] == {"id": "t1", "historyLength": 2}


def test_http_json_subscribe_refused_with_405_is_asked_again_with_get() -> None:
    client = StandIn(405, 200)
    ex = asyncio.run(HttpJsonTransport(client).open_stream(Operation(a2a.SUBSCRIBE_TO_TASK, {"id": "t1"}, "sub"),
                                                           limit=3.0))
    assert [(m, u) for m, u, _ in client.sent] == [("POST", "http://127.0.0.1:9/agent/tasks/t1:subscribe"),
                                                   ("GET", "http://127.0.0.1:9/agent/tasks/t1:subscribe")]
    assert client.log.exchanges == [ex] and ex.status == 200
    assert ex.notes["route_retry"] == {"first": {"method": "POST", "status": 405}, "then": "GET"}
    assert client.sent[1][2]["limit"] == 3.0 and client.sent[1][2]["streaming"] is True


def test_grpc_refuses_credentials_to_another_origin_without_sending() -> None:
    client = StandIn()
    ex = asyncio.run(GrpcBindingTransport(client).send(Operation(a2a.GET_TASK, {"id": "t1"}, "get",
                                                                 url="127.0.0.1:10")))
    assert (ex.binding, ex.end, ex.notes.get("not_sent")) == (bindings.GRPC, END_ERROR, True)
    assert ex.url == "127.0.0.1:10/lf.a2a.v1.A2AService/GetTask" and "--allow-origin" in ex.error
    assert client.sent == []


@pytest.mark.parametrize("binding, ex", [
    (bindings.JSONRPC, unary("get", error=rpc_error(a2a.TASK_NOT_FOUND))),
    (bindings.HTTP_JSON, rest("get", a2a.GET_TASK, status_body(a2a.TASK_NOT_FOUND), status=404)),
    (bindings.GRPC, grpc_call("get", a2a.GET_TASK, status=("NOT_FOUND", "no such task", error_info()))),
], ids=["jsonrpc", "http-json", "grpc"])
def test_each_transport_reads_its_error_form_as_the_neutral_error(binding: str, ex: Exchange) -> None:
    assert transport_for(binding, StandIn()).error(ex)["code"] == a2a.TASK_NOT_FOUND
    assert transport_for(binding, StandIn()).error(unary("ok", {"id": "t1"})) is None
