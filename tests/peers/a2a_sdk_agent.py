"""A real A2A 1.0 peer built on the official ``a2a-sdk`` (1.3.x) server stack.

It plays the streamcert test-agent script (docs/contracts.md §6) with the SDK's own, idiomatic machinery:
``DefaultRequestHandler`` + ``InMemoryTaskStore`` + an ``AgentExecutor`` that uses ``TaskUpdater``,
served by the SDK's Starlette routes (``create_agent_card_routes``, ``create_jsonrpc_routes``) under
uvicorn. Nothing here corrects what the SDK puts on the wire: the point is to run the suite against it
and see where the SDK departs from the spec.

Run it from a venv holding ``a2a-sdk[http-server]~=1.3.0`` and ``uvicorn`` (not the suite's venv)::

    python tests/peers/a2a_sdk_agent.py [--port 0] [--rpc-path /a2a/jsonrpc]
        [--bindings jsonrpc,http-json,grpc] [--rest-path /a2a/rest] [--grpc-port 0] [--grpc-url-form hostport|http]
        [--secured] [--push] [--push-screen]

The first line on stdout is the base URL (``http://127.0.0.1:PORT``); logs go to stderr.

``--bindings`` names what is served and declared in the card's ``supportedInterfaces``, in this order:
``jsonrpc`` (the default, and alone as before) with the SDK's ``create_jsonrpc_routes``; ``http-json``
with its ``create_rest_routes`` below ``--rest-path``; ``grpc`` with its ``GrpcHandler`` on a
``grpc.aio`` server of its own port on 127.0.0.1 (needs ``a2a-sdk[grpc]``). All three reach the same
``DefaultRequestHandler``. The card's gRPC url is ``127.0.0.1:PORT`` by default, the form the SDK's own
tests write (a gRPC target, what ``grpc.aio.insecure_channel`` takes), or ``http://127.0.0.1:PORT`` with
``--grpc-url-form http``.

Script steps played: ``status``, ``artifact`` (``chunks`` or ``data``), ``sleep``, ``finish``, ``fail``,
``ask`` and ``say``. ``ask`` uses the SDK's input-required flow: ``TaskUpdater.requires_input`` with
the question as the status message, then the executor returns; the follow-up message on the same task
(the SDK calls ``execute`` again with ``context.current_task``) is the answer, and the script goes on
where it stopped. ``say`` reports the last answer (its text, or its data as JSON). The peer does not
implement the interactions/v1 extension and its card does not declare it.
Any other step fails the task with a message naming it. No script: the task completes with a short
message.

``--push`` declares ``capabilities.pushNotifications: true`` and gives the ``DefaultRequestHandler`` the SDK's own
push machinery, as its documentation wires it: an ``InMemoryPushNotificationConfigStore`` and a
``BasePushNotificationSender`` on an ``httpx.AsyncClient()`` with httpx's defaults. Webhook URLs are not screened
(the SDK's default); ``--push-screen`` opts in to the SDK's own policy, ``validate_push_notification_url``, on the
handler and the sender (issue 26).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import socket
import sys
from typing import Any

import uvicorn
from a2a.helpers import new_data_part, new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
    TaskUpdater,
)
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, TaskState
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette

SCRIPT_KEY = "urn:streamcert:script"
HOST = "127.0.0.1"
DEFAULT_RPC_PATH = "/a2a/jsonrpc"
DEFAULT_REST_PATH = "/a2a/rest"
BINDINGS = ("jsonrpc", "http-json", "grpc")  # the card lists them in this order


class ScriptError(Exception):
    """The script cannot be played; the message says why (it becomes the FAILED status text)."""


def _read_script(context: RequestContext) -> dict[str, Any] | None:
    """The script object from the message's metadata, or None when there is none."""
    message = context.message
    if message is None or not message.HasField("metadata"):
        return None
    metadata = MessageToDict(message.metadata)
    script = metadata.get(SCRIPT_KEY)
    if script is None:
        return None
    if not isinstance(script, dict):
        raise ScriptError(f"{SCRIPT_KEY} must be an object")
    version = script.get("version")
    # Struct numbers arrive as floats: 1.0 == 1.
    if version != 1:
        raise ScriptError(f"unsupported script version: {version!r}")
    steps = script.get("steps")
    if not isinstance(steps, list):
        raise ScriptError("script has no 'steps' list")
    return script


def _answer_text(context: RequestContext) -> str:
    """A follow-up message's answer as the model sees it: its text, or its data as JSON."""
    for part in context.message.parts if context.message is not None else []:
        if part.HasField("text"):
            return part.text
        if part.HasField("data"):
            return json.dumps(MessageToDict(part).get("data"), ensure_ascii=False)
    return ""


class _Paused:
    """Where a task's script stopped at an ``ask``: its steps, the next step's index."""

    def __init__(self, steps: list[Any], index: int) -> None:
        self.steps, self.index = steps, index


