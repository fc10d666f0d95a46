"""A real A2A peer built on ``fasta2a`` 2.1.1 (Pydantic's own A2A server, not on a2a-sdk).

It plays the streamcert test-agent script (docs/contracts.md §6) with fasta2a's own parts, as its
documentation and its Pydantic AI bridge use them: ``FastA2A`` (the Starlette app: card, JSON-RPC
endpoint, task manager), ``InMemoryBroker``, ``InMemoryStorage`` and a ``Worker`` subclass whose
``run_task`` plays the script in place of a model — it writes the task's state, messages and artifacts
to the storage and reports each event on the broker's event bus (``publish_status``,
``publish_artifact``), as the bridge's ``AgentWorker`` does. No model, nothing random. Nothing here
corrects what fasta2a puts on the wire: that is what the suite is meant to find.

Run it from a venv holding ``fasta2a==2.1.1`` and ``uvicorn`` (not the suite's venv)::

    python tests/peers/fasta2a_agent.py [--port 0]

It binds 127.0.0.1 only; the first line on stdout is the base URL (``http://127.0.0.1:PORT``), logs go
to stderr. fasta2a serves the card at ``/.well-known/agent-card.json`` and JSON-RPC at ``/`` (its one
binding); the card's interface URL is ``http://127.0.0.1:PORT/``.

Script steps played, and declared in the card as docs/script-extensions.md says (an extension entry
for ``urn:streamcert:script`` with the steps in ``params``): ``status``, ``artifact`` (``chunks`` or
``data``), ``sleep``, ``say``, ``finish``, ``fail``. ``ask`` is played (the task stops at
``input-required`` with the question) but not declared: fasta2a starts a new task for every message, so
an answer can never reach the paused task (docs/peers.md); ``--declare-ask`` declares it, to show that.
``say`` therefore has no answer to report: ``{{result}}`` is replaced by nothing. Any other step fails
the task naming it. No script: the task completes with a short message.
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
import uuid
from contextlib import asynccontextmanager
from typing import Any

import anyio
import uvicorn
from fasta2a import FastA2A, Worker
from fasta2a.broker import InMemoryBroker
from fasta2a.schema import AgentExtension, Artifact, Message, Part, Skill, TaskIdParams, TaskSendParams
from fasta2a.storage import InMemoryStorage

SCRIPT_KEY = "urn:streamcert:script"
HOST = "127.0.0.1"
PLAYED = ["status", "artifact", "sleep", "say", "finish", "fail"]
ENDED = {"completed", "canceled", "failed", "rejected"}


class ScriptError(Exception):
    """The script cannot be played; the message says why (it becomes the failed status's text)."""


def read_script(message: Message) -> list[Any] | None:
    """The script's steps from the message's metadata, or None when it carries no script."""
    script = (message.get("metadata") or {}).get(SCRIPT_KEY)
    if script is None:
        return None
    if not isinstance(script, dict):
        raise ScriptError(f"{SCRIPT_KEY} must be an object")
    if script.get("version") != 1:
        raise ScriptError(f"unsupported script version: {script.get('version')!r}")
    steps = script.get("steps")
    if not isinstance(steps, list):
        raise ScriptError("script has no 'steps' list")
    return steps


def agent_message(text: str) -> Message:
    return Message(role="agent", parts=[Part(text=str(text))], message_id=str(uuid.uuid4()))


class ScriptWorker(Worker[Any]):
    """Plays the script, one fasta2a event per step, writing what it does to the storage as it goes."""

    async def run_task(self, params: TaskSendParams) -> None:
        task = await self.storage.load_task(params["id"])
        if task is None:
            raise ValueError(f"task {params['id']} not found")
        task_id, context_id = task["id"], task["context_id"]
        # As the bridge's AgentWorker does: the task is working before anything is played.
        await self.storage.update_task(task_id, state="working")
        await self.publish_status(task_id, context_id, "working")
        try:
            steps = read_script(params["message"])
        except ScriptError as exc:
            await self._end(task_id, context_id, "failed", str(exc))
            return
        if steps is None:
            await self._end(task_id, context_id, "completed", "No streamcert script in the message; nothing to do.")
            return
        for index, step in enumerate(steps):
            kind = next(iter(step), None) if isinstance(step, dict) and len(step) == 1 else None
            arg = step[kind] if kind is not None else None
            if kind in ("status", "say"):
                # No answer can reach this task (every message is a new task): {{result}} is empty.
                text = str(arg).replace("{{result}}", "")
                await self.storage.update_task(task_id, state="working", new_messages=[agent_message(text)])
                await self.publish_status(task_id, context_id, "working", agent_message(text))
            elif kind == "artifact" and isinstance(arg, dict) and ("chunks" in arg or "data" in arg):
                await self._artifact(task_id, context_id, arg)
            elif kind == "sleep":
                await anyio.sleep(float(arg) / 1000.0)
            elif kind == "ask":
                await self._end(task_id, context_id, "input-required", str(arg))
                return
            elif kind in ("finish", "fail"):
                await self._end(task_id, context_id, "completed" if kind == "finish" else "failed", str(arg))
                return
            else:
                name = kind if kind is not None else repr(step)
                await self._end(task_id, context_id, "failed",
                                f"unknown script step #{index}: {name!r} (not supported by the fasta2a peer)")
                return
        # The script ended without finish/fail: the task stays where the script left it.

    async def _artifact(self, task_id: str, context_id: str, arg: dict[str, Any]) -> None:
        artifact_id = str(arg.get("artifactId") or uuid.uuid4())
        if "data" in arg:
            whole = Artifact(artifact_id=artifact_id, parts=[Part(data=arg["data"], media_type="application/json")])
            if arg.get("name") is not None:
                whole["name"] = arg["name"]
            await self.publish_artifact(task_id, context_id, whole)
        else:
            chunks = [str(chunk) for chunk in arg["chunks"]]
            for i, chunk in enumerate(chunks):
                piece = Artifact(artifact_id=artifact_id, parts=[Part(text=chunk)])
                if i == 0 and arg.get("name") is not None:
                    piece["name"] = arg["name"]
                await self.publish_artifact(task_id, context_id, piece, append=i > 0, last_chunk=i == len(chunks) - 1)
            whole = Artifact(artifact_id=artifact_id, parts=[Part(text="".join(chunks))])
            if arg.get("name") is not None:
                whole["name"] = arg["name"]
        # The storage keeps the artifact whole (it appends what it is given: one entry per artifact).
        task = await self.storage.load_task(task_id)
        await self.storage.update_task(task_id, state=task["status"]["state"], new_artifacts=[whole])

    async def _end(self, task_id: str, context_id: str, state: str, text: str) -> None:
        """The last status, with its message, then the stream's end (the Worker's documented way: a worker
        that published the end and closed the stream leaves nothing for the base class to publish)."""
        message = agent_message(text)
        await self.storage.update_task(task_id, state=state, new_messages=[message])
        await self.publish_status(task_id, context_id, state, message)
        await self.broker.event_bus.close(task_id)

    async def cancel_task(self, params: TaskIdParams) -> None:
        task = await self.storage.load_task(params["id"])
        if task is None or task["status"]["state"] in ENDED:
            return
        await self._end(task["id"], task["context_id"], "canceled", "Canceled on request.")

    def build_message_history(self, history: list[Message]) -> list[Any]:
        return list(history)

    def build_artifacts(self, result: Any) -> list[Artifact]:
        return []


def build_app(base_url: str, steps: list[str]) -> FastA2A:
    storage = InMemoryStorage()
    broker = InMemoryBroker()
    worker = ScriptWorker(broker=broker, storage=storage)

    @asynccontextmanager
    async def lifespan(app: FastA2A):
        async with app.task_manager, worker.run():
            yield

    return FastA2A(
        storage=storage,
        broker=broker,
        name="streamcert fasta2a peer",
        url=base_url + "/",
        version="0.1.0",
        description="Plays streamcert test-agent scripts on fasta2a's worker, broker and storage.",
        skills=[Skill(id="streamcert-script", name="Play a streamcert script",
                      description="Performs the urn:streamcert:script steps carried in the message metadata.",
                      tags=["streamcert", "test"], input_modes=["text/plain"], output_modes=["text/plain"])],
        extensions=[AgentExtension(uri=SCRIPT_KEY, required=False, params={"steps": steps})],
        default_input_modes=["text/plain", "application/json"],
        default_output_modes=["text/plain", "application/json"],
        lifespan=lifespan,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0 = ephemeral)")
    parser.add_argument("--bindings", default="jsonrpc", choices=["jsonrpc"], help="fasta2a serves JSON-RPC only")
    parser.add_argument("--declare-ask", action="store_true",
                        help="declare `ask` among the steps played (the answer then starts a new task)")
    parser.add_argument("--log-level", default="warning", help="uvicorn log level (to stderr)")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper())

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, args.port))
    base_url = f"http://{HOST}:{sock.getsockname()[1]}"
    steps = [*PLAYED, "ask"] if args.declare_ask else PLAYED
    app = build_app(base_url, steps)
    server = uvicorn.Server(uvicorn.Config(app, log_level=args.log_level.lower(), access_log=False, lifespan="on"))
    print(base_url, flush=True)
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
