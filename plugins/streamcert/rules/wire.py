"""WIRE-: HTTP, SSE framing, the JSON-RPC envelope, content types, ids (A2A §9, WHATWG SSE)."""

from __future__ import annotations

from typing import Any

from .. import a2a
from ..framelog import END_CLOSED, END_ERROR, Exchange, FrameLog
from ..outcomes import Finding, Outcome
from . import RuleContext, ev_evidence, ex_evidence, fail, ok, outcome, quote, rule

# Streams the scenarios expect to succeed; a refused one may answer application/json (A2A §9).
EXPECTED_STREAMS = ("stream", "subscribe", "setup_stream")
# The answer to a body that is not JSON cannot know the request id: JSON-RPC 2.0 §5 says null.
NULL_ID_LABELS = ("parse_error",)


def _answered(log: FrameLog) -> list[Exchange]:
    return [ex for ex in log.exchanges if ex.method == "POST" and ex.end != END_ERROR and ex.status is not None]


def _envelopes(ex: Exchange) -> list[tuple[dict[str, Any] | None, Any, str | None]]:
    """(evidence, JSON value, parse error) for each JSON-RPC response an exchange carried."""
    if ex.is_sse:
        return [(ev_evidence(ex, ev), *ev.json()) for ev in ex.data_events()]
    if ex.media_type == a2a.JSON_MEDIA_TYPE or ex.body[:1] in (b"{", b"["):
        return [(ex_evidence(ex), *ex.json())]
    return []


