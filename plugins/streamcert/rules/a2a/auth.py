"""A2A-AUTH-001…005: declared security is enforced (A2A 1.0.1 §7), and the extended card is served
to whom it is for (§3.1.11), on the `security` scenario's log (drivers/a2a.py: the labels it writes).

What is judged rests on what the run could ask: a request without credentials is sent only when the card requires
some and the run was given them (`--header`); otherwise each requirement says what the card declares and that it
could not be judged (NOT_TESTED), since a run without credentials would be refused at its first request anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...contract.capture import NOT_SENT
from ...contract.labels.a2a import AUTH_SEND, CARD_SECURED, EXTENDED_CARD, EXTENDED_UNAUTH, UNAUTH_LIST, UNAUTH_SEND
from ...contract.run import CREDENTIALS
from ...framelog import Exchange, FrameLog
from ...protocols import a2a, bindings
from .. import RuleContext, Unjudgeable, Verdict, ex_evidence, rule
from ..common.unary import Answer, task_of
from ..engine import cannot_judge
from .card import REQUIRED_FIELDS, type_name


@dataclass
class Secured:
    """The agent whose card requires credentials (or declares the extended card), and what it answered."""

    log: FrameLog
    card: dict[str, Any]
    schemes: list[str]  # the security schemes its securityRequirements name
    credentials: list[str]  # the names of the headers the run sent as credentials ([] when none was given)

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> Secured:
        ex = log.get(CARD_SECURED)
        if ex is None:
            raise Unjudgeable()  # the driver got no further (the target's card requires nothing: UNSUPPORTED)
        card, err = ex.json()
        if ex.status != 200 or err or not isinstance(card, dict):
            raise Unjudgeable(f"the card of the agent that requires credentials could not be read: HTTP {ex.status}"
                              f"{', ' + err if err else ''}", [ex_evidence(ex)])
        return cls(log, card, a2a.required_schemes(card), list(log.notes.get(CREDENTIALS) or []))

    def asked(self, label: str) -> Exchange:
        """The exchange `label`, answered; NOT_TESTED saying why when it was not asked, ERROR when it cannot be
        judged."""
        ex = self.log.get(label)
        if ex is None:
            raise Unjudgeable(missing=self.not_asked())
        if ex.notes.get(NOT_SENT) or ex.status is None:
            raise Unjudgeable(f"{label} got no answer: {ex.error or 'nothing came'}", [ex_evidence(ex)])
        if ex.status not in bindings.HTTP_AUTH_REFUSALS and (why := cannot_judge(ex)):
            raise Unjudgeable(f"{label} answered, but its answer cannot be judged: {why}", [ex_evidence(ex)])
        return ex

    def not_asked(self) -> str:
        declared = (f"the card requires the security scheme(s) {', '.join(self.schemes)}" if self.schemes
                    else "the card requires no security scheme")
        if not self.credentials:
            return (f"{declared}, and the run was given no credentials (--header): a request without them cannot be "
                    f"told from one with them, so this was not judged")
        return f"{declared}; the request this needs was not sent"

    def served_with_credentials(self) -> Exchange:
        """The message sent with the run's credentials: served, or the credentials are no use to judge with."""
        ex = self.asked(AUTH_SEND)
        if (refused := bindings.auth_refusal(ex)) is not None:
            raise Unjudgeable(f"the message sent with the run's credentials ({', '.join(self.credentials)}) was "
                              f"refused too ({refused}): the credentials given are not the ones the agent takes, "
                              f"so a refusal without them shows nothing", [ex_evidence(ex)])
        return ex


def _challenge(ex: Exchange) -> str | None:
    return None if ex.binding == bindings.GRPC else ex.response_headers.get(bindings.CHALLENGE_HEADER)


def _refused(out: Verdict, ex: Exchange, what: str, served: str, which: str = "") -> None:
    """The verdict on `ex`, a request without credentials: refused as §7 asks (PASS), served (FAIL, `which` saying
    more of what was served), or refused otherwise than with an authentication status (NON_STRICT: the status is a
    SHOULD)."""
    ans = Answer.of(ex)
    if (refused := bindings.auth_refusal(ex)) is not None:
        out.passed(f"{what} without credentials: refused with {refused}; {served}")
    elif ans.error is None and ans.problem is None:
        out.failed(f"{what} carried none of the credentials the card requires and was served ({ans.describe()}, "
                   f"HTTP {ex.status}){which}: the agent did not authenticate it", [ex_evidence(ex)])
    else:
        out.non_strict(f"{what} without credentials was refused, but with {ans.describe()} (HTTP {ex.status}), not "
                       f"HTTP 401 or 403 (gRPC UNAUTHENTICATED): a client is not told that credentials are missing",
                       [ex_evidence(ex)])


@rule("A2A-AUTH-001", view=Secured)
def refused_without_credentials(v: Secured, out: Verdict) -> None:
    v.served_with_credentials()  # ERROR when the run's credentials are refused too
    _refused(out, v.asked(UNAUTH_SEND), "SendMessage",
             f"with the run's credentials ({', '.join(v.credentials)}) the same message was served")


def _context_of(ex: Exchange) -> Any:
    """The contextId of the message an exchange sent: in a JSON-RPC envelope's params, or the request itself."""
    body = ex.request_body if isinstance(ex.request_body, dict) else {}
    params = body.get("params") if isinstance(body.get("params"), dict) else body
    message = params.get("message") if isinstance(params, dict) else None
    return message.get("contextId") if isinstance(message, dict) else None


