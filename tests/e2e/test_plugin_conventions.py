"""pytest conventions of the plugin: every run option also an ini key and an environment variable (command
line > environment > ini > default, each value through the option's validator), `streamcert run` honouring
the same variables, `--collect-only` starting nothing, the fixtures documented in `pytest --fixtures`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

import streamcert.report.writers  # noqa: F401  (loaded before pytester's in-process runs, which unload what they import)
from streamcert import cli
from streamcert.plugin import RUN_PLUGIN
from streamcert.reference.process import ReferenceProcess
from streamcert.run_options import RUN_OPTIONS, OptionError, resolve
from streamcert.targets import REFERENCE_CARD_KEY

pytest_plugins = ["pytester"]

SUITE = ("--pyargs", "streamcert.suite", "-p", "no:cacheprovider")
CLIENT_VARIABLES = {"STREAMCERT_URL", "STREAMCERT_CASE", "STREAMCERT_CONTEXT",  # docs/contracts.md §7: set for a client
                    "STREAMCERT_AGENT_CMD"}  # and for an ACP client (docs/clients.md)


@pytest.fixture(autouse=True)
def no_streamcert_environment(monkeypatch):
    """The tests here set the variables they mean; none of the developer's leaks in."""
    for opt in RUN_OPTIONS:
        monkeypatch.delenv(opt.env, raising=False)


@pytest.fixture
def starts(monkeypatch):
    """Every ReferenceProcess.start of the test, recorded; none starts a process."""
    calls = []

    def start(self):
        calls.append(self)
        raise RuntimeError("ReferenceProcess.start called")

    monkeypatch.setattr(ReferenceProcess, "start", start)
    return calls


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


# -- names -----------------------------------------------------------------------------------------------

def test_every_option_has_an_ini_key_and_a_variable_named_after_its_first_flag():
    for opt in RUN_OPTIONS:
        bare = opt.first.lstrip("-").replace("-", "_")
        assert opt.ini == (bare if bare.startswith("streamcert_") else "streamcert_" + bare), opt
        assert opt.env == opt.ini.upper() and opt.env.startswith("STREAMCERT_")
        assert opt.env not in CLIENT_VARIABLES, opt  # never what a certified client is given
    assert len({opt.env for opt in RUN_OPTIONS}) == len(RUN_OPTIONS)
    named = {opt.first: opt.env for opt in RUN_OPTIONS}
    assert named["--sut-url"] == "STREAMCERT_SUT_URL" and named["--streamcert-report"] == "STREAMCERT_REPORT"
    assert named["--acp-cmd"] == "STREAMCERT_ACP_CMD" and named["--streamcert-requirement"] == "STREAMCERT_REQUIREMENT"


def test_every_pytest_flag_is_streamcert_and_the_run_flag_and_the_old_ones_are_aliases():
    """One scheme: `--streamcert-` + the `streamcert run` option's name; each older flag is kept as its alias."""
    for opt in RUN_OPTIONS:
        assert opt.pytest == "--streamcert-" + opt.cli[2:], opt
        assert opt.alias in (None, opt.first) and (opt.alias is None) == (opt.first == opt.pytest), opt
    aliases = {opt.alias: opt.pytest for opt in RUN_OPTIONS if opt.alias}
    assert aliases["--sut-url"] == "--streamcert-url" and aliases["--acp-cmd"] == "--streamcert-acp-cmd"
    assert aliases["--sut-header"] == "--streamcert-header" and aliases["--baseline"] == "--streamcert-baseline"
    assert "--streamcert-report" not in aliases  # a flag that already followed the scheme has no alias


OLD_AND_NEW = [("--sut-url", "--streamcert-url", "http://127.0.0.1:1"),
               ("--sut-timeout", "--streamcert-timeout", "2.5"),
               ("--sut-header", "--streamcert-header", "A: 1"),
               ("--record", "--streamcert-record", "cass"),
               ("--acp-cmd", "--streamcert-acp-cmd", "python agent.py"),
               ("--stream-limit", "--streamcert-stream-limit", "3")]


