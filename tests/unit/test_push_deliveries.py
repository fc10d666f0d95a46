"""PUSH-014..030 both ways, on hand-made logs of the push-deliveries scenario (labels:
streamcert.drivers.push_deliveries), one live run of the reference's push agent, and the receiver's failing
and slow webhooks and its bounds."""

from __future__ import annotations

import asyncio
import copy
import socket

import httpx
import pytest
from logs import artifact_update as art
from logs import frame_log, rpc_error, sse, status_update, task_result, unary

from streamcert.contract.capture import ABANDONED, PUSH_OVERFLOW
from streamcert.framelog import Exchange, FrameLog
from streamcert.outcomes import Outcome
from streamcert.rules import judge
from streamcert.scrub import MASK, WEBHOOK_CREDENTIALS, Scrubber
from streamcert.wire import push_receiver
from streamcert.wire.push_receiver import PushReceiver

BASE = "http://127.0.0.1:9"
HOOKS = {"inline": "/hook/inline", "push_create_retry": "/fail/1/r", "push_create_wait": "/slow/1.5/w",
         "nopush_send": "/hook/nopush", "push_create_d": "/hook/d"}
TOKENS = {label: f"tok-{label}" for label in HOOKS}
AUTH = {"scheme": "Bearer", "credentials": "cred-123456"}
NOTES = {"push": {"hooks": HOOKS, "tokens": TOKENS, "auth": AUTH, "wait_s": 1.5, "settled": True},
         "push_receiver": {"listen": "127.0.0.1:9", "url": BASE}}
INLINE = {"url": BASE + "/hook/inline", "token": TOKENS["inline"], "authentication": AUTH}
PAUSE = status_update("TASK_STATE_INPUT_REQUIRED", "Shall I start?")
TURN = [status_update("TASK_STATE_WORKING", "go"), art("r", text="one"), status_update("TASK_STATE_COMPLETED")]
CUT_AT = 1.0  # stream_cut: sent at 1.0, dropped by the client at 1.03


TOKEN_AT = {path: TOKENS[label] for label, path in HOOKS.items()}


def post(path: str, body, t: float, *, status: int | None = 200, auth: str | None = "Bearer cred-123456",
         notes: dict | None = None, token: bool = True) -> Exchange:
    headers = {"content-type": "application/a2a+json", **({"authorization": auth} if auth else {}),
               **({"x-a2a-notification-token": TOKEN_AT[path]} if token and path in TOKEN_AT else {})}
    return Exchange(label=f"webhook_{path}_{t}", method="POST", url=BASE + path, request_headers=headers,
                    request_body=body, status=status, t_sent=t, t_end=t, binding="push",
                    notes={"path": path, **(notes or {})})


def create(label: str, url: str, result=None, *, error=None, t: float = 0.5, **extra) -> Exchange:
    params = {"taskId": "task-1", "url": url, **extra}
    if result is None and error is None:
        result = {"id": f"cfg-{label}", **params}
    return unary(label, result, error=error, rpc_method="CreateTaskPushNotificationConfig", params=params, t=t)


def good_log(*, inline_posts=None, retry_posts=None, wait_post=None, screen=None, listed=None, get=None,
             delete_again=None, nopush_posts=(), nopush=None, inline_task=None, drop=(), notes=None):
    turn_posts = [post("/hook/inline", body, 1.1 + i * 0.01) for i, body in enumerate(TURN)]
    inline_posts = [post("/hook/inline", PAUSE, 0.3), *turn_posts] if inline_posts is None else inline_posts
    retry_posts = [post("/fail/1/r", TURN[0], 1.1, status=503),
                   *[post("/fail/1/r", body, 1.3 + i * 0.01) for i, body in enumerate(TURN)]] \
        if retry_posts is None else retry_posts
    screen = screen or {}
    ex = [unary("card", {}),
          nopush or unary("nopush_send", task_result(), params={"configuration": {"taskPushNotificationConfig": {
              "url": BASE + "/hook/nopush"}}}),
          inline_task or sse("inline_task", [task_result(), PAUSE], t=0.1,
                             params={"message": {}, "configuration": {"taskPushNotificationConfig": INLINE}}),
          create("push_create_retry", BASE + "/fail/1/r"), create("push_create_wait", BASE + "/slow/1.5/w"),
          create("push_create_noscheme", BASE + "/hook/noscheme", error=rpc_error(-32602),
                 authentication={"credentials": "x"})]
    for kind, url in {"link_local": "http://169.254.169.254/latest/meta-data/", "private": "http://10.255.255.1/hook",
                      "scheme": "ftp://127.0.0.1:9/hook", "non_url": "not a url"}.items():
        ex.append(screen[kind](url) if kind in screen else create(f"push_screen_{kind}", url,
                                                                   error=rpc_error(-32602)))
    ex += [create("push_create_d", BASE + "/hook/d"),
           unary("push_delete_d", {}, rpc_method="DeleteTaskPushNotificationConfig", t=0.6),
           delete_again or unary("push_delete_d_again", error=rpc_error(-32001), t=0.65),
           unary("push_list_pause", {"configs": [{"id": "cfg-inline", "taskId": "task-1", **INLINE},
                                                 {"id": "cfg-push_create_retry", "url": BASE + "/fail/1/r"}]
                                     if listed is None else listed}, t=0.7),
           unary("push_get_inline", {"id": "cfg-inline", "taskId": "task-1", **INLINE} if get is None else get,
                 t=0.8),
           sse("stream_cut", [task_result()], t=CUT_AT, dt=0.01),
           *inline_posts, *retry_posts, *nopush_posts,
           wait_post or post("/slow/1.5/w", TURN[0], 1.1)]
    log_notes = copy.deepcopy(NOTES)
    if notes:
        log_notes["push"].update(notes)
    return frame_log(*[e for e in ex if e.label not in drop], notes=log_notes)


