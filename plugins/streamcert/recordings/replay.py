"""`streamcert replay`: recorded cassettes served as an A2A agent on 127.0.0.1, so that a client can be run
offline against what a real implementation once sent (its card, its JSON-RPC answers, its streams with the
recorded chunking and, with `--pace recorded`, the recorded pacing).

Matching (docs/cassettes.md):
- the scenario is the one named in the request's script metadata (`urn:streamcert:script`), else the one
  whose recorded answers hold a task or context id the request names, else `--scenario`, else the only one
  served;
- the n-th request of a JSON-RPC method (of a plain POST path) in that scenario gets the n-th recorded answer
  of it; a GET (the card) gets the recorded answer for its path, every time;
- anything else gets a JSON-RPC error (-32603) whose message names what the cassette holds.

An answer is sent as it was recorded: its status and headers (the framing ones set anew), its body chunk by
chunk, a JSON-RPC answer's `id` set to the request's and the card's URLs pointing here. How the recorded
answer ended decides the end: `closed` ends the body, `reset` and `error` drop the connection, and a stream the
suite itself stopped reading (`client_stop`, `time_limit`, `idle`) stays open after its last chunk until the
client goes (at most HOLD_S).

The server is a small asyncio HTTP/1.1 server of its own (not uvicorn): it must write each recorded chunk on
its own, at its time, and drop a connection without a word. Which recorded answer a request gets, and the
answer's bytes for this request, are replay_answers.py's.

Two things serve client certification (drivers/client.py) and change nothing for a recorded cassette:
- `record`: every request the server receives goes into that frame log as an exchange labelled `sent` (what
  was asked and what was answered; see `ReplayServer._sent`);
- an answer whose notes hold `replay_hold` ({"chunk": i, "until": [[key, n], …]}) writes its chunks from the
  i-th on only once the n-th request of one of those keys ("rpc SendStreamingMessage") has arrived: a stream
  that stays open at an interrupted state goes on once the client has answered (conflict D3, "open").
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import Any, Callable, TextIO
from urllib.parse import urlsplit

from ..contract.capture import ANSWERED_BY, NO_MATCH, REFUSED, SERVED_END
from ..contract.client import HOLD
from ..contract.labels.client import SENT
from ..framelog import END_CLIENT_STOP, END_CLOSED, END_ERROR, END_RESET, END_TIME_LIMIT, Exchange, FrameLog
from .replay_answers import Replayer, id_spans, origin_spans, substituted

HOST = "127.0.0.1"  # loopback only, always
HOLD_S = 60.0  # how long a stream the suite stopped reading stays open after its last chunk
MAX_HEAD = 64 * 1024
MAX_BODY = 16 * 1024 * 1024  # a request body past this is refused as it arrives (413), never read whole
READ_TIMEOUT_S = 30.0  # a connection silent this long between requests is closed
WRITE_TIMEOUT_S = 30.0  # a client that takes none of an answer's bytes this long is let go (connection closed)
UNMATCHED = -32603  # JSON-RPC "Internal error": the one code every client knows; the message says the rest
# Headers of the recorded answer that belong to how it was framed on that connection: set anew here.
FRAMING = {"content-length", "transfer-encoding", "connection", "keep-alive"}


# -- the server ------------------------------------------------------------------------------------

class ReplayServer:
    """The replay on 127.0.0.1, in a background thread (`start`, `stop`) or in the foreground (`serve`).

        with ReplayServer(["cassettes/reference/stream-basic.yaml"], pace="fast") as server:
            httpx.get(server.url + "/.well-known/agent-card.json")
    """

    def __init__(self, cassettes: Iterable[str | Path | FrameLog], *, port: int = 0, pace: str = "recorded",
                 scenario: str | None = None, record: FrameLog | None = None,
                 clock: Callable[[], float] | None = None, interfaces: set[str] | None = None,
                 max_bytes: int | None = None) -> None:
        self.replayer = Replayer(cassettes, scenario=scenario, pace=pace, max_bytes=max_bytes)
        # The only paths a request other than a GET is answered at (client certification: the interface URLs
        # the served card declares); any other path gets 404. None: any path.
        self.interfaces = interfaces
        self.record = record  # where each request received goes, as a `sent` exchange (None: nowhere)
        self.clock = clock or time.monotonic  # the record's times (the frame log's clock)
        self._arrivals: set[asyncio.Event] = set()  # set at each request: the holds waiting for one wake up
        self._port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None

    @property
    def port(self) -> int:
        if not self._port:
            raise RuntimeError("the replay server has not been started")
        return self._port

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    async def _open(self) -> None:
        self._server = await asyncio.start_server(self._connection, HOST, self._port, limit=MAX_HEAD)
        self._port = self._server.sockets[0].getsockname()[1]
        self._stopped = asyncio.Event()

    def start(self) -> ReplayServer:
        ready = threading.Event()
        failed: list[BaseException] = []

        def run() -> None:
            loop = self._loop = asyncio.new_event_loop()
            try:
                loop.run_until_complete(self._open())
            except BaseException as exc:  # noqa: BLE001  (handed to the starting thread)
                failed.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_until_complete(self._until_stopped())
            loop.close()

        self._thread = threading.Thread(target=run, name="streamcert-replay", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failed:
            raise failed[0]
        return self

    async def _until_stopped(self) -> None:
        assert self._stopped is not None and self._server is not None
        await self._stopped.wait()
        self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        if tasks:  # let them note how their answers ended (the `sent` record), briefly
            await asyncio.wait(tasks, timeout=2)

    def stop(self) -> None:
        if self._loop is not None and self._stopped is not None:
            self._loop.call_soon_threadsafe(self._stopped.set)
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._thread = self._loop = None

    def serve(self, out: TextIO | None = None) -> None:
        """Serve in the foreground until Ctrl-C or SIGTERM. The first line printed is the base URL."""
        import signal

        async def main() -> None:
            await self._open()
            print(self.url, file=out or sys.stdout, flush=True)
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, self._stopped.set)  # type: ignore[union-attr]
            await self._until_stopped()

        asyncio.run(main())

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- one connection ------------------------------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request = await asyncio.wait_for(_read_request(reader), READ_TIMEOUT_S)
                if request is None:
                    break
                keep = await self._handle(request, reader, writer)
                if not keep:
                    break
        except TooLarge as big:
            await self._refuse(big, writer)
        except (asyncio.TimeoutError, ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            if not writer.is_closing():
                writer.close()

    async def _handle(self, request: _Request, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        body: Any = None
        if request.body:
            try:
                body = json.loads(request.body)
            except ValueError:
                body = None
        sent = self._sent(request, body)
        try:
            keep = await self._answer(request, body, reader, writer, sent)
        except asyncio.CancelledError:  # the server stopped (the case is over) before the answer was
            self._ended(sent, END_TIME_LIMIT)
            raise
        except (ConnectionError, OSError):  # the client went away before the answer was over
            self._ended(sent, END_CLIENT_STOP)
            raise
        return keep

    async def _answer(self, request: _Request, body: Any, reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter, sent: Exchange | None) -> bool:
        arrived = asyncio.get_running_loop().time()
        elsewhere = self.interfaces is not None and request.method != "GET" and request.path not in self.interfaces
        if elsewhere:
            ex, why = None, (f"{request.method} {request.path}: not an interface URL the agent card declares (its "
                             f"JSONRPC interface: {', '.join(sorted(self.interfaces or ())) or 'none'})")
        else:
            ex, why = self.replayer.answer(request.method, request.path, body)
        for waiting in self._arrivals:
            waiting.set()
        if ex is None:
            keep, status, headers = await _unmatched(writer, request, body, why, not_found=elsewhere)
            if sent is not None:
                sent.status, sent.response_headers, sent.t_headers = status, headers, self.clock()
                sent.notes.update({SERVED_END: None, NO_MATCH: why})
            self._ended(sent, END_CLOSED)
            return keep
        if sent is not None:
            sent.notes.update({SERVED_END: ex.end, ANSWERED_BY: ex.label})
        if ex.status is None or ex.end == END_ERROR and ex.t_headers is None:
            _drop(writer)  # no answer was recorded: none is given
            self._ended(sent, END_ERROR)
            return False
        chunks = [c.data for c in ex.chunks]
        recorded_id = ex.request_body.get("id") if isinstance(ex.request_body, dict) else None
        sent_id = body.get("id") if isinstance(body, dict) else None
        joined = b"".join(chunks)
        subs = id_spans(joined, recorded_id, sent_id) if isinstance(body, dict) and "id" in body else []
        if request.method == "GET":
            subs = sorted(subs + origin_spans(joined, ex.url, self.url))
        chunks = substituted(chunks, subs)
        fast = self.replayer.pace == "fast"

        async def at(t: float | None) -> None:
            if not fast and t is not None:
                delay = arrived + (t - ex.t_sent) - asyncio.get_running_loop().time()
                if delay > 0:
                    await asyncio.sleep(delay)

        await at(ex.t_headers)
        headed = ex.response_headers.get("transfer-encoding", "").lower() == "chunked" or ex.is_sse or \
            ex.end != END_CLOSED
        head = [f"HTTP/1.1 {ex.status} {_phrase(ex.status)}"]
        head += [f"{name}: {value}" for name, value in ex.response_headers.items() if name not in FRAMING]
        head.append("transfer-encoding: chunked" if headed else f"content-length: {sum(map(len, chunks))}")
        keep = ex.end == END_CLOSED and request.keep_alive
        if not keep:
            head.append("connection: close")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1", "replace"))
        await _drain(writer)
        if sent is not None:
            sent.status, sent.t_headers = ex.status, self.clock()
            sent.response_headers = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in head[1:]}
        hold = ex.notes.get(HOLD) if isinstance(ex.notes.get(HOLD), dict) else None
        for n, (chunk, c) in enumerate(zip(chunks, ex.chunks)):
            if hold is not None and n == int(hold.get("chunk", 0)) and not await self._released(hold):
                await _until_gone(reader)  # never released: it stays open, as it was, until the client goes
                self._ended(sent, END_CLIENT_STOP)
                return False
            await at(c.t)
            if chunk:
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if headed else chunk)
                await _drain(writer)
        if ex.end == END_CLOSED:
            if headed:
                writer.write(b"0\r\n\r\n")
                await _drain(writer)
            self._ended(sent, END_CLOSED)
            return keep
        if ex.end == END_RESET:
            await at(ex.t_end)
            _drop(writer)
            self._ended(sent, END_RESET)
            return False
        # The suite stopped reading this stream (or the server went silent): it stays open, as it was.
        await _until_gone(reader)
        self._ended(sent, END_CLIENT_STOP)
        return False

    async def _refuse(self, big: TooLarge, writer: asyncio.StreamWriter) -> None:
        """Answer 413 to a request whose body went past MAX_BODY (the rest of it is never read), record it as
        sent with why (notes["refused"]: the client rules report it), and close the connection."""
        why = f"{big.request.method} {big.request.path}: {big}"
        sent = self._sent(big.request, None)
        payload = json.dumps({"error": why}).encode()
        head = (f"HTTP/1.1 413 {_phrase(413)}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(payload)}\r\nconnection: close\r\n\r\n")
        if sent is not None:
            sent.status, sent.t_headers = 413, self.clock()
            sent.response_headers = {"content-type": "application/json", "content-length": str(len(payload))}
            sent.notes.update({SERVED_END: None, REFUSED: why})
        try:
            writer.write(head.encode() + payload)
            await _drain(writer)
        except (ConnectionError, OSError):
            pass
        self._ended(sent, END_CLOSED)

    async def _released(self, hold: dict[str, Any]) -> bool:
        """Whether one of the requests a held answer waits for came (at most HOLD_S is waited)."""
        until = [(str(key), int(n)) for key, n in hold.get("until") or []]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + HOLD_S
        while not any(self.replayer.arrived.get(key, 0) >= n for key, n in until):
            if loop.time() >= deadline:
                return False
            arrival = asyncio.Event()
            self._arrivals.add(arrival)
            try:
                await asyncio.wait_for(arrival.wait(), deadline - loop.time())
            except asyncio.TimeoutError:
                pass
            finally:
                self._arrivals.discard(arrival)
        return True

    def _sent(self, request: _Request, body: Any) -> Exchange | None:
        """The `sent` exchange of a request just received, in the record (None when there is none): method,
        url, rpc_method, request_headers (lower-case names), request_body (its JSON, else its text), t_sent;
        the rest is filled as it is answered: status, response_headers (the head written), t_headers, t_end,
        end (END_CLOSED answered whole, END_ERROR dropped before any answer, END_RESET dropped after the
        head, END_CLIENT_STOP the client went first, END_TIME_LIMIT the server stopped first) and notes:
        `served` (how the recorded answer ended; None when none matched), `answer` (its label),
        `unmatched` (why none matched)."""
        if self.record is None:
            return None
        text = request.body.decode("utf-8", "replace") if request.body else None
        rpc = body.get("method") if isinstance(body, dict) and isinstance(body.get("method"), str) else None
        sent = Exchange(label=SENT, method=request.method, url=self.url + request.path, rpc_method=rpc,
                        request_headers=dict(request.headers), request_body=body if body is not None else text,
                        status=None, t_sent=self.clock(), end=END_CLIENT_STOP)
        self.record.add(sent)
        return sent

    def _ended(self, sent: Exchange | None, end: str) -> None:
        if sent is not None and sent.t_end is None:
            sent.end, sent.t_end = end, self.clock()


async def _drain(writer: asyncio.StreamWriter) -> None:
    """`writer.drain()`, bounded: a client that takes none of the bytes for WRITE_TIMEOUT_S has gone as far as
    this server is concerned (ConnectionError: the connection is closed, the request ends as the client's stop)."""
    try:
        await asyncio.wait_for(writer.drain(), WRITE_TIMEOUT_S)
    except asyncio.TimeoutError:
        writer.transport.abort()  # a close would wait for the client to take what is buffered
        raise ConnectionError(f"the client read nothing for {WRITE_TIMEOUT_S:g} s") from None


async def _until_gone(reader: asyncio.StreamReader) -> None:
    """Wait (at most HOLD_S) until the client closes the connection or sends something more."""
    try:
        await asyncio.wait_for(reader.read(1), HOLD_S)
    except asyncio.TimeoutError:
        pass


class TooLarge(ValueError):
    """A request whose body goes past MAX_BODY, found before the bytes past the cap were read."""

    def __init__(self, request: _Request, figure: int) -> None:
        super().__init__(f"a request body of at least {figure} bytes, past the replay's cap of "
                         f"{MAX_BODY} bytes (refused with 413 before it was read whole)")
        self.request = request


@dataclass
class _Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    keep_alive: bool


async def _read_request(reader: asyncio.StreamReader) -> _Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise
    except asyncio.LimitOverrunError:
        raise ValueError("request head too large") from None
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = (lines[0].split(" ") + ["", ""])[:3]
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    keep = headers.get("connection", "").lower() != "close" and version == "HTTP/1.1"
    request = _Request(method.upper(), urlsplit(target).path or "/", headers, b"", keep)
    pieces: list[bytes] = []
    size_so_far = 0
    if headers.get("transfer-encoding", "").lower() == "chunked":
        while True:  # each chunk's size is checked against the cap before any of its bytes is read
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                break
            if size_so_far + size > MAX_BODY:
                raise TooLarge(request, size_so_far + size)
            pieces.append(await reader.readexactly(size))
            size_so_far += size
            await reader.readexactly(2)
    elif headers.get("content-length"):
        length = int(headers["content-length"])
        if length > MAX_BODY:
            raise TooLarge(request, length)
        pieces.append(await reader.readexactly(length))
    request.body = b"".join(pieces)
    return request


async def _unmatched(writer: asyncio.StreamWriter, request: _Request, body: Any,
                     why: str, not_found: bool = False) -> tuple[bool, int, dict[str, str]]:
    """Answer a request no recording holds an answer for (`not_found`: one sent to a path that serves
    nothing); (keep the connection, the status, the headers)."""
    if not_found or request.method == "GET" or not isinstance(body, dict) or "jsonrpc" not in body:
        payload = json.dumps({"error": why}).encode()
        status = 404
    else:
        payload = json.dumps({"jsonrpc": "2.0", "id": body.get("id"),
                              "error": {"code": UNMATCHED, "message": why}}).encode()
        status = 200
    headers = {"content-type": "application/json", "content-length": str(len(payload))}
    head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    writer.write(f"HTTP/1.1 {status} {_phrase(status)}\r\n{head}\r\n".encode() + payload)
    await _drain(writer)
    return request.keep_alive, status, headers


def _drop(writer: asyncio.StreamWriter) -> None:
    """Close the connection at once with a reset (SO_LINGER 0), as a recorded reset or a refused answer did."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Status"


def serve(cassettes: list[str], port: int, pace: str, scenario: str | None, out: TextIO | None = None,
          max_bytes: int | None = None) -> None:
    server = ReplayServer(cassettes, port=port, pace=pace, scenario=scenario, max_bytes=max_bytes)
    for rec in server.replayer.recordings.values():
        print(f"streamcert replay: {rec.scenario} from {rec.path} ({rec.order()})", file=sys.stderr, flush=True)
    started = time.monotonic()
    server.serve(out)
    print(f"streamcert replay: stopped after {time.monotonic() - started:.0f} s", file=sys.stderr)
