"""The `streamcert` command (DESIGN §5): run, check, diff, serve."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from . import run_options
from .targets import SLOT_OF_PROFILE, names_a_target

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="streamcert", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{run,check,diff,serve}")

    run = sub.add_parser("run", help="certify an implementation (default: the embedded reference)")
    for opt in run_options.RUN_OPTIONS:
        opt.add_to(run.add_argument, opt.cli, dest=opt.name)
    run.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after --: options passed to pytest (-n 2, -k …)")

    check = sub.add_parser("check", help="judge recorded cassettes offline with the same rules")
    check.add_argument("cassettes", nargs="+")
    check.add_argument("--report", default="reports/check", help="report directory (default reports/check)")

    diff = sub.add_parser("diff", help="regression diff of two cassettes of one scenario")
    diff.add_argument("old")
    diff.add_argument("new")

    serve = sub.add_parser("serve", help="run the reference implementation in the foreground")
    serve.add_argument("--port", type=_port, default=0, help="port on 127.0.0.1 (0: a free one)")
    serve.add_argument("--fault", type=run_options.fault_name, help="run this fault variant")
    serve.add_argument("--list-faults", action="store_true", help="list the fault variants and exit")
    serve.add_argument("--deterministic", action="store_true", help="fixed clock and ids: byte-stable streams")
    serve.add_argument("--d3", choices=("close", "open"), default="close",
                       help="conflict D3: at an interrupted state streams close (default) or stay open")
    return parser


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number")
    return port


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "run":
        return cmd_run(args, parser)
    if args.command == "check":
        return cmd_check(args)
    if args.command == "diff":
        return cmd_diff(args)
    return cmd_serve(args)


# -- run ---------------------------------------------------------------------------------------------

def cmd_run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import pytest

    values = {opt.name: getattr(args, opt.name) for opt in run_options.RUN_OPTIONS}
    if args.fault and args.a2a_url:
        parser.error("--fault selects a variant of the embedded reference; it cannot be used with --url")
    if args.nostream_url and not args.a2a_url:
        parser.error("--nostream-url goes with --url")
    if names_a_target(values):
        options = {opt.name: opt.cli for opt in run_options.RUN_OPTIONS}
        for profile in args.profiles:
            slot = SLOT_OF_PROFILE[profile]
            if not values[slot.field]:
                parser.error(f"--profile {profile} has no target: give {options[slot.field]}")
    if args.a2a_url:
        problem = _preflight(args.a2a_url, args.timeout)
        if problem:
            print(f"streamcert: {problem}", file=sys.stderr)

    report_dir = Path(args.report or run_options.DEFAULT_REPORT)
    values["report"] = str(report_dir)
    extra = [a for a in args.pytest_args if a != "--"]
    # The CLI has imported streamcert before pytest loads it as a plugin, so pytest cannot rewrite
    # its asserts (the suite asserts nothing with `assert`); that warning is noise for a user.
    pytest_args = ["--pyargs", "streamcert.suite", "-p", "no:cacheprovider", "-c", os.devnull,
                   "-W", "ignore::pytest.PytestAssertRewriteWarning",
                   "--rootdir", str(Path.cwd()), "-q", "-rN", "--junitxml", str(report_dir / "junit.xml")]
    pytest.main(pytest_args + run_options.pytest_args(values) + extra)
    report_file = report_dir / "compatibility.json"
    if not report_file.is_file():
        print("streamcert: no report was written (see the pytest output above)", file=sys.stderr)
        return 1
    verdict = json.loads(report_file.read_text("utf-8")).get("verdict")
    return 0 if verdict == "PASS" else 1


def _preflight(url: str, timeout: float) -> str | None:
    """One line that says why the target cannot be reached, if it cannot."""
    import httpx

    from .protocols.a2a import CARD_PATH

    try:
        httpx.get(url + CARD_PATH, timeout=min(timeout, 5.0))
    except httpx.HTTPError as exc:
        return f"cannot reach {url} ({type(exc).__name__}: {exc or 'no answer'}); its requirements will be ERROR"
    return None


# -- check and diff --------------------------------------------------------------------------------------

def cmd_check(args: argparse.Namespace) -> int:
    from .offline import check_cassettes

    try:
        report = check_cassettes([Path(p) for p in args.cassettes], Path(args.report))
    except (OSError, ValueError) as exc:
        print(f"streamcert check: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0 if report["verdict"] == "PASS" else 1


def cmd_diff(args: argparse.Namespace) -> int:
    from .offline import diff_cassettes

    try:
        lines = diff_cassettes(Path(args.old), Path(args.new))
    except (OSError, ValueError) as exc:
        print(f"streamcert diff: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for line in lines:
        print(line)
    return 1 if lines else 0


# -- serve ---------------------------------------------------------------------------------------------

def cmd_serve(args: argparse.Namespace) -> int:
    from .reference.faults import describe_faults
    from .reference.server import ReferenceServer

    if args.list_faults:
        print("\n".join(sorted(describe_faults())))
        return 0
    ReferenceServer(fault=args.fault, deterministic=args.deterministic, port=args.port, d3=args.d3).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
