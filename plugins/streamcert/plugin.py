"""The pytest plugin (entry point `pytest11`): options, the `streamcert` fixture, the report.

Findings ride on each test report's `user_properties`, so under pytest-xdist they reach the
controller, which alone aggregates them and writes `compatibility.json` (DESIGN §1).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from .catalogue import PROFILES, load_catalogue, load_scenario
from .framelog import FrameLog
from .outcomes import Finding, Outcome
from .rules import RuleContext, judge
from .scenarios import Target, run_scenario

FINDINGS_KEY = "streamcert_findings"
ENV_URL = "STREAMCERT_SUT_URL"  # how an embedded reference's URL reaches xdist workers
ENV_NOSTREAM_URL = "STREAMCERT_SUT_NOSTREAM_URL"
NOSTREAM_PATH = "/agents/no-streaming"  # the reference's agent without streaming
PROGRESS_PATH = "/progress"  # the reference's progress stream (POST the script, read SSE)
# The embedded reference's other targets, by environment so that xdist workers see them too.
ENV_TARGETS = {"progress_url": "STREAMCERT_PROGRESS_URL", "line_cmd": "STREAMCERT_LINE_CMD",
               "acp_cmd": "STREAMCERT_ACP_CMD", "client_cmd": "STREAMCERT_CLIENT_CMD"}


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("streamcert", "streamcert conformance suite")
    g.addoption("--sut-url", default=None, help="base URL of the A2A agent under test (card at URL/.well-known/…)")
    g.addoption("--sut-nostream-url", default=None,
                help="base URL of an agent of the same implementation whose card declares streaming: false")
    g.addoption("--sut-fault", default=None, help="embedded reference only: run this fault variant")
    g.addoption("--sut-header", action="append", default=[],
                help="'Name: value' header sent on every request (credentials are scrubbed from all output)")
    g.addoption("--stream-limit", type=float, default=15.0, help="seconds one stream may stay open (default 15)")
    g.addoption("--sut-timeout", type=float, default=10.0, help="seconds to wait for a unary answer (default 10)")
    g.addoption("--streamcert-profile", action="append", default=[], choices=PROFILES,
                help="profile to certify (repeatable); default: every profile that has a target")
    g.addoption("--streamcert-level", default="may", choices=("must", "should", "may"),
                help="lowest requirement level judged (default may: all)")
    g.addoption("--streamcert-report", default=None, help="directory for compatibility.json, report.md, report.html")
    g.addoption("--record", default=None, help="write a cassette of each scenario into this directory")
    g.addoption("--baseline", default=None, help="expected failures (see streamcert.report.aggregate)")
    g.addoption("--acp-cmd", default=None, help="an ACP agent to start as a subprocess")
    g.addoption("--progress-url", default=None, help="a progress stream to judge")
    g.addoption("--client-cmd", default=None, help="a client to certify")
    g.addoption("--line-cmd", default=None, help="a progress-line renderer to certify")
    g.addoption("--progress-pointer", default="/progress",
                help="JSON pointer to the progress object in each progress-stream event (default /progress)")
    g.addoption("--progress-cases", default=None,
                help="another copy of cases/progress.json (e.g. a project's conformance/progress.json)")


# -- configuration and the embedded reference ------------------------------------------------------

def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _runs_suite(config: pytest.Config) -> bool:
    """True when the run names the conformance modules (by --pyargs or by path)."""
    import streamcert.suite

    suite_dir = Path(streamcert.suite.__file__).resolve().parent
    for arg in config.args:
        arg = str(arg)
        if arg.startswith("streamcert.suite"):
            return True
        path = Path(arg.split("::")[0]).resolve()
        if path == suite_dir or suite_dir in path.parents:
            return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "streamcert_profile(name): the profile a conformance test belongs to")
    state = _State(config)
    config.stash[_STATE] = state
    if _is_worker(config) or not _runs_suite(config):
        return
    if not config.getoption("sut_url") and not _other_targets(config):
        from .reference.faults import FAULTS
        from .reference.process import ReferenceProcess

        fault = config.getoption("sut_fault")
        broken = FAULTS[fault].target if fault else None  # which embedded program runs the fault
        proc = ReferenceProcess(fault=fault if broken == "server" else None)
        url = proc.start()
        state.embedded = proc
        os.environ[ENV_URL] = url
        os.environ[ENV_NOSTREAM_URL] = url + NOSTREAM_PATH
        os.environ[ENV_TARGETS["progress_url"]] = url + PROGRESS_PATH
        for option, module in (("line_cmd", "line"), ("acp_cmd", "acp")):
            cmd = f"{shlex.quote(sys.executable)} -m streamcert.reference.{module}"
            os.environ[ENV_TARGETS[option]] = cmd + (f" --fault {fault}" if broken == module else "")
    state.started = _now()


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None and state.embedded is not None:
        state.embedded.stop()
        state.embedded = None


def _other_targets(config: pytest.Config) -> bool:
    return any(config.getoption(o) for o in ("acp_cmd", "progress_url", "client_cmd", "line_cmd"))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _State:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.embedded: Any = None
        self.started = _now()
        self.agg = None
        self.ran_suite = False

    def target(self) -> Target:
        opt = self.config.getoption
        url = opt("sut_url") or os.environ.get(ENV_URL)
        nostream = opt("sut_nostream_url") or (os.environ.get(ENV_NOSTREAM_URL) if not opt("sut_url") else None)
        headers = {}
        for raw in opt("sut_header"):
            name, _, value = raw.partition(":")
            headers[name.strip()] = value.strip()
        embedded = not (opt("sut_url") or _other_targets(self.config))
        others = {o: opt(o) or (os.environ.get(env) if embedded else None) for o, env in ENV_TARGETS.items()}
        return Target(a2a_url=url, nostream_url=nostream, stream_limit=opt("stream_limit"),
                      timeout=opt("sut_timeout"), headers=headers, progress_pointer=opt("progress_pointer"),
                      progress_cases=opt("progress_cases"), **others)

    def selected_profiles(self) -> set[str]:
        chosen = set(self.config.getoption("streamcert_profile"))
        if chosen:
            return chosen
        opt = self.config.getoption
        embedded = not (opt("sut_url") or _other_targets(self.config))
        profiles = set()
        if opt("sut_url") or embedded:
            profiles |= {"a2a", "interactions", "plans"}
        for option, profile in (("acp_cmd", "acp"), ("progress_url", "progress"), ("client_cmd", "client"),
                                ("line_cmd", "line")):
            if opt(option) or embedded:
                profiles.add(profile)
        return profiles

    def target_json(self) -> dict[str, Any]:
        t = self.target()
        return {"a2a": t.a2a_url, "acp": t.acp_cmd, "progress": t.progress_url, "client": t.client_cmd,
                "line": t.line_cmd, "fault": self.config.getoption("sut_fault"),
                "embedded": not (self.config.getoption("sut_url") or _other_targets(self.config))}


_STATE = pytest.StashKey[_State]()


# -- the fixture the conformance modules use -------------------------------------------------------

class Streamcert:
    """What a conformance test asks for: run a scenario, judge its log, record the findings."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self.request = request
        self.state = request.config.stash[_STATE]

    @property
    def target(self) -> Target:
        return self.state.target()

    def check(self, scenario_id: str) -> list[Finding]:
        scenario = load_scenario(scenario_id)
        if scenario.profile not in self.state.selected_profiles():
            pytest.skip(f"profile {scenario.profile} not selected")
        target = self.target
        if not target.has(scenario.profile):
            pytest.skip(f"no target for profile {scenario.profile}")
        try:
            log = run_scenario(scenario_id, target)
        except Exception as exc:  # a harness fault is reported as ERROR, never as a pass
            why = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            findings = [Finding(r, Outcome.ERROR, f"harness fault while driving {scenario_id}: {why}")
                        for r in scenario.requirements]
            return self._finish(findings)
        self._record(log, target)
        return self.judge(log, scenario_id)

    def judge(self, log: FrameLog, scenario_id: str | None = None) -> list[Finding]:
        scenario = load_scenario(scenario_id or log.scenario)
        try:
            findings = judge(log, scenario.requirements, RuleContext(scenario=scenario))
        except Exception as exc:  # noqa: BLE001  (shown as ERROR on every requirement, never a pass)
            why = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            findings = [Finding(r, Outcome.ERROR, f"harness fault while judging {scenario.id}: {why}")
                        for r in scenario.requirements]
        return self._finish(findings)

    def _record(self, log: FrameLog, target: Target) -> None:
        folder = self.request.config.getoption("record")
        if folder:
            log.save(Path(folder) / f"{log.scenario}.json", secrets=target.secrets)

    def _finish(self, findings: list[Finding]) -> list[Finding]:
        secrets = self.target.secrets
        from .framelog import scrub

        payload = [scrub(f.to_json(), secrets) for f in findings]
        self.request.node.user_properties.append((FINDINGS_KEY, json.dumps(payload)))
        failures = [f for f in findings if f.outcome.is_failure]
        if failures:
            lines = [f"{f.req_id} {f.outcome.value}: {f.message}" for f in failures]
            pytest.fail(scrub("\n".join(lines), secrets), pytrace=False)
        if findings and all(f.outcome == Outcome.UNSUPPORTED for f in findings):
            pytest.skip("UNSUPPORTED: " + findings[0].message)
        return findings


