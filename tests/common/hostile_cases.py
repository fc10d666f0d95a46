"""The hostile cases of issue 12, each a server (or a program) and the `streamcert run` pointed at it.

One table serves two programs: `tests/e2e/test_hostile.py` runs every case and asserts how it ends (the
exit code, the cause named, nothing secret or harness-made in any output, a bound on time), and
`bench/hostile.py` prints the same runs as a table with wall time and peak memory.

A case's server is an `Agent` (tests/common/hostile.py underneath): a small A2A agent that answers the card,
SendStreamingMessage (the Task, a WORKING status, one artifact, COMPLETED) and GetTask correctly,
with the one part the case breaks overridden.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hostile import CARD_PATH, RPC_PATH, HostileServer, Request, card, head, response, sse_event

MIB = 1024 * 1024
SECRET_TOKEN = "s3cr3t-T0KEN-4f9a1c"  # given as a bearer token; the server echoes it without "Bearer "
SECRET_KEY = "k3y-Q9zR2mXw7"  # given in the URL's query (api_key=…)


# -- a small A2A agent whose parts a case overrides --------------------------------------------------

class Agent:
    def __init__(self) -> None:
        self.tasks: dict[str, dict[str, Any]] = {}

    async def __call__(self, request: Request, writer: asyncio.StreamWriter) -> None:
        base = "http://" + request.headers.get("host", "127.0.0.1")
        if request.method == "GET" and request.path == CARD_PATH:
            await self.card(base, request, writer)
            return
        if request.method != "POST":
            writer.write(response({"detail": "not found"}, 404))
            return
        try:
            rpc = json.loads(request.body)
        except ValueError:
            writer.write(response({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}))
            return
        if not isinstance(rpc, dict):
            rpc = {}
        method, rpc_id, params = rpc.get("method"), rpc.get("id"), rpc.get("params") or {}
        if method == "SendStreamingMessage":
            await self.stream(rpc_id, params.get("message") or {}, writer)
        elif method == "GetTask" and params.get("id") in self.tasks:
            writer.write(response({"jsonrpc": "2.0", "id": rpc_id, "result": self.tasks[params["id"]]}))
        else:
            writer.write(response({"jsonrpc": "2.0", "id": rpc_id, "error": {
                "code": -32001 if method == "GetTask" else -32601, "message": "not here"}}))

    async def card(self, base: str, request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(response(card(base)))

    def frames(self, message: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """(the task as GetTask shows it at the end, the stream's results in order)."""
        tid, ctx = str(uuid.uuid4()), message.get("contextId") or str(uuid.uuid4())
        ids = {"taskId": tid, "contextId": ctx}
        user = {k: v for k, v in dict(message, **ids).items() if k != "metadata"}
        artifact = {"artifactId": "a1", "name": "out.txt", "parts": [{"text": "hello"}]}
        done = {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-11-30T10:00:01.000Z"}
        task = {"id": tid, "contextId": ctx, "status": {"state": "TASK_STATE_SUBMITTED"}, "history": [user]}
        results = [{"task": task},
                   {"statusUpdate": dict(ids, status={"state": "TASK_STATE_WORKING",
                                                      "timestamp": "2026-11-30T10:00:00.000Z"})},
                   {"artifactUpdate": dict(ids, artifact=artifact, lastChunk=True)},
                   {"statusUpdate": dict(ids, status=done)}]
        return dict(task, status=done, artifacts=[artifact]), results

    async def stream(self, rpc_id: Any, message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        final, results = self.frames(message)
        self.tasks[final["id"]] = final
        writer.write(head(content_type="text/event-stream"))
        for result in results:
            writer.write(sse_event(result, rpc_id))
            await writer.drain()


class Flood(Agent):
    """N artifact chunks as fast as the socket takes them (an agent streaming one chunk per token)."""

    def __init__(self, chunks: int) -> None:
        super().__init__()
        self.chunks = chunks

    async def stream(self, rpc_id: Any, message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        final, results = self.frames(message)
        ids = {"taskId": final["id"], "contextId": final["contextId"]}
        self.tasks[final["id"]] = dict(final, artifacts=[{"artifactId": "a1", "parts": [{"text": "t" * self.chunks}]}])
        writer.write(head(content_type="text/event-stream"))
        writer.write(sse_event(results[0], rpc_id) + sse_event(results[1], rpc_id))
        batch = []
        for n in range(self.chunks):
            update = dict(ids, artifact={"artifactId": "a1", "parts": [{"text": "t"}]}, append=n > 0,
                          lastChunk=n == self.chunks - 1)
            batch.append(sse_event({"artifactUpdate": update}, rpc_id))
            if len(batch) == 1000:
                writer.write(b"".join(batch))
                batch = []
                await writer.drain()
        writer.write(b"".join(batch) + sse_event(results[3], rpc_id))
        await writer.drain()


class Echo(Agent):
    """Echoes the credentials it was sent: the bearer token without "Bearer ", and its query string."""

    async def stream(self, rpc_id: Any, message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        final, results = self.frames(message)
        self.tasks[final["id"]] = final
        echo = {"seen": self.seen}
        writer.write(head(content_type="text/event-stream", x_echo=self.seen))
        for result in results:
            for body in result.values():
                body["metadata"] = echo
            writer.write(sse_event(result, rpc_id) + b": " + self.seen.encode() + b"\n")
            await writer.drain()

    async def __call__(self, request: Request, writer: asyncio.StreamWriter) -> None:
        self.seen = request.headers.get("authorization", "").removeprefix("Bearer ") + " " + request.target
        await super().__call__(request, writer)


class CardBody(Agent):
    """A card answered with these raw bytes and headers."""

    def __init__(self, body: bytes, **headers: str | int) -> None:
        super().__init__()
        self.body, self.headers = body, headers

    async def card(self, base: str, request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(head(content_length=len(self.body), **self.headers) + self.body)


class BigCard(Agent):
    """A valid card of about `size` bytes (its description is long)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    async def card(self, base: str, request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(response(card(base, description="d" * self.size)))


class Trickle(Agent):
    """A card whose body never ends: one byte a second."""

    async def card(self, base: str, request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(head())
        for _ in range(3600):
            writer.write(b" ")
            await writer.drain()
            await asyncio.sleep(1.0)


class ElsewhereCard(Agent):
    """A card whose JSON-RPC interface is on another port of the same host."""

    def __init__(self) -> None:
        super().__init__()
        self.elsewhere: HostileServer | None = None

    async def card(self, base: str, request: Request, writer: asyncio.StreamWriter) -> None:
        assert self.elsewhere is not None
        writer.write(response(card(base, rpc_url=self.elsewhere.url + RPC_PATH)))


class Silent(Agent):
    """Accepts connections and never answers."""

    async def __call__(self, request: Request, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(3600)


class SilentEndpoint(Agent):
    """Serves its card, and accepts every request at its interface and never answers it."""

    async def __call__(self, request: Request, writer: asyncio.StreamWriter) -> None:
        if request.method == "GET" and request.path == CARD_PATH:
            await super().__call__(request, writer)
            return
        await asyncio.sleep(3600)


class StreamBytes(Agent):
    """The stream's Task, then these bytes (written in pieces of `piece`), then whatever `end` does."""

    def __init__(self, payload: Callable[[Any, dict[str, str]], bytes], *, piece: int = 1 * MIB,
                 end: str = "close") -> None:
        super().__init__()
        self.payload, self.piece, self.end = payload, piece, end

    async def stream(self, rpc_id: Any, message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        final, results = self.frames(message)
        self.tasks[final["id"]] = final
        writer.write(head(content_type="text/event-stream") + sse_event(results[0], rpc_id))
        data = self.payload(rpc_id, {"taskId": final["id"], "contextId": final["contextId"]})
        for start in range(0, len(data), self.piece):
            writer.write(data[start:start + self.piece])
            await writer.drain()
        if self.end == "reset":
            # SO_LINGER on, 0 s: the close sends a RST instead of a FIN
            writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\1\0\0\0\0\0\0\0")
            writer.transport.abort()


def big_event(size: int) -> Callable[[Any, dict[str, str]], bytes]:
    def payload(rpc_id: Any, ids: dict[str, str]) -> bytes:
        update = dict(ids, artifact={"artifactId": "big", "parts": [{"text": "x" * size}]}, lastChunk=True)
        done = dict(ids, status={"state": "TASK_STATE_COMPLETED"})
        return sse_event({"artifactUpdate": update}, rpc_id) + sse_event({"statusUpdate": done}, rpc_id)
    return payload


def endless_line(size: int) -> Callable[[Any, dict[str, str]], bytes]:
    return lambda rpc_id, ids: b"data: " + b"y" * size


def deep_json(depth: int) -> Callable[[Any, dict[str, str]], bytes]:
    return lambda rpc_id, ids: b"data: " + b"[" * depth + b"]" * depth + b"\n\n"


def half_then_reset(rpc_id: Any, ids: dict[str, str]) -> bytes:
    working = dict(ids, status={"state": "TASK_STATE_WORKING"})
    return sse_event({"statusUpdate": working}, rpc_id) + b"data: {\"jsonrpc\": \"2.0\", \"id\": 1, \"res"


class Deep(Agent):
    """A unary answer (GetTask, and every other call) nested `depth` deep."""

    def __init__(self, depth: int) -> None:
        super().__init__()
        self.depth = depth

    async def __call__(self, request: Request, writer: asyncio.StreamWriter) -> None:
        if request.method == "POST":
            body = b'{"jsonrpc": "2.0", "id": 1, "result": {"x": ' + b"[" * self.depth + b"]" * self.depth + b"}}"
            writer.write(response(body))
        else:
            await super().__call__(request, writer)


class Redirect(Agent):
    async def __call__(self, request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(response(b"", 307, location="http://127.0.0.1:9/elsewhere"))


class HtmlErrors(Agent):
    async def __call__(self, request: Request, writer: asyncio.StreamWriter) -> None:
        if request.method == "GET" and request.path == CARD_PATH:
            await super().__call__(request, writer)
        else:
            writer.write(response(b"<html><body><h1>502 Bad Gateway</h1></body></html>", 502, "text/html"))


class BadUtf8(Agent):
    async def stream(self, rpc_id: Any, message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        final, results = self.frames(message)
        self.tasks[final["id"]] = final
        writer.write(head(content_type="text/event-stream"))
        for result in results:
            writer.write(sse_event(result, rpc_id).replace(b"hello", b"hel\xff\xfelo"))
        await writer.drain()


class Drip(Agent):
    """A correct stream, one byte every 20 ms."""

    async def stream(self, rpc_id: Any, message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        final, results = self.frames(message)
        self.tasks[final["id"]] = final
        writer.write(head(content_type="text/event-stream"))
        data = b"".join(sse_event(r, rpc_id) for r in results)
        for start in range(0, len(data), 16):
            writer.write(data[start:start + 16])
            await writer.drain()
            await asyncio.sleep(0.002)


class Endless(Agent):
    """The Task, then a keep-alive comment every 100 ms, forever."""

    async def stream(self, rpc_id: Any, message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        final, results = self.frames(message)
        self.tasks[final["id"]] = final
        writer.write(head(content_type="text/event-stream") + sse_event(results[0], rpc_id))
        while True:
            writer.write(b": keep-alive\n")
            await writer.drain()
            await asyncio.sleep(0.1)


class LongStatus(Agent):
    """A status text of `size` characters in the stream, and the same text as GetTask's state (a FAIL that
    quotes it: issue 25, evidence is quoted, never copied)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    async def stream(self, rpc_id: Any, message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        final, results = self.frames(message)
        text = "s" * self.size
        self.tasks[final["id"]] = dict(final, status={"state": text})
        results[1]["statusUpdate"]["status"]["message"] = {"messageId": "m1", "role": "ROLE_AGENT",
                                                           "parts": [{"text": text}]}
        writer.write(head(content_type="text/event-stream"))
        for result in results:
            writer.write(sse_event(result, rpc_id))
            await writer.drain()


class Chatty(Agent):
    """`times` status updates, each repeating the whole text said so far (an agent re-sending its message on
    every token): about 29 MB in one stream for 1 200 of them."""

    def __init__(self, times: int) -> None:
        super().__init__()
        self.times = times

    async def stream(self, rpc_id: Any, message: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        final, results = self.frames(message)
        ids = {"taskId": final["id"], "contextId": final["contextId"]}
        said = "Working on the unit tests for payments. "
        self.tasks[final["id"]] = dict(final, status={"state": "TASK_STATE_COMPLETED",
                                                      "message": {"messageId": "m", "role": "ROLE_AGENT",
                                                                  "parts": [{"text": said * self.times}]}})
        writer.write(head(content_type="text/event-stream") + sse_event(results[0], rpc_id))
        for n in range(1, self.times + 1):
            status = {"state": "TASK_STATE_WORKING", "message": {"messageId": f"m{n}", "role": "ROLE_AGENT",
                                                                 "parts": [{"text": said * n}]}}
            writer.write(sse_event({"statusUpdate": dict(ids, status=status)}, rpc_id))
            await writer.drain()
        writer.write(sse_event(results[2], rpc_id) + sse_event(results[3], rpc_id))
        await writer.drain()


def gzip_bomb(size: int) -> bytes:
    """`size` bytes of spaces, gzipped (1 GiB of them is about 1 MiB)."""
    out = tempfile.SpooledTemporaryFile(max_size=64 * MIB)
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9) as z:
        block = b" " * MIB
        for _ in range(size // MIB):
            z.write(block)
    out.seek(0)
    return out.read()


# -- client commands (`run --client-cmd`): what a client sends and prints is as untrusted as a server's answer --

DB_PASSWORD = "pg-Pa55w0rd-7e1d"  # inside a URL-shaped environment value (its user info): a secret too
ECHO_ENV_CLIENT = ("import json, os, sys; u = os.environ['DATABASE_URL']; print('connecting to', u); "
                   "print('using', u, file=sys.stderr); print(json.dumps({'note': u}))")
# Reads the card for the interface to post to, then sends a chunked request body of `mib` MiB in 1 MiB chunks (the
# replay refuses it with 413 past its cap: the client goes on writing until the connection is closed), then exits.
BIG_BODY_CLIENT = """
import json, os, socket, sys, urllib.parse, urllib.request
base = os.environ['STREAMCERT_URL']
card = json.load(urllib.request.urlopen(base + '/.well-known/agent-card.json', timeout=10))
url = urllib.parse.urlsplit(card['supportedInterfaces'][0]['url'])
sock = socket.create_connection((url.hostname, url.port), timeout=10)
sock.sendall(b'POST ' + url.path.encode() + b' HTTP/1.1\\r\\nhost: x\\r\\ncontent-type: application/json\\r\\n'
             b'transfer-encoding: chunked\\r\\n\\r\\n')
block = b'%x\\r\\n' % (1 << 20) + b'x' * (1 << 20) + b'\\r\\n'
try:
    for _ in range(int(sys.argv[1])):
        sock.sendall(block)
except OSError:
    pass
print('{}')
"""

# A final view of `mib` MiB on one line (the task's status text): within the 65 MiB line cap at 64, past it at 70.
BIG_VIEW_CLIENT = ("import sys; out = sys.stdout.buffer; out.write(b'{\"task\": {\"id\": \"x\", \"status\": "
                   "{\"state\": \"TASK_STATE_COMPLETED\", \"message\": \"'); block = b'v' * (1 << 20)\n"
                   "for _ in range(int(sys.argv[1])): out.write(block)\nout.write(b'\"}}}\\n')")


def python_cmd(source: str, *args: str) -> str:
    """A `--client-cmd` running `source` with this interpreter, quoted as shlex (and a shell) reads it."""
    import shlex

    return " ".join(shlex.quote(part) for part in (sys.executable, "-c", source, *args))


# -- the cases --------------------------------------------------------------------------------------

ONE_TEST = ["--", "-k", "test_stream_basic"]


@dataclass
class Case:
    name: str
    server: Callable[[], Agent] | None  # None: no HTTP server (a closed port, a program, a usage error)
    args: Callable[[str], list[str]]  # the `streamcert run` arguments, given the server's URL
    exit: set[int]  # the exit codes that are right
    named: tuple[str, ...] = ()  # what the output or the report must say (the cause), case-insensitive
    seconds: float = 60.0  # the run must end within this
    env: dict[str, str] = field(default_factory=dict)
    secrets: tuple[str, ...] = ()  # values that must appear in no output, in no form
    absent: tuple[str, ...] = ()  # what no finding may say (besides ALWAYS_ABSENT, which nothing may say)
    heavy: bool = False  # a big transfer: measured by bench/hostile.py; the tests run a smaller twin


ALWAYS_ABSENT = ("Traceback", "harness fault", "RecursionError")  # the suite's own failures never reach a user


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


CASES = [
    # -- the table of issue 12 -------------------------------------------------------------------
    Case("100 000 artifact chunks at once", lambda: Flood(100_000), lambda u: ["--url", u, *ONE_TEST],
         {0, 1}, seconds=120, heavy=True),
    Case("100 000 artifact chunks at once, recorded", lambda: Flood(100_000),
         lambda u: ["--url", u, "--record", "{tmp}/cassettes", *ONE_TEST], {0, 1}, seconds=180, heavy=True),
    Case("20 000 artifact chunks at once", lambda: Flood(20_000), lambda u: ["--url", u, *ONE_TEST],
         {0, 1}, seconds=60),
    Case("the server echoes the bearer token", Echo, lambda u: [
        "--url", u, "--header", f"Authorization: Bearer {SECRET_TOKEN}", "--record", "{tmp}/cassettes", *ONE_TEST],
        {0, 1}, secrets=(SECRET_TOKEN,)),
    Case("an API key in the URL's query", Echo, lambda u: [
        "--url", u + f"?api_key={SECRET_KEY}", "--record", "{tmp}/cassettes", *ONE_TEST],
        {0, 1}, secrets=(SECRET_KEY,)),
    Case("a credential in the environment", Echo, lambda u: ["--url", u, "--record", "{tmp}/cassettes", *ONE_TEST],
         {0, 1}, env={"MY_SERVICE_TOKEN": SECRET_TOKEN + "-env"}, secrets=(SECRET_TOKEN + "-env",)),
    Case("the card is a gzip bomb (1 MiB → 1 GiB)", lambda: CardBody(gzip_bomb(1024 * MIB), content_encoding="gzip"),
         lambda u: ["--url", u, *ONE_TEST], {1, 3}, ("gzip",), seconds=60, heavy=True),
    Case("the card is a gzip bomb (64 KiB → 64 MiB)", lambda: CardBody(gzip_bomb(64 * MIB), content_encoding="gzip"),
         lambda u: ["--url", u, "--max-decompressed-bytes", "8MiB", *ONE_TEST], {1, 3}, ("gzip",), seconds=60),
    Case("a card body that trickles forever", Trickle, lambda u: ["--url", u, "--timeout", "3", *ONE_TEST],
         {1, 3}, ("still arriving",), seconds=40),
    Case("the card's interface URL is another origin", ElsewhereCard, lambda u: [
        "--url", u, "--header", f"Authorization: Bearer {SECRET_TOKEN}", *ONE_TEST],
        {1, 3}, ("--allow-origin",), secrets=(SECRET_TOKEN,)),
    Case("--acp-cmd with a grandchild that sleeps", None, lambda u: [  # (the start-up limit is waited for once:
        "--acp-cmd", "sh -c 'sleep 1000; true'", "--start-limit", "3", "--profile", "acp"], {1},  # not per scenario)
         ("--start-limit", "not driven"), seconds=12),
    Case("--line-cmd with a grandchild that sleeps", None, lambda u: [
        "--line-cmd", "sh -c 'sleep 1000; true'", "--start-limit", "3", "--profile", "line"], {1},
        ("--start-limit",), seconds=60),
    Case("--acp-cmd true (exits at once)", None, lambda u: ["--acp-cmd", "true", "--profile", "acp"], {1},
         ("exit",), seconds=30),
    Case("a server that accepts and never answers", Silent, lambda u: ["--url", u, "--timeout", "3"], {3},
         seconds=30),
    # issue 25: once the endpoint has waited out the --timeout, each later request waits half a second, saying why
    Case("a card, then an endpoint that accepts and never answers", SilentEndpoint,
         lambda u: ["--url", u, "--timeout", "2", "--", "-k", "test_list_tasks"], {1},
         ("(given 0.5 s, not the --timeout of 2 s", "did not answer an earlier POST to this URL"), seconds=45),
    Case("nothing listens on the port", None, lambda u: ["--url", _closed_port()], {3}, seconds=20),
    Case("one 64 MiB event", lambda: StreamBytes(big_event(64 * MIB)), lambda u: ["--url", u, *ONE_TEST], {0, 1},
         seconds=120, heavy=True),
    Case("one 8 MiB event", lambda: StreamBytes(big_event(8 * MIB)), lambda u: ["--url", u, *ONE_TEST], {0, 1},
         seconds=60),
    Case("a 200 MiB line with no line end", lambda: StreamBytes(endless_line(200 * MIB)),
         lambda u: ["--url", u, "--stream-limit", "60", *ONE_TEST], {1}, ("cap",), seconds=120, heavy=True),
    Case("a 3 MiB line past a 1 MiB event cap", lambda: StreamBytes(endless_line(3 * MIB)),
         lambda u: ["--url", u, "--max-event-bytes", "1MiB", *ONE_TEST], {1}, ("--max-event-bytes",), seconds=60),
    Case("a TCP reset in the middle of a stream", lambda: StreamBytes(half_then_reset, end="reset"),
         lambda u: ["--url", u, *ONE_TEST], {1}, ("reset",), seconds=60),
    Case("an event nested 100 000 deep", lambda: StreamBytes(deep_json(100_000)), lambda u: ["--url", u, *ONE_TEST],
         {1}, ("deep",), seconds=60),
    Case("a unary answer nested 100 000 deep", lambda: Deep(100_000),
         lambda u: ["--url", u, "--", "-k", "test_list_tasks"], {1}, ("deep",), seconds=60),
    Case("a 10 MiB valid card", lambda: BigCard(10 * MIB), lambda u: ["--url", u, "--", "-k", "test_card"], {0, 1},
         absent=("not JSON", "reached the"), seconds=60),
    # -- issue 25: evidence is quoted, never copied (the report stays within a few MiB) ----------------
    Case("a 64 MiB status text", lambda: LongStatus(64 * MIB), lambda u: ["--url", u, *ONE_TEST], {1},
         ("cut:",), seconds=120, heavy=True),
    Case("a 2 MiB status text", lambda: LongStatus(2 * MIB), lambda u: ["--url", u, *ONE_TEST], {1},
         ("cut:",), seconds=60),
    Case("a chatty agent repeating its text 1 200 times", lambda: Chatty(1200), lambda u: ["--url", u, *ONE_TEST],
         {0, 1}, seconds=120, heavy=True),
    Case("a chatty agent repeating its text 200 times", lambda: Chatty(200), lambda u: ["--url", u, *ONE_TEST],
         {0, 1}, seconds=60),
    # -- issue 25: a client command's output and requests --------------------------------------------------
    Case("a client echoes a password in a URL-shaped environment value", None, lambda u: [
        "--client-cmd", python_cmd(ECHO_ENV_CLIENT), "--profile", "client", "--", "-k", "client-basic"],
        {0, 1}, env={"DATABASE_URL": f"postgres://app:{DB_PASSWORD}@db/x"}, secrets=(DB_PASSWORD,), seconds=60),
    Case("a client sends a 600 MiB chunked request body", None, lambda u: [
        "--client-cmd", python_cmd(BIG_BODY_CLIENT, "600"), "--profile", "client", "--", "-k", "client-basic"],
        {1}, ("past the replay's cap",), seconds=120, heavy=True),
    Case("a client sends a 20 MiB chunked request body", None, lambda u: [
        "--client-cmd", python_cmd(BIG_BODY_CLIENT, "20"), "--profile", "client", "--", "-k", "client-basic"],
        {1}, ("past the replay's cap",), seconds=60),
    Case("a client's final view of 64 MiB", None, lambda u: [
        "--client-cmd", python_cmd(BIG_VIEW_CLIENT, "64"), "--profile", "client", "--", "-k", "client-basic"],
        {0, 1}, seconds=120, heavy=True),
    Case("a client's final view cut at 65 MiB", None, lambda u: [
        "--client-cmd", python_cmd(BIG_VIEW_CLIENT, "70"), "--profile", "client", "--", "-k", "client-basic"],
        {1}, ("--max-event-bytes",), seconds=120, heavy=True),
    Case("a client's 3 MiB final view past a 1 MiB line cap", None, lambda u: [
        "--client-cmd", python_cmd(BIG_VIEW_CLIENT, "3"), "--max-event-bytes", "1MiB", "--profile", "client", "--",
        "-k", "client-basic"], {1}, ("--max-event-bytes", "no final view"), seconds=60),
    Case("--baseline with invalid JSON", None, lambda u: ["--baseline", "{tmp}/bad.json"], {2}, ("baseline",),
         seconds=15),
    Case("--report under a file", None, lambda u: ["--report", "{tmp}/a-file/report"], {2}, ("report",), seconds=15),
    # -- cases that already ended well at 36ade23: kept so they do not regress ---------------------
    Case("a stream that drips", Drip, lambda u: ["--url", u, *ONE_TEST], {0, 1}, seconds=60),
    Case("a stream that never ends", Endless, lambda u: ["--url", u, "--stream-limit", "3", *ONE_TEST], {1},
         ("no terminal state",), seconds=60),
    Case("bad UTF-8 in a stream", BadUtf8, lambda u: ["--url", u, *ONE_TEST], {1}, ("utf-8",), seconds=60),
    Case("HTML error pages", HtmlErrors, lambda u: ["--url", u, *ONE_TEST], {1}, ("text/html",), seconds=60),
    Case("a redirect", Redirect, lambda u: ["--url", u, *ONE_TEST], {1, 3}, ("location",), seconds=60),
    Case("an unknown profile", None, lambda u: ["--profile", "nope"], {2}, ("nope",), seconds=15),
    Case("SIGINT during the run", Endless, lambda u: ["--url", u, "--stream-limit", "30", *ONE_TEST], {1},
         ("INCOMPLETE",), seconds=40),
]
BY_NAME = {case.name: case for case in CASES}


# -- running one --------------------------------------------------------------------------------------

@dataclass
class Outcome:
    exit: int | None  # None: it had to be killed past the case's bound
    seconds: float
    peak_mib: float  # peak resident memory of the streamcert run (VmHWM of its process, polled until it exits)
    output: str  # stdout and stderr
    files: dict[str, bytes]  # every file the run wrote, by path relative to its folder
    report: dict[str, Any] | None
    requests: dict[str, list[Request]]  # what each server was sent: "target", "elsewhere"

    @property
    def written(self) -> int:
        """Bytes of everything the run wrote and printed."""
        return len(self.output.encode("utf-8")) + sum(len(data) for data in self.files.values())

    def text(self) -> str:
        """Everything the run wrote, as one text (for looking for a cause or a secret)."""
        return self.output + "\n".join(data.decode("utf-8", "replace") for data in self.files.values())

    def first_finding(self, about: tuple[str, ...] = ()) -> str:
        """What a user reads first: the stderr line of a run that stopped early, else the first finding that
        is not a PASS — the first that names one of the words `about` (the case's cause), if one does."""
        stopped = [line for line in self.output.splitlines() if line.startswith("streamcert")
                   and "verdict" not in line and not line.startswith("streamcert: report")]
        found = [f"{req['id']} {req['status']}: {req['message']}" for req in (self.report or {}).get("requirements", [])
                 if req.get("status") not in ("PASS", "SKIPPED", "UNSUPPORTED", "NOT_TESTED") and req.get("message")]
        for text in stopped + found:
            if any(word.lower() in text.lower() for word in about):
                return text
        return (stopped + found + [line for line in self.output.splitlines() if "verdict" in line] + [""])[0]


def run_case(case: Case, folder: Path) -> Outcome:
    """Start the case's server, run `streamcert run` against it in a process group of its own, and collect."""
    (folder / "a-file").write_text("a file, not a folder\n")
    (folder / "bad.json").write_text("{not json\n")
    servers: dict[str, HostileServer] = {}
    try:
        url = ""
        if case.server is not None:
            agent = case.server()
            if isinstance(agent, ElsewhereCard):
                servers["elsewhere"] = agent.elsewhere = HostileServer(Agent(), lifetime=case.seconds + 30).__enter__()
            servers["target"] = HostileServer(agent, lifetime=case.seconds + 30).__enter__()
            url = servers["target"].url
        args = [a.replace("{tmp}", str(folder)) for a in case.args(url)]
        report = folder / "report"
        if "--report" in args:
            report = Path(args[args.index("--report") + 1])
        else:
            args = ["--report", str(report)] + args
        cmd = [sys.executable, "-m", "streamcert", "run", *args]
        outcome = _run(cmd, {**os.environ, **case.env}, folder, report, case)
        outcome.requests = {name: list(server.requests) for name, server in servers.items()}
        return outcome
    finally:
        for server in servers.values():
            server.__exit__(None, None, None)


def _run(cmd: list[str], env: dict[str, str], folder: Path, report: Path, case: Case) -> Outcome:
    started = time.monotonic()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=folder,
                                start_new_session=True)
        interrupted, peak = False, 0
        while True:
            peak = max(peak, _high_water_kib(proc.pid))
            pid, status = os.waitpid(proc.pid, os.WNOHANG)
            if pid:
                break
            elapsed = time.monotonic() - started
            if case.name.startswith("SIGINT") and not interrupted and elapsed > 6:
                os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C in a terminal: the whole group
                interrupted = True
            if elapsed > case.seconds:
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status = os.waitpid(proc.pid, 0)
                status = None
                break
            time.sleep(0.01)
        seconds = time.monotonic() - started
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever it left behind
        except ProcessLookupError:
            pass
        out.seek(0)
        output = out.read().decode("utf-8", "replace")
    files = {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
             if p.is_file() and p.name not in ("a-file", "bad.json")}
    data = None
    if (report / "compatibility.json").is_file():
        try:
            data = json.loads((report / "compatibility.json").read_text("utf-8"))
        except ValueError:
            data = None
    code = None if status is None else os.waitstatus_to_exitcode(status)
    return Outcome(code, seconds, peak / 1024, output, files, data, {})


def _high_water_kib(pid: int) -> int:
    """The process's peak resident memory so far (VmHWM, kept since its exec). Not wait4's ru_maxrss:
    Linux carries a process's peak across exec, so a run forked from this process (which holds the
    hostile servers and their payloads) would report this process's size."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0
