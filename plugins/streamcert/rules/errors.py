"""A2A-ERR-: each refused operation gets its error code (A2A §3.3, §9; JSON-RPC 2.0 §5.1).

Labels read (written by streamcert.scenarios.a2a):
  errors scenario:       get_unknown, send_unknown, cancel_terminal, send_terminal, subscribe_terminal,
                         unknown_method, parse_error, invalid_params, bad_version, cross_context
  no-streaming scenario: card_nostream, setup_nostream, stream_refused, subscribe_refused
A2A-ERR-009 reads every error response in the log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import a2a
from ..framelog import Exchange, FrameLog
from ..outcomes import Finding, Outcome
from . import RuleContext, ex_evidence, fail, ok, outcome, rule
from .unary import VIA_SSE, Answer, got_nothing, task_of

SPEC_STREAMING = ("seed 001 'Before the first frame': \"Unless the card sets capabilities.streaming to true, the "
                  "agent must refuse SendStreamingMessage with UnsupportedOperationError\"; A2A §8 (SubscribeToTask "
                  "likewise)")
SPEC_NOT_FOUND = "A2A §3.3: an unknown task id gets TaskNotFoundError (-32001)"
SPEC_NOT_CANCELABLE = "A2A §3.1.5, §3.3: canceling a task in a terminal state gets TaskNotCancelableError (-32002)"
SPEC_SEND_TERMINAL = "A2A §3.1.1, §3.3: sending to a task in a terminal state gets UnsupportedOperationError (-32004)"
SPEC_SUBSCRIBE_TERMINAL = "A2A §3.1.6: SubscribeToTask on a terminal task answers UnsupportedOperationError (-32004)"
SPEC_JSONRPC = "JSON-RPC 2.0 §5.1: method not found -32601, parse error -32700 (A2A §9)"
SPEC_PARAMS = "JSON-RPC 2.0 §5.1: invalid params -32602 (or invalid request -32600); A2A §3.3"
SPEC_VERSION = "A2A §3.6: an unsupported A2A-Version gets VersionNotSupportedError (-32009)"
SPEC_DETAILS = ("A2A §9: error.data SHOULD be an array of typed details with a google.rpc.ErrorInfo "
                "(reason, domain \"a2a-protocol.org\")")
SPEC_CROSS = "A2A §3.1.1: a message whose taskId names a task of another contextId is rejected"


@dataclass
class _Check:
    """One refused request, judged: ok True (expected error), False (something else), None (no answer)."""

    ok: bool | None
    text: str
    evidence: dict[str, Any]
    code: Any = None
    via: str = ""


def _named(code: Any) -> str:
    return f"{code} {a2a.error_name(code)}" if isinstance(code, int) else repr(code)


def _check(ex: Exchange, codes: tuple[int, ...], what: str, *, single_event: bool = False) -> _Check:
    """Did `ex` get a JSON-RPC error with one of `codes`? `single_event`: an SSE answer must hold only it."""
    why = got_nothing(ex)
    if why:
        return _Check(None, f"{what} ({ex.label}) got no answer: {why}", ex_evidence(ex))
    ans = Answer.of(ex)
    want = " or ".join(_named(c) for c in codes)
    if ans.error is None:
        seen = ans.describe() if ans.problem else f"was accepted, {ans.describe()}"
        if ans.via == VIA_SSE and not ans.problem:
            seen = f"was streamed ({ans.extra_events + 1} event(s), the first: {ans.describe()})"
        return _Check(False, f"{what} {seen}; expected {want}", ex_evidence(ex), via=ans.via)
    if single_event and ans.extra_events:
        return _Check(False, f"{what} got error {_named(ans.code)} followed by {ans.extra_events} more event(s) "
                             f"on the stream; expected only {want}", ex_evidence(ex), ans.code, ans.via)
    if ans.code not in codes:
        return _Check(False, f"{what} got error {_named(ans.code)} ({ans.error.get('message', '')!r}); "
                             f"expected {want}", ex_evidence(ex), ans.code, ans.via)
    return _Check(True, f"{what} → {_named(ans.code)} ({ans.via})", ex_evidence(ex), ans.code, ans.via)


def _verdict(rid: str, checks: list[_Check], spec: str, reading: str | None = None) -> list[Finding]:
    if not checks:
        return []
    bad = [c for c in checks if c.ok is False]
    if bad:
        return [fail(rid, "; ".join(c.text for c in bad) + f" ({spec})", [c.evidence for c in bad])]
    lost = [c for c in checks if c.ok is None]
    if lost:
        return [outcome(rid, Outcome.ERROR, "; ".join(c.text for c in lost), [c.evidence for c in lost])]
    return [ok(rid, "; ".join(c.text for c in checks), reading=reading)]


def _checks(log: FrameLog, wanted: list[tuple[str, tuple[int, ...], str]], **kw: Any) -> list[_Check]:
    out = []
    for label, codes, what in wanted:
        ex = log.get(label)
        if ex is not None:
            out.append(_check(ex, codes, what, **kw))
    return out


def _via_reading(checks: list[_Check]) -> str | None:
    vias = sorted({c.via for c in checks if c.ok})
    if not vias:
        return None
    return "error as " + " and as ".join(vias)


# -- the rules ----------------------------------------------------------------------------------------

@rule("A2A-ERR-001")
def streaming_refused(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-ERR-001"
    card_ex = log.get("card_nostream")
    if card_ex is not None:
        card, _ = card_ex.json()
        caps = card.get("capabilities") if isinstance(card, dict) else None
        if isinstance(caps, dict) and caps.get("streaming") is True:
            return []  # not an agent without streaming: nothing to judge here
    checks = _checks(log, [("stream_refused", (a2a.UNSUPPORTED_OPERATION,), "SendStreamingMessage")],
                     single_event=True)
    weak = None
    sub = log.get("subscribe_refused")
    if sub is not None:
        asked = sub.request_body.get("params", {}).get("id") if isinstance(sub.request_body, dict) else None
        setup = log.get("setup_nostream")
        known = task_of(Answer.of(setup).result) if setup is not None and not got_nothing(setup) else None
        known_id = known.get("id") if isinstance(known, dict) else None
        if asked is not None and asked == known_id:
            checks.append(_check(sub, (a2a.UNSUPPORTED_OPERATION,), "SubscribeToTask", single_event=True))
        else:
            c = _check(sub, (a2a.UNSUPPORTED_OPERATION, a2a.TASK_NOT_FOUND),
                       "SubscribeToTask on an id the agent never made", single_event=True)
            checks.append(c)
            if c.ok and c.code == a2a.TASK_NOT_FOUND:
                weak = ("SubscribeToTask on an unknown id (the setup task could not be made): TaskNotFoundError "
                        "accepted in place of UnsupportedOperationError")
    found = _verdict(rid, checks, SPEC_STREAMING, reading=_via_reading(checks))
    if weak and found and found[0].outcome == Outcome.PASS:
        found[0].outcome, found[0].reading = Outcome.NON_STRICT, weak
    return found


@rule("A2A-ERR-002")
def task_not_found(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    checks = _checks(log, [("get_unknown", (a2a.TASK_NOT_FOUND,), "GetTask on an unknown id"),
                           ("send_unknown", (a2a.TASK_NOT_FOUND,), "SendMessage with an unknown taskId")])
    return _verdict("A2A-ERR-002", checks, SPEC_NOT_FOUND)


@rule("A2A-ERR-003")
def not_cancelable(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    checks = _checks(log, [("cancel_terminal", (a2a.TASK_NOT_CANCELABLE,), "CancelTask on a completed task")])
    return _verdict("A2A-ERR-003", checks, SPEC_NOT_CANCELABLE)


@rule("A2A-ERR-004")
def send_to_terminal(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    checks = _checks(log, [("send_terminal", (a2a.UNSUPPORTED_OPERATION,), "SendMessage to a completed task")])
    return _verdict("A2A-ERR-004", checks, SPEC_SEND_TERMINAL)


@rule("A2A-ERR-005")
def subscribe_to_terminal(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    checks = _checks(log, [("subscribe_terminal", (a2a.UNSUPPORTED_OPERATION,),
                            "SubscribeToTask on a completed task")], single_event=True)
    return _verdict("A2A-ERR-005", checks, SPEC_SUBSCRIBE_TERMINAL, reading=_via_reading(checks))


@rule("A2A-ERR-006")
def jsonrpc_errors(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    checks = _checks(log, [("unknown_method", (a2a.METHOD_NOT_FOUND,), "an unknown method"),
                           ("parse_error", (a2a.PARSE_ERROR,), "a body that is not JSON")])
    return _verdict("A2A-ERR-006", checks, SPEC_JSONRPC)


@rule("A2A-ERR-007")
def invalid_params(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    checks = _checks(log, [("invalid_params", (a2a.INVALID_PARAMS, a2a.INVALID_REQUEST),
                            "SendMessage without a message")])
    reading = None
    if checks and checks[0].ok:
        reading = f"{_named(checks[0].code)} (both -32602 and -32600 accepted)"
    return _verdict("A2A-ERR-007", checks, SPEC_PARAMS, reading=reading)


@rule("A2A-ERR-008")
def version_not_supported(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    checks = _checks(log, [("bad_version", (a2a.VERSION_NOT_SUPPORTED,), "GetTask with A2A-Version: 99.0")])
    return _verdict("A2A-ERR-008", checks, SPEC_VERSION)


def _error_info_problem(error: dict[str, Any]) -> str | None:
    """None when error.data holds a well-formed ErrorInfo; else what is missing."""
    data = error.get("data")
    if data is None:
        return "no error.data"
    if not isinstance(data, list):
        return f"error.data is a {type(data).__name__}, not an array"
    infos = [d for d in data if isinstance(d, dict) and d.get("@type") == a2a.ERROR_INFO_TYPE]
    if not infos:
        return f"error.data has no entry with \"@type\": {a2a.ERROR_INFO_TYPE!r}"
    for info in infos:
        if isinstance(info.get("reason"), str) and info["reason"] and info.get("domain") == a2a.ERROR_DOMAIN:
            return None
    info = infos[0]
    return (f"the ErrorInfo has reason {info.get('reason')!r} and domain {info.get('domain')!r} "
            f"(want a reason and domain {a2a.ERROR_DOMAIN!r})")


@rule("A2A-ERR-009")
def error_details(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-ERR-009"
    errors: list[tuple[Exchange, dict[str, Any]]] = []
    for ex in log.exchanges:
        if got_nothing(ex):
            continue
        ans = Answer.of(ex)
        if ans.error is not None:
            errors.append((ex, ans.error))
    if not errors:
        return []
    misses = [(ex, err, why) for ex, err in errors if (why := _error_info_problem(err))]
    if misses:
        listed = "; ".join(f"{ex.label} (error {err.get('code')}): {why}" for ex, err, why in misses)
        return [outcome(rid, Outcome.NON_STRICT,
                        f"SHOULD not met on {len(misses)} of {len(errors)} error response(s): {listed} "
                        f"({SPEC_DETAILS})", [ex_evidence(ex) for ex, _, _ in misses[:5]])]
    return [ok(rid, f"all {len(errors)} error response(s) carry error.data with a google.rpc.ErrorInfo "
                    f"(reason, domain {a2a.ERROR_DOMAIN})")]


@rule("A2A-ERR-010")
def cross_context(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    rid = "A2A-ERR-010"
    ex = log.get("cross_context")
    if ex is None:
        return []
    why = got_nothing(ex)
    if why:
        return [outcome(rid, Outcome.ERROR, f"SendMessage with another context's taskId (cross_context) got no "
                                            f"answer: {why}", [ex_evidence(ex)])]
    ans = Answer.of(ex)
    if ans.error is None:
        seen = ans.describe() if ans.problem else f"was accepted, {ans.describe()}"
        return [fail(rid, f"SendMessage whose taskId names a task of another context {seen}; expected a "
                          f"JSON-RPC error ({SPEC_CROSS})", [ex_evidence(ex)])]
    return [ok(rid, f"SendMessage with another context's taskId was rejected with {_named(ans.code)}",
               reading=f"any JSON-RPC error accepted (the text names no code); got {_named(ans.code)}")]

