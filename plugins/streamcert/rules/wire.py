"""WIRE-: HTTP, SSE framing, the JSON-RPC envelope, content types, ids (A2A §9, WHATWG SSE).

These rules read every JSON-RPC request of a run that got an HTTP answer, whatever the scenario.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..framelog import END_CLOSED, END_ERROR, Exchange, FrameLog
from ..protocols import a2a
from . import RuleContext, Verdict, ev_evidence, ex_evidence, quote, rule

# Streams the scenarios expect to succeed; a refused one may answer application/json (A2A §9).
EXPECTED_STREAMS = ("stream", "subscribe", "setup_stream")
# The answer to a body that is not JSON cannot know the request id: JSON-RPC 2.0 §5 says null.
NULL_ID_LABELS = ("parse_error",)


@dataclass
class Answers:
    """The JSON-RPC requests of one run that got an HTTP answer (a request whose transport failed has
    nothing on the wire to judge), with the card the run fetched."""

    exchanges: list[Exchange]
    card: Any  # the card's JSON value (None when it was not fetched or is not JSON)

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> Answers:
        card_ex = log.get("card")
        card = card_ex.json()[0] if card_ex else None
        return cls([ex for ex in log.exchanges if ex.method == "POST" and ex.end != END_ERROR and ex.status is not None],
                   card)

    @property
    def streams(self) -> list[Exchange]:
        return [ex for ex in self.exchanges if ex.is_sse]

    @property
    def declared_extensions(self) -> set[str]:
        caps = self.card.get("capabilities") if isinstance(self.card, dict) else None
        if not isinstance(caps, dict):
            return set()
        return {e.get("uri") for e in caps.get("extensions") or [] if isinstance(e, dict)}


def _envelopes(ex: Exchange) -> list[tuple[dict[str, Any] | None, Any, str | None]]:
    """(evidence, JSON value, parse error) for each JSON-RPC response an exchange carried."""
    if ex.is_sse:
        return [(ev_evidence(ex, ev), *ev.json()) for ev in ex.data_events()]
    if ex.media_type == a2a.JSON_MEDIA_TYPE or ex.body[:1] in (b"{", b"["):
        return [(ex_evidence(ex), *ex.json())]
    return []


def _responses(ex: Exchange) -> list[tuple[dict[str, Any] | None, dict[str, Any]]]:
    """(evidence, object) for each response the exchange carried that is a JSON object."""
    return [(evidence, value) for evidence, value, err in _envelopes(ex) if not err and isinstance(value, dict)]


@rule("WIRE-001", view=Answers)
def stream_content_type(v: Answers, out: Verdict) -> None:
    for ex in v.exchanges:
        if ex.label not in EXPECTED_STREAMS or not ex.notes.get("streaming"):
            continue
        value, _ = ex.json() if not ex.is_sse else (None, None)
        if ex.status == 200 and ex.is_sse:
            out.passed(f"{ex.label}: HTTP 200, {ex.content_type}")
        elif ex.media_type == a2a.JSON_MEDIA_TYPE and isinstance(value, dict) and "error" in value:
            continue  # a refusal before the stream starts may come as application/json (A2A §9)
        else:
            out.failed(f"{ex.label} ({ex.rpc_method}) answered HTTP {ex.status} with Content-Type "
                       f"{ex.content_type or '(none)'}; expected HTTP 200 text/event-stream. "
                       f"First bytes: {ex.first_bytes()!r}", [ex_evidence(ex)])


def _not_jsonrpc(data: str, value: Any, err: str | None) -> str | None:
    if err:
        return f"data is not JSON ({err}); raw bytes: {quote(data, 200)!r}"
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        return "data is JSON but not a JSON-RPC 2.0 response object (\"jsonrpc\": \"2.0\" missing)"
    return None


@rule("WIRE-002", view=Answers)
def events_are_jsonrpc(v: Answers, out: Verdict) -> None:
    for ex in v.streams:
        events = ex.data_events()
        bad = [(f"frame {ev_evidence(ex, ev)['frame']}: {why}", ev_evidence(ex, ev, why)) for ev in events
               if (why := _not_jsonrpc(ev.data, *ev.json()))]
        if not out.fail_each(f"event(s) of {ex.label} that are not one complete JSON-RPC response", bad) and events:
            out.passed(f"{ex.label}: {len(events)} events, each a JSON-RPC 2.0 response")


@rule("WIRE-003", view=Answers)
def ids_match(v: Answers, out: Verdict) -> None:
    for ex in v.exchanges:
        if not isinstance(ex.request_body, dict) and ex.label not in NULL_ID_LABELS:
            continue
        want = None if ex.label in NULL_ID_LABELS else ex.rpc_id
        responses = _responses(ex)
        # 1 and "1" are different ids: the type must match too
        wrong = [(f"carries id {value['id']!r}" if "id" in value else "carries no id", evidence)
                 for evidence, value in responses
                 if "id" not in value or value["id"] != want or type(value["id"]) is not type(want)]
        if not out.fail_each(f"response(s) to {ex.label} ({ex.rpc_method}), which sent id {want!r}, with another id",
                             wrong) and responses:
            out.passed(f"{ex.label}: {len(responses)} response(s) carry id {want!r}")


@rule("WIRE-004", view=Answers)
def result_xor_error(v: Answers, out: Verdict) -> None:
    for ex in v.exchanges:
        responses = _responses(ex)
        bad = [(f"holds {has}" if has else "holds neither result nor error", evidence) for evidence, value in responses
               if len(has := [k for k in ("result", "error") if k in value]) != 1]
        if not out.fail_each(f"response(s) of {ex.label} without exactly one of result and error", bad) and responses:
            out.passed(f"{ex.label}: {len(responses)} response(s) hold exactly one of result/error")


@rule("WIRE-005", view=Answers)
def unary_is_json(v: Answers, out: Verdict) -> None:
    for ex in v.exchanges:
        if ex.notes.get("streaming"):
            continue
        value, err = ex.json()
        if ex.media_type != a2a.JSON_MEDIA_TYPE or err or not isinstance(value, dict):
            why = err or ("not a JSON object" if not isinstance(value, dict) else "")
            out.failed(f"{ex.label} ({ex.rpc_method}) answered HTTP {ex.status}, Content-Type "
                       f"{ex.content_type or '(none)'} {why}; expected an application/json JSON-RPC response. "
                       f"First bytes: {ex.first_bytes()!r}", [ex_evidence(ex)])
        else:
            out.passed(f"{ex.label}: application/json JSON-RPC response")


@rule("WIRE-006", view=Answers)
def stream_well_formed(v: Answers, out: Verdict) -> None:
    for ex in v.streams:
        problems = []
        if ex.notes.get("invalid_utf8"):
            problems.append("bytes that are not UTF-8 (a client decodes them as U+FFFD)")
        # a block the suite itself cut at its time limit is not the server's fault
        if ex.discarded and ex.end == END_CLOSED:
            problems.append(f"a last block without its terminating blank line, which every client discards: "
                            f"{quote(ex.discarded, 200)!r}")
        if problems:
            out.failed(f"{ex.label}: the event stream has " + "; and ".join(problems),
                       [ex_evidence(ex, "; ".join(problems))])
        else:
            out.passed(f"{ex.label}: UTF-8, every block terminated")


@rule("WIRE-007", view=Answers)
def extensions_echoed(v: Answers, out: Verdict) -> None:
    declared = v.declared_extensions
    if isinstance(v.card, dict) and not declared:
        out.unsupported("the card declares no extension, so none can be activated")
        return
    for ex in v.exchanges:
        asked = [u.strip() for u in ex.request_headers.get(a2a.EXTENSIONS_HEADER, "").split(",") if u.strip()]
        asked = [u for u in asked if u in declared]
        if not asked:
            continue
        echoed = {u.strip() for u in ex.response_headers.get(a2a.EXTENSIONS_HEADER.lower(), "").split(",")} - {""}
        missing = [u for u in asked if u not in echoed]
        if missing:
            seen = f"lists {sorted(echoed)!r}" if echoed else "is absent"
            out.warning(f"{ex.label} activated {', '.join(asked)}; the A2A-Extensions response header {seen}, "
                        f"missing {', '.join(missing)}; the activated extensions should be echoed", [ex_evidence(ex)])
        else:
            out.passed(f"{ex.label}: A2A-Extensions echoed: {', '.join(asked)}")
