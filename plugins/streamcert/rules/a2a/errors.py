"""A2A-ERR-: each refused operation gets its error code (A2A §3.3, §9; JSON-RPC 2.0 §5.1).

Labels read (written by streamcert.drivers.a2a):
  errors scenario:       get_unknown, send_unknown, cancel_unknown, subscribe_unknown, cancel_terminal,
                         send_terminal, subscribe_terminal, unknown_method, parse_error, invalid_params,
                         bad_version, patch_version, cross_context, msg_* (MESSAGE_CASES) and list_refused,
                         push_create, push_get, push_list, push_delete, extended_card, unknown_member,
                         unknown_member_get, no_version, empty_version (and card, for a 0.3 interface)
  no-streaming scenario: card_nostream, setup_nostream, stream_refused, subscribe_refused
  extension-required scenario: card_required, ext_not_activated
A2A-ERR-009 reads every error response in the log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...contract.labels.a2a import (
    BAD_VERSION,
    CANCEL_TERMINAL,
    CANCEL_UNKNOWN,
    CARD,
    CARD_NOSTREAM,
    CARD_REQUIRED,
    CROSS_CONTEXT,
    EMPTY_VERSION,
    EXT_NOT_ACTIVATED,
    EXTENDED_CARD,
    GET_UNKNOWN,
    GET_UNKNOWN_MEMBER,
    INVALID_PARAMS,
    LIST_REFUSED,
    MSG_PREFIX,
    NO_VERSION,
    PARSE_ERROR,
    PATCH_VERSION,
    SEND_TERMINAL,
    SEND_UNKNOWN,
    SEND_UNKNOWN_MEMBER,
    SETUP_DONE,
    SETUP_NOSTREAM,
    STREAM_REFUSED,
    SUBSCRIBE_REFUSED,
    SUBSCRIBE_TERMINAL,
    SUBSCRIBE_UNKNOWN,
    UNKNOWN_METHOD_CALL,
)
from ...contract.labels.interactions import ANSWER_TERMINAL
from ...contract.labels.push import PUSH_CREATE, PUSH_DELETE, PUSH_GET, PUSH_LIST
from ...framelog import END_ERROR, Exchange, FrameLog
from ...protocols import a2a, bindings
from .. import Run, Verdict, ex_evidence, rule
from ..common.unary import VIA_SSE, Answer, answer_or_error, got_nothing, no_answer, task_of
from ..engine import cannot_judge


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


def _got(ans: Answer) -> str:
    """The error an answer holds, as its binding wrote it: "-32001 TaskNotFoundError" on JSON-RPC,
    "TaskNotFoundError as HTTP 404" or "… as gRPC NOT_FOUND" on the others."""
    if ans.error is not None and "binding" in ans.error:
        return f"{ans.error.get('name') or 'no A2A error'} as {ans.error.get('as')}"
    return _named(ans.code)


def refusal(ex: Exchange, codes: tuple[int, ...], what: str, *, single_event: bool = False) -> _Check:
    """Did `ex` get a JSON-RPC error with one of `codes`? `single_event`: an SSE answer must hold only it."""
    if lost := no_answer(ex, what):
        return _Check(None, lost, ex_evidence(ex))
    ans = Answer.of(ex)
    want = " or ".join(_named(c) for c in codes)
    if ans.error is None:
        seen = ans.describe() if ans.problem else f"was accepted, {ans.describe()}"
        if ans.via == VIA_SSE and not ans.problem:
            seen = f"was streamed ({ans.extra_events + 1} event(s), the first: {ans.describe()})"
        return _Check(False, f"{what} {seen}; expected {want}", ex_evidence(ex), via=ans.via)
    if single_event and ans.extra_events:
        return _Check(False, f"{what} got error {_got(ans)} followed by {ans.extra_events} more event(s) "
                             f"on the stream; expected only {want}", ex_evidence(ex), ans.code, ans.via)
    if ans.code not in codes:
        return _Check(False, f"{what} got error {_got(ans)} ({ans.error.get('message', '')!r}); "
                             f"expected {want}", ex_evidence(ex), ans.code, ans.via)
    return _Check(True, f"{what} → {_got(ans)} ({ans.via})", ex_evidence(ex), ans.code, ans.via)


def _verdict(out: Verdict, checks: list[_Check], reading: str | None = None) -> None:
    """Every refused request got its expected error: PASS; one got something else: FAIL; one got no
    answer: ERROR. No check: nothing to judge."""
    if not checks:
        return
    bad = [c for c in checks if c.ok is False]
    lost = [c for c in checks if c.ok is None]
    if bad:
        out.failed("; ".join(c.text for c in bad), [c.evidence for c in bad])
    elif lost:
        out.error("; ".join(c.text for c in lost), [c.evidence for c in lost])
    else:
        out.passed("; ".join(c.text for c in checks), reading=reading)


def _checks(log: FrameLog, wanted: list[tuple[str, tuple[int, ...], str]], **kw: Any) -> list[_Check]:
    out = []
    for label, codes, what in wanted:
        ex = log.get(label)
        if ex is not None:
            out.append(refusal(ex, codes, what, **kw))
    return out


def _via_reading(checks: list[_Check]) -> str | None:
    vias = sorted({c.via for c in checks if c.ok})
    if not vias:
        return None
    return "error as " + " and as ".join(vias)


# The requests whose refusal is an A2A error (an unknown or ended task, no streaming, a version not spoken), by
# label: which error each must get is the rules' below; that it is an A2A error, with its ErrorInfo, is what the
# binding's own requirements ask of its form (REST-006 on HTTP+JSON, where a 400 without one reads as generic).
A2A_REFUSALS = frozenset({
    GET_UNKNOWN, SEND_UNKNOWN, CANCEL_UNKNOWN, SUBSCRIBE_UNKNOWN, CANCEL_TERMINAL, SEND_TERMINAL,
    SUBSCRIBE_TERMINAL, BAD_VERSION, NO_VERSION, EMPTY_VERSION, STREAM_REFUSED, SUBSCRIBE_REFUSED,
    ANSWER_TERMINAL,
})


# -- the rules ----------------------------------------------------------------------------------------

def unread_card(ex: Exchange) -> str | None:
    """Why the card GET `ex` gave no card that can be read (no answer, a status other than 200, a body a cap
    or the nesting limit cut, not a JSON object); None when it gave one."""
    if ex.end == END_ERROR or ex.status is None:
        return ex.error or "no answer"
    if why := cannot_judge(ex):
        return why
    if ex.status != 200:
        return f"HTTP {ex.status}"
    card, error = ex.json()
    return None if isinstance(card, dict) else (error or "not a JSON object")


@rule("A2A-ERR-001", view=Run)
def streaming_refused(run: Run, out: Verdict) -> None:
    card_ex = run.get(CARD_NOSTREAM)
    if card_ex is not None:
        if why := unread_card(card_ex):  # what the agent can do is unknown: nothing is presumed of it
            out.error(f"the agent card at {card_ex.url} could not be read ({why}): whether the agent streams is "
                      f"not known, so its streaming answers are not judged", [ex_evidence(card_ex)])
            return
        card, _ = card_ex.json()
        caps = card.get("capabilities") if isinstance(card, dict) else None
        if isinstance(caps, dict) and caps.get("streaming") is True:
            return  # not an agent without streaming: nothing to judge here
    checks = _checks(run.log, [(STREAM_REFUSED, (a2a.UNSUPPORTED_OPERATION,), "SendStreamingMessage")],
                     single_event=True)
    weak = None
    sub = run.get(SUBSCRIBE_REFUSED)
    if sub is not None:
        asked = sub.params.get("id") if isinstance(sub.params, dict) else None
        setup = run.get(SETUP_NOSTREAM)
        known = task_of(Answer.of(setup).result) if setup is not None and not got_nothing(setup) else None
        known_id = known.get("id") if isinstance(known, dict) else None
        if asked is not None and asked == known_id:
            checks.append(refusal(sub, (a2a.UNSUPPORTED_OPERATION,), "SubscribeToTask", single_event=True))
        else:
            c = refusal(sub, (a2a.UNSUPPORTED_OPERATION, a2a.TASK_NOT_FOUND),
                       "SubscribeToTask on an id the agent never made", single_event=True)
            checks.append(c)
            if c.ok and c.code == a2a.TASK_NOT_FOUND:
                weak = ("SubscribeToTask on an unknown id (the setup task could not be made): TaskNotFoundError "
                        "accepted in place of UnsupportedOperationError")
    if weak and checks and all(c.ok for c in checks):
        out.non_strict("; ".join(c.text for c in checks), reading=weak)
    else:
        _verdict(out, checks, reading=_via_reading(checks))


@rule("A2A-ERR-002", view=Run)
def task_not_found(run: Run, out: Verdict) -> None:
    checks = _checks(run.log, [(GET_UNKNOWN, (a2a.TASK_NOT_FOUND,), "GetTask on an unknown id"),
                               (SEND_UNKNOWN, (a2a.TASK_NOT_FOUND,), "SendMessage with an unknown taskId"),
                               (CANCEL_UNKNOWN, (a2a.TASK_NOT_FOUND,), "CancelTask on an unknown id")])
    # a streaming method may refuse with one SSE event holding the error (A2A §9)
    subscribed = _checks(run.log, [(SUBSCRIBE_UNKNOWN, (a2a.TASK_NOT_FOUND,), "SubscribeToTask on an unknown id")],
                         single_event=True)
    _verdict(out, checks + subscribed, reading=_via_reading(subscribed))


@rule("A2A-ERR-003", view=Run)
def not_cancelable(run: Run, out: Verdict) -> None:
    _verdict(out, _checks(run.log, [(CANCEL_TERMINAL, (a2a.TASK_NOT_CANCELABLE,), "CancelTask on a completed task")]))


@rule("A2A-ERR-004", view=Run)
def send_to_terminal(run: Run, out: Verdict) -> None:
    _verdict(out, _checks(run.log, [(SEND_TERMINAL, (a2a.UNSUPPORTED_OPERATION,), "SendMessage to a completed task")]))


@rule("A2A-ERR-005", view=Run)
def subscribe_to_terminal(run: Run, out: Verdict) -> None:
    checks = _checks(run.log, [(SUBSCRIBE_TERMINAL, (a2a.UNSUPPORTED_OPERATION,),
                                "SubscribeToTask on a completed task")], single_event=True)
    _verdict(out, checks, reading=_via_reading(checks))


@rule("A2A-ERR-006", view=Run)
def jsonrpc_errors(run: Run, out: Verdict) -> None:
    _verdict(out, _checks(run.log, [(UNKNOWN_METHOD_CALL, (a2a.METHOD_NOT_FOUND,), "an unknown method"),
                                    (PARSE_ERROR, (a2a.PARSE_ERROR,), "a body that is not JSON")]))


@rule("A2A-ERR-007", view=Run)
def invalid_params(run: Run, out: Verdict) -> None:
    checks = _checks(run.log, [(INVALID_PARAMS, (a2a.INVALID_PARAMS, a2a.INVALID_REQUEST),
                                "SendMessage without a message")])
    got = checks[0].code if checks and checks[0].ok else None
    _verdict(out, checks, reading=f"{_named(got)} (both -32602 and -32600 accepted)" if got is not None else None)


@rule("A2A-ERR-008", view=Run)
def version_not_supported(run: Run, out: Verdict) -> None:
    _verdict(out, _checks(run.log, [(BAD_VERSION, (a2a.VERSION_NOT_SUPPORTED,), "GetTask with A2A-Version: 99.0")]))


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


@rule("A2A-ERR-009", view=Run)
def error_details(run: Run, out: Verdict) -> None:
    # Error details are optional in A2A (§3.3.2); ErrorInfo names an A2A error type, so it is asked of the
    # A2A-specific errors only: a standard JSON-RPC error (-32700, -32600…-32603) passes with or without data.
    errors = [(ex, ans.error) for ex in run.log.exchanges if not got_nothing(ex)
              if (ans := Answer.of(ex)).error is not None]
    specific = [(ex, err) for ex, err in errors if a2a.is_a2a_error(err.get("code"))]
    standard = len(errors) - len(specific)
    if not specific:
        return
    misses = [(f"{ex.label} (error {err.get('code')}): {why}", ex_evidence(ex)) for ex, err in specific
              if (why := _error_info_problem(err))]
    besides = f"; {standard} standard JSON-RPC error(s) not judged (error.data is optional)" if standard else ""
    if misses:
        listed = "; ".join(why for why, _ in misses)
        out.non_strict(f"SHOULD not met on {len(misses)} of {len(specific)} A2A-specific error response(s): "
                       f"{listed}{besides}", [ev for _, ev in misses[:5]])
    else:
        out.passed(f"all {len(specific)} A2A-specific error response(s) carry error.data with a "
                   f"google.rpc.ErrorInfo (reason, domain {a2a.ERROR_DOMAIN}){besides}")


@rule("A2A-ERR-010", view=Run)
def cross_context(run: Run, out: Verdict) -> None:
    ex = run.get(CROSS_CONTEXT)
    if ex is None:
        return
    if lost := no_answer(ex, "SendMessage with another context's taskId"):
        out.error(lost, [ex_evidence(ex)])
        return
    ans = Answer.of(ex)
    if ans.error is None:
        seen = ans.describe() if ans.problem else f"was accepted, {ans.describe()}"
        out.failed(f"SendMessage whose taskId names a task of another context {seen}; expected a JSON-RPC error",
                   [ex_evidence(ex)])
    else:
        out.passed(f"SendMessage with another context's taskId was rejected with {_named(ans.code)}",
                   reading=f"any JSON-RPC error accepted (the text names no code); got {_named(ans.code)}")


@rule("A2A-ERR-011", view=Run)
def patch_version_served(run: Run, out: Verdict) -> None:
    ex = run.get(PATCH_VERSION)
    if ex is None:
        return
    sent = {k.lower(): v for k, v in ex.request_headers.items()}  # gRPC metadata keys are lower-case
    what = f"GetTask with {a2a.VERSION_HEADER}: {sent.get(a2a.VERSION_HEADER.lower(), '(none)')}"
    if lost := no_answer(ex, what):
        out.error(lost, [ex_evidence(ex)])
        return
    ans = Answer.of(ex)
    task = task_of(ans.result)
    if ans.error is not None:
        out.failed(f"{what} was refused with error {_named(ans.code)} ({ans.error.get('message', '')!r}); a patch "
                   f"number is not considered, so the request is served as version 1.0", [ex_evidence(ex)])
    elif ans.problem or not isinstance(task, dict) or "id" not in task:
        out.failed(f"{what} did not return the task: {ans.describe()}", [ex_evidence(ex)])
    else:
        out.passed(f"{what} was served as 1.0: the task {task['id']} came back")


# -- A2A-ERR-012: a message without its required fields --------------------------------------------------
REQUIRED_MESSAGE_FIELDS = ("messageId", "role", "parts")


def _flaw(ex: Exchange) -> str:
    """What the message of a SendMessage request lacks, read from the request the suite sent."""
    params = ex.params
    msg = params.get("message") if isinstance(params, dict) else None
    if not isinstance(msg, dict):
        return "is missing"
    missing = [f for f in REQUIRED_MESSAGE_FIELDS if f not in msg]
    if missing:
        return "has no " + " and no ".join(missing)
    if msg["role"] not in a2a.ROLES:
        return f"has role {msg['role']!r}, which the Role enum does not name"
    if msg["parts"] == []:
        return "has an empty parts list"
    return "is flawed"


def _started_anyway(run: Run) -> tuple[_Check | None, str]:
    """Whether ListTasks of the context the refused messages named lists a task besides the setup task:
    (the failed check, or None; what the suite could see)."""
    listed, setup = run.get(LIST_REFUSED), run.get(SETUP_DONE)
    if listed is None or setup is None:
        return None, "whether a task started was not looked at"
    done = task_of(Answer.of(setup).result) if not got_nothing(setup) else None
    ans = Answer.of(listed) if not got_nothing(listed) else None
    tasks = ans.result.get("tasks") if ans is not None and isinstance(ans.result, dict) else None
    if not isinstance(done, dict) or not isinstance(tasks, list):
        seen = ans.describe() if ans is not None else got_nothing(listed)
        return None, f"whether a task started could not be seen (ListTasks of the context: {seen})"
    # Only a task of that context counts: a server whose ListTasks ignores the filter (A2A-TASK-006's
    # finding) lists other scenarios' tasks, which no refused message started.
    others = [t.get("id") for t in tasks if isinstance(t, dict) and t.get("id") != done.get("id")
              and t.get("contextId") == done.get("contextId")]
    if others:
        return _Check(False, f"ListTasks of the context the refused messages named (list_refused) lists task(s) "
                             f"{others} besides the setup task {done.get('id')}: a refused message started one",
                      ex_evidence(listed)), ""
    return None, f"no task started: ListTasks of the context lists only the setup task {done.get('id')}"


@rule("A2A-ERR-012", view=Run)
def message_validated(run: Run, out: Verdict) -> None:
    checks = [refusal(ex, (a2a.INVALID_PARAMS,), f"SendMessage whose message {_flaw(ex)}")
              for ex in run.log.exchanges if ex.label.startswith(MSG_PREFIX)]
    if not checks:
        return
    started, seen = _started_anyway(run)
    if started is not None:
        checks.append(started)
    _verdict(out, checks, reading=seen or None)


# -- A2A-ERR-013/014: the operations of a capability the card does not declare (§3.3.4) ------------------
PUSH_CONFIG_CHECKS = [
    (PUSH_CREATE, (a2a.PUSH_NOT_SUPPORTED,), "CreateTaskPushNotificationConfig"),
    (PUSH_GET, (a2a.PUSH_NOT_SUPPORTED,), "GetTaskPushNotificationConfig"),
    (PUSH_LIST, (a2a.PUSH_NOT_SUPPORTED,), "ListTaskPushNotificationConfigs"),
    (PUSH_DELETE, (a2a.PUSH_NOT_SUPPORTED,), "DeleteTaskPushNotificationConfig"),
]


@rule("A2A-ERR-013", view=Run)
def push_config_refused(run: Run, out: Verdict) -> None:
    # The driver asks only when the card does not declare pushNotifications: true (else it notes why not).
    checks = _checks(run.log, [(label, codes, f"{what} (the card declares no pushNotifications)")
                               for label, codes, what in PUSH_CONFIG_CHECKS])
    _verdict(out, checks)


@rule("A2A-ERR-014", view=Run)
def extended_card_refused(run: Run, out: Verdict) -> None:
    _verdict(out, _checks(run.log, [(EXTENDED_CARD, (a2a.UNSUPPORTED_OPERATION,),
                                     "GetExtendedAgentCard (the card declares no extendedAgentCard)")]))


# -- A2A-ERR-015: a member the Message does not have is ignored (§5.7) ------------------------------------
def _unknown_members(message: Any, known: tuple[str, ...]) -> list[str]:
    return [k for k in message if k not in known] if isinstance(message, dict) else []


def _carried_back(task: dict[str, Any], sent: dict[str, Any], unknown: list[str]) -> list[str]:
    """The unknown members of the sent message (or of its parts) that the task's copy of it carries."""
    for copy_ in task.get("history") or []:
        if isinstance(copy_, dict) and copy_.get("messageId") == sent.get("messageId"):
            parts = [p for p in copy_.get("parts") or [] if isinstance(p, dict)]
            return [k for k in unknown if k in copy_ or any(k in p for p in parts)]
    return []


