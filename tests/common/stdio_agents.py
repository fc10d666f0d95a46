"""Small ACP agents that break down after initialize, for tests/e2e/test_stdio_hostile.py.

    python tests/common/stdio_agents.py init-then-exit   answers initialize, then exits with status 3 (a
                                                  line on stderr) when asked for session/new
    python tests/common/stdio_agents.py init-then-hang [FILE]   answers initialize, then answers nothing more (given
                                                  FILE: until FILE exists, then it exits, status 0, silent)
"""

from __future__ import annotations

import json
import os
import sys
import time


def main(mode: str, release: str | None = None) -> int:
    request = json.loads(sys.stdin.readline())
    answer = {"jsonrpc": "2.0", "id": request["id"],
              "result": {"protocolVersion": request["params"]["protocolVersion"], "agentCapabilities": {}}}
    print(json.dumps(answer), flush=True)
    sys.stdin.readline()  # session/new
    if mode == "init-then-exit":
        print("agent crashed: out of tea", file=sys.stderr, flush=True)
        return 3
    deadline = time.monotonic() + 1000  # the test stops it long before
    while time.monotonic() < deadline and not (release and os.path.exists(release)):
        time.sleep(0.05)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
