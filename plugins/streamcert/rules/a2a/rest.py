"""REST-: what the HTTP+JSON binding itself owes (A2A 1.0.1 §5.3, §5.4, §11): every operation served at its
route, answers without a JSON-RPC envelope, the a2a+json media type, errors as google.rpc.Status with the
HTTP status of their error and its ErrorInfo.

These rules read every exchange of the log that went over HTTP+JSON (`Exchange.binding`), whatever the
scenario; a log of another binding gives no finding. Which A2A error an exchange should have got is the
A2A-ERR rules' to judge (they read every binding's error in one neutral form); here only how the binding
wrote the error that came: REST-004 takes the error the body's ErrorInfo names and asks for its HTTP status,
and an error without an ErrorInfo is REST-006's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import urlsplit

from ...contract.capture import NOT_SENT, ROUTE_RETRY
from ...framelog import END_ERROR, END_IDLE, END_RESET, Event, Exchange, FrameLog
from ...outcomes import Outcome
from ...protocols import a2a, bindings
from .. import RuleContext, Verdict, ev_evidence, ex_evidence, rule
from ..common.unary import dump
from ..engine import cannot_judge, unjudged_entry
from .errors import A2A_REFUSALS

ENVELOPE_MEMBERS = ("jsonrpc", "result")  # no A2A response message has either (a Task's `id` is its own)


# -- the exchanges ----------------------------------------------------------------------------------------

def _routed(operation: str | None) -> bool:
    """Whether the binding gives `operation` a route (§5.3)."""
    try:
        bindings.rest_route(operation or "", {})
    except ValueError:
        return False
    return True


@dataclass
class RestAnswers:
    """The operations the suite called over HTTP+JSON that got an HTTP answer (one whose transport failed has
    nothing on the wire to judge), read for their status lines; one answered with a redirect, which the
    suite does not follow, is `unjudged` (ERROR)."""

    exchanges: list[Exchange]
    unjudged: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)

    READS_BODIES: ClassVar[bool] = False

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> RestAnswers:
        judged, unjudged = [], []
        for ex in log.exchanges:
            if ex.binding != bindings.HTTP_JSON or not ex.rpc_method:
                continue
            if ex.end == END_ERROR or ex.status is None:
                if ex.notes.get(NOT_SENT):
                    unjudged.append(unjudged_entry(ex, ex.error or "not sent"))
                continue
            why = cannot_judge(ex) if cls.READS_BODIES or 300 <= ex.status < 400 else None
            if why is None and cls.READS_BODIES and not ex.is_sse and ex.end in (END_RESET, END_IDLE):
                why = f"the body is incomplete: {ex.error}"
            if why:
                unjudged.append(unjudged_entry(ex, why))
            else:
                judged.append(ex)
        return cls(judged, unjudged)


class RestBodies(RestAnswers):
    """The same answers, read for their bodies: one whose body cannot be judged (a cap reached, JSON nested
    too deep, a unary body cut short) is `unjudged`."""

    READS_BODIES = True


def _call(ex: Exchange) -> str:
    """An exchange as a message names it: its label, its operation and the request line."""
    return f"{ex.label} ({ex.rpc_method}, {ex.method} {urlsplit(ex.url).path})"


def _success(ex: Exchange) -> bool:
    return ex.status is not None and 200 <= ex.status < 300


def _error_only(value: Any) -> bool:
    """A JSON value holding nothing but an `error` object: an error, wherever it came (bindings.frame_answer)."""
    return isinstance(value, dict) and set(value) == {"error"} and isinstance(value["error"], dict)


@dataclass
class Written:
    """One error as it came over HTTP+JSON: the body of an answer, or one frame of an event stream (`event`)."""

    ex: Exchange
    event: Event | None
    value: Any  # the parsed JSON (None when it is not JSON)
    complaint: str | None  # why it is not JSON

    @property
    def status(self) -> dict[str, Any]:
        """Its `error` object (google.rpc.Status), {} when there is none."""
        error = self.value.get("error") if isinstance(self.value, dict) else None
        return error if isinstance(error, dict) else {}

    @property
    def where(self) -> str:
        if self.event is None:
            return f"{_call(self.ex)} answered HTTP {self.ex.status}"
        return f"{_call(self.ex)} frame {self.ex.frame_number(self.event)} (HTTP {self.ex.status} event stream)"

    @property
    def shown(self) -> str:
        """What came, for a message."""
        if self.complaint:
            return f"a body that is not JSON ({self.complaint}): {self.ex.first_bytes()!r}"
        return dump(self.value)

    def evidence(self, note: str = "") -> dict[str, Any]:
        return ex_evidence(self.ex, note) if self.event is None else ev_evidence(self.ex, self.event, note)


def errors_in(ex: Exchange) -> list[Written]:
    """The errors an answer carried: the body of an HTTP error status (§11.6); on a 2xx, a body or the frames
    of a stream holding nothing but an `error` object."""
    if not _success(ex):
        return [Written(ex, None, *ex.json())]
    if ex.is_sse:
        return [Written(ex, ev, ev.payload, None) for ev in ex.data_events() if _error_only(ev.payload)]
    value, _ = ex.json()
    return [Written(ex, None, value, None)] if _error_only(value) else []


def error_infos(status: dict[str, Any]) -> list[dict[str, Any]]:
    """The details of a google.rpc.Status whose @type is ErrorInfo, whatever their domain."""
    details = status.get("details")
    return [d for d in details if isinstance(d, dict) and d.get("@type") == a2a.ERROR_INFO_TYPE] \
        if isinstance(details, list) else []


def a2a_error(status: dict[str, Any]) -> int | None:
    """The A2A error (its JSON-RPC number, §5.4) the ErrorInfo of a google.rpc.Status names, or None."""
    info = bindings.error_info(status.get("details"))
    return bindings.CODE_BY_REASON.get(info.get("reason")) if info else None


def _named(code: int) -> str:
    return f"{a2a.error_name(code)} (ErrorInfo reason {bindings.reason_of(code)})"


# -- REST-001: every operation served at its route --------------------------------------------------------

NOT_SERVED_STATUSES = (404, 405, 501)  # what a server answers for a route or method it does not have


def _not_served(ex: Exchange) -> str | None:
    """Why `ex` shows its route not served (404, 405 or 501 without an A2A ErrorInfo), or None. An answer whose
    body names an A2A error (UnsupportedOperationError under 501, TaskNotFoundError under 404) came from the
    route: the operation is served, and the error is its answer (whose HTTP status REST-004 judges)."""
    if ex.status not in NOT_SERVED_STATUSES:
        return None
    value, _ = ex.json()
    status = value.get("error") if isinstance(value, dict) else None
    if isinstance(status, dict) and a2a_error(status) is not None:
        return None
    if ex.status == 404:
        return "HTTP 404 without an A2A ErrorInfo (no route: TaskNotFoundError would carry one)"
    return f"HTTP {ex.status} without an A2A ErrorInfo"


def _retried(ex: Exchange) -> str:
    """The first try the client recorded before this one (SubscribeToTask: POST answered 405, then GET)."""
    retry = ex.notes.get(ROUTE_RETRY)
    first = retry.get("first") if isinstance(retry, dict) else None
    if not isinstance(first, dict):
        return ""
    return f"{first.get('method')} answered HTTP {first.get('status')}, then {retry.get('then', ex.method)}"


@rule("REST-001", view=RestAnswers)
def routes_served(v: RestAnswers, out: Verdict) -> None:
    calls = [ex for ex in v.exchanges if _routed(ex.rpc_method)]
    bad = []
    for ex in calls:
        if ex.status in NOT_SERVED_STATUSES and (unread := cannot_judge(ex)):  # whether it names an A2A error
            out.error(f"{_call(ex)} answered HTTP {ex.status} with a body that cannot be judged: {unread}",
                      [ex_evidence(ex)])
        elif why := _not_served(ex):
            retry = f" ({_retried(ex)})" if _retried(ex) else ""
            bad.append((f"{_call(ex)} answered {why}{retry}: {ex.first_bytes()!r}", ex_evidence(ex, why)))
    if out.fail_each("operation call(s) not served at their route", bad) or not calls:
        return
    subscribed = [ex for ex in calls if ex.rpc_method == a2a.SUBSCRIBE_TO_TASK]
    reading = None
    if subscribed:
        ways = sorted({f"by {ex.method} ({_retried(ex)})" if _retried(ex) else f"by {ex.method}" for ex in subscribed})
        reading = "SubscribeToTask served " + " and ".join(ways) + \
            (" (§11.3.2)" if all(ex.method == "POST" for ex in subscribed) else
             " (GET: the google.api.http annotation of a2a.proto)")
    operations = ", ".join(dict.fromkeys(ex.rpc_method for ex in calls))
    out.passed(f"{len(calls)} call(s) served at their routes: {operations}", reading=reading)


# -- REST-002: a success is the response message itself ---------------------------------------------------

def _not_a_message(value: Any, complaint: str | None) -> str | None:
    """Why a success's body (or a frame's data) is not a response message as a JSON object, or None."""
    if complaint:
        return f"not JSON ({complaint})"
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not an object"
    if wrapped := [m for m in ENVELOPE_MEMBERS if m in value]:
        return f"a JSON-RPC envelope ({', '.join(wrapped)}), not the response message"
    return None


# What a bare object that should have come wrapped in a StreamResponse looks like, by the members only it has.
_UNWRAPPED = (("a bare Task (id, status)", ("id", "status")),
              ("a bare TaskStatusUpdateEvent (taskId, status)", ("taskId", "status")),
              ("a bare TaskArtifactUpdateEvent (taskId, artifact)", ("taskId", "artifact")),
              ("a bare Message (messageId, role)", ("messageId", "role")))


def _not_a_stream_response(value: Any, complaint: str | None) -> str | None:
    """Why a frame's data is not a StreamResponse (§11.7: each event's data is one): not an object, an envelope,
    or an object that names none of its members (task, message, statusUpdate, artifactUpdate), such as a bare
    Task. Which and how many members it holds is A2A-STREAM-005's."""
    if why := _not_a_message(value, complaint):
        return why
    if a2a.stream_members(value):
        return None
    like = next((name for name, keys in _UNWRAPPED if all(k in value for k in keys)), None)
    return f"{like or 'an object'} without its StreamResponse wrapper (none of " \
           f"{', '.join(a2a.STREAM_RESULT_KINDS)})"