@rule("A2A-ERR-015", view=Run)
def unknown_member_ignored(run: Run, out: Verdict) -> None:
    ex = run.get(SEND_UNKNOWN_MEMBER)
    if ex is None:
        return
    sent = ex.params.get("message") if isinstance(ex.params, dict) else None
    if not isinstance(sent, dict):
        return
    unknown = _unknown_members(sent, a2a.MESSAGE_FIELDS) + [
        k for part in sent.get("parts") or [] for k in _unknown_members(part, a2a.PART_FIELDS)]
    what = f"SendMessage whose message carries {', '.join(sorted(set(unknown)))} (no member of Message or Part)"
    if (ans := answer_or_error(ex, what, out)) is None:
        return
    if ans.error is not None:
        out.non_strict(f"{what} was refused with {_got(ans)}: an unrecognized field SHOULD be ignored",
                       [ex_evidence(ex)])
        return
    seen = [(ex, task_of(ans.result))]
    got = run.get(GET_UNKNOWN_MEMBER)
    if got is not None:
        if lost := no_answer(got, "GetTask of that task"):
            out.error(lost, [ex_evidence(got)])
            return
        read = Answer.of(got)
        if read.error is not None or not isinstance(task_of(read.result), dict):
            out.non_strict(f"after {what}, GetTask of its task did not return it: {read.describe()}",
                           [ex_evidence(got)])
            return
        seen.append((got, task_of(read.result)))
    echoed = [(f"{e.label} carries {', '.join(keys)} back in the task's history", ex_evidence(e))
              for e, task in seen if isinstance(task, dict) and (keys := _carried_back(task, sent, unknown))]
    if echoed:
        out.non_strict(f"{what}: the member was kept, not ignored: " + "; ".join(t for t, _ in echoed),
                       [ev for _, ev in echoed])
    else:
        out.passed(f"{what} was served and ignored: " + ", ".join(e.label for e, _ in seen)
                   + " show no such member")


