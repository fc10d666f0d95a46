"""Checks of your own on top of the suite's captures (docs/plugin.md).

Run it as `pytest examples/test_own_checks.py --streamcert-report reports/own`. A fixture starts the agent
(here `streamcert serve`, standing in for your own service), `streamcert_target` hands it to the plugin, and:
- `test_the_suite_certifies_it` drives and judges one conformance scenario (its findings go into the report);
- `test_artifact_chunks_are_small` checks a rule of your own on the frame log of the same scenario, which the
  plugin drove once and shares (`streamcert_capture`), so the agent is not driven a second time.
"""

import json
import subprocess
import sys

import pytest


@pytest.fixture(scope="session")
def my_agent():
    """Your service, started for the session: its first line of output is its URL."""
    proc = subprocess.Popen([sys.executable, "-m", "streamcert", "serve"], stdout=subprocess.PIPE, text=True)
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="session")
def streamcert_target(my_agent):
    """What the plugin certifies: the agent your fixture started (a URL, or a mapping of run options)."""
    return my_agent


def test_the_suite_certifies_it(streamcert):
    streamcert.check("stream-basic")


def test_artifact_chunks_are_small(streamcert_capture):
    log = streamcert_capture("stream-basic")
    stream = log.streams()[0]
    chunks = [result["artifactUpdate"]["artifact"] for _, result in stream.results() if "artifactUpdate" in result]
    assert chunks, "the scenario streams an artifact"
    for artifact in chunks:
        assert len(json.dumps(artifact["parts"])) < 1024, artifact["artifactId"]
