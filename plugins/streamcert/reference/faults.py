"""Fault variants of the reference agent: each breaks one rule so the suite can prove it catches it.

`catches`: requirement IDs the suite must flag (FAIL, or WARNING/NON_STRICT for a SHOULD).
`also`: IDs it may flag as collateral, because the broken frame hides what they look at.
The code checks each fault name in one small place (grep for the name).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import a2a


@dataclass(frozen=True)
class Fault:
    name: str
    description: str
    catches: tuple[str, ...]
    also: tuple[str, ...] = ()
    # Which embedded program the fault breaks: "server" (the reference HTTP server: its A2A agents
    # and its progress route), "line" (the reference line renderer), "acp" (the reference ACP agent).
    target: str = "server"


def _stream(*nums: int) -> tuple[str, ...]:
    return tuple(f"A2A-STREAM-{n:03d}" for n in nums)


def _task(*nums: int) -> tuple[str, ...]:
    return tuple(f"A2A-TASK-{n:03d}" for n in nums)


def _err(*nums: int) -> tuple[str, ...]:
    return tuple(f"A2A-ERR-{n:03d}" for n in nums)


# What a suite cannot see when the card or the stream is unusable.
_NO_STREAM = _stream(*range(1, 15)) + _task(10, 11, 12)
_NO_CARD = ("A2A-CARD-002", "A2A-CARD-003", "A2A-CARD-004", "WIRE-007", "A2A-STREAM-015") + _err(1)

_TABLE = (
    # WIRE-
    Fault("no-stream", "SendStreamingMessage and SubscribeToTask answer application/json (the final Task)",
          ("WIRE-001", "A2A-STREAM-015"), _NO_STREAM),
    Fault("bad-json-frame", "the second task-stream event's data is cut short: not valid JSON",
          ("WIRE-002",), _stream(4, 9, 14)),
    Fault("bare-result", "stream events carry the StreamResponse without the JSON-RPC envelope",
          ("WIRE-002",), ("WIRE-003", "WIRE-004") + _NO_STREAM),
    Fault("wrong-rpc-id", "every JSON-RPC response carries an id other than its request's",
          ("WIRE-003",)),
    Fault("result-and-error", "the second task-stream event carries an error member beside its result",
          ("WIRE-004",), _stream(14)),
    Fault("html-error", "JSON-RPC errors come back as an HTML page (text/html, HTTP 500)",
          ("WIRE-005",), _err(*range(1, 11))),
    Fault("bad-utf8", "one byte of the second task-stream event is not UTF-8",
          ("WIRE-006",), ("WIRE-002",) + _stream(14)),
    Fault("unterminated-last-block", "the terminal event is sent without its blank line (lost by clients)",
          ("WIRE-006",), _stream(8, 9, 10, 14) + _task(1, 2, 10, 11, 12)),
    Fault("no-extension-echo", "activated extensions are not echoed in an A2A-Extensions response header",
          ("WIRE-007",)),
    # A2A-CARD-
    Fault("card-404", "the agent card is not served (404)", ("A2A-CARD-001",), _NO_CARD),
    Fault("card-not-json", "the agent card is served as an HTML page", ("A2A-CARD-001",), _NO_CARD),
    Fault("card-missing-field", "the card has no version field", ("A2A-CARD-002",)),
    Fault("card-no-jsonrpc", "the card declares only a GRPC interface",
          ("A2A-CARD-003",), ("WIRE-007", "A2A-STREAM-015") + _NO_STREAM + _task(*range(1, 10)) + _err(*range(1, 11))),
    Fault("card-old-version", "the card's JSONRPC interface says protocolVersion 0.3", ("A2A-CARD-003",)),
    Fault("extension-no-uri", "the card's first extension has no uri", ("A2A-CARD-004",), ("WIRE-007",)),
    Fault("extension-required-not-bool", "the card's extensions give required as a string, not a boolean",
          ("A2A-CARD-004",)),
    # A2A-STREAM-
    Fault("status-first", "the task stream begins with a statusUpdate (SUBMITTED) instead of the Task",
          _stream(1), _stream(2, 3, 4)),
    Fault("client-ids", "the task id and context id are not minted: empty strings",
          _stream(2), _stream(3, 4, 9) + _task(*range(1, 13)) + _err(2, 3, 4, 5, 10)),
    Fault("history-ids-missing", "the server's copy of the client message lacks taskId and contextId",
          _stream(3)),
    Fault("wrong-context", "status events carry a contextId other than the task's", _stream(4)),
    Fault("two-kinds", "every artifactUpdate result also carries a statusUpdate", _stream(5), _stream(14) + _task(3)),
    Fault("append-first", "the first chunk of an artifact carries append: true", _stream(6)),
    Fault("append-after-last", "one more chunk is appended to an artifact after its lastChunk",
          _stream(7), _stream(14) + _task(3)),
    Fault("event-after-terminal", "on the task stream an artifactUpdate follows the terminal status",
          _stream(8), _stream(14) + _task(3, 12)),
    Fault("close-early", "the stream closes after its second event, before any terminal state",
          _stream(9), _stream(8, 10, 14) + _task(1, 2, 3, 10, 12)),
    Fault("no-close", "the stream stays open after the terminal status (until the client leaves)",
          _stream(10), _task(10, 11, 12)),
    Fault("offset-timestamps", "status timestamps end in +00:00 instead of Z", _stream(11)),
    Fault("second-timestamps", "status timestamps have no milliseconds", _stream(12)),
    Fault("v03-names", "stream events use 0.3 names: state 'working', role 'agent', parts with kind",
          _stream(13), _stream(8, 9, 10, 14) + _task(1, 2, 10, 11, 12)),
    Fault("drop-chunk", "the third chunk of a chunked artifact is never sent (nor stored)", _stream(14)),
    Fault("wrong-final-text", "the finish message differs from the script's text", _stream(14)),
    Fault("stream-refused", "SendStreamingMessage is refused (-32004) although the card declares streaming",
          _stream(15), ("WIRE-001",) + _NO_STREAM),
    # A2A-TASK-
    Fault("stale-task", "GetTask reports TASK_STATE_WORKING after the task ended", _task(1), _task(10)),
    Fault("wrong-status-message", "GetTask's status message is the first status message, not the last",
          _task(2)),
    Fault("artifacts-not-joined", "the store keeps only the last chunk of an artifact", _task(3), _task(7)),
    Fault("history-length-ignored", "GetTask ignores historyLength", _task(4)),
    Fault("list-missing-task", "ListTasks leaves out the most recent task", _task(5), _task(6, 8, 9)),
    Fault("list-missing-fields", "ListTasks answers without pageSize, totalSize and nextPageToken",
          _task(5), _task(8)),
    Fault("list-oldest-first", "ListTasks sorts oldest first", _task(6), _task(8)),
    Fault("list-artifacts-always", "ListTasks includes artifacts without includeArtifacts", _task(7)),
    Fault("list-paging-broken", "ListTasks ignores pageSize: every task on one page", _task(8), _task(5)),
    Fault("list-filter-ignored", "ListTasks ignores the contextId and status filters", _task(9), _task(5, 8)),
    Fault("cancel-ignored", "CancelTask answers the task unchanged and the work goes on", _task(10),
          _stream(9) + _task(12)),
    Fault("subscribe-no-task", "SubscribeToTask starts with live events, without the Task", _task(11),
          _stream(1, 9) + _task(10, 12)),
    Fault("second-stream-diverges", "SubscribeToTask sends a fresh status (new timestamp, no message) "
          "after the Task: an event the task stream never carried", _task(12)),
    # A2A-ERR-
    Fault("streaming-not-refused", "the no-streaming agent streams anyway", _err(1)),
    Fault("wrong-code-not-found", "an unknown task id gets -32603 instead of -32001", _err(2)),
    Fault("wrong-code-not-cancelable", "canceling a terminal task gets -32004 instead of -32002", _err(3)),
    Fault("wrong-code-terminal-send", "a message to a terminal task gets -32602 instead of -32004", _err(4)),
    Fault("subscribe-terminal-streams", "SubscribeToTask on a terminal task streams the Task and closes",
          _err(5)),
    Fault("wrong-code-protocol", "an unknown method and a non-JSON body both get -32600", _err(6)),
    Fault("wrong-code-params", "invalid params get -32603 instead of -32602", _err(7), _err(10)),
    Fault("version-ignored", "the A2A-Version header is not checked", _err(8)),
    Fault("error-data-missing", "errors carry no data array", _err(9)),
    Fault("cross-context-accepted", "a message whose taskId belongs to another context is accepted",
          _err(10)),
)

FAULTS: dict[str, Fault] = {fault.name: fault for fault in _TABLE}

# Error-code faults, applied where the error body is written (rpc.error_object).
# Keys are a code, or an error's `case` when one code covers several situations.
WRONG_CODES: dict[str, dict[int | str, int]] = {
    "wrong-code-not-found": {a2a.TASK_NOT_FOUND: a2a.INTERNAL_ERROR},
    "wrong-code-not-cancelable": {a2a.TASK_NOT_CANCELABLE: a2a.UNSUPPORTED_OPERATION},
    "wrong-code-terminal-send": {"send-terminal": a2a.INVALID_PARAMS},
    "wrong-code-protocol": {a2a.METHOD_NOT_FOUND: a2a.INVALID_REQUEST, a2a.PARSE_ERROR: a2a.INVALID_REQUEST},
    "wrong-code-params": {a2a.INVALID_PARAMS: a2a.INTERNAL_ERROR},
}


def check_fault(name: str | None) -> str | None:
    if name is not None and name not in FAULTS:
        raise ValueError(f"unknown fault {name!r}; known: {', '.join(sorted(FAULTS))}")
    return name


def describe_faults() -> list[str]:
    """One line per fault, for `streamcert serve --list-faults`."""
    width = max(len(name) for name in FAULTS)
    return [f"{f.name:<{width}}  {', '.join(f.catches):<28}  {f.description}" for f in FAULTS.values()]
