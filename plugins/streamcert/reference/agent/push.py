"""Push notifications of an agent whose card declares `pushNotifications: true` (A2A 1.0.1 §3.1.7–3.1.10,
§4.3.3): the four config operations and the deliveries.

Each config has a sender of its own: a queue subscribed to the task's events (the same the streams get)
and a task that POSTs them one by one, in order, to the config's URL, as StreamResponse bodies with
`Content-Type: application/a2a+json`, the token in `X-A2A-Notification-Token` (A2A names no header for
it) and the config's `authentication` as `Authorization: <scheme> <credentials>`. A slow or failing webhook
holds back only its own sender, never the task or its streams. A sender ends after the terminal event or
when its config is deleted. Each POST has a 10 s timeout (§4.3.3: 10-30 s recommended); one that fails (no
answer, or not 2xx) is tried again after 0.2 s, then after 0.8 s (§13.2: retry with exponential backoff), and
an event still undelivered then is given up while the next ones are tried (at least once each, §4.3.3).

A config may also come inline, in SendMessage's `configuration.taskPushNotificationConfig` (a2a.proto): it is
checked as Create checks one and stored on the task the message makes or names, before the task runs.

Webhook URLs are screened (§13.2, SSRF): not an absolute URL, a scheme other than http(s), a link-local or a
private address (10/8, 172.16/12, 192.168/16, fc00::/7) are refused with InvalidParams. Loopback is accepted,
a choice of this reference so the suite's own receiver on 127.0.0.1 can be reached; a host name is not
resolved (an allowlist or a resolving check is the deployer's).
"""

from __future__ import annotations

import asyncio
import copy
import ipaddress
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx

from ...protocols import a2a, push
from ...wire.pool import Pool
from ..faults import switch
from .options import Options
from .rpc import RpcError, dumps, invalid_params
from .store import TaskRecord, TaskStore

TOKEN_HEADER = "X-A2A-Notification-Token"
TIMEOUT_S = 10.0
RETRY_WAITS_S = (0.2, 0.8)  # the pauses before the second and the third try of a POST that failed


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
        self._deleted: set[tuple[str, str]] = set()  # (task id, config id) deleted (fault: push-delete-twice-fails)

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

    def _sender(self, params: dict[str, Any], *, deleting: bool = False) -> Sender:
        record = self._record(params.get("taskId"))
        config_id = params.get("id")
        sender = self._senders.get(record.id, {}).get(config_id) if isinstance(config_id, str) else None
        if sender is None and UNKNOWN_CONFIG_ANSWERED.on(self.options):  # (fault) a made-up config answers
            return Sender({"id": str(config_id), "taskId": record.id, "url": ""}, record)
        if sender is None and deleting and DELETE_TWICE_FAILS.on(self.options) and (record.id, config_id) in \
                self._deleted:  # (fault) the second Delete of one config fails
            raise RpcError(a2a.INTERNAL_ERROR, f"Push notification config {config_id!r} was already deleted")
        if sender is None:
            # §3.3.2: "configuration not found" is a resource error, TaskNotFoundError (§3.1.8 names it).
            raise RpcError(a2a.TASK_NOT_FOUND, f"No push notification config {config_id!r} on task {record.id}")
        return sender

    async def create(self, params: dict[str, Any]) -> dict[str, Any]:
        record = self._record(params.get("taskId"))
        return self._store(record, _checked(params, self.options))

    def inline_config(self, params: dict[str, Any], declared: bool) -> dict[str, Any] | None:
        """The config SendMessage carries in `configuration.taskPushNotificationConfig`, checked as Create checks
        one (InvalidParams), or None: none given, or an agent without push, which ignores it (§3.3.4)."""
        configuration = params.get("configuration")
        config = configuration.get("taskPushNotificationConfig") if isinstance(configuration, dict) else None
        if config is None or INLINE_IGNORED.on(self.options):
            return None
        if not declared and not INLINE_WITHOUT_CAPABILITY.on(self.options):
            return None
        if not isinstance(config, dict):
            raise invalid_params("configuration.taskPushNotificationConfig must be an object")
        return _checked({k: v for k, v in config.items() if k != "taskId"}, self.options)

    def attach(self, record: TaskRecord, config: dict[str, Any]) -> None:
        """Store an inline config on its task (before the task runs, so its sender misses no event)."""
        if INLINE_NOT_LISTED.on(self.options):  # (fault) delivered, but never stored where List and Get look
            sender = Sender({"id": self.options.clock.new_id(), "taskId": record.id, **config}, record)
            if not a2a.is_terminal(record.state):
                self._start(sender)
            return
        self._store(record, config)

    def _store(self, record: TaskRecord, config: dict[str, Any]) -> dict[str, Any]:
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
        if GET_DROPS_SETTINGS.on(self.options):
            shown.pop("token", None)
            shown.pop("authentication", None)
        return shown

    async def list(self, params: dict[str, Any]) -> dict[str, Any]:
        record = self._record(params.get("taskId"))
        configs = [_shown(s.config, self.options) for s in self._senders.get(record.id, {}).values()]
        return {"configs": configs, "nextPageToken": ""}

    async def delete(self, params: dict[str, Any]) -> dict[str, Any]:
        sender = self._sender(params, deleting=True)
        if sender.config["id"] not in self._senders.get(sender.record.id, {}):  # (fault: unknown-config-answered)
            return {}
        if not DELETE_KEEPS_SENDING.on(self.options):
            self._stop(sender)
        if DELETE_KEEPS_LISTING.on(self.options):  # (fault) deliveries stop, the config stays listed
            return {}
        del self._senders[sender.record.id][sender.config["id"]]
        self._deleted.add((sender.record.id, sender.config["id"]))
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
        timeout = SHORT_TIMEOUT_S if TIMEOUT_SHORT.on(self.options) else TIMEOUT_S
        # Pool: the process's one TLS context, none for a plain-HTTP webhook (httpx would load certifi's bundle anew
        # for each config's sender: 24 times in an embedded run, most of the server's CPU for push)
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False, transport=Pool()) as client:
            held: list[dict[str, Any]] = []  # (fault: push-reordered)
            reordered = False
            while True:
                event = await sender.queue.get()
                if DROPS_ARTIFACTS.on(self.options) and a2a.ARTIFACT_UPDATE in event:
                    continue
                if REORDERED.on(self.options) and not reordered and a2a.ARTIFACT_UPDATE in event:
                    held, reordered = [event], True  # the first artifact update is sent after the event after it
                    continue
                if STOPS_WITHOUT_STREAM.on(self.options) and not any(
                        not isinstance(q, SenderQueue) for q in sender.record.subscribers):
                    continue  # (fault) an event no client is streaming is not pushed either
                if not await _post(client, sender.config, event, self.options) and \
                        STOPS_AFTER_FAILURE.on(self.options):
                    break  # (fault) a webhook that failed once gets nothing more
                for later in held:
                    await _post(client, sender.config, later, self.options)
                held = []
                for q in sender.held:
                    q.put_nowait(event)
                if _ends(event) or (STOPS_AT_PAUSE.on(self.options) and push.is_interrupted_body(event)):
                    break
            if AFTER_TERMINAL.on(self.options):  # (fault) the task shown working again after its terminal event
                update = copy.deepcopy(event)
                update.get(a2a.STATUS_UPDATE, update.get(a2a.TASK, {}))["status"] = {"state": a2a.WORKING}
                await _post(client, sender.config, update, self.options)
        self.store.unsubscribe(sender.record, sender.queue)