def outcomes(log, rid: str) -> set[Outcome]:
    return {f.outcome for f in judge(log, [rid]) if f.req_id == rid}


ALL = ["PUSH-009", *(f"PUSH-{n:03d}" for n in range(14, 31))]  # PUSH-009: the tokens here too


def accepted(label: str):
    return lambda url: create(label, url)


def test_a_correct_log_passes_every_requirement():
    findings = judge(good_log(), ALL)
    assert {f.req_id for f in findings} == set(ALL)
    assert all(f.outcome is Outcome.PASS for f in findings), [(f.req_id, f.message) for f in findings
                                                               if f.outcome is not Outcome.PASS]
    readings = {f.req_id: f.reading for f in findings if f.reading}
    assert readings["PUSH-028"] == "second Delete: TaskNotFoundError"
    assert readings["PUSH-029"] == "inline config to an agent without push: ignored"


@pytest.mark.parametrize("rid,log,outcome", [
    ("PUSH-014", lambda: good_log(inline_posts=[]), Outcome.FAIL),
    # @a2a-js/sdk 1.3.0: a config with authentication gets Authorization only, its token in no header
    ("PUSH-009", lambda: good_log(inline_posts=[post("/hook/inline", body, 1.1 + i * 0.01, token=False)
                                                for i, body in enumerate([PAUSE, *TURN])]), Outcome.WARNING),
    ("PUSH-014", lambda: good_log(inline_task=unary("inline_task", error=rpc_error(-32602), params={
        "configuration": {"taskPushNotificationConfig": INLINE}})), Outcome.FAIL),
    ("PUSH-015", lambda: good_log(listed=[{"id": "cfg-push_create_retry", "url": BASE + "/fail/1/r"}]), Outcome.FAIL),
    ("PUSH-016", lambda: good_log(inline_posts=[post("/hook/inline", PAUSE, 0.3)]), Outcome.FAIL),
    ("PUSH-016", lambda: good_log(inline_posts=[post("/hook/inline", b, 1.1) for b in TURN]), Outcome.FAIL),
    ("PUSH-017", lambda: good_log(inline_posts=[post("/hook/inline", PAUSE, 0.3),
                                                post("/hook/inline", TURN[0], 1.1)]), Outcome.FAIL),
    ("PUSH-018", lambda: good_log(inline_posts=[post("/hook/inline", PAUSE, 0.3, auth=None),
                                                *[post("/hook/inline", b, 1.1) for b in TURN]]), Outcome.FAIL),
    ("PUSH-018", lambda: good_log(inline_posts=[post("/hook/inline", b, 1.1, auth="Basic cred-123456")
                                                for b in [PAUSE, *TURN]]), Outcome.FAIL),
    ("PUSH-018", lambda: good_log(inline_posts=[post("/hook/inline", b, 1.1, auth="Bearer other")
                                                for b in [PAUSE, *TURN]]), Outcome.FAIL),
    ("PUSH-019", lambda: _noscheme_accepted(), Outcome.FAIL),
    ("PUSH-020", lambda: good_log(screen={"link_local": accepted("push_screen_link_local")}), Outcome.WARNING),
    ("PUSH-021", lambda: good_log(screen={"private": accepted("push_screen_private")}), Outcome.WARNING),
    ("PUSH-022", lambda: good_log(screen={"scheme": accepted("push_screen_scheme")}), Outcome.WARNING),
    ("PUSH-023", lambda: good_log(screen={"non_url": accepted("push_screen_non_url")}), Outcome.WARNING),
    ("PUSH-024", lambda: good_log(retry_posts=[post("/fail/1/r", TURN[0], 1.1, status=503),
                                               *[post("/fail/1/r", b, 1.3) for b in TURN[1:]]]), Outcome.WARNING),
    ("PUSH-025", lambda: good_log(retry_posts=[post("/fail/1/r", TURN[0], 1.1, status=503)]), Outcome.FAIL),
    ("PUSH-026", lambda: good_log(wait_post=post("/slow/1.5/w", TURN[0], 1.1, status=None,
                                                 notes={ABANDONED: 0.5})), Outcome.WARNING),
    ("PUSH-027", lambda: good_log(listed=[{"id": "cfg-inline", **INLINE},
                                          {"id": "cfg-push_create_d", "url": BASE + "/hook/d"}]), Outcome.FAIL),
    ("PUSH-028", lambda: good_log(delete_again=unary("push_delete_d_again", error=rpc_error(-32603))), Outcome.FAIL),
    ("PUSH-029", lambda: good_log(nopush_posts=[post("/hook/nopush", TURN[0], 0.2)]), Outcome.FAIL),
    ("PUSH-030", lambda: good_log(get={"id": "cfg-inline", "url": INLINE["url"]}), Outcome.FAIL),
    ("PUSH-030", lambda: good_log(get={"id": "cfg-inline", **INLINE, "authentication": {"scheme": "Basic"}}),
     Outcome.FAIL),
])
def test_a_broken_log_is_flagged_on_its_requirement(rid, log, outcome):
    assert outcome in outcomes(log(), rid)