@rule("REST-002", view=RestBodies)
def bare_messages(v: RestBodies, out: Verdict) -> None:
    for ex in v.exchanges:
        if not _success(ex):
            continue  # an error (REST-005)
        if ex.is_sse:
            frames = [ev for ev in ex.data_events() if not _error_only(ev.payload)]
            bad = [(f"frame {ex.frame_number(ev)} is {why}: {ev.data[:200]!r}", ev_evidence(ex, ev, why))
                   for ev in frames if (why := _not_a_stream_response(*ev.json()))]
            if not out.fail_each(f"event(s) of {_call(ex)} that are not a StreamResponse object", bad) and frames:
                out.passed(f"{ex.label}: {len(frames)} event(s), each a StreamResponse object")
            continue
        value, complaint = ex.json()
        if _error_only(value):
            continue  # an error under a 2xx status (REST-004)
        if ex.blank:
            why = "an empty body"
        elif why := _not_a_message(value, complaint):
            why = f"{why}: {ex.first_bytes(200)!r}"
        if why:
            out.failed(f"{_call(ex)} answered HTTP {ex.status} with {why}", [ex_evidence(ex)])
        else:
            out.passed(f"{ex.label}: HTTP {ex.status}, the response message as a JSON object")


# -- REST-003: application/a2a+json ---------------------------------------------------------------------

