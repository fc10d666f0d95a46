"""The options of a run, declared once (docs/contracts.md §5). `streamcert run` and the pytest plugin are both
built from `RUN_OPTIONS`, and the CLI hands its values on to pytest with `pytest_args`.

An option's `name` is its value's key on both sides (for a target, the `Target` field it sets), `cli`
its flag on `streamcert run`, `pytest` its flag in a pytest run: always `--streamcert-` and the `cli` flag's
name (`--url` → `--streamcert-url`). `first` is the flag the plugin first gave it; where that differs
(`--sut-url`), it stays a deprecated alias (`alias`) that still works (docs/contracts.md §5, "pytest options").
A validator turns the text given into the value, or raises ArgumentTypeError: argparse and pytest
then report a usage error naming the flag.

Every option is also an environment variable and a pytest ini key, named after its first flag (`ini`,
`env`: `--sut-url` → `streamcert_sut_url`, `STREAMCERT_SUT_URL`; these names are a contract and stay).
`resolve` is the one place that gives
an option its value: the command line, else the environment, else the ini file (pytest only), else the
default; a value from the environment or an ini file goes through the same validator, and a bad one is
refused naming the variable or the key.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from . import limits
from .catalogue import PROFILES
from .running import selection
from .targets import Target

DEFAULT_REPORT = "reports/latest"
DEFAULT_TIMING_TOLERANCE = 1.0  # capture_diff.DEFAULT_TOLERANCE_S (not imported: the CLI starts fast)


# -- validators ------------------------------------------------------------------------------------

def http_url(value: str) -> str:
    """An http(s) URL the run can reach, checked whole before the run: a port that is no number or past
    65535 (`:4831x`, `:99999`), a space or a control character is refused here, in one line, not found out
    as a traceback mid-run. The refusal quotes the URL with its user info masked."""
    shown = repr(_WITHOUT_USERINFO.sub(r"\1***@", value))
    example = "an http(s) URL such as http://127.0.0.1:41241"
    try:
        parsed = urlparse(value)
        port = parsed.port
    except ValueError as exc:  # the port is not a number, or out of range
        raise argparse.ArgumentTypeError(f"{shown} is not {example} ({exc})") from None
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise argparse.ArgumentTypeError(f"{shown} is not {example}")
    if port == 0:
        raise argparse.ArgumentTypeError(f"{shown} names port 0, which no server listens on")
    if re.search(r"[\x00-\x20\x7f]", value):
        raise argparse.ArgumentTypeError(f"{shown} holds a space or a control character")
    return value.rstrip("/")


_WITHOUT_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")


def host_port(value: str) -> str:
    """HOST:PORT for a server of the suite to listen on (port 0: a free one), where it can listen now: an
    address this machine does not have, or a port already taken, is a usage error before the run, never an
    OSError in the middle of it."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is not HOST:PORT such as 127.0.0.1:8765")
    import socket  # here: `streamcert list` and `explain` load this module and no network stack

    try:
        family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server will: TIME_WAIT is no taker
            probe.bind((host.strip("[]"), int(port)))
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot listen on {value}: {exc.strerror or exc}") from None
    return value


def positive(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if number <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} must be greater than 0")
    return number


def nonnegative(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"{value!r} must not be negative")
    return number


def level(value: str) -> str:
    """A requirement level in any case (`MUST`, `must`, `Must`): the lower-case name the choices hold."""
    return value.strip().lower()


def header(value: str) -> str:
    if ":" not in value:
        raise argparse.ArgumentTypeError(f"{value!r} is not 'NAME: VALUE'")
    return value


def parse_header(raw: str) -> tuple[str, str]:
    name, _, value = raw.partition(":")
    return name.strip(), value.strip()


def fault_name(value: str) -> str:
    from .reference.faults import check_fault

    try:
        return check_fault(value)
    except ValueError as exc:  # the one message for an unknown name (reference/faults.py)
        raise argparse.ArgumentTypeError(str(exc)) from None