def _noscheme_accepted() -> FrameLog:
    log = good_log(drop=("push_create_noscheme",))
    log.add(create("push_create_noscheme", BASE + "/hook/noscheme", authentication={"credentials": "x"}))
    return log


def test_allowed_variations_pass():
    # a second Delete answered without error; a refusal of the inline config by the agent without push; the
    # credentials withheld by Get; the scheme in another case; a retry of the failed event only after the others
    log = good_log(delete_again=unary("push_delete_d_again", {}, t=0.65),
                   nopush=unary("nopush_send", error=rpc_error(-32003)),
                   get={"id": "cfg-inline", **INLINE, "authentication": {"scheme": "bearer"}},
                   inline_posts=[post("/hook/inline", PAUSE, 0.3, auth="BEARER cred-123456"),
                                 *[post("/hook/inline", b, 1.1 + i / 100, auth="BEARER cred-123456")
                                   for i, b in enumerate(TURN)]],
                   retry_posts=[post("/fail/1/r", TURN[0], 1.1, status=503),
                                *[post("/fail/1/r", b, 1.3) for b in [*TURN[1:], TURN[0]]]])
    findings = {f.req_id: f for f in judge(log, ALL)}
    assert all(f.outcome is Outcome.PASS for f in findings.values()), \
        [(f.req_id, f.message) for f in findings.values() if f.outcome is not Outcome.PASS]
    assert findings["PUSH-028"].reading == "second Delete: answered without error"
    assert findings["PUSH-029"].reading == "inline config to an agent without push: refused"


def test_a_screening_agent_that_refuses_the_loopback_receiver_is_a_reading_never_a_failure():
    refused = rpc_error(-32602, "webhook URLs on loopback are refused")
    log = good_log(inline_task=unary("inline_task", error=refused, params={"configuration": {
        "taskPushNotificationConfig": INLINE}}), inline_posts=[], retry_posts=[],
        wait_post=post("/elsewhere", TURN[0], 9.0), drop=("push_create_retry", "push_create_wait", "push_get_inline"))
    log.add(create("push_create_retry", BASE + "/fail/1/r", error=refused))
    log.add(create("push_create_wait", BASE + "/slow/1.5/w", error=refused))
    findings = judge(log, ALL)
    assert not [f for f in findings if f.outcome in (Outcome.FAIL, Outcome.WARNING, Outcome.ERROR)], \
        [(f.req_id, f.outcome, f.message) for f in findings if f.outcome is not Outcome.PASS]
    for rid in ("PUSH-014", "PUSH-015", "PUSH-016", "PUSH-024", "PUSH-026"):
        [f] = [f for f in findings if f.req_id == rid]
        assert f.outcome is Outcome.NOT_TESTED and "--push-url" in f.message, (rid, f.message)


