"""The reference A2A client (client.py, docs/contracts.md §7): `python -m streamcert.reference.client`."""
