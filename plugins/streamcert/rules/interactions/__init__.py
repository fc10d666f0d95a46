"""The rules of profile interactions (cases/catalogue/interactions.json): interrupted states, the interactions/v1
extension, idempotency; the view `Interruptions` (ixview.py)."""
