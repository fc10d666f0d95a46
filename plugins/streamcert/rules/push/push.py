"""PUSH-: push notification configs and deliveries (A2A 1.0.1 §3.1.7–3.1.10, §4.3.3).

Labels read (written by streamcert.drivers.push): push_task, stream, push_create_slow, push_create_a,
push_create_b, push_create_c, push_delete_c, push_create_nourl, push_list, push_get, push_get_unknown,
push_delete_unknown, push_get_deleted, push_list_unknown_task, push_create_unknown_task, and the receiver's
own exchanges (every exchange with notes["path"]: webhook_1, webhook_2, …); log.notes["push"].
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...contract.capture import PUSH_RECEIVER, WEBHOOK_PATH
from ...contract.labels import push as push_labels
from ...contract.labels.a2a import STREAM
from ...contract.push import HOOK_PATHS, PUSH, SETTLED, SLOW_DELAY_S, TOKENS
from ...framelog import Exchange, FrameLog
from ...protocols import a2a, bindings, push
from ...scrub import MASK
from .. import Verdict, ex_evidence, rule
from ..a2a.errors import _verdict, refusal
from ..common.unary import Answer, no_answer
from ..engine import RuleContext, Unjudgeable

# the two configs made without an id and kept to the task's end
KEPT = (push_labels.PUSH_CREATE_A, push_labels.PUSH_CREATE_B)
# push-deliveries: the configs with a token (INLINE: the hooks key of the config given inline, a token and
# authentication both)
TOKENED = (push_labels.INLINE, push_labels.PUSH_CREATE_RETRY, push_labels.PUSH_CREATE_WAIT)


@dataclass
class PushRun:
    """The push scenario's log: the configs asked for, what the receiver got at each webhook, the stream."""

    log: FrameLog
    ctx: RuleContext
    hooks: dict[str, str] = field(default_factory=dict)  # create label → webhook path
    tokens: dict[str, str] = field(default_factory=dict)
    received: list[Exchange] = field(default_factory=list)
    stream: list[tuple[float, Any]] = field(default_factory=list)  # the answer stream's updates (t, body)

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> PushRun:
        notes = log.notes.get(PUSH)
        if not isinstance(notes, dict):
            raise Unjudgeable()
        view = cls(log, ctx, dict(notes.get(HOOK_PATHS) or {}), dict(notes.get(TOKENS) or {}))
        view.received = [ex for ex in log.exchanges if WEBHOOK_PATH in ex.notes]
        sub = log.get(STREAM)
        if sub is not None:
            frames = [(ev.t, bindings.frame_answer(sub.binding, ev.payload)[0]) for ev in sub.data_events()]
            view.stream = frames[1:]  # after the Task it opens with
        return view

    @property
    def replaced(self) -> dict[str, str]:
        """The configs made without an id whose id the agent answered to the other Create too, by label → the label
        of the Create that took it over (the later one). PUSH-002 judges that departure; the requirements judged on
        each kept config judge the one that holds the id, not the one it replaced."""
        ids = {label: (self.config(label) or {}).get("id") for label in KEPT}
        first, second = KEPT
        return {first: second} if ids[first] and ids[first] == ids[second] else {}

    @property
    def kept(self) -> tuple[str, ...]:
        """KEPT without the configs the agent did not make (refused: PUSH-001 judges that) and those another Create
        replaced (see `replaced`)."""
        return tuple(label for label in KEPT if label not in self.replaced and self.config(label) is not None)

    @property
    def tokened(self) -> tuple[str, ...]:
        """The configs whose token PUSH-009 looks for: the kept ones (push-configs), or, on push-deliveries' log,
        the inline config (which gives authentication too), the failing and the slow one."""
        return TOKENED if push_labels.INLINE in self.hooks else self.kept

    def replaced_reading(self) -> str | None:
        """What the rules judged on each kept config say of a replaced one, or None."""
        return "; ".join(f"{old} is not judged here: the agent answered its id to {new} too, whose config replaced it "
                         f"(PUSH-002's departure)" for old, new in self.replaced.items()) or None

    def at(self, label: str) -> list[Exchange]:
        path = self.hooks.get(label)
        return [ex for ex in self.received if ex.notes.get(WEBHOOK_PATH) == path]

    def config(self, label: str) -> dict[str, Any] | None:
        ex = self.log.get(label)
        if ex is None or no_answer(ex, label):
            return None
        result = Answer.of(ex).result
        return result if isinstance(result, dict) else None

    @property
    def updates(self) -> list[Any]:
        return [body for _, body in self.stream]

    def receiver_refused(self, labels: tuple[str, ...]) -> str | None:
        """The reading when the agent refused every one of these configs naming the suite's receiver while that
        receiver is on a loopback or private address: URL screening (§13.2 asks agents to reject localhost and
        private ranges), so right, never a failure. None otherwise (the configs, or one of them, accepted). A config
        the scenario never asked for (push-deliveries stops when the message carrying its inline config is refused)
        counts for nothing either way."""
        where = (self.log.notes.get(PUSH_RECEIVER) or {}).get("url", "")
        asked = [(label, ex) for label in labels if (ex := self.log.get(label)) is not None]
        if not push.is_internal_url(where) or not asked:
            return None
        for label, ex in asked:
            if no_answer(ex, label) or Answer.of(ex).error is None:
                return None
        return (f"the agent refused every config naming the suite's receiver ({where}): a screening agent is right "
                "to refuse a loopback or private webhook (§13.2); give it a receiver it accepts with --push-receiver "
                "and --push-url")


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _deduped(bodies: list[Any]) -> list[str]:
    """The bodies as canonical text, a repeat of one already seen left out (duplicates may occur, §4.3.3)."""
    seen: list[str] = []
    for body in bodies:
        text = _canon(body)
        if text not in seen:
            seen.append(text)
    return seen