def test_old_and_new_flags_give_the_same_options_and_the_old_ones_a_note_once(pytester):
    old_args = [arg for old, _, value in OLD_AND_NEW for arg in (old, value)]
    new_args = [arg for _, new, value in OLD_AND_NEW for arg in (new, value)]
    old = pytester.parseconfigure(*old_args)
    new_options = _options(pytester, *new_args)
    assert old.pluginmanager.get_plugin(RUN_PLUGIN).options == new_options
    assert new_options["a2a_url"] == "http://127.0.0.1:1" and new_options["timeout"] == 2.5
    assert new_options["headers"] == ["A: 1"] and new_options["record"] == "cass"
    # In a run: one line names every old flag given and its new name; the new flags print none.
    result = pytester.runpytest(*SUITE, "--collect-only", "-q", *old_args, "--sut-header", "B: 2")
    notes = [line for line in result.stderr.lines if "deprecated option name" in line]
    assert len(notes) == 1, result.stderr.lines
    for old_flag, new_flag, _ in OLD_AND_NEW:
        assert f"{old_flag} → {new_flag}" in notes[0]
    assert notes[0].count("--sut-header") == 1  # given twice, named once
    quiet = pytester.runpytest(*SUITE, "--collect-only", "-q", *new_args)
    assert not [line for line in quiet.stderr.lines if "deprecated" in line], quiet.stderr.lines


def test_a_repeated_option_takes_its_values_under_both_names(pytester):
    options = _options(pytester, "--sut-header", "A: 1", "--streamcert-header", "B: 2")
    assert sorted(options["headers"]) == ["A: 1", "B: 2"]
    assert _options(pytester, "--sut-timeout", "4", "--streamcert-timeout", "5")["timeout"] == 5.0  # the new wins


# -- resolve: the one precedence -------------------------------------------------------------------------

def test_command_line_beats_environment_beats_ini_beats_default():
    ini = {"streamcert_sut_timeout": "3", "streamcert_stream_limit": "4", "streamcert_profile": ["plans"]}.get
    env = {"STREAMCERT_SUT_TIMEOUT": "2", "STREAMCERT_PROFILE": "a2a, interactions"}
    values = resolve({"timeout": 1.0}, env, lambda key: ini(key, ""))
    assert values["timeout"] == 1.0  # command line
    assert values["profiles"] == ["a2a", "interactions"]  # environment, comma-separated
    assert values["stream_limit"] == 4.0  # ini
    assert values["level"] == "may" and values["headers"] == [] and values["overwrite"] is False  # defaults
    assert resolve({}, env)["timeout"] == 2.0
    assert resolve({}, {"STREAMCERT_SUT_TIMEOUT": "  "}, lambda key: ini(key, ""))["timeout"] == 3.0  # blank: unset


def test_repeatable_values_and_flags_from_text():
    env = {"STREAMCERT_SUT_HEADER": "Accept: a/b, c/d\nX-Tenant: t1", "STREAMCERT_STREAMCERT_OVERWRITE": "x",
           "STREAMCERT_OVERWRITE": "yes", "STREAMCERT_SCRUB": "x-one\nx-two, x-three"}
    values = resolve({}, env)
    assert values["headers"] == ["Accept: a/b, c/d", "X-Tenant: t1"]  # a header's commas are its own
    assert values["scrub"] == ["x-one", "x-two", "x-three"]
    assert values["overwrite"] is True
    assert resolve({"headers": ["A: 1"]}, env)["headers"] == ["A: 1"]  # the command line replaces, never adds


@pytest.mark.parametrize("env, named", [
    ({"STREAMCERT_SUT_URL": "ftp://x"}, "environment variable STREAMCERT_SUT_URL: 'ftp://x' is not an http(s) URL"),
    ({"STREAMCERT_PROFILE": "a2a,nope"}, "environment variable STREAMCERT_PROFILE: 'nope' is not one of a2a"),
    ({"STREAMCERT_OVERWRITE": "maybe"}, "environment variable STREAMCERT_OVERWRITE: 'maybe' is not one of 1"),
    ({"STREAMCERT_SUT_FAULT": "nope"}, "environment variable STREAMCERT_SUT_FAULT: "),
    ({"STREAMCERT_REQUIREMENT": "A2A-STREM-004"}, "did you mean A2A-STREAM-004?"),
])
def test_a_bad_value_names_its_variable(env, named):
    with pytest.raises(OptionError) as refused:
        resolve({}, env)
    assert named in str(refused.value)
    if "STREAMCERT_SUT_URL" in env:  # a bad variable the command line overrides is never read
        assert resolve({"a2a_url": "http://127.0.0.1:1"}, env)["a2a_url"] == "http://127.0.0.1:1"


