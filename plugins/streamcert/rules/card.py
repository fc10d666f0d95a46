"""A2A-CARD-: the agent card (A2A §8)."""

from __future__ import annotations

from typing import Any

from .. import a2a
from ..framelog import FrameLog
from ..outcomes import Finding
from . import RuleContext, ex_evidence, fail, needed, ok, rule

# AgentCard required fields and the JSON type each must have (A2A §8).
REQUIRED_FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "description": str,
    "version": str,
    "supportedInterfaces": list,
    "capabilities": dict,
    "defaultInputModes": list,
    "defaultOutputModes": list,
    "skills": list,
}
INTERFACE_FIELDS = ("url", "protocolBinding", "protocolVersion")
SKILL_FIELDS = ("id", "name", "description", "tags")
TYPE_NAMES = {str: "string", list: "array", dict: "object", bool: "boolean"}


def _card(log: FrameLog, req_id: str) -> tuple[Any, list[Finding]]:
    """The card as JSON, or the finding that says why there is none."""
    ex, errs = needed(log, "card", req_id)
    if ex is None:
        return None, errs
    value, err = ex.json()
    if ex.status != 200 or err or not isinstance(value, dict):
        if req_id == "A2A-CARD-001":
            return None, []  # A2A-CARD-001 reports this itself
        return None, [fail(req_id, f"no agent card to judge (GET {ex.url} gave HTTP {ex.status})", [ex_evidence(ex)])]
    return value, []


@rule("A2A-CARD-001")
def card_served(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    ex, errs = needed(log, "card", "A2A-CARD-001")
    if ex is None:
        return errs
    value, err = ex.json()
    if ex.status != 200:
        why = f"HTTP {ex.status}"
    elif err:
        why = f"a body that is not JSON ({err}); first bytes {ex.first_bytes()!r}"
    elif not isinstance(value, dict):
        why = f"JSON that is not an object ({type(value).__name__})"
    elif ex.media_type != a2a.JSON_MEDIA_TYPE:
        why = f"Content-Type {ex.content_type or '(none)'} instead of application/json"
    else:
        return [ok("A2A-CARD-001", f"GET {a2a.CARD_PATH}: HTTP 200 application/json object")]
    return [fail("A2A-CARD-001", f"GET {ex.url} answered {why}; the card is served at {a2a.CARD_PATH} "
                 "as a JSON object (A2A §8)", [ex_evidence(ex)])]


def _type_name(t: type | tuple[type, ...]) -> str:
    return TYPE_NAMES.get(t, getattr(t, "__name__", str(t))) if isinstance(t, type) else "/".join(
        TYPE_NAMES.get(x, x.__name__) for x in t)


@rule("A2A-CARD-002")
def card_required_fields(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    card, errs = _card(log, "A2A-CARD-002")
    if card is None:
        return errs
    problems = []
    for name, typ in REQUIRED_FIELDS.items():
        if name not in card:
            problems.append(f"{name} is missing")
        elif not isinstance(card[name], typ) or (typ is str and isinstance(card[name], bool)):
            problems.append(f"{name} is {type(card[name]).__name__}, not {_type_name(typ)}")
    for i, skill in enumerate(card.get("skills") or []):
        if not isinstance(skill, dict):
            problems.append(f"skills[{i}] is not an object")
            continue
        problems += [f"skills[{i}].{f} is missing" for f in SKILL_FIELDS if f not in skill]
    if problems:
        return [fail("A2A-CARD-002", "the card lacks required fields: " + "; ".join(problems) + " (A2A §8 AgentCard)",
                     [ex_evidence(log.get("card"))])]
    return [ok("A2A-CARD-002", "all required AgentCard fields present with their types")]


@rule("A2A-CARD-003")
def card_jsonrpc_interface(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    card, errs = _card(log, "A2A-CARD-003")
    if card is None:
        return errs
    interfaces = card.get("supportedInterfaces")
    if not isinstance(interfaces, list):
        return [fail("A2A-CARD-003", "supportedInterfaces is missing or not an array", [ex_evidence(log.get("card"))])]
    problems, found = [], None
    for i, iface in enumerate(interfaces):
        if not isinstance(iface, dict):
            problems.append(f"supportedInterfaces[{i}] is not an object")
            continue
        missing = [f for f in INTERFACE_FIELDS if not isinstance(iface.get(f), str) or not iface.get(f)]
        if missing:
            problems.append(f"supportedInterfaces[{i}] lacks {', '.join(missing)}")
        elif iface["protocolBinding"] not in a2a.PROTOCOL_BINDINGS:
            problems.append(f"supportedInterfaces[{i}].protocolBinding {iface['protocolBinding']!r} is not one of "
                            f"{', '.join(a2a.PROTOCOL_BINDINGS)}")
        elif iface["protocolBinding"] == "JSONRPC" and iface["protocolVersion"].split(".")[:2] == ["1", "0"]:
            found = found or iface
    if found and not problems:
        return [ok("A2A-CARD-003", f"JSONRPC interface {found['url']} for protocol {found['protocolVersion']}")]
    if not found:
        problems.append("no interface has protocolBinding JSONRPC and protocolVersion 1.0")
    return [fail("A2A-CARD-003", "; ".join(problems) + " (A2A §8 AgentInterface)", [ex_evidence(log.get("card"))])]


@rule("A2A-CARD-004")
def card_extensions(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    card, errs = _card(log, "A2A-CARD-004")
    if card is None:
        return errs
    caps = card.get("capabilities")
    exts = caps.get("extensions") if isinstance(caps, dict) else None
    if exts is None:
        return [ok("A2A-CARD-004", "the card declares no extensions")]
    if not isinstance(exts, list):
        return [fail("A2A-CARD-004", "capabilities.extensions is not an array", [ex_evidence(log.get("card"))])]
    problems = []
    for i, ext in enumerate(exts):
        if not isinstance(ext, dict):
            problems.append(f"extensions[{i}] is not an object")
            continue
        if not isinstance(ext.get("uri"), str) or not ext["uri"]:
            problems.append(f"extensions[{i}] has no uri")
        if "required" in ext and not isinstance(ext["required"], bool):
            problems.append(f"extensions[{i}].required is {type(ext['required']).__name__}, not boolean")
        if "description" in ext and not isinstance(ext["description"], str):
            problems.append(f"extensions[{i}].description is not a string")
        if "params" in ext and not isinstance(ext["params"], dict):
            problems.append(f"extensions[{i}].params is not an object")
    if problems:
        return [fail("A2A-CARD-004", "; ".join(problems) + " (A2A §8 AgentExtension)", [ex_evidence(log.get("card"))])]
    uris = ", ".join(e["uri"] for e in exts)
    return [ok("A2A-CARD-004", f"{len(exts)} extension(s) declared with uri and typed fields: {uris}")]
