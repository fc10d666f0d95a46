"""The rules of profile acp-client (cases/catalogue/acp-client.json): what an ACP client shows of the plans it was
sent."""