@rule("PUSH-001", view=PushRun)
def create_assigns_id(v: PushRun, out: Verdict) -> None:
    if reading := v.receiver_refused((push_labels.PUSH_CREATE_SLOW, *KEPT)):
        return out.otherwise_not_tested(reading)
    for label in KEPT:
        ex = v.log.get(label)
        if ex is None:
            continue
        if lost := no_answer(ex, label):
            out.error(lost, [ex_evidence(ex)])
            continue
        ans = Answer.of(ex)
        config = ans.result if isinstance(ans.result, dict) else None
        if config is None:
            out.failed(f"{label}: Create answered no config ({ans.describe()})", [ex_evidence(ex)])
        elif not isinstance(config.get("id"), str) or not config["id"]:
            out.failed(f"{label}: the config Create answered has no id, though the request gave none",
                       [ex_evidence(ex)])
        elif config.get("url") != (ex.params or {}).get("url"):
            out.failed(f"{label}: Create answered url {config.get('url')!r}, not the one sent", [ex_evidence(ex)])
        else:
            out.passed(f"{label}: Create answered the config with id {config['id']!r}")


@rule("PUSH-002", view=PushRun)
def two_creates_two_configs(v: PushRun, out: Verdict) -> None:
    configs = [v.config(label) for label in KEPT]
    ids = [c.get("id") for c in configs if c]
    if len(ids) < 2:
        return out.otherwise_not_tested("the two Creates did not both answer a config")
    if ids[0] == ids[1]:
        return out.failed(f"both Creates without an id answered the same id {ids[0]!r}: the second replaced the first",
                          [ex_evidence(v.log.get(label)) for label in KEPT])
    listing = v.log.get(push_labels.PUSH_LIST)
    listed = Answer.of(listing).result if listing is not None and not no_answer(listing, "List") else None
    shown = {c.get("id") for c in (listed or {}).get("configs") or [] if isinstance(c, dict)}
    missing_list = [i for i in ids if i not in shown] if shown else []
    silent = [label for label in KEPT if not v.at(label)]
    if missing_list:
        out.failed(f"List shows {sorted(map(str, shown))}, without {missing_list}", [ex_evidence(listing)])
    elif silent:
        out.failed(f"the webhook of {', '.join(silent)} received nothing, though its config was made and kept",
                   [ex_evidence(v.log.get(label)) for label in silent])
    else:
        how = "both listed" if shown else "List showed none after the task ended (accepted: see the note)"
        out.passed(f"two configs {ids[0]!r} and {ids[1]!r}, {how}, and both webhooks received the task's events")


