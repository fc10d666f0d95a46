"""The official ``a2a-sdk`` (1.3.x) Python client under the suite's client contract (docs/contracts.md §7).

Run by ``streamcert run --client-cmd "python tests/peers/a2a_sdk_client.py" --profile client`` from a
venv holding ``a2a-sdk~=1.3.0`` (the ``peer-a2a-sdk-client`` tox env). It reads ``STREAMCERT_URL``,
``STREAMCERT_CASE`` and ``STREAMCERT_CONTEXT``, does the work with the SDK and prints its final view as
one JSON line: ``{"task", "artifacts", "plan", "interaction", "statusText"}``. Logs go to stderr.

What the SDK does (what is being certified):
- ``A2ACardResolver`` reads the card; ``ClientFactory.create`` picks its JSON-RPC interface and sets
  ``A2A-Version`` on the HTTP client (the card read included);
- ``Client.send_message``: ``SendStreamingMessage`` when the card says ``capabilities.streaming: true``,
  else ``SendMessage``; its SSE reader (httpx lines, its own field parser) and its ProtoJSON decoding;
- the extension header through ``ServiceParametersFactory`` / ``with_a2a_extensions``;
- aggregation: the 1.x client yields raw ``StreamResponse`` events and keeps no task of its own, so the
  adapter feeds them to the SDK's own aggregator, ``a2a.server.tasks.TaskManager`` (the one the SDK's
  handler uses; it joins artifact chunks with ``append_artifact_to_task``, takes each status as it
  arrives, merges metadata and refuses an event of another task or context). The task, its state, its
  status text and its artifacts in the view are what that Task holds.

What the adapter does itself, as the minimum a typical app would (not the SDK's finding):
- it mints the messageId with the SDK's ``new_message`` helper;
- the ``progress/v1`` plan and the ``interactions/v1`` interaction are app-level metadata the SDK only
  carries: the adapter reads them off the frames, keeps the plan of the latest ``status.timestamp`` (as
  the extension's text tells a caller to) and the last interaction shown;
- answers: at an interrupted state it stops reading the stream (as the SDK's samples do), sends the
  context's next answer on the same task (seed 004's shape, the extension listed) and reads on; an
  answer whose connection fails before anything came back is sent once more, the same message and
  messageId (the SDK retries nothing);
- an artifact's text is its text parts joined with no separator (the SDK's ``get_artifact_text`` joins
  with a newline by default, which would add one between streamed chunks).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any

import httpx
from a2a.client import A2ACardResolver, A2AClientError, ClientCallContext, ClientConfig, ClientFactory
from a2a.client.service_parameters import ServiceParametersFactory, with_a2a_extensions
from a2a.helpers import get_data_parts, get_message_text, get_text_parts, new_message
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore, TaskManager
from a2a.types import Message, Role, SendMessageRequest, StreamResponse, Task, TaskState
from a2a.utils.errors import A2AError
from google.protobuf.json_format import MessageToDict, ParseDict

PROGRESS = "https://docs.nylorun.com/a2a/progress/v1"
INTERACTIONS = "https://docs.nylorun.com/a2a/interactions/v1"
UNDERSTOOD = (PROGRESS, INTERACTIONS)  # the extensions this app can show, activated when the card has them
INTERRUPTED = (TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED)

log = logging.getLogger("a2a-sdk-client")


def _struct(value: Any) -> dict[str, Any]:
    """A protobuf Struct (metadata) as a dict; numbers come back as floats (JSON compares 11.0 == 11)."""
    return MessageToDict(value) if value is not None and value.ByteSize() else {}


def _when(task_or_status: Any) -> float | None:
    """A status's timestamp in seconds, None when it has none."""
    return task_or_status.timestamp.ToNanoseconds() / 1e9 if task_or_status.HasField("timestamp") else None


class Shown:
    """What the app shows besides the SDK's Task: the plan (latest by timestamp) and the last interaction."""

    def __init__(self) -> None:
        self.plan: list[dict[str, Any]] | None = None
        self.plan_at: float | None = None
        self.interaction: dict[str, Any] | None = None

    def offer_plan(self, metadata: dict[str, Any], at: float | None) -> None:
        value = metadata.get(PROGRESS)
        steps = value.get("steps") if isinstance(value, dict) else None
        if not isinstance(steps, list):
            return
        if at is not None and self.plan_at is not None and at < self.plan_at:
            return  # an older plan arriving late: keep the newer one
        self.plan = [_step(s) for s in steps if isinstance(s, dict)]
        self.plan_at = at if at is not None else self.plan_at

    def offer_status(self, status: Any) -> None:
        if status.HasField("message"):
            ix = _struct(status.message.metadata).get(INTERACTIONS)
            if isinstance(ix, dict):
                self.interaction = ix


def _step(step: dict[str, Any]) -> dict[str, Any]:
    return {k: step[k] for k in ("label", "state", "note") if k in step}


def _brief(item: Any) -> str:
    """A task event in a few words, for stderr (the report keeps its tail)."""
    if hasattr(item, "status"):
        return f" {TaskState.Name(item.status.state)}"
    if hasattr(item, "artifact"):
        return f" {item.artifact.artifact_id}{' append' if item.append else ''}{' lastChunk' if item.last_chunk else ''}"
    return ""


