"""The pytest plugin (entry point `pytest11`): the run options, the `streamcert` fixture, the report.

At configure time the plugin registers one `StreamcertRun` object, which holds the run's state (the
target, the embedded reference it started, the findings) and implements the hooks that use it.
Findings ride on each test report's `user_properties`, so under pytest-xdist they reach the
controller, which alone aggregates them and writes `compatibility.json` (docs/architecture.md §1).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import pytest

from . import limits, run_options
from .catalogue import BOUND_PROFILES, load_catalogue, load_scenario
from .contract.capture import LIMIT
from .contract.run import BINDING
from .drivers import plays_at_once, run_scenarios
from .framelog import FrameLog
from .outcomes import Finding, Outcome
from .rules import RuleContext, judge
from .running import live, selection
from .running.report_keys import FINDINGS_KEY, REGRESSIONS_KEY, XDIST_CRASH
from .scrub import Scrubber
from .suite_map import profiles_of, runs_suite, scenarios_of_item, scenarios_of_test
from .targets import REFERENCE_CARD_KEY, Target, embedded_headers, names_a_target, needs_server
from .wallclock import now
from .wire import unanswered

BINDINGS_KEY = "streamcert_bindings"  # user_properties: the bindings the process that ran the test certifies
IMPLEMENTATION_KEY = "streamcert_implementation"  # user_properties: the card's name and version, where it was read
TARGET_KEY = "streamcert_target"  # user_properties: the target a user's streamcert_target fixture gave (report form)
RUN_PLUGIN = "streamcert-run"  # the name the StreamcertRun object is registered under
EMBEDDED_KEY = "streamcert_embedded"  # workerinput: the targets of the controller's embedded reference
STARTED_KEY = "streamcert_started"  # workerinput: when the controller's run began (time.time(), for --run-limit)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("streamcert", "streamcert conformance suite")
    for opt in run_options.RUN_OPTIONS:
        opt.add_to(group.addoption, opt.pytest)
        if opt.alias:  # the old name still works, kept apart so that its use is told (StreamcertRun)
            opt.add_to(group.addoption, opt.alias, dest=opt.alias_dest, help=argparse.SUPPRESS)
        # The same option as an ini key (and an environment variable): run_options.resolve reads them.
        parser.addini(opt.ini, f"{opt.pytest} (environment: {opt.env}): {opt.help}",
                      type="linelist" if opt.repeat else "string")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "streamcert_profile(name): set by streamcert on each conformance test, the "
                            "profile of its scenarios (-m streamcert_profile: the conformance tests of a mixed run)")
    run = StreamcertRun(config)
    config.pluginmanager.register(run, RUN_PLUGIN)
    config.pluginmanager.register(run.selection, selection.PLUGIN)
    config.pluginmanager.register(live.LiveProgress(config), live.PLUGIN)  # progress lines (running/live.py)


class StreamcertRun:
    """One pytest run: its options and target, the embedded reference it started, the findings and
    the report. With no target given, the controller starts the embedded reference and hands its
    targets to the xdist workers through `workerinput`."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        unanswered.forget()  # what an earlier run in this process learnt of its targets' silences
        try:  # command line, else environment, else ini file, else default
            self.options = run_options.from_pytest(config)
        except run_options.OptionError as exc:
            raise pytest.UsageError(str(exc)) from None
        self.is_worker = hasattr(config, "workerinput")
        if not self.is_worker and (used := run_options.aliases_used(config)):  # once: never again in a worker
            sys.stderr.write(run_options.deprecation_note(used) + "\n")
        if not self.is_worker and runs_suite(config):
            flags = {opt.name: opt.pytest for opt in run_options.RUN_OPTIONS}
            refused = run_options.refuse_replacing(self.options) or selection.refuse(self.options, flags)
            if refused:  # before anything starts
                raise pytest.UsageError(refused)
        self.selection = selection.Selection(config, self.options)
        self.embedded: Any = None  # the ReferenceProcess this run started
        self.embedded_targets: dict[str, str] = {}
        if self.is_worker:
            self.embedded_targets = dict(config.workerinput.get(EMBEDDED_KEY, {}))
        self._given = {name: value for name, value in self.options.items() if value is not None and value != ""}
        self._target: Target | None = None  # the embedded reference's is known once it has started
        # The embedded reference's URLs carry no secret: the given options alone make the scrubber, and the test token
        # the embedded run sends its secured agent (REFERENCE_HEADERS) is scrubbed as a credential would be.
        given = run_options.target_of(self._given)
        self.scrubber = Scrubber.of(dataclasses.replace(given, headers=embedded_headers(given.headers)[0])
                                    if self.is_embedded else given)
        self.started = now()
        # One clock for --run-limit across the xdist workers: the controller's start.
        self.started_at = float(config.workerinput.get(STARTED_KEY, time.time())) if self.is_worker else time.time()
        self.aggregator: Any = None
        self.ran_suite = False
        self.report: dict[str, Any] | None = None
        self.report_dir: Path | None = None
        self.write_error: str | None = None
        self.collected: set[str] = set()  # test ids the xdist workers collected (controller only)
        self.reported: set[str] = set()  # test ids with at least one report
        self.crashes: list[str] = []  # what pytest-xdist said of each worker that died
        self.compared: list[dict[str, Any]] = []  # --against: each scenario's comparison (controller only)
        self.silent: dict[str, str] = {}  # profile → why its subprocess target is not driven again (this process)
        self.captures: dict[tuple[str, str | None], FrameLog] = {}  # (scenario, binding) → its log (this process)
        self.adopted: dict[str, Any] | None = None  # what a streamcert_target override gave (report form)
        self.implementation: dict[str, str] | None = None  # the A2A card's name and version (drivers/binding_choice.py)
        self._log_factory = _scrub_log_records(self.scrubber)

    def unreachable(self) -> str | None:
        """Why the given target cannot be driven at all (nothing answered the bounded check of
        running/preflight.py), checked once per process; None when it answered, or for the embedded reference.
        `streamcert run` has made the same check before pytest started; this one serves a plain
        `pytest --pyargs streamcert.suite --sut-url …`, so that its scenarios are not each driven into
        the same silence."""
        if not hasattr(self, "_unreachable"):
            from .running.preflight import check_targets

            self._unreachable = None if self.is_embedded else check_targets(
                self.target, wait=self.options.get("wait_for_target") or 0.0, scrubber=self.scrubber).fatal
        return self._unreachable

    @property
    def is_embedded(self) -> bool:
        """No target given: the embedded reference serves every profile."""
        return not names_a_target(self.options)

    @property
    def target(self) -> Target:
        """Where the scenarios go. With no target given, the controller starts the embedded reference here,
        at the first use: before the first test (pytest_runtestloop), or as pytest-xdist sets up its workers
        (pytest_configure_node), never under --collect-only."""
        if self._target is None:
            if self._starts_embedded():
                self._start_embedded()
            self._target = run_options.target_of({**self.embedded_targets, **self._given})
            if self.is_embedded:  # its gRPC servers listen on ports of their own: its interfaces are its own
                # and it signs its card with the test key whose public part the run trusts (unless given others);
                # its secured agent requires the test token, which the run sends (or the bearer credential --header gives)
                self._target = dataclasses.replace(self._target, own_interfaces=True,
                                                   card_keys=self._target.card_keys or (REFERENCE_CARD_KEY,),
                                                   headers=embedded_headers(self._target.headers)[0])
                # its stdio programs (clients, ACP agent, line renderer) are played here, not started per case
                from .reference.in_process import programs

                self._target.in_process = programs(self._target, self.selected_profiles())
        return self._target

    def _starts_embedded(self) -> bool:
        return (self.is_embedded and not self.is_worker and self.embedded is None and runs_suite(self.config)
                and not self.config.option.collectonly and not getattr(self, "target_overridden", False))

    def adopt(self, given: Any) -> None:
        """Certify the target a user's `streamcert_target` fixture gave (own_checks.adopted_values): its options
        replace the run's targets, and what was derived from them (the card's bindings, the reachability check,
        the scrubber) is made again. Once per process: the fixture is session-scoped."""
        from .running.own_checks import adopted_values
        from .targets import SLOTS

        if given is self._target or given is getattr(self, "_adopted_from", None):
            return
        self._adopted_from = given
        values = adopted_values(given)
        cleared = {slot.field: None for slot in SLOTS}  # the fixture's target replaces every given one
        self.options.update({**cleared, **values})
        self._given = {name: value for name, value in self.options.items() if value is not None and value != ""}
        self.scrubber = Scrubber.of(run_options.target_of(self._given))
        self._target = None
        self.implementation = None
        for derived in ("_bindings", "_unreachable"):
            self.__dict__.pop(derived, None)
        self.adopted = self.target_json()

    def _start_embedded(self) -> None:
        from .reference.process import ReferenceProcess

        given = run_options.target_of(self._given).headers
        self.embedded = ReferenceProcess(fault=self.options["fault"], secured_token=embedded_headers(given)[1])
        if needs_server(self.selected_profiles()):  # acp, client, line, acp-client: its stdio programs alone
            self.embedded.start()
        self.embedded_targets = self.embedded.targets()

    def bindings(self) -> Any:
        """The A2A bindings this run certifies (drivers/binding_choice.py), chosen once per process; None when no A2A
        profile is selected or there is no A2A target."""
        if not hasattr(self, "_bindings"):
            from .drivers.binding_choice import choose, implementation_of, read_card

            self._bindings = None
            target = self.target
            if target.a2a_url and set(BOUND_PROFILES) & self.selected_profiles():
                card = read_card(target) if not self.unreachable() else None
                self._bindings = choose(self.options.get("bindings"), card, embedded=self.is_embedded)
                self.implementation = implementation_of(card)
        return self._bindings

    def selected_profiles(self) -> set[str]:
        return profiles_of(self.options)

    def target_json(self) -> dict[str, Any]:
        if self.adopted is not None:
            return self.adopted
        shown = self._target or run_options.target_of(self._given)  # (an embedded reference never started: none)
        return target_json(shown, self.scrubber, fault=self.options["fault"], embedded=self.is_embedded)

    # -- hooks ---------------------------------------------------------------------------------------

    @pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: without xdist it is never called
    def pytest_configure_node(self, node: Any) -> None:
        self.target  # noqa: B018  (starts the embedded reference, if any, for the workers to drive)
        node.workerinput[EMBEDDED_KEY] = self.embedded_targets
        node.workerinput[STARTED_KEY] = self.started_at

    @pytest.hookimpl(optionalhook=True)  # pytest-xdist: the ids a worker collected
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.collected.update(ids)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> None:
        """Start the embedded reference once collection is over and a conformance test is to run (not under
        --collect-only, nor when every test was deselected); under pytest-xdist it has started already."""
        self.target_overridden = any(_overrides_target(i) for i in session.items)  # (it starts the target itself)
        if not session.config.option.collectonly and any(scenarios_of_item(i) for i in session.items):
            try:
                self.target  # noqa: B018
            except RuntimeError as exc:  # ReferenceProcess.start: the child never printed its URL
                pytest.exit(f"streamcert: {exc}", returncode=pytest.ExitCode.INTERNAL_ERROR)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: Any):
        """Scrub what a test report carries before anything shows or stores it: the terminal (failure
        text, -vv diffs, tracebacks), junit.xml and the xdist controller all read these fields."""
        outcome = yield
        self.scrub_report(outcome.get_result())

    def scrub_report(self, report: pytest.TestReport) -> None:
        text = self.scrubber.text
        longrepr = report.longrepr
        if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (path, line, message)
            report.longrepr = (longrepr[0], longrepr[1], text(str(longrepr[2])))
        elif isinstance(longrepr, str):
            report.longrepr = text(longrepr)
        elif longrepr is not None:
            shown = str(longrepr)
            if text(shown) != shown:
                try:  # in place, so pytest keeps its structured form (the crash line, colours, styles)
                    _scrub_repr(longrepr, text)
                except Exception:  # noqa: BLE001  (an unknown repr: shown as the scrubbed text instead)
                    report.longrepr = text(shown)
                if text(str(report.longrepr)) != str(report.longrepr):
                    report.longrepr = text(str(report.longrepr))
        report.sections = [(title, text(content)) for title, content in report.sections]
        report.user_properties = [(name, self.scrubber.value(value)) for name, value in report.user_properties]

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.running = nodeid  # where a Ctrl-C finds the run (the report says so)

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        self.running, self.finished_last = None, nodeid

    def pytest_keyboard_interrupt(self) -> None:
        self.interrupted = True

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        self.reported.add(report.nodeid)
        adopted = [v for k, v in getattr(report, "user_properties", []) if k == TARGET_KEY]
        if adopted and self.adopted is None:  # a worker's streamcert_target override: the report names it
            self.adopted = json.loads(adopted[0])
        named = [v for k, v in getattr(report, "user_properties", []) if k == IMPLEMENTATION_KEY]
        if named and self.implementation is None:  # read where the tests ran
            self.implementation = json.loads(named[0])
        chosen = [v for k, v in getattr(report, "user_properties", []) if k == BINDINGS_KEY]
        if chosen and not hasattr(self, "_bindings"):  # chosen where the tests ran: the controller reads no card
            from .drivers.binding_choice import BindingChoice

            self._bindings = BindingChoice(**json.loads(chosen[0]))
        props = [v for k, v in getattr(report, "user_properties", []) if k == FINDINGS_KEY]
        if report.when == "call":
            self.compared += [json.loads(v) for k, v in getattr(report, "user_properties", []) if k == REGRESSIONS_KEY]
        if props and report.when == "call":
            for raw in props:
                self._add(report.nodeid, [Finding.from_json(d) for d in json.loads(raw)])
            self.ran_suite = True
        elif report.failed and not props:
            self._harness_fault(report)

    def _add(self, nodeid: str, findings: list[Finding]) -> None:
        from .report.aggregate import Aggregator

        if self.aggregator is None:
            self.aggregator = Aggregator()
        self.aggregator.add(nodeid, findings)

    def _harness_fault(self, report: pytest.TestReport) -> None:
        """A conformance test that failed without findings: its worker died (pytest-xdist), or a fault
        outside the scenario (a fixture). Its scenarios' requirements are ERROR, never left to a pass."""
        scenarios = scenarios_of_test(report.nodeid)
        if not scenarios:
            return
        if report.when == XDIST_CRASH:
            why = self.scrubber.text(str(report.longrepr).strip().splitlines()[0])
            self.crashes.append(why)
        else:
            crash = getattr(report.longrepr, "reprcrash", None)
            line = crash.message if crash is not None else str(report.longrepr).strip()
            why = f"harness fault in {report.when} of the test: " + self.scrubber.text(line.splitlines()[0] if line else "")
        self._add(report.nodeid, [Finding(req, Outcome.ERROR, why) for sid in scenarios
                                  for req in load_scenario(sid).requirements])
        self.ran_suite = True

    def _never_reported(self) -> None:
        """After a worker crash, the tests that never reported (xdist gave up on them) are ERROR too."""
        if not self.crashes:
            return
        for nodeid in sorted(self.collected - self.reported):
            why = f"not run: {nodeid} never reported after {self.crashes[0]}"
            self._add(nodeid, [Finding(req, Outcome.ERROR, why) for sid in scenarios_of_test(nodeid)
                               for req in load_scenario(sid).requirements])

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.write_report()
        if self.report is not None and self.ran_suite and session.exitstatus in (0, pytest.ExitCode.TESTS_FAILED):
            # a run that did not certify does not exit 0 (running/exit_codes.py: the same codes as `streamcert run`)
            from .running.exit_codes import EXIT_PASS, of_report

            code = of_report(self.report, could_not_run=bool(getattr(self, "_unreachable", None)))
            session.exitstatus = session.exitstatus if code == EXIT_PASS else code

    def write_report(self) -> None:
        if self.is_worker or not (self.ran_suite or runs_suite(self.config)):
            return
        if not self.ran_suite and not self.options["report"]:
            return
        from .report.aggregate import Aggregator, build_report, load_baseline, regressions_section
        from .report.writers import write_all

        self._never_reported()
        baseline = self.options["baseline"]
        choice = getattr(self, "_bindings", None)  # chosen by the tests that ran over A2A (None: none did)
        report = build_report(self.aggregator or Aggregator(), selected_profiles=self.selected_profiles(),
                              bindings=choice.to_json() if choice is not None else None,
                              level=self.options["level"], target=self.target_json(),
                              started=self.started, finished=now(),
                              baseline=load_baseline(baseline) if baseline else None,
                              catalogue=load_catalogue(),
                              selection=self.selection.for_report(self.selected_profiles(), runs_suite(self.config),
                                                                  self.collected),
                              regressions=regressions_section(self.options["against"], self.options["timing_tolerance"],
                                                              self.compared) if self.options["against"] else None)
        if self.implementation is not None:  # an extension (docs/contract-extensions.md): the card's own words
            report["implementation"] = self.implementation
        if getattr(self, "interrupted", False):  # Ctrl-C: what ran is judged, the rest NOT_TESTED; say where it stopped
            running, last = getattr(self, "running", None), getattr(self, "finished_last", None)
            where = f"during {running}" if running else f"after {last}" if last else "before the first test"
            report["interrupted"] = (f"the run was interrupted (Ctrl-C) {where}, {len(self.reported)} test(s) "
                                     "having reported; the tests not run leave their requirements NOT_TESTED")
        self.report = self.scrubber.value(report)
        self.report_dir = Path(self.options["report"] or run_options.DEFAULT_REPORT)
        try:
            write_all(self.report, self.report_dir)
        except OSError as exc:  # checked before the run; the disk can still fill up or go away
            self.write_error = self.scrubber.text(f"cannot write the report into {self.report_dir}: {exc}")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.report is None:
            return
        from .report.summary import terminal_summary

        terminalreporter.section("streamcert")
        for line in terminal_summary(self.report):
            terminalreporter.write_line(self.scrubber.text(line))
        if self.write_error:
            terminalreporter.write_line(f"streamcert: {self.write_error}", red=True)
        else:
            terminalreporter.write_line(f"report: {self.report_dir}/compatibility.json")

    def pytest_unconfigure(self) -> None:
        if self.embedded is not None:
            self.embedded.stop()
            self.embedded = None
        if logging.getLogRecordFactory() is self._log_factory:
            logging.setLogRecordFactory(self._log_factory.inner)
        if not self.is_worker:
            self.scrub_junit()

    def scrub_junit(self) -> None:
        """pytest's junitxml plugin wrote junit.xml from the scrubbed reports; make sure of it, and
        scrub the file if anything (a hook of another plugin, a property) still carries a secret."""
        path = getattr(self.config.option, "xmlpath", None)
        if not path or not Path(path).is_file():
            return
        from .report.writers import write_atomic

        text = Path(path).read_text("utf-8", errors="surrogateescape")
        clean = self.scrubber.text(text)
        if clean != text:
            write_atomic(Path(path), clean.encode("utf-8", errors="surrogateescape"))


