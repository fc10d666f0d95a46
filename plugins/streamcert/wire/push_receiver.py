"""The suite's own webhook receiver (A2A 1.0.1 §4.3.3): a small HTTP/1.1 server on 127.0.0.1 (or
`--push-receiver HOST:PORT`) that records every request an agent sends it into the frame log, as an
exchange of its own labelled `webhook_N`: its arrival time (`t_sent`, when the first byte came; `t_end`, when
the body was whole), headers (lower-case names), body (the JSON value, else its text) and what the
receiver answered (`status`). Rules judge these exchanges live and on a cassette alike.

It never follows anything a body says (no URL in it is fetched), and it is bounded like every capture:
a request head past HEAD_LIMIT, a body past the run's per-response cap (`--max-body-bytes`), a body not
whole within the idle-gap cap (`--idle-limit`: one that stalls, or trickles on without end), and more than
MAX_POSTS requests in one scenario are each cut and noted (`Exchange.notes["unjudged"]`, or
`log.notes["push_overflow"]`), never waited on.

A webhook path decides how it answers (the path is the receiver's own choice, made by the driver): under
`/slow/<seconds>/…` it answers after that many seconds (a slow receiver; a request whose sender closed the
connection before that answer is noted `abandoned`, with how long after its body the sender waited), under
`/fail/<n>/…` it answers 503 to the first n requests at that path (a failing receiver), anything else at once
with 200.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from typing import Any

from .. import limits
from ..contract.capture import ABANDONED, BODY_BYTES, PUSH_OVERFLOW, PUSH_RECEIVER, UNJUDGED, WEBHOOK_PATH
from ..contract.labels.push import WEBHOOK_PREFIX
from ..framelog import END_CLOSED, END_ERROR, END_IDLE, Exchange, FrameLog
from .capture import Clock

HEAD_LIMIT = 64 * 1024  # bytes of request line and headers
MAX_POSTS = 1000  # requests recorded in one scenario; past it each is answered 503 and only counted
WATCH_S = 0.05  # how often a slow answer looks whether its sender closed the connection
_SLOW = re.compile(r"^/slow/(\d+(?:\.\d+)?)(?:/|$)")
_FAIL = re.compile(r"^/fail/(\d+)(?:/|$)")


def slow_delay(path: str) -> float:
    """How long the receiver waits before it answers a request to `path` (0 for an ordinary webhook)."""
    m = _SLOW.match(path)
    return float(m.group(1)) if m else 0.0


def failures(path: str) -> int:
    """How many of the first requests to `path` the receiver answers 503 (0 for an ordinary webhook)."""
    m = _FAIL.match(path)
    return int(m.group(1)) if m else 0


class PushReceiver:
    """`async with PushReceiver(log, clock, …) as rx:` listens; `rx.url(path)` is the webhook URL to give an
    agent; `await rx.settle(...)` waits for deliveries; leaving the block stops it."""

    def __init__(self, log: FrameLog, clock: Clock, *, bind: str | None = None, public_url: str | None = None,
                 max_body: int = int(limits.MAX_BODY.default), idle: float = limits.IDLE.default) -> None:
        host, _, port = (bind or "127.0.0.1:0").rpartition(":")
        self.host, self.port = host.strip("[]") or "127.0.0.1", int(port or 0)
        self.public_url = public_url.rstrip("/") if public_url else None
        self.log, self.clock, self.max_body, self.idle = log, clock, max_body, idle
        self.received: list[Exchange] = []
        self._server: asyncio.AbstractServer | None = None
        self._arrived = asyncio.Condition()
        self._handlers: set[asyncio.Task] = set()

    async def __aenter__(self) -> PushReceiver:
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        self.log.notes[PUSH_RECEIVER] = {"listen": f"{self.host}:{self.port}", "url": self.base}
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._server is not None:
            self._server.close()
            for task in list(self._handlers):
                task.cancel()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2.0)

    @property
    def base(self) -> str:
        return self.public_url or f"http://{self.host}:{self.port}"

    def url(self, path: str) -> str:
        return self.base + "/" + path.lstrip("/")

    def at(self, path: str) -> list[Exchange]:
        """The requests received at `path` (a webhook URL's path), in arrival order."""
        return [ex for ex in self.received if ex.notes.get(WEBHOOK_PATH) == "/" + path.lstrip("/")]

    async def settle(self, done: Any, limit: float) -> bool:
        """Wait until `done(received)` holds or `limit` seconds passed (a condition, never a blind sleep)."""
        async def until() -> None:
            async with self._arrived:
                await self._arrived.wait_for(lambda: done(self.received))
        try:
            await asyncio.wait_for(until(), limit)
            return True
        except asyncio.TimeoutError:
            return False

    # -- one connection ----------------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._handlers.discard(task)
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read, record and answer one request; whether the connection may carry another."""
        try:
            first = await reader.read(1)  # an idle kept-alive connection may wait here
        except ConnectionError:
            return False
        if not first:
            return False
        t0 = self.clock()
        ex = Exchange(label="", method="", url="", t_sent=t0, binding="push")
        try:
            head = first + await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.idle)
        except asyncio.LimitOverrunError:
            return self._refuse(ex, writer, 431, "request head over the receiver's 64 KiB")
        except asyncio.TimeoutError:
            ex.end, ex.error = END_IDLE, f"the request head stalled for {self.idle:g} s"
            self._record(ex)
            return False
        if len(head) > HEAD_LIMIT:
            return self._refuse(ex, writer, 431, "request head over the receiver's 64 KiB")
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = (lines[0].split(" ", 2) + ["", ""])[:3]
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                key = name.strip().lower()
                headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        ex.method, ex.url, ex.request_headers = method, self.base + path, headers
        ex.notes[WEBHOOK_PATH] = path.split("?", 1)[0]
        body = await self._body(reader, headers, ex)
        if body is None:
            self._record(ex)
            return self._answer(writer, 413 if ex.notes.get(UNJUDGED) else 400, close=True)
        ex.t_end = self.clock()
        text = body.decode("utf-8", "replace")
        try:
            ex.request_body = json.loads(text) if text.strip() else None
        except ValueError:
            ex.request_body = text
        ex.notes[BODY_BYTES] = len(body)
        if len(self.received) >= MAX_POSTS:
            self.log.notes.setdefault(PUSH_OVERFLOW, {"refused": 0, "limit": MAX_POSTS})["refused"] += 1
            return self._answer(writer, 503, close=True)
        delay, path = slow_delay(ex.notes[WEBHOOK_PATH]), ex.notes[WEBHOOK_PATH]
        status = 503 if len(self.at(path)) < failures(path) else 200  # a failing webhook, on purpose
        self._record(ex)
        if delay and not await self._wait_open(reader, delay):  # the sender gave up waiting and closed
            ex.notes[ABANDONED] = round(self.clock() - (ex.t_end or t0), 3)
            asyncio.get_running_loop().create_task(self._notify())
            return False
        ex.status, ex.t_headers = status, self.clock()
        if delay:
            asyncio.get_running_loop().create_task(self._notify())
        keep = headers.get("connection", "").lower() != "close" and status == 200
        return self._answer(writer, status, close=not keep) and keep

    async def _wait_open(self, reader: asyncio.StreamReader, delay: float) -> bool:
        """Hold the answer `delay` seconds on purpose (a slow webhook), looking every WATCH_S whether the sender
        closed the connection meanwhile; whether it is still open."""
        end = self.clock() + delay
        while (left := end - self.clock()) > 0:
            if reader.at_eof():
                return False
            await asyncio.sleep(min(WATCH_S, left))
        return not reader.at_eof()

    async def _body(self, reader: asyncio.StreamReader, headers: dict[str, str], ex: Exchange) -> bytes | None:
        """The request body, read within the caps (None when it could not be had whole: `ex` says why). The whole
        body must come within the idle limit, chunked or not: a POST that trickles on forever is cut there."""
        try:
            return await asyncio.wait_for(self._read_body(reader, headers, ex), self.idle)
        except asyncio.TimeoutError:
            ex.end, ex.error = END_IDLE, f"the request body was not whole after {self.idle:g} s"
        except (ValueError, asyncio.LimitOverrunError, asyncio.IncompleteReadError) as exc:
            ex.end, ex.error = END_ERROR, f"unreadable request body: {exc}"
        return None

    async def _read_body(self, reader: asyncio.StreamReader, headers: dict[str, str], ex: Exchange) -> bytes | None:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            out = bytearray()
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0].strip() or b"0", 16)
                if len(out) + size > self.max_body:
                    return self._over(ex, len(out) + size)
                if size == 0:
                    await reader.readuntil(b"\r\n")
                    return bytes(out)
                out += await reader.readexactly(size + 2)
                del out[-2:]
        length = int(headers.get("content-length") or 0)
        if length > self.max_body:
            return self._over(ex, length)
        return await reader.readexactly(length) if length else b""

    def _over(self, ex: Exchange, figure: int) -> None:
        ex.notes[UNJUDGED] = {"reason": limits.MAX_BODY.reached(figure, self.max_body), "cap": limits.MAX_BODY.field,
                              "figure": figure, "limit": self.max_body}
        return None

    def _refuse(self, ex: Exchange, writer: asyncio.StreamWriter, status: int, why: str) -> bool:
        ex.end, ex.error, ex.status = END_ERROR, why, status
        self._record(ex)
        return self._answer(writer, status, close=True)

    def _record(self, ex: Exchange) -> None:
        if len(self.received) >= MAX_POSTS:
            return
        ex.label = f"{WEBHOOK_PREFIX}{len(self.received) + 1}"
        ex.end = ex.end or END_CLOSED
        self.received.append(ex)
        self.log.add(ex)
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self._arrived:
            self._arrived.notify_all()

    @staticmethod
    def _answer(writer: asyncio.StreamWriter, status: int, *, close: bool) -> bool:
        reason = {200: "OK", 400: "Bad Request", 413: "Content Too Large", 431: "Request Header Fields Too Large",
                  503: "Service Unavailable"}[status]
        writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Length: 0\r\n"
                     f"{'Connection: close' if close else 'Connection: keep-alive'}\r\n\r\n".encode("ascii"))
        return not close
