"""Where the implementation under test is (`Target`) and which target serves which profile (`SLOTS`).

`SLOTS` is the one table of targets: the CLI (which `--profile` has a target), the plugin (which
profiles run, the report's `target`), `Target.has` and the embedded reference's start-up all read
it. A slot's `field` is a `Target` attribute and also the name of the run option that sets it
(run_options.py).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import limits

SERVER = "server"  # the embedded reference's HTTP server (a fault's `target` names the program it breaks)
# The public part of the TEST key the reference signs its card with (reference/agent/card.py): the embedded run trusts it.
REFERENCE_CARD_KEY = str(Path(__file__).parent / "reference" / "card_test_key.pub.json")
# The TEST bearer token the reference's secured agent requires (reference/agent/auth.py), written here and in
# docs/security.md: it protects nothing. The embedded run sends it.
TEST_TOKEN = "streamcert-test-token-not-a-secret"
REFERENCE_HEADERS = {"Authorization": f"Bearer {TEST_TOKEN}"}


def embedded_headers(given: Mapping[str, str]) -> tuple[dict[str, str], str | None]:
    """The headers an embedded run sends, and the token its reference's secured agent is to require (None: the test
    token): a bearer credential the user gave (`--header 'Authorization: Bearer X'`) is the one it takes; otherwise
    the run sends the test token beside the user's other headers."""
    for name, value in given.items():
        if name.lower() == "authorization":
            scheme, _, credential = value.strip().partition(" ")
            return dict(given), credential.strip() if scheme.lower() == "bearer" and credential.strip() else None
    return {**REFERENCE_HEADERS, **given}, None


@dataclass(frozen=True)
class Slot:
    name: str  # the target's key in the report's `target`
    field: str  # the Target attribute, and the run option that sets it
    profiles: tuple[str, ...]  # the profiles judged on this target
    program: str | None = None  # the embedded reference's program that provides it (None: it has none)
    route: str = ""  # for the server: the path under its URL


SLOTS = (
    Slot("a2a", "a2a_url", ("a2a", "interactions", "plans"), SERVER),
    # The A2A agent's twin whose card declares streaming: false (A2A-ERR-001): no profile of its own.
    Slot("nostream", "nostream_url", (), SERVER, "/agents/no-streaming"),
    # The agents of the plans profile without update_plan, and with a tool of their own of that name.
    Slot("no-plan", "no_plan_url", (), SERVER, "/agents/no-plan"),
    Slot("plan-shadow", "plan_shadow_url", (), SERVER, "/agents/plan-shadow"),
    # The A2A agent's twin whose card marks an extension required: true (A2A-ERR-017).
    Slot("required-ext", "required_ext_url", (), SERVER, "/agents/required-extension"),
    # The A2A agent's twin whose card requires credentials and declares the extended card (A2A-AUTH-).
    Slot("secured", "secured_url", (), SERVER, "/agents/secured"),
    # The agent whose card declares pushNotifications: true (profile push; the suite runs the webhook receiver).
    Slot("push", "push_agent_url", ("push",), SERVER, "/agents/push"),
    Slot("acp", "acp_cmd", ("acp",), "acp"),  # python -m streamcert.reference.acp
    Slot("progress", "progress_url", ("progress",), SERVER, "/progress"),  # POST the script, read SSE
    Slot("client", "client_cmd", ("client",), "client"),  # python -m streamcert.reference.client
    Slot("line", "line_cmd", ("line",), "line"),  # python -m streamcert.reference.line
    Slot("acp-client", "acp_client_cmd", ("acp-client",), "acp_client"),  # python -m streamcert.reference.acp_client
)
SLOT_OF_PROFILE = {profile: slot for slot in SLOTS for profile in slot.profiles}


def reference_command(program: str, fault: str | None = None) -> str:
    """The command line of one of the reference's stdio programs, broken by `fault` if given."""
    cmd = f"{shlex.quote(sys.executable)} -m streamcert.reference.{program}"
    return cmd + (f" --fault {fault}" if fault else "")


def embedded_targets(url: str | None, fault: str | None = None, broken: str | None = None) -> dict[str, str]:
    """Target field → value for the embedded reference whose server is at `url` (None: not started, its stdio
    programs alone); `fault` runs in the program `broken` (the server at `url` was started with it already)."""
    values = {}
    for slot in SLOTS:
        if slot.program == SERVER:
            if url is not None:
                values[slot.field] = url + slot.route
        elif slot.program:
            values[slot.field] = reference_command(slot.program, fault if broken == slot.program else None)
    return values


def needs_server(profiles: Iterable[str]) -> bool:
    """Whether any of `profiles` is served by the embedded reference's server (the others by its stdio programs)."""
    return any(SLOT_OF_PROFILE[p].program == SERVER for p in profiles if p in SLOT_OF_PROFILE)


def names_a_target(values: Mapping[str, Any]) -> bool:
    """Whether a target of some profile is given (otherwise the embedded reference serves them all)."""
    return any(values.get(slot.field) for slot in SLOTS if slot.profiles)


