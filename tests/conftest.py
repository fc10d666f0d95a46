"""What every test module shares: the builders of `tests/common/` on the import path, and the `e2e` marker
(tests/README.md).

A test is end to end when it lives in `tests/e2e/`: its module starts what a run starts (the embedded reference,
`streamcert` in a subprocess, a hostile server, a browser) rather than judging hand-made logs (`tests/unit/`).
`pytest -m "not e2e" tests` runs the unit half alone; the README's test command runs both."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import httpcore  # noqa: F401  (see below)
import joserfc.jwk  # noqa: F401  (see below)
import joserfc.jws  # noqa: F401
import pytest

HERE = Path(__file__).resolve().parent
E2E = HERE / "e2e"
# The shared builders (logs.py, client_logs.py, report_cases.py, hostile.py, stdio_agents.py) are imported by name
# from both halves: `from logs import frame`.
sys.path.insert(0, str(HERE / "common"))

# pytester's in-process runs unload every module first imported inside them. Imported again later, cryptography's
# Python modules no longer match its native part ("Unsupported elliptic curve signature algorithm" when the reference
# signed its card in the test after an option test had loaded the card keys first): the JOSE modules are loaded here,
# before any such run. So is httpcore, which httpx imports lazily, at its first client: first imported inside such a
# run, it came back afterwards as a second copy whose exceptions httpx's map (built with the first) no longer knew,
# and a refused connection or a dropped request escaped the capture as a raw httpcore error (twelve end-to-end tests
# of a worker failed so on 2026-12-02).

# Ctrl-C as a terminal gives it. A shell without job control starts a background command (`pytest … &`, nohup) with
# SIGINT ignored, and Python then installs no handler of its own, in this process nor in any it starts: the tests
# that prove what a run does on Ctrl-C (test_interrupt, test_first_hour, test_lifecycle) would find it ignored.
# A caught signal is set back to the default in a program exec'd from here, so the processes they start get it too.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    # registered here too: `streamcert run` in this folder loads this file under its own options, not pyproject's
    config.addinivalue_line("markers", "e2e: starts what a run starts (tests/e2e/, tests/conftest.py)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if E2E in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.e2e)