def target_json(target: Target, scrubber: Scrubber, *, fault: str | None, embedded: bool) -> dict[str, Any]:
    """The report's `target` block: each target as given, its URLs' credentials masked."""
    shown = {name: scrubber.url(value) if isinstance(value, str) else value
             for name, value in target.report_json().items()}
    return {**shown, "fault": fault, "embedded": embedded}


def _scrub_repr(obj: Any, text: Any, seen: set[int] | None = None) -> Any:
    """Scrub every string inside one of pytest's failure representations (ExceptionChainRepr and the
    entries, locals, file locations it holds), in place."""
    seen = set() if seen is None else seen
    if isinstance(obj, str):
        return text(obj)
    if isinstance(obj, list):
        return [_scrub_repr(item, text, seen) for item in obj]
    if isinstance(obj, tuple):
        return tuple(_scrub_repr(item, text, seen) for item in obj)
    if hasattr(obj, "__dict__") and type(obj).__module__.startswith("_pytest") and id(obj) not in seen:
        seen.add(id(obj))
        for name, value in list(vars(obj).items()):
            object.__setattr__(obj, name, _scrub_repr(value, text, seen))
    return obj


class _ScrubbingRecordFactory:
    """Log records with the run's secrets scrubbed from their text (httpx logs every URL it requests,
    query string included), whoever shows them: live logs, captured logs, junit.xml."""

    def __init__(self, scrubber: Scrubber, inner: Any) -> None:
        self.scrubber = scrubber
        self.inner = inner

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.inner(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001  (a malformed record is logging's to report, not ours)
            return record
        clean = self.scrubber.text(message)
        if clean != message:
            record.msg, record.args = clean, ()
        return record


def _scrub_log_records(scrubber: Scrubber) -> _ScrubbingRecordFactory:
    factory = _ScrubbingRecordFactory(scrubber, logging.getLogRecordFactory())
    logging.setLogRecordFactory(factory)
    return factory


# -- the fixture the conformance modules use -------------------------------------------------------

class Streamcert:
    """What a conformance test asks for: run a scenario, judge its log, record the findings."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self.request = request
        self.run: StreamcertRun = request.config.pluginmanager.get_plugin(RUN_PLUGIN)
        if self.run.adopted is not None:  # the report's target, carried to the xdist controller
            request.node.user_properties.append((TARGET_KEY, json.dumps(self.run.adopted)))
        self.regressed: dict[str, Any] | None = None  # --against: this test's differences, if any

    @property
    def target(self) -> Target:
        return self.run.target

    def check(self, scenario_id: str) -> list[Finding]:
        """Play the scenario and judge it: once per A2A binding the run certifies for the A2A profiles (each
        finding says its binding), once for the others."""
        scenario = load_scenario(scenario_id)
        if scenario.profile not in self.run.selected_profiles():
            pytest.skip(f"profile {scenario.profile} not selected")
        target = self.target
        if not target.has(scenario.profile):
            pytest.skip(f"no target for profile {scenario.profile}")
        bound = scenario.profile in BOUND_PROFILES and not self._past_run_limit() and not self.run.unreachable()
        choice = self.run.bindings() if bound else None  # (past the run limit, the card is not read either)
        if choice is None:
            return self._finish(self._play(scenario, target))
        self.request.node.user_properties.append((BINDINGS_KEY, json.dumps(choice.to_json())))
        if self.run.implementation is not None:
            self.request.node.user_properties.append((IMPLEMENTATION_KEY, json.dumps(self.run.implementation)))
        if not choice.certified:
            pytest.skip("no A2A binding certified: " + "; ".join(f"{b}: {why}" for b, why in choice.skipped.items()))
        findings: list[Finding] = []
        catalogue = load_catalogue()
        # the plays over the bindings at once (drivers.run_scenarios: the scenario costs its longest play), unless
        # the run asks for them in turn or they would share its pinned webhook receiver
        targets = [dataclasses.replace(target, binding=binding) for binding in choice.certified]
        if self.run.options.get("bindings_in_turn") or not plays_at_once(scenario, target):
            judged = [self._play(scenario, t) for t in targets]
        else:
            judged = self._play_each(scenario, targets)
        for binding, found in zip(choice.certified, judged):
            for finding in found:
                if finding.req_id not in catalogue or catalogue[finding.req_id].applies_to(binding):
                    finding.binding = binding
                    findings.append(finding)
        return self._finish(findings)

    def _play(self, scenario: Any, target: Target) -> list[Finding]:
        return self._play_each(scenario, [target])[0]

    def _play_each(self, scenario: Any, targets: list[Target]) -> list[list[Finding]]:
        """Play the scenario once per target, at once, and judge each play: its findings, in the targets' order."""
        scenario_id = scenario.id
        past = self._past_run_limit() or self.run.unreachable() or self.run.silent.get(scenario.profile)
        if past:
            return [[Finding(r, Outcome.ERROR, f"{scenario_id} not driven: {past}") for r in scenario.requirements]
                    for _ in targets]
        try:
            played = run_scenarios(scenario_id, targets)
        except Exception as exc:  # noqa: BLE001  (a harness fault is reported as ERROR, never as a pass)
            played = [exc] * len(targets)
        return [self._judge_play(scenario, log, target) for log, target in zip(played, targets)]

    def _judge_play(self, scenario: Any, log: FrameLog | Exception, target: Target) -> list[Finding]:
        scenario_id = scenario.id
        if isinstance(log, Exception):  # a harness fault is reported as ERROR, never as a pass
            why = "".join(traceback.format_exception_only(type(log), log)).strip()
            return [Finding(r, Outcome.ERROR, f"harness fault while driving {scenario_id}: {why}")
                    for r in scenario.requirements]
        self._note_silence(scenario.profile, log)
        self.run.captures[(scenario_id, log.notes.get(BINDING))] = log  # for streamcert_capture (running/own_checks.py)
        self._record(log, target)
        self._compare(log)
        return self._judged(log, scenario_id)

    def judge(self, log: FrameLog, scenario_id: str | None = None) -> list[Finding]:
        return self._finish(self._judged(log, scenario_id))

    def _judged(self, log: FrameLog, scenario_id: str | None = None) -> list[Finding]:
        scenario = load_scenario(scenario_id or log.scenario)
        try:
            findings = judge(log, scenario.requirements, RuleContext(scenario=scenario))
        except Exception as exc:  # noqa: BLE001  (shown as ERROR on every requirement, never a pass)
            why = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            findings = [Finding(r, Outcome.ERROR, f"harness fault while judging {scenario.id}: {why}")
                        for r in scenario.requirements]
        return findings

    def _note_silence(self, profile: str, log: FrameLog) -> None:
        """A subprocess target that wrote nothing before its start-up limit cut it will not answer the next
        scenario either: the profile's other scenarios are not driven (each would wait --start-limit again)."""
        for ex in log.exchanges:
            stop = ex.notes.get(LIMIT) if ex.method == "STDIO" else None
            if isinstance(stop, dict) and stop.get("cap") == limits.START.field and not ex.events:
                from .wire.stdio import how_it_ended

                self.run.silent[profile] = (f"in {log.scenario}, the program ({ex.url}) wrote nothing and "
                                            f"{how_it_ended(ex)}")

    def _past_run_limit(self) -> str | None:
        """The sentence of the per-run time cap once the run has passed it (--run-limit), else None."""
        limit = self.run.options.get("run_limit")
        elapsed = time.time() - self.run.started_at
        if limit and elapsed > limit:
            return limits.RUN.reached(f"the run's {elapsed:.1f} s", limit)
        return None

    def _record(self, log: FrameLog, target: Target) -> None:
        folder = self.run.options["record"]
        if folder:  # (cassette.py and PyYAML are imported only by a run that records)
            from .recordings.cassette import path_for

            log.save(path_for(folder, log.scenario, log.notes.get(BINDING)), scrubber=self.run.scrubber)

    def _compare(self, log: FrameLog) -> None:
        """--against DIR: how this capture differs from the scenario's earlier one there (recordings/capture_diff.py),
        sent to the controller beside the findings; a difference fails the test (and the run)."""
        folder = self.run.options.get("against")
        if not folder:
            return
        from .recordings.capture_diff import diff_logs
        from .recordings.cassette import find

        earlier = find(folder, log.scenario, log.notes.get(BINDING))
        item: dict[str, Any] = {"scenario": log.scenario, "cassette": str(earlier) if earlier else None,
                                "test": self.request.node.nodeid}
        if earlier is not None:
            try:
                diff = diff_logs(FrameLog.load(earlier), log, self.run.options.get("timing_tolerance"))
                item.update(differences=diff.count, lines=diff.lines())
            except (OSError, ValueError) as exc:  # an unreadable cassette compares with nothing: said, and fails
                item.update(differences=1, lines=[f"could not compare with {earlier}: {exc}"])
        scrubbed = self.run.scrubber.value(item)
        self.request.node.user_properties.append((REGRESSIONS_KEY, json.dumps(scrubbed)))
        if scrubbed.get("differences"):
            self.regressed = scrubbed

    def _finish(self, findings: list[Finding]) -> list[Finding]:
        scrubber = self.run.scrubber
        payload = [scrubber.value(f.to_json()) for f in findings]
        self.request.node.user_properties.append((FINDINGS_KEY, json.dumps(payload)))
        failures = [f for f in findings if f.outcome.is_failure]
        lines = [f"{f.req_id} {f.outcome.value}{f' [{f.binding}]' if f.binding else ''}: {f.message}"
                 for f in failures]
        if self.regressed:
            shown = self.regressed["lines"][:40]
            lines += [f"regression against {self.regressed['cassette']} ({self.regressed['differences']} "
                      f"difference(s)):", *shown]
        if lines:
            pytest.fail(scrubber.text("\n".join(lines)), pytrace=False)
        if findings and all(f.outcome == Outcome.UNSUPPORTED for f in findings):
            pytest.skip("UNSUPPORTED: " + findings[0].message)
        return findings


def _run(config: pytest.Config) -> StreamcertRun:
    return config.pluginmanager.get_plugin(RUN_PLUGIN)


def _overrides_target(item: pytest.Item) -> bool:
    """Whether the test sees a `streamcert_target` other than the plugin's (a user's override)."""
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.get("streamcert_target") if info is not None else None
    return bool(defs) and getattr(defs[-1].func, "__module__", __name__) != __name__


@pytest.fixture(scope="session")
def streamcert_target(request: pytest.FixtureRequest) -> Any:
    """The target the run certifies (a Target: `.a2a_url`, `.acp_cmd`, `.headers`, …): the one given by
    --streamcert-url and the other target options, or the embedded reference's. Override it to certify an
    agent your own fixture starts (docs/plugin.md).

    To certify an agent that a fixture of yours starts, override this fixture in the conftest.py at your
    rootdir: return the agent's URL, or a mapping of run options by name (`{"a2a_url": url, "headers": [...]}`).
    The conformance tests and `streamcert_capture` then drive that target (and no embedded reference starts):

        @pytest.fixture(scope="session")
        def streamcert_target(my_agent):          # my_agent: your fixture, yields a started server
            return my_agent.url

    docs/plugin.md has the whole example."""
    run = _run(request.config)
    if run.is_embedded and not run.embedded_targets and run.embedded is None and run._target is None:
        run._start_embedded()  # a run of the user's own tests alone: no conformance test started it
    return run.target


@pytest.fixture(scope="session")
def streamcert_capture(request: pytest.FixtureRequest, streamcert_target: Any) -> Any:
    """The frame log of a scenario against the run's target, for checks of your own on the suite's captures:
    `log = streamcert_capture("stream-basic")` (a FrameLog: `log.exchanges`, each with its `events`), driven at
    most once per process, shared with the conformance test that drives it; `streamcert_capture(id,
    binding="http-json")` over another binding. `streamcert_capture.target` is the run's Target and
    `streamcert_capture.client()` an A2A client on it (`async with`). docs/plugin.md."""
    from .running.own_checks import Captures

    run = _run(request.config)
    run.adopt(streamcert_target)
    return Captures(run)


@pytest.fixture
def streamcert(request: pytest.FixtureRequest, streamcert_target: Any) -> Streamcert:
    """Drive and judge a conformance scenario in a test of your own: `streamcert.check("stream-basic")`
    runs the scenario (`streamcert list` names them) against the run's target (--streamcert-url, --streamcert-acp-cmd, …,
    or their STREAMCERT_* variables and ini keys; with none, the embedded reference) and judges every
    frame; a failed requirement fails the test with its ID and message, and the findings go into the
    run's compatibility.json (--streamcert-report DIR).

        def test_my_agent_streams(streamcert):
            streamcert.check("stream-basic")

    `streamcert.judge(log)` judges a frame log you captured or loaded yourself
    (`FrameLog.load("cassettes/x.yaml")`, streamcert.framelog); `streamcert.target` is the Target in use.
    A scenario whose profile is not selected, or that has no target, is skipped."""
    _run(request.config).adopt(streamcert_target)  # (a user's streamcert_target override; else nothing)
    return Streamcert(request)


@pytest.fixture
def streamcert_reference():
    """Start the embedded reference agent, or a fault variant of it, on 127.0.0.1 for one test (the
    fixture form of `streamcert serve --fault NAME`): `server = streamcert_reference()` or
    `streamcert_reference(fault="status-first")` (`streamcert serve --list-faults` names them);
    `server.url` is its A2A base URL. Every server it started stops after the test.

        def test_my_client_against_the_reference(streamcert_reference):
            good, broken = streamcert_reference(), streamcert_reference(fault="status-first")
            ...                                       # server.agent_url(name): one of its agents

    For trying a client, or checks of your own, against a known-good and a known-broken agent."""
    from .reference.agent.server import ReferenceServer

    started = []

    def start(fault: str | None = None, **options: Any):
        server = ReferenceServer(fault=fault, **options).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
