"""WIRE-: HTTP, SSE framing, the JSON-RPC envelope, content types, ids (A2A §9, WHATWG SSE).

These rules read every JSON-RPC request of a run that got an HTTP answer, whatever the scenario. What a
request is (a valid Request object, an invalid one, a notification) is read from the request the suite
sent, never from a label: `sent`, `request_problem`, `is_notification`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterator

from ...contract.capture import INVALID_UTF8, NOT_SENT, STREAMING
from ...contract.labels.a2a import CARD
from ...contract.run import BINDING
from ...framelog import (
    END_CLIENT_STOP,
    END_CLOSED,
    END_ERROR,
    END_IDLE,
    END_RESET,
    END_TIME_LIMIT,
    Event,
    Exchange,
    FrameLog,
)
from ...protocols import a2a, bindings
from .. import RuleContext, Run, Verdict, ev_evidence, ex_evidence, quote, rule
from ..common.framewalk import Envelope
from ..common.streamview import frame_facts
from ..common.unary import dump
from ..engine import cannot_judge, unjudged_entry
from .errors import refusal

# -- what the suite sent ------------------------------------------------------------------------------

def sent(ex: Exchange) -> tuple[Any, bool]:
    """The request the suite sent as a JSON value, and whether it was JSON at all (a body sent as raw
    bytes is kept as text: read here)."""
    body = ex.request_body
    if isinstance(body, str):
        try:
            return json.loads(body), True
        except ValueError:
            return None, False
    return body, body is not None


def json_type(value: Any) -> str:
    """The JSON type of a value: JSON has one number type, and true is no number."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", dict: "object", list: "array"}.get(type(value), type(value).__name__)


def valid_id(value: Any) -> bool:
    """An id JSON-RPC 2.0 §4 allows: a string, a number or null."""
    return json_type(value) in ("string", "number", "null")


def same_id(a: Any, b: Any) -> bool:
    """The same id: equal values of the same JSON type (1 and "1" differ; 1 and 1.0 are one number)."""
    return json_type(a) == json_type(b) and a == b


def request_problem(value: Any) -> str | None:
    """Why a JSON value is not a valid JSON-RPC 2.0 Request object (JSON-RPC 2.0 §4), or None."""
    if not isinstance(value, dict):
        return f"the request is a JSON {json_type(value)}, not an object"
    if value.get("jsonrpc") != a2a.JSONRPC_VERSION:
        return f"\"jsonrpc\" is {dump(value['jsonrpc'])}" if "jsonrpc" in value else "\"jsonrpc\" is missing"
    if not isinstance(value.get("method"), str):
        return f"\"method\" is {dump(value['method'])}" if "method" in value else "\"method\" is missing"
    if "id" in value and not valid_id(value["id"]):
        return f"\"id\" is {dump(value['id'])}, a {json_type(value['id'])}"
    if "params" in value and not isinstance(value["params"], (dict, list)):
        return f"\"params\" is a {json_type(value['params'])}"
    return None


def is_jsonrpc(ex: Exchange) -> bool:
    """Whether `ex` is a JSON-RPC call: one the client made as such (its method is recorded, even for a body
    that is not JSON), or a POST whose body reads as one. A progress stream's POST is not."""
    if ex.method != "POST":
        return False
    value, _ = sent(ex)
    return bool(ex.rpc_method) or isinstance(value, dict) and ("jsonrpc" in value or "method" in value)


def is_notification(ex: Exchange) -> bool:
    """Whether the suite sent a valid JSON-RPC request without an id: a notification (JSON-RPC 2.0 §4.1)."""
    value, _ = sent(ex)
    return is_jsonrpc(ex) and request_problem(value) is None and "id" not in value


def expected_ids(ex: Exchange) -> tuple[list[Any], str]:
    """The ids a response to `ex` may carry, and why: the request's id; null when it could not be read (a
    body that is not JSON, an id of another type); either for an invalid Request whose id is readable
    (JSON-RPC 2.0 §5: null "if there was an error in detecting the id")."""
    value, is_json = sent(ex)
    if not is_json:
        return [None], "the request body was not JSON"
    problem = request_problem(value)
    rpc_id = value.get("id") if isinstance(value, dict) else None
    if problem is None:
        return [rpc_id], f"sent id {rpc_id!r}"
    if isinstance(value, dict) and "id" in value and valid_id(rpc_id) and rpc_id is not None:
        return [rpc_id, None], f"sent id {rpc_id!r} in an invalid request ({problem})"
    return [None], f"sent an invalid request ({problem})"