@rule("WIRE-001")
def stream_content_type(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    out = []
    for ex in _answered(log):
        if ex.label not in EXPECTED_STREAMS or not ex.notes.get("streaming"):
            continue
        value, _ = ex.json() if not ex.is_sse else (None, None)
        if ex.status == 200 and ex.is_sse:
            out.append(ok("WIRE-001", f"{ex.label}: HTTP 200, {ex.content_type}"))
        elif ex.media_type == a2a.JSON_MEDIA_TYPE and isinstance(value, dict) and "error" in value:
            continue  # a refusal before the stream starts may come as application/json (A2A §9)
        else:
            out.append(fail("WIRE-001",
                            f"{ex.label} ({ex.rpc_method}) answered HTTP {ex.status} with Content-Type "
                            f"{ex.content_type or '(none)'}; a streaming method answers HTTP 200 text/event-stream "
                            f"(A2A §9). First bytes: {ex.first_bytes()!r}", [ex_evidence(ex)]))
    return out


@rule("WIRE-002")
def events_are_jsonrpc(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    out = []
    for ex in _answered(log):
        if not ex.is_sse:
            continue
        bad = []
        for ev in ex.data_events():
            value, err = ev.json()
            if err:
                bad.append((ev, f"data is not JSON ({err}); raw bytes: {quote(ev.data, 200)!r}"))
            elif not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
                bad.append((ev, "data is JSON but not a JSON-RPC 2.0 response object (\"jsonrpc\": \"2.0\" missing)"))
        if bad:
            ev, why = bad[0]
            out.append(fail("WIRE-002", f"{ex.label}: {len(bad)} event(s) are not one complete JSON-RPC response; "
                            f"frame {ev_evidence(ex, ev)['frame']}: {why}",
                            [ev_evidence(ex, e, w) for e, w in bad[:5]]))
        elif ex.data_events():
            out.append(ok("WIRE-002", f"{ex.label}: {len(ex.data_events())} events, each a JSON-RPC 2.0 response"))
    return out


@rule("WIRE-003")
def ids_match(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    out = []
    for ex in _answered(log):
        if not isinstance(ex.request_body, dict) and ex.label not in NULL_ID_LABELS:
            continue
        want = None if ex.label in NULL_ID_LABELS else ex.rpc_id
        wrong, count = [], 0
        for evidence, value, err in _envelopes(ex):
            if err or not isinstance(value, dict):
                continue
            count += 1
            if "id" not in value or value["id"] != want or type(value["id"]) is not type(want):
                wrong.append((evidence, value.get("id", "(absent)")))
        if wrong:
            got = ", ".join(repr(w[1]) for w in wrong[:3])
            out.append(fail("WIRE-003", f"{ex.label} ({ex.rpc_method}) sent id {want!r}; {len(wrong)} response(s) "
                            f"carried {got} (JSON-RPC 2.0 §5: the id MUST be the same as the request's)",
                            [w[0] for w in wrong[:5]]))
        elif count:
            out.append(ok("WIRE-003", f"{ex.label}: {count} response(s) carry id {want!r}"))
    return out


@rule("WIRE-004")
def result_xor_error(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    out = []
    for ex in _answered(log):
        bad, count = [], 0
        for evidence, value, err in _envelopes(ex):
            if err or not isinstance(value, dict):
                continue
            count += 1
            has = [k for k in ("result", "error") if k in value]
            if len(has) != 1:
                bad.append((evidence, has))
        if bad:
            out.append(fail("WIRE-004", f"{ex.label}: a response holds {bad[0][1] or 'neither result nor error'}; "
                            "JSON-RPC 2.0 §5 requires exactly one of result and error", [b[0] for b in bad[:5]]))
        elif count:
            out.append(ok("WIRE-004", f"{ex.label}: {count} response(s) hold exactly one of result/error"))
    return out


@rule("WIRE-005")
def unary_is_json(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    out = []
    for ex in _answered(log):
        if ex.notes.get("streaming"):
            continue
        value, err = ex.json()
        if ex.media_type != a2a.JSON_MEDIA_TYPE or err or not isinstance(value, dict):
            why = err or ("not a JSON object" if not isinstance(value, dict) else "")
            out.append(fail("WIRE-005", f"{ex.label} ({ex.rpc_method}) answered HTTP {ex.status}, Content-Type "
                            f"{ex.content_type or '(none)'} {why}; a JSON-RPC answer is application/json (A2A §9). "
                            f"First bytes: {ex.first_bytes()!r}", [ex_evidence(ex)]))
        else:
            out.append(ok("WIRE-005", f"{ex.label}: application/json JSON-RPC response"))
    return out


@rule("WIRE-006")
def stream_well_formed(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    out = []
    for ex in _answered(log):
        if not ex.is_sse:
            continue
        problems = []
        if ex.notes.get("invalid_utf8"):
            problems.append("bytes that are not UTF-8 (a client decodes them as U+FFFD)")
        if ex.discarded and ex.end == END_CLOSED:
            problems.append(f"a last block without its terminating blank line, which every client discards: "
                            f"{quote(ex.discarded, 200)!r}")
        if problems:
            out.append(fail("WIRE-006", f"{ex.label}: the event stream has " + "; and ".join(problems)
                            + " (WHATWG HTML §9.2.5)", [ex_evidence(ex, "; ".join(problems))]))
        else:
            out.append(ok("WIRE-006", f"{ex.label}: UTF-8, every block terminated"))
    return out


@rule("WIRE-007")
def extensions_echoed(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    card_ex = log.get("card")
    card, _ = card_ex.json() if card_ex else (None, None)
    caps = card.get("capabilities") if isinstance(card, dict) else None
    declared = {e.get("uri") for e in (caps or {}).get("extensions") or [] if isinstance(e, dict)} \
        if isinstance(caps, dict) else set()
    if isinstance(card, dict) and not declared:
        return [outcome("WIRE-007", Outcome.UNSUPPORTED, "the card declares no extension, so none can be activated")]
    out = []
    for ex in _answered(log):
        asked = [u.strip() for u in ex.request_headers.get(a2a.EXTENSIONS_HEADER, "").split(",") if u.strip()]
        asked = [u for u in asked if u in declared]
        if not asked:
            continue
        echoed = {u.strip() for u in ex.response_headers.get(a2a.EXTENSIONS_HEADER.lower(), "").split(",")}
        missing = [u for u in asked if u not in echoed]
        if missing:
            out.append(outcome("WIRE-007", Outcome.WARNING,
                               f"{ex.label} activated {', '.join(asked)}; the A2A-Extensions response header "
                               f"{'is absent' if not echoed - {''} else 'lists ' + repr(sorted(echoed - {''}))}, "
                               f"missing {', '.join(missing)} (SHOULD echo the activated extensions)",
                               [ex_evidence(ex)]))
        else:
            out.append(ok("WIRE-007", f"{ex.label}: A2A-Extensions echoed: {', '.join(asked)}"))
    return out
