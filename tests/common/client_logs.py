"""Hand-made frame logs of client cases (driver `client-case`, rules/client/clientview.py says what is read).

    world()                      the task of stream-basic as a client case serves it: its frames, the view a
                                 right client prints, the requests it sends
    client(view | lines=…)       the client's run: stdout lines (the view as one JSON line), how it ended
    sent(method, message, …)     one request the replay server received, answered by the case's `answer`
    card_sent() / served(…)      the GET of the card; an exchange of the case as served (`served_as`)
    case_log(w, view, …)         the frame log of one case: client, sent and served exchanges, notes
    context(*ids, w)             the RuleContext of a scenario naming `ids`, whose data is the case

Every builder takes overrides where a test needs to break something.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from logs import RPC_URL, agent_card, artifact_update, card_get, sse, stdio, task, text_msg

from streamcert.catalogue import Scenario
from streamcert.framelog import END_CLOSED, END_ERROR, Exchange, FrameLog
from streamcert.protocols import interactions_v1, progress_v1
from streamcert.rules import RuleContext

TID, CTX = "task-9f3c", "ctx-c026"
CARD_URL = RPC_URL.replace("/a2a/jsonrpc", "/.well-known/agent-card.json")
TS = ("2026-10-06T09:00:01.750Z", "2026-10-06T09:00:02.000Z", "2026-10-06T09:00:02.100Z", "2026-10-06T09:00:02.250Z")
PLAN_1 = [{"label": "Check out 9f3c2e1", "state": "active"}, {"label": "Run the suite", "state": "pending"}]
PLAN_2 = [{"label": "Check out 9f3c2e1", "state": "done", "note": "clean"}, {"label": "Run the suite", "state": "active"}]
PLAN_3 = [{"label": "Run the suite", "state": "done"}]  # the latest: shorter than the one before
LOG_CHUNKS = ("collected 12 items\n", "11 passed, ", "1 failed — naïve ✓\n")
SUMMARY = {"failed": 1, "passed": 11}


def status_update(state: str, text: str | None, ts: str | None, plan: list | None = None, *, tid: str = TID,
                  ctx: str = CTX, interaction: dict | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"state": state}
    if text is not None:
        status["message"] = text_msg(text, message_id=f"m-{state}-{ts}")
        if interaction is not None:
            status["message"]["metadata"] = {interactions_v1.URI: interaction}
            status["message"]["extensions"] = [interactions_v1.URI]
    if ts is not None:
        status["timestamp"] = ts
    upd: dict[str, Any] = {"taskId": tid, "contextId": ctx, "status": status}
    if plan is not None:
        upd["metadata"] = {progress_v1.URI: {"steps": plan}}
    return {"statusUpdate": upd}


def basic_frames() -> list[dict[str, Any]]:
    """stream-basic with a plan: the Task, working (plan 1), three log chunks (the last with lastChunk), the
    summary (data, lastChunk), another plan, then completed (plan 3)."""
    return [
        {"task": task(TID, CTX, "TASK_STATE_SUBMITTED", ts=TS[0])},
        status_update("TASK_STATE_WORKING", "Checking out 9f3c2e1", TS[1], PLAN_1),
        artifact_update("test-log", text=LOG_CHUNKS[0], name="test-log.txt", tid=TID, ctx=CTX),
        artifact_update("test-log", text=LOG_CHUNKS[1], append=True, tid=TID, ctx=CTX),
        artifact_update("test-log", text=LOG_CHUNKS[2], append=True, last=True, tid=TID, ctx=CTX),
        artifact_update("summary", data=SUMMARY, last=True, name="summary.json", tid=TID, ctx=CTX),
        status_update("TASK_STATE_WORKING", "Writing the summary", TS[2], PLAN_2),
        status_update("TASK_STATE_COMPLETED", "1 failed, 11 passed", TS[3], PLAN_3),
    ]


def basic_view() -> dict[str, Any]:
    return {"task": {"id": TID, "contextId": CTX, "state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "test-log", "name": "test-log.txt", "text": "".join(LOG_CHUNKS)},
                          {"artifactId": "summary", "name": "summary.json", "data": SUMMARY}],
            "plan": copy.deepcopy(PLAN_3), "interaction": None, "statusText": "1 failed, 11 passed"}


def user_message(text: str = "Run the unit tests", message_id: str | None = "5bc8fbbc-bde5", **extra: Any) -> dict:
    msg: dict[str, Any] = {"role": "ROLE_USER", "parts": [{"text": text}], **extra}
    if message_id is not None:
        msg["messageId"] = message_id
    return msg


HEADERS = {"content-type": "application/json", "a2a-version": "1.0", "accept": "text/event-stream"}


def sent(method: str = "SendStreamingMessage", message: dict | None = None, *, answer: str = "stream",
         headers: dict[str, str] | None = None, served: str | None = END_CLOSED, t: float = 0.1,
         url: str = RPC_URL, params: dict | None = None) -> Exchange:
    """A request the replay server received: its JSON-RPC body (`message` as params.message) and how the
    answer it got ended (`served`: END_ERROR for the dropped connection a retry follows)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": method,
            "params": params if params is not None else {"message": message or user_message()}}
    dropped = served == END_ERROR
    ex = Exchange(label="sent", method="POST", url=url, rpc_method=method,
                  request_headers=dict(HEADERS if headers is None else headers), request_body=body,
                  status=None if dropped else 200,
                  response_headers={} if dropped else {"content-type": "text/event-stream"},
                  t_sent=t, t_end=t + 0.2, end=END_ERROR if dropped else END_CLOSED,
                  notes={"served": served, "answer": answer})
    return ex