def _redirect(ex: Exchange) -> bool:
    return ex.status is not None and 300 <= ex.status < 400


@dataclass
class Answers:
    """The JSON-RPC requests of one run that got an HTTP answer (a request whose transport failed has
    nothing on the wire to judge), with the card the run fetched: what the rules on status lines and
    headers read. A request not sent (another origin) or answered with a redirect (not followed) is
    `unjudged`: ERROR, with why.

    The views of the bodies (`Bodies`, `StreamBodies`, `UnaryBodies`) hold only the answers whose body
    can be judged; one that cannot (a cap reached, JSON nested too deep, a unary body cut short) is
    `unjudged` where the view reads such bodies."""

    exchanges: list[Exchange]
    card: Any  # the card's JSON value (None when it was not fetched or is not JSON)
    unjudged: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)

    READS: ClassVar[str | None] = None  # the bodies the view reads: None (none), "any", "sse", "unary"

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> Answers:
        card_ex = log.get(CARD)
        card = card_ex.json()[0] if card_ex else None
        judged, unjudged = [], []
        binding = log.notes.get(BINDING)
        for ex in log.exchanges:
            if ex.method != "POST" and not (ex.binding != "jsonrpc" and ex.rpc_method):  # an HTTP+JSON GET too
                continue
            if binding and ex.binding != binding:
                continue  # a probe of another interface the card declares (A2A-CARD-006)
            if ex.end == END_ERROR or ex.status is None:
                if ex.notes.get(NOT_SENT):
                    unjudged.append(unjudged_entry(ex, ex.error or "not sent"))
                continue
            if _redirect(ex):
                unjudged.append(unjudged_entry(ex, cannot_judge(ex) or f"HTTP {ex.status}"))
                continue
            why = cls._body_unjudged(ex) if cls.READS else None
            if why is None:
                judged.append(ex)
            elif cls._reads(ex):
                unjudged.append(unjudged_entry(ex, why))
        return cls(judged, card, unjudged)

    @staticmethod
    def _body_unjudged(ex: Exchange) -> str | None:
        if why := cannot_judge(ex):
            return why
        if not ex.is_sse and ex.end in (END_RESET, END_IDLE):
            return f"the body is incomplete: {ex.error}"
        return None

    @classmethod
    def _reads(cls, ex: Exchange) -> bool:
        if cls.READS == "sse":
            return ex.is_sse
        if cls.READS == "unary":
            return not ex.notes.get(STREAMING)
        return True

    @property
    def streams(self) -> list[Exchange]:
        return [ex for ex in self.exchanges if ex.is_sse]

    @property
    def declared_extensions(self) -> set[str]:
        caps = self.card.get("capabilities") if isinstance(self.card, dict) else None
        if not isinstance(caps, dict):
            return set()
        return {e.get("uri") for e in caps.get("extensions") or [] if isinstance(e, dict)}


class Bodies(Answers):
    """The answers whose bodies (events or unary body) can be judged."""

    READS = "any"


class StreamBodies(Answers):
    """The answers whose events can be judged (the streams' own unjudged ones listed)."""

    READS = "sse"


class UnaryBodies(Answers):
    """The answers to unary requests whose bodies can be judged."""

    READS = "unary"


def _envelopes(ex: Exchange) -> Iterator[tuple[Event | None, Envelope]]:
    """(event, envelope) of each response an exchange carried: each event of a stream (as the walk over its
    frames read them), or a JSON body (event None). Evidence is made only for the ones a rule blames (`_evidence`)."""
    if ex.is_sse:
        yield from zip(ex.data_events(), (facts.envelope for facts in frame_facts(ex)))
    elif ex.media_type == a2a.JSON_MEDIA_TYPE or ex.head(1) in (b"{", b"["):
        yield None, Envelope.of(*ex.json())


def _responses(ex: Exchange) -> Iterator[tuple[Event | None, Envelope]]:
    """The responses the exchange carried that are JSON objects."""
    return ((ev, e) for ev, e in _envelopes(ex) if e.is_object)


def _evidence(ex: Exchange, ev: Event | None, note: str = "") -> dict[str, Any]:
    return ex_evidence(ex, note) if ev is None else ev_evidence(ex, ev, note)