async def _post(client: httpx.AsyncClient, config: dict[str, Any], event: dict[str, Any], options: Options) -> bool:
    """One delivery: POSTed, and tried again after each pause of RETRY_WAITS_S while it fails (no answer in
    time, or not 2xx); whether a try succeeded."""
    url = config.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return False
    waits = () if NO_RETRY.on(options) or STOPS_AFTER_FAILURE.on(options) else RETRY_WAITS_S
    for wait in (0.0, *waits):
        await asyncio.sleep(wait)
        try:
            answer = await client.post(url, content=_body(event, options), headers=_headers(config, options))
        except httpx.HTTPError:
            continue
        if answer.is_success:
            return True
    return False


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
    """The config asked for, or InvalidParams (§3.3.2): `url` is required (a2a.proto) and screened
    (`_url_refused`); `authentication`, when given, needs its required `scheme`."""
    config = {k: v for k, v in params.items() if k in ("id", "taskId", "url", "token", "authentication")}
    url = config.get("url")
    if not URL_NOT_CHECKED.on(options):
        why = _url_refused(url, options) if isinstance(url, str) else "url (the webhook) is required"
        if why:
            raise invalid_params(why)
    auth = config.get("authentication")
    if auth is not None and not AUTH_SCHEME_NOT_CHECKED.on(options) and (
            not isinstance(auth, dict) or not isinstance(auth.get("scheme"), str) or not auth["scheme"]):
        raise invalid_params("authentication.scheme is required")
    for key in ("id", "token"):
        if config.get(key) is not None and not isinstance(config[key], str):
            raise invalid_params(f"{key} must be a string")
    return config


def _url_refused(url: str, options: Options) -> str | None:
    """Why a webhook URL is refused (§13.2: validate webhook URLs against SSRF), or None."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        parts, host = None, None
    if parts is None or not parts.scheme or not host:
        return None if NON_URL_ACCEPTED.on(options) else "url (the webhook) must be an absolute URL"
    if parts.scheme.lower() not in ("http", "https"):
        return None if SCHEME_NOT_CHECKED.on(options) else "url (the webhook) must use http or https"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None  # a host name: not resolved here
    if address.is_link_local and not LINK_LOCAL_ACCEPTED.on(options):
        return f"url (the webhook) names a link-local address ({host})"
    if address.is_private and not address.is_loopback and not address.is_link_local \
            and not PRIVATE_ACCEPTED.on(options):
        return f"url (the webhook) names a private address ({host})"
    return None


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
    if isinstance(auth, dict) and auth.get("scheme") and not AUTH_DROPPED.on(options):
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
INLINE_IGNORED = switch("push-inline-ignored")
INLINE_NOT_LISTED = switch("push-inline-not-listed")
INLINE_WITHOUT_CAPABILITY = switch("push-inline-without-capability")
STOPS_AT_PAUSE = switch("push-stops-at-pause")
STOPS_WITHOUT_STREAM = switch("push-stops-without-stream")
AUTH_DROPPED = switch("push-auth-dropped")
AUTH_SCHEME_NOT_CHECKED = switch("push-auth-scheme-not-checked")
LINK_LOCAL_ACCEPTED = switch("push-link-local-accepted")
PRIVATE_ACCEPTED = switch("push-private-accepted")
SCHEME_NOT_CHECKED = switch("push-scheme-not-checked")
NON_URL_ACCEPTED = switch("push-non-url-accepted")
NO_RETRY = switch("push-no-retry")
STOPS_AFTER_FAILURE = switch("push-stops-after-failure")
TIMEOUT_SHORT = switch("push-timeout-short")
SHORT_TIMEOUT_S = 0.5  # (fault: push-timeout-short)
DELETE_KEEPS_LISTING = switch("push-delete-keeps-listing")
DELETE_TWICE_FAILS = switch("push-delete-twice-fails")
GET_DROPS_SETTINGS = switch("push-get-drops-settings")