# -- the plugin: ini and environment ---------------------------------------------------------------------

def _options(pytester, *args) -> dict:
    return pytester.parseconfigure(*args).pluginmanager.get_plugin(RUN_PLUGIN).options


def test_plugin_reads_ini_then_environment_then_command_line(pytester, monkeypatch):
    pytester.makefile(".ini", pytest="[pytest]\nstreamcert_sut_url = http://127.0.0.1:1\n"
                                     "streamcert_sut_header =\n    A: 1, 2\n    B: 3\n")
    options = _options(pytester)
    assert options["a2a_url"] == "http://127.0.0.1:1" and options["headers"] == ["A: 1, 2", "B: 3"]
    monkeypatch.setenv("STREAMCERT_SUT_URL", "http://127.0.0.1:2/")
    assert _options(pytester)["a2a_url"] == "http://127.0.0.1:2"  # the environment beats the ini
    assert _options(pytester, "--sut-url", "http://127.0.0.1:3")["a2a_url"] == "http://127.0.0.1:3"  # the flag both


def test_plugin_refuses_a_bad_ini_value_or_variable_naming_it(pytester, monkeypatch):
    pytester.makefile(".ini", pytest="[pytest]\nstreamcert_sut_timeout = soon\n")
    with pytest.raises(pytest.UsageError, match="ini key streamcert_sut_timeout: 'soon' is not a number"):
        pytester.parseconfigure()
    monkeypatch.setenv("STREAMCERT_SUT_TIMEOUT", "-1")
    with pytest.raises(pytest.UsageError, match="environment variable STREAMCERT_SUT_TIMEOUT: '-1' must be greater"):
        pytester.parseconfigure()
    assert _options(pytester, "--sut-timeout", "2")["timeout"] == 2.0


def test_an_ini_key_names_the_target_of_a_suite_run(pytester, starts):
    url = closed_port_url()
    pytester.makefile(".ini", pytest=f"[pytest]\nstreamcert_sut_url = {url}\nstreamcert_report = rep\n")
    result = pytester.runpytest(*SUITE, "--collect-only", "-q")
    assert result.ret == 0 and not starts
    report = json.loads((pytester.path / "rep" / "compatibility.json").read_text("utf-8"))
    assert report["target"]["a2a"] == url and report["target"]["embedded"] is False


def test_streamcert_sut_url_is_honoured_by_a_suite_run(pytester, monkeypatch, streamcert_reference):
    """Before, STREAMCERT_SUT_URL was ignored and the embedded reference tested instead. One scenario, in a
    subprocess (a run in-process would leave the modules it imports unloaded behind it)."""
    server = streamcert_reference()
    monkeypatch.setenv("STREAMCERT_SUT_URL", server.url)
    monkeypatch.setenv("STREAMCERT_SCENARIO", "card")
    monkeypatch.setenv("STREAMCERT_CARD_KEY", REFERENCE_CARD_KEY)  # the key the reference signs its card with
    result = pytester.runpytest_subprocess(*SUITE, "-q", "--streamcert-report", "rep", timeout=120)
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 1 and outcomes["deselected"] >= 30, outcomes
    report = json.loads((pytester.path / "rep" / "compatibility.json").read_text("utf-8"))
    assert report["target"]["a2a"] == server.url and report["target"]["embedded"] is False
    card = [e for e in report["requirements"] if e["id"].startswith("A2A-CARD-")]
    assert card and all(e["status"] == "PASS" for e in card)
    assert report["verdict"] == "INCOMPLETE" and report["selection"]["scenario_globs"] == ["card"]


# -- the CLI honours the same variables ---------------------------------------------------------------------

