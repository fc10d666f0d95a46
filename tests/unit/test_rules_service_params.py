"""The service parameters a request leaves out: A2A-ERR-016 (no A2A-Version, or an empty one, is read as 0.3) and
A2A-ERR-017 (a required extension not activated), both ways, on hand-made frame logs."""

from __future__ import annotations

from logs import RPC_URL, agent_card, card_get, error_info, frame_log, rest, rpc_error, status_body, task, unary

from streamcert.outcomes import Outcome
from streamcert.protocols import a2a
from streamcert.rules import RuleContext
from streamcert.rules import judge as judge_all

P, F, E, U = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.UNSUPPORTED
DONE = "TASK_STATE_COMPLETED"


def one(rid, log, expected):
    found = [f for f in judge_all(log, [rid], RuleContext()) if f.req_id == rid]
    assert len(found) == 1, found
    assert found[0].outcome == expected, f"{rid}: {found[0].outcome} {found[0].message}"
    return found[0]


def no_finding(rid, log):
    return [f for f in judge_all(log, [rid], RuleContext()) if f.req_id == rid] == []


# -- A2A-ERR-016 ---------------------------------------------------------------------------------------------

VERSION_REFUSED = rpc_error(a2a.VERSION_NOT_SUPPORTED, "0.3 is not supported", error_info("VERSION_NOT_SUPPORTED"))


def version_log(no=None, empty=None, card=None):
    """GetTask without A2A-Version (no_version) and with it empty (empty_version): each refused with
    VersionNotSupportedError unless answered `no` / `empty` (a result, or an error: a dict with "code")."""
    exs = [card_get(card)]
    for label, answer in (("no_version", no), ("empty_version", empty)):
        answer = VERSION_REFUSED if answer is None else answer
        error = answer if "code" in answer else None
        exs.append(unary(label, None if error else answer, error=error, rpc_method="GetTask", params={"id": "t-1"}))
    return frame_log(*exs, scenario="errors")


def test_err_016_refused_both_ways_passes():
    f = one("A2A-ERR-016", version_log(), P)
    assert "without A2A-Version" in f.message and "empty A2A-Version" in f.message


def test_err_016_served_fails():
    f = one("A2A-ERR-016", version_log(no=task(state=DONE)), F)
    assert "without A2A-Version (read as 0.3) was accepted" in f.message and "-32009" in f.message
    f = one("A2A-ERR-016", version_log(empty=task(state=DONE)), F)
    assert "empty A2A-Version" in f.message and "without" not in f.message


def test_err_016_another_error_fails():
    f = one("A2A-ERR-016", version_log(no=rpc_error(-32602, "A2A-Version is required")), F)
    assert "-32602" in f.message


def test_err_016_a_0_3_interface_at_that_url_may_serve_it():
    old = {"url": RPC_URL, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
    card = agent_card(supportedInterfaces=[*agent_card()["supportedInterfaces"], old])
    f = one("A2A-ERR-016", version_log(no=task(state=DONE), empty=task(state=DONE), card=card), U)
    assert "declares protocolVersion 0.3" in f.message and RPC_URL in f.message
    # refused all the same: a 0.3 interface need not serve it
    one("A2A-ERR-016", version_log(card=card), P)


def test_err_016_a_0_3_interface_elsewhere_does_not_excuse_it():
    elsewhere = {"url": "http://127.0.0.1:9/a2a/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
    other_binding = {"url": RPC_URL, "protocolBinding": "GRPC", "protocolVersion": "0.3"}
    card = agent_card(supportedInterfaces=[*agent_card()["supportedInterfaces"], elsewhere, other_binding])
    one("A2A-ERR-016", version_log(no=task(state=DONE), card=card), F)


def test_err_016_over_http_json():
    refused = status_body(a2a.VERSION_NOT_SUPPORTED, 400, details=error_info("VERSION_NOT_SUPPORTED"))
    exs = [rest(label, a2a.GET_TASK, refused, status=400, params={"id": "t-1"})
           for label in ("no_version", "empty_version")]
    one("A2A-ERR-016", frame_log(*exs), P)
    exs[0] = rest("no_version", a2a.GET_TASK, task(state=DONE), params={"id": "t-1"})
    one("A2A-ERR-016", frame_log(*exs), F)


def test_err_016_no_answer_is_an_error_and_no_request_no_finding():
    log = version_log()
    ex = log.exchanges[1]
    ex.chunks.clear()
    ex.status, ex.error, ex.end = None, "ReadTimeout: timed out", "error"
    assert "ReadTimeout" in one("A2A-ERR-016", log, E).message
    assert no_finding("A2A-ERR-016", frame_log(card_get()))


# -- A2A-ERR-017 ---------------------------------------------------------------------------------------------

REQUIRED = "https://example.com/ext/v1"


def required_log(answer=None):
    """The card of an agent that requires REQUIRED, then SendMessage activating nothing, refused with
    ExtensionSupportRequiredError unless answered `answer` (a result, or an error: a dict with "code")."""
    caps = {"streaming": True, "extensions": [{"uri": REQUIRED, "description": "needed", "required": True}]}
    card = card_get(agent_card(capabilities=caps))
    card.label = "card_required"
    if answer is None:
        answer = rpc_error(a2a.EXTENSION_SUPPORT_REQUIRED, "activate it", error_info("EXTENSION_SUPPORT_REQUIRED"))
    error = answer if "code" in answer else None
    sent = unary("ext_not_activated", None if error else answer, error=error, rpc_method="SendMessage",
                 params={"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}})
    return frame_log(card, sent, scenario="extension-required")


def test_err_017_refused_passes():
    f = one("A2A-ERR-017", required_log(), P)
    assert REQUIRED in f.message and "-32008" in f.message


def test_err_017_served_fails():
    f = one("A2A-ERR-017", required_log({"task": task(state=DONE)}), F)
    assert "was accepted" in f.message and "-32008" in f.message and REQUIRED in f.message


def test_err_017_another_error_fails():
    f = one("A2A-ERR-017", required_log(rpc_error(-32602, "bad")), F)
    assert "-32602" in f.message


def test_err_017_over_grpc_and_http_json():
    refused = status_body(a2a.EXTENSION_SUPPORT_REQUIRED, 400, details=error_info("EXTENSION_SUPPORT_REQUIRED"))
    sent = rest("ext_not_activated", a2a.SEND_MESSAGE, refused, status=400, params={"message": {}})
    one("A2A-ERR-017", frame_log(sent), P)
    served = rest("ext_not_activated", a2a.SEND_MESSAGE, {"task": task(state=DONE)}, params={"message": {}})
    one("A2A-ERR-017", frame_log(served), F)


def test_err_017_without_the_request_no_finding():
    assert no_finding("A2A-ERR-017", frame_log(card_get()))