def test_a_screening_agent_that_refuses_the_inline_config_stops_the_scenario_and_is_not_blamed():
    # a2a-sdk 1.3.0 with validate_push_notification_url: the message carrying the inline config is refused, so the
    # driver asks nothing more (no task): the configs it never asked for are no reason to blame the refusal
    refused = unary("inline_task", error=rpc_error(-32602, "Invalid push notification URL"),
                    params={"configuration": {"taskPushNotificationConfig": INLINE}})
    log = frame_log(unary("card", {}), refused, notes=copy.deepcopy(NOTES))
    [finding] = judge(log, ["PUSH-014"])
    assert finding.outcome is Outcome.NOT_TESTED and "--push-url" in finding.message, finding.message
    log.notes["push_receiver"]["url"] = "http://runner.example:9"  # reachable by name: the refusal is a FAIL
    assert outcomes(log, "PUSH-014") == {Outcome.FAIL}


def test_on_a_recording_the_masked_authorization_is_not_judged():
    log = good_log(inline_posts=[post("/hook/inline", b, 1.1 + i / 100, auth=MASK)
                                 for i, b in enumerate([PAUSE, *TURN])], notes={"auth": {"scheme": "Bearer",
                                                                                         "credentials": MASK}})
    assert outcomes(log, "PUSH-018") == {Outcome.NOT_TESTED}


def test_the_terminal_event_before_the_client_dropped_its_stream_leaves_push_017_unjudged():
    early = [post("/hook/inline", PAUSE, 0.3), *[post("/hook/inline", b, 0.9) for b in TURN]]
    assert outcomes(good_log(inline_posts=early), "PUSH-017") == {Outcome.NOT_TESTED}


def test_on_a_recording_a_token_masked_in_the_request_is_not_taken_for_another():
    masked = {**INLINE, "token": MASK}
    log = good_log(inline_task=sse("inline_task", [task_result(), PAUSE], t=0.1, params={
        "configuration": {"taskPushNotificationConfig": masked}}))
    assert outcomes(log, "PUSH-030") == {Outcome.PASS}


def test_without_the_push_notes_nothing_is_judged():
    assert judge(frame_log(unary("card", {})), ALL) == []


def test_the_webhook_credentials_are_masked_by_every_scrubber():
    text = f'{{"authentication": {{"scheme": "Bearer", "credentials": "{WEBHOOK_CREDENTIALS}"}}}}'
    assert WEBHOOK_CREDENTIALS not in Scrubber().text(text)
    assert WEBHOOK_CREDENTIALS not in Scrubber().text(f"Authorization: Bearer {WEBHOOK_CREDENTIALS}")


def test_the_reference_push_agent_passes_live_and_no_credential_reaches_a_cassette(tmp_path):
    from streamcert.drivers import run_scenario
    from streamcert.recordings.cassette import load, write
    from streamcert.reference.agent.server import ReferenceServer
    from streamcert.targets import Target

    with ReferenceServer() as server:
        log = run_scenario("push-deliveries", Target(push_agent_url=server.agent_url("push"), a2a_url=server.url))
    findings = judge(log, ALL)
    assert {f.req_id for f in findings} == set(ALL)
    assert all(f.outcome is Outcome.PASS for f in findings), [(f.req_id, f.message) for f in findings
                                                               if f.outcome is not Outcome.PASS]
    assert WEBHOOK_CREDENTIALS.encode() in log.get("push_list_pause").body  # the agent echoes them
    path = write(log, tmp_path / "push-deliveries.yaml", Scrubber.of(Target(), {}))
    assert WEBHOOK_CREDENTIALS not in path.read_text()
    replayed = {f.req_id: f.outcome for f in judge(load(path), ALL)}
    # the Authorization and the token's header are masked in the recording
    assert replayed["PUSH-018"] is replayed["PUSH-009"] is Outcome.NOT_TESTED
    assert {o for rid, o in replayed.items() if rid not in ("PUSH-009", "PUSH-018")} == {Outcome.PASS}


# -- the receiver ----------------------------------------------------------------------------------

def _receive(exercise, **kw) -> tuple[FrameLog, list]:
    """Run the receiver on a free port and `exercise(base_url)` against it (an async callable)."""
    log = FrameLog(scenario="receiver")

    async def main():
        loop = asyncio.get_running_loop()
        async with PushReceiver(log, lambda: loop.time(), **kw) as rx:
            return rx, await exercise(rx.base)

    rx, got = asyncio.run(main())
    return log, got


def test_a_failing_webhook_answers_503_first_then_200():
    async def two(base):
        async with httpx.AsyncClient() as c:
            return [(await c.post(base + "/fail/1/x", json={"n": i})).status_code for i in range(2)]

    log, statuses = _receive(two)
    assert statuses == [503, 200]
    assert [ex.status for ex in log.exchanges] == [503, 200]


