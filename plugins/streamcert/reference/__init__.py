"""The embedded reference A2A agent: a real HTTP server on loopback that plays test-agent scripts,
plus fault variants that each break one rule (faults.FAULTS)."""

from .agents import AGENTS, AgentSpec
from .app import create_app
from .faults import FAULTS, Fault, describe_faults
from .server import ReferenceServer, serve

__all__ = ["AGENTS", "FAULTS", "AgentSpec", "Fault", "ReferenceServer", "create_app", "describe_faults", "serve"]