@rule("REST-003", view=RestBodies)
def a2a_media_type(v: RestBodies, out: Verdict) -> None:
    bodies = [ex for ex in v.exchanges if not ex.is_sse and not ex.blank and ex.json()[1] is None]
    other = [(f"{_call(ex)} answered HTTP {ex.status}, Content-Type {ex.content_type or '(none)'}: "
              f"{ex.first_bytes()!r}", ex_evidence(ex)) for ex in bodies
             if ex.media_type not in (bindings.A2A_JSON_MEDIA_TYPE, a2a.JSON_MEDIA_TYPE)]
    plain = [(f"{_call(ex)} answered HTTP {ex.status}, Content-Type {ex.content_type}", ex_evidence(ex))
             for ex in bodies if ex.media_type == a2a.JSON_MEDIA_TYPE]
    if out.fail_each(f"JSON answer(s) sent as neither {bindings.A2A_JSON_MEDIA_TYPE} nor {a2a.JSON_MEDIA_TYPE}",
                     other):
        return
    if plain:
        out.fail_each(f"JSON answer(s) sent as {a2a.JSON_MEDIA_TYPE}, not {bindings.A2A_JSON_MEDIA_TYPE}", plain,
                      outcome=Outcome.NON_STRICT, reading="application/json, the JSON-RPC binding's type, taken "
                      "as a weaker form of application/a2a+json")
    elif bodies:
        out.passed(f"{len(bodies)} JSON answer(s), each {bindings.A2A_JSON_MEDIA_TYPE}")


