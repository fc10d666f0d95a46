"""The pytest plugin (entry point `pytest11`): the run options, the `streamcert` fixture, the report.

At configure time the plugin registers one `StreamcertRun` object, which holds the run's state (the
target, the embedded reference it started, the findings) and implements the hooks that use it.
Findings ride on each test report's `user_properties`, so under pytest-xdist they reach the
controller, which alone aggregates them and writes `compatibility.json` (DESIGN §1).
"""

from __future__ import annotations

import json
import traceback
from pathlib import Path
from typing import Any

import pytest

from . import run_options
from .catalogue import PROFILES, load_catalogue, load_scenario
from .framelog import FrameLog
from .outcomes import Finding, Outcome
from .rules import RuleContext, judge
from .scenarios import run_scenario
from .targets import Target, names_a_target, served_profiles
from .wallclock import now

FINDINGS_KEY = "streamcert_findings"
RUN_PLUGIN = "streamcert-run"  # the name the StreamcertRun object is registered under
EMBEDDED_KEY = "streamcert_embedded"  # workerinput: the targets of the controller's embedded reference


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("streamcert", "streamcert conformance suite")
    for opt in run_options.RUN_OPTIONS:
        opt.add_to(group.addoption, opt.pytest)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "streamcert_profile(name): the profile a conformance test belongs to")
    config.pluginmanager.register(StreamcertRun(config), RUN_PLUGIN)


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


class StreamcertRun:
    """One pytest run: its options and target, the embedded reference it started, the findings and
    the report. With no target given, the controller starts the embedded reference and hands its
    targets to the xdist workers through `workerinput`."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.options = run_options.from_pytest(config)
        self.is_worker = hasattr(config, "workerinput")
        self.embedded: Any = None  # the ReferenceProcess this run started
        self.embedded_targets: dict[str, str] = {}
        if self.is_worker:
            self.embedded_targets = dict(config.workerinput.get(EMBEDDED_KEY, {}))
        elif self.is_embedded and _runs_suite(config):
            self._start_embedded()
        given = {name: value for name, value in self.options.items() if value is not None and value != ""}
        self.target: Target = run_options.target_of({**self.embedded_targets, **given})
        self.started = now()
        self.aggregator: Any = None
        self.ran_suite = False
        self.report: dict[str, Any] | None = None
        self.report_dir: Path | None = None

    @property
    def is_embedded(self) -> bool:
        """No target given: the embedded reference serves every profile."""
        return not names_a_target(self.options)

    def _start_embedded(self) -> None:
        from .reference.process import ReferenceProcess

        self.embedded = ReferenceProcess(fault=self.options["fault"])
        self.embedded.start()
        self.embedded_targets = self.embedded.targets()

    def selected_profiles(self) -> set[str]:
        chosen = set(self.options["profiles"])
        if chosen:
            return chosen
        return set(PROFILES) if self.is_embedded else served_profiles(self.options)

    def target_json(self) -> dict[str, Any]:
        return {**self.target.report_json(), "fault": self.options["fault"], "embedded": self.is_embedded}

    # -- hooks ---------------------------------------------------------------------------------------

    @pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: without xdist it is never called
    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput[EMBEDDED_KEY] = self.embedded_targets

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        props = [v for k, v in getattr(report, "user_properties", []) if k == FINDINGS_KEY]
        if not props or report.when != "call" or self.is_worker:
            return
        from .report.aggregate import Aggregator

        if self.aggregator is None:
            self.aggregator = Aggregator()
        for raw in props:
            self.aggregator.add(report.nodeid, [Finding.from_json(d) for d in json.loads(raw)])
        self.ran_suite = True

    def pytest_sessionfinish(self) -> None:
        if self.is_worker or not (self.ran_suite or _runs_suite(self.config)):
            return
        if not self.ran_suite and not self.options["report"]:
            return
        from .report.aggregate import Aggregator, build_report, load_baseline
        from .report.writers import write_all

        baseline = self.options["baseline"]
        self.report = build_report(self.aggregator or Aggregator(), selected_profiles=self.selected_profiles(),
                                   level=self.options["level"], target=self.target_json(),
                                   started=self.started, finished=now(),
                                   baseline=load_baseline(baseline) if baseline else None,
                                   catalogue=load_catalogue())
        self.report_dir = Path(self.options["report"] or run_options.DEFAULT_REPORT)
        write_all(self.report, self.report_dir)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is None:
            return
        from .report.summary import terminal_summary

        terminalreporter.section("streamcert")
        for line in terminal_summary(self.report):
            terminalreporter.write_line(line)
        terminalreporter.write_line(f"report: {self.report_dir}/compatibility.json")

    def pytest_unconfigure(self) -> None:
        if self.embedded is not None:
            self.embedded.stop()
            self.embedded = None


# -- the fixture the conformance modules use -------------------------------------------------------

class Streamcert:
    """What a conformance test asks for: run a scenario, judge its log, record the findings."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self.request = request
        self.run: StreamcertRun = request.config.pluginmanager.get_plugin(RUN_PLUGIN)

    @property
    def target(self) -> Target:
        return self.run.target

    def check(self, scenario_id: str) -> list[Finding]:
        scenario = load_scenario(scenario_id)
        if scenario.profile not in self.run.selected_profiles():
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
        folder = self.run.options["record"]
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
