"""What a run imports: a run of one profile does not import the drivers, rules and recordings of the others, nor
what only they need (issue 29: a run pays the imports of the profiles it selects). One `streamcert run --profile
a2a --url URL` in a subprocess against a reference agent, its `sys.modules` read at its end."""

from __future__ import annotations

import json
import subprocess
import sys

from streamcert.reference.agent.server import ReferenceServer

# Modules an a2a run has no use for: the other profiles' drivers and rules (and their views), the client and
# progress cases, cassettes (only --record and --against write or read them) and PyYAML and vcrpy under them.
OTHER_PROFILES = (
    *(f"streamcert.drivers.{m}" for m in ("acp", "acp_client", "client", "interactions", "line", "plans",
                                          "progress", "push", "push_deliveries")),
    *(f"streamcert.rules.{m}" for m in ("acp.acp_plans", "acp.acpview", "client.client", "acp_client.client_acp",
                                        "client.clientview", "interactions.interactions", "interactions.ixtruncation",
                                        "line.line", "plans.plans", "plans.planview", "progress.progress",
                                        "progress.progressview", "push.push", "push.push_deliveries")),
    "streamcert.recordings.client_cases", "streamcert.recordings.progress_cases", "streamcert.recordings.replay",
    "streamcert.recordings.cassette", "streamcert.wire.inprocess", "streamcert.wire.push_receiver", "yaml", "vcr",
)
# And what it does use, so that the test would see a run that imported nothing it checks for.
A2A_ONES = ("streamcert.drivers.a2a", "streamcert.rules.a2a.stream", "streamcert.rules.a2a.errors",
            "streamcert.rules.a2a.wire")

PROGRAM = """
import json, sys
from streamcert.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "modules": sorted(sys.modules)}, out)
"""


def test_an_a2a_run_imports_no_other_profiles_modules(tmp_path):
    with ReferenceServer() as server:
        done = subprocess.run([sys.executable, "-c", PROGRAM, str(tmp_path / "modules.json"), "run", "--url",
                               server.url, "--profile", "a2a", "--report", str(tmp_path / "report")],
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    seen = json.loads((tmp_path / "modules.json").read_text())
    report = json.loads((tmp_path / "report" / "compatibility.json").read_text())
    # the run judged its scenarios (INCOMPLETE, exit 1: the card's other bindings are not certified by one URL run)
    assert (seen["code"], report["verdict"]) == (1, "INCOMPLETE"), done.stdout[-3000:]
    assert report["summary"]["MUST"]["PASS"] > 50
    modules = set(seen["modules"])
    assert [m for m in OTHER_PROFILES if m in modules] == []
    assert [m for m in A2A_ONES if m not in modules] == []
