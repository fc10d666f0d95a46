"""The agents one reference server hosts: the default at the root, the others under /agents/<name>/.

A later agent (one with a plan tool, one without…) is one more AgentSpec in AGENTS.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...protocols import interactions_v1, progress_v1

JSONRPC_PATH = "/a2a/jsonrpc"

DEFAULT_EXTENSIONS = (
    (progress_v1.URI, "Progress of the run: plans and progress objects in status metadata"),
    (interactions_v1.URI, "Questions, approvals and connections a person answers"),
)


@dataclass(frozen=True)
class AgentSpec:
    name: str  # "" for the default agent at the root
    title: str
    description: str
    streaming: bool = True
    extensions: tuple[tuple[str, str], ...] = DEFAULT_EXTENSIONS  # (uri, description)
    tools: tuple[str, ...] = ()  # the agent's own tools; one named "update_plan" shadows the built-in
    plan: bool = False  # `loop.plan: true` in the agent's manifest (AGENT.md): the built-in update_plan
    required: tuple[str, ...] = ()  # the extensions its card marks required: true (A2A §3.3.4)
    push: bool = False  # capabilities.pushNotifications: true, and the four config operations served (push.py)
    secured: bool = False  # its card requires a bearer token, which every request must carry (auth.py)

    @property
    def has_builtin_plan(self) -> bool:
        """The seed (progress/v1): the root agent gets update_plan when its manifest turns it on,
        unless it declares its own tool of that name."""
        return self.plan and progress_v1.TOOL not in self.tools

    @property
    def prefix(self) -> str:
        return f"/agents/{self.name}" if self.name else ""

    @property
    def extension_uris(self) -> tuple[str, ...]:
        return tuple(uri for uri, _ in self.extensions)


DEFAULT = AgentSpec(
    name="",
    title="streamcert reference agent",
    description="Plays streamcert test-agent scripts (docs/contracts.md §6) over A2A 1.0 JSON-RPC with streaming.",
    plan=True,
)
NO_STREAMING = AgentSpec(
    name="no-streaming",
    title="streamcert reference agent (no streaming)",
    description="The reference agent with capabilities.streaming false: it refuses streaming methods.",
    streaming=False,
)

NO_PLAN = AgentSpec(
    name="no-plan",
    title="streamcert reference agent (no plan tool)",
    description="The reference agent without loop.plan: it has no update_plan tool and sends no plan.",
)
PLAN_SHADOW = AgentSpec(
    name="plan-shadow",
    title="streamcert reference agent (own update_plan)",
    description="The reference agent with loop.plan on and its own tool named update_plan, which shadows "
                "the built-in: it answers 'shadowed' and sends no plan.",
    plan=True,
    tools=(progress_v1.TOOL,),
)

REQUIRED_EXTENSION = AgentSpec(
    name="required-extension",
    title="streamcert reference agent (progress/v1 required)",
    description="The reference agent whose card marks progress/v1 required: a request that does not activate it "
                "is refused with ExtensionSupportRequiredError.",
    required=(progress_v1.URI,),
)

PUSH = AgentSpec(
    name="push",
    title="streamcert reference agent (push notifications)",
    description="The reference agent with capabilities.pushNotifications true: it stores push notification "
                "configs and POSTs each task event to their webhooks (A2A 1.0.1 §4.3.3).",
    push=True,
)

SECURED = AgentSpec(
    name="secured",
    title="streamcert reference agent (bearer token required)",
    description="The reference agent whose card requires a bearer token (a TEST token, docs/security.md): a request "
                "without it is refused with HTTP 401, and its extended card is served only with it.",
    secured=True,
)

AGENTS: tuple[AgentSpec, ...] = (DEFAULT, NO_STREAMING, NO_PLAN, PLAN_SHADOW, REQUIRED_EXTENSION, PUSH, SECURED)


def with_push_at_root() -> tuple[AgentSpec, ...]:
    """The agents of `streamcert serve --push`: the root agent declares and serves push notifications too."""
    return tuple(replace(spec, push=True) if spec is DEFAULT else spec for spec in AGENTS)
