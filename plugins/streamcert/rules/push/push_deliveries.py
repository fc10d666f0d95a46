"""PUSH-014..030: an inline config, deliveries across a pause and after the client drops its stream, the
config's authentication, failing and slow webhooks, screened webhook URLs, Delete twice, and an agent without
push (A2A 1.0.1 §3.1.7–3.1.10, §3.3.2, §3.3.4, §4.3.3, §13.2).

Labels read (written by streamcert.drivers.push_deliveries): inline_task, stream_cut, push_create_retry,
push_create_wait, push_create_noscheme, push_screen_<kind>, push_create_d, push_delete_d, push_delete_d_again,
push_list_pause, push_get_inline, nopush_send, and the receiver's exchanges (webhook_1, …); log.notes["push"].
"""

from __future__ import annotations

from typing import Any

from ...contract.capture import ABANDONED
from ...contract.labels import push as push_labels
from ...contract.push import AUTH, PUSH, SETTLED, WAIT_S
from ...framelog import Exchange
from ...protocols import a2a, push
from ...scrub import MASK
from .. import Verdict, Verdicts, ex_evidence, rule
from ..a2a.errors import _verdict, refusal
from ..common.unary import Answer, no_answer
from .push import PushRun, _canon, _deduped, _task_id


def _inline_params(v: PushRun) -> dict[str, Any]:
    ex = v.log.get(push_labels.INLINE_TASK)
    params = ex.params if ex is not None and isinstance(ex.params, dict) else {}
    configuration = params.get("configuration")
    config = configuration.get("taskPushNotificationConfig") if isinstance(configuration, dict) else None
    return config if isinstance(config, dict) else {}


def _after(ex: Exchange | None) -> float | None:
    return ex.t_sent if ex is not None else None


# the configs naming the receiver
OWN_RECEIVER = (push_labels.INLINE_TASK, push_labels.PUSH_CREATE_RETRY, push_labels.PUSH_CREATE_WAIT)


def _waited(v: PushRun) -> str:
    settled = (v.log.notes.get(PUSH) or {}).get(SETTLED, True)
    return "" if settled else " (the suite waited its --timeout for the deliveries)"


def _not_tested(v: PushRun, out: Verdict, missing: str) -> None:
    out.otherwise_not_tested(v.receiver_refused(OWN_RECEIVER) or missing)


@rule("PUSH-014", view=PushRun)
def inline_config_delivers(v: PushRun, out: Verdict) -> None:
    ex = v.log.get(push_labels.INLINE_TASK)
    if ex is None:
        return
    if lost := no_answer(ex, "SendStreamingMessage with an inline config"):
        return out.error(lost, [ex_evidence(ex)])
    if v.receiver_refused(OWN_RECEIVER):
        return _not_tested(v, out, "")
    ans = Answer.of(ex)
    if ans.error is not None:
        return out.failed(f"SendStreamingMessage carrying a valid inline config was refused ({ans.describe()})",
                          [ex_evidence(ex)])
    task_id = _task_id(v, push_labels.INLINE_TASK)
    posts = [p for p in v.at(push_labels.INLINE) if push.task_of(p.request_body) in (task_id, None)]
    if not posts:
        return out.failed(f"the webhook given inline in SendStreamingMessage's configuration received nothing"
                          f"{_waited(v)}",
                          [ex_evidence(ex)])
    out.passed(f"the inline config's webhook received {len(posts)} POST(s) of task {task_id!r}")


@rule("PUSH-015", view=PushRun)
def inline_config_listed(v: PushRun, out: Verdict) -> None:
    ex, url = v.log.get(push_labels.PUSH_LIST_PAUSE), _inline_params(v).get("url")
    if ex is None or not url or v.receiver_refused(OWN_RECEIVER):
        return _not_tested(v, out, "no List was made while the task waited with its inline config")
    if lost := no_answer(ex, "List"):
        return out.error(lost, [ex_evidence(ex)])
    ans = Answer.of(ex)
    configs = (ans.result or {}).get("configs") if isinstance(ans.result, dict) else None
    if ans.error is not None or not isinstance(configs, list):
        return out.failed(f"List on the task answered no configs ({ans.describe()})", [ex_evidence(ex)])
    if not any(isinstance(c, dict) and c.get("url") == url for c in configs):
        return out.failed(f"List on the task shows {len(configs)} config(s), none with the webhook given inline "
                          f"in SendStreamingMessage ({url})", [ex_evidence(ex)])
    out.passed(f"List shows the inline config ({url}) among {len(configs)}")


