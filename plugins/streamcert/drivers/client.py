"""Driver for certifying an A2A client (profile `client`, docs/contracts.md §7; docs/clients.md): driver `client-case`.

One client case (cases/client/<id>.json) per scenario. The case's stream is built from its base recording
and variations (client_cases.build) and served by the replay server (recordings/replay.py) on 127.0.0.1, at the case's
`pace` (default `fast`). The client command (`target.client_cmd`) is run once, in a process group of its own
(wire/stdio.py); the embedded run's reference client is played in the suite's process instead
(`target.in_process["client_cmd"]`, wire/inprocess.py), recorded the same way. Either gets the caller's environment plus
  STREAMCERT_URL      the replay's origin (http://127.0.0.1:PORT, no path): the card at its
                      /.well-known/agent-card.json, the JSON-RPC interface at the URL the card declares (the
                      only URL answered: any other path gets 404)
  STREAMCERT_CASE     the case id
  STREAMCERT_CONTEXT  the case's `context` as JSON: the message to send, the answers to give, `retry`
and nothing on its standard input (closed at once). It must print its final view, one JSON object, and exit.
Its limit: the served answers' own time under the pace (none under `fast`) plus `target.timeout`, and at most
`target.stream_limit`; at the limit its group is stopped (SIGTERM, then SIGKILL; an in-process client's task is
cancelled).

Labels written (in this order):
  client  the client's run (wire/stdio.py's layout; note `in_process` when played in the suite's process):
          method "STDIO", url the command, request_body
          {"case", "context"} (never the environment), events its stdout lines, status its exit code (None
          when it was stopped), end closed | time_limit | client_stop | error (not started: `error` says
          why); notes `returncode` (the exit code, None when stopped), `stderr_tail` (the last 2000
          characters of its stderr), `limit` (when a limit stopped it: {"cap", "figure", "limit", "awaiting"}),
          and wire/stdio.py's own (`stderr`, `exited_after`, `partial_line`, …)
  sent    one per request the replay server received, in the order they came (replay.ReplayServer._sent):
          method, url, rpc_method, request_headers (lower-case names), request_body (its JSON, else its
          text), status (None: dropped without an answer), response_headers, t_sent, t_headers, t_end, end
          (closed: answered whole; error: dropped before any answer, as the case says; reset: dropped after
          the head; client_stop: the client went first, or left a stream held open; time_limit: the case
          ended first); notes `served` (how the recorded answer ended; None when no recorded answer matched),
          `answer` (the label of the served exchange that answered), `unmatched` (why none matched)
  served  the exchanges the replay served, as built (client_cases.build), one per served exchange in the
          order served; notes `served_as` (its label in the case: card, stream, answer_1, answer_1_dropped…),
          `served_from` (its label in the base), `replay_hold` (a held stream), `held_open`
Log notes:
  client_case       {"id", "base", "serve", "variations", "context", "expected", "pace", "streaming" (what the
                    served card says of capabilities.streaming), "url" (STREAMCERT_URL), "limit_s"}
  stream_closed_at  when (log time, s) the replay ended the last event stream it served whole (the server
                    closed it after its last frame), None if it ended none
  case_error        a case that could not be built: nothing was run
All times are seconds on one clock (the frame log's): the client's start, each request's arrival.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os

from .. import limits
from ..catalogue import Scenario
from ..contract.capture import STDERR
from ..contract.client import CASE_ERROR, CLIENT_CASE, RETURNCODE, SERVED_AS, STDERR_TAIL, STREAM_CLOSED_AT
from ..contract.labels.client import CLIENT, SENT, SERVED
from ..framelog import END_CLOSED, FrameLog
from ..recordings import client_cases
from ..recordings.replay import ReplayServer
from ..wire import activity
from ..wire.capture import Clock
from ..wire.inprocess import command_peer
from . import Target, driver

STDERR_KEPT = 2000  # characters of the client's stderr kept in `stderr_tail`
CASE_KEYS = ("id", "base", "serve", "variations", "context", "expected", "pace")


def environment(url: str, case_id: str, context: dict) -> dict[str, str]:
    """The client's environment: the caller's, and the three variables of docs/contracts.md §7."""
    return {**os.environ, "STREAMCERT_URL": url, "STREAMCERT_CASE": case_id,
            "STREAMCERT_CONTEXT": json.dumps(context, ensure_ascii=False)}


@driver("client-case")
async def client_case(target: Target, scenario: Scenario, log: FrameLog) -> None:
    case = scenario.data
    log.target = target.client_cmd or ""
    log.notes[CLIENT_CASE] = {key: case.get(key) for key in CASE_KEYS}
    log.notes[CLIENT_CASE]["pace"] = pace = case.get("pace") or "fast"
    log.notes[STREAM_CLOSED_AT] = None
    try:
        served = client_cases.build(case, target.client_base)
    except client_cases.CaseError as exc:
        log.notes[CASE_ERROR] = str(exc)
        return
    context = case.get("context") or {}
    clock = Clock()
    allowed = client_cases.stream_time(served, pace) + target.timeout  # then bounded by the stream limit
    server = ReplayServer([served], pace=pace, record=log, clock=clock,
                          interfaces=client_cases.interface_paths(served))
    server.start()
    try:
        url = server.url  # an origin: the card at its /.well-known/agent-card.json (docs/clients.md)
        log.notes[CLIENT_CASE].update(streaming=client_cases.card_streaming(served), url=url,
                                        limit_s=min(allowed, target.stream_limit))
        kept = {"label": CLIENT, "clock": clock, "env": environment(url, scenario.id, context),
                "max_bytes": target.max_stream_bytes, "max_line": target.max_event_bytes}
        peer = command_peer(target.client_cmd or "", target.in_process.get("client_cmd"), log, **kept)
        await peer.start()
        peer.ex.request_body = {"case": scenario.id, "context": context}
        if peer.started:
            await peer.end_input()
            bound = peer.bound(limits.EXCHANGE, allowed, target.stream_limit)
            activity.waiting(log.scenario, peer.ex, bound.limit, "the client's final view and its exit")
            if not await peer.wait_exit(bound.deadline - asyncio.get_running_loop().time()):
                await peer.stop(bound.cap, bound.limit, "the client's final view and its exit")
        await peer.close()
    finally:
        await asyncio.to_thread(server.stop)
    ex = peer.ex
    ex.notes[RETURNCODE] = ex.status
    ex.notes[STDERR_TAIL] = str(ex.notes.get(STDERR) or "")[-STDERR_KEPT:]
    for answer in served.exchanges:
        log.add(dataclasses.replace(answer, label=SERVED, notes={**answer.notes, SERVED_AS: answer.label}))
    closed = [sent.t_end for sent in log.all(SENT) if sent.end == END_CLOSED and sent.t_end is not None
              and sent.response_headers.get("content-type", "").startswith("text/event-stream")]
    log.notes[STREAM_CLOSED_AT] = max(closed) if closed else None
