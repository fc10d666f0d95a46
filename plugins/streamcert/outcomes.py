"""Outcomes (docs/contracts.md §3, a contract) and the finding a rule returns."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from .limits import MESSAGE_CHARS, bounded_evidence, bounded_item, cut


class Outcome(str, enum.Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    NON_STRICT = "NON_STRICT"
    WARNING = "WARNING"
    UNSUPPORTED = "UNSUPPORTED"
    SKIPPED = "SKIPPED"
    NOT_TESTED = "NOT_TESTED"
    ERROR = "ERROR"

    @property
    def rank(self) -> int:
        return _RANK[self]

    @property
    def is_failure(self) -> bool:
        return self in (Outcome.FAIL, Outcome.ERROR)


# Worst-outcome order for a requirement exercised by several tests. A definite FAIL outranks an
# ERROR (a test that could not judge must not hide one that did); a judged outcome outranks
# UNSUPPORTED, which outranks "nothing produced" (NOT_TESTED) and deselection (SKIPPED).
_RANK = {
    Outcome.SKIPPED: 0,
    Outcome.NOT_TESTED: 1,
    Outcome.UNSUPPORTED: 2,
    Outcome.PASS: 3,
    Outcome.NON_STRICT: 4,
    Outcome.WARNING: 5,
    Outcome.ERROR: 6,
    Outcome.FAIL: 7,
}


def worst(outcomes) -> Outcome | None:
    items = [Outcome(o) for o in outcomes]
    return max(items, key=lambda o: o.rank) if items else None


@dataclass
class Finding:
    """What a rule decided about one requirement on one frame log."""

    req_id: str
    outcome: Outcome
    message: str = ""
    evidence: list[dict[str, Any]] = field(default_factory=list)
    measured: dict[str, Any] = field(default_factory=dict)
    reading: str | None = None  # the accepted reading taken, where the text allows several
    binding: str | None = None  # the A2A binding the judged log went over (None: no A2A binding)

    def __post_init__(self) -> None:
        """Bounded where it is made, whoever makes it (limits.py: evidence is quoted, never copied)."""
        self.message = cut(self.message, MESSAGE_CHARS)
        self.evidence = bounded_evidence(self.evidence)
        self.measured = bounded_item(self.measured) if self.measured else self.measured
        if self.reading:
            self.reading = cut(self.reading, MESSAGE_CHARS)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.req_id, "outcome": self.outcome.value, "message": self.message}
        if self.evidence:
            out["evidence"] = self.evidence
        if self.measured:
            out["measured"] = self.measured
        if self.reading:
            out["reading"] = self.reading
        if self.binding:
            out["binding"] = self.binding
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Finding":
        return cls(
            req_id=data["id"],
            outcome=Outcome(data["outcome"]),
            message=data.get("message", ""),
            evidence=list(data.get("evidence", [])),
            measured=dict(data.get("measured", {})),
            reading=data.get("reading"),
            binding=data.get("binding"),
        )
