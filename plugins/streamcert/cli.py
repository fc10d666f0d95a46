"""The `streamcert` command (docs/contracts.md §5): run, check, diff, serve, replay, convert, list, explain, baseline,
client, matrix."""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from pathlib import Path

from . import limits, run_options
from .running import exit_codes, selection
from .running.exit_codes import EXIT_COULD_NOT_RUN, EXIT_USAGE
from .scrub import Scrubber
from .targets import SLOT_OF_PROFILE, Target, names_a_target


class _Parser(argparse.ArgumentParser):
    """Refuses a bad command line in one line (argparse would print the whole usage, 17 lines for run)."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (usage: {self.prog} --help)\n")


class _Version(argparse.Action):
    """--version: `streamcert 0.1.0 (catalogue 2026.12.2)`; the catalogue is read only when asked."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the version of streamcert and of its catalogue, and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from . import __version__
        from .catalogue import catalogue_version

        print(f"streamcert {__version__} (catalogue {catalogue_version()})")
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="streamcert", description=__doc__)
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True,
                                metavar="{run,check,diff,serve,proxy,replay,convert,list,explain,baseline,client,matrix}")

    run = sub.add_parser("run", help="certify an implementation (default: the embedded reference)")
    for opt in run_options.RUN_OPTIONS:
        opt.add_to(run.add_argument, opt.cli, dest=opt.name)
    run.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after --: options passed to pytest (-n 2, -k …)")
    run.set_defaults(subparser=run)  # what cmd_run refuses, it refuses as `streamcert run`

    check = sub.add_parser("check", help="judge recorded cassettes offline with the same rules")
    check.add_argument("cassettes", nargs="+")
    check.add_argument("--report", default="reports/check", help="report directory (default reports/check)")
    _cassette_cap(check)

    diff = sub.add_parser("diff", help="regression diff of two cassettes of one scenario")
    diff.add_argument("old")
    diff.add_argument("new")
    diff.add_argument("--timing-tolerance", type=run_options.nonnegative, default=run_options.DEFAULT_TIMING_TOLERANCE,
                      metavar="SECONDS", help="seconds a frame may come sooner or later than in OLD "
                      f"(default {run_options.DEFAULT_TIMING_TOLERANCE:g})")
    diff.add_argument("--json", action="store_true", help="print the differences as one JSON document")
    _cassette_cap(diff)

    client = sub.add_parser("client", help="the reference A2A client: one task at URL, its final view as one JSON line")
    client.add_argument("url", nargs="?", metavar="URL", help="the agent's base URL (default: STREAMCERT_URL)")
    client.add_argument("--fault", type=_client_fault, metavar="NAME", help="behave as this client fault variant")
    client.add_argument("--deadline", type=run_options.nonnegative, metavar="SECONDS",
                        help="the whole run's time limit (default: STREAMCERT_CLIENT_DEADLINE, else 30)")

    replay = sub.add_parser("replay", help="serve recorded cassettes as an A2A agent on 127.0.0.1")
    replay.add_argument("cassettes", nargs="+", metavar="CASSETTE")
    replay.add_argument("--port", type=_port, default=0, help="port on 127.0.0.1 (0: a free one)")
    replay.add_argument("--pace", choices=("recorded", "fast"), default="recorded",
                        help="send each chunk at its recorded time (default) or at once")
    replay.add_argument("--scenario", help="the scenario a request that names none is for")
    _cassette_cap(replay)

    convert = sub.add_parser("convert", help="write cassettes (older JSON ones) again in vcrpy's YAML format")
    convert.add_argument("cassettes", nargs="+", metavar="CASSETTE")
    convert.add_argument("--into", help="directory for <scenario>.yaml (default: beside each cassette)")
    convert.add_argument("--overwrite", action="store_true", help="replace a <scenario>.yaml already there")
    _cassette_cap(convert)

    serve = sub.add_parser("serve", help="run the reference implementation in the foreground")
    serve.add_argument("--port", type=_port, default=0, help="port on 127.0.0.1 (0: a free one)")
    serve.add_argument("--fault", type=run_options.fault_name, help="run this fault variant")
    serve.add_argument("--list-faults", action="store_true", help="list the fault variants and exit")
    serve.add_argument("--deterministic", action="store_true", help="fixed clock and ids: byte-stable streams")
    serve.add_argument("--push", action="store_true",
                       help="the root agent's card declares pushNotifications: true and it serves push "
                            "(always so at /agents/push)")
    serve.add_argument("--d3", choices=("close", "open"), default="close",
                       help="conflict D3: at an interrupted state streams close (default) or stay open")
    serve.add_argument("--auth", metavar="TOKEN",
                       help="every agent's card requires a bearer token, TOKEN, and a request without it is refused "
                            "with HTTP 401 (gRPC UNAUTHENTICATED); without --auth only /agents/secured does, with the "
                            "test token of docs/security.md")
    plays = serve.add_mutually_exclusive_group()
    plays.add_argument("--script-steps", type=run_options.script_steps, metavar="STEP,…",
                       help="a test agent of limited reach: it plays only these script steps, ignores the others, "
                            "and its card declares them")
    plays.add_argument("--ignore-script", action="store_true",
                       help="an agent that plays no script: it gives the same answer to every prompt")

    proxy = sub.add_parser("proxy", help="a recording proxy on 127.0.0.1 between an A2A client and an agent: "
                                         "cassettes of what passed, judged on stop (docs/proxy.md)")
    proxy.add_argument("--upstream", required=True, type=run_options.http_url, metavar="URL",
                       help="the A2A agent's base URL (its origin: the card at URL/.well-known/agent-card.json)")
    proxy.add_argument("--port", type=_port, default=0, help="port on 127.0.0.1 (0: a free one)")
    proxy.add_argument("--record", required=True, type=run_options.writable_dir, metavar="DIR",
                       help="write the cassettes into this directory (task-NNN.yaml, card.yaml, untasked.yaml)")
    proxy.add_argument("--report", required=True, type=run_options.writable_dir, metavar="DIR",
                       help="write the judged report into this directory")
    proxy.add_argument("--max-exchanges", type=_count, metavar="N", help="stop after N exchanges")
    proxy.add_argument("--duration", type=run_options.positive, metavar="SECONDS", help="stop after this long")
    for opt in run_options.RUN_OPTIONS:
        if opt.name in PROXY_OPTIONS:
            opt.add_to(proxy.add_argument, opt.cli, dest=opt.name)

    from .catalogue import PROFILES  # already loaded by run_options

    listing = sub.add_parser("list", help="the requirements (or with --scenarios the scenarios), filtered")
    listing.add_argument("globs", nargs="*", metavar="GLOB",
                         help="requirement (or scenario) ids, fnmatch, any case; without a wildcard a prefix")
    listing.add_argument("--profile", dest="profiles", action="append", choices=PROFILES, default=[],
                         help="only this profile (repeatable)")
    listing.add_argument("--level", type=run_options.level, choices=("must", "should", "may"), default="may",
                         help="only requirements at or above this level (default: may, i.e. all)")
    listing.add_argument("--scenarios", action="store_true",
                         help="list the scenarios and the requirements each exercises instead")
    listing.add_argument("--json", action="store_true", help="print one JSON document")

    explain = sub.add_parser("explain", help="a requirement: its sentence, source, readings, scenarios, faults")
    explain.add_argument("req_id", metavar="ID")
    explain.add_argument("--json", action="store_true", help="print one JSON document")

    baseline = sub.add_parser("baseline", help="write a baseline (YAML) expecting a report's failures")
    baseline.add_argument("report_path", metavar="REPORT", help="a compatibility.json (or the directory holding it)")
    baseline.add_argument("-o", "--output", metavar="FILE", help="write it into FILE (default: standard output)")
    baseline.add_argument("--overwrite", action="store_true", help="replace FILE if it is already there")

    from .matrix.command import add_parser as add_matrix

    add_matrix(sub)
    return parser