def served_profiles(values: Mapping[str, Any]) -> set[str]:
    """The profiles that have a target among `values` (Target field → value)."""
    return {profile for profile, slot in SLOT_OF_PROFILE.items() if values.get(slot.field)}


@dataclass
class Target:
    """Where the implementation under test is, and the limits the drivers keep to."""

    a2a_url: str | None = None
    nostream_url: str | None = None  # an agent whose card declares streaming: false (A2A-ERR-001)
    no_plan_url: str | None = None  # the implementation's agent without update_plan (PLAN-016)
    plan_shadow_url: str | None = None  # its agent with a tool of its own named update_plan (PLAN-017)
    required_ext_url: str | None = None  # its agent whose card marks an extension required: true (A2A-ERR-017)
    secured_url: str | None = None  # its agent whose card requires credentials (A2A-AUTH-), when the target's does not
    push_agent_url: str | None = None  # an agent whose card declares pushNotifications: true (profile push)
    push_receiver: str | None = None  # HOST:PORT the suite's webhook receiver listens on (default 127.0.0.1:0)
    push_url: str | None = None  # the receiver's base URL as the agent reaches it (default: where it listens)
    stream_limit: float = limits.STREAM.default  # seconds a single stream may stay open before it is cut
    timeout: float = limits.EXCHANGE.default  # seconds for a unary answer
    headers: dict[str, str] = field(default_factory=dict)  # e.g. credentials; scrubbed from output
    progress_url: str | None = None  # a progress stream: POST the script, read SSE (docs/contracts.md §6)
    progress_pointer: str = "/progress"  # JSON pointer to the progress object in each event
    progress_cases: str | None = None  # another copy of cases/progress.json to judge by
    line_cmd: str | None = None  # a progress-line renderer (docs/contracts.md §7)
    acp_cmd: str | None = None  # an ACP agent, started as a subprocess
    client_cmd: str | None = None  # a client to certify (docs/contracts.md §7)
    client_base: str | None = None  # the recordings the client cases are built from (None: the reference's)
    # The programs of the stdio commands above played in the suite's own process instead (wire/inprocess.py), by the
    # field naming the command: only the embedded reference's own are, set by the run that starts it
    # (reference/in_process.py, docs/clients.md); a command without one runs as a process.
    in_process: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    # agent URL -> why its test agent is held to ignore the script (None: it played the probe), for this run: the
    # copies a run makes of its target (one per binding) share it, so an agent is probed once a run
    # (drivers/script_steps.py; while its probe is on its way, the URL holds the future of its verdict); a new
    # target, even at a URL another server had, starts empty.
    script_probes: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    acp_client_cmd: str | None = None  # an ACP client to certify: it starts the suite's agent (docs/clients.md)
    # The caps of limits.py (their defaults, options and messages live there).
    max_event_bytes: int = int(limits.MAX_EVENT.default)
    max_body_bytes: int = int(limits.MAX_BODY.default)
    max_stream_bytes: int = int(limits.MAX_STREAM.default)
    max_decompressed_bytes: int = int(limits.MAX_DECOMPRESSED.default)
    idle_limit: float = limits.IDLE.default  # seconds a response may stay silent between bytes
    start_limit: float = limits.START.default  # seconds a subprocess target has to answer its first request
    scrub: tuple[str, ...] = ()  # more names (glob, any case) of headers, cookies, query parameters, JSON fields
    allow_origins: tuple[str, ...] = ()  # other origins the credentials may be sent to (scheme://host:port)
    card_keys: tuple[str, ...] = ()  # JWK / JWKS files of the keys trusted to verify card signatures (A2A §8.4)
    # The A2A binding the A2A scenarios go over in this run of them (protocols/bindings.py); the run loop plays
    # each A2A scenario once per binding certified, on a copy of the target naming it.
    binding: str = "jsonrpc"
    # The interfaces the target's cards declare are the target's own (the embedded reference: its gRPC servers on
    # ports of their own): the credentials given go to them as to the card's origin, without --allow-origin.
    own_interfaces: bool = False
    # The script steps the A2A agent's test agent plays when its card cannot say so (None: what the card says;
    # docs/script-extensions.md, "What a test agent plays").
    script_steps: tuple[str, ...] | None = None
    # An agent judged as it is (`--prompt`): the prompts sent instead of scripts, the answers given where it pauses.
    prompts: tuple[str, ...] = ()
    answers: tuple[Any, ...] = ()

    def has(self, profile: str) -> bool:
        """Whether this target can be judged on a profile."""
        slot = SLOT_OF_PROFILE.get(profile)
        return bool(slot and getattr(self, slot.field))

    def report_json(self) -> dict[str, str | None]:
        """The targets of the profiles, by slot name, as the report's `target` shows them."""
        return {slot.name: getattr(self, slot.field) for slot in SLOTS if slot.profiles}
