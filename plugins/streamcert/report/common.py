"""What the report writers share: the outcome order, the finding groups, evidence shown as text."""

from __future__ import annotations

import json
from typing import Any

from ..outcomes import Outcome

OUTCOME_ORDER = [o.value for o in Outcome]
FAILURES = (Outcome.FAIL.value, Outcome.ERROR.value)
SOFT_FINDINGS = (Outcome.WARNING.value, Outcome.NON_STRICT.value)


def entries_with(report: dict[str, Any], statuses: tuple[str, ...]) -> list[dict[str, Any]]:
    return [e for e in report["requirements"] if e["status"] in statuses]


QUOTED = ("data", "body", "error")  # the members an evidence item quotes, the first present shown as its text


def quoted_key(item: dict[str, Any]) -> str | None:
    return next((key for key in QUOTED if isinstance(item.get(key), str)), None)


def evidence_text(item: dict[str, Any]) -> str:
    """The quoted frame or body of one evidence item, or the whole item as JSON."""
    key = quoted_key(item)
    return item[key] if key else json.dumps(item, ensure_ascii=False, indent=1)


def evidence_label(item: dict[str, Any]) -> str:
    """The scalar facts of one evidence item (test, exchange, frame, time, note; an error beside a quoted
    frame) on one line."""
    shown = quoted_key(item)
    return " · ".join(f"{k}={v}" for k, v in item.items()
                      if k != shown and isinstance(v, (str, int, float, bool)) and v != "")


def target_line(report: dict[str, Any]) -> str:
    targets = [f"{name}: {value}" for name, value in report.get("target", {}).items() if value]
    return ", ".join(targets) or "no target"


def first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


# -- HTML ---------------------------------------------------------------------------------------------