def origin(value: str) -> str:
    """An origin, scheme://host[:port] (RFC 6454): no path, query, fragment or user info."""
    parsed = urlparse(value)
    try:
        port = parsed.port
    except ValueError:
        port = -1
    if (parsed.scheme not in ("http", "https") or not parsed.hostname or parsed.path not in ("", "/")
            or parsed.query or parsed.fragment or "@" in parsed.netloc or port == -1):
        raise argparse.ArgumentTypeError(f"{value!r} is not an origin such as https://agent.example.com:8443 "
                                         "(scheme://host[:port], no path)")
    host = parsed.hostname if ":" not in parsed.hostname else f"[{parsed.hostname}]"
    return f"{parsed.scheme}://{host}" + (f":{port}" if port is not None else "")


def baseline_file(value: str) -> str:
    """A baseline that can be read, is YAML or JSON, has the documented shape and names only known ids and
    scenarios (report/baseline.py)."""
    from .report.baseline import load_baseline

    try:
        load_baseline(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def script_steps(value: str) -> str:
    """A comma-separated list of script step names (protocols/script.py STEP_NAMES), normalized."""
    from .protocols.script import STEP_NAMES

    names = [n.strip() for n in value.split(",") if n.strip()]
    if unknown := [n for n in names if n not in STEP_NAMES]:
        raise argparse.ArgumentTypeError(f"{', '.join(map(repr, unknown))}: no such script step (the steps: "
                                         f"{', '.join(STEP_NAMES)})")
    return ",".join(dict.fromkeys(names))


def json_value(value: str) -> str:
    """A JSON text (an answer the run gives where the agent pauses)."""
    try:
        json.loads(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{value!r} is not JSON ({exc})") from None
    return value


def writable_dir(value: str) -> str:
    """A directory the run can write into (it is created at the end if missing). Checked without
    leaving anything behind: a file is created in the nearest existing folder and removed at once."""
    path = Path(value)
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        where = "is a file" if existing == path else f"is under {existing}, which is a file"
        raise argparse.ArgumentTypeError(f"{value}: cannot be a directory: it {where}")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{value}: cannot be written ({exc.strerror or exc})") from None
    return value


def cassette_dir(value: str) -> str:
    """A directory that holds cassettes (<scenario>.yaml, or older <scenario>.json)."""
    path = Path(value)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{value}: not a directory of cassettes")
    if not any(p.suffix in (".yaml", ".yml", ".json") for p in path.iterdir()):
        raise argparse.ArgumentTypeError(f"{value}: holds no cassette (<scenario>.yaml)")
    return value


def card_key_file(value: str) -> str:
    """A JWK or JWKS file of public keys (card_keys.py): read and checked now, so that a bad one is a usage error."""
    from .card_keys import CardKeyError, load

    try:
        load(value)
    except CardKeyError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def scrub_pattern(value: str) -> str:
    if not value.strip():
        raise argparse.ArgumentTypeError("an empty pattern would name nothing")
    return value.strip()


def progress_cases_file(value: str) -> str:
    from .recordings.progress_cases import CasesError, load_cases

    try:
        load_cases(value)
    except CasesError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


# -- the table -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RunOption:
    name: str
    cli: str
    first: str  # the plugin's first flag for it: names its ini key and variable; an alias if not `pytest`
    help: str
    type: Callable[[str], Any] | None = None
    default: Any = None
    choices: tuple[str, ...] | None = None
    repeat: bool = False  # may be given several times: the value is a list
    metavar: str | None = None
    flag: bool = False  # takes no value: given, it is True

    @property
    def pytest(self) -> str:
        """Its flag in a pytest run: `--streamcert-` and the name of its `streamcert run` flag."""
        return "--streamcert-" + self.cli.removeprefix("--")

    @property
    def alias(self) -> str | None:
        """Its older pytest flag, still accepted with a deprecation note; None when it never had another."""
        return self.first if self.first != self.pytest else None

    @property
    def alias_dest(self) -> str:
        """Where pytest keeps the value given under the alias (apart, so that its use can be told)."""
        return "streamcert_alias_" + self.name

    @property
    def ini(self) -> str:
        """Its pytest ini key: its first flag without dashes, `streamcert_` in front unless it starts so."""
        key = self.first.lstrip("-").replace("-", "_")
        return key if key.startswith("streamcert_") else "streamcert_" + key

    @property
    def env(self) -> str:
        """Its environment variable (STREAMCERT_SUT_URL); never one of docs/contracts.md §7's client variables."""
        return self.ini.upper()

    @property
    def separators(self) -> str:
        """What separates the values of a repeatable option in one variable or ini value: newlines, and commas
        too except for headers (a header's value may hold a comma)."""
        return "\n" if self.name in ("headers", "prompts", "answers") else "\n,"

    def add_to(self, add: Callable[..., Any], flag: str, **extra: Any) -> None:
        """Declare the option through `add` (argparse's add_argument or pytest's addoption). Its default is
        None there, so that `resolve` can tell an option given on the command line from one to take from the
        environment, an ini file or the default."""
        shown = f"{self.help} [env {self.env}]".replace("%", "%%")  # (argparse formats help with %)
        if self.flag:
            add(flag, **{"action": "store_true", "help": shown, "default": None, **extra})
            return
        kwargs: dict[str, Any] = {"help": shown, "default": None, **extra}
        if self.repeat:
            kwargs["action"] = "append"
        for key in ("type", "choices"):
            if getattr(self, key) is not None:
                kwargs[key] = getattr(self, key)
        if self.choices is None:  # named after the flag, not after `name`
            kwargs["metavar"] = self.metavar or flag.lstrip("-").removeprefix("streamcert-").replace("-", "_").upper()
        add(flag, **kwargs)


_DEFAULTS = Target()  # the drivers' limits when nobody says otherwise

RUN_OPTIONS = (
    RunOption("a2a_url", "--url", "--sut-url", "A2A agent base URL (card at URL/.well-known/agent-card.json)",
              http_url),
    RunOption("nostream_url", "--nostream-url", "--sut-nostream-url",
              "an agent of the same implementation whose card declares streaming: false", http_url),
    RunOption("no_plan_url", "--no-plan-url", "--sut-no-plan-url",
              "the same implementation's agent without update_plan (plans profile)", http_url),
    RunOption("plan_shadow_url", "--plan-shadow-url", "--sut-plan-shadow-url",
              "the same implementation's agent with its own tool named update_plan (plans profile)", http_url),
    RunOption("required_ext_url", "--required-ext-url", "--sut-required-ext-url",
              "the same implementation's agent whose card marks an extension required: true", http_url),
    RunOption("secured_url", "--secured-url", "--streamcert-secured-url",
              "the same implementation's agent whose card requires credentials (securityRequirements), judged "
              "with --header's credentials when the target's card requires none", http_url),
    RunOption("script_steps", "--script-steps", "--sut-script-steps",
              "the script steps the A2A agent's test agent plays, comma-separated, when its card cannot say so (e.g. "
              "artifact,sleep,finish): what rests on the others is UNSUPPORTED", script_steps, metavar="STEP,…"),
    RunOption("prompts", "--prompt", "--sut-prompt",
              "judge the A2A agent as it is, without a script: send this prompt (repeatable); what needs a script is "
              "NOT_TESTED", repeat=True, metavar="TEXT"),
    RunOption("answers", "--answer", "--sut-answer",
              "with --prompt: the answer (JSON: a string is sent as text, an object as a data part) given where the "
              "agent pauses, in turn (repeatable)", json_value, repeat=True, metavar="JSON"),
    RunOption("push_agent_url", "--push-agent-url", "--sut-push-agent-url",
              "an A2A agent whose card declares pushNotifications: true (profile push; may be the --url agent)",
              http_url),
    RunOption("push_receiver", "--push-receiver", "--streamcert-push-receiver",
              "HOST:PORT the suite's webhook receiver listens on (default 127.0.0.1 on a free port)", host_port,
              metavar="HOST:PORT"),
    RunOption("push_url", "--push-url", "--streamcert-push-url",
              "the receiver's base URL as the agent reaches it (default http://HOST:PORT it listens on)", http_url,
              metavar="URL"),
    RunOption("acp_cmd", "--acp-cmd", "--acp-cmd", "an ACP agent, started as a subprocess"),
    RunOption("progress_url", "--progress-url", "--progress-url", "a progress stream", http_url),
    RunOption("client_cmd", "--client-cmd", "--client-cmd", "a client to certify"),
    RunOption("client_base", "--client-base", "--streamcert-client-base",
              "with --client-cmd: build the client cases from the recordings in this directory (another server's, "
              "written by --record) instead of the shipped reference's; a case whose base it lacks is ERROR",
              cassette_dir, metavar="DIR"),
    RunOption("acp_client_cmd", "--acp-client-cmd", "--acp-client-cmd",
              "an ACP client to certify: it starts the suite's ACP agent given in STREAMCERT_AGENT_CMD"),
    RunOption("line_cmd", "--line-cmd", "--line-cmd", "a progress-line renderer to certify"),
    RunOption("progress_pointer", "--progress-pointer", "--progress-pointer",
              f"JSON pointer to the progress object in each progress-stream event "
              f"(default {_DEFAULTS.progress_pointer})", default=_DEFAULTS.progress_pointer),
    RunOption("progress_cases", "--progress-cases", "--progress-cases",
              "another copy of cases/progress.json to judge by (e.g. a project's conformance/progress.json)",
              progress_cases_file),
    RunOption("profiles", "--profile", "--streamcert-profile",
              "profile to certify (repeatable); default: every profile that has a target",
              choices=PROFILES, repeat=True),
    RunOption("bindings", "--binding", "--streamcert-binding",
              "A2A binding to certify: jsonrpc, http-json, grpc or all (repeatable); default: every binding for the "
              "embedded reference, else the first of JSON-RPC, HTTP+JSON, gRPC the card declares",
              choices=("jsonrpc", "http-json", "grpc", "all"), repeat=True),
    RunOption("bindings_in_turn", "--bindings-in-turn", "--streamcert-bindings-in-turn",
              "play a scenario over one binding after the other (default: over every binding certified at once), "
              "for an agent that serves one client at a time", flag=True),
    RunOption("level", "--level", "--streamcert-level",
              "lowest requirement level judged, in any case (default: may, i.e. all)", level, default="may",
              choices=("must", "should", "may")),
    RunOption("report", "--report", "--streamcert-report",
              f"report directory: compatibility.json, report.md, report.html (default {DEFAULT_REPORT})",
              writable_dir),
    RunOption("record", "--record", "--record", "write a cassette of each scenario into this directory",
              writable_dir),
    RunOption("overwrite", "--overwrite", "--streamcert-overwrite",
              "with --record: replace the cassettes already there (without it the run refuses before it starts)",
              flag=True),
    RunOption("against", "--against", "--streamcert-against",
              "a directory of earlier cassettes: each scenario is also compared with its cassette there; a "
              "regression fails the run (the report's `regressions`)", cassette_dir, metavar="DIR"),
    RunOption("timing_tolerance", "--timing-tolerance", "--streamcert-timing-tolerance",
              "with --against: seconds a frame may come sooner or later than recorded (default "
              f"{DEFAULT_TIMING_TOLERANCE:g})", nonnegative, DEFAULT_TIMING_TOLERANCE, metavar="SECONDS"),
    RunOption("baseline", "--baseline", "--baseline",
              "expected failures: a YAML or JSON file, e.g. written by `streamcert baseline` (see the README)",
              baseline_file),
    RunOption("fault", "--fault", "--sut-fault", "embedded reference only: run the suite against this fault variant",
              fault_name),
    RunOption("stream_limit", "--stream-limit", "--stream-limit",
              f"seconds one stream may stay open (default {_DEFAULTS.stream_limit:g})", positive,
              _DEFAULTS.stream_limit),
    RunOption("timeout", "--timeout", "--sut-timeout",
              f"seconds to wait for a unary answer (default {_DEFAULTS.timeout:g})", positive, _DEFAULTS.timeout),
    RunOption("headers", "--header", "--sut-header",
              "header sent on every request (repeatable; scrubbed from every output)", header, repeat=True,
              metavar="'NAME: VALUE'"),
    RunOption("scrub", "--scrub", "--streamcert-scrub",
              "another name (glob, any case) of a header, cookie, query parameter or JSON field whose values are "
              "secrets, scrubbed from every output (repeatable)", scrub_pattern, repeat=True, metavar="PATTERN"),
    RunOption("allow_origins", "--allow-origin", "--streamcert-allow-origin",
              "another origin (scheme://host:port) the credentials may be sent to, e.g. a card's interface URL "
              "(repeatable)", origin, repeat=True, metavar="ORIGIN"),
    RunOption("card_keys", "--card-key", "--streamcert-card-key",
              "a JWK or JWKS file of public keys trusted to verify the agent card's signatures (repeatable; public "
              "keys are not secrets: the run records them; the embedded run trusts the reference's test key)",
              card_key_file, repeat=True, metavar="FILE"),
    RunOption("requirements", "--requirement", "--streamcert-requirement",
              "run only the scenarios that exercise a requirement matching this glob (repeatable); the others are "
              "NOT_TESTED, not selected", selection.requirement_glob, repeat=True, metavar="GLOB"),
    RunOption("scenarios", "--scenario", "--streamcert-scenario",
              "run only the scenarios whose id matches this glob (repeatable); the requirements they do not "
              "exercise are NOT_TESTED, not selected", selection.scenario_glob, repeat=True, metavar="GLOB"),
    *(RunOption(cap.field, cap.option, "--streamcert-" + cap.option[2:],
                f"{cap.what} cap (default {limits.show(cap.default, cap.unit)})",
                limits.byte_size if cap.unit == "bytes" else positive, cap.default, metavar=cap.unit.upper())
      for cap in limits.CAPS),
    RunOption("wait_for_target", "--wait-for-target", "--streamcert-wait-for-target",
              "seconds to wait for the target to come up before the run (default 0: it must answer at once)",
              nonnegative, 0.0, metavar="SECONDS"),
)


class OptionError(ValueError):
    """A value from the environment or an ini file that its option refuses (the message names where it was)."""


_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _from_text(opt: RunOption, raw: Any, where: str) -> Any:
    """The value an environment variable or ini value gives an option, checked by its validator; None when it
    is unset or blank (a CI variable set to an empty input gives nothing)."""
    if isinstance(raw, list):  # an ini `linelist`: one value a line already
        raw = "\n".join(str(item) for item in raw)
    text = "" if raw is None else str(raw).strip()
    if not text:
        return None
    if opt.flag:
        if text.lower() not in _TRUE + _FALSE:
            raise OptionError(f"{where}: {text!r} is not one of {', '.join(_TRUE + _FALSE)}")
        return text.lower() in _TRUE
    items = [text]
    if opt.repeat:
        items = [part.strip() for part in re.split(f"[{re.escape(opt.separators)}]", text) if part.strip()]
    values = []
    for item in items:
        try:
            value = opt.type(item) if opt.type is not None else item
        except (argparse.ArgumentTypeError, ValueError) as exc:
            raise OptionError(f"{where}: {exc}") from None
        if opt.choices is not None and value not in opt.choices:
            raise OptionError(f"{where}: {item!r} is not one of {', '.join(opt.choices)}")
        values.append(value)
    return values if opt.repeat else values[0]


def resolve(given: Mapping[str, Any], environ: Mapping[str, str] | None = None,
            ini: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """Every option's value, by name: the command line's (`given`; None or [] when absent), else the
    environment's, else the ini file's (`ini(key)`, pytest only), else the default. Raises OptionError."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for opt in RUN_OPTIONS:
        value = given.get(opt.name)
        if value is None or (opt.repeat and not value):
            value = _from_text(opt, environ.get(opt.env), f"environment variable {opt.env}")
        if value is None and ini is not None:
            value = _from_text(opt, ini(opt.ini), f"ini key {opt.ini}")
        if value is None:
            value = [] if opt.repeat else False if opt.flag else opt.default
        values[opt.name] = list(value) if opt.repeat else value
    return values


def from_pytest(config: Any) -> dict[str, Any]:
    """The options' values in a pytest run, by name (command line, environment, ini file, default). A value given
    under an option's old flag counts as given under its new one (which wins where both give one)."""
    return resolve({opt.name: _given(opt, config) for opt in RUN_OPTIONS}, os.environ, config.getini)


def _given(opt: RunOption, config: Any) -> Any:
    value = config.getoption(opt.pytest)
    old = getattr(config.option, opt.alias_dest, None) if opt.alias else None
    if opt.repeat:
        return [*(value or []), *(old or [])] or None
    return value if value is not None else old


def aliases_used(config: Any) -> list[RunOption]:
    """The options a pytest run was given under their old flag."""
    return [opt for opt in RUN_OPTIONS if opt.alias and getattr(config.option, opt.alias_dest, None) is not None]


def deprecation_note(used: list[RunOption]) -> str:
    """The one line a run given old flags prints: each old flag and the name it now has."""
    renamed = ", ".join(f"{opt.alias} → {opt.pytest}" for opt in used)
    return (f"streamcert: deprecated option name(s), still accepted: {renamed} (every option of the pytest plugin "
            f"is now --streamcert-<the streamcert run option's name>; environment variables and ini keys are unchanged)")


def pytest_args(values: Mapping[str, Any]) -> list[str]:
    """The pytest flags that give a pytest run these values (what is unset is left out)."""
    args: list[str] = []
    for opt in RUN_OPTIONS:
        value = values.get(opt.name)
        if opt.flag:
            args += [opt.pytest] if value else []
            continue
        for item in (value or []) if opt.repeat else [value]:
            if item is not None and item != "":
                args += [opt.pytest, str(item)]
    return args


def replaced_cassettes(values: Mapping[str, Any]) -> list[Path]:
    """The cassettes `--record` would replace: those of the scenarios this run selects that are already in its
    directory (none with --overwrite, or without --record)."""
    if not values.get("record") or values.get("overwrite"):
        return []
    from .catalogue import load_scenario, scenario_ids
    from .recordings.cassette import existing
    from .targets import names_a_target, served_profiles

    profiles = set(values.get("profiles") or ()) or (
        served_profiles(values) if names_a_target(values) else set(PROFILES))
    chosen = selection.chosen_scenarios(values.get("requirements") or (), values.get("scenarios") or ())
    return existing(values["record"], [sid for sid in scenario_ids() if load_scenario(sid).profile in profiles
                                       and (chosen is None or sid in chosen)])


def refuse_replacing(values: Mapping[str, Any]) -> str | None:
    """Why the run refuses before it starts (it would replace cassettes without --overwrite), else None."""
    paths = replaced_cassettes(values)
    if not paths:
        return None
    named = ", ".join(str(p) for p in paths[:4]) + (f" and {len(paths) - 4} more" if len(paths) > 4 else "")
    return (f"--record {values['record']}: {len(paths)} cassette(s) already there would be replaced ({named}); "
            f"give --overwrite to replace them")


def target_of(values: Mapping[str, Any]) -> Target:
    """The Target that option values (and the embedded reference's, merged in) describe."""
    fields = {f.name for f in dataclasses.fields(Target)} - {"headers"}
    chosen = {name: values[name] for name in fields if values.get(name) is not None}
    for name in ("scrub", "allow_origins", "card_keys", "prompts"):  # repeated options arrive as lists
        if name in chosen:
            chosen[name] = tuple(chosen[name])
    if chosen.get("script_steps") is not None:
        chosen["script_steps"] = tuple(chosen["script_steps"].split(","))
    if "answers" in chosen:
        chosen["answers"] = tuple(json.loads(raw) for raw in chosen["answers"])
    return Target(headers=dict(parse_header(raw) for raw in values.get("headers", ())), **chosen)
