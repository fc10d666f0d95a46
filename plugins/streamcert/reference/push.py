"""Push notifications of an agent whose card declares `pushNotifications: true` (A2A 1.0.1 §3.1.7–3.1.10,
§4.3.3): the four config operations and the deliveries.

Each config has a sender of its own: a queue subscribed to the task's events (the same the streams get)
and a task that POSTs them one by one, in order, to the config's URL, as StreamResponse bodies with
`Content-Type: application/a2a+json`, the token in `X-A2A-Notification-Token` (A2A names no header for
it) and the config's `authentication` as `Authorization: <scheme> <credentials>`. A slow or failing webhook
holds back only its own sender, never the task or its streams. A sender ends after the terminal event or
when its config is deleted. Every delivery is tried once, with a 10 s timeout (§4.3.3: 10-30 s recommended).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..protocols import a2a, push
from .faults import switch
from .options import Options
from .rpc import RpcError, dumps, invalid_params
from .store import TaskRecord, TaskStore

TOKEN_HEADER = "X-A2A-Notification-Token"
TIMEOUT_S = 10.0


class SenderQueue(asyncio.Queue):
    """The queue of one config's sender (told apart from a stream's by the push-holds-stream fault)."""


@dataclass
class Sender:
    config: dict[str, Any]
    record: TaskRecord
    queue: asyncio.Queue = field(default_factory=SenderQueue)
    task: asyncio.Task | None = None
    held: list[asyncio.Queue] = field(default_factory=list)  # (fault: push-holds-stream)


class PushConfigs:
    """The push configs of one agent's tasks, and their senders."""

    def __init__(self, store: TaskStore, options: Options, runners: set[asyncio.Task]) -> None:
        self.store, self.options, self.runners = store, options, runners
        self._senders: dict[str, dict[str, Sender]] = {}  # task id → config id → sender

    def handlers(self) -> dict[str, Any]:
        return {a2a.CREATE_PUSH_CONFIG: self.create, a2a.GET_PUSH_CONFIG: self.get,
                a2a.LIST_PUSH_CONFIGS: self.list, a2a.DELETE_PUSH_CONFIG: self.delete}

    def _record(self, task_id: Any) -> TaskRecord:
        if not isinstance(task_id, str) or not task_id:
            raise invalid_params("taskId (the task id) must be a non-empty string")
        record = self.store.get(task_id)
        if record is None:
            raise RpcError(a2a.TASK_NOT_FOUND, f"No task with id {task_id!r}")
        return record

    def _sender(self, params: dict[str, Any]) -> Sender:
        record = self._record(params.get("taskId"))
        config_id = params.get("id")
        sender = self._senders.get(record.id, {}).get(config_id) if isinstance(config_id, str) else None
        if sender is None and UNKNOWN_CONFIG_ANSWERED.on(self.options):  # (fault) a made-up config answers
            return Sender({"id": str(config_id), "taskId": record.id, "url": ""}, record)
        if sender is None:
            # §3.3.2: "configuration not found" is a resource error, TaskNotFoundError (§3.1.8 names it).
            raise RpcError(a2a.TASK_NOT_FOUND, f"No push notification config {config_id!r} on task {record.id}")
        return sender

    async def create(self, params: dict[str, Any]) -> dict[str, Any]:
        record = self._record(params.get("taskId"))
        config = _checked(params, self.options)
        config_id = config.get("id") or self.options.clock.new_id()
        if SECOND_CREATE_REPLACES.on(self.options) and not config.get("id"):
            config_id = f"{record.id}-push"  # (fault) every config without an id gets the same one
        config = {"id": config_id, "taskId": record.id, **{k: v for k, v in config.items() if k not in ("id", "taskId")}}
        configs = self._senders.setdefault(record.id, {})
        if (old := configs.pop(config_id, None)) is not None:
            self._stop(old)
        sender = Sender(copy.deepcopy(config), record)
        configs[config_id] = sender
        if not a2a.is_terminal(record.state):
            self._start(sender)
        return _shown(config, self.options)

    async def get(self, params: dict[str, Any]) -> dict[str, Any]:
        shown = _shown(self._sender(params).config, self.options)
        if GET_NO_URL.on(self.options):
            shown.pop("url", None)
        return shown

    async def list(self, params: dict[str, Any]) -> dict[str, Any]:
        record = self._record(params.get("taskId"))
        configs = [_shown(s.config, self.options) for s in self._senders.get(record.id, {}).values()]
        return {"configs": configs, "nextPageToken": ""}

    async def delete(self, params: dict[str, Any]) -> dict[str, Any]:
        sender = self._sender(params)
        if sender.config["id"] not in self._senders.get(sender.record.id, {}):  # (fault: unknown-config-answered)
            return {}
        if not DELETE_KEEPS_SENDING.on(self.options):
            self._stop(sender)
        del self._senders[sender.record.id][sender.config["id"]]
        return {}

    # -- deliveries ---------------------------------------------------------------------------------
    def _start(self, sender: Sender) -> None:
        self.store.subscribe(sender.record, sender.queue)
        if PUSH_HOLDS_STREAM.on(self.options) and not isinstance(sender.record.subscribers, _Diverted):
            # (fault) the task's streams, open and to come, get each event after the first config's POST
            own = {id(s.queue) for s in self._senders.get(sender.record.id, {}).values()}
            sender.held = [q for q in sender.record.subscribers if id(q) not in own]
            sender.record.subscribers = _Diverted([q for q in sender.record.subscribers if id(q) in own], sender)
        sender.task = asyncio.get_running_loop().create_task(self._send_all(sender))
        self.runners.add(sender.task)
        sender.task.add_done_callback(self.runners.discard)

    def _stop(self, sender: Sender) -> None:
        self.store.unsubscribe(sender.record, sender.queue)
        for q in sender.held:
            self.store.subscribe(sender.record, q)
        if sender.task is not None:
            sender.task.cancel()

    async def _send_all(self, sender: Sender) -> None:
        async with httpx.AsyncClient(timeout=TIMEOUT_S, follow_redirects=False) as client:
            held: list[dict[str, Any]] = []  # (fault: push-reordered)
            reordered = False
            while True:
                event = await sender.queue.get()
                if DROPS_ARTIFACTS.on(self.options) and a2a.ARTIFACT_UPDATE in event:
                    continue
                if REORDERED.on(self.options) and not reordered and a2a.ARTIFACT_UPDATE in event:
                    held, reordered = [event], True  # the first artifact update is sent after the event after it
                    continue
                await _post(client, sender.config, event, self.options)
                for later in held:
                    await _post(client, sender.config, later, self.options)
                held = []
                for q in sender.held:
                    q.put_nowait(event)
                if _ends(event):
                    break
            if AFTER_TERMINAL.on(self.options):  # (fault) the task shown working again after its terminal event
                update = copy.deepcopy(event)
                update.get(a2a.STATUS_UPDATE, update.get(a2a.TASK, {}))["status"] = {"state": a2a.WORKING}
                await _post(client, sender.config, update, self.options)
        self.store.unsubscribe(sender.record, sender.queue)