# The run options the proxy keeps to, as a run does: the stream limit, the exchange timeout, the caps, the scrubbing
PROXY_OPTIONS = ("stream_limit", "timeout", "scrub", *(cap.field for cap in limits.CAPS[:5]))


def _count(value: str) -> int:
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number of at least 1")
    return int(value)


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number")
    return port


def unknown_options(parser: argparse.ArgumentParser, command: str | None, extra: list[str],
                    remainder: list[str] = ()) -> str:
    """The one line for arguments no option of the command takes: the close option for a misspelt one
    (`--urll`: did you mean --url?), and for `run` that pytest's own options go after `--`."""
    import difflib

    sub = _subparsers(parser).get(command or "")
    known = [s for action in (sub or parser)._actions for s in action.option_strings]
    flags = [a for a in extra if a.startswith("-") and a != "--"]
    said = []
    for flag in flags:
        name = flag.split("=", 1)[0]
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        said.append(f"{flag} (did you mean {close[0]}?)" if close else flag)
    where = f"streamcert {command}" if sub else "streamcert"
    line = f"{where}: error: unrecognized argument(s): {' '.join(said or extra)}"
    if command == "run" and any("did you mean" not in s for s in said):
        rest = " ".join([*extra, *(a for a in remainder if a != "--")])  # `-n 2`: the 2 went to the remainder
        line += f"; options for pytest go after --, as in: {where} [options] -- {rest}"
    return line + f" (usage: {where} --help)"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.exit(EXIT_USAGE, unknown_options(parser, args.command, extra, getattr(args, "pytest_args", [])) + "\n")
    if args.command == "run":
        return cmd_run(args, args.subparser, program=argv is None)
    if args.command == "check":
        return cmd_check(args)
    if args.command == "diff":
        return cmd_diff(args)
    if args.command == "replay":
        return cmd_replay(args)
    if args.command == "convert":
        return cmd_convert(args)
    if args.command == "list":
        return cmd_list(args)
    if args.command == "explain":
        return cmd_explain(args)
    if args.command == "client":
        return cmd_client(args)
    if args.command == "proxy":
        return cmd_proxy(args)
    if args.command == "baseline":
        return cmd_baseline(args)
    if args.command == "matrix":
        from .matrix.command import main as matrix_main

        return matrix_main(args)
    return cmd_serve(args)


