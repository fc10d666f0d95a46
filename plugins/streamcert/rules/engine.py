"""The rule engine: the mechanics every rule shares, so that a rule's body reads like its sentence.

A rule names its requirement ID(s) once, in its decorator, with the view it reads:

    @rule("PROG-001", view=ProgressStream)
    def phase_names(v: ProgressStream, out: Verdict) -> None:
        out.fail_each("frame(s) show no known phase", [(why, evidence) for …])
        out.passed(f"{len(v.progress_frames)} progress objects")

The engine builds each view once per frame log (every rule reading it shares it), turns a view that
cannot be built into ERROR findings (the target gave no usable answer) or into no finding (nothing to
judge), hands the rule a collector bound to its requirement (a `Verdict`; a rule deciding several IDs
gets `Verdicts`, one `Verdict` per ID), and turns an exception in a rule into ERROR: a harness fault
must show, never pass silently. A failing, weaker or warned finding cites the requirement's source
from the catalogue, so no rule writes its own citation.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..catalogue import Scenario, load_catalogue
from ..contract.capture import CONTENT_ENCODING, GRPC_STATUS
from ..framelog import END_ERROR, Exchange, FrameLog
from ..outcomes import Finding, Outcome

SHOWN = 3  # how many of several offending items a finding carries as evidence


# -- what a rule is given -----------------------------------------------------------------------------

@dataclass
class RuleContext:
    scenario: Scenario | None = None
    options: dict[str, Any] = field(default_factory=dict)  # tolerance overrides, limits used

    @property
    def script(self) -> dict[str, Any] | None:
        return self.scenario.script if self.scenario else None

    def tolerance(self, req_id: str, key: str, default: float) -> float:
        override = self.options.get("tolerances", {}).get(f"{req_id}.{key}")
        if override is not None:
            return float(override)
        req = load_catalogue().get(req_id)
        return float(req.tolerance.get(key, default)) if req else default


class Unjudgeable(Exception):
    """Raised while building a view. With a message: the target gave no usable answer, so every
    requirement of the rule is ERROR with it. Without: there is nothing here for the rule to judge
    (the driver never got that far, or another requirement says what is wrong): no finding."""

    def __init__(self, message: str = "", evidence: Sequence[dict[str, Any]] = (), *, missing: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.evidence = list(evidence)
        self.missing = missing  # without a message: what the log lacked, said as the NOT_TESTED reason


class View(Protocol):
    """What a rule reads: built once per frame log from the log and the context.

    A view over several exchanges may hold `unjudged`: (message, evidence) for each exchange it had to
    leave out (see `cannot_judge`); the engine makes each an ERROR finding of every requirement of the
    rules reading it, beside what the rule decides on the others."""

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> "View": ...


@dataclass
class Run:
    """The default view: the whole frame log of one scenario run, with the script it played."""

    log: FrameLog
    ctx: RuleContext

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> "Run":
        return cls(log, ctx)

    @property
    def script(self) -> dict[str, Any] | None:
        return self.ctx.script or self.log.script

    def get(self, label: str) -> Exchange | None:
        return self.log.get(label)

    def answered(self, label: str) -> Exchange:
        """The exchange `label`, which must have an answer (see `answered`)."""
        return answered(self.log, label)


def answered(log: FrameLog, label: str) -> Exchange:
    """The exchange `label` with an answer that can be judged. Absent (the driver never got that far):
    nothing to judge. Its transport failed, or its answer cannot be judged (`cannot_judge`): the rule's
    requirements are ERROR, with why."""
    ex = log.get(label)
    if ex is None:
        raise Unjudgeable()
    if ex.end == END_ERROR or ex.status is None:
        raise Unjudgeable(f"{label} ({ex.rpc_method or ex.method}): {ex.error or 'no answer'}", [ex_evidence(ex)])
    if why := cannot_judge(ex):
        raise Unjudgeable(f"{label} ({ex.rpc_method or ex.method}): {why}", [ex_evidence(ex)])
    return ex


def cannot_judge(ex: Exchange) -> str | None:
    """Why an answer that came cannot be judged at all, as its findings say it: a bound the capture
    reached (a size cap, a Content-Encoding it cannot decode; `Exchange.unjudged`), a redirect (the
    suite follows none), JSON nested deeper than the suite reads. None when it can be judged."""
    if why := ex.unjudged:
        return why
    if ex.status is not None and 300 <= ex.status < 400:
        location = ex.response_headers.get("location")
        where = f"redirecting to {location}" if location else "without a Location"
        return (f"answered HTTP {ex.status} {where}; the suite does not follow redirects (point it at the "
                f"URL the redirect names)")
    return ex.too_deep


def unjudged_entry(ex: Exchange, why: str) -> tuple[str, list[dict[str, Any]]]:
    """An exchange a view over several leaves out, as `View.unjudged` holds it: (message, evidence)."""
    return f"{ex.label} ({ex.rpc_method or ex.method}): {why}", [ex_evidence(ex)]


# -- the collector --------------------------------------------------------------------------------------

class Verdict:
    """The findings one rule makes about one requirement (several are allowed: one per stream, say;
    the report keeps the worst)."""

    def __init__(self, req_id: str, ctx: RuleContext) -> None:
        self.req_id = req_id
        self.ctx = ctx
        self.findings: list[Finding] = []

    @property
    def source(self) -> str:
        req = load_catalogue().get(self.req_id)
        return req.source if req else ""

    def tolerance(self, key: str, default: float) -> float:
        return self.ctx.tolerance(self.req_id, key, default)

    def add(self, outcome: Outcome, message: str, evidence: Iterable[dict[str, Any]] = (), *,
            reading: str | None = None, measured: dict[str, Any] | None = None) -> Finding:
        if outcome in (Outcome.FAIL, Outcome.NON_STRICT, Outcome.WARNING) and self.source:
            message = f"{message} [{self.source}]"
        finding = Finding(self.req_id, outcome, message, evidence=list(evidence), measured=dict(measured or {}),
                          reading=reading)
        self.findings.append(finding)
        return finding

    def passed(self, message: str = "", **kw: Any) -> Finding:
        return self.add(Outcome.PASS, message, **kw)

    def failed(self, message: str, evidence: Iterable[dict[str, Any]] = (), **kw: Any) -> Finding:
        return self.add(Outcome.FAIL, message, evidence, **kw)

    def non_strict(self, message: str, evidence: Iterable[dict[str, Any]] = (), **kw: Any) -> Finding:
        return self.add(Outcome.NON_STRICT, message, evidence, **kw)

    def warning(self, message: str, evidence: Iterable[dict[str, Any]] = (), **kw: Any) -> Finding:
        return self.add(Outcome.WARNING, message, evidence, **kw)

    def error(self, message: str, evidence: Iterable[dict[str, Any]] = (), **kw: Any) -> Finding:
        return self.add(Outcome.ERROR, message, evidence, **kw)

    def unsupported(self, message: str, **kw: Any) -> Finding:
        return self.add(Outcome.UNSUPPORTED, message, **kw)

    def otherwise_not_tested(self, missing: str) -> None:
        """When the rule decided nothing on this log: NOT_TESTED, saying what the log lacked (never left for
        the report's generic "no test produced a finding")."""
        if not self.findings:
            self.add(Outcome.NOT_TESTED, missing)

    def fail_each(self, what: str, bad: Sequence[tuple[str, dict[str, Any]]], *,
                  outcome: Outcome = Outcome.FAIL, **kw: Any) -> bool:
        """One finding for several offending items, each (why, evidence): "N <what>; the first: <why>",
        the first few items' evidence attached. Returns whether there was anything to blame."""
        if not bad:
            return False
        first = bad[0][0]
        message = f"{what}: {first}" if len(bad) == 1 else f"{len(bad)} {what}; the first: {first}"
        self.add(outcome, message, [ev for _, ev in bad[:SHOWN]], **kw)
        return True


class Verdicts(dict[str, Verdict]):
    """The collectors of a rule that decides several requirements, by ID."""

    @property
    def findings(self) -> list[Finding]:
        return [f for verdict in self.values() for f in verdict.findings]


# -- registration and judging -------------------------------------------------------------------------

RuleFn = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Rule:
    fn: RuleFn
    req_ids: tuple[str, ...]
    view: type[View]

    @property
    def name(self) -> str:
        return self.fn.__name__


_REGISTRY: dict[str, list[Rule]] = {}


def rule(*req_ids: str, view: type[View]) -> Callable[[RuleFn], RuleFn]:
    """Register a rule for the requirement IDs it decides, reading `view` (a class with `of(log, ctx)`)."""

    def deco(fn: RuleFn) -> RuleFn:
        entry = Rule(fn, req_ids, view)
        fn.req_ids = req_ids  # type: ignore[attr-defined]
        for rid in req_ids:
            _REGISTRY.setdefault(rid, []).append(entry)
        return fn

    return deco


def rules_for(req_id: str) -> list[Rule]:
    return _REGISTRY.get(req_id, [])


def registered() -> set[str]:
    return set(_REGISTRY)


def _harness_fault(entry: Rule, wanted: Iterable[str], exc: Exception) -> list[Finding]:
    why = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return [Finding(r, Outcome.ERROR, f"harness fault in rule {entry.name}: {why}") for r in entry.req_ids
            if r in wanted]


def run_rules(log: FrameLog, wanted: list[str], ctx: RuleContext) -> list[Finding]:
    """Run every rule deciding one of `wanted` once; keep the findings for those IDs."""
    views: dict[type, Any] = {}
    seen: set[RuleFn] = set()
    findings: list[Finding] = []
    for rid in wanted:
        for entry in rules_for(rid):
            if entry.fn in seen:
                continue
            seen.add(entry.fn)
            try:
                produced = _apply(entry, log, ctx, views)
            except Exception as exc:  # noqa: BLE001  (a harness fault is ERROR, never a pass)
                produced = _harness_fault(entry, wanted, exc)
            findings.extend(f for f in produced if f.req_id in wanted)
    return findings


def _apply(entry: Rule, log: FrameLog, ctx: RuleContext, views: dict[type, Any]) -> list[Finding]:
    if len(entry.req_ids) == 1:
        out: Verdict | Verdicts = Verdict(entry.req_ids[0], ctx)
    else:
        out = Verdicts({r: Verdict(r, ctx) for r in entry.req_ids})
    try:
        if entry.view not in views:
            views[entry.view] = _build(entry.view, log, ctx)
        view = views[entry.view]
        if isinstance(view, Unjudgeable):
            raise view
        entry.fn(view, out)
    except Unjudgeable as why:  # from the view, or from a rule body asking for an exchange (Run.answered)
        if not why.message:
            return [Finding(r, Outcome.NOT_TESTED, why.missing) for r in entry.req_ids] if why.missing else []
        return [Finding(r, Outcome.ERROR, why.message, evidence=list(why.evidence)) for r in entry.req_ids]
    verdicts = [out] if isinstance(out, Verdict) else list(out.values())
    for message, evidence in getattr(view, "unjudged", ()):
        for verdict in verdicts:
            verdict.error(message, evidence)
    return out.findings


def _build(view_cls: type[View], log: FrameLog, ctx: RuleContext) -> Any:
    """A view, or the Unjudgeable that says why there is none (kept, so every rule reading it learns why)."""
    try:
        return view_cls.of(log, ctx)
    except Unjudgeable as why:
        return why


# -- evidence ---------------------------------------------------------------------------------------------

QUOTE_LIMIT = 400


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def frame_no(exchange: Exchange, event: Any) -> int:
    """1-based number of a data event among the exchange's data events (comments not counted)."""
    return exchange.frame_number(event)


def ev_evidence(exchange: Exchange, event: Any, note: str = "") -> dict[str, Any]:
    """One frame as evidence: which exchange, its number, its arrival time and its data."""
    out: dict[str, Any] = {"exchange": exchange.label, "frame": frame_no(exchange, event),
                           "t": round(event.t, 3), "data": quote(event.data)}
    if note:
        out["note"] = note
    return out


def _sent(exchange: Exchange) -> str | None:
    """What the suite sent in the exchange's request, quoted (JSON as it went, or the raw text of a body broken
    on purpose); None when the request had no body (a GET)."""
    body = exchange.request_body
    if body is None or body == "":
        return None
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return quote(text)


def ex_evidence(exchange: Exchange, note: str = "") -> dict[str, Any]:
    """One exchange as evidence: the request (its operation, and what was sent, quoted), the status and content
    type, the body (its first bytes) or the error, and how the body came when it was encoded or cut. For an
    event stream, whose body is too long to quote, the first frame that could not be read as it was sent
    (`unread_frame`) stands where the body would: its number, arrival time and data, and why (`unread`). A
    finding about what the stream says is then tied to the frame that kept it from being said, as the finding
    on that frame is (the reports group the two under one root)."""
    out: dict[str, Any] = {"exchange": exchange.label, "request": exchange.rpc_method or exchange.method,
                           "status": exchange.status, "content_type": exchange.content_type}
    if (sent := _sent(exchange)) is not None:
        out["sent"] = sent
    if exchange.error:
        out["error"] = exchange.error
    elif exchange.binding == "grpc":
        if status := exchange.notes.get(GRPC_STATUS):
            out["grpc_status"] = status
    elif not exchange.is_sse:
        size = exchange.size
        text = exchange.head(QUOTE_LIMIT * 4).decode("utf-8", "replace")
        out["body"] = text[:QUOTE_LIMIT] + f"… ({size} bytes)" if len(text) > QUOTE_LIMIT or \
            size > QUOTE_LIMIT * 4 else text
    if unread := unread_frame(exchange):
        event, why = unread
        out.update(frame=frame_no(exchange, event), t=round(event.t, 3), data=quote(event.data), unread=why)
    if coding := exchange.notes.get(CONTENT_ENCODING):
        out["content_encoding"] = f"{coding} (decoded; the suite asked for identity)"
    if why := exchange.unjudged:
        out["unjudged"] = why
    if note:
        out["note"] = note
    return out


INVALID_UTF8 = "invalid_utf8"  # the capture's note on a body holding bytes that are not UTF-8
NOT_UTF8 = "holds bytes that are not UTF-8 (read as U+FFFD)"
NOT_A_RESPONSE = "is no JSON-RPC response: no result or error object"


def unread_frame(exchange: Exchange) -> tuple[Any, str] | None:
    """The first data event of an event stream that could not be read as it was sent, and why: it holds the
    U+FFFD its decoder put for bytes that are not UTF-8, its data is not JSON, or (a stream answering a
    JSON-RPC request, whose events are its responses) it holds no `result` or `error` object: every rule
    reading what the stream says had to pass it by. None for a stream without one, and for any other answer.
    Found once per events list."""
    if not exchange.is_sse or exchange.status is None:
        return None

    def find() -> tuple[Any, str] | None:
        from .common.streamview import frame_facts  # each frame as the one walk over the stream read it (no parse again)

        not_utf8 = _not_utf8_event(exchange) if exchange.notes.get(INVALID_UTF8) else None
        responses = bool(exchange.rpc_method) and exchange.binding == "jsonrpc"
        for event, facts in zip(exchange.data_events(), frame_facts(exchange)):
            if event is not_utf8:
                return event, NOT_UTF8
            if error := facts.envelope[0]:
                return event, f"data is not JSON ({error})"
            if responses and not facts.answered:
                return event, NOT_A_RESPONSE
        return None

    return exchange.derived("_unread_frame", find)


def _not_utf8_event(exchange: Exchange) -> Any:
    """The event holding the first byte of the body that is not UTF-8 (None when no kept event holds it: it
    was in a block never dispatched). The decoder put U+FFFD for it; the U+FFFD that came encoded before it
    are counted out, so a stream that quotes the character itself is not blamed for it. (One inside an
    `event:` or `id:` field before the bad byte would be miscounted; none of the suite's targets sends one.)"""
    body = exchange.body
    try:
        body.decode("utf-8")
        return None
    except UnicodeDecodeError as exc:
        sent = body[:exc.start].decode("utf-8").count("\ufffd")
    seen = 0
    for event in exchange.events:  # comments included: their text went through the same decoder
        seen += event.data.count("\ufffd")
        if seen > sent:
            return None if event.is_comment else event
    return None