@rule("WIRE-001", view=Answers)
def stream_content_type(v: Answers, out: Verdict) -> None:
    for ex in v.exchanges:
        if not ex.notes.get(STREAMING):
            continue  # every streaming request is judged by its method, a streamed answer's too, whatever its label
        refused = not ex.is_sse and bindings.read_answer(ex).error is not None
        if ex.status == 200 and ex.is_sse:
            out.passed(f"{ex.label}: HTTP 200, {ex.content_type}")
        elif ex.media_type in (a2a.JSON_MEDIA_TYPE, bindings.A2A_JSON_MEDIA_TYPE) and refused:
            continue  # a refusal before the stream starts may come as JSON (A2A §9; §11.6 on HTTP+JSON)
        else:
            out.failed(f"{ex.label} ({ex.rpc_method}) answered HTTP {ex.status} with Content-Type "
                       f"{ex.content_type or '(none)'}; expected HTTP 200 text/event-stream. "
                       f"First bytes: {ex.first_bytes()!r}", [ex_evidence(ex)])


def _not_jsonrpc(ev: Event | None, e: Envelope) -> str | None:
    if e.error:
        return f"data is not JSON ({e.error}); raw bytes: {quote(ev.data if ev else '', 200)!r}"
    if not e.jsonrpc:
        return "data is JSON but not a JSON-RPC 2.0 response object (\"jsonrpc\": \"2.0\" missing)"
    return None


@rule("WIRE-002", view=StreamBodies)
def events_are_jsonrpc(v: Answers, out: Verdict) -> None:
    for ex in v.streams:
        events = ex.data_events()
        bad = [(f"frame {ex.frame_number(ev)}: {why}", ev_evidence(ex, ev, why)) for ev, e in _envelopes(ex)
               if (why := _not_jsonrpc(ev, e))]
        if not out.fail_each(f"event(s) of {ex.label} that are not one complete JSON-RPC response", bad) and events:
            out.passed(f"{ex.label}: {len(events)} events, each a JSON-RPC 2.0 response")


_UNSEEN = object()


@rule("WIRE-003", view=Bodies)
def ids_match(v: Answers, out: Verdict) -> None:
    for ex in v.exchanges:
        if not is_jsonrpc(ex) or is_notification(ex):
            continue  # not JSON-RPC (a progress stream), or a notification (WIRE-009)
        wants, why = expected_ids(ex)
        count, wrong, seen, matched = 0, [], [], _UNSEEN
        for ev, e in _responses(ex):
            count += 1
            # the very id object found right before is right again (the walk's alike frames share their facts)
            if e.has_id and (e.id is matched or any(same_id(e.id, w) for w in wants)):
                seen.append(e.id)
                matched = e.id
                continue
            wrong.append((f"carries id {e.id!r} ({json_type(e.id)})" if e.has_id else "carries no id",
                          _evidence(ex, ev)))
        if out.fail_each(f"response(s) to {ex.label} ({ex.rpc_method}), which {why}, with another id", wrong) \
                or not count:
            continue
        reading = None
        if len(wants) > 1:
            reading = ("an invalid request's readable id echoed" if seen[0] is not None
                       else "null for an invalid request whose id was readable")
        out.passed(f"{ex.label}: {count} response(s) carry id {seen[0]!r} ({why})", reading=reading)


@rule("WIRE-004", view=Bodies)
def result_xor_error(v: Answers, out: Verdict) -> None:
    for ex in v.exchanges:
        count, bad = 0, []
        for ev, e in _responses(ex):
            count += 1
            if e.has_result == e.has_error:
                has = ["result", "error"] if e.has_result else []
                bad.append((f"holds {has}" if has else "holds neither result nor error", _evidence(ex, ev)))
        if not out.fail_each(f"response(s) of {ex.label} without exactly one of result and error", bad) and count:
            out.passed(f"{ex.label}: {count} response(s) hold exactly one of result/error")


@rule("WIRE-005", view=UnaryBodies)
def unary_is_json(v: Answers, out: Verdict) -> None:
    for ex in v.exchanges:
        if ex.notes.get(STREAMING) or is_notification(ex):
            continue  # a notification gets no response at all (WIRE-009)
        value, err = ex.json()
        if ex.media_type != a2a.JSON_MEDIA_TYPE or err or not isinstance(value, dict):
            why = err or ("not a JSON object" if not isinstance(value, dict) else "")
            out.failed(f"{ex.label} ({ex.rpc_method}) answered HTTP {ex.status}, Content-Type "
                       f"{ex.content_type or '(none)'} {why}; expected an application/json JSON-RPC response. "
                       f"First bytes: {ex.first_bytes()!r}", [ex_evidence(ex)])
        else:
            out.passed(f"{ex.label}: application/json JSON-RPC response")