# -- run ---------------------------------------------------------------------------------------------

class _FreezeOnceCollected:
    """The run's own objects (modules, the catalogue, the collected suite) live until the process ends, and every
    full collection of Python's cyclic garbage collector walked them all again: 12 % of an a2a run's CPU against
    one URL (docs/bench.md). `gc.freeze()` moves them out of its reach once before pytest starts and once the
    suite is collected (and back when pytest returns, for a caller of `main(argv)` in its own process); what the
    scenarios allocate is collected as before. Only `streamcert run` does it: a user's own pytest process with the
    plugin is left alone."""

    @staticmethod
    def pytest_collection_finish(session: object) -> None:
        gc.freeze()


def cmd_run(args: argparse.Namespace, parser: argparse.ArgumentParser, program: bool = False) -> int:
    import pytest

    from .running.preflight import check_targets

    try:  # the command line, else the STREAMCERT_* environment variables, else the defaults
        values = run_options.resolve({opt.name: getattr(args, opt.name) for opt in run_options.RUN_OPTIONS})
    except run_options.OptionError as exc:
        parser.error(str(exc))
    vars(args).update(values)
    if args.fault and args.a2a_url:
        parser.error("--fault selects a variant of the embedded reference; it cannot be used with --url")
    # other agents of the one given by --url
    for twin in ("nostream_url", "no_plan_url", "plan_shadow_url", "required_ext_url", "secured_url"):
        if getattr(args, twin) and not args.a2a_url:
            parser.error(f"--{twin.removesuffix('_url').replace('_', '-')}-url goes with --url")
    if names_a_target(values):
        options = {opt.name: opt.cli for opt in run_options.RUN_OPTIONS}
        for profile in args.profiles:
            slot = SLOT_OF_PROFILE[profile]
            if not values[slot.field]:
                parser.error(f"--profile {profile} has no target: give {options[slot.field]}")
    refused = (run_options.refuse_replacing(values)  # cassettes --record would replace, without --overwrite
               or selection.refuse(values, {opt.name: opt.cli for opt in run_options.RUN_OPTIONS}))
    if refused:
        parser.error(refused)
    if not args.report:  # the default is checked like a given one, before the run
        try:
            run_options.writable_dir(run_options.DEFAULT_REPORT)
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument --report: {exc}")

    report_dir = Path(args.report or run_options.DEFAULT_REPORT)
    values["report"] = str(report_dir)
    target = run_options.target_of(values)
    scrubber = Scrubber.of(target)
    if names_a_target(values):
        checked = check_targets(target, wait=args.wait_for_target, scrubber=scrubber,
                                say=lambda line: print(f"streamcert: {line}", file=sys.stderr, flush=True))
        for note in checked.notes:
            print(f"streamcert: {note}", file=sys.stderr)
        if checked.fatal:
            return could_not_run(checked.fatal, args, values, report_dir, target, scrubber)
        if args.wait_for_target and checked.waited >= 0.5:
            print(f"streamcert: the target answered after {checked.waited:.1f} s", file=sys.stderr)
    from .drivers.binding_choice import refusal

    refused = (refusal(args.bindings, target, embedded=not names_a_target(values))
               if values.get("a2a_url") or not names_a_target(values) else None)
    if refused:  # a binding named that cannot be certified: the run would end INCOMPLETE
        parser.error(refused)

    extra = [a for a in args.pytest_args if a != "--"]
    # The suite asserts nothing with `assert`, so no module is rewritten for it (--assert=plain): pytest would
    # otherwise rewrite every module of each installed plugin's distribution as it is imported (hypothesis's, from
    # the test extra: a second of CPU per process where no bytecode cache is writable). An `--assert` after --
    # wins. The CLI has imported streamcert before pytest loads it as a plugin, so pytest could not rewrite its
    # asserts anyway; that warning is noise for a user.
    pytest_args = ["--pyargs", "streamcert.suite", "-p", "no:cacheprovider", "-c", os.devnull, "--assert=plain",
                   "-W", "ignore::pytest.PytestAssertRewriteWarning",
                   "--rootdir", str(Path.cwd()), "-q", "-rN",
                   "-o", "console_output_style=classic"]  # a line per test (running/live.py), no [100%] after them
    # Nor is hypothesis's pytest plugin (installed with the test extra) of any use to the suite: importing it costs each
    # pytest process about 0.2 s of CPU. Kept when an argument after -- speaks of hypothesis (its options, its plugin).
    if not any("hypothesis" in a for a in extra):
        pytest_args += ["-p", "no:hypothesispytest"]
    gc.freeze()  # what start-up made lives as long as the run (see _FreezeOnceCollected)
    try:
        code = pytest.main(pytest_args + run_options.pytest_args(values) + extra, plugins=[_FreezeOnceCollected()])
    finally:
        if not program:  # main(argv) called in someone's process: its heap back as it was. The command itself
            gc.unfreeze()  # is about to exit, and its last collection need not walk all it froze again.
    if code == pytest.ExitCode.USAGE_ERROR:  # an option after -- that pytest refused (it said which)
        return EXIT_USAGE
    report_file = report_dir / "compatibility.json"
    if not report_file.is_file():
        print("streamcert: no report was written (see the pytest output above)", file=sys.stderr)
        return EXIT_COULD_NOT_RUN
    return exit_codes.of_report(json.loads(report_file.read_text("utf-8")))  # --against: a regression fails it


