"""The script of the GitHub Action (action.yml at the repository root): `python -m streamcert.github_action`.

It runs `streamcert run` once with the Action's inputs, then hands the result to GitHub: report.md appended to
$GITHUB_STEP_SUMMARY, `verdict`, `report-dir`, `exit-code` and `badges` written to $GITHUB_OUTPUT, one `::error`
annotation per root cause of failure, the badge files copied and announced, and streamcert's own exit code
(so a FAIL fails the step; the Action's upload step runs `if: always()`).

The inputs arrive as environment variables, `INPUT_<NAME>` (`INPUT_WAIT_FOR_TARGET`; GitHub's own spelling for
JavaScript actions, `INPUT_WAIT-FOR-TARGET`, is read too), not as arguments: action.yml hands each input over
through `env:`, so a value reaches the script as data. Spliced into a `run:` script with `${{ }}` it would be
parsed by the shell (GitHub's script-injection hazard) and echoed, credentials and all, in the step's log.
Outside GitHub the script runs the same way: `INPUT_PROFILE=a2a python -m streamcert.github_action`.

What is secret (header values, credentials after `Bearer `, the user info and credential-named query
parameters of the URLs: what streamcert's Scrubber scrubs) is announced with `::add-mask::` before anything
else is printed, and replaced by `***` in everything this script writes.

Every input and every text a server sent is data, never a workflow command: right after the masks, workflow
commands are stopped (`::stop-commands::` with a random token) until the annotations, so the echo of the
command line, streamcert's output (its stderr relayed onto stdout, in order with the resume token) and the
badge lines are read as text whatever they hold; the echo and the badge lines are also kept to one line each
(`shown`). The annotations escape `%`, CR and LF (and `:` and `,` in a title) as GitHub's toolkit does, and
an output with a line break is written in the `name<<DELIMITER` form with a random delimiter.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from . import run_options
from .report.roots import group
from .scrub import Scrubber, echoed_forms

DEFAULT_REPORT_DIR = "streamcert-report"  # not streamcert's reports/latest: a vendor's repository may have reports/
EXIT_USAGE = 2
# GitHub shows at most 10 error and 10 warning annotations per step: the root causes take 7 of the 10, which
# leaves room for "and N more", stale baseline entries and regressions.
MAX_ROOT_ANNOTATIONS = 7
MAX_ANNOTATION_CHARS = 400
MAX_MESSAGE_CHARS = 200  # of a root's first message line (a frame quoted in it can run to 500 characters)
MAX_IDS_LISTED = 12
SUMMARY_LIMIT = 1024 * 1024 - 4096  # GitHub refuses a step summary over 1 MiB; report.md stays far under it
STDERR_TAIL_LINES = 20  # kept for a run that wrote no report: its summary and annotation quote them
# What `shown` escapes: C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


@dataclass(frozen=True)
class Inputs:
    """The Action's inputs (action.yml), by their names with `-` written `_`."""

    url: str = ""
    profile: str = ""  # one or more profiles, separated by spaces, commas or new lines
    level: str = ""
    binding: str = ""  # one or more A2A bindings, separated like profiles
    report_dir: str = DEFAULT_REPORT_DIR
    wait_for_target: str = ""
    headers: str = ""  # one `NAME: VALUE` per line
    baseline: str = ""
    extra_args: str = ""  # more `streamcert run` options, split like a shell would (shlex)
    badge_dir: str = ""  # where to copy badge.json and badge-<profile>.json
    artifact_name: str = ""  # the artifact the Action uploads the reports as (named in the summary)
    matrix: str = ""  # a matrix file: the step runs `streamcert matrix run` instead (docs/matrix.md)
    matrix_only: str = ""  # the cells or groups to run of it, separated like profiles (a strategy.matrix job's)
    matrix_jobs: str = ""  # cells at once (default: the number of cores)


def read_inputs(environ: Mapping[str, str]) -> Inputs:
    given = {}
    for f in fields(Inputs):
        for key in (f"INPUT_{f.name.upper()}", f"INPUT_{f.name.upper().replace('_', '-')}"):
            value = environ.get(key, "").strip()
            if value:
                given[f.name] = value
                break
    return Inputs(**given)


