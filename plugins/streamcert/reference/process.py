"""The embedded reference of a run: its server as a child process (`streamcert serve`), so its timing
never competes with the suite's own process for the interpreter, and its stdio programs as commands (which the
embedded run plays in its own process: reference/in_process.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from ..targets import SERVER, embedded_targets
from .agent.auth import SECURED_TOKEN_ENV
from .faults import FAULTS


class ReferenceProcess:
    """`fault` is any fault variant: the server runs it if it breaks the server, else the program it
    breaks does (see `targets`)."""

    def __init__(self, fault: str | None = None, extra_args: tuple[str, ...] = (), start_timeout: float = 20.0,
                 secured_token: str | None = None) -> None:
        """`secured_token`: the bearer token its agent at /agents/secured requires (None: the test token)."""
        self.fault = fault
        self.secured_token = secured_token
        self.broken = FAULTS[fault].target if fault else None  # the embedded program that runs the fault
        self.extra_args = extra_args
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen[str] | None = None
        self.url: str | None = None

    def start(self) -> str:
        cmd = [sys.executable, "-m", "streamcert", "serve", "--port", "0", *self.extra_args]
        if self.broken == SERVER:
            cmd += ["--fault", self.fault]
        env = {**os.environ, SECURED_TOKEN_ENV: self.secured_token} if self.secured_token else None
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line: list[str] = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(self.start_timeout)
        url = line[0].strip() if line else ""
        if not url.startswith("http://127.0.0.1:"):
            err = ""
            self.stop()
            if self.proc is not None and self.proc.stderr is not None:
                err = self.proc.stderr.read()[-2000:]
            raise RuntimeError(f"the embedded reference did not start (first line {url!r}): {err}")
        # Drain its output so a chatty server never blocks on a full pipe.
        for stream in (self.proc.stdout, self.proc.stderr):
            threading.Thread(target=stream.read, daemon=True).start()
        self.url = url
        return url

    def targets(self) -> dict[str, str]:
        """Target field → value for every target the embedded reference provides: its stdio programs, and its
        server's routes once started (a run of profiles its server does not serve never starts it)."""
        return embedded_targets(self.url, self.fault, self.broken)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)

    def __enter__(self) -> "ReferenceProcess":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