def could_not_run(reason: str, args: argparse.Namespace, values: dict, report_dir: Path, target: Target,
                  scrubber: Scrubber) -> int:
    """No target answered: one line on stderr, a report whose every selected requirement is ERROR with
    that reason (verdict INCOMPLETE), and exit code 3."""
    from .catalogue import load_catalogue
    from .plugin import target_json
    from .report.aggregate import Aggregator, build_report
    from .report.summary import terminal_summary
    from .report.writers import write_all
    from .targets import served_profiles
    from .wallclock import now

    started = now()
    print(f"streamcert: {reason}; nothing was run (report: {report_dir}/compatibility.json)", file=sys.stderr)
    profiles = set(args.profiles) or served_profiles(values)
    report = build_report(Aggregator(), selected_profiles=profiles, level=args.level,
                          target=target_json(target, scrubber, fault=None, embedded=False),
                          started=started, finished=now(), catalogue=load_catalogue(), could_not_run=reason,
                          selection=selection.narrowing(profiles, args.requirements, args.scenarios))
    try:
        write_all(scrubber.value(report), report_dir)
    except OSError as exc:
        print(scrubber.text(f"streamcert: cannot write the report into {report_dir}: {exc}"), file=sys.stderr)
    for line in terminal_summary(report):
        print(scrubber.text(line))
    return EXIT_COULD_NOT_RUN


# -- check and diff --------------------------------------------------------------------------------------

