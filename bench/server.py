"""A bench A2A server on 127.0.0.1: the card, then one SendStreamingMessage answered as fast as the
socket takes it (the Task, N artifactUpdate chunks of one artifact, the COMPLETED status), and GetTask.

A plain asyncio HTTP/1.1 server (one request per connection, `Connection: close`), so it costs as
little CPU as possible next to the suite it feeds. Run it in its own process; its first line on
stdout is its URL, and it stops by itself after --lifetime seconds.

    python bench/server.py --chunks 100000 --chunk-bytes 16     # a flood of small events
    python bench/server.py --chunks 100000 --seconds 5          # … spread over 5 s
    python bench/server.py --chunks 65536 --chunk-bytes 4096    # a 256 MiB artifact in 4 KiB chunks
    python bench/server.py --chunks 1 --chunk-bytes 67108864    # one 64 MiB event
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid

HOST = "127.0.0.1"
CARD_PATH = "/.well-known/agent-card.json"
RPC_PATH = "/jsonrpc"
WRITE_BATCH = 64 * 1024  # bytes gathered before one write + drain
GET_TASK_ARTIFACT_MAX = 8 * 1024 * 1024  # GetTask repeats the artifact only up to this size


def _dumps(value) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def _card(base: str) -> dict:
    return {
        "name": "streamcert bench agent", "description": "Floods one artifact as fast as it can.", "version": "0",
        "supportedInterfaces": [{"url": base + RPC_PATH, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": True, "pushNotifications": False, "extensions": []},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "flood", "name": "Flood", "description": "Streams one large artifact.", "tags": ["bench"]}],
    }


class Flood:
    def __init__(self, chunks: int, chunk_bytes: int, seconds: float = 0.0) -> None:
        self.chunks, self.chunk_bytes, self.seconds = chunks, chunk_bytes, seconds
        self.tasks: dict[str, dict] = {}

    def _chunk_text(self, n: int) -> str:
        head = f"{n:08d} "
        return head + "x" * max(0, self.chunk_bytes - len(head) - 1) + "\n"

    async def stream(self, writer: asyncio.StreamWriter, rpc_id, message: dict) -> None:
        task_id, context_id = str(uuid.uuid4()), message.get("contextId") or str(uuid.uuid4())
        user = dict(message, taskId=task_id, contextId=context_id)
        user.pop("metadata", None)  # the script sent is not echoed: this agent plays none
        task = {"id": task_id, "contextId": context_id, "status": {"state": "TASK_STATE_SUBMITTED"}, "history": [user]}
        ids = {"taskId": task_id, "contextId": context_id}

        loop = asyncio.get_running_loop()
        started = loop.time()

        def event(result: dict) -> bytes:
            return b"data: " + _dumps({"jsonrpc": "2.0", "id": rpc_id, "result": result}) + b"\n\n"

        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
                     b"connection: close\r\n\r\n")
        batch = [event({"task": task}),
                 event({"statusUpdate": dict(ids, status={"state": "TASK_STATE_WORKING"})})]
        # every chunk event is the same bytes around its text: encode the frame once, the text per chunk
        frame = {"artifactUpdate": dict(ids, artifact={"artifactId": "flood", "parts": [{"text": "\0"}]},
                                        append=True)}
        before, after = event(frame).split(b"\\u0000")
        size = 0
        for n in range(self.chunks):
            if n == 0:
                first = {"artifactUpdate": dict(ids, artifact={"artifactId": "flood", "name": "flood.txt",
                                                               "parts": [{"text": self._chunk_text(0)}]})}
                if self.chunks == 1:
                    first["artifactUpdate"]["lastChunk"] = True
                piece = event(first)
            elif n == self.chunks - 1:
                last = dict(frame["artifactUpdate"], artifact={"artifactId": "flood", "parts": [
                    {"text": self._chunk_text(n)}]}, lastChunk=True)
                piece = event({"artifactUpdate": last})
            else:
                piece = before + json.dumps(self._chunk_text(n))[1:-1].encode() + after
            batch.append(piece)
            size += len(piece)
            if size >= WRITE_BATCH:
                writer.write(b"".join(batch))
                batch, size = [], 0
                await writer.drain()
                if self.seconds:  # --seconds: spread the chunks evenly over that long
                    await asyncio.sleep(max(0.0, started + self.seconds * (n + 1) / self.chunks - loop.time()))
        done = {"state": "TASK_STATE_COMPLETED", "message": {"messageId": str(uuid.uuid4()), "role": "ROLE_AGENT",
                                                             "parts": [{"text": "done"}], **ids}}
        batch.append(event({"statusUpdate": dict(ids, status=done)}))
        writer.write(b"".join(batch))
        await writer.drain()
        artifacts = []
        if self.chunks * self.chunk_bytes <= GET_TASK_ARTIFACT_MAX:
            text = "".join(self._chunk_text(n) for n in range(self.chunks))
            artifacts = [{"artifactId": "flood", "name": "flood.txt", "parts": [{"text": text}]}]
        self.tasks[task_id] = dict(task, status=done, history=[user, done["message"]], artifacts=artifacts)

    def get_task(self, params: dict) -> dict:
        task = self.tasks.get(params.get("id"))
        if task is None:
            return {"error": {"code": -32001, "message": "Task not found"}}
        history_length = params.get("historyLength")
        if isinstance(history_length, int):
            task = dict(task, history=task["history"][-history_length:] if history_length else [])
        return {"result": task}


async def _handle(flood: Flood, base: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        request_line, *lines = head.decode("latin-1").split("\r\n")
        method, path, _ = request_line.split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if line)}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        if method == "GET" and path == CARD_PATH:
            await _answer(writer, _dumps(_card(base)))
        elif method == "POST" and path == RPC_PATH:
            request = json.loads(body)
            rpc_id, params = request.get("id"), request.get("params") or {}
            if request.get("method") == "SendStreamingMessage":
                await flood.stream(writer, rpc_id, params.get("message") or {})
            elif request.get("method") == "GetTask":
                await _answer(writer, _dumps({"jsonrpc": "2.0", "id": rpc_id, **flood.get_task(params)}))
            else:
                error = {"code": -32601, "message": "Method not found"}
                await _answer(writer, _dumps({"jsonrpc": "2.0", "id": rpc_id, "error": error}))
        else:
            writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass  # the client went away (a stream cut at its limit): nothing to answer
    finally:
        writer.close()


async def _answer(writer: asyncio.StreamWriter, body: bytes) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n"
                 b"content-length: %d\r\n\r\n" % len(body) + body)
    await writer.drain()


async def serve(chunks: int, chunk_bytes: int, lifetime: float, seconds: float = 0.0) -> None:
    flood = Flood(chunks, chunk_bytes, seconds)
    base = {}
    server = await asyncio.start_server(lambda r, w: _handle(flood, base["url"], r, w), HOST, 0)
    port = server.sockets[0].getsockname()[1]
    base["url"] = f"http://{HOST}:{port}"
    print(base["url"], flush=True)
    async with server:
        await asyncio.sleep(lifetime)  # bounded: the bench that started it may die without stopping it


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--chunk-bytes", type=int, default=16)
    parser.add_argument("--lifetime", type=float, default=900.0, help="seconds before the server stops by itself")
    parser.add_argument("--seconds", type=float, default=0.0,
                        help="spread the chunks evenly over this long (default 0: as fast as the socket takes them)")
    args = parser.parse_args()
    asyncio.run(serve(args.chunks, args.chunk_bytes, args.lifetime, args.seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