@rule("PUSH-016", view=PushRun)
def deliveries_across_pause(v: PushRun, out: Verdict) -> None:
    posts, answered = v.at(push_labels.INLINE), _after(v.log.get(push_labels.STREAM_CUT))
    if not posts or answered is None:
        return _not_tested(v, out, "the inline config's webhook received nothing, or the task was not answered")
    paused = next((i for i, p in enumerate(posts) if push.is_interrupted_body(p.request_body)), None)
    if paused is None:
        return out.failed(f"none of the {len(posts)} POST(s) to the inline config's webhook shows the task's pause "
                          "(INPUT_REQUIRED), an event its stream carried", [ex_evidence(p) for p in posts[:3]])
    before = {_canon(p.request_body) for p in posts[:paused + 1]}
    later = [p for p in posts[paused + 1:] if p.t_sent >= answered and _canon(p.request_body) not in before]
    if not later:
        return out.failed("after the POST showing the pause, the inline config's webhook received no event of the "
                          "task's next turn (the answer moved it on)", [ex_evidence(posts[paused])])
    out.passed(f"the inline config's webhook received the pause and then {len(later)} event(s) after the answer")


@rule("PUSH-017", view=PushRun)
def deliveries_after_disconnect(v: PushRun, out: Verdict) -> None:
    cut, posts = v.log.get(push_labels.STREAM_CUT), v.at(push_labels.INLINE)
    if cut is None or not posts:
        return _not_tested(v, out, "the inline config's webhook received nothing, or the task was not answered")
    dropped = cut.t_end if cut.t_end is not None else cut.t_sent
    ends = [p for p in posts if push.is_terminal_body(p.request_body)]
    if ends and ends[0].t_sent < dropped:
        return out.otherwise_not_tested("the task ended before the client dropped its stream")
    if not ends:
        return out.failed(f"after the client dropped the answer's stream (at {dropped:.3f} s) the inline config's "
                          f"webhook never received the task's terminal event{_waited(v)}",
                          [ex_evidence(cut), *[ex_evidence(p) for p in posts[-2:]]])
    out.passed(f"the terminal event reached the inline config's webhook at {ends[0].t_sent:.3f} s, after the client "
               f"dropped its stream at {dropped:.3f} s")


@rule("PUSH-018", view=PushRun)
def authentication_sent(v: PushRun, out: Verdict) -> None:
    auth, posts = (v.log.notes.get(PUSH) or {}).get(AUTH) or {}, v.at(push_labels.INLINE)
    scheme, credentials = auth.get("scheme"), auth.get("credentials")
    if not posts or not scheme:
        return _not_tested(v, out, "the inline config's webhook received nothing")
    bad = []
    for p in posts:
        value = p.request_headers.get("authorization")
        if value is None:
            bad.append((f"{p.label} has no Authorization header", ex_evidence(p)))
            continue
        if value == MASK or credentials == MASK:  # a recording: the header or the credentials masked
            return out.otherwise_not_tested(f"{p.label}'s Authorization header was masked as a credential when "
                                            "recorded: whether it carried the configured authentication cannot "
                                            "be read")
        got_scheme, _, got = value.partition(" ")
        if got_scheme.lower() != scheme.lower() or got.strip() != credentials:
            shown = got_scheme if got_scheme.lower() != scheme.lower() else f"{got_scheme} <other credentials>"
            bad.append((f"{p.label}'s Authorization is {shown!r}, not the configured {scheme} <credentials>",
                        ex_evidence(p)))
    if not out.fail_each("POST(s) without the configured authentication", bad):
        out.passed(f"every POST ({len(posts)}) carried Authorization: {scheme} <the configured credentials>")


@rule("PUSH-019", view=PushRun)
def scheme_required(v: PushRun, out: Verdict) -> None:
    ex = v.log.get(push_labels.PUSH_CREATE_NOSCHEME)
    if ex is not None:
        _verdict(out, [refusal(ex, (a2a.INVALID_PARAMS,), "Create whose authentication has no scheme")])


