"""The `streamcert` command (DESIGN §5): run, check, diff, serve."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from urllib.parse import urlparse

from .catalogue import PROFILES

EXIT_USAGE = 2


def _url(value: str) -> str:
    parsed = urlparse(value)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise argparse.ArgumentTypeError(f"{value!r} is not an http(s) URL such as http://127.0.0.1:41241")
    return value.rstrip("/")


def _positive(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be greater than 0")
    return number


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="streamcert", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, metavar="{run,check,diff,serve}")

    run = sub.add_parser("run", help="certify an implementation (default: the embedded reference)")
    run.add_argument("--url", type=_url, help="A2A agent base URL (card at URL/.well-known/agent-card.json)")
    run.add_argument("--nostream-url", type=_url, help="an agent of the same implementation with streaming: false")
    run.add_argument("--acp-cmd", help="an ACP agent, started as a subprocess")
    run.add_argument("--progress-url", type=_url, help="a progress stream")
    run.add_argument("--client-cmd", help="a client to certify")
    run.add_argument("--line-cmd", help="a progress-line renderer to certify")
    run.add_argument("--progress-pointer", default="/progress",
                     help="JSON pointer to the progress object in each progress-stream event")
    run.add_argument("--progress-cases", help="another copy of cases/progress.json to judge by")
    run.add_argument("--profile", action="append", choices=PROFILES, default=[],
                     help="profile to certify (repeatable); default: every profile that has a target")
    run.add_argument("--level", choices=("must", "should", "may"), default="may",
                     help="lowest requirement level judged (default: may, i.e. all)")
    run.add_argument("--report", default="reports/latest", help="report directory (default reports/latest)")
    run.add_argument("--record", help="write a cassette of each scenario into this directory")
    run.add_argument("--baseline", help="expected failures: a JSON file (see the README)")
    run.add_argument("--fault", help="embedded reference only: run the suite against this fault variant")
    run.add_argument("--stream-limit", type=_positive, default=15.0, help="seconds a stream may stay open")
    run.add_argument("--timeout", type=_positive, default=10.0, help="seconds to wait for a unary answer")
    run.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                     help="header sent on every request (scrubbed from every output)")
    run.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after --: options passed to pytest (-n 2, -k …)")

    check = sub.add_parser("check", help="judge recorded cassettes offline with the same rules")
    check.add_argument("cassettes", nargs="+")
    check.add_argument("--report", default="reports/check", help="report directory (default reports/check)")

    diff = sub.add_parser("diff", help="regression diff of two cassettes of one scenario")
    diff.add_argument("old")
    diff.add_argument("new")

    serve = sub.add_parser("serve", help="run the reference implementation in the foreground")
    serve.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    serve.add_argument("--fault", help="run this fault variant")
    serve.add_argument("--list-faults", action="store_true", help="list the fault variants and exit")
    serve.add_argument("--deterministic", action="store_true", help="fixed clock and ids: byte-stable streams")
    serve.add_argument("--d3", choices=("close", "open"), default="close",
                       help="conflict D3: at an interrupted state streams close (default) or stay open")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "run":
        return cmd_run(args, parser)
    if args.command == "check":
        return cmd_check(args)
    if args.command == "diff":
        return cmd_diff(args)
    return cmd_serve(args, parser)


# -- run ---------------------------------------------------------------------------------------------

def cmd_run(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    import pytest

    from .reference.faults import FAULTS

    if args.fault and args.url:
        parser.error("--fault selects a variant of the embedded reference; it cannot be used with --url")
    if args.fault and args.fault not in FAULTS:
        parser.error(f"unknown fault {args.fault!r}; `streamcert serve --list-faults` lists them")
    if args.nostream_url and not args.url:
        parser.error("--nostream-url goes with --url")
    needs = {"acp": args.acp_cmd, "progress": args.progress_url, "client": args.client_cmd, "line": args.line_cmd,
             "a2a": args.url, "interactions": args.url, "plans": args.url}
    embedded = not any((args.url, args.acp_cmd, args.progress_url, args.client_cmd, args.line_cmd))
    for profile in args.profile:
        if not embedded and not needs[profile]:
            parser.error(f"--profile {profile} has no target: give "
                         + {"acp": "--acp-cmd", "progress": "--progress-url", "client": "--client-cmd",
                            "line": "--line-cmd"}.get(profile, "--url"))
    for header in args.header:
        if ":" not in header:
            parser.error(f"--header {header!r} is not 'NAME: VALUE'")
    if args.baseline and not Path(args.baseline).is_file():
        parser.error(f"--baseline {args.baseline}: no such file")
    if args.progress_cases:
        from .progress_cases import CasesError, load_cases

        try:
            load_cases(args.progress_cases)
        except CasesError as exc:
            parser.error(f"--progress-cases: {exc}")
    if args.url:
        problem = _preflight(args.url, args.timeout)
        if problem:
            print(f"streamcert: {problem}", file=sys.stderr)

    report_dir = Path(args.report)
    extra = [a for a in args.pytest_args if a != "--"]
    # The CLI has imported streamcert before pytest loads it as a plugin, so pytest cannot rewrite
    # its asserts (the suite asserts nothing with `assert`); that warning is noise for a user.
    pytest_args = ["--pyargs", "streamcert.suite", "-p", "no:cacheprovider", "-c", os.devnull,
                   "-W", "ignore::pytest.PytestAssertRewriteWarning",
                   "--rootdir", str(Path.cwd()), "-q", "-rN",
                   "--junitxml", str(report_dir / "junit.xml"), "--streamcert-report", str(report_dir),
                   "--streamcert-level", args.level, "--stream-limit", str(args.stream_limit),
                   "--sut-timeout", str(args.timeout)]
    for flag, value in (("--sut-url", args.url), ("--sut-nostream-url", args.nostream_url),
                        ("--acp-cmd", args.acp_cmd), ("--progress-url", args.progress_url),
                        ("--client-cmd", args.client_cmd), ("--line-cmd", args.line_cmd),
                        ("--record", args.record), ("--baseline", args.baseline), ("--sut-fault", args.fault),
                        ("--progress-pointer", args.progress_pointer), ("--progress-cases", args.progress_cases)):
        if value:
            pytest_args += [flag, value]
    for profile in args.profile:
        pytest_args += ["--streamcert-profile", profile]
    for header in args.header:
        pytest_args += ["--sut-header", header]
    pytest.main(pytest_args + extra)
    report_file = report_dir / "compatibility.json"
    if not report_file.is_file():
        print("streamcert: no report was written (see the pytest output above)", file=sys.stderr)
        return 1
    verdict = json.loads(report_file.read_text("utf-8")).get("verdict")
    return 0 if verdict == "PASS" else 1


def _preflight(url: str, timeout: float) -> str | None:
    """One line that says why the target cannot be reached, if it cannot."""
    import httpx

    from .a2a import CARD_PATH

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

def cmd_serve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from .reference.faults import FAULTS
    from .reference.server import serve

    if args.list_faults:
        width = max(len(n) for n in FAULTS)
        for name, fault in sorted(FAULTS.items()):
            print(f"{name:<{width}}  {', '.join(fault.catches):<28}  {fault.description}")
        return 0
    if args.fault and args.fault not in FAULTS:
        parser.error(f"unknown fault {args.fault!r}; `streamcert serve --list-faults` lists them")
    if not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port} is not a port number")
    serve(port=args.port, fault=args.fault, deterministic=args.deterministic, d3=args.d3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