class Run:
    """One case: the SDK client, the SDK's TaskManager holding the task, what the app shows."""

    def __init__(self, client: Any, extensions: list[str]) -> None:
        self.client = client
        self.manager = TaskManager(InMemoryTaskStore(), ServerCallContext(), None, None, None)
        self.shown = Shown()
        self.call = ClientCallContext(service_parameters=ServiceParametersFactory.create(
            [with_a2a_extensions(extensions)])) if extensions else None
        self.error: str | None = None
        self.events = 0  # task events the SDK handed over, for the log

    async def task(self) -> Task | None:
        return await self.manager.get_task()

    async def take(self, event: StreamResponse) -> None:
        kind = event.WhichOneof("payload")
        if kind not in ("task", "status_update", "artifact_update"):
            log.info("event %s: not a task event, not aggregated", kind)
            return
        item = getattr(event, kind)
        self.events += 1
        log.info("event %d from the SDK: %s%s", self.events, kind, _brief(item))
        log.debug("event %s", MessageToDict(event))
        try:
            await self.manager.process(item)
        except A2AError as exc:  # the SDK refuses an event of another task or context
            log.info("the SDK's TaskManager refused event %d (%s): %s", self.events, kind, exc)
            return
        if kind != "artifact_update":  # a Task or a status update: a plan and an interaction may ride on it
            self.shown.offer_plan(_struct(item.metadata), _when(item.status))
            self.shown.offer_status(item.status)

    async def send(self, message: Message, answers_left: int) -> None:
        """Send one message and read what comes back until the end, or an interrupted state to answer.

        An answer whose connection fails before anything came back is sent once more, the same message
        (seed 004: its messageId is the idempotency key); a new task's message is never re-sent."""
        for attempt in (1, 2):
            received = 0
            try:
                async for event in self.client.send_message(SendMessageRequest(message=message),
                                                            context=self.call):
                    received += 1
                    await self.take(event)
                    task = await self.task()
                    if answers_left and task is not None and task.status.state in INTERRUPTED:
                        return  # stop reading: the app answers now (the stream may stay open, D3)
                return
            except A2AClientError as exc:
                dropped = isinstance(exc.__cause__, httpx.TransportError) and not received
                if attempt == 1 and dropped and message.task_id:
                    log.info("the answer's connection failed (%s): sending the same message again", exc)
                    continue
                raise


def _first_message(context: dict[str, Any]) -> Message:
    given = ParseDict(context.get("message") or {}, Message(), ignore_unknown_fields=True)
    message = new_message(list(given.parts), role=given.role or Role.ROLE_USER)  # mints the messageId
    if given.HasField("metadata"):
        message.metadata.CopyFrom(given.metadata)
    message.extensions.extend(given.extensions)
    return message


def _answer_message(answer: dict[str, Any], task: Task, interaction: dict[str, Any] | None) -> Message:
    """Seed 004's answer: a data part, the extension listed, its metadata naming the interaction."""
    key = "approved" if "approved" in answer else "value"
    value = answer.get(key)
    meta: dict[str, Any] = {key: value}
    if interaction and interaction.get("interactionId") is not None:
        meta = {"interactionId": interaction["interactionId"], **meta}
    message = ParseDict({"role": "ROLE_USER", "parts": [{"data": {key: value}, "mediaType": "application/json"}],
                         "extensions": [INTERACTIONS], "metadata": {INTERACTIONS: meta}}, Message())
    minted = new_message([], task_id=task.id, context_id=task.context_id, role=Role.ROLE_USER)
    message.message_id, message.task_id, message.context_id = minted.message_id, minted.task_id, minted.context_id
    return message


def _artifact_view(artifact: Any) -> dict[str, Any]:
    view: dict[str, Any] = {"artifactId": artifact.artifact_id, "name": artifact.name}
    data = get_data_parts(artifact.parts)
    if data and not get_text_parts(artifact.parts):
        view["data"] = data[0] if len(data) == 1 else data
    else:
        view["text"] = "".join(get_text_parts(artifact.parts))
    return view


def view_of(task: Task | None, shown: Shown) -> dict[str, Any]:
    status_text = get_message_text(task.status.message) if task is not None and task.status.HasField("message") else ""
    return {
        "task": None if task is None else {"id": task.id, "contextId": task.context_id,
                                           "state": TaskState.Name(task.status.state)},
        "artifacts": [] if task is None else [_artifact_view(a) for a in task.artifacts],
        "plan": shown.plan,
        "interaction": shown.interaction,
        "statusText": status_text,
    }


async def run(url: str, context: dict[str, Any]) -> dict[str, Any]:
    http = httpx.AsyncClient()  # shared: the factory sets A2A-Version on it, the card read included
    factory = ClientFactory(ClientConfig(streaming=True, httpx_client=http))
    card = await A2ACardResolver(http, url).get_agent_card()
    client = factory.create(card)
    declared = [e.uri for e in card.capabilities.extensions]
    job = Run(client, [uri for uri in UNDERSTOOD if uri in declared])
    answers = list(context.get("answers") or [])
    try:
        await job.send(_first_message(context), len(answers))
        while answers:
            task = await job.task()
            if task is None or task.status.state not in INTERRUPTED:
                break
            answer = answers.pop(0)
            log.info("answering %s on task %s", answer, task.id)
            await job.send(_answer_message(answer, task, job.shown.interaction), len(answers))
    except (A2AClientError, A2AError) as exc:
        job.error = f"{type(exc).__name__}: {exc}"
        log.error("the SDK stopped: %s", job.error)
    finally:
        await client.close()
        await http.aclose()
    view = view_of(await job.task(), job.shown)
    if job.error:
        view["error"] = job.error  # not part of the contract's view: for the person reading the report
    return view


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="[a2a-sdk-client] %(name)s: %(message)s")
    for name in (log.name, "httpx"):  # the requests sent and the adapter's own steps
        logging.getLogger(name).setLevel(logging.INFO)
    url = os.environ["STREAMCERT_URL"]
    context = json.loads(os.environ.get("STREAMCERT_CONTEXT") or "{}")
    log.info("case %s against %s", os.environ.get("STREAMCERT_CASE", "?"), url)
    view = asyncio.run(run(url, context))
    print(json.dumps(view, ensure_ascii=False), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