def _cassette_cap(parser: argparse.ArgumentParser) -> None:
    cap = limits.MAX_CASSETTE
    parser.add_argument(cap.option, dest=cap.field, type=limits.byte_size, default=int(cap.default), metavar="SIZE",
                        help=f"refuse a cassette file larger than this (default {limits.show(cap.default, cap.unit)})")


def cmd_check(args: argparse.Namespace) -> int:
    """Exit 0: no departure in the recordings (whatever they did not exercise); 1: a requirement FAIL or
    ERROR; 2: a cassette missing or unreadable (docs/cassettes.md)."""
    from .running.offline import check_cassettes, departures

    try:
        report = check_cassettes([Path(p) for p in args.cassettes], Path(args.report), args.max_cassette_bytes)
    except (OSError, ValueError) as exc:
        print(f"streamcert check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 1 if departures(report) else 0


def cmd_diff(args: argparse.Namespace) -> int:
    from .running.offline import diff_cassettes, show_diff

    try:
        diff = diff_cassettes(Path(args.old), Path(args.new), args.timing_tolerance, args.max_cassette_bytes)
    except (OSError, ValueError) as exc:
        print(f"streamcert diff: {exc}", file=sys.stderr)
        return EXIT_USAGE
    shown = show_diff(diff, Path(args.old), Path(args.new), args.json)
    try:
        if shown:
            print(shown, flush=True)
    except BrokenPipeError:  # `streamcert diff … | head`: the reader has what it wanted
        sys.stdout = None  # type: ignore[assignment]  (nothing more is written to the closed pipe)
    return 1 if diff.count else 0


# -- replay and convert ----------------------------------------------------------------------------------

def cmd_replay(args: argparse.Namespace) -> int:
    from .recordings.replay import serve

    try:
        serve(args.cassettes, args.port, args.pace, args.scenario, max_bytes=args.max_cassette_bytes)
    except (OSError, ValueError) as exc:
        print(f"streamcert replay: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    from .recordings.cassette import convert, load, path_for
    from .safe_names import UnsafeName

    try:
        for source in args.cassettes:
            try:  # a scenario name that would leave the folder (safe_names): refused, nothing written
                target = path_for(args.into or Path(source).parent, load(source, args.max_cassette_bytes).scenario)
            except UnsafeName as exc:
                print(f"streamcert convert: {source}: {exc}", file=sys.stderr)
                return EXIT_USAGE
            if target.exists() and not args.overwrite:
                print(f"streamcert convert: {target} is already there (give --overwrite to replace it)",
                      file=sys.stderr)
                return EXIT_USAGE
            print(f"{source} → {convert(source, args.into, args.max_cassette_bytes)}")
    except (OSError, ValueError) as exc:
        print(f"streamcert convert: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0


# -- list, explain and baseline --------------------------------------------------------------------------

def _print(text: str) -> None:
    try:
        print(text, flush=True)
    except BrokenPipeError:  # `streamcert list | head`: the reader has what it wanted
        sys.stdout = None  # type: ignore[assignment]  (nothing more is written to the closed pipe)


def _width() -> int | None:
    """The terminal's width when standard output is one (lines are cut to it), else None (whole lines)."""
    import shutil

    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def cmd_list(args: argparse.Namespace) -> int:
    from .running.listing import Selection, list_json, requirement_lines, scenario_lines

    selection = Selection(frozenset(args.profiles), args.level, tuple(args.globs))
    if args.json:
        _print(json.dumps(list_json(selection, args.scenarios), indent=1, ensure_ascii=False))
        return 0
    if args.scenarios:
        lines = scenario_lines(selection.scenarios(), _width())
    else:
        lines = requirement_lines(selection.requirements(), _width())
    if not lines:
        print(f"streamcert list: no {'scenario' if args.scenarios else 'requirement'} matches", file=sys.stderr)
        return 1
    _print("\n".join(lines))
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from .running.listing import UnknownRequirement, explain_json, explain_lines, find_requirement

    try:
        req = find_requirement(args.req_id)
    except UnknownRequirement as exc:
        print(f"streamcert explain: {exc}", file=sys.stderr)
        return EXIT_USAGE
    _print(json.dumps(explain_json(req), indent=1, ensure_ascii=False) if args.json else "\n".join(explain_lines(req)))
    return 0


def cmd_baseline(args: argparse.Namespace) -> int:
    from .report.baseline import baseline_yaml

    source = Path(args.report_path)
    if source.is_dir():
        source = source / "compatibility.json"
    try:
        report = json.loads(source.read_text("utf-8"))
        if not isinstance(report, dict):
            raise ValueError("not a compatibility.json (not a JSON object)")
        text = baseline_yaml(report, str(source))
    except OSError as exc:
        print(f"streamcert baseline: {source}: cannot read it ({exc.strerror or exc})", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:  # not JSON, not a report, a report of a run that could not run
        print(f"streamcert baseline: {source}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not args.output:
        _print(text.rstrip("\n"))
        return 0
    output = Path(args.output)
    if output.exists() and not args.overwrite:
        print(f"streamcert baseline: {output} is already there (give --overwrite to replace it)", file=sys.stderr)
        return EXIT_USAGE
    try:
        output.write_text(text, "utf-8")
    except OSError as exc:
        print(f"streamcert baseline: cannot write {output} ({exc.strerror or exc})", file=sys.stderr)
        return EXIT_USAGE
    count = sum(line.startswith("- id: ") for line in text.splitlines())
    print(f"streamcert baseline: {count} expected failure(s) written to {output}; edit their reasons", file=sys.stderr)
    return 0


# -- client --------------------------------------------------------------------------------------------

def _client_fault(name: str) -> str:
    from .reference.faults import fault_argument

    return fault_argument("client")(name)


def cmd_client(args: argparse.Namespace) -> int:
    """`streamcert client`: the reference client (reference/client/), with the §7 environment."""
    from .reference.client.client import main as client_main

    if not args.url and not os.environ.get("STREAMCERT_URL"):
        print("streamcert client: no agent URL: give URL or set STREAMCERT_URL", file=sys.stderr)
        return EXIT_USAGE
    argv = [args.url] if args.url else []
    argv += ["--fault", args.fault] if args.fault else []
    argv += ["--deadline", str(args.deadline)] if args.deadline else []
    return client_main(argv)


# -- proxy ---------------------------------------------------------------------------------------------

def cmd_proxy(args: argparse.Namespace) -> int:
    """Exit 0: no departure in what passed (as `check`); 1: a requirement FAIL or ERROR; 2: a usage error."""
    from .running.offline import departures
    from .running.proxy import ProxySettings, origin_of, serve
    from .wire.bounds import Bounds

    try:
        environ = {o.env: os.environ[o.env] for o in run_options.RUN_OPTIONS if o.name in PROXY_OPTIONS
                   and o.env in os.environ}  # (only the proxy's own options: another run option's is not read)
        values = run_options.resolve({name: getattr(args, name) for name in PROXY_OPTIONS}, environ)
        target = Target(**{k: tuple(values[k]) if k == "scrub" else values[k] for k in PROXY_OPTIONS})
        settings = ProxySettings(origin_of(args.upstream), target.stream_limit, target.timeout, Bounds.of(target),
                                 args.max_exchanges, args.duration)
        report = serve(settings, args.port, Path(args.record), Path(args.report), target.scrub)
    except (OSError, ValueError) as exc:  # the port taken, a directory not writable, an option's value (OptionError)
        print(f"streamcert proxy: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 1 if report and departures(report) else 0


# -- serve ---------------------------------------------------------------------------------------------

def cmd_serve(args: argparse.Namespace) -> int:
    from .reference.agent.auth import SECURED_TOKEN_ENV
    from .reference.agent.server import ReferenceServer
    from .reference.faults import describe_faults

    if args.list_faults:
        print("\n".join(sorted(describe_faults())))
        return 0
    from .reference.agent.agents import with_push_at_root

    steps = tuple(args.script_steps.split(",")) if args.script_steps else None
    agents = with_push_at_root() if args.push else None
    try:
        ReferenceServer(fault=args.fault, deterministic=args.deterministic, port=args.port, d3=args.d3,
                        script_steps=steps, ignore_script=args.ignore_script, auth=args.auth or None,
                        secured_token=os.environ.get(SECURED_TOKEN_ENV) or None,
                        **({"agents": agents} if agents else {})).serve()
    except OSError as exc:  # the port is in use (or not ours to take): nothing was served
        print(f"streamcert serve: cannot listen on 127.0.0.1:{args.port} ({exc.strerror or exc}); "
              "give another --port, or --port 0 for a free one", file=sys.stderr)
        return EXIT_USAGE
    return 0


if __name__ == "__main__":
    sys.exit(main())