# -- REST-004: the HTTP status of the error ---------------------------------------------------------------

@rule("REST-004", view=RestBodies)
def error_status(v: RestBodies, out: Verdict) -> None:
    good, bad = [], []
    for ex in v.exchanges:
        for err in errors_in(ex):
            code = a2a_error(err.status)
            if code is None:
                continue  # no A2A error named (REST-006)
            want = bindings.forms_of(code)[1]
            if err.event is not None and err.event is not ex.data_events()[0]:
                continue  # an error after the stream began: no status can carry it any more
            if ex.status == want:
                good.append(f"{ex.label} {a2a.error_name(code)} → HTTP {want}")
                continue
            seen = "with HTTP" if err.event is None else "in an event stream under HTTP"
            bad.append((f"{_call(ex)} answered {_named(code)} {seen} {ex.status}; §5.4 maps it to HTTP {want}: "
                        f"{err.shown}", err.evidence(f"HTTP {ex.status}, want {want}")))
    if not out.fail_each("A2A error(s) answered with another HTTP status than §5.4's", bad) and good:
        out.passed("; ".join(good))


# -- REST-005: google.rpc.Status ------------------------------------------------------------------------

def status_problem(err: Written) -> str | None:
    """Why an error is not google.rpc.Status as JSON (§11.6), or None."""
    if not isinstance(err.value, dict) or not isinstance(err.value.get("error"), dict):
        return "no `error` object (google.rpc.Status)"
    status = err.status
    code, http = status.get("code"), err.ex.status
    if not isinstance(code, int) or isinstance(code, bool):
        return f"error.code is {dump(code) if 'code' in status else 'missing'}, not an integer"
    if err.event is None and not _success(err.ex) and code != http:
        return f"error.code is {code}, not the HTTP status {http}"
    if not isinstance(status.get("message"), str):
        return f"error.message is {dump(status['message']) if 'message' in status else 'missing'}, not a string"
    details = status.get("details")
    if details is not None and not isinstance(details, list):
        return f"error.details is {dump(details)}, not an array"
    for i, item in enumerate(details or []):
        if not isinstance(item, dict) or not isinstance(item.get("@type"), str) or not item["@type"]:
            return f"error.details[{i}] is {dump(item)}, not an object with @type"
    return None


@rule("REST-005", view=RestBodies)
def status_bodies(v: RestBodies, out: Verdict) -> None:
    errors = [err for ex in v.exchanges for err in errors_in(ex)]
    bad = [(f"{err.where} with {why}: {err.shown}", err.evidence(why)) for err in errors
           if (why := status_problem(err))]
    if not out.fail_each("error(s) not written as google.rpc.Status", bad) and errors:
        out.passed(f"{len(errors)} error(s), each google.rpc.Status JSON whose code is the HTTP status")


# -- REST-006: the ErrorInfo of an A2A error -------------------------------------------------------------

def _error_info_problem(status: dict[str, Any]) -> str:
    """What is wrong with the ErrorInfo of an A2A error that names none (see a2a_error)."""
    infos = error_infos(status)
    if not infos:
        details = status.get("details")
        return "no error.details" if details is None else f"no ErrorInfo ({a2a.ERROR_INFO_TYPE}) in error.details"
    info = infos[0]
    if info.get("domain") != a2a.ERROR_DOMAIN:
        return f"its ErrorInfo has domain {dump(info.get('domain'))}, not {a2a.ERROR_DOMAIN!r}"
    return f"its ErrorInfo has reason {dump(info.get('reason'))}, which names no A2A error"


@rule("REST-006", view=RestBodies)
def error_infos_given(v: RestBodies, out: Verdict) -> None:
    good, bad = [], []
    for ex in v.exchanges:
        for err in errors_in(ex):
            if (code := a2a_error(err.status)) is not None:
                good.append(f"{ex.label} {bindings.reason_of(code)}")
            elif ex.label in A2A_REFUSALS and not _not_served(ex):  # a route not served is REST-001's
                why = _error_info_problem(err.status)
                bad.append((f"{err.where}, a refusal that is an A2A error: {why}: {err.shown}",
                            err.evidence(why)))
    if not out.fail_each("A2A error(s) without their ErrorInfo", bad) and good:
        out.passed(f"{len(good)} A2A error(s) with their ErrorInfo: " + ", ".join(good))
