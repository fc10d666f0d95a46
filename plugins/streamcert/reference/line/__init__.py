"""The reference progress-line renderer (renderer.py, seed 003 §2–§3): `python -m streamcert.reference.line`."""