@rule("PUSH-003", view=PushRun)
def get_answers_config(v: PushRun, out: Verdict) -> None:
    ex, made = v.log.get(push_labels.PUSH_GET), v.config(push_labels.PUSH_CREATE_A)
    if ex is None or made is None:
        return
    if new := v.replaced.get("push_create_a"):  # the id now names the config that replaced a's
        made = v.config(new) or made
    if lost := no_answer(ex, "Get"):
        return out.error(lost, [ex_evidence(ex)])
    got = Answer.of(ex).result
    if not isinstance(got, dict):
        return out.failed(f"Get of config {made.get('id')!r} answered no config ({Answer.of(ex).describe()})",
                          [ex_evidence(ex)])
    wrong = [k for k in ("id", "url") if got.get(k) != made.get(k)]
    if wrong:
        out.failed(f"Get of config {made.get('id')!r} answered {', '.join(f'{k} {got.get(k)!r}' for k in wrong)}, "
                   f"not the config made", [ex_evidence(ex)])
    else:
        out.passed(f"Get answered config {got['id']!r} with its url",
                   reading=f"Get of push_create_a's id compared with the config of {new}, which took that id over "
                           f"(PUSH-002's departure)" if new else None)


NOT_FOUND = [(push_labels.PUSH_GET_UNKNOWN, "Get of a config id no Create made"),
             (push_labels.PUSH_GET_DELETED, "Get of a deleted config"),
             (push_labels.PUSH_LIST_UNKNOWN_TASK, "List on a task that does not exist"),
             (push_labels.PUSH_CREATE_UNKNOWN_TASK, "Create on a task that does not exist")]


@rule("PUSH-004", view=PushRun)
def unknown_refused(v: PushRun, out: Verdict) -> None:
    checks = [refusal(ex, (a2a.TASK_NOT_FOUND,), what) for label, what in NOT_FOUND
              if (ex := v.log.get(label)) is not None]
    reading = None
    ex = v.log.get(push_labels.PUSH_DELETE_UNKNOWN)
    if ex is not None:
        check = refusal(ex, (a2a.TASK_NOT_FOUND,), "Delete of a config id no Create made")
        ans = Answer.of(ex)
        if check.ok is False and ans.error is None and not ans.problem:
            reading = "Delete of an unknown config id answered without error (idempotent delete, §3.1.10 ¶9)"
        else:
            checks.append(check)
    _verdict(out, checks, reading)


@rule("PUSH-005", view=PushRun)
def no_url_refused(v: PushRun, out: Verdict) -> None:
    ex = v.log.get(push_labels.PUSH_CREATE_NOURL)
    if ex is None:
        return
    _verdict(out, [refusal(ex, (a2a.INVALID_PARAMS,), "Create without url")])


@rule("PUSH-006", view=PushRun)
def bodies_are_stream_responses(v: PushRun, out: Verdict) -> None:
    task_id = _task_id(v)
    bad = []
    for ex in v.received:
        body = ex.request_body
        kind = push.stream_response_kind(body)
        if kind is None:
            bad.append((f"{ex.label} to {ex.notes.get(WEBHOOK_PATH)} is no StreamResponse: {_canon(body)[:120]}",
                        ex_evidence(ex)))
        elif task_id and push.task_of(body) not in (task_id, None):
            bad.append((f"{ex.label} names task {push.task_of(body)!r}, not {task_id!r}", ex_evidence(ex)))
    if not out.fail_each("POST(s) carry no StreamResponse of the task", bad) and v.received:
        out.passed(f"{len(v.received)} POST(s), each one StreamResponse of the task")