def card_sent(t: float = 0.0) -> Exchange:
    return Exchange(label="sent", method="GET", url=CARD_URL, request_headers={"accept": "application/json"},
                    status=200, response_headers={"content-type": "application/json"}, t_sent=t, t_end=t + 0.01,
                    notes={"served": END_CLOSED, "answer": "card"})


def served(ex: Exchange, served_as: str) -> Exchange:
    ex.label = "served"
    ex.notes["served_as"] = served_as
    return ex


def served_stream(items: list[Any], served_as: str = "stream", rpc_method: str = "SendStreamingMessage") -> Exchange:
    return served(sse("x", items, rpc_method=rpc_method), served_as)


def served_card(card: dict | None = None) -> Exchange:
    return served(card_get(card if card is not None else agent_card()), "card")


def client(view: Any = None, *, lines: list[str] | None = None, status: int | None = 0, end: str = END_CLOSED,
           limit: dict | None = None, stderr: str = "", exited_after: float = 0.6,
           error: str | None = None) -> Exchange:
    """The client's run: `lines` on stdout (default: `view` as one JSON line) and how it ended."""
    out = lines if lines is not None else [json.dumps(view, ensure_ascii=False)]
    ex = stdio("client", [], out, status=status, end=end, error=error, stderr=stderr)
    ex.url, ex.request_body, ex.t_sent, ex.t_end = "my-client", {"case": "client-test", "context": {}}, 0.0, 0.8
    ex.notes.update(returncode=status, stderr_tail=stderr)
    if status is not None and end == END_CLOSED:
        ex.notes["exited_after"] = exited_after
    if limit is not None:
        ex.notes["limit"] = limit
    return ex


@dataclass
class World:
    """One client case: what is served, what the client sent, what it printed, and what the case expects."""

    frames: list[Any] = field(default_factory=basic_frames)
    expected: dict[str, Any] = field(default_factory=basic_view)
    context: dict[str, Any] = field(default_factory=lambda: {"message": {"role": "ROLE_USER",
                                                                          "parts": [{"text": "Run the tests"}]}})
    card: dict[str, Any] | None = None
    requests: list[Exchange] = field(default_factory=lambda: [card_sent(), sent()])
    extra_served: list[Exchange] = field(default_factory=list)
    closed_at: float | None = 0.3
    variations: list[dict[str, Any]] = field(default_factory=list)

    def case(self) -> dict[str, Any]:
        return {"id": "client-test", "base": "stream-basic", "variations": self.variations,
                "context": self.context, "expected": self.expected}


def world(**kw: Any) -> World:
    return World(**kw)


def case_log(w: World, view: Any = None, *, run: Exchange | None = None) -> FrameLog:
    """The frame log of the case: the client's run (default: it printed `view`, else the expected view),
    the requests, the exchanges served, and the notes."""
    ex = run if run is not None else client(view if view is not None else copy.deepcopy(w.expected))
    log = FrameLog(scenario="client-test", exchanges=[ex, *w.requests, served_card(w.card),
                                                      served_stream(w.frames), *w.extra_served])
    log.notes.update(client_case=w.case(), stream_closed_at=w.closed_at)
    return log


def context(*ids: str, w: World | None = None) -> RuleContext:
    data = (w or World()).case()
    return RuleContext(scenario=Scenario(id="client-test", profile="client", title="", requirements=ids,
                                         script=None, data={**data, "requirements": list(ids)}))


def answer_message(interaction_id: str = "ix-1", *, message_id: str = "answer:ix-1", value: Any = "blue",
                   tid: str | None = TID, ctx: str | None = CTX, listed: bool = True) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "ROLE_USER", "messageId": message_id, "parts": [{"data": {"value": value}}],
                           "metadata": {interactions_v1.URI: {"interactionId": interaction_id, "value": value}}}
    if tid is not None:
        msg["taskId"] = tid
    if ctx is not None:
        msg["contextId"] = ctx
    if listed:
        msg["extensions"] = [interactions_v1.URI]
    return msg


def question_world(*, closes: bool = True, answers: list[Exchange] | None = None,
                   retry: bool = False) -> World:
    """A question: the first stream reaches TASK_STATE_INPUT_REQUIRED with interaction ix-1 (and closes there,
    D3 "closes", or goes on after the answer, "stays open"); the answer's stream carries the task to its end."""
    asked = status_update("TASK_STATE_INPUT_REQUIRED", "Which colour?", TS[1],
                          interaction={"interactionId": "ix-1", "kind": "question", "prompt": "Which colour?"})
    after = [status_update("TASK_STATE_WORKING", "Painting", TS[2]),
             status_update("TASK_STATE_COMPLETED", "Painted blue", TS[3])]
    first = [{"task": task(TID, CTX, "TASK_STATE_SUBMITTED", ts=TS[0])}, asked] + ([] if closes else after)
    answer_stream = served_stream([{"task": task(TID, CTX, "TASK_STATE_WORKING", ts=TS[2])}, *after], "answer_1")
    requests = [card_sent(), sent()] + (answers if answers is not None else
                                        [sent(message=answer_message(), answer="answer_1", t=0.5)])
    extra = [answer_stream]
    if retry:
        extra.insert(0, served(Exchange(label="x", method="POST", url=RPC_URL, end=END_ERROR), "answer_1_dropped"))
    expected = {"task": {"id": TID, "contextId": CTX, "state": "TASK_STATE_COMPLETED"},
                "interaction": {"kind": "question", "prompt": "Which colour?"}, "statusText": "Painted blue"}
    return World(frames=first, expected=expected, requests=requests, extra_served=extra,
                 context={"message": {"role": "ROLE_USER", "parts": [{"text": "Paint it"}]},
                          "answers": [{"interaction": "question", "value": "blue"}], **({"retry": True} if retry else {})})
