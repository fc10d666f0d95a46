"""The reference progress stream (seed 003): a route of the reference server (stream.py) and its pacing
(pacing.py)."""