def _task_id(v: PushRun, label: str = push_labels.PUSH_TASK) -> str | None:
    ex = v.log.get(label)
    events = ex.data_events() if ex is not None else []
    first = bindings.frame_answer(ex.binding, events[0].payload)[0] if events else None
    task = first.get("task") if isinstance(first, dict) else None
    return task.get("id") if isinstance(task, dict) else None


@rule("PUSH-007", view=PushRun)
def every_event_delivered(v: PushRun, out: Verdict) -> None:
    if not v.stream:
        return out.otherwise_not_tested("the task's stream carried no update")
    if not v.kept:
        return out.otherwise_not_tested(v.receiver_refused(KEPT) or "the agent made none of the configs the webhooks "
                                                                  "were to be compared on (PUSH-001 says why)")
    want = _deduped(v.updates)
    for label in v.kept:
        got = {_canon(ex.request_body) for ex in v.at(label)}
        missing = [w for w in want if w not in got]
        if missing:
            waited = "" if (v.log.notes.get(PUSH) or {}).get(SETTLED, True) else \
                " (the suite waited its --timeout for the terminal event at both webhooks)"
            out.failed(f"the webhook of {label}{waited} lacks {len(missing)} of the {len(want)} events the stream carried; "
                       f"the first: {missing[0][:160]}", [ex_evidence(ex) for ex in v.at(label)[:3]])
        else:
            out.passed(f"the webhook of {label} received all {len(want)} events the stream carried",
                       reading=v.replaced_reading())


@rule("PUSH-008", view=PushRun)
def events_in_order(v: PushRun, out: Verdict) -> None:
    want = _deduped(v.updates)
    for label in v.kept:
        got = [g for g in _deduped([ex.request_body for ex in v.at(label)]) if g in want]
        order = [w for w in want if w in got]
        if not got:
            continue
        if got != order:
            at = next(i for i, (g, o) in enumerate(zip(got, order)) if g != o)
            out.non_strict(f"the webhook of {label} received the events in another order than the stream: its "
                           f"event {at + 1} is the stream's event {want.index(got[at]) + 1}",
                           [ex_evidence(ex) for ex in v.at(label)[:3]])
        else:
            out.passed(f"the webhook of {label} received {len(got)} events in the stream's order")


@rule("PUSH-009", view=PushRun)
def token_arrives(v: PushRun, out: Verdict) -> None:
    for label in v.tokened:
        token, posts = v.tokens.get(label), v.at(label)
        if not token or not posts:
            continue
        carriers = [[name for name, value in ex.request_headers.items() if value == token or
                     value.split(" ", 1)[-1] == token] for ex in posts]
        if not all(carriers):
            ex = posts[[bool(c) for c in carriers].index(False)]
            if masked := sorted(name for name, value in ex.request_headers.items() if value == MASK):
                # a recording scrubs every header named like a credential: the token may be behind the mask
                out.otherwise_not_tested(f"{label}: {ex.label}'s header(s) {', '.join(masked)} were masked as "
                                         "credentials when recorded, so whether one carried the token cannot be read")
                continue
            also = " (the config gives authentication too)" if label == push_labels.INLINE else ""
            out.warning(f"{label}: the config's token arrived in no header of {ex.label}{also} "
                        f"(headers: {', '.join(sorted(ex.request_headers))})", [ex_evidence(ex)])
        else:
            names = sorted({name for c in carriers for name in c})
            out.passed(f"{label}: the token arrived in {', '.join(names)} on every POST",
                       reading=f"token header: {', '.join(names)}")