async def _post(client: httpx.AsyncClient, config: dict[str, Any], event: dict[str, Any], options: Options) -> None:
    """One delivery, tried once; a webhook that fails or times out loses that event (no retry)."""
    url = config.get("url")
    if isinstance(url, str) and url.startswith(("http://", "https://")):
        with contextlib.suppress(httpx.HTTPError):
            await client.post(url, content=_body(event, options), headers=_headers(config, options))


class _Diverted(list):
    """push-holds-stream: a task's subscriber list whose streams, added later, are held by `sender`."""

    def __init__(self, queues: list[asyncio.Queue], sender: Sender) -> None:
        super().__init__(queues)
        self.sender = sender

    def append(self, queue: asyncio.Queue) -> None:
        if not isinstance(queue, SenderQueue):  # a stream: held; another config's sender goes on as it is
            self.sender.held.append(queue)
        else:
            super().append(queue)


def _checked(params: dict[str, Any], options: Options) -> dict[str, Any]:
    """The config asked for, or InvalidParams (§3.3.2): `url` is required (a2a.proto), an absolute http(s) URL;
    `authentication`, when given, needs its required `scheme`."""
    config = {k: v for k, v in params.items() if k in ("id", "taskId", "url", "token", "authentication")}
    url = config.get("url")
    if not URL_NOT_CHECKED.on(options) and (not isinstance(url, str) or not url.startswith(("http://", "https://"))):
        raise invalid_params("url (the webhook) must be an absolute http(s) URL")
    auth = config.get("authentication")
    if auth is not None and (not isinstance(auth, dict) or not isinstance(auth.get("scheme"), str)
                             or not auth["scheme"]):
        raise invalid_params("authentication.scheme is required")
    for key in ("id", "token"):
        if config.get(key) is not None and not isinstance(config[key], str):
            raise invalid_params(f"{key} must be a string")
    return config


def _shown(config: dict[str, Any], options: Options) -> dict[str, Any]:
    shown = copy.deepcopy(config)
    if CREATE_NO_ID.on(options):
        shown.pop("id", None)
    return shown


def _ends(event: dict[str, Any]) -> bool:
    return push.is_terminal_body(event)


def _body(event: dict[str, Any], options: Options) -> bytes:
    if BODY_WRAPPED.on(options):  # (fault) the event wrapped as a JSON-RPC response, as a stream frame holds it
        return dumps({"jsonrpc": "2.0", "id": None, "result": event})
    return dumps(event)


def _headers(config: dict[str, Any], options: Options) -> dict[str, str]:
    headers = {"Content-Type": a2a.JSON_MEDIA_TYPE if MEDIA_TYPE_JSON.on(options) else push.A2A_JSON_MEDIA_TYPE}
    if config.get("token") and not TOKEN_DROPPED.on(options):
        headers[TOKEN_HEADER] = config["token"]
    auth = config.get("authentication")
    if auth:
        headers["Authorization"] = f"{auth['scheme']} {auth.get('credentials', '')}".strip()
    return headers


# -- fault variants ---------------------------------------------------------------------------------
CREATE_NO_ID = switch("push-create-no-id")
SECOND_CREATE_REPLACES = switch("push-second-create-replaces")
URL_NOT_CHECKED = switch("push-url-not-checked")
BODY_WRAPPED = switch("push-body-wrapped")
TOKEN_DROPPED = switch("push-token-dropped")
MEDIA_TYPE_JSON = switch("push-media-type-json")
DELETE_KEEPS_SENDING = switch("push-delete-keeps-sending")
AFTER_TERMINAL = switch("push-after-terminal")
PUSH_HOLDS_STREAM = switch("push-holds-stream")
GET_NO_URL = switch("push-get-no-url")
UNKNOWN_CONFIG_ANSWERED = switch("push-unknown-config-answered")
DROPS_ARTIFACTS = switch("push-drops-artifacts")
REORDERED = switch("push-reordered")
