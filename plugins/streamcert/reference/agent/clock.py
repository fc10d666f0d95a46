"""Time and identifiers for the reference agent: real, or deterministic for byte-stable runs."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

# The kit clock of seed 001: frame 1 at 09:00:01.750Z, each later status 250 ms on.
EPOCH = datetime(2026, 10, 6, 9, 0, 1, 750000, tzinfo=UTC)
STEP = timedelta(milliseconds=250)

# Timestamp styles: "ms" is correct (A2A §5.6.1); the others exist for fault variants.
STYLES = ("ms", "offset", "seconds")


def format_timestamp(moment: datetime, style: str = "ms") -> str:
    moment = moment.astimezone(UTC)
    base = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if style == "seconds":
        return base + "Z"
    millis = f".{moment.microsecond // 1000:03d}"
    return base + millis + ("+00:00" if style == "offset" else "Z")


def parse_timestamp(text: str) -> datetime:
    """ISO 8601 with an offset or Z; a value without an offset is read as UTC."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


class Clock:
    """Mints timestamps and uuids. Deterministic mode counts instead of reading the world."""

    def __init__(self, deterministic: bool = False, style: str = "ms") -> None:
        if style not in STYLES:
            raise ValueError(f"unknown timestamp style {style!r}")
        self.deterministic = deterministic
        self.style = style
        self._ticks = 0
        self._ids = 0

    def now(self) -> datetime:
        if not self.deterministic:
            return datetime.now(UTC)
        moment = EPOCH + STEP * self._ticks
        self._ticks += 1
        return moment

    def stamp(self, moment: datetime) -> str:
        return format_timestamp(moment, self.style)

    def new_id(self) -> str:
        if not self.deterministic:
            return str(uuid.uuid4())
        self._ids += 1
        # A well-formed version-4 uuid shape whose last group is the counter.
        return f"00000000-0000-4000-8000-{self._ids:012d}"
