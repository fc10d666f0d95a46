"""The reference A2A client (docs/contracts.md §7): `python -m streamcert.reference.client`. client.py runs it,
view.py holds its view of the task, feed.py its wire (the card, the headers, a response read as it arrives)."""