SCREENED = {"PUSH-020": ("link_local", "a link-local address (the cloud metadata address 169.254.169.254)"),
            "PUSH-021": ("private", "a private address (10.0.0.0/8)"),
            "PUSH-022": ("scheme", "a scheme other than http(s) (ftp://)"),
            "PUSH-023": ("non_url", "a string that is no URL")}


@rule(*SCREENED, view=PushRun)
def webhook_urls_screened(v: PushRun, outs: Verdicts) -> None:
    for rid, (kind, what) in SCREENED.items():
        out, ex = outs[rid], v.log.get(f"{push_labels.PUSH_SCREEN_PREFIX}{kind}")
        if ex is None:
            continue
        if lost := no_answer(ex, f"Create of a webhook with {what}"):
            out.error(lost, [ex_evidence(ex)])
            continue
        ans, url = Answer.of(ex), (ex.params or {}).get("url")
        if ans.error is not None or ans.problem:
            out.passed(f"Create of webhook {url!r} ({what}) was refused: {ans.describe()}")
        else:
            out.warning(f"Create of webhook {url!r} ({what}) was accepted ({ans.describe()}); the suite deleted it "
                        "at once", [ex_evidence(ex)], reading=f"accepted {url}")


def _failed_first(v: PushRun) -> tuple[list[Exchange], list[Exchange]]:
    posts = v.at(push_labels.PUSH_CREATE_RETRY)
    return posts, [p for p in posts if p.status is not None and not 200 <= p.status < 300]


@rule("PUSH-024", view=PushRun)
def retried(v: PushRun, out: Verdict) -> None:
    posts, failed = _failed_first(v)
    if not failed:
        return _not_tested(v, out, "the failing webhook received no POST")
    first = failed[0]
    again = [p for p in posts if p.t_sent > first.t_sent and _canon(p.request_body) == _canon(first.request_body)]
    if not again:
        return out.warning(f"the event the webhook answered {first.status} ({first.label}) was never POSTed again",
                           [ex_evidence(first)])
    out.passed(f"the event answered {first.status} was POSTed again {again[0].t_sent - first.t_sent:.2f} s later",
               measured={"retry_after_s": round(again[0].t_sent - first.t_sent, 3)})


@rule("PUSH-025", view=PushRun)
def later_events_after_failure(v: PushRun, out: Verdict) -> None:
    posts, failed = _failed_first(v)
    answered = _after(v.log.get(push_labels.STREAM_CUT))
    want = _deduped([p.request_body for p in v.at(push_labels.INLINE) if answered is not None and p.t_sent >= answered])
    if not failed or not want:
        return _not_tested(v, out, "the failing webhook received no POST, or the inline one none after the answer")
    got = {_canon(p.request_body) for p in posts}
    missing = [w for w in want if w not in got]
    if missing:
        return out.failed(f"after its POST was answered {failed[0].status}, the failing webhook was never sent "
                          f"{len(missing)} of the {len(want)} events of the task's next turn; the first: "
                          f"{missing[0][:160]}", [ex_evidence(p) for p in posts[:3]])
    out.passed(f"every one of the {len(want)} events after the answer was POSTed to the webhook that failed once")


@rule("PUSH-026", view=PushRun)
def slow_webhook_waited(v: PushRun, out: Verdict) -> None:
    posts, wait = v.at(push_labels.PUSH_CREATE_WAIT), (v.log.notes.get(PUSH) or {}).get(WAIT_S)
    if not posts:
        return _not_tested(v, out, "the slow webhook received no POST")
    first = posts[0]
    if ABANDONED in first.notes:
        return out.warning(f"the agent closed {first.label} after {first.notes[ABANDONED]} s, before the webhook "
                           f"answered at {wait} s: its timeout is shorter than that (10-30 s recommended)",
                           [ex_evidence(first)], measured={"gave_up_after_s": first.notes[ABANDONED]})
    if first.status is None:
        return out.otherwise_not_tested("the slow webhook's first POST was still waiting when the scenario ended")
    out.passed(f"the agent waited {wait} s for the slow webhook's answer to {first.label}")


