"""Rules: pure functions from a frame log to findings, one place per requirement.

A rule is registered for the requirement IDs it decides. It reads only the frame log and the
context (the scenario, the script sent, declared tolerances); it never touches the network or the
clock, so the live run, `streamcert check` on a cassette and the project's own tests share it.
A rule that finds nothing to judge in a log returns no finding for that ID (it stays NOT_TESTED
unless another test decides it).
"""

from __future__ import annotations

import importlib
import pkgutil
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from ..catalogue import Scenario, load_catalogue
from ..framelog import END_ERROR, Event, Exchange, FrameLog
from ..outcomes import Finding, Outcome

RuleFn = Callable[["FrameLog", "RuleContext"], Iterable[Finding]]

_REGISTRY: dict[str, list[RuleFn]] = {}
_loaded = False


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


def rule(*req_ids: str) -> Callable[[RuleFn], RuleFn]:
    """Register a rule for the requirement IDs it decides."""

    def deco(fn: RuleFn) -> RuleFn:
        fn.req_ids = req_ids  # type: ignore[attr-defined]
        for rid in req_ids:
            _REGISTRY.setdefault(rid, []).append(fn)
        return fn

    return deco


def _load() -> None:
    """Import every module of this package once: each registers the rules it defines."""
    global _loaded
    if not _loaded:
        for info in pkgutil.iter_modules(__path__):
            importlib.import_module(f"{__name__}.{info.name}")
        _loaded = True


def registered_ids() -> set[str]:
    _load()
    return set(_REGISTRY)


def judge(log: FrameLog, req_ids: Iterable[str], ctx: RuleContext | None = None) -> list[Finding]:
    """Run every rule that decides one of `req_ids` on `log`; keep the findings for those IDs."""
    _load()
    ctx = ctx or RuleContext()
    wanted = list(dict.fromkeys(req_ids))
    findings: list[Finding] = []
    # A target whose card could not be fetched at all gave no answer: every requirement is ERROR
    # (not UNSUPPORTED: nothing about its features is known).
    unreachable = log.notes.get("unreachable")
    if unreachable:
        return [Finding(rid, Outcome.ERROR, f"the target did not answer: {unreachable}") for rid in wanted]
    # A driver that found the target without the feature a requirement needs says so in the log;
    # those requirements are UNSUPPORTED with its reason, and their rules do not run.
    unsupported = log.notes.get("unsupported", {})
    for rid in [r for r in wanted if r in unsupported]:
        findings.append(Finding(rid, Outcome.UNSUPPORTED, unsupported[rid]))
        wanted.remove(rid)
    seen: set[RuleFn] = set()
    for rid in wanted:
        for fn in _REGISTRY.get(rid, []):
            if fn in seen:
                continue
            seen.add(fn)
            try:
                produced = list(fn(log, ctx))
            except Exception as exc:  # a harness fault must show, not pass silently
                tb = traceback.format_exception_only(type(exc), exc)[-1].strip()
                produced = [Finding(r, Outcome.ERROR, f"harness fault in rule {fn.__name__}: {tb}")
                            for r in fn.req_ids if r in wanted]  # type: ignore[attr-defined]
            findings.extend(f for f in produced if f.req_id in wanted)
    return findings


# -- helpers every rule uses --------------------------------------------------------------------

QUOTE_LIMIT = 400


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def frame_no(exchange: Exchange, event: Event) -> int:
    """1-based number of a data event among the exchange's data events (comments not counted)."""
    n = 0
    for ev in exchange.events:
        if not ev.is_comment:
            n += 1
        if ev is event:
            return n
    return 0


def ev_evidence(exchange: Exchange, event: Event, note: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"exchange": exchange.label, "frame": frame_no(exchange, event),
                           "t": round(event.t, 3), "data": quote(event.data)}
    if note:
        out["note"] = note
    return out


def ex_evidence(exchange: Exchange, note: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"exchange": exchange.label, "request": exchange.rpc_method or exchange.method,
                           "status": exchange.status, "content_type": exchange.content_type}
    if exchange.error:
        out["error"] = exchange.error
    elif not exchange.is_sse:
        out["body"] = quote(exchange.body.decode("utf-8", "replace"))
    if note:
        out["note"] = note
    return out


def ok(req_id: str, message: str = "", **kw: Any) -> Finding:
    return Finding(req_id, Outcome.PASS, message, **kw)


def fail(req_id: str, message: str, evidence: list[dict[str, Any]] | None = None, **kw: Any) -> Finding:
    return Finding(req_id, Outcome.FAIL, message, evidence=evidence or [], **kw)


def outcome(req_id: str, out: Outcome, message: str, evidence: list[dict[str, Any]] | None = None,
            **kw: Any) -> Finding:
    return Finding(req_id, out, message, evidence=evidence or [], **kw)


def needed(log: FrameLog, label: str, *req_ids: str) -> tuple[Exchange | None, list[Finding]]:
    """The exchange a rule needs: (exchange, []) when it has an answer; (None, ERROR findings) when
    the transport failed; (None, []) when the driver never got that far."""
    ex = log.get(label)
    if ex is None:
        return None, []
    if ex.end == END_ERROR or ex.status is None:
        why = ex.error or "no answer"
        return None, [Finding(r, Outcome.ERROR, f"{label} ({ex.rpc_method or ex.method}): {why}",
                              evidence=[ex_evidence(ex)]) for r in req_ids]
    return ex, []


def result_kind(result: Any) -> str | None:
    """Which StreamResponse member a result object holds (the first found), if any."""
    if isinstance(result, dict):
        for kind in ("task", "message", "statusUpdate", "artifactUpdate"):
            if isinstance(result.get(kind), dict):
                return kind
    return None
