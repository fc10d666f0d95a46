"""Running the reference server on 127.0.0.1: in a background thread (`start`) or in the foreground (`serve`)."""

from __future__ import annotations

import contextlib
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from typing import Self, TextIO

import uvicorn

from .agents import AGENTS, AgentSpec
from .app import create_app
from .connections import wrapped

HOST = "127.0.0.1"  # loopback only, always
START_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 120  # seconds an idle keep-alive connection stays open


def _bind(port: int) -> socket.socket:
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on accepted sockets whose proto says TCP; with proto 0
    # every response after the first on a connection waited 40 ms for a delayed ACK (headers and body are
    # two writes).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(128)  # listening before the URL is announced: early clients wait in the backlog
    return sock


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn re-raises SIGINT/SIGTERM after its graceful shutdown, so `serve` would die of the
        # signal; here a signal asks for the same shutdown and `serve` then returns normally.
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _server(app, graceful_s: int = 1) -> uvicorn.Server:
    # Idle keep-alive connections are kept longer than any wait of a scenario (uvicorn's default closes them
    # after 5 s, the stream limit of the fault meta-test: a GetTask sent on a connection idle that long then
    # raced the close and got a ReadError, now and then).
    # loop="asyncio": the gRPC servers (grpc.aio) run on the app's loop, and grpc.aio is built and tested on
    # asyncio's own loop; uvicorn's "auto" would pick uvloop wherever it is installed.
    config = uvicorn.Config(wrapped(app), log_level="warning", access_log=False, lifespan="on", loop="asyncio",
                            timeout_graceful_shutdown=graceful_s, timeout_keep_alive=KEEP_ALIVE_S)
    return _Server(config)


class ReferenceServer:
    """The reference agent on 127.0.0.1, in a background thread (`start`, `stop`) or in the foreground
    (`serve`).

        with ReferenceServer(fault="status-first") as server:
            httpx.get(server.url + "/.well-known/agent-card.json")
    """

    def __init__(self, fault: str | None = None, deterministic: bool = False,
                 keepalive: float | None = None, port: int = 0,
                 agents: tuple[AgentSpec, ...] = AGENTS, d3: str = "close",
                 script_steps: tuple[str, ...] | None = None, ignore_script: bool = False,
                 auth: str | None = None, secured_token: str | None = None) -> None:
        self.app = create_app(fault=fault, deterministic=deterministic, keepalive=keepalive, agents=agents,
                              d3=d3, script_steps=script_steps, ignore_script=ignore_script, auth=auth,
                              secured_token=secured_token)
        self.fault = fault
        self._port = port
        self._sock: socket.socket | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if not self._port:
            raise RuntimeError("the reference server has not been started")
        return self._port

    @property
    def url(self) -> str:
        """The A2A base URL of the default agent: the card is at url + /.well-known/agent-card.json."""
        return f"http://{HOST}:{self.port}"

    def agent_url(self, name: str) -> str:
        """The base URL of a hosted agent by name ("" or "no-streaming", …)."""
        return self.url + (f"/agents/{name}" if name else "")

    def start(self) -> Self:
        self._sock = _bind(self._port)
        self._port = self._sock.getsockname()[1]
        self._server = _server(self.app)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name=f"streamcert-reference-{self._port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the reference server did not start")
            time.sleep(0.005)
        return self

    def serve(self, out: TextIO | None = None) -> None:
        """Serve in the foreground until SIGINT/SIGTERM (`streamcert serve`). The first line printed is
        the A2A base URL."""
        self._sock = _bind(self._port)
        self._port = self._sock.getsockname()[1]
        print(self.url, file=out or sys.stdout, flush=True)
        try:
            _server(self.app).run(sockets=[self._sock])  # SIGINT and SIGTERM end it (see _Server)
        finally:
            self._sock.close()
            self._sock = None

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=START_TIMEOUT_S)
        if self._sock is not None:
            self._sock.close()
        self._server = self._thread = self._sock = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
