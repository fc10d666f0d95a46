"""The reference A2A client (issue 11, docs/contracts.md §7): what a client of an A2A 1.0 agent must do, on the
suite's own event-stream parser.

`python -m streamcert.reference.client [URL] [--fault NAME]` (also `streamcert client`) reads
STREAMCERT_URL (the agent's base URL, unless URL is given), STREAMCERT_CASE and STREAMCERT_CONTEXT
(JSON: {"message": {...}, "answers": [{"interaction", "value" | "approved"}, ...], "retry": bool}), does
the work and prints its final view as one JSON line on stdout, then exits 0:

    {"task": {"id", "contextId", "state"} | null, "artifacts": [{"artifactId", "name", "text" | "data"}],
     "plan": [{"label", "state", "note"}] | null, "interaction": {...} | null, "statusText": "..."}

What it does, point by point (the CLIENT- requirement in brackets):
- reads the card and posts to its JSONRPC interface; SendStreamingMessage only when the card says
  `capabilities.streaming: true` (018), else a blocking SendMessage, which returns at a terminal or an
  interrupted state (A2A 1.0.1 §7.6), and GetTask polling while the task it returned has not settled;
- every request carries `A2A-Version: 1.0` (014), streaming calls `Accept: text/event-stream` (015), and
  `A2A-Extensions` names the extensions of the card it can show (progress/v1, interactions/v1);
- the first message is the context's with a messageId it mints (uuid4) and neither taskId nor contextId
  (016, 017); each message it sends gets a new id;
- the stream is read with wire/sse.py (WHATWG) over the chunks as httpx receives them: a character split
  between chunks, any line end, a BOM, comments and `id:` lines are read as the standard says, and an event
  the stream ends inside (no blank line after it) is never dispatched (004, 005);
- the task is the one the stream's first Task names (seed 001: "from here on, the planner matches every
  frame to those two ids"); a frame naming another task or context is ignored (007); an update that comes
  before the Task waits for it (one that never comes leaves them unshown);
- artifacts are joined per artifactId: a chunk without `append` starts (or replaces) its artifact, one with
  `append: true` adds its parts, `lastChunk: true` ends that artifact only; the stream goes on (003, 006);
- status updates are ordered by `status.timestamp`, not by arrival; an exact copy of one already taken
  changes nothing; the state, the status text, the plan and the interaction shown are each the one of the
  latest status that carried one (002); the plan is replaced whole, never merged (001);
- metadata it does not know, plan steps in states it does not know and fields it does not show are left
  aside; the rest is shown (010);
- at an interrupted state it answers with the next of the context's answers, on the same taskId and
  contextId, listing interactions/v1, in seed 004's shape (011); whether the stream closed there or stays
  open (D3): an open stream that stays silent QUIET_S after the pause has said all it will (008); the
  answer's own stream (or SendMessage's answer) carries the task on;
- an answer whose connection drops before anything came back is sent once more, same messageId, when
  the context says `retry: true` (012);
- the close after the terminal status ends the task: no final flag is awaited (009);
- the interaction shown is the last one the task showed, with its prompt (013);
- everything is bounded: a total deadline (STREAMCERT_CLIENT_DEADLINE seconds, default 30), past which
  it prints what it has.

Choices where the texts leave room (also in the catalogue's readings):
- a status without a timestamp counts as newer than every status before it (arrival order), and two
  statuses with the same timestamp are taken in arrival order;
- the status text is the text of the latest status that has a message with text (a status without a
  message, such as a plan update, leaves it), text parts joined with no separator, as are an artifact's;
- an artifact with data parts only shows `data` (the value, or the list of them), any other `text`;
- a chunk appended to an artifact after its lastChunk is not shown (the artifact has ended);
- a Task in a stream or an answer stands for the whole task: its artifacts replace those shown;
- after the terminal status it waits CLOSE_GRACE_S for the close, then stops reading (a server that
  never closes is not waited for).

The view of the task is view.py's, the card, the requests' headers and the reading of a response feed.py's; this
module runs the client (`Client`, `run`, `main`, `in_process`). Each module's fault variants sit at its end.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urljoin

import httpx

from ... import limits
from ...protocols import a2a, interactions_v1, progress_v1
from ...protocols.bindings import jsonrpc_url
from ...protocols.script import SCRIPT_KEY
from ...wire.inprocess import Input, Program
from ...wire.pool import Pool
from ..faults import check_fault, fault_argument, switch
from ..in_process import played_here
from .feed import END, STDERR, Agent, Feed, card_streams, declared_extensions, mint, request_headers, say
from .view import Pause, View

DEADLINE_VARIABLE = "STREAMCERT_CLIENT_DEADLINE"
DEADLINE_S = 30.0  # the whole run, when the environment does not say
QUIET_S = 0.3  # at a pause, an open stream silent this long has said all it will say before the answer (D3)
CLOSE_GRACE_S = 2.0  # after the terminal status, how long the close is waited for
POLL_S = 0.2  # GetTask polling of a task that SendMessage returned before it settled
CONNECT_S = 5.0
FINAL_WAIT_S = 2.5  # fault waits-final-flag: how long it waits for the final flag (CLIENT-009's tolerance is 2 s)
SHOWN_EXTENSIONS = (progress_v1.URI, interactions_v1.URI)  # what this client can show: activated when declared
KNOWN_METADATA = frozenset({progress_v1.URI, interactions_v1.URI, SCRIPT_KEY})
JSON_PART = "application/json"


# How reading a stream ended.
CLOSED, QUIET, UNCLOSED, DEADLINE, GAVE_UP = "closed", "quiet", "unclosed", "deadline", "gave up"


class ClientError(Exception):
    """The client cannot do its work at all (no card): said on stderr, exit 1, no view."""


# -- the run -----------------------------------------------------------------------------------------

class Client:
    def __init__(self, url: str, context: dict[str, Any], fault: str | None = None,
                 deadline_s: float = DEADLINE_S) -> None:
        self.url = url
        self.context = context
        self.fault = check_fault(fault)
        self.view = View(self.fault)
        self.answers = [a for a in context.get("answers") or [] if isinstance(a, dict)]
        self.answered: set[str] = set()
        self.retried = False
        self.first_id: str | None = None
        self.deadline = time.monotonic() + deadline_s

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    async def run(self) -> dict[str, Any]:
        timeout = httpx.Timeout(CONNECT_S, read=None)  # reads are bounded by the deadline, not per read
        # wire/pool.py: no TLS context is built for a plain-HTTP agent (the suite's replay), a verifying one for https
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, transport=Pool()) as http:
            card = await self.read_card(http)
            base = self.url.rstrip("/") + "/"
            rpc = jsonrpc_url(card)
            agent = Agent(http, _break_rpc_url(urljoin(base, rpc) if rpc else self.url, self),
                          [uri for uri in SHOWN_EXTENSIONS if uri in declared_extensions(card)], self.fault)
            try:
                first = self.first_message()
                if card_streams(card) or STREAMS_REGARDLESS.on(self.fault):
                    await self.streamed(agent, first)
                else:
                    await self.unary(agent, first)
            finally:
                await agent.close()
        return self.view.as_json()

    async def read_card(self, http: httpx.AsyncClient) -> dict[str, Any]:
        url = self.url.rstrip("/") + a2a.CARD_PATH
        headers = request_headers(None, [], self.fault)
        try:
            response = await asyncio.wait_for(http.get(url, headers=headers), self.remaining())
        except (httpx.HTTPError, asyncio.TimeoutError) as exc:
            raise ClientError(f"could not read the card at {url}: {type(exc).__name__} {exc}") from None
        if response.status_code != 200 or len(response.content) > limits.MAX_BODY.default:
            raise ClientError(f"could not read the card at {url}: HTTP {response.status_code}")
        try:
            card = response.json()
        except ValueError:
            raise ClientError(f"the card at {url} is not JSON") from None
        if not isinstance(card, dict):
            raise ClientError(f"the card at {url} is not a JSON object")
        return card

    # -- messages --------------------------------------------------------------------------------
    def first_message(self) -> dict[str, Any]:
        """The context's message, as a new task's: a messageId minted here, no taskId, no contextId."""
        given = self.context.get("message")
        message = copy.deepcopy(given) if isinstance(given, dict) else {"parts": [{"text": "Hello"}]}
        message.pop("taskId", None)
        message.pop("contextId", None)
        message.setdefault("role", a2a.ROLE_USER)
        message["messageId"] = self.first_id = mint()
        return _break_first_message(message, self.fault)

    def answer_message(self, answer: dict[str, Any], pause: Pause) -> dict[str, Any]:
        """Seed 004's answer: on the task's taskId and contextId, a data part, interactions/v1 listed and its
        metadata naming the interaction."""
        message: dict[str, Any] = {"messageId": mint(), "role": a2a.ROLE_USER, "taskId": self.view.task_id}
        if self.view.context_id:
            message["contextId"] = self.view.context_id
        if interactions_v1.APPROVED not in answer and interactions_v1.VALUE not in answer and "text" in answer:
            message["parts"] = [{"text": answer["text"]}]  # a plain reply
            return message
        key = interactions_v1.APPROVED if interactions_v1.APPROVED in answer else interactions_v1.VALUE
        value = answer.get(key)
        said: dict[str, Any] = {key: value}
        ix_id = pause.interaction.get(interactions_v1.INTERACTION_ID) if pause.interaction else None
        if ix_id is not None:
            said = {interactions_v1.INTERACTION_ID: ix_id, **said}
        message["parts"] = [{"data": {key: value}, "mediaType": JSON_PART}]
        message["extensions"] = [interactions_v1.URI]
        message["metadata"] = {interactions_v1.URI: said}
        return _break_answer(message, self)

    # -- streaming -------------------------------------------------------------------------------
    async def streamed(self, agent: Agent, message: dict[str, Any]) -> None:
        feed = agent.post(a2a.SEND_STREAMING_MESSAGE, {"message": message})
        while True:
            end = await self.follow(feed)
            await feed.close()
            if end == DEADLINE or end == GAVE_UP:
                return
            if self.view.terminal():
                if end == CLOSED and WAITS_FINAL_FLAG.on(self.fault):
                    await asyncio.sleep(min(FINAL_WAIT_S, self.remaining()))  # for a final: true 1.0 never sends
                return
            pause = self.view.pause(self.answered)
            if pause is None or not self.answers_left() or (end == CLOSED and D3_CLOSE_ENDS.on(self.fault)):
                return  # the stream ended before the task did, or at a pause with nothing left to answer
            feed = await self.answer(agent, pause, a2a.SEND_STREAMING_MESSAGE)

    async def follow(self, feed: Feed) -> str:
        """Read `feed` until it closes, until the task waits at a pause and the stream has gone quiet,
        until the close after the terminal status has been waited for, or until the deadline."""
        terminal_since: float | None = None
        while True:
            wait = self.remaining()
            if self.view.pause(self.answered) is not None:
                wait = min(wait, QUIET_S)
            if self.view.terminal():
                terminal_since = terminal_since or time.monotonic()
                wait = min(wait, max(0.0, terminal_since + CLOSE_GRACE_S - time.monotonic()))
            item = await feed.next(wait)
            if item is END:
                if feed.error:
                    self.view.error = feed.error
                return CLOSED
            if item is None:
                if self.remaining() <= 0:
                    return DEADLINE
                if self.view.pause(self.answered) is not None:
                    return QUIET
                if self.view.terminal():
                    return UNCLOSED
                continue
            if UNKNOWN_VARIANT_GIVES_UP.on(self.fault) and _unknown_variant(item):
                return GAVE_UP
            self.take(item)
            if LASTCHUNK_ENDS_STREAM.on(self.fault) and _last_chunk(item):
                return CLOSED

    def take(self, response: Any, bare_task: bool = False) -> None:
        """One JSON-RPC response: its result into the view (a bare Task for GetTask), or its error noted."""
        if not isinstance(response, dict):
            return
        error = response.get("error")
        if isinstance(error, dict):
            self.view.error = f"JSON-RPC error {error.get('code')}: {error.get('message')}"
        elif bare_task:
            self.view.take_task(response.get("result"))
        else:
            self.view.take(response.get("result"))

    # -- answers ---------------------------------------------------------------------------------
    def answers_left(self) -> bool:
        """Whether the context holds an answer for the next pause."""
        return bool(self.answers) and not (ANSWERS_FIRST_PAUSE_ONLY.on(self.fault) and self.answered)

    async def answer(self, agent: Agent, pause: Pause, method: str) -> Feed:
        """Send the next answer; once more, same message, when its connection dropped before anything came
        back and the context allows a retry."""
        message = self.answer_message(self.answers.pop(0), pause)
        self.answered.add(pause.key)
        feed = agent.post(method, {"message": message}, (interactions_v1.URI,))
        try:
            await asyncio.wait_for(feed.first.wait(), self.remaining())
        except asyncio.TimeoutError:
            return feed
        if feed.failed_before_answer and self.context.get("retry") is True and not self.retried:
            self.retried = True
            say(f"the answer's connection dropped ({feed.error}); sending it again")
            await feed.close()
            feed = agent.post(method, {"message": _break_retry(message, self.fault)}, (interactions_v1.URI,))
        return feed

    # -- without streaming -----------------------------------------------------------------------
    async def unary(self, agent: Agent, message: dict[str, Any]) -> None:
        """SendMessage (blocking: it answers at a terminal or an interrupted state), the answers the same way,
        and GetTask while the task shown has not settled."""
        response = await self.call(agent.post(a2a.SEND_MESSAGE, {"message": message}))
        bare = False
        while response is not None:
            self.take(response, bare_task=bare)
            if self.view.terminal() or self.remaining() <= 0 or "error" in response:
                return
            pause = self.view.pause(self.answered)
            if pause is not None:
                if not self.answers_left():
                    return
                response, bare = await self.call(await self.answer(agent, pause, a2a.SEND_MESSAGE)), False
            elif a2a.is_interrupted(self.view.state) or self.view.task_id is None:
                return  # an answered pause the agent still shows, or no task at all (a message)
            else:
                await asyncio.sleep(min(POLL_S, self.remaining()))
                response, bare = await self.call(agent.post(a2a.GET_TASK, {"id": self.view.task_id})), True

    async def call(self, feed: Feed) -> dict[str, Any] | None:
        item = await feed.next(self.remaining())
        await feed.close()
        if item is END or item is None:
            self.view.error = feed.error or self.view.error
            return None
        return item if isinstance(item, dict) else None


def read_context(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        context = json.loads(text)
    except ValueError as exc:
        raise ClientError(f"STREAMCERT_CONTEXT is not JSON: {exc}") from None
    if not isinstance(context, dict):
        raise ClientError("STREAMCERT_CONTEXT is not a JSON object")
    return context


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m streamcert.reference.client",
                                     description="The reference A2A client: prints its final view as one JSON line.")
    parser.add_argument("url", nargs="?", help="the agent's base URL (default: STREAMCERT_URL)")
    parser.add_argument("--fault", type=fault_argument("client"), metavar="NAME",
                        help="behave as this fault variant (`streamcert serve --list-faults`: the CLIENT- ones)")
    parser.add_argument("--deadline", type=float, metavar="SECONDS",
                        help=f"the whole run's time limit (default: {DEADLINE_VARIABLE}, else {DEADLINE_S:g})")
    return parser


async def run(url: str, fault: str | None, deadline_s: float | None, env: Mapping[str, str],
              out: Callable[[str], None], err: Callable[[str], None]) -> int:
    """One run of the program after its arguments: the context read from `env`, the work done, the final view
    written to `out` as one line, diagnostics to `err`; its exit status."""
    said = STDERR.set(err)
    try:
        try:
            deadline = deadline_s or float(env.get(DEADLINE_VARIABLE) or DEADLINE_S)
            client = Client(url, read_context(env.get("STREAMCERT_CONTEXT")), fault, deadline)
            view = await client.run()
        except (ClientError, ValueError) as exc:
            say(str(exc))
            return 1
        if client.remaining() <= 0:
            say(f"the deadline ({deadline:g} s) was reached; the view is what came before it")
        out(json.dumps(view, ensure_ascii=False) + "\n")
        return 0
    finally:
        STDERR.reset(said)


def main(argv: list[str] | None = None) -> int:
    command = parser()
    args = command.parse_args(argv)
    sys.stdout.reconfigure(encoding="utf-8")
    url = args.url or os.environ.get("STREAMCERT_URL")
    if not url:
        command.error("no agent URL: give URL or set STREAMCERT_URL")

    def out(text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()

    return asyncio.run(run(url, args.fault, args.deadline, os.environ, out, sys.stderr.write))


def in_process(fault: str | None = None) -> Program:
    """The program `targets.reference_command("client", fault)` runs, as a coroutine the suite plays in its own process
    (wire/inprocess.py; the embedded run, docs/clients.md): the same environment read (STREAMCERT_URL, _CASE,
    _CONTEXT, the deadline), the same view and diagnostics written, the same exit status, without a Python start-up
    per case. An error that would end the process with a traceback writes it and exits 1, as the interpreter does."""
    check_fault(fault)

    async def program(env: Mapping[str, str], stdin: Input, out: Callable[[str], None], err: Callable[[str], None]) -> int:
        url = env.get("STREAMCERT_URL")
        if not url:
            err("streamcert client: no agent URL: give URL or set STREAMCERT_URL\n")
            return 2  # argparse's usage error, as the command exits
        try:
            return await run(url, fault, None, env, out, err)
        except Exception:  # noqa: BLE001  (the interpreter's way: the traceback on stderr, status 1)
            err(traceback.format_exc())
            return 1

    return program


def in_process_for(command: str | None) -> Program | None:
    """The in-process program of `command` when it is the reference client's own (`reference_command("client",
    fault)`, with or without one of its faults), else None: any other command runs as itself."""
    return played_here("client", command, in_process)


# -- fault variants: each a client that gets one thing wrong ---------------------------------------------
LASTCHUNK_ENDS_STREAM = switch("lastchunk-ends-stream")
WAITS_FINAL_FLAG = switch("waits-final-flag")
UNKNOWN_VARIANT_GIVES_UP = switch("unknown-variant-gives-up")
NEW_ID_ON_RETRY = switch("new-id-on-retry")
D3_CLOSE_ENDS = switch("d3-close-ends")
ANSWERS_FIRST_PAUSE_ONLY = switch("answers-first-pause-only")
ANSWER_WITHOUT_EXTENSION = switch("answer-without-extension")
APPROVAL_AS_TEXT = switch("approval-as-text")
POSTS_TO_ORIGIN = switch("posts-to-origin")
ANSWER_REUSES_ID = switch("answer-reuses-id")
NEW_TASK_WITH_TASK_ID = switch("new-task-with-task-id")
STREAMS_REGARDLESS = switch("streams-regardless")


def _unknown_variant(response: Any) -> bool:
    """Whether a frame carries metadata, a plan variant or an interaction kind this client does not know."""
    result = response.get("result") if isinstance(response, dict) else None
    kind = a2a.stream_kind(result)
    if kind is None:
        return False
    item = result[kind]
    status = item.get("status")
    message = status.get("message") if isinstance(status, dict) else None
    artifact = item.get("artifact")
    for meta in (item.get("metadata"), message.get("metadata") if isinstance(message, dict) else None,
                 artifact.get("metadata") if isinstance(artifact, dict) else None):
        if not isinstance(meta, dict):
            continue
        if set(meta) - KNOWN_METADATA:
            return True
        plan = meta.get(progress_v1.URI, {"steps": []})
        steps = plan.get("steps") if isinstance(plan, dict) else None
        if not isinstance(steps, list) or set(plan) != {"steps"} or any(
                not isinstance(s, dict) or set(s) - set(progress_v1.STEP_FIELDS) or s.get("state") not in progress_v1.STATES
                for s in steps):
            return True
        interaction = meta.get(interactions_v1.URI)
        if isinstance(interaction, dict) and interaction.get(interactions_v1.KIND) not in interactions_v1.KINDS:
            return True
    return False


def _last_chunk(response: Any) -> bool:
    result = response.get("result") if isinstance(response, dict) else None
    update = result.get(a2a.ARTIFACT_UPDATE) if isinstance(result, dict) else None
    return isinstance(update, dict) and update.get("lastChunk") is True


def _break_retry(message: dict[str, Any], fault: str | None) -> dict[str, Any]:
    return {**message, "messageId": mint()} if NEW_ID_ON_RETRY.on(fault) else message


def _break_rpc_url(url: str, client: Client) -> str:
    if POSTS_TO_ORIGIN.on(client.fault):
        return client.url  # STREAMCERT_URL itself, not the interface URL the card declares
    return url


def _break_answer(message: dict[str, Any], client: Client) -> dict[str, Any]:
    if APPROVAL_AS_TEXT.on(client.fault) and isinstance(message["metadata"][interactions_v1.URI].get(
            interactions_v1.APPROVED), bool):  # "yes" / "no" in words, no approved
        approved = message["metadata"][interactions_v1.URI].pop(interactions_v1.APPROVED)
        message["parts"] = [{"text": "yes" if approved else "no"}]
    if ANSWER_WITHOUT_EXTENSION.on(client.fault):
        message.pop("extensions")
    if ANSWER_REUSES_ID.on(client.fault):
        message["messageId"] = client.first_id
    return message


def _break_first_message(message: dict[str, Any], fault: str | None) -> dict[str, Any]:
    if NEW_TASK_WITH_TASK_ID.on(fault):
        message["taskId"] = f"task-{mint()}"
    return message
