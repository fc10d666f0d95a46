"""Requirement catalogue and scenarios (data)."""
