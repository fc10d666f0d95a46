"""The requirement catalogue and the scenarios, read from cases/ (shipped inside the wheel)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

# Requirement-ID prefix → (family shown in the report, `--profile` name). docs/contracts.md §2 and §5.
PREFIXES: dict[str, tuple[str, str]] = {
    "WIRE-": ("wire", "a2a"),
    "A2A-CARD-": ("a2a-card", "a2a"),
    "A2A-STREAM-": ("a2a-stream", "a2a"),
    "A2A-TASK-": ("a2a-task", "a2a"),
    "A2A-ERR-": ("a2a-err", "a2a"),
    "A2A-AUTH-": ("a2a-auth", "a2a"),  # declared security enforced, the extended card (A2A 1.0.1 §7, §3.1.11)
    "REST-": ("rest", "a2a"),  # the HTTP+JSON binding (A2A 1.0.1 §11)
    "GRPC-": ("grpc", "a2a"),  # the gRPC binding (A2A 1.0.1 §10)
    "A2A-INT-": ("a2a-int", "interactions"),
    "IX-": ("interactions", "interactions"),
    "IDEM-": ("idempotency", "interactions"),
    "PLAN-": ("plans", "plans"),
    "PUSH-": ("push", "push"),
    "ACP-PLAN-": ("acp-plans", "acp"),
    "PROG-": ("progress", "progress"),
    "LINE-": ("line", "line"),
    "CLIENT-ACP-": ("acp-client", "acp-client"),
    "CLIENT-": ("client", "client"),
}
PROFILES = ("a2a", "interactions", "plans", "push", "acp", "progress", "line", "client", "acp-client")
BOUND_PROFILES = ("a2a", "interactions", "plans", "push")  # the profiles whose scenarios run over an A2A binding
LEVELS = ("MUST", "SHOULD", "MAY")


def family_of(req_id: str) -> tuple[str, str]:
    # Longest prefix first: "ACP-PLAN-" must not be read as "PLAN-".
    for prefix in sorted(PREFIXES, key=len, reverse=True):
        if req_id.startswith(prefix):
            return PREFIXES[prefix]
    raise KeyError(f"requirement id {req_id!r} has no known prefix")


@dataclass(frozen=True)
class Requirement:
    id: str
    level: str
    title: str
    source: str
    family: str
    profile: str
    readings: tuple[str, ...] = ()
    note: str = ""
    tolerance: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    bindings: tuple[str, ...] = ()  # the A2A bindings it is a requirement of; () for every one (or none)

    def applies_to(self, binding: str | None) -> bool:
        """Whether a log that went over `binding` (None: no A2A binding) can judge this requirement."""
        return not self.bindings or binding is None or binding in self.bindings

    def to_json(self) -> dict[str, Any]:
        out = {"id": self.id, "profile": self.family, "level": self.level, "title": self.title,
               "source": self.source}
        if self.readings:
            out["readings"] = list(self.readings)
        if self.note:
            out["note"] = self.note
        if self.tolerance:
            out["tolerance"] = dict(self.tolerance)
        if self.bindings:
            out["bindings"] = list(self.bindings)
        return out


@dataclass(frozen=True)
class Scenario:
    id: str
    profile: str
    title: str
    requirements: tuple[str, ...]
    script: dict[str, Any] | None
    data: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


def _cases_dir():
    return resources.files("streamcert.cases")


@lru_cache(maxsize=1)
def load_catalogue() -> dict[str, Requirement]:
    reqs: dict[str, Requirement] = {}
    folder = _cases_dir() / "catalogue"
    for entry in sorted(folder.iterdir(), key=lambda p: p.name):
        if not entry.name.endswith(".json"):
            continue
        doc = json.loads(entry.read_text("utf-8"))
        for raw in doc["requirements"]:
            family, profile = family_of(raw["id"])
            if raw["id"] in reqs:
                raise ValueError(f"requirement {raw['id']} is listed twice in the catalogue")
            if raw["level"] not in LEVELS:
                raise ValueError(f"requirement {raw['id']} has level {raw['level']!r}")
            reqs[raw["id"]] = Requirement(
                id=raw["id"], level=raw["level"], title=raw["title"], source=raw["source"],
                family=family, profile=profile, readings=tuple(raw.get("readings", ())),
                note=raw.get("note", ""), tolerance=dict(raw.get("tolerance", {})),
                bindings=tuple(raw.get("bindings", ())),
            )
    return reqs


def catalogue_version() -> str:
    versions = set()
    folder = _cases_dir() / "catalogue"
    for entry in folder.iterdir():
        if entry.name.endswith(".json"):
            versions.add(json.loads(entry.read_text("utf-8")).get("catalogue_version", "0"))
    return max(versions) if versions else "0"


# Where scenarios are kept: the server scenarios, and the client cases (docs/contracts.md §7 extended, issue 11), whose
# ids start with one of CLIENT_CASE_PREFIXES (cases/client/ holds other data too: only those files are cases).
SCENARIO_DIRS = ("scenarios", "client")
CLIENT_CASE_PREFIXES = ("client-", "acp-client-")


@lru_cache(maxsize=1)
def _scenario_files() -> dict[str, Any]:
    """Scenario id → its file, over SCENARIO_DIRS (read once per process, as the catalogue is: a run looks up each of
    its scenarios, and listing the folders for each cost about 1 ms a scenario)."""
    found: dict[str, Any] = {}
    for name in SCENARIO_DIRS:
        folder = _cases_dir() / name
        if not folder.is_dir():
            continue
        for entry in folder.iterdir():
            sid = entry.name[:-5]
            if entry.name.endswith(".json") and (name == "scenarios" or sid.startswith(CLIENT_CASE_PREFIXES)):
                if sid in found:
                    raise ValueError(f"scenario {sid} is in both cases/{name}/ and another folder")
                found[sid] = entry
    return found


@lru_cache(maxsize=None)
def load_scenario(scenario_id: str) -> Scenario:
    files = _scenario_files()
    path = files.get(scenario_id, _cases_dir() / "scenarios" / f"{scenario_id}.json")
    raw = json.loads(path.read_text("utf-8"))
    known = load_catalogue()
    for rid in raw["requirements"]:
        if rid not in known:
            raise ValueError(f"scenario {scenario_id} names {rid}, which is not in the catalogue")
    return Scenario(id=raw["id"], profile=raw["profile"], title=raw.get("title", ""),
                    requirements=tuple(raw["requirements"]), script=raw.get("script"), data=raw)


def scenario_ids() -> list[str]:
    return sorted(_scenario_files())


def tolerance(req_id: str, key: str, default: float) -> float:
    req = load_catalogue().get(req_id)
    return float(req.tolerance.get(key, default)) if req else default
