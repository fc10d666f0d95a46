"""Labels of the ACP drivers (drivers/acp.py, acp_client.py)."""

AGENT = "agent"  # the ACP agent's run on stdin/stdout (the agent under test, or the one a client started)
CLIENT = "client"  # the ACP client's run (acp_client)
