"""What the report writers share: the outcome order, the finding groups, evidence shown as text."""

from __future__ import annotations

import json
from typing import Any

from ..catalogue import PROFILES, family_of
from ..outcomes import Outcome
from ..protocols.bindings import BINDINGS, TITLE

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


def implementation_text(report: dict[str, Any]) -> str | None:
    """The implementation certified, as its agent card names it ("Acme Agent 2.1.0"); None when no card was read
    or it names neither (the report's `implementation`, docs/contract-extensions.md)."""
    given = report.get("implementation") or {}
    text = " ".join(str(given[key]) for key in ("name", "version") if given.get(key))
    return text or None


TARGET_FACTS = ("embedded", "fault")  # the report's `target` keys that are facts about the run, not targets


def target_line(report: dict[str, Any]) -> str:
    """What was certified, in words: the implementation as its card names it, the embedded reference (and its fault
    variant) when the run started it, then each target as given."""
    target = report.get("target") or {}
    targets = ", ".join(f"{name}: {value}" for name, value in target.items() if value and name not in TARGET_FACTS)
    said = [f"implementation: {impl}" for impl in [implementation_text(report)] if impl]
    if target.get("embedded"):
        said.append("the embedded reference" + (f" with fault variant {target['fault']}" if target.get("fault") else ""))
    return " · ".join([*said, targets or "no target"])


def run_profile(entry: dict[str, Any]) -> str:
    """The profile (as the catalogue and `--profile` name it: a2a, interactions, …) a report entry belongs to, by its
    ID prefix; its family for an unknown prefix."""
    try:
        return family_of(entry["id"])[1]
    except KeyError:
        return entry["profile"]


def by_run_profile(report: dict[str, Any]) -> dict[str, dict[str, int]]:
    """{profile: {outcome: count}}, the profiles in the catalogue's order."""
    counts: dict[str, dict[str, int]] = {}
    for entry in report["requirements"]:
        row = counts.setdefault(run_profile(entry), dict.fromkeys(OUTCOME_ORDER, 0))
        row[entry["status"]] = row.get(entry["status"], 0) + 1
    order = {p: i for i, p in enumerate(PROFILES)}
    return dict(sorted(counts.items(), key=lambda item: order.get(item[0], len(order))))


def first_line(text: str) -> str:
    return text.splitlines()[0] if text else ""


# -- A2A bindings (issue 15): the report's `bindings` and each entry's per-binding statuses ----------------

def binding_title(binding: str) -> str:
    return TITLE.get(binding, binding)


def certified_bindings(report: dict[str, Any]) -> list[str]:
    """The bindings the run certified, in the bindings' order (none: a run without an A2A target)."""
    certified = (report.get("bindings") or {}).get("certified") or []
    return [b for b in BINDINGS if b in certified] + [b for b in certified if b not in BINDINGS]


def binding_counts(report: dict[str, Any]) -> dict[str, dict[str, int]]:
    """{binding: {outcome: count}} for each certified binding, over the selected requirements that apply to it
    (those SKIPPED by profile or level are counted by the profile and level tables, not here)."""
    counts = {b: dict.fromkeys(OUTCOME_ORDER, 0) for b in certified_bindings(report)}
    for entry in report["requirements"]:
        if entry["status"] == Outcome.SKIPPED.value:
            continue
        for binding, status in (entry.get("bindings") or {}).items():
            if binding in counts:
                counts[binding][status] = counts[binding].get(status, 0) + 1
    return counts


def differs_between_bindings(entry: dict[str, Any], certified: list[str]) -> bool:
    statuses = {status for b, status in (entry.get("bindings") or {}).items() if b in certified}
    return len(statuses) > 1


def bindings_with(entry: dict[str, Any], statuses: tuple[str, ...]) -> list[str]:
    """The bindings over which the entry's status is one of `statuses` (for a failure: where it failed)."""
    return [b for b, status in (entry.get("bindings") or {}).items() if status in statuses]


def decisive_bindings(entry: dict[str, Any]) -> list[str]:
    """Where the entry's status came from: for a failure, every binding it failed (FAIL or ERROR) over;
    otherwise the bindings whose status is the entry's own (the worst)."""
    return bindings_with(entry, FAILURES if entry["status"] in FAILURES else (entry["status"],))


def over_text(entry: dict[str, Any]) -> str:
    """The decisive bindings by title ("HTTP+JSON, gRPC"), each with its status when they differ ("HTTP+JSON
    (FAIL), gRPC (ERROR)"); "" for a requirement without per-binding statuses."""
    found = decisive_bindings(entry)
    if len({entry["bindings"][b] for b in found}) > 1:
        return ", ".join(f"{binding_title(b)} ({entry['bindings'][b]})" for b in found)
    return ", ".join(binding_title(b) for b in found)


# -- HTML ---------------------------------------------------------------------------------------------


# -- what the run certified (issue 28: a verdict never overstates) -------------------------------------------

MET = (Outcome.PASS.value, Outcome.NON_STRICT.value, Outcome.WARNING.value)
JUDGED = (*MET, *FAILURES)  # a requirement the run judged (not SKIPPED, UNSUPPORTED, NOT_TESTED)


def must_count(entries: list[dict[str, Any]]) -> tuple[int, int]:
    """(met, selected) of the MUST requirements among `entries` (SKIPPED ones are not selected)."""
    musts = [e for e in entries if e["level"] == "MUST" and e["status"] != Outcome.SKIPPED.value]
    return sum(e["status"] in MET for e in musts), len(musts)


def certified_claim(report: dict[str, Any]) -> str:
    """Over what the run certified the A2A agent, in words ("A2A over JSON-RPC"); "" in a run without an A2A
    target or when no binding was certified."""
    certified = certified_bindings(report)
    if not certified:
        return ""
    titles = [binding_title(b) for b in certified]
    return "A2A over " + (", ".join(titles[:-1]) + " and " if len(titles) > 1 else "") + titles[-1]


def not_certified_note(report: dict[str, Any]) -> str | None:
    """The bindings the card declares that the run did not certify, and how to certify them; None when none."""
    given = report.get("bindings") or {}
    declared = [b for b in (given.get("declared") or []) if b not in certified_bindings(report)]
    if not declared:
        return None
    named = ", ".join(binding_title(b) for b in declared)
    return (f"the card also declares {named}: not certified by this run "
            "(--binding all certifies every binding the card declares)")


def verdict_claim(report: dict[str, Any]) -> str:
    """The verdict with what it covers: "PASS · A2A over JSON-RPC · 59/59 MUST" (the verdict alone in a run
    without an A2A binding, as before)."""
    claim = certified_claim(report)
    if not claim:
        return report["verdict"]
    met, selected = must_count(report["requirements"])
    impl = implementation_text(report)
    return f"{report['verdict']} · {claim} · {met}/{selected} MUST" + (f" · {impl}" if impl else "")
