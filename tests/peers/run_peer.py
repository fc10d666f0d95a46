"""Run the suite against the a2a-sdk test agent (the `peer-a2a-sdk` tox env).

Starts tests/peers/a2a_sdk_agent.py with this interpreter (which has a2a-sdk installed), reads the
base URL from its first line, runs `streamcert run --url URL` with the remaining arguments, stops
the agent and exits with the suite's exit code.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from streamcert.cli import main as streamcert

AGENT = Path(__file__).with_name("a2a_sdk_agent.py")


def main(argv: list[str]) -> int:
    log_path = Path("reports") / "peer-a2a-sdk-agent.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    agent = subprocess.Popen([sys.executable, str(AGENT), "--port", "0"], stdout=subprocess.PIPE,
                             stderr=log_path.open("w"), text=True)
    try:
        url = agent.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            print(f"run_peer: the a2a-sdk agent did not start (first line {url!r})", file=sys.stderr)
            return 2
        return streamcert(["run", "--url", url, *argv])
    finally:
        agent.terminate()
        agent.wait(10)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
