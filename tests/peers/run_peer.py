"""Run the suite against a peer test agent (the `peer-a2a-sdk*`, `peer-a2a-js*`, `peer-fasta2a` and
`peer-agent-framework` tox envs).

Starts the agent (default: tests/peers/a2a_sdk_agent.py with this interpreter, which has a2a-sdk
installed), reads the base URL from its first line, runs `streamcert run --url URL` with the
remaining arguments, stops the agent and exits with the suite's exit code.

Three options are this script's own, every other argument goes to `streamcert run`:
`--agent-cmd CMD` is the command that starts another agent taking the same `--port`/`--bindings`/`--push`
options (`node tests/peers/a2a-js/agent.mjs`), `--serve BINDINGS` is passed to the agent as
`--bindings` (default: `jsonrpc`, the agent as it always was; `jsonrpc,http-json,grpc` serves and
declares all three), `--push` is passed to the agent (its card declares push notifications, its SDK's push
sender and config store are on) and the run is given the agent as `--push-agent-url` too (profile `push`),
`--agent-log PATH` is where the agent's stderr goes (default: reports/peer-a2a-sdk-agent.log).
"""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from pathlib import Path

from streamcert.cli import main as streamcert

AGENT = Path(__file__).with_name("a2a_sdk_agent.py")


def main(argv: list[str]) -> int:
    own = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    own.add_argument("--agent-cmd", default=None)
    own.add_argument("--serve", default=None)
    own.add_argument("--push", action="store_true")
    own.add_argument("--agent-log", default=str(Path("reports") / "peer-a2a-sdk-agent.log"))
    args, rest = own.parse_known_args(argv)
    log_path = Path(args.agent_log)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    agent_cmd = shlex.split(args.agent_cmd) if args.agent_cmd else [sys.executable, str(AGENT)]
    command = [*agent_cmd, "--port", "0"]
    if args.serve:
        command += ["--bindings", args.serve]
    if args.push:
        command += ["--push"]
    agent = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log_path.open("w"), text=True)
    try:
        url = agent.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            print(f"run_peer: the agent did not start (first line {url!r})", file=sys.stderr)
            return 2
        push = ["--push-agent-url", url] if args.push else []
        return streamcert(["run", "--url", url, *push, *rest])
    finally:
        agent.terminate()
        agent.wait(10)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