@rule("PUSH-027", view=PushRun)
def deleted_not_listed(v: PushRun, out: Verdict) -> None:
    made, deleted, listing = (v.log.get(label) for label in (push_labels.PUSH_CREATE_D, push_labels.PUSH_DELETE_D,
                                                             push_labels.PUSH_LIST_PAUSE))
    config = v.config(push_labels.PUSH_CREATE_D)
    if deleted is None or listing is None or not config or not config.get("id"):
        return out.otherwise_not_tested("no config was made and deleted before a List")
    if lost := no_answer(deleted, "Delete"):
        return out.error(lost, [ex_evidence(deleted)])
    ans = Answer.of(deleted)
    if ans.error is not None or ans.problem:
        return out.failed(f"Delete of config {config['id']!r}, just made, answered {ans.describe()}",
                          [ex_evidence(deleted)])
    listed = Answer.of(listing).result if not no_answer(listing, "List") else None
    ids = [c.get("id") for c in (listed or {}).get("configs") or [] if isinstance(c, dict)] \
        if isinstance(listed, dict) else []
    if config["id"] in ids:
        return out.failed(f"List after Delete still shows config {config['id']!r}",
                          [ex_evidence(made), ex_evidence(deleted), ex_evidence(listing)])
    out.passed(f"Delete answered without error and List no longer shows config {config['id']!r}")


@rule("PUSH-028", view=PushRun)
def second_delete(v: PushRun, out: Verdict) -> None:
    ex = v.log.get(push_labels.PUSH_DELETE_D_AGAIN)
    if ex is None:
        return
    if lost := no_answer(ex, "the second Delete"):
        return out.error(lost, [ex_evidence(ex)])
    ans = Answer.of(ex)
    if ans.error is None and not ans.problem:
        return out.passed("the second Delete of one config answered without error",
                          reading="second Delete: answered without error")
    if ans.code == a2a.TASK_NOT_FOUND:
        return out.passed("the second Delete of one config answered TaskNotFoundError: the config is gone either way",
                          reading="second Delete: TaskNotFoundError")
    out.failed(f"the second Delete of one config answered {ans.describe()}: deleting again must have the same "
               "effect (the config gone), an answer without error or TaskNotFoundError", [ex_evidence(ex)])


@rule("PUSH-029", view=PushRun)
def no_push_without_capability(v: PushRun, out: Verdict) -> None:
    ex = v.log.get(push_labels.NOPUSH_SEND)
    if ex is None:
        return
    posts = v.at(push_labels.NOPUSH_SEND)
    if posts:
        return out.failed(f"an agent whose card does not declare pushNotifications POSTed {len(posts)} time(s) to the "
                          "webhook given inline in SendMessage", [ex_evidence(ex), *[ex_evidence(p) for p in posts[:2]]])
    if lost := no_answer(ex, "SendMessage with an inline config"):
        return out.error(lost, [ex_evidence(ex)])
    ans = Answer.of(ex)
    how = f"refused ({ans.describe()})" if ans.error is not None else "ignored (the message was served)"
    out.passed(f"the agent without push {how} the inline config, and its webhook received nothing",
               reading=f"inline config to an agent without push: {how.split(' ')[0]}")


@rule("PUSH-030", view=PushRun)
def get_answers_settings(v: PushRun, out: Verdict) -> None:
    ex, given = v.log.get(push_labels.PUSH_GET_INLINE), _inline_params(v)
    if ex is None:
        return _not_tested(v, out, "the inline config was not listed, so it could not be read by Get")
    if lost := no_answer(ex, "Get"):
        return out.error(lost, [ex_evidence(ex)])
    got = Answer.of(ex).result
    if not isinstance(got, dict):
        return out.failed(f"Get of the inline config answered no config ({Answer.of(ex).describe()})",
                          [ex_evidence(ex)])
    # a recording masks a token by its name in the request, not in the answer: a masked one compares equal
    wrong = [k for k in ("url", "token") if given.get(k) and got.get(k) != given[k] and given[k] != MASK]
    scheme = (given.get("authentication") or {}).get("scheme")
    got_auth = got.get("authentication") if isinstance(got.get("authentication"), dict) else {}
    if scheme and str(got_auth.get("scheme", "")).lower() != scheme.lower():
        wrong.append("authentication.scheme")
    if wrong:
        return out.failed(f"Get of the inline config answered it without the {', '.join(wrong)} it was given",
                          [ex_evidence(ex)])
    out.passed("Get answered the inline config with its url, token and authentication scheme",
               reading="notification settings: token and authentication scheme (credentials may be withheld)")
