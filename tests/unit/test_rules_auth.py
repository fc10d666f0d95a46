"""A2A-AUTH-001…005 (rules/a2a/auth.py) on hand-made logs of the `security` scenario: each passes on
a correct log and fails, with its ID, on a broken one; without credentials each is NOT_TESTED saying what the card
declares."""

from __future__ import annotations

import copy
from typing import Any

from logs import agent_card, card_get, frame_log, grpc_call, rpc_error, unary

from streamcert.contract.run import CREDENTIALS
from streamcert.framelog import Exchange, FrameLog
from streamcert.outcomes import Outcome
from streamcert.protocols import a2a
from streamcert.rules import RuleContext, judge

P, F, E, NS, NT = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.NON_STRICT, Outcome.NOT_TESTED
SECURED = agent_card(securitySchemes={"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
                     securityRequirements=[{"schemes": {"bearer": {"list": []}}}],
                     capabilities={"streaming": True, "extendedAgentCard": True})
CONTEXT = "ctx-refused"
TASK = {"id": "t-1", "contextId": "ctx-served", "status": {"state": "TASK_STATE_COMPLETED"}}


def _card() -> Exchange:
    ex = card_get(SECURED)
    ex.label = "card_secured"
    return ex


def _refusal(label: str, status: int = 401, challenge: str | None = "Bearer") -> Exchange:
    ex = unary(label, body=b"Unauthorized", status=status, content_type="text/plain",
               rpc_method=a2a.SEND_MESSAGE, params={"message": {"contextId": CONTEXT}})
    if challenge is not None:
        ex.response_headers["www-authenticate"] = challenge
    return ex


def _extended(**changes: Any) -> dict[str, Any]:
    card = copy.deepcopy(SECURED)
    card["skills"].append({"id": "more", "name": "more", "description": "for the authenticated", "tags": ["x"]})
    card.update(changes)
    return card


def security_log(*, unauth: Exchange | None = None, listed: list[Any] | None = None, extended: Any = None,
                 extended_unauth: Exchange | None = None, credentials: tuple[str, ...] = ("Authorization",),
                 auth_send: Exchange | None = None) -> FrameLog:
    """The security scenario's log of a correct agent, with any exchange replaced."""
    exchanges = [
        _card(),
        auth_send or unary("auth_send", {"task": TASK}, rpc_method=a2a.SEND_MESSAGE),
        unauth or _refusal("unauth_send"),
        unary("unauth_list", {"tasks": listed or [], "nextPageToken": "", "pageSize": 50, "totalSize": 0},
              rpc_method=a2a.LIST_TASKS),
        extended if isinstance(extended, Exchange) else unary("extended_card", extended or _extended(),
                                                              rpc_method=a2a.GET_EXTENDED_CARD),
        extended_unauth or _refusal("extended_unauth"),
    ]
    if not credentials:  # the driver sends nothing without credentials when the run has none
        exchanges = [ex for ex in exchanges if ex.label in ("card_secured", "extended_card")]
    return frame_log(*exchanges, scenario="security", notes={CREDENTIALS: list(credentials)})


def one(rid: str, log: FrameLog, expected: Outcome, says: str = ""):
    found = [f for f in judge(log, [rid], RuleContext()) if f.req_id == rid]
    assert len(found) == 1, found
    assert found[0].outcome == expected, f"{rid}: {found[0].outcome} {found[0].message}"
    assert says in found[0].message, found[0].message
    return found[0]


def test_a_correct_agent_passes_every_requirement():
    log = security_log()
    one("A2A-AUTH-001", log, P, "refused with HTTP 401")
    one("A2A-AUTH-002", log, P, f"ListTasks of its context {CONTEXT} is empty")
    one("A2A-AUTH-003", log, P, "WWW-Authenticate: Bearer")
    one("A2A-AUTH-004", log, P, "refused with HTTP 401")
    one("A2A-AUTH-005", log, P, "keeping each of the public card's 1 interface(s)")


def test_auth_001_served_without_credentials_fails_and_another_refusal_is_non_strict():
    served = unary("unauth_send", {"task": TASK}, rpc_method=a2a.SEND_MESSAGE)
    f = one("A2A-AUTH-001", security_log(unauth=served), F, "was served")
    assert f.evidence and "§7.4" in f.message
    as_error = unary("unauth_send", error=rpc_error(-32600, "no token"), rpc_method=a2a.SEND_MESSAGE)
    one("A2A-AUTH-001", security_log(unauth=as_error), NS, "not HTTP 401 or 403")


def test_auth_001_credentials_refused_too_is_error_and_no_credentials_is_not_tested():
    one("A2A-AUTH-001", security_log(auth_send=_refusal("auth_send")), E, "refused too (HTTP 401)")
    f = one("A2A-AUTH-001", security_log(credentials=()), NT, "the run was given no credentials (--header)")
    assert "bearer" in f.message  # what the card declares
    for rid in ("A2A-AUTH-002", "A2A-AUTH-004"):
        one(rid, security_log(credentials=()), NT, "requires the security scheme(s) bearer")


def test_auth_001_and_004_over_grpc_read_the_status():
    refused = grpc_call("unauth_send", a2a.SEND_MESSAGE, status=("UNAUTHENTICATED", "no token", ()))
    one("A2A-AUTH-001", security_log(unauth=refused), P, "refused with gRPC UNAUTHENTICATED")
    served = grpc_call("extended_unauth", a2a.GET_EXTENDED_CARD, [_extended()])
    one("A2A-AUTH-004", security_log(extended_unauth=served), F, "was served")
    # gRPC has no challenge header: A2A-AUTH-003 judges nothing there
    assert [f for f in judge(security_log(unauth=refused), ["A2A-AUTH-003"], RuleContext())] == []


def test_auth_002_a_task_made_for_the_refused_message_fails():
    f = one("A2A-AUTH-002", security_log(listed=[{"id": "t-9", "contextId": CONTEXT}]), F, "1 task(s) made for it")
    assert len(f.evidence) == 2
    served = unary("unauth_send", {"task": {**TASK, "id": "t-7"}}, rpc_method=a2a.SEND_MESSAGE)
    one("A2A-AUTH-002", security_log(unauth=served), F, "answered with task 't-7'")


def test_auth_003_401_without_challenge_is_non_strict_never_fail():
    one("A2A-AUTH-003", security_log(unauth=_refusal("unauth_send", challenge=None)), NS, "without a WWW-Authenticate")
    one("A2A-AUTH-003", security_log(unauth=_refusal("unauth_send", 403)), NT, "got HTTP 403, not 401")


def test_auth_004_extended_card_to_anyone_fails():
    served = unary("extended_unauth", _extended(), rpc_method=a2a.GET_EXTENDED_CARD)
    one("A2A-AUTH-004", security_log(extended_unauth=served), F, "GetExtendedAgentCard carried none")


def test_auth_004_the_public_card_answered_without_credentials_still_fails_saying_so():
    # @a2a-js/sdk 1.3.0: an unauthenticated GetExtendedAgentCard is served the public card (nothing withheld is
    # disclosed, but the request was not authenticated: §7.4)
    public = unary("extended_unauth", copy.deepcopy(SECURED), rpc_method=a2a.GET_EXTENDED_CARD)
    one("A2A-AUTH-004", security_log(extended_unauth=public), F, "lacks the skill(s) 'more'")
    leaked = one("A2A-AUTH-004", security_log(extended_unauth=unary("extended_unauth", _extended(),
                                                                    rpc_method=a2a.GET_EXTENDED_CARD)), F)
    assert "withheld" not in leaked.message


def test_card_011_contradicting_interfaces_or_missing_fields_fail():
    moved = _extended(supportedInterfaces=[{"url": "http://elsewhere/rpc", "protocolBinding": "JSONRPC",
                                            "protocolVersion": "1.0"}])
    one("A2A-AUTH-005", security_log(extended=moved), F, "JSONRPC interface http://127.0.0.1")
    bare = _extended()
    del bare["skills"]
    one("A2A-AUTH-005", security_log(extended=bare), F, "skills is missing")
    more = _extended(supportedInterfaces=SECURED["supportedInterfaces"] + [
        {"url": "http://127.0.0.1:1/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}])
    one("A2A-AUTH-005", security_log(extended=more), P, "and adding 1")


def test_card_011_not_configured_passes_and_another_error_fails():
    not_configured = unary("extended_card", error=rpc_error(a2a.EXTENDED_CARD_NOT_CONFIGURED),
                           rpc_method=a2a.GET_EXTENDED_CARD)
    one("A2A-AUTH-005", security_log(extended=not_configured), P, "ExtendedAgentCardNotConfiguredError")
    unsupported = unary("extended_card", error=rpc_error(a2a.UNSUPPORTED_OPERATION), rpc_method=a2a.GET_EXTENDED_CARD)
    one("A2A-AUTH-005", security_log(extended=unsupported), F, "not an agent card")