@rule("A2A-AUTH-002", view=Secured)
def no_task_without_credentials(v: Secured, out: Verdict) -> None:
    refused = v.asked(UNAUTH_SEND)
    context_id = _context_of(refused)
    if (task := task_of(Answer.of(refused).result)) is not None and task.get("id"):
        out.failed(f"SendMessage without credentials was answered with task {task.get('id')!r}", [ex_evidence(refused)])
        return
    listed = v.asked(UNAUTH_LIST)
    ans = Answer.of(listed)
    tasks = ans.result.get("tasks") if isinstance(ans.result, dict) else None
    if not isinstance(tasks, list):
        raise Unjudgeable(f"ListTasks of the refused message's context ({context_id}) answered {ans.describe()}, so "
                          f"whether the refused message made a task cannot be told", [ex_evidence(listed)])
    if tasks:
        ids = ", ".join(repr(t.get("id")) for t in tasks[:3] if isinstance(t, dict))
        out.failed(f"SendMessage without credentials was refused ({bindings.auth_refusal(refused) or refused.status}), "
                   f"yet ListTasks of its context {context_id} shows {len(tasks)} task(s) made for it: {ids}",
                   [ex_evidence(refused), ex_evidence(listed)])
    else:
        out.passed(f"no task was made for the refused message: ListTasks of its context {context_id} is empty")


@rule("A2A-AUTH-003", view=Secured)
def challenge_on_401(v: Secured, out: Verdict) -> None:
    ex = v.asked(UNAUTH_SEND)
    if ex.binding == bindings.GRPC:
        return  # gRPC has no challenge header (the catalogue entry names the HTTP bindings)
    if ex.status != 401:
        out.otherwise_not_tested(f"the request without credentials got HTTP {ex.status}, not 401: no challenge is "
                                 f"owed (A2A-AUTH-001 says what came)")
        return
    if (challenge := _challenge(ex)) is not None:
        out.passed(f"HTTP 401 with WWW-Authenticate: {challenge}")
    else:
        out.non_strict(f"HTTP 401 without a WWW-Authenticate header: a client is not told which scheme "
                       f"({', '.join(v.schemes)}) to authenticate with", [ex_evidence(ex)])


def _skills(card: Any) -> set[Any]:
    listed = card.get("skills") if isinstance(card, dict) else None
    return {s.get("id") for s in listed or [] if isinstance(s, dict)} if isinstance(listed, list) else set()


@rule("A2A-AUTH-004", view=Secured)
def extended_card_refused_without_credentials(v: Secured, out: Verdict) -> None:
    served = Answer.of(v.asked(EXTENDED_CARD))
    unauth = v.asked(EXTENDED_UNAUTH)
    anyone = Answer.of(unauth).result
    which = ""  # which card came without credentials, when the one with them says more
    withheld = sorted(map(repr, _skills(served.result) - _skills(anyone))) if isinstance(anyone, dict) else []
    if withheld:  # @a2a-js/sdk 1.3.0 answers an unauthenticated user the public card
        which = (f"; the card it answered lacks the skill(s) {', '.join(withheld)} the answer with credentials has: "
                 f"the extended card was withheld, yet the request was served, not refused")
    _refused(out, unauth, "GetExtendedAgentCard",
             "with the run's credentials it answered " + ("an agent card" if isinstance(served.result, dict)
                                                           else served.describe()), which)


def _interfaces(card: dict[str, Any]) -> set[tuple[str, str, str]]:
    listed = card.get("supportedInterfaces")
    return {(i.get("url"), i.get("protocolBinding"), i.get("protocolVersion")) for i in listed or []
            if isinstance(i, dict) and isinstance(listed, list)}


@rule("A2A-AUTH-005", view=Secured)
def extended_card_extends(v: Secured, out: Verdict) -> None:
    ex = v.asked(EXTENDED_CARD)
    if (refused := bindings.auth_refusal(ex)) is not None and not v.credentials:
        raise Unjudgeable(missing=f"GetExtendedAgentCard was refused ({refused}); {v.not_asked()}")
    if refused is not None:
        raise Unjudgeable(f"GetExtendedAgentCard with the run's credentials ({', '.join(v.credentials) or 'none'}) was "
                          f"refused ({refused}): the extended card could not be read", [ex_evidence(ex)])
    ans = Answer.of(ex)
    if ans.code == a2a.EXTENDED_CARD_NOT_CONFIGURED:
        out.passed("ExtendedAgentCardNotConfiguredError: the card declares the extended card and none is configured "
                   "(§3.3.4 names this answer for it)")
        return
    extended = ans.result
    if ans.error is not None or ans.problem is not None or not isinstance(extended, dict):
        out.failed(f"the card declares capabilities.extendedAgentCard: true, and GetExtendedAgentCard with the run's "
                   f"credentials answered {ans.describe()}, not an agent card", [ex_evidence(ex)])
        return
    problems = [f"{name} is missing" if name not in extended else f"{name} is not {type_name(typ)}"
                for name, typ in REQUIRED_FIELDS.items()
                if name not in extended or not isinstance(extended[name], typ)]
    lost = _interfaces(v.card) - _interfaces(extended)
    problems += [f"the public card's {binding} interface {url} (protocol {version}) is not among its interfaces"
                 for url, binding, version in sorted(lost, key=str)]
    if problems:
        out.failed("the extended card does not extend the public one: " + "; ".join(problems), [ex_evidence(ex)])
    else:
        added = len(_interfaces(extended) - _interfaces(v.card))
        out.passed(f"an agent card with every required field, keeping each of the public card's "
                   f"{len(_interfaces(v.card))} interface(s){f' and adding {added}' if added else ''}")