def test_streamcert_run_takes_its_target_from_the_environment(tmp_path):
    url = closed_port_url()
    env = {**os.environ, "STREAMCERT_SUT_URL": url, "STREAMCERT_REPORT": "rep", "STREAMCERT_REQUIREMENT": "A2A-CARD-*"}
    proc = subprocess.run([sys.executable, "-m", "streamcert", "run"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == cli.EXIT_COULD_NOT_RUN, proc.stderr  # refused: nothing runs, no embedded reference
    report = json.loads((tmp_path / "rep" / "compatibility.json").read_text("utf-8"))
    assert report["target"]["a2a"] == url
    by_id = {e["id"]: e for e in report["requirements"]}
    assert by_id["A2A-CARD-001"]["status"] == "ERROR"
    assert by_id["WIRE-001"]["message"] == "not selected (--requirement A2A-CARD-*)"
    assert report["could_not_run"] and "nothing was run" in proc.stderr


def test_streamcert_run_refuses_a_bad_variable_naming_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("STREAMCERT_SUT_FAULT", "nope")
    with pytest.raises(SystemExit) as exit_:
        cli.main(["run"])
    assert exit_.value.code == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert "environment variable STREAMCERT_SUT_FAULT" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "reports").exists()


# -- --collect-only starts nothing ---------------------------------------------------------------------------

def test_collect_only_starts_no_process(pytester, starts):
    result = pytester.runpytest(*SUITE, "--collect-only", "-q")
    assert result.ret == 0 and not starts
    assert len([line for line in result.outlines if "::" in line]) >= 30


def test_a_run_that_deselects_everything_starts_nothing(pytester, starts):
    result = pytester.runpytest(*SUITE, "-q", "-k", "no_such_test")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED and not starts


def test_a_run_of_profiles_its_server_does_not_serve_starts_no_server(pytester, starts):
    """acp and line (and client, acp-client) are served by the embedded reference's stdio programs, played in the
    run's process: its server starts only for a profile it serves (the control: the test below)."""
    result = pytester.runpytest(*SUITE, "-q", "--streamcert-profile", "acp", "--streamcert-profile", "line")
    assert not starts
    assert result.parseoutcomes()["passed"] == 5 and result.ret == 0  # the four ACP scenarios and line-cases


def test_a_run_that_drives_a_scenario_does_start_it(pytester, starts):
    """The control of the two tests above: the same patch sees the start of a real run."""
    result = pytester.runpytest(*SUITE, "-q", "--streamcert-scenario", "card")
    assert len(starts) == 1
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    result.stdout.fnmatch_lines(["*streamcert: ReferenceProcess.start called*"])


# -- documented fixtures and the marker -------------------------------------------------------------------------

def test_fixtures_are_documented(pytester):
    """`pytest --fixtures` shows a docstring's first paragraph: what the fixture gives and how to call it;
    with -v the whole of it, an example test included."""
    def shown(*args: str) -> dict[str, str]:
        text = pytester.runpytest("-p", "no:cacheprovider", "--fixtures", *args).stdout.str()
        block = text[text.index("fixtures defined from streamcert.plugin"):]
        block = block[:block.index("\n\n--")]
        return {name: block[block.index(name + " -- "):] for name in ("streamcert", "streamcert_reference")}

    brief = shown()
    assert 'streamcert.check("stream-basic")' in brief["streamcert"] and "STREAMCERT_" in brief["streamcert"]
    assert "compatibility.json" in brief["streamcert"] and "def test_" not in brief["streamcert"].split(" -- ")[1]
    assert 'streamcert_reference(fault="status-first")' in brief["streamcert_reference"]
    assert "server.url" in brief["streamcert_reference"]
    full = shown("-v")
    assert "def test_my_agent_streams(streamcert):" in full["streamcert"]
    assert "def test_my_client_against_the_reference(streamcert_reference):" in full["streamcert_reference"]
    text = pytester.runpytest("-p", "no:cacheprovider", "--fixtures").stdout.str()  # the fixtures for own checks
    capture = text[text.index("streamcert_capture [session scope] -- "):]
    assert 'streamcert_capture("stream-basic")' in capture.split("\n\n")[0]
    target = text[text.index("streamcert_target [session scope] -- "):]
    assert "Override it to certify an agent your own fixture starts" in " ".join(target.split("\n\n")[0].split())


def test_the_marker_is_registered_with_its_use(pytester):
    result = pytester.runpytest("-p", "no:cacheprovider", "--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.streamcert_profile(name): set by streamcert on each conformance test*"])


def test_ini_keys_are_listed_in_help(pytester):
    text = pytester.runpytest("-p", "no:cacheprovider", "--help").stdout.str()
    for opt in RUN_OPTIONS:
        assert opt.ini in text, opt.ini
    assert "STREAMCERT_SUT_URL" in text


def test_the_alias_table_in_the_contract_names_every_old_flag():
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "contracts.md").read_text("utf-8")
    for opt in RUN_OPTIONS:
        if opt.alias:
            assert f"| `{opt.alias}` | `{opt.pytest}` | `{opt.env}` |" in text, opt.alias
