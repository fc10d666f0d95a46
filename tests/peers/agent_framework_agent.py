"""A real A2A peer on Microsoft's agent-framework A2A adapter (``agent-framework-a2a`` 1.0.0b261022).

The adapter, ``agent_framework.a2a.A2AExecutor``, is an a2a-sdk ``AgentExecutor`` that runs any agent-framework
agent (``SupportsAgentRun``) and turns what the agent says into A2A events. This peer serves it the way the
adapter's own documentation does (``DefaultRequestHandler``, ``InMemoryTaskStore``, the SDK's Starlette
routes, ``stream=True``), with a deterministic agent in place of a model: ``ScriptAgent`` plays the
streamcert test-agent script (docs/contracts.md §6) as a stream of ``AgentResponseUpdate`` s. Nothing here
corrects what the adapter puts on the wire: that is what the suite is meant to find.

What the test agent adds to the adapter, and only that: the adapter hands the agent the message's text alone
(``RequestContext.get_user_input``), and the script travels in the message's metadata, so ``ScriptExecutor``
passes it on as a run keyword (``_build_run_kwargs``, where the adapter builds the agent's run arguments).
Events are the adapter's own (``handle_events`` is not overridden).

What the adapter can express, and so the steps declared in the card (docs/script-extensions.md, "What a test
agent plays"): ``sleep`` (the agent waits) and ``fail`` (the agent raises; the adapter fails the task with the
exception's text as the status message). Not declared, because the adapter cannot show them as the script asks:
``status``/``say`` (a streamed update becomes an artifact chunk, never a status), ``artifact`` (text chunks stream
as chunks of one artifact, the update's ``message_id`` as its id, but with no ``name`` and no ``lastChunk``; a
data artifact has no form), ``finish`` (the adapter completes the task with no message), ``ask`` (no pause for
input). Of these the agent still plays what the adapter can show of them — an artifact's text chunks — so that
their structure is judged; ``status``, ``say``, ``ask`` and a data artifact are passed over, and the end of the
steps (or ``finish``) ends the run, which the adapter completes. Any other step fails the task naming it.

Run it from a venv holding ``agent-framework-a2a==1.0.0b261022`` and ``uvicorn`` (not the suite's venv)::

    python tests/peers/agent_framework_agent.py [--port 0]

It binds 127.0.0.1 only; the first line on stdout is the base URL (``http://127.0.0.1:PORT``), logs go to
stderr. The card is at ``/.well-known/agent-card.json``, JSON-RPC at ``/a2a/jsonrpc``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from a2a.server.agent_execution import RequestContext
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentExtension, AgentInterface, AgentSkill
from agent_framework import AgentResponse, AgentResponseUpdate, AgentSession, BaseAgent, Content, ResponseStream
from agent_framework.a2a import A2AExecutor
from google.protobuf.json_format import MessageToDict
from starlette.applications import Starlette

SCRIPT_KEY = "urn:streamcert:script"
HOST = "127.0.0.1"
RPC_PATH = "/a2a/jsonrpc"
DECLARED = ["sleep", "fail"]
PASSED_OVER = {"status", "say", "ask"}


class ScriptAgent(BaseAgent):
    """An agent-framework agent that plays the script's steps as streamed updates, no model."""

    def run(self, messages: Any = None, *, stream: bool = False, session: AgentSession | None = None,
            script: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        updates = self._play(script)
        if stream:
            return ResponseStream(updates, finalizer=AgentResponse.from_updates)

        async def whole() -> AgentResponse:
            return AgentResponse.from_updates([update async for update in updates])

        return whole()

    async def _play(self, script: dict[str, Any] | None) -> AsyncIterator[AgentResponseUpdate]:
        if script is None:
            yield AgentResponseUpdate(role="assistant", contents=[Content.from_text("No streamcert script; nothing to do.")])
            return
        if script.get("version") != 1 or not isinstance(script.get("steps"), list):
            raise ValueError(f"not a version 1 script with steps: {script!r}")
        for index, step in enumerate(script["steps"]):
            kind = next(iter(step), None) if isinstance(step, dict) and len(step) == 1 else None
            arg = step[kind] if kind is not None else None
            if kind == "sleep":
                await asyncio.sleep(float(arg) / 1000.0)
            elif kind == "fail":
                raise RuntimeError(str(arg))
            elif kind == "finish":
                return
            elif kind == "artifact" and isinstance(arg, dict) and "chunks" in arg:
                for chunk in arg["chunks"]:
                    yield AgentResponseUpdate(role="assistant", message_id=arg.get("artifactId"),
                                              contents=[Content.from_text(str(chunk))])
            elif kind in PASSED_OVER or (kind == "artifact" and isinstance(arg, dict) and "data" in arg):
                continue
            else:
                name = kind if kind is not None else repr(step)
                raise RuntimeError(f"unknown script step #{index}: {name!r} (not supported by the agent-framework peer)")


class ScriptExecutor(A2AExecutor):
    """The adapter, passing the message's script to the agent as a run keyword (the adapter gives it text only)."""

    def _build_run_kwargs(self, context: RequestContext) -> dict[str, Any]:
        kwargs = super()._build_run_kwargs(context)
        message = context.message
        if message is not None and message.HasField("metadata"):
            script = MessageToDict(message.metadata).get(SCRIPT_KEY)
            if script is not None:
                kwargs["script"] = script
        return kwargs


def build_card(base_url: str) -> AgentCard:
    card = AgentCard(
        name="streamcert agent-framework peer",
        description="Plays streamcert test-agent scripts through agent-framework's A2AExecutor.",
        version="0.1.0",
        supported_interfaces=[AgentInterface(url=base_url + RPC_PATH, protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="streamcert-script", name="Play a streamcert script",
                           description="Performs the urn:streamcert:script steps the adapter can express.",
                           tags=["streamcert", "test"])],
    )
    extension = AgentExtension(uri=SCRIPT_KEY, required=False)
    extension.params.update({"steps": DECLARED})
    card.capabilities.extensions.append(extension)
    return card


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 = ephemeral)")
    parser.add_argument("--bindings", default="jsonrpc", choices=["jsonrpc"], help="served: JSON-RPC")
    parser.add_argument("--log-level", default="warning", help="uvicorn/adapter log level (to stderr)")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper())

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, args.port))
    base_url = f"http://{HOST}:{sock.getsockname()[1]}"
    card = build_card(base_url)
    handler = DefaultRequestHandler(
        agent_executor=ScriptExecutor(ScriptAgent(name="streamcert script agent"), stream=True),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url=RPC_PATH)])
    server = uvicorn.Server(uvicorn.Config(app, log_level=args.log_level.lower(), access_log=False, lifespan="off"))
    print(base_url, flush=True)
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