def test_a_sender_that_gives_up_on_a_slow_webhook_is_noted_with_how_long_it_waited():
    async def impatient(base):
        async with httpx.AsyncClient(timeout=0.3) as c:
            with pytest.raises(httpx.ReadTimeout):
                await c.post(base + "/slow/2/x", json={})
        await asyncio.sleep(0.4)  # the receiver looks every 50 ms; give it time to see the close

    log, _ = _receive(impatient)
    [ex] = log.exchanges
    assert ex.status is None and 0.25 <= ex.notes[ABANDONED] < 1.5


def test_a_flood_is_bounded_and_counted(monkeypatch):
    monkeypatch.setattr(push_receiver, "MAX_POSTS", 20)  # the cap's logic, without a thousand POSTs

    async def flood(base):
        async with httpx.AsyncClient() as c:
            return [(await c.post(base + "/hook/f", content=b"{}")).status_code for _ in range(25)]

    log, statuses = _receive(flood)
    assert statuses == [200] * 20 + [503] * 5
    assert len(log.exchanges) == 20 and log.notes[PUSH_OVERFLOW] == {"refused": 5, "limit": 20}


async def _raw(base: str, request: bytes) -> bytes:
    """Send `request` as it is and read what the receiver answers until it closes the connection."""
    host, port = base.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request)
    await writer.drain()
    answer = await reader.read()
    writer.close()
    return answer


def test_a_64_mib_body_is_refused_unread_and_a_stalled_post_is_cut():
    async def big_then_stalled(base):
        big = await _raw(base, b"POST /hook/big HTTP/1.1\r\ncontent-length: %d\r\n\r\n{" % (64 * 2 ** 20))
        stalled = await _raw(base, b"POST /hook/stall HTTP/1.1\r\ncontent-length: 10\r\n\r\n{")
        return big, stalled

    log, (big_answer, stalled_answer) = _receive(big_then_stalled, max_body=1024, idle=0.3)
    assert big_answer.startswith(b"HTTP/1.1 413") and stalled_answer.startswith(b"HTTP/1.1 400")
    big, stalled = log.exchanges
    assert big.notes["unjudged"]["figure"] == 64 * 2 ** 20 and big.notes["unjudged"]["limit"] == 1024
    assert stalled.end == "idle" and "not whole" in stalled.error


def test_a_post_that_never_ends_is_cut_at_the_idle_limit():
    async def trickle(base):
        host, port = base.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"POST /hook/trickle HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n")
        try:
            for _ in range(40):  # a chunk every 50 ms: never a gap of the idle limit, never an end
                if reader.at_eof():
                    return True
                writer.write(b"1\r\nx\r\n")
                await writer.drain()
                await asyncio.sleep(0.05)
        except ConnectionError:  # the receiver closed the connection while chunks were still coming
            return True
        finally:
            writer.close()
        return False

    log, cut = _receive(trickle, idle=0.3)
    assert cut, "the receiver read the trickle for 2 s without cutting it"
    [ex] = log.exchanges
    assert ex.end == "idle" and "not whole after 0.3 s" in ex.error


def test_a_receiver_port_already_taken_is_one_line_and_exit_2(tmp_path):
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "streamcert", "run", "--profile", "push", "--push-receiver",
                               f"127.0.0.1:{port}", "--report", str(tmp_path)], capture_output=True, text=True,
                              timeout=60)
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(port) in lines[0], done.stderr


def test_a_refused_receiver_is_excused_only_on_a_loopback_or_private_address():
    refused = rpc_error(-32602, "webhook URLs on loopback are refused")

    def refusing(receiver_url: str) -> FrameLog:
        log = good_log(inline_task=unary("inline_task", error=refused, params={"configuration": {
            "taskPushNotificationConfig": INLINE}}), inline_posts=[], retry_posts=[],
            drop=("push_create_retry", "push_create_wait", "push_get_inline"))
        log.add(create("push_create_retry", BASE + "/fail/1/r", error=refused))
        log.add(create("push_create_wait", BASE + "/slow/1.5/w", error=refused))
        log.notes["push_receiver"] = {"listen": "0.0.0.0:8765", "url": receiver_url}
        return log

    assert outcomes(refusing("http://localhost:8765"), "PUSH-014") == {Outcome.NOT_TESTED}
    assert outcomes(refusing("http://192.168.1.20:8765"), "PUSH-014") == {Outcome.NOT_TESTED}
    assert outcomes(refusing("http://runner.example:8765"), "PUSH-014") == {Outcome.FAIL}  # --push-url: no excuse
