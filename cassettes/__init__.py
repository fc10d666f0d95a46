"""Reference recordings (data)."""