CUT_BY = {END_TIME_LIMIT: "the suite's per-stream time limit", END_CLIENT_STOP: "the driver, which stopped reading"}


@rule("WIRE-006", view=StreamBodies)
def stream_well_formed(v: Answers, out: Verdict) -> None:
    for ex in v.streams:
        problems = []
        if ex.notes.get(INVALID_UTF8):
            problems.append("bytes that are not UTF-8 (a client decodes them as U+FFFD)")
        # a block cut by the suite (its time limit, the driver) or by the connection is no framing fault
        if ex.discarded and ex.end == END_CLOSED:
            problems.append(f"a last block without its terminating blank line, which every client discards: "
                            f"{quote(ex.discarded, 200)!r}")
        if problems:
            out.failed(f"{ex.label}: the event stream has " + "; and ".join(problems),
                       [ex_evidence(ex, "; ".join(problems))])
        elif ex.discarded:
            cut = f"by {CUT_BY[ex.end]}" if ex.end in CUT_BY else f"({ex.error or 'ended: ' + ex.end})"
            out.passed(f"{ex.label}: UTF-8; every block read to its end was terminated; the last block was cut "
                       f"short {cut} before its blank line could come: {quote(ex.discarded, 120)!r}")
        else:
            out.passed(f"{ex.label}: UTF-8, every block terminated")


@rule("WIRE-007", view=Answers)
def extensions_echoed(v: Answers, out: Verdict) -> None:
    declared = v.declared_extensions
    if isinstance(v.card, dict) and not declared:
        out.unsupported("the card declares no extension, so none can be activated")
        return
    for ex in v.exchanges:
        sent = {k.lower(): v for k, v in ex.request_headers.items()}  # gRPC metadata keys are lower-case (§10.2)
        asked = [u.strip() for u in sent.get(a2a.EXTENSIONS_HEADER.lower(), "").split(",") if u.strip()]
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


@rule("WIRE-008", view=Run)
def invalid_request(run: Run, out: Verdict) -> None:
    for ex in run.log.exchanges:
        value, is_json = sent(ex)
        if not is_jsonrpc(ex) or not is_json or (problem := request_problem(value)) is None:
            continue
        c = refusal(ex, (a2a.INVALID_REQUEST,), f"a request whose {problem}")
        if c.ok is None:
            out.error(c.text, [c.evidence])
        elif c.ok:
            out.passed(c.text)
        else:
            out.failed(c.text, [c.evidence])


@rule("WIRE-009", view=Run)
def notification_unanswered(run: Run, out: Verdict) -> None:
    for ex in run.log.exchanges:
        if not is_notification(ex):
            continue
        what = f"a notification of {ex.rpc_method} ({ex.label}, no id)"
        if ex.end == END_ERROR or ex.status is None:
            out.error(f"{what} got no HTTP answer: {ex.error or 'no response'}", [ex_evidence(ex)])
        elif why := cannot_judge(ex):
            out.error(f"{what} could not be judged: {why}", [ex_evidence(ex)])
        elif not ex.blank:
            value, err = ex.json()
            seen = ("a JSON-RPC response " + dump(value) if isinstance(value, dict) and not err
                    and ("result" in value or "error" in value) else f"a body: {ex.first_bytes()!r}")
            out.failed(f"{what} was answered HTTP {ex.status} with {seen}; a notification gets no response",
                       [ex_evidence(ex)])
        elif ex.end != END_CLOSED:
            out.error(f"{what}: the answer did not end ({ex.error or ex.end}) before any byte came", [ex_evidence(ex)])
        elif 200 <= ex.status < 300:
            out.passed(f"{what}: HTTP {ex.status}, empty body")
        else:
            out.non_strict(f"{what}: no JSON-RPC response, but HTTP {ex.status}, which tells the client the "
                           f"notification failed", [ex_evidence(ex)],
                           reading="an empty body with an HTTP error status (JSON-RPC 2.0 says nothing of HTTP)")