# -- A2A-ERR-016: no A2A-Version, or an empty one, is read as 0.3 (§3.6.2) ---------------------------------
VERSIONLESS = [(NO_VERSION, "GetTask without A2A-Version"), (EMPTY_VERSION, "GetTask with an empty A2A-Version")]


def _serves_unset_version(card: Any, ex: Exchange) -> str | None:
    """The url of an interface the card declares for the version an unset A2A-Version means (0.3), in the
    binding `ex` went over and at the URL it went to; None when there is none."""
    for iface in card.get("supportedInterfaces") or [] if isinstance(card, dict) else []:
        if not isinstance(iface, dict) or not isinstance(iface.get("url"), str):
            continue
        version = ".".join(str(iface.get("protocolVersion") or "").split(".")[:2])
        if version == a2a.UNSET_VERSION and bindings.BY_CARD_NAME.get(iface.get("protocolBinding")) == ex.binding \
                and ex.url.startswith(iface["url"].rstrip("/")):
            return iface["url"]
    return None


@rule("A2A-ERR-016", view=Run)
def unset_version_read_as_0_3(run: Run, out: Verdict) -> None:
    asked = [(ex, what) for label, what in VERSIONLESS if (ex := run.get(label)) is not None]
    checks = [refusal(ex, (a2a.VERSION_NOT_SUPPORTED,), f"{what} (read as {a2a.UNSET_VERSION})")
              for ex, what in asked]
    card_ex = run.get(CARD)
    card = card_ex.json()[0] if card_ex is not None else None
    served = [(c, url) for c, (ex, _) in zip(checks, asked) if c.ok is False
              if (url := _serves_unset_version(card, ex))]
    if served and len(served) == sum(c.ok is False for c in checks):
        out.unsupported(f"{'; '.join(c.text for c, _ in served)}: but the card declares protocolVersion "
                        f"{a2a.UNSET_VERSION} at {served[0][1]}, which may serve the request as {a2a.UNSET_VERSION} "
                        f"(the suite judges 1.0 only)")
    else:
        _verdict(out, checks)


# -- A2A-ERR-017: a required extension not activated (§3.3.4, §4.6.3) -------------------------------------
@rule("A2A-ERR-017", view=Run)
def required_extension_refused(run: Run, out: Verdict) -> None:
    ex = run.get(EXT_NOT_ACTIVATED)
    if ex is None:
        return  # the driver says why (no agent whose card marks an extension required)
    card_ex = run.get(CARD_REQUIRED)
    card = card_ex.json()[0] if card_ex is not None else None
    caps = card.get("capabilities") if isinstance(card, dict) else None
    required = [e.get("uri") for e in (caps.get("extensions") or [] if isinstance(caps, dict) else [])
                if isinstance(e, dict) and e.get("required") is True]
    named = ", ".join(str(uri) for uri in required) or "an extension"
    _verdict(out, [refusal(ex, (a2a.EXTENSION_SUPPORT_REQUIRED,),
                           f"SendMessage activating none of the extensions the card marks required ({named})")])