@pytest.fixture
def streamcert(request: pytest.FixtureRequest) -> Streamcert:
    return Streamcert(request)


# -- collecting findings and writing the report (controller only) ----------------------------------

def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    props = [v for k, v in getattr(report, "user_properties", []) if k == FINDINGS_KEY]
    if not props or report.when != "call":
        return
    state = _STATE_REF.get("state")
    if state is None:
        return
    from .report.aggregate import Aggregator

    if state.agg is None:
        state.agg = Aggregator()
    for raw in props:
        state.agg.add(report.nodeid, [Finding.from_json(d) for d in json.loads(raw)])
    state.ran_suite = True


# pytest_runtest_logreport has no config argument; keep a reference to the session's state.
_STATE_REF: dict[str, _State] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _STATE_REF["state"] = session.config.stash[_STATE]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = config.stash.get(_STATE, None)
    if state is None or _is_worker(config) or not (state.ran_suite or _runs_suite(config)):
        return
    if not state.ran_suite and not config.getoption("streamcert_report"):
        return
    from .report.aggregate import Aggregator, build_report, load_baseline
    from .report.writers import write_all

    baseline_path = config.getoption("baseline")
    report = build_report(state.agg or Aggregator(), selected_profiles=state.selected_profiles(),
                          level=config.getoption("streamcert_level"), target=state.target_json(),
                          started=state.started, finished=_now(),
                          baseline=load_baseline(baseline_path) if baseline_path else None,
                          catalogue=load_catalogue())
    folder = Path(config.getoption("streamcert_report") or "reports/latest")
    write_all(report, folder)
    state.report = report
    state.report_dir = folder


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    report = getattr(state, "report", None)
    if report is None:
        return
    from .report.summary import terminal_summary

    terminalreporter.section("streamcert")
    for line in terminal_summary(report):
        terminalreporter.write_line(line)
    terminalreporter.write_line(f"report: {state.report_dir}/compatibility.json")


@pytest.fixture
def streamcert_reference():
    """Start the embedded reference server (or one of its fault variants) on 127.0.0.1 for a test,
    the fixture form of `streamcert serve --fault NAME`:

        server = streamcert_reference(fault="status-first")   # server.url, server.agent_url(name)
    """
    from .reference.server import ReferenceServer

    started = []

    def start(fault: str | None = None, **options: Any):
        server = ReferenceServer(fault=fault, **options).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
