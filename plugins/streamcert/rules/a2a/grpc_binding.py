"""GRPC-: what the gRPC binding itself owes (A2A 1.0.1 §5.4, §10): the methods at their paths, the messages
of their response types, the status codes of the A2A errors and their ErrorInfo.

Every exchange of the log made over gRPC (`binding == "grpc"`, written by wire/grpc.py) is read: its
`notes["grpc_status"]` (code name, message, details decoded from grpc-status-details-bin) and
`notes["undecodable"]` (the messages that did not decode as the method's response type). What an error *is*
(TaskNotFoundError…) is judged once for every binding by the A2A-ERR- rules; here only its gRPC form.

Which errors are A2A errors: one whose details carry an ErrorInfo of domain a2a-protocol.org, and one whose
status §5.4 gives to A2A errors only (NOT_FOUND, FAILED_PRECONDITION: the generic errors are INVALID_ARGUMENT,
UNIMPLEMENTED, INTERNAL). An INVALID_ARGUMENT or INTERNAL without ErrorInfo is read as the generic error.
"""

from __future__ import annotations

from typing import Any

from ...contract.capture import GRPC_STATUS, UNDECODABLE
from ...framelog import END_ERROR, Exchange
from ...protocols import a2a, bindings
from .. import Run, Verdict, ex_evidence, rule

# The statuses §5.4 gives to A2A errors and to no generic error.
A2A_ONLY_STATUSES = frozenset(s for s, _ in bindings.ERROR_FORMS.values()) - frozenset(
    s for s, _ in bindings.GENERIC_FORMS.values())


def grpc_calls(run: Run) -> list[Exchange]:
    """The gRPC calls of the log that got an answer (a status, or messages); not the card's GET."""
    return [ex for ex in run.log.exchanges if ex.binding == bindings.GRPC and ex.rpc_method is not None
            and ex.end != END_ERROR and ex.status is not None]


def _status(ex: Exchange) -> dict[str, Any]:
    status = ex.notes.get(GRPC_STATUS)
    return status if isinstance(status, dict) else {}


def _what(ex: Exchange) -> str:
    return f"{ex.rpc_method or ex.url} ({ex.label})"


def _methods(calls: list[Exchange]) -> str:
    return ", ".join(dict.fromkeys(ex.rpc_method or "?" for ex in calls))


@rule("GRPC-001", view=Run)
def methods_served(run: Run, out: Verdict) -> None:
    calls = [ex for ex in grpc_calls(run) if ex.rpc_method in a2a.METHODS]
    if not calls:
        return
    bad = [(f"{_what(ex)} ended UNIMPLEMENTED ({_status(ex).get('message', '')!r}): no method is served at "
            f"{bindings.grpc_path(ex.rpc_method)}", ex_evidence(ex))
           for ex in calls if _status(ex).get("code") == "UNIMPLEMENTED"]
    if not out.fail_each("gRPC call(s) of an A2AService method ended UNIMPLEMENTED", bad):
        out.passed(f"{len(calls)} gRPC call(s) served at /{bindings.GRPC_SERVICE}/<method> ({_methods(calls)})")


@rule("GRPC-002", view=Run)
def messages_decode(run: Run, out: Verdict) -> None:
    calls = [ex for ex in grpc_calls(run) if ex.events]
    if not calls:
        return
    bad = []
    for ex in calls:
        for item in ex.notes.get(UNDECODABLE) or ():
            index = item.get("i") if isinstance(item, dict) else None
            bad.append((f"{_what(ex)} message {index + 1 if isinstance(index, int) else '?'}: "
                        f"{item.get('error') if isinstance(item, dict) else item}", ex_evidence(ex)))
    if not out.fail_each("gRPC response message(s) that do not decode as their method's response type", bad):
        count = sum(len(ex.events) for ex in calls)
        out.passed(f"all {count} response message(s) of {len(calls)} gRPC call(s) decode as their method's "
                   f"response type ({_methods(calls)})")


def _errors(run: Run) -> list[tuple[Exchange, dict[str, Any]]]:
    """(call, its grpc_status) of every gRPC call that ended with a status other than OK."""
    out = []
    for ex in grpc_calls(run):
        status = _status(ex)
        if status.get("code") not in (None, "OK"):
            out.append((ex, status))
    return out