@rule("PUSH-010", view=PushRun)
def media_type(v: PushRun, out: Verdict) -> None:
    other = [ex for ex in v.received if ex.request_headers.get("content-type", "").split(";")[0].strip().lower()
             != push.A2A_JSON_MEDIA_TYPE]
    if other:
        seen = sorted({ex.request_headers.get("content-type", "(none)") for ex in other})
        out.non_strict(f"{len(other)} POST(s) say Content-Type {', '.join(seen)}, not {push.A2A_JSON_MEDIA_TYPE}",
                       [ex_evidence(ex) for ex in other[:3]])
    elif v.received:
        out.passed(f"every POST says {push.A2A_JSON_MEDIA_TYPE}")


@rule("PUSH-011", view=PushRun)
def nothing_after_delete(v: PushRun, out: Verdict) -> None:
    deleted = v.log.get(push_labels.PUSH_DELETE_C)
    if deleted is None or no_answer(deleted, "Delete") or Answer.of(deleted).error is not None:
        return out.otherwise_not_tested("no config was deleted")
    answered = deleted.t_headers if deleted.t_headers is not None else deleted.t_end
    late = [ex for ex in v.at(push_labels.PUSH_CREATE_C) if answered is not None and ex.t_sent > answered]
    if late:
        out.failed(f"{len(late)} POST(s) reached the deleted config's webhook after Delete was answered "
                   f"(at {answered:.3f} s); the first at {late[0].t_sent:.3f} s",
                   [ex_evidence(deleted), *[ex_evidence(ex) for ex in late[:2]]])
    else:
        out.passed("the deleted config's webhook received nothing after Delete was answered")


@rule("PUSH-012", view=PushRun)
def nothing_new_after_terminal(v: PushRun, out: Verdict) -> None:
    for label in v.kept:
        posts = v.at(label)
        ends = [i for i, ex in enumerate(posts) if push.is_terminal_body(ex.request_body)]
        if not ends:
            continue
        before = {_canon(ex.request_body) for ex in posts[:ends[0] + 1]}
        new = [ex for ex in posts[ends[0] + 1:] if _canon(ex.request_body) not in before]
        if new:
            out.warning(f"the webhook of {label} received {len(new)} new event(s) after the terminal one; the first: "
                        f"{_canon(new[0].request_body)[:160]}", [ex_evidence(ex) for ex in new[:3]])
        else:
            out.passed(f"the webhook of {label} received nothing new after the terminal event")


@rule("PUSH-013", view=PushRun)
def slow_webhook_holds_nothing(v: PushRun, out: Verdict) -> None:
    notes = v.log.notes.get(PUSH) or {}
    first_at: dict[str, float] = {}  # each event → when it first reached a kept (fast) webhook
    for label in v.kept:
        for ex in v.at(label):
            key = _canon(ex.request_body)
            first_at[key] = min(first_at.get(key, ex.t_sent), ex.t_sent)
    lags = [(t - first_at[_canon(body)], t) for t, body in v.stream if _canon(body) in first_at]
    stream = v.log.get(STREAM)
    frames = stream.data_events() if stream is not None else []
    after = [t for t in first_at.values() if stream is not None and t >= stream.t_sent]
    if frames and after:  # the stream's first frame and the first POST come of the same first update
        lags.append((frames[0].t - min(after), frames[0].t))
    if not lags or not v.log.get(push_labels.PUSH_CREATE_SLOW):
        return out.otherwise_not_tested("no event reached both the stream and a webhook beside the slow one")
    tolerance = out.tolerance("lag_s", 1.5)
    lag, at = max(lags)
    measured = {"max_lag_s": round(lag, 3), "tolerance_s": tolerance, "slow_delay_s": notes.get(SLOW_DELAY_S)}
    sub = v.log.get(STREAM)
    if lag > tolerance:
        out.warning(f"an event reached the task's stream {lag:.2f} s after it reached a webhook (at {at:.3f} s; "
                    f"tolerance {tolerance:g} s), beside a webhook that answers after {notes.get(SLOW_DELAY_S)} s",
                    [ex_evidence(sub)], measured=measured)
    else:
        out.passed(f"{len(lags)} event(s) reached the stream at most {max(lag, 0):.2f} s after a webhook, beside "
                   f"the slow one", measured=measured)