def command_args(inputs: Inputs) -> list[str]:
    """The arguments of `streamcert run` for these inputs (ValueError: extra-args cannot be split)."""
    args = ["--url", inputs.url] if inputs.url else []
    for profile in re.split(r"[\s,]+", inputs.profile):
        args += ["--profile", profile] if profile else []
    args += ["--level", inputs.level] if inputs.level else []
    for binding in re.split(r"[\s,]+", inputs.binding):
        args += ["--binding", binding] if binding else []
    args += ["--report", inputs.report_dir]
    args += ["--wait-for-target", inputs.wait_for_target] if inputs.wait_for_target else []
    for line in inputs.headers.splitlines():
        args += ["--header", line.strip()] if line.strip() else []
    args += ["--baseline", inputs.baseline] if inputs.baseline else []
    return args + shlex.split(inputs.extra_args)  # last: it may end with `-- <pytest options>`


def matrix_args(inputs: Inputs) -> list[str]:
    """The arguments of `streamcert matrix run` for these inputs (ValueError: extra-args cannot be split): the
    cells go into the report directory, one folder each beside matrix.json and the dashboard."""
    args = ["run", inputs.matrix, "--out", inputs.report_dir]
    for cell in re.split(r"[\s,]+", inputs.matrix_only):
        args += ["--only", cell] if cell else []
    args += ["--jobs", inputs.matrix_jobs] if inputs.matrix_jobs else []
    return args + shlex.split(inputs.extra_args)


def matrix_annotations(directory: Path, code: int, stderr_tail: list[str]) -> list[Annotation]:
    """One error per cell that fails beyond its known failures (as the command's exit code counts them), at
    most MAX_ROOT_ANNOTATIONS; a matrix that wrote no matrix.json: the generic one."""
    from .matrix.command import unexcused

    try:
        matrix = json.loads((directory / "matrix.json").read_text("utf-8"))
        cells = {cell["id"]: cell for cell in matrix["cells"]}
        failing = unexcused(matrix)
    except (OSError, ValueError, KeyError, TypeError):
        return annotations(None, code, stderr_tail)
    out = []
    for cell_id in failing[:MAX_ROOT_ANNOTATIONS]:
        cell = cells[cell_id]
        why = cell.get("error") or f"failed: {listed(cell.get('failed') or [])}"
        out.append(Annotation("error", f"streamcert matrix {cell['verdict']} {cell_id}", first_line(str(why))))
    return out


# -- secrets ---------------------------------------------------------------------------------------------