def _a2a_info(status: dict[str, Any]) -> dict[str, Any] | None:
    """The ErrorInfo of domain a2a-protocol.org among the status details, if any."""
    return bindings.error_info(status.get("details"))


@rule("GRPC-003", view=Run)
def error_status(run: Run, out: Verdict) -> None:
    named = [(ex, status, bindings.CODE_BY_REASON[info.get("reason")]) for ex, status in _errors(run)
             if (info := _a2a_info(status)) is not None and info.get("reason") in bindings.CODE_BY_REASON]
    if not named:
        return
    bad = []
    for ex, status, code in named:
        want = bindings.ERROR_FORMS[code][0]
        if status.get("code") != want:
            bad.append((f"{_what(ex)} ended {status.get('code')} with an ErrorInfo naming {a2a.error_name(code)} "
                        f"(reason {bindings.reason_of(code)}), which is sent as {want}", ex_evidence(ex)))
    if not out.fail_each("A2A error(s) over gRPC with a status other than the error mapping's", bad):
        seen = ", ".join(dict.fromkeys(f"{a2a.error_name(code)} as {status.get('code')}" for _, status, code in named))
        out.passed(f"{len(named)} A2A error(s) ended with the status §5.4 maps them to: {seen}")


def _info_problem(status: dict[str, Any]) -> str | None:
    """None when the details hold an ErrorInfo naming an A2A error in domain a2a-protocol.org; else what is
    wrong."""
    if status.get("details_error"):
        return str(status["details_error"])
    details = status.get("details")
    if not details:
        return "no details: no grpc-status-details-bin trailer holding a google.rpc.Status with an ErrorInfo"
    infos = [d for d in details if isinstance(d, dict) and d.get("@type") == a2a.ERROR_INFO_TYPE]
    if not infos:
        types = ", ".join(str(d.get("@type")) for d in details if isinstance(d, dict)) or "none"
        return f"the details hold no google.rpc.ErrorInfo (their types: {types})"
    info = next((i for i in infos if i.get("domain") == a2a.ERROR_DOMAIN), None)
    if info is None:
        return f"the ErrorInfo has domain {infos[0].get('domain')!r}, not {a2a.ERROR_DOMAIN!r}"
    if info.get("reason") not in bindings.CODE_BY_REASON:
        return (f"the ErrorInfo's reason {info.get('reason')!r} names no A2A error (the error's name in "
                f"UPPER_SNAKE_CASE without Error, e.g. TASK_NOT_FOUND)")
    return None


@rule("GRPC-004", view=Run)
def error_info(run: Run, out: Verdict) -> None:
    # An ErrorInfo naming one of JSON-RPC's generic errors (INVALID_PARAMS on INVALID_ARGUMENT, as a2a-sdk writes
    # for a message without its role) is not an A2A-specific error: §10.6's MUST is about the A2A errors.
    a2a_errors = [(ex, status) for ex, status in _errors(run) if status.get("code") in A2A_ONLY_STATUSES
                  or ((info := _a2a_info(status)) is not None and info.get("reason") not in bindings.GENERIC_REASONS)]
    if not a2a_errors:
        return
    bad = [(f"{_what(ex)} ended {status.get('code')}: {why}", ex_evidence(ex)) for ex, status in a2a_errors
           if (why := _info_problem(status))]
    if not out.fail_each("A2A error(s) over gRPC without their ErrorInfo", bad):
        reasons = ", ".join(dict.fromkeys(str(_a2a_info(status).get("reason")) for _, status in a2a_errors))
        out.passed(f"{len(a2a_errors)} A2A error(s) over gRPC carry a google.rpc.ErrorInfo of domain "
                   f"{a2a.ERROR_DOMAIN} ({reasons})",
                   reading="an A2A error is one with an ErrorInfo of domain a2a-protocol.org whose reason is not one "
                           "of JSON-RPC's generic errors (INVALID_PARAMS…), or one with a status only A2A errors have "
                           "(NOT_FOUND, FAILED_PRECONDITION)")

