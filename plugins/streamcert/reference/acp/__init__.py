"""The reference ACP agent (agent.py): `python -m streamcert.reference.acp [--fault NAME] [--protocol 1|2]`."""
