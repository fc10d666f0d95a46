"""Badges in the shields.io endpoint format: badge.json for the run, badge-<profile>.json for each selected
profile. A project publishes one and points https://img.shields.io/endpoint?url=… at it.

The format: `schemaVersion` (always 1), `label` (the left text), `message` (the right text, never empty),
`color`; its other fields (labelColor, isError, namedLogo, logoSvg, logoColor, logoWidth, style,
cacheSeconds) are presentation or caching choices left to whoever shows the badge.

A profile's status follows the verdict's rule (DESIGN §3) on that profile's requirements: FAIL when one
of its selected MUST requirements fails or errs (an expected failure of the baseline excepted, as for the
verdict) or is a stale baseline entry; else INCOMPLETE when one is NOT_TESTED, when it has none, or
when the run was narrowed (--requirement, --scenario, -k); else PASS.
The message counts the MUST requirements met out of those selected, so a baselined failure still shows.
"""

from __future__ import annotations

from typing import Any

from ..outcomes import Outcome
from .aggregate import decide_verdict
from .junit import run_profile_of

SCHEMA_VERSION = 1
LABEL = "streamcert"
OVERALL_FILE = "badge.json"
COLORS = {"PASS": "green", "FAIL": "red", "INCOMPLETE": "orange"}
MET = (Outcome.PASS.value, Outcome.NON_STRICT.value, Outcome.WARNING.value)


def profile_file(profile: str) -> str:
    return f"badge-{profile}.json"


def _message(status: str, entries: list[dict[str, Any]]) -> str:
    musts = [e for e in entries if e["level"] == "MUST" and e["status"] != Outcome.SKIPPED.value]
    met = sum(e["status"] in MET for e in musts)
    expected = sum(e.get("baseline") == "expected" for e in musts)
    return f"{status} · {met}/{len(musts)} MUST" + (f" · {expected} expected" if expected else "")


def _badge(label: str, status: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {"schemaVersion": SCHEMA_VERSION, "label": label, "message": _message(status, entries),
            "color": COLORS.get(status, "lightgrey")}


def profile_status(report: dict[str, Any], profile: str) -> str:
    entries = [e for e in report["requirements"] if run_profile_of(e) == profile]
    stale = [e["id"] for e in entries if e.get("baseline") == "stale"]
    if report.get("could_not_run"):  # nothing was judged: ERROR everywhere means "no answer", not a fault
        return "INCOMPLETE"
    status = decide_verdict(entries, stale)
    if status == "PASS" and (report.get("selection") or {}).get("narrowed"):
        return "INCOMPLETE"  # a narrowed run never certifies (DESIGN §3), not even one profile
    return status


def overall_badge(report: dict[str, Any]) -> dict[str, Any]:
    return _badge(LABEL, report["verdict"], report["requirements"])


def profile_badge(report: dict[str, Any], profile: str) -> dict[str, Any]:
    entries = [e for e in report["requirements"] if run_profile_of(e) == profile]
    return _badge(f"{LABEL} {profile}", profile_status(report, profile), entries)


def selected_profiles(report: dict[str, Any]) -> list[str]:
    return list((report.get("selection") or {}).get("profiles") or [])


def badges(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{file name: badge} for the run and each selected profile. An unselected profile gets none, nor does
    a selected one without a requirement in the catalogue (client, today): it has nothing to claim."""
    out = {OVERALL_FILE: overall_badge(report)}
    with_requirements = {run_profile_of(e) for e in report["requirements"]}
    for profile in selected_profiles(report):
        if profile in with_requirements:
            out[profile_file(profile)] = profile_badge(report, profile)
    return out