class ScriptedExecutor(AgentExecutor):
    """Plays the streamcert script with TaskUpdater, one SDK event per step (docs/contracts.md §6)."""

    def __init__(self) -> None:
        self._paused: dict[str, _Paused] = {}  # task id → where its script waits for an answer

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        resumed = self._paused.pop(task.id, None) if task is not None else None
        if task is None:
            # The SDK's documented pattern: the executor publishes the Task first.
            task = new_task_from_user_message(context.message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)

        def agent_text(text: str):
            return updater.new_agent_message([new_text_part(str(text))])

        last_result = ""
        if resumed is not None:
            # The follow-up message answers the question: back to work where the script stopped.
            last_result = _answer_text(context)
            await updater.update_status(TaskState.TASK_STATE_WORKING)
            steps, start = resumed.steps, resumed.index
        else:
            try:
                script = _read_script(context)
            except ScriptError as exc:
                await updater.failed(agent_text(str(exc)))
                return
            if script is None:
                await updater.complete(agent_text("No streamcert script in the message; nothing to do."))
                return
            steps, start = script["steps"], 0

        for index, step in list(enumerate(steps))[start:]:
            kind = next(iter(step), None) if isinstance(step, dict) and len(step) == 1 else None
            arg = step[kind] if kind is not None else None
            if kind == "status":
                await updater.update_status(TaskState.TASK_STATE_WORKING, message=agent_text(arg))
            elif kind == "artifact" and isinstance(arg, dict) and "chunks" in arg:
                chunks = list(arg["chunks"])
                last = len(chunks) - 1
                for i, chunk in enumerate(chunks):
                    await updater.add_artifact(
                        [new_text_part(str(chunk))],
                        artifact_id=arg.get("artifactId"),
                        name=arg.get("name") if i == 0 else None,
                        append=True if i > 0 else None,
                        last_chunk=True if i == last else None,
                    )
            elif kind == "artifact" and isinstance(arg, dict) and "data" in arg:
                await updater.add_artifact(
                    [new_data_part(arg["data"], media_type="application/json")],
                    artifact_id=arg.get("artifactId"),
                    name=arg.get("name"),
                    last_chunk=True,
                )
            elif kind == "sleep":
                await asyncio.sleep(float(arg) / 1000.0)
            elif kind == "ask":
                self._paused[task.id] = _Paused(steps, index + 1)
                await updater.requires_input(agent_text(arg))
                return
            elif kind == "say":
                await updater.update_status(TaskState.TASK_STATE_WORKING,
                                            message=agent_text(str(arg).replace("{{result}}", last_result)))
            elif kind == "finish":
                await updater.complete(agent_text(arg))
                return
            elif kind == "fail":
                await updater.failed(agent_text(arg))
                return
            else:
                name = kind if kind is not None else repr(step)
                await updater.failed(
                    agent_text(f"unknown script step #{index}: {name!r} (not supported by the a2a-sdk peer)")
                )
                return
        # The script ended without finish/fail: the executor returns and the task stays where the
        # script left it. That is the script's choice, not corrected here.

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel(updater.new_agent_message([new_text_part("Canceled on request.")]))


def build_card(base_url: str, rpc_path: str | None, rest_path: str | None = None,
               grpc_url: str | None = None, push: bool = False) -> AgentCard:
    """The card, declaring one interface per binding served (None: not served)."""
    interfaces = []
    for url, binding in ((base_url + rpc_path if rpc_path is not None else None, "JSONRPC"),
                         (base_url + rest_path if rest_path is not None else None, "HTTP+JSON"),
                         (grpc_url, "GRPC")):
        if url is not None:
            interfaces.append(AgentInterface(url=url, protocol_binding=binding, protocol_version="1.0"))
    return AgentCard(
        name="streamcert a2a-sdk peer",
        description="Plays streamcert test-agent scripts on the official a2a-sdk server stack.",
        version="0.1.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(streaming=True, push_notifications=push),
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            AgentSkill(
                id="streamcert-script",
                name="Play a streamcert script",
                description="Performs the urn:streamcert:script steps carried in the message metadata.",
                tags=["streamcert", "test"],
            )
        ],
    )


def secure(card: AgentCard) -> AgentCard:
    """`--secured`: the card requires a bearer scheme and declares an extended card; the extended card (returned) is
    the card with one more skill. Nothing enforces the requirement but what the SDK does itself (issue 27)."""
    card.security_schemes["bearer"].http_auth_security_scheme.scheme = "Bearer"
    card.security_requirements.add().schemes["bearer"].SetInParent()
    card.capabilities.extended_agent_card = True
    extended = AgentCard()
    extended.CopyFrom(card)
    extended.skills.add(id="extended", name="Extended", description="Only in the extended card.", tags=["streamcert"])
    return extended


