"""Hand-made frame logs for rule tests: small builders, no network.

Exchanges
    unary(label, result=…)            a JSON-RPC answer {"jsonrpc","id","result"} as application/json
    unary(label, error=…)             … or {"error": …}; `body=` sends any JSON value or raw bytes instead
    rpc_error(code, message, data)    a JSON-RPC error object (data omitted when None)
    error_info(reason)                the google.rpc.ErrorInfo detail A2A SHOULD put in error.data
    sse(label, items)                 a text/event-stream answer: each item a result dict (wrapped in an
                                      envelope), a dict with "jsonrpc" (sent as it is), or a str (raw data);
                                      `end=` and `error=` say how it ended (a reset, an idle gap: framelog.END_*)
    broken(label, why)                a transport failure (end "error", no status)
    unjudged(ex, reason, cap=…)       `ex` marked as the capture marks an answer it left unjudged (a cap reached)
    stdio(label, sent, lines)         a program run on stdin/stdout: the lines written and its output lines
    frame_log(*exchanges, …)          a FrameLog holding them, in order
    progress_sse(items, times=…)      a progress stream (label "progress"): each item a JSON object sent as
                                      one event (a str: raw data), at the given arrival times

Scripts
    script(*steps, name=…)            a test-agent script (docs/contracts.md §6) holding these steps

A2A objects
    text_msg(text, role)              a Message with one text part
    task(id, ctx, state, …)           a Task; task_result(…) the same wrapped as {"task": …} (SendMessage)
    status(state, text, ts)           a TaskStatus
    status_update(tid, ctx, state, text, ts)        a {"statusUpdate": …} stream result
    artifact_update(tid, ctx, aid, text=… | data=…, append, last, name)   a {"artifactUpdate": …} result
    stream_task(…)                    a {"task": …} stream result (frame 1)

The other bindings
    rest(label, op, answer, status=…) an HTTP+JSON answer of operation `op` (its route from `params`)
    rest_sse(label, op, items)        an HTTP+JSON stream: each item one SSE event of bare StreamResponse JSON
    status_body(code, http)           the google.rpc.Status JSON body of the A2A error `code`
    grpc_call(label, op, frames, status=…)   a gRPC call: its messages as ProtoJSON frames, then its status

Every builder takes keyword overrides where a test needs to break something; anything not given gets
a fixed, valid value, so a test only states what it is about.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from streamcert.contract.capture import UNJUDGED
from streamcert.framelog import END_CLOSED, END_ERROR, Chunk, Event, Exchange, FrameLog
from streamcert.protocols import a2a, bindings

RPC_URL = "http://127.0.0.1:41241/a2a/jsonrpc"
TASK_ID = "task-1"
CONTEXT_ID = "ctx-1"


# -- exchanges -------------------------------------------------------------------------------------

def rpc_error(code: int, message: str = "refused", data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return err


def error_info(reason: str = "TASK_NOT_FOUND", domain: str = "a2a-protocol.org") -> list[dict[str, Any]]:
    return [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": domain}]


def unary(label: str, result: Any = None, *, error: dict[str, Any] | None = None, body: Any = None,
          rpc_method: str | None = None, params: Any = None, rpc_id: int = 1, status: int = 200,
          content_type: str = "application/json", t: float = 0.0) -> Exchange:
    """A unary JSON-RPC exchange. `body` (bytes or any JSON value) replaces the envelope."""
    if body is None:
        body = {"jsonrpc": "2.0", "id": rpc_id, **({"error": error} if error is not None else {"result": result})}
    raw = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
    return Exchange(
        label=label, method="POST", url=RPC_URL, rpc_method=rpc_method,
        request_body={"jsonrpc": "2.0", "id": rpc_id, "method": rpc_method or "GetTask", "params": params or {}},
        status=status, response_headers={"content-type": content_type},
        t_sent=t, t_headers=t + 0.01, t_end=t + 0.02, end=END_CLOSED,
        chunks=[Chunk(t + 0.02, raw)] if raw else [],
    )


def sse(label: str, items: list[Any], *, rpc_method: str = "SendStreamingMessage", params: Any = None,
        rpc_id: int = 1, end: str = END_CLOSED, t: float = 0.0, dt: float = 0.01, error: str | None = None) -> Exchange:
    """A stream: one SSE event per item, `dt` seconds apart, then `end` (with `error` saying how, for an end
    such as a reset or an idle gap)."""
    events, chunks = [], []
    for i, item in enumerate(items):
        if isinstance(item, str):
            data = item
        elif isinstance(item, dict) and "jsonrpc" in item:
            data = json.dumps(item)
        else:
            data = json.dumps({"jsonrpc": "2.0", "id": rpc_id, "result": item})
        at = t + 0.01 + dt * (i + 1)
        events.append(Event(index=i, t=at, data=data))
        chunks.append(Chunk(at, f"data: {data}\n\n".encode("utf-8")))
    return Exchange(
        label=label, method="POST", url=RPC_URL, rpc_method=rpc_method,
        request_body={"jsonrpc": "2.0", "id": rpc_id, "method": rpc_method, "params": params or {}},
        status=200, response_headers={"content-type": "text/event-stream"},
        t_sent=t, t_headers=t + 0.01, t_end=t + 0.01 + dt * (len(items) + 1), end=end, error=error,
        chunks=chunks, events=events, notes={"streaming": True},
    )


def unjudged(ex: Exchange, reason: str, cap: str | None = None, figure: int | None = None,
             limit: int | None = None) -> Exchange:
    """`ex` as the capture leaves an answer it could not judge (framelog.UNJUDGED): the reason is the
    sentence its findings say; a cap reached also names the Target field, the figure and the limit."""
    record: dict[str, Any] = {"reason": reason}
    if cap is not None:
        record.update(cap=cap, figure=figure, limit=limit)
    ex.notes[UNJUDGED] = record
    return ex


def broken(label: str, why: str = "ConnectError: connection refused", rpc_method: str | None = None) -> Exchange:
    return Exchange(label=label, method="POST", url=RPC_URL, rpc_method=rpc_method, end=END_ERROR, error=why)


def frame_log(*exchanges: Exchange, scenario: str = "test", script: dict | None = None,
              notes: dict | None = None) -> FrameLog:
    return FrameLog(scenario=scenario, exchanges=list(exchanges), script=script, notes=dict(notes or {}))


# -- A2A objects ---------------------------------------------------------------------------------------

def text_msg(text: str, role: str = "ROLE_AGENT", message_id: str | None = None, **extra: Any) -> dict[str, Any]:
    """A Message with one text part; its messageId is derived from role and text unless given."""
    mid = message_id or f"m-{zlib.crc32(f'{role}:{text}'.encode()):08x}"
    return {"messageId": mid, "role": role,
            "parts": [{"text": text}], **extra}


def status(state: str, text: str | None = None, ts: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"state": state}
    if text is not None:
        out["message"] = text_msg(text)
    if ts is not None:
        out["timestamp"] = ts
    return out


def task(tid: str = TASK_ID, ctx: str = CONTEXT_ID, state: str = "TASK_STATE_SUBMITTED", text: str | None = None,
         ts: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"id": tid, "contextId": ctx, "status": status(state, text, ts), **extra}


def task_result(*args: Any, **kw: Any) -> dict[str, Any]:
    return {"task": task(*args, **kw)}


stream_task = task_result


def status_update(state: str, text: str | None = None, *, tid: str = TASK_ID, ctx: str = CONTEXT_ID,
                  ts: str | None = None) -> dict[str, Any]:
    return {"statusUpdate": {"taskId": tid, "contextId": ctx, "status": status(state, text, ts)}}


def artifact_update(aid: str, *, text: str | None = None, data: Any = None, append: bool = False,
                    last: bool = False, name: str | None = None, tid: str = TASK_ID,
                    ctx: str = CONTEXT_ID) -> dict[str, Any]:
    part: dict[str, Any] = {"text": text} if text is not None else {"data": data, "mediaType": "application/json"}
    art: dict[str, Any] = {"artifactId": aid, "parts": [part]}
    if name is not None:
        art["name"] = name
    upd: dict[str, Any] = {"taskId": tid, "contextId": ctx, "artifact": art}
    if append:
        upd["append"] = True
    if last:
        upd["lastChunk"] = True
    return {"artifactUpdate": upd}


# -- the agent card ------------------------------------------------------------------------------------

CARD_URL = "http://127.0.0.1:41241/.well-known/agent-card.json"


def agent_card(**overrides: Any) -> dict[str, Any]:
    """A valid A2A 1.0 AgentCard with one JSONRPC 1.0 interface and one declared extension."""
    card: dict[str, Any] = {
        "name": "test agent", "description": "an agent for rule tests", "version": "1.0.0",
        "supportedInterfaces": [{"url": RPC_URL, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": True, "extensions": [
            {"uri": "https://example.com/ext/v1", "description": "an extension", "required": False}]},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "skill", "description": "does things", "tags": ["t"]}],
    }
    card.update(overrides)
    return card


CARD_CACHING = {"cache-control": "max-age=300", "etag": '"card-v1"'}  # A2A §8.6.1's two SHOULDs


def card_get(card: Any = None, *, status: int = 200, content_type: str = "application/json",
             body: bytes | None = None, t: float = 0.0, caching: dict[str, str] | None = None) -> Exchange:
    """GET of the agent card (label "card"): `card` as JSON, or `body` as raw bytes; `caching`: the caching
    headers it comes with (CARD_CACHING unless given)."""
    raw = body if body is not None else json.dumps(agent_card() if card is None else card).encode("utf-8")
    headers = {"content-type": content_type, **(CARD_CACHING if caching is None else caching)}
    return Exchange(label="card", method="GET", url=CARD_URL, status=status,
                    response_headers=headers, t_sent=t, t_headers=t + 0.01,
                    t_end=t + 0.02, end=END_CLOSED, chunks=[Chunk(t + 0.02, raw)] if raw else [])


def stdio(label: str, sent: list[str], lines: list[str], *, status: int | None = 0, end: str = END_CLOSED,
          error: str | None = None, stderr: str = "") -> Exchange:
    """A program run on stdin/stdout (wire/stdio.py): the lines written to it and its output lines."""
    ex = Exchange(label=label, method="STDIO", url="renderer", request_body=list(sent), status=status, end=end,
                  error=error, t_end=0.1)
    for n, line in enumerate(lines):
        ex.chunks.append(Chunk(t=0.01 * n, data=line.encode("utf-8") + b"\n"))
        ex.events.append(Event(index=n, t=0.01 * n, data=line))
    if stderr:
        ex.notes["stderr"] = stderr
    return ex


# -- progress streams (seed 003) -------------------------------------------------------------------------

PROGRESS_URL = "http://127.0.0.1:41241/progress"


def progress_sse(items: list[Any], *, times: list[float] | None = None, script: dict | None = None,
                 end: str = END_CLOSED) -> Exchange:
    """A progress stream: one SSE event per item (a dict as JSON, a str as it is) arriving at `times`
    (default 50 ms apart), then `end`."""
    times = times if times is not None else [0.05 * (i + 1) for i in range(len(items))]
    events, chunks = [], []
    for i, (item, at) in enumerate(zip(items, times)):
        data = item if isinstance(item, str) else json.dumps(item)
        events.append(Event(index=i, t=at, data=data))
        chunks.append(Chunk(at, f"data: {data}\n\n".encode("utf-8")))
    last = times[len(items) - 1] if items else 0.0
    return Exchange(label="progress", method="POST", url=PROGRESS_URL,
                    request_body={"urn:streamcert:script": script}, status=200,
                    response_headers={"content-type": "text/event-stream"}, t_sent=0.0, t_headers=0.01,
                    t_end=last + 0.01, end=end, chunks=chunks, events=events, notes={"streaming": True})


def script(*steps: dict[str, Any], name: str = "test") -> dict[str, Any]:
    """A test-agent script (docs/contracts.md §6, version 1) holding these steps."""
    return {"version": 1, "name": name, "steps": list(steps)}

# -- the other A2A bindings (protocols/bindings.py) -----------------------------------------------------
REST_URL = "http://127.0.0.1:41241/a2a/rest"
A2A_JSON = bindings.A2A_JSON_MEDIA_TYPE
GRPC_URL = "http://127.0.0.1:50051"
OK = ("OK", "", [])


def rest(label: str, op: str, answer: Any = None, *, params: dict[str, Any] | None = None, status: int = 200,
         content_type: str = A2A_JSON, body: bytes | None = None, method: str | None = None,
         notes: dict[str, Any] | None = None) -> Exchange:
    """A unary HTTP+JSON exchange of operation `op`: the request its route makes of `params`, answered
    `status` with `answer` as JSON (or `body` as raw bytes)."""
    verb, path, query, sent = bindings.rest_route(op, params or {})
    raw = body if body is not None else json.dumps(answer).encode("utf-8")
    url = REST_URL + path + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")
    return Exchange(label=label, method=method or verb, url=url, rpc_method=op, request_body=sent, status=status,
                    response_headers={"content-type": content_type}, t_sent=0.0, t_headers=0.01, t_end=0.02,
                    end=END_CLOSED, chunks=[Chunk(0.02, raw)] if raw else [], notes=dict(notes or {}),
                    binding=bindings.HTTP_JSON)


def rest_sse(label: str, op: str, items: list[Any], *, params: dict[str, Any] | None = None,
             status: int = 200) -> Exchange:
    """An HTTP+JSON stream: one SSE event per item, its data the item as JSON (a str: sent as it is)."""
    verb, path, _, sent = bindings.rest_route(op, params or {})
    events, chunks = [], []
    for i, item in enumerate(items):
        data = item if isinstance(item, str) else json.dumps(item)
        events.append(Event(index=i, t=0.02 + 0.01 * i, data=data))
        chunks.append(Chunk(0.02 + 0.01 * i, f"data: {data}\n\n".encode("utf-8")))
    return Exchange(label=label, method=verb, url=REST_URL + path, rpc_method=op, request_body=sent, status=status,
                    response_headers={"content-type": a2a.SSE_MEDIA_TYPE}, t_sent=0.0, t_headers=0.01,
                    t_end=0.1, end=END_CLOSED, chunks=chunks, events=events, notes={"streaming": True},
                    binding=bindings.HTTP_JSON)


def status_body(code: int, http: int | None = None, message: str = "refused", *, details: Any = None,
                reason: str | None = None) -> dict[str, Any]:
    """google.rpc.Status JSON of the A2A error `code` (its ErrorInfo unless `details` is given)."""
    grpc, mapped = bindings.forms_of(code)
    if details is None and code in bindings.ERROR_FORMS:
        details = error_info(reason or bindings.reason_of(code))
    out: dict[str, Any] = {"code": http or mapped, "status": grpc, "message": message}
    if details is not None:
        out["details"] = details
    return {"error": out}


def grpc_call(label: str, op: str = a2a.GET_TASK, frames: list[Any] = (), *, status: tuple = OK,
              undecodable: list[int] = (), t: float = 0.0, **notes: Any) -> Exchange:
    """A gRPC call: each frame a response message (its ProtoJSON; an index in `undecodable`: bytes that did not
    decode), then `status` (code name, message, details)."""
    events, chunks, bad = [], [], []
    for i, frame in enumerate(frames):
        at = t + 0.01 * (i + 2)
        data = "" if i in undecodable else json.dumps(frame, separators=(",", ":"))
        events.append(Event(index=i, t=at, data=data))
        chunks.append(Chunk(at, b"\x0a\x05ab" if i in undecodable else b"\x0a\x00"))
        if i in undecodable:
            bad.append({"i": i, "error": "4 bytes that do not decode as lf.a2a.v1.StreamResponse: Wire format was "
                                         "corrupt"})
    code, message, details = status
    all_notes: dict[str, Any] = {"grpc_status": {"code": code, "message": message, "details": list(details)},
                                 "trailers": {}, **notes}
    if bad:
        all_notes["undecodable"] = bad
    if op in a2a.STREAMING_METHODS:
        all_notes["streaming"] = True
    return Exchange(label=label, method="POST", url=GRPC_URL + bindings.grpc_path(op), rpc_method=op,
                    request_headers={"a2a-version": "1.0"}, request_body={"id": "t"}, status=200,
                    response_headers={"content-type": "application/grpc"}, t_sent=t, t_headers=t + 0.01,
                    t_end=t + 0.01 * (len(frames) + 2), end=END_CLOSED, chunks=chunks, events=events,
                    notes=all_notes, binding=bindings.GRPC)