def secrets_of(args: list[str], environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values streamcert would scrub from a run with these arguments and the options' environment
    variables (STREAMCERT_SUT_HEADER, …); other variables aside: GitHub masks its own secrets."""
    from .cli import build_parser

    try:
        with contextlib.redirect_stderr(io.StringIO()):  # a refusal is streamcert's to print, once masked
            parsed = build_parser().parse_args(["run", *args])
        values = run_options.resolve({opt.name: getattr(parsed, opt.name) for opt in run_options.RUN_OPTIONS},
                                     environ)
        loose: list[str] = []
    except (SystemExit, ValueError):  # streamcert will refuse the line, and may quote a value in its refusal
        values, loose = loose_values(args)
    return tuple(Scrubber.of(run_options.target_of(values), environ={}).secrets) + tuple(loose)


def loose_values(args: list[str]) -> tuple[dict[str, Any], list[str]]:
    """The headers, target URLs and --scrub patterns among `args`, unchecked; and the header values without a
    colon (`Authorization Bearer X` is refused with the value quoted: all of it is masked)."""
    options = {opt.cli: opt for opt in run_options.RUN_OPTIONS
               if opt.name in ("headers", "scrub") or opt.name.endswith("_url")}
    values: dict[str, Any] = {"headers": [], "scrub": []}
    whole: list[str] = []
    words = iter(args)
    for word in words:
        flag, eq, value = word.partition("=")
        opt = options.get(flag)
        if opt is None:
            continue
        value = value if eq else next(words, "")
        if opt.name == "headers" and ":" not in value:
            whole += [value] if len(value.strip()) >= 4 else []
        elif opt.repeat:
            values[opt.name].append(value)
        else:
            values[opt.name] = value
    return values, whole


def mask_commands(secrets: tuple[str, ...]) -> list[str]:
    """`::add-mask::` for each secret in every form a server or a writer may echo it in."""
    forms = sorted({form for secret in secrets for form in echoed_forms(secret)})
    return [f"::add-mask::{escape_data(form)}" for form in forms]


# -- workflow commands -----------------------------------------------------------------------------------

def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


@dataclass(frozen=True)
class Annotation:
    kind: str  # error, warning
    title: str
    message: str

    def command(self, scrubber: Scrubber) -> str:
        message = scrubber.text(self.message)
        if len(message) > MAX_ANNOTATION_CHARS:
            message = message[:MAX_ANNOTATION_CHARS - 1] + "…"
        return f"::{self.kind} title={escape_property(scrubber.text(self.title))}::{escape_data(message)}"


def listed(ids: list[str]) -> str:
    shown = ", ".join(ids[:MAX_IDS_LISTED])
    return shown + (f" and {len(ids) - MAX_IDS_LISTED} more" if len(ids) > MAX_IDS_LISTED else "")


def first_line(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= MAX_MESSAGE_CHARS else line[:MAX_MESSAGE_CHARS - 1] + "…"


def annotations(report: dict[str, Any] | None, code: int, stderr_tail: list[str]) -> list[Annotation]:
    """What the run's result needs a reader's eye on, in few annotations: one error per root cause (its
    requirement ids, its head's first message line), one per run-wide cause, one warning per kind of soft
    finding; a run that did not pass always has an error."""
    if report is None:
        reason = next((line for line in reversed(stderr_tail) if line.strip()), "")
        return [Annotation("error", "streamcert could not start",
                           reason or f"streamcert run exited with code {code} and wrote no report")]
    if report.get("could_not_run"):
        return [Annotation("error", "streamcert could not run", report["could_not_run"])]
    entries = report.get("requirements") or []
    found: list[Annotation] = []
    failures = [e for e in entries if e["status"] in ("FAIL", "ERROR") and e.get("baseline") != "expected"]
    roots = group(failures)
    for root in roots[:MAX_ROOT_ANNOTATIONS]:
        head = root.head
        found.append(Annotation("error", f"streamcert {head['status']} {head['id']}",
                                f"{listed(root.ids)}: {first_line(head.get('message') or '')}"))
    if len(roots) > MAX_ROOT_ANNOTATIONS:
        rest = [req_id for root in roots[MAX_ROOT_ANNOTATIONS:] for req_id in root.ids]
        found.append(Annotation("error", "streamcert: more failures",
                                f"{len(roots) - MAX_ROOT_ANNOTATIONS} more root cause(s): {listed(rest)} "
                                "(see the step summary)"))
    if report.get("stale_baseline"):
        found.append(Annotation("error", "streamcert stale baseline entries",
                                f"now passing, remove them from the baseline: {listed(report['stale_baseline'])}"))
    regressions = (report.get("regressions") or {}).get("found") or []
    if regressions:
        found.append(Annotation("error", "streamcert regressions",
                                f"{len(regressions)} scenario(s) differ from their cassettes: "
                                f"{listed([str(r.get('scenario')) for r in regressions])}"))
    untested = [e["id"] for e in entries if e["status"] == "NOT_TESTED" and e.get("level") == "MUST"]
    if untested:
        found.append(Annotation("error" if not found else "warning", "streamcert: MUST requirements not tested",
                                f"{len(untested)} selected MUST requirement(s) not tested: {listed(untested)}"))
    soft = [e["id"] for e in entries if e["status"] in ("WARNING", "NON_STRICT")]
    if soft:
        found.append(Annotation("warning", "streamcert warnings and non-strict readings",
                                f"{len(soft)} requirement(s) met only in part: {listed(soft)}"))
    verdict = report.get("verdict")
    if (verdict != "PASS" or code != 0) and not any(a.kind == "error" for a in found):
        found.append(Annotation("error", f"streamcert verdict {verdict}", f"verdict {verdict}, exit code {code}"))
    return found


# -- the run ---------------------------------------------------------------------------------------------

def run_streamcert(args: list[str], environ: Mapping[str, str], command: str = "run") -> tuple[int, list[str]]:
    """Run `streamcert COMMAND ARGS` (`run`, or `matrix` in matrix mode; with workflow commands stopped:
    `commands_stopped`), its output shown as it comes; its exit code and the last lines of its stderr.

    Its stderr is relayed onto this script's stdout, the pipe its stdout writes to: the runner reads the
    two pipes apart, so a line the target sent, printed on stderr, could otherwise be read after the
    resume token, as a command."""
    tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
    env = {k: v for k, v in environ.items() if not k.startswith("INPUT_")}  # the inputs are in ARGS
    sys.stdout.flush()
    with subprocess.Popen([sys.executable, "-m", "streamcert", command, *args], stderr=subprocess.PIPE,
                          env=env) as proc:
        assert proc.stderr is not None
        for raw in proc.stderr:  # shown as it comes, and kept for a run that writes no report
            sys.stdout.buffer.write(raw)
            sys.stdout.flush()
            tail.append(raw.decode("utf-8", "replace").rstrip())
        code = proc.wait()
    return (code if code >= 0 else 128 - code), list(tail)


@contextlib.contextmanager
def commands_stopped() -> Iterator[None]:
    """Workflow commands stopped (`::stop-commands::TOKEN`, a random token no input or server can know)
    while the body runs: whatever it prints, an input, the target's text, streamcert's own output, is
    shown as text, never read by the runner as a command."""
    token = uuid.uuid4().hex
    print(f"::stop-commands::{token}", flush=True)
    try:
        yield
    finally:
        print(f"::{token}::", flush=True)


def shown(text: str) -> str:
    """`text` on one line, as it may be printed: control characters (line breaks among them) written as
    escapes (`\\n`, `\\x1b`), so that no input starts a line of the log of its own."""
    return CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


Snapshot = dict[str, tuple[int, int]]


def snapshot(directory: Path) -> Snapshot:
    """The JSON files already in the report directory, so that what this run did not write is not read as
    its result (the writers replace files, so a new file has a new inode)."""
    if not directory.is_dir():
        return {}
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in directory.glob("*.json")}


def written(path: Path, before: Snapshot) -> bool:
    return path.is_file() and before.get(path.name) != (path.stat().st_ino, path.stat().st_mtime_ns)


def read_report(directory: Path, before: Snapshot) -> dict[str, Any] | None:
    path = directory / "compatibility.json"
    if not written(path, before):
        return None
    try:
        return json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None


def step_summary(directory: Path, report: dict[str, Any] | None, code: int, stderr_tail: list[str],
                 inputs: Inputs) -> str:
    """report.md (verdict, profiles, failures by root cause), and a footer naming the exit code and the
    artifact; for a run that wrote no report, why."""
    markdown = directory / "report.md"
    if report is not None and markdown.is_file():
        text = markdown.read_text("utf-8").rstrip("\n")
        if len(text.encode("utf-8")) > SUMMARY_LIMIT:
            text = (f"# streamcert verdict: **{report.get('verdict')}**\n\nreport.md is too large for a step "
                    "summary; read it in the uploaded reports.")
    else:
        shown = "\n".join(stderr_tail[-5:]).replace("```", "'''")
        why = " (an option was refused)" if code == EXIT_USAGE else ""
        text = (f"# streamcert could not start\n\n`streamcert run` exited with code {code} before writing a "
                f"report{why}.\n\n```\n{shown}\n```")
    footer = f"_streamcert exit code {code}"
    if inputs.artifact_name:
        footer += f" · reports (report.html, junit.xml, compatibility.json): artifact `{inputs.artifact_name}`"
    return f"{text}\n\n{footer}_\n"


def output_line(name: str, value: str) -> str:
    """One `$GITHUB_OUTPUT` entry: `name=value`, or for a value with a line break (CR or LF) GitHub's
    multiline form `name<<DELIMITER`, the delimiter random and absent from the value, so that no value can
    end its block early and write an output of its own."""
    if "\n" not in value and "\r" not in value:
        return f"{name}={value}\n"
    delimiter = f"ghadelimiter_{uuid.uuid4()}"
    while delimiter in value:
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def badge_files(directory: Path, before: Snapshot) -> list[Path]:
    """This run's badges: badge.json (overall) first, then badge-<profile>.json."""
    found = [p for p in directory.glob("badge*.json") if written(p, before)] if directory.is_dir() else []
    return sorted(found, key=lambda p: (p.name != "badge.json", p.name))


def publish_badges(badges: list[Path], into: str) -> list[Path]:
    """Copy the badges into `into` (when given) and name each in the log with what it shows (on one line:
    the directory is an input, the badge's words are the report's)."""
    if into:
        try:
            Path(into).mkdir(parents=True, exist_ok=True)
            badges = [Path(shutil.copy2(p, Path(into) / p.name)) for p in badges]
        except OSError as exc:
            print(f"streamcert: cannot copy the badges into badge-dir: {shown(str(exc))}", flush=True)
    for path in badges:
        try:
            badge = json.loads(path.read_text("utf-8"))
            shows = f"{badge.get('label')}: {badge.get('message')}"
        except (OSError, ValueError, AttributeError):
            shows = "(not a badge)"
        print(shown(f"streamcert: badge {path} ({shows})"), flush=True)
    return badges


def append(path: str, text: str) -> None:
    with open(path, "a", encoding="utf-8") as out:
        out.write(text)


@dataclass
class Result:
    code: int  # streamcert's exit code, the script's own
    report: dict[str, Any] | None  # compatibility.json as this run wrote it (None: it wrote none)
    stderr_tail: list[str]
    badges: list[Path]


def main(environ: Mapping[str, str] | None = None) -> int:
    """Masks first (`::add-mask::` must be read as a command), then everything else with workflow commands
    stopped, the annotations last, each one line whose every input- or server-given text is escaped."""
    environ = os.environ if environ is None else environ
    for stream in (sys.stdout, sys.stderr):  # an input that is not UTF-8 is shown escaped, never a traceback
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    inputs = read_inputs(environ)
    directory = Path(inputs.report_dir).absolute()
    if inputs.matrix:
        return main_matrix(inputs, directory, environ)
    try:
        args: list[str] | None = command_args(inputs)
        refused = ""
    except ValueError as exc:  # shlex: an unclosed quote in extra-args; the other inputs' secrets still masked
        args, refused = None, f"extra-args: {exc}"
    scrubber = mask(secrets_of(command_args(dataclasses.replace(inputs, extra_args="")) if args is None else args,
                               environ))
    with commands_stopped():
        if args is None:
            result = Result(EXIT_USAGE, None, [refused], [])
        else:
            print(f"streamcert run {shown(scrubber.text(shlex.join(args)))}", flush=True)
            before = snapshot(directory)
            code, tail = run_streamcert(args, environ)
            badges = publish_badges(badge_files(directory, before), inputs.badge_dir)
            result = Result(code, read_report(directory, before), tail, badges)
        hand_over(result, inputs, directory, environ, scrubber)
    for annotation in annotations(result.report, result.code, result.stderr_tail):
        print(annotation.command(scrubber), flush=True)
    return result.code


def main_matrix(inputs: Inputs, directory: Path, environ: Mapping[str, str]) -> int:
    """Matrix mode: `streamcert matrix run` with the matrix file, the cells this job runs and the report
    directory; its summary.md as the step summary, one annotation per cell failing beyond its known failures.
    The credentials a matrix's cells use come from the options' environment variables, masked as a run's."""
    scrubber = mask(secrets_of([], environ))
    before, badges_before = snapshot(directory), snapshot(directory / "badges")  # an earlier run's are not this one's
    with commands_stopped():
        try:
            args = matrix_args(inputs)
        except ValueError as exc:
            code, tail = EXIT_USAGE, [f"extra-args: {exc}"]
        else:
            print(f"streamcert matrix {shown(scrubber.text(shlex.join(args)))}", flush=True)
            code, tail = run_streamcert(args, environ, command="matrix")
        fresh = written(directory / "matrix.json", before)
        summary = directory / "summary.md"
        if environ.get("GITHUB_STEP_SUMMARY"):
            text = (summary.read_text("utf-8").rstrip("\n") if fresh and summary.is_file() else
                    f"# streamcert matrix could not start\n\nexit code {code}\n\n```\n"
                    + "\n".join(tail[-5:]).replace("```", "'''") + "\n```")
            append(environ["GITHUB_STEP_SUMMARY"], scrubber.text(f"{text}\n\n_streamcert exit code {code}_\n"))
        if environ.get("GITHUB_OUTPUT"):
            badges = [p for p in sorted((directory / "badges").glob("*.json")) if written(p, badges_before)]
            verdict = {0: "PASS", 1: "FAIL"}.get(code, "") if fresh else ""
            outputs = {"verdict": verdict, "report-dir": str(directory), "exit-code": str(code),
                       "badges": "\n".join(str(p) for p in badges)}
            append(environ["GITHUB_OUTPUT"], "".join(output_line(k, scrubber.text(v)) for k, v in outputs.items()))
    for annotation in (matrix_annotations(directory, code, tail) if fresh else annotations(None, code, tail)):
        print(annotation.command(scrubber), flush=True)
    return code


def mask(secrets: tuple[str, ...]) -> Scrubber:
    """Announce the secrets to the runner (before anything that could show one); the scrubber of this
    script's own writes."""
    for command in mask_commands(secrets):
        print(command, flush=True)
    return Scrubber(secrets)


def hand_over(result: Result, inputs: Inputs, directory: Path, environ: Mapping[str, str], scrubber: Scrubber) -> None:
    """The step summary and the step's outputs (each value as data: `output_line`)."""
    if environ.get("GITHUB_STEP_SUMMARY"):
        summary = step_summary(directory, result.report, result.code, result.stderr_tail, inputs)
        append(environ["GITHUB_STEP_SUMMARY"], scrubber.text(summary))
    if environ.get("GITHUB_OUTPUT"):
        verdict = (result.report or {}).get("verdict", "")
        outputs = {"verdict": verdict if isinstance(verdict, str) else "", "report-dir": str(directory),
                   "exit-code": str(result.code), "badges": "\n".join(str(p) for p in result.badges)}
        append(environ["GITHUB_OUTPUT"], "".join(output_line(k, scrubber.text(v)) for k, v in outputs.items()))


if __name__ == "__main__":
    sys.exit(main())