def push_machinery(push: str | None) -> dict[str, Any]:
    """The handler's push arguments: none (`push` None), the SDK's store and sender (`"on"`), and with its URL
    policy on both (`"screened"`)."""
    if push is None:
        return {}
    import httpx

    validator = None
    if push == "screened":
        from a2a.utils.push_url_validator import validate_push_notification_url as validator
    store = InMemoryPushNotificationConfigStore()
    sender = BasePushNotificationSender(httpx.AsyncClient(), store, push_url_validator=validator)
    return {"push_config_store": store, "push_sender": sender, "push_url_validator": validator}


def build_handler(card: AgentCard, extended: AgentCard | None = None, push: str | None = None) -> DefaultRequestHandler:
    return DefaultRequestHandler(
        agent_executor=ScriptedExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
        extended_agent_card=extended,
        **push_machinery(push),
    )


def build_app(card: AgentCard, handler: DefaultRequestHandler, rpc_path: str | None,
              rest_path: str | None = None) -> Starlette:
    routes = create_agent_card_routes(card)
    if rpc_path is not None:
        routes += create_jsonrpc_routes(handler, rpc_url=rpc_path)
    if rest_path is not None:
        # Last: create_rest_routes ends with a Mount("/{tenant}") that would take every two-segment path
        # (the card's too) if it came first.
        routes += create_rest_routes(handler, path_prefix=rest_path)
    return Starlette(routes=routes)


def _bindings(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in BINDINGS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"bindings are a comma list of {', '.join(BINDINGS)}; got {text!r}")
    return names


async def _serve_with_grpc(args: argparse.Namespace, sock: socket.socket, base_url: str, uvicorn_config: dict) -> None:
    """uvicorn and the SDK's gRPC server on one event loop; the gRPC port is bound before the card is made."""
    import grpc.aio
    from a2a.server.request_handlers import GrpcHandler
    from a2a.types import a2a_pb2_grpc

    grpc_server = grpc.aio.server()
    grpc_port = grpc_server.add_insecure_port(f"{HOST}:{args.grpc_port}")
    grpc_url = f"http://{HOST}:{grpc_port}" if args.grpc_url_form == "http" else f"{HOST}:{grpc_port}"
    rpc_path = args.rpc_path if "jsonrpc" in args.bindings else None
    rest_path = args.rest_path if "http-json" in args.bindings else None
    card = build_card(base_url, rpc_path, rest_path, grpc_url, push=args.push is not None)
    handler = build_handler(card, secure(card) if args.secured else None, args.push)
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), grpc_server)
    await grpc_server.start()
    server = uvicorn.Server(uvicorn.Config(build_app(card, handler, rpc_path, rest_path), **uvicorn_config))
    print(base_url, flush=True)
    try:
        await server.serve(sockets=[sock])
    finally:
        await grpc_server.stop(grace=None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 = ephemeral)")
    parser.add_argument("--rpc-path", default=DEFAULT_RPC_PATH, help="JSON-RPC endpoint path")
    parser.add_argument("--bindings", type=_bindings, default=["jsonrpc"],
                        help="comma list of the bindings served and declared: jsonrpc, http-json, grpc")
    parser.add_argument("--rest-path", default=DEFAULT_REST_PATH, help="HTTP+JSON routes' path prefix")
    parser.add_argument("--grpc-port", type=int, default=0, help="gRPC port on 127.0.0.1 (0 = ephemeral)")
    parser.add_argument("--grpc-url-form", choices=("hostport", "http"), default="hostport",
                        help="the card's gRPC url: 127.0.0.1:PORT (as the SDK's tests write it) or http://127.0.0.1:PORT")
    parser.add_argument("--log-level", default="warning", help="uvicorn/SDK log level (to stderr)")
    parser.add_argument("--secured", action="store_true",
                        help="the card requires a bearer token and declares an extended card (A2A-AUTH-); no "
                             "middleware is added: what is enforced is what the SDK enforces")
    parser.add_argument("--push", action="store_true",
                        help="the card declares pushNotifications and the handler has the SDK's push config store and "
                             "sender (no URL screening: the SDK's default)")
    parser.add_argument("--push-screen", action="store_true",
                        help="--push with the SDK's URL policy (validate_push_notification_url) opted in")
    args = parser.parse_args(argv)
    args.push = "screened" if args.push_screen else "on" if args.push else None

    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper())

    # Bind first so the card can name the real port.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, args.port))
    port = sock.getsockname()[1]
    base_url = f"http://{HOST}:{port}"

    uvicorn_config = {"log_level": args.log_level.lower(), "access_log": False, "lifespan": "off"}
    if "grpc" in args.bindings:
        asyncio.run(_serve_with_grpc(args, sock, base_url, uvicorn_config))
        return 0

    rpc_path = args.rpc_path if "jsonrpc" in args.bindings else None
    rest_path = args.rest_path if "http-json" in args.bindings else None
    card = build_card(base_url, rpc_path, rest_path, push=args.push is not None)
    handler = build_handler(card, secure(card) if args.secured else None, args.push)
    config = uvicorn.Config(build_app(card, handler, rpc_path, rest_path), **uvicorn_config)
    server = uvicorn.Server(config)

    print(base_url, flush=True)
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
