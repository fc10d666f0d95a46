"""A2A-CARD-: the agent card (A2A §8)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...contract.a2a import UNPROBED
from ...contract.capture import NOT_SENT
from ...contract.labels.a2a import CARD, CARD_REVALIDATED, PROBE_PREFIX
from ...framelog import END_ERROR, Exchange, FrameLog
from ...protocols import a2a, bindings
from .. import RuleContext, Unjudgeable, Verdict, answered, ex_evidence, rule
from ..common.unary import Answer
from ..engine import cannot_judge

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


@dataclass
class AgentCard:
    """The agent card the run fetched: the exchange, and the card when it came as HTTP 200 with a JSON
    object (None otherwise: A2A-CARD-001 says why)."""

    exchange: Exchange
    card: dict[str, Any] | None
    revalidated: Exchange | None = None  # the card asked again with its validator (A2A-CARD-010)

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> AgentCard:
        ex = answered(log, CARD)
        value, err = ex.json()
        card = value if ex.status == 200 and not err and isinstance(value, dict) else None
        return cls(ex, card, log.get(CARD_REVALIDATED))

    @property
    def evidence(self) -> dict[str, Any]:
        return ex_evidence(self.exchange)


@rule("A2A-CARD-001", view=AgentCard)
def card_served(v: AgentCard, out: Verdict) -> None:
    ex = v.exchange
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
        out.passed(f"GET {a2a.CARD_PATH}: HTTP 200 application/json object")
        return
    out.failed(f"GET {ex.url} answered {why}; expected the card at {a2a.CARD_PATH} as an application/json object",
               [v.evidence])


def _content(v: AgentCard, out: Verdict) -> dict[str, Any] | None:
    """The card, or None after failing `out`: a requirement on what the card holds is not met when
    there is no card."""
    if v.card is None:
        out.failed(f"no agent card to judge (GET {v.exchange.url} gave HTTP {v.exchange.status})", [v.evidence])
    return v.card


def type_name(t: type | tuple[type, ...]) -> str:
    return TYPE_NAMES.get(t, getattr(t, "__name__", str(t))) if isinstance(t, type) else "/".join(
        TYPE_NAMES.get(x, x.__name__) for x in t)


@rule("A2A-CARD-002", view=AgentCard)
def card_required_fields(v: AgentCard, out: Verdict) -> None:
    if (card := _content(v, out)) is None:
        return
    problems = []
    for name, typ in REQUIRED_FIELDS.items():
        if name not in card:
            problems.append(f"{name} is missing")
        elif not isinstance(card[name], typ) or (typ is str and isinstance(card[name], bool)):
            problems.append(f"{name} is {type(card[name]).__name__}, not {type_name(typ)}")
    for i, skill in enumerate(card.get("skills") or []):
        if not isinstance(skill, dict):
            problems.append(f"skills[{i}] is not an object")
            continue
        problems += [f"skills[{i}].{f} is missing" for f in SKILL_FIELDS if f not in skill]
    if problems:
        out.failed("the card lacks required AgentCard fields: " + "; ".join(problems), [v.evidence])
    else:
        out.passed("all required AgentCard fields present with their types")


@rule("A2A-CARD-003", view=AgentCard)
def card_jsonrpc_interface(v: AgentCard, out: Verdict) -> None:
    if (card := _content(v, out)) is None:
        return
    interfaces = card.get("supportedInterfaces")
    if not isinstance(interfaces, list):
        out.failed("supportedInterfaces is missing or not an array", [v.evidence])
        return
    problems, found = [], None
    for i, iface in enumerate(interfaces):
        if not isinstance(iface, dict):
            problems.append(f"supportedInterfaces[{i}] is not an object")
            continue
        missing = [f for f in INTERFACE_FIELDS if not isinstance(iface.get(f), str) or not iface.get(f)]
        if missing:
            problems.append(f"supportedInterfaces[{i}] lacks {', '.join(missing)}")
        elif iface["protocolBinding"] not in bindings.BY_CARD_NAME and ":" not in iface["protocolBinding"]:
            # a custom binding is named by a URI (§5.8)
            problems.append(f"supportedInterfaces[{i}].protocolBinding {iface['protocolBinding']!r} is not one of "
                            f"{', '.join(bindings.BY_CARD_NAME)} nor a custom binding's URI")
        elif iface["protocolVersion"].split(".")[:2] == ["1", "0"]:
            found = found or iface
    if found and not problems:
        out.passed(f"{found['protocolBinding']} interface {found['url']} for protocol {found['protocolVersion']}")
        return
    if not found:
        problems.append("no interface has protocolVersion 1.0")
    out.failed("; ".join(problems), [v.evidence])


@rule("A2A-CARD-004", view=AgentCard)
def card_extensions(v: AgentCard, out: Verdict) -> None:
    if (card := _content(v, out)) is None:
        return
    caps = card.get("capabilities")
    exts = caps.get("extensions") if isinstance(caps, dict) else None
    if exts is None:
        out.passed("the card declares no extensions")
        return
    if not isinstance(exts, list):
        out.failed("capabilities.extensions is not an array", [v.evidence])
        return
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
        out.failed("; ".join(problems), [v.evidence])
    else:
        out.passed(f"{len(exts)} extension(s) declared with uri and typed fields: {', '.join(e['uri'] for e in exts)}")


# -- A2A-CARD-005: the card as ProtoJSON writes it ---------------------------------------------------------

@dataclass
class _ProtoJson:
    """What a walk of the card against its messages (a2a.CARD_MESSAGES) found."""

    problems: list[str]
    oneofs: int = 0  # oneof objects seen (security schemes, OAuth flows)

    def walk(self, value: Any, message: str, path: str) -> None:
        fields = a2a.CARD_MESSAGES[message]
        if not isinstance(value, dict):
            return  # a member of the wrong JSON type: A2A-CARD-002…004 judge the types they need
        if message in a2a.CARD_ONEOFS:
            self.oneofs += 1
            held = [k for k in value if k in fields]
            if len(held) != 1:
                others = [k for k in value if k not in fields]
                besides = f"; it holds {', '.join(others)}, which ProtoJSON never writes there" if others else ""
                self.problems.append(f"{path} holds {len(held)} of its oneof members "
                                     f"({', '.join(held) if held else 'none'}), not exactly one of "
                                     f"{', '.join(fields)}{besides}")
        folded = {a2a.folded(f): f for f in fields}
        for key, item in value.items():
            if key not in fields:
                # a member the proto does not have is ignored (A2A §5.7), unless it is one spelt otherwise
                if (proper := folded.get(a2a.folded(key))) is not None:
                    self.problems.append(f"{path}.{key} is the member {proper} under another spelling "
                                         f"(ProtoJSON writes {proper})")
                continue
            inner = fields[key]
            if inner is None:
                continue
            if (message, key) in a2a.CARD_MAPS:
                entries = list(item.items()) if isinstance(item, dict) else []
                for name, entry in entries:
                    self.walk(entry, inner, f"{path}.{key}[{name!r}]")
            elif isinstance(item, list):
                for i, entry in enumerate(item):
                    self.walk(entry, inner, f"{path}.{key}[{i}]")
            else:
                self.walk(item, inner, f"{path}.{key}")


@rule("A2A-CARD-005", view=AgentCard)
def card_protojson(v: AgentCard, out: Verdict) -> None:
    if (card := _content(v, out)) is None:
        return
    found = _ProtoJson([])
    found.walk(card, "AgentCard", "card")
    if found.problems:
        out.failed("the card is not ProtoJSON: " + "; ".join(found.problems), [v.evidence])
    else:
        oneofs = f", each of its {found.oneofs} oneof object(s) with exactly one member" if found.oneofs else ""
        out.passed(f"every member of the card under its ProtoJSON name{oneofs}")


# -- A2A-CARD-006: what the card declares answers ------------------------------------------------------


@dataclass
class Probes:
    """One GetTask of an unknown id sent to every interface the card declares in a binding the suite speaks."""

    probes: list[tuple[str, str, Exchange]]  # (binding, url, exchange)
    unprobed: dict[str, str]  # binding → why the suite could not ask it (its extra not installed)

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> Probes:
        card = AgentCard.of(log, ctx).card
        probes, unprobed = [], dict(log.notes.get(UNPROBED) or {})
        for binding, url in bindings.declared(card):
            ex = log.get(PROBE_PREFIX + binding)
            if ex is not None:
                probes.append((binding, url, ex))
        if not probes:
            raise Unjudgeable()
        return cls(probes, unprobed)


# -- A2A-CARD-007: the card's HTTP caching headers (§8.6.1) --------------------------------------------
MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?\d+\"?\s*(?:,|$)", re.IGNORECASE)  # RFC 9111 §5.2.2.1


def _caching_misses(headers: dict[str, str]) -> list[str]:
    """What §8.6.1's SHOULDs find missing in the card's response headers (lower-case names)."""
    misses = []
    cache_control = headers.get("cache-control")
    if cache_control is None:
        misses.append("no Cache-Control header")
    elif not MAX_AGE.search(cache_control):
        misses.append(f"Cache-Control {cache_control!r} has no max-age directive")
    if not headers.get("etag"):
        misses.append("no ETag header")
    return misses


@rule("A2A-CARD-007", view=AgentCard)
def card_cacheable(v: AgentCard, out: Verdict) -> None:
    if v.card is None:
        return  # no card served: A2A-CARD-001's finding
    headers = v.exchange.response_headers
    if misses := _caching_misses(headers):
        out.non_strict(f"the agent card's response has {' and '.join(misses)}: clients cannot cache it as "
                       f"HTTP caching intends", [v.evidence])
    else:
        out.passed(f"the agent card is served with Cache-Control {headers['cache-control']!r} and ETag "
                   f"{headers['etag']!r}")


# -- A2A-CARD-010: the card revalidated (§8.6.1, RFC 9110 §13.1) ---------------------------------------


def _headers_seen(headers: dict[str, str]) -> str:
    seen = [f"{name}: {headers[name]}" for name in ("cache-control", "etag", "last-modified") if name in headers]
    return "; ".join(seen) if seen else "none of Cache-Control, ETag, Last-Modified"


@rule("A2A-CARD-010", view=AgentCard)
def card_revalidated(v: AgentCard, out: Verdict) -> None:
    if v.card is None:
        return  # no card served: A2A-CARD-001's finding
    headers = v.exchange.response_headers
    if (validator := a2a.card_validator(headers)) is None:
        out.non_strict(f"the agent card came with no validator (ETag or Last-Modified), so no client can revalidate "
                       f"it with a conditional request; caching headers seen: {_headers_seen(headers)}", [v.evidence])
        return
    condition, value = validator
    if (ex := v.revalidated) is None:
        raise Unjudgeable(missing="the card was not asked for again with its validator (a recording made before "
                                  "the suite asked)")
    if why := (ex.error or "no answer" if ex.status is None else None if ex.status == 304 else cannot_judge(ex)):
        out.error(f"GET {ex.url} with {condition}: {value} got no answer that can be judged: {why}",
                  [ex_evidence(ex)])
    elif ex.status == 304:
        out.passed(f"GET with {condition}: {value} answered 304 Not Modified")
    elif ex.status == 200 and (again := a2a.card_validator(ex.response_headers)) and again[1] != value:
        out.passed(f"GET with {condition}: {value} answered 200 with another validator ({again[1]}): the card "
                   f"changed between the two GETs, so a full answer is right")
    else:
        out.non_strict(f"GET with {condition}: {value} (the validator the card came with) answered HTTP {ex.status}, "
                       f"not 304 Not Modified: a client revalidating its cached card gets it again whole; caching "
                       f"headers seen: {_headers_seen(ex.response_headers)}", [ex_evidence(ex)])


@rule("A2A-CARD-006", view=Probes)
def declared_interfaces_answer(v: Probes, out: Verdict) -> None:
    bad, good, lost = [], [], []
    for binding, url, ex in v.probes:
        name = bindings.CARD_NAME[binding]
        if ex.notes.get(NOT_SENT):  # the suite's own choice (credentials kept to their origin): no blame
            lost.append((f"the {name} interface at {url} was not asked: {ex.error}", ex_evidence(ex)))
            continue
        if ex.status is None or ex.end == END_ERROR:
            bad.append((f"the card declares a {name} interface at {url}, and GetTask there got no answer: "
                        f"{ex.error or 'nothing came'}", ex_evidence(ex)))
            continue
        if why := cannot_judge(ex):  # a size cap or the nesting limit cut the answer: the cap is no blame
            lost.append((f"the {name} interface at {url} answered, but its answer cannot be judged: {why}",
                         ex_evidence(ex)))
            continue
        ans = Answer.of(ex)
        if ans.code == a2a.TASK_NOT_FOUND:
            good.append(f"{name} at {url}: TaskNotFoundError ({ans.error.get('as', 'JSON-RPC -32001')})")
        else:
            bad.append((f"the card declares a {name} interface at {url}, and GetTask of an unknown id there got "
                        f"{ans.describe()} (HTTP {ex.status}), not TaskNotFoundError", ex_evidence(ex)))
    unprobed = "".join(f"; {bindings.CARD_NAME[b]} not asked: {why}" for b, why in v.unprobed.items())
    if out.fail_each("declared interface(s) that do not answer over their binding", bad):
        return
    if lost:
        out.error("; ".join(text for text, _ in lost), [evidence for _, evidence in lost])
    else:
        out.passed("; ".join(good) + unprobed)
