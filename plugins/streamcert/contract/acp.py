"""The ACP drivers' log (drivers/acp.py, acp_client.py): notes keys the rules read."""

ACP = "acp"  # log.notes: {"requested_version", "plan_capability", "cwd"} the driver started the agent with
ACP_CLIENT_CASE = "acp_client_case"  # log.notes: {"id", "context", "expected"}: the ACP client case played
ENDED = "ended"  # the agent run's Exchange.notes: why the run ended
AGENT_RUNS = "agent_runs"  # the agent run's Exchange.notes: how many times the client started the agent
