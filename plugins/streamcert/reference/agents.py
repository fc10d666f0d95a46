"""The agents one reference server hosts: the default at the root, the others under /agents/<name>/.

A later agent (one with a plan tool, one without…) is one more AgentSpec in AGENTS.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import a2a

JSONRPC_PATH = "/a2a/jsonrpc"

DEFAULT_EXTENSIONS = (
    (a2a.PROGRESS_EXT, "Progress of the run: plans and progress objects in status metadata"),
    (a2a.INTERACTIONS_EXT, "Questions, approvals and connections a person answers"),
)


@dataclass(frozen=True)
class AgentSpec:
    name: str  # "" for the default agent at the root
    title: str
    description: str
    streaming: bool = True
    extensions: tuple[tuple[str, str], ...] = DEFAULT_EXTENSIONS  # (uri, description)
    tools: tuple[str, ...] = ()  # for later agents (e.g. "update_plan"); unused so far

    @property
    def prefix(self) -> str:
        return f"/agents/{self.name}" if self.name else ""

    @property
    def extension_uris(self) -> tuple[str, ...]:
        return tuple(uri for uri, _ in self.extensions)


DEFAULT = AgentSpec(
    name="",
    title="streamcert reference agent",
    description="Plays streamcert test-agent scripts (DESIGN §6) over A2A 1.0 JSON-RPC with streaming.",
)
NO_STREAMING = AgentSpec(
    name="no-streaming",
    title="streamcert reference agent (no streaming)",
    description="The reference agent with capabilities.streaming false: it refuses streaming methods.",
    streaming=False,
)

AGENTS: tuple[AgentSpec, ...] = (DEFAULT, NO_STREAMING)
