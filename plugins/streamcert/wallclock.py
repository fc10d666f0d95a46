"""The wall-clock time a run records: when a report or a frame log was started and finished."""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> str:
    """UTC now in ISO 8601 with milliseconds and Z, e.g. 2026-10-06T09:00:01.750Z."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
