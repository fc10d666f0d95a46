"""Badges in the shields.io endpoint format: badge.json for the run, badge-<profile>.json for each selected
profile. A project publishes one and points https://img.shields.io/endpoint?url=… at it.

The format: `schemaVersion` (always 1), `label` (the left text), `message` (the right text, never empty),
`color`; its other fields (labelColor, isError, namedLogo, logoSvg, logoColor, logoWidth, style,
cacheSeconds) are presentation or caching choices left to whoever shows the badge.

A profile's status follows the verdict's rule (docs/contracts.md §3) on that profile's requirements: FAIL when one
of its selected MUST requirements fails or errs (an expected failure of the baseline excepted, as for the
verdict) or is a stale baseline entry; else INCOMPLETE when one is NOT_TESTED, when it has none, or
when the run was narrowed (--requirement, --scenario, -k); else PASS.
The message counts the MUST requirements met out of those selected, so a baselined failure still shows, and
names the A2A bindings certified ("PASS · A2A over JSON-RPC · 59/59 MUST"; a profile of the A2A agent: "PASS ·
over JSON-RPC · …"). A profile none of whose requirements was judged (an agent without the plans extension: every
one UNSUPPORTED) claims nothing: its badge says "not applicable" in grey, never PASS in green.
"""

from __future__ import annotations

from typing import Any

from ..catalogue import BOUND_PROFILES
from ..outcomes import Outcome
from .aggregate import decide_verdict
from .common import JUDGED, certified_bindings, certified_claim, must_count, run_profile

SCHEMA_VERSION = 1
LABEL = "streamcert"
OVERALL_FILE = "badge.json"
COLORS = {"PASS": "green", "FAIL": "red", "INCOMPLETE": "orange"}
NOT_APPLICABLE = "not applicable"


def profile_file(profile: str) -> str:
    return f"badge-{profile}.json"


def _message(status: str, entries: list[dict[str, Any]], claim: str) -> str:
    met, selected = must_count(entries)
    expected = sum(e.get("baseline") == "expected" and e["status"] != Outcome.SKIPPED.value
                   for e in entries if e["level"] == "MUST")
    return (f"{status}{' · ' + claim if claim else ''} · {met}/{selected} MUST"
            + (f" · {expected} expected" if expected else ""))


def _badge(label: str, status: str, entries: list[dict[str, Any]], claim: str = "") -> dict[str, Any]:
    if status == "PASS" and not any(e["status"] in JUDGED for e in entries):  # nothing judged: nothing to claim
        unsupported = sum(e["status"] == Outcome.UNSUPPORTED.value for e in entries)
        message = NOT_APPLICABLE + (f" · {unsupported} unsupported" if unsupported else "")
        return {"schemaVersion": SCHEMA_VERSION, "label": label, "message": message, "color": "lightgrey"}
    return {"schemaVersion": SCHEMA_VERSION, "label": label, "message": _message(status, entries, claim),
            "color": COLORS.get(status, "lightgrey")}


def profile_status(report: dict[str, Any], profile: str) -> str:
    entries = [e for e in report["requirements"] if run_profile(e) == profile]
    stale = [e["id"] for e in entries if e.get("baseline") == "stale"]
    if report.get("could_not_run"):  # nothing was judged: ERROR everywhere means "no answer", not a fault
        return "INCOMPLETE"
    status = decide_verdict(entries, stale)
    if status == "PASS" and (report.get("selection") or {}).get("narrowed"):
        return "INCOMPLETE"  # a narrowed run never certifies (docs/contracts.md §3), not even one profile
    return status


def overall_badge(report: dict[str, Any]) -> dict[str, Any]:
    return _badge(LABEL, report["verdict"], report["requirements"], certified_claim(report))


def profile_badge(report: dict[str, Any], profile: str) -> dict[str, Any]:
    entries = [e for e in report["requirements"] if run_profile(e) == profile]
    claim = certified_claim(report).removeprefix("A2A ") if profile in BOUND_PROFILES and certified_bindings(report) \
        else ""
    return _badge(f"{LABEL} {profile}", profile_status(report, profile), entries, claim)


def selected_profiles(report: dict[str, Any]) -> list[str]:
    return list((report.get("selection") or {}).get("profiles") or [])


def badges(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{file name: badge} for the run and each selected profile. An unselected profile gets none, nor does
    a selected one without a requirement in the catalogue (client, today): it has nothing to claim."""
    out = {OVERALL_FILE: overall_badge(report)}
    with_requirements = {run_profile(e) for e in report["requirements"]}
    for profile in selected_profiles(report):
        if profile in with_requirements:
            out[profile_file(profile)] = profile_badge(report, profile)
    return out
