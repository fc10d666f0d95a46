"""Every hostile case of issue 12 through `streamcert run`: it ends within its bound, with the right exit
code, names the cause, and writes no secret and none of the suite's own failures anywhere.

The heavy cases (a 100 000-chunk flood, a 1 GiB gzip bomb, a 64 MiB event, a 200 MiB line) are run by
`bench/hostile.py`, which prints their wall time and peak memory; here each has a smaller twin.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from hostile_cases import ALWAYS_ABSENT, CASES, Outcome, run_case

from streamcert.framelog import FrameLog

WRITTEN_BOUND = 16 * 1024 * 1024  # all a run writes and prints, whatever the server sent (issue 25)
REPORT_BOUND = 4 * 1024 * 1024  # its report's files and what it prints: "a few MiB" (issue 25; cassettes aside)
LIGHT = [case for case in CASES if not case.heavy]


def _decoded(outcome: Outcome, folder: Path) -> str:
    """Everything the run wrote, with the base64 bodies of cassettes decoded (a secret must not hide there)."""
    texts = [outcome.text()]

    def walk(value):
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "b64" and isinstance(item, str):
                    texts.append(base64.b64decode(item).decode("utf-8", "replace"))
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for name, data in outcome.files.items():
        if name.endswith(".json"):
            try:
                walk(json.loads(data))
            except ValueError:
                pass
        elif name.endswith(".yaml"):  # a cassette: its bodies read back (a !!binary one is not text in the file)
            texts += [ex.wire_bytes.decode("utf-8", "replace") for ex in FrameLog.load(folder / name).exchanges]
    return "\n".join(texts)


@pytest.mark.parametrize("case", LIGHT, ids=[re.sub(r"[^A-Za-z0-9]+", "-", case.name).strip("-") for case in LIGHT])
def test_hostile_case(case, tmp_path):
    outcome = run_case(case, tmp_path)
    said = outcome.text()
    assert outcome.exit is not None, f"still running after {case.seconds:g} s:\n{outcome.output[-3000:]}"
    assert outcome.exit in case.exit, f"exit {outcome.exit}, expected {sorted(case.exit)}:\n{outcome.output[-3000:]}"
    if outcome.exit in (0, 1, 3):
        assert outcome.report is not None, f"no compatibility.json:\n{outcome.output[-3000:]}"
    for words in case.named:
        assert words.lower() in said.lower(), f"the cause ({words!r}) is never named:\n{outcome.first_finding()}"
    for words in ALWAYS_ABSENT:
        assert words not in said, f"{words!r} reached the user:\n{said[said.find(words) - 500:][:1500]}"
    messages = "\n".join(f"{r['id']} {r['status']}: {r.get('message', '')}"
                         for r in (outcome.report or {}).get("requirements", []))
    for words in case.absent:  # said of the implementation (the catalogue's own sentences aside)
        assert words not in messages, f"{words!r} was said:\n{messages[messages.find(words) - 300:][:800]}"
    assert outcome.written < WRITTEN_BOUND, f"{outcome.written} bytes written and printed"
    report = len(outcome.output.encode()) + sum(len(data) for name, data in outcome.files.items()
                                                if Path(name).parts[0] == "report")
    assert report < REPORT_BOUND, f"a report of {report} bytes (with what was printed)"
    everything = _decoded(outcome, tmp_path)
    for secret in case.secrets:
        for form in (secret, quote(secret, safe=""), base64.b64encode(secret.encode()).decode()):
            assert form not in everything, f"the secret {secret!r} is written ({form!r})"
    for request in outcome.requests.get("elsewhere", []):
        assert not any(secret in value for secret in case.secrets for value in request.headers.values()), \
            "the credentials were sent to another origin"
