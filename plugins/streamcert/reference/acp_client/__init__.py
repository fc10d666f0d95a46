"""The reference ACP client (client.py): `python -m streamcert.reference.acp_client [--fault NAME] [--limit S]`."""
