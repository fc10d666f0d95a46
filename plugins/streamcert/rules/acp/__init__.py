"""The rules of profile acp (cases/catalogue/acp.json): an ACP agent's plans on stdio, with their view (acpview.py)."""
