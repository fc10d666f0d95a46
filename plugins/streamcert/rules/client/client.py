"""CLIENT-: an A2A client under test, judged on the final view it printed and on the requests it sent
(issue 11; docs/contracts.md §7 extended). What is read, and how the view is found and compared: rules/client/clientview.py.

A client with no final view (it could not start, hung, was cut at a limit or printed no JSON object) leaves
every requirement of the case ERROR, with the reason (exit status, the end of its stderr, the limit that cut
it); except CLIENT-009, which WARNs when the client was cut at a time limit although the last stream had closed
after the terminal status: it waited for something the protocol never sends. A client that exited in error
after the stream was served crashed on it: it is judged on an empty view (docs/contracts.md §7), and the requirement the
difference is blamed on FAILs, its message quoting the stderr from its error line (clientview.error_line).

A requirement not met is a departure: FAIL for a MUST, NON_STRICT for a SHOULD (docs/contracts.md §3; `departure`).

The view requirements (001–008, 010, 013) each compare their part of the view with the case's expected view
(PARTS). A wrong view is diagnosed first (`stop_of`): when it is exactly what a client that read the stream
rightly up to one of its interrupted states, or up to its first lastChunk that more frames follow, shows, the
whole of it is blamed on CLIENT-008 or CLIENT-006, whatever else the case varies, and its findings cite no frame
after the stop. Otherwise each difference is blamed once (BLAME): first on what it shows of its cause, where
the case names and exercises the requirement of that cause — a request the card does not allow or sent where
it declares no interface (CLIENT-018, CLIENT-020), a frame of another task shown (CLIENT-007), what only the block
a stream ended inside carried (CLIENT-005: no blank line ended it, so it is no event), an older update
that arrived after a later one or again (CLIENT-002), a plan taken wrong while the rest of the view is right
(CLIENT-001), characters outside ASCII left out or shown as U+FFFD (CLIENT-004), something the stream carried
left out or an older value kept (CLIENT-005 the case's line ends, BOM, comments and cut lines; CLIENT-010
unknown metadata and variants); then on the requirement whose part it is in (ids 007, plan 001, artifacts
003, state after an interruption 008, prompt 013); last on the variation of a case that changes how the stream
reads (004, 005, 010), since the case differs from one the client reads right only by it. A requirement whose
part differs only where another one takes the blame gives no finding. Without a view every requirement of the
case is ERROR; with one, a requirement the case does not exercise gives no finding.

The request requirements (011, 012, 014–020) judge the `sent` exchanges. Those a case does not exercise
give no finding: CLIENT-011 without an interaction served, CLIENT-012 without a retry (an answer
sent again for the same interaction after the replay server dropped the connection of the one before),
CLIENT-015 without a streaming request, CLIENT-018 without a message sent, CLIENT-019 without an answer sent while
an interaction was open, CLIENT-020 without a card that declares a JSONRPC interface.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ...catalogue import load_catalogue
from ...outcomes import Outcome
from ...protocols import a2a, interactions_v1
from ...protocols.bindings import jsonrpc_paths
from .. import Verdict, rule
from .clientview import ClientRun
from .compare import (
    ARTIFACT,
    FOREIGN,
    PLAN,
    PROMPT,
    STALE,
    STATUS_TEXT,
    TASK_IDS,
    TASK_STATE,
    UNENDED,
    Diff,
    ViewComparison,
    carried_lost,
    characters_lost,
)
from .printed import header, shown
from .served import Frame, Sent, ids_in

MORE_SHOWN = 3  # differences a finding lists


# -- which requirement a difference of the view is blamed on ------------------------------------------------

@dataclass(frozen=True)
class Part:
    """What a view requirement looks at: `what` (for its messages), whether a case exercises it, and whether
    a difference lies in its part of the view."""

    what: str
    exercised: Callable[[ClientRun], bool]
    holds: Callable[[ClientRun, Diff], bool]


def _whole(run: ClientRun, d: Diff) -> bool:
    return True


def _after_last_chunk(run: ClientRun, d: Diff) -> bool:
    """Artifacts begun after the first lastChunk, and the task's state, text and plan when a status follows it."""
    cut = run.stream.last_chunk
    if cut is None:
        return False
    later_status = any(f.n > cut.n for f in run.stream.statuses)
    return (d.part == ARTIFACT and d.artifact in run.stream.after(cut)) or \
        (later_status and d.part in (TASK_STATE, STATUS_TEXT, PLAN))


def _after_interruption(run: ClientRun, d: Diff) -> bool:
    """The task's state, and what the stream carried after its first interrupted state: status text, plan,
    interaction, artifacts with chunks after it."""
    stop = run.stream.interrupted
    if stop is None:
        return False
    return d.part in (TASK_STATE, STATUS_TEXT, PLAN, PROMPT) or d.path.startswith("interaction") or \
        d.part == ARTIFACT and d.artifact in run.stream.after(stop)


def _task_expected(run: ClientRun, *keys: str) -> bool:
    task = run.expected.get("task")
    return isinstance(task, dict) and any(k in task for k in keys)


PARTS: dict[str, Part] = {
    "CLIENT-001": Part("the latest whole plan",
                       lambda r: "plan" in r.expected and bool(r.expected["plan"] or r.stream.plans),
                       lambda r, d: d.part == PLAN),
    "CLIENT-002": Part("the plan and status text of the latest update by status.timestamp",
                       lambda r: r.stream.disordered, lambda r, d: d.part in (PLAN, STATUS_TEXT)),
    "CLIENT-003": Part("the artifacts, their chunks joined", lambda r: "artifacts" in r.expected,
                       lambda r, d: d.part == ARTIFACT),
    "CLIENT-004": Part("the whole view, read through characters split between chunks", lambda r: bool(r.expected),
                       _whole),
    "CLIENT-005": Part("the whole view, read through the case's line ends, BOM, comments, cut lines and an end "
                       "inside the last event", lambda r: bool(r.expected), _whole),
    "CLIENT-006": Part("what the stream carried after a lastChunk", lambda r: r.stream.last_chunk is not None,
                       _after_last_chunk),
    "CLIENT-007": Part("the task's ids, and nothing from another task's frames",
                       lambda r: _task_expected(r, "id", "contextId") or any(map(r.stream.foreign, r.stream.frames)),
                       lambda r, d: d.part == TASK_IDS or d.why == FOREIGN),
    "CLIENT-008": Part("the task after the interruption, to the state it ends in",
                       lambda r: r.stream.interrupted is not None and _task_expected(r, "state"),
                       _after_interruption),
    "CLIENT-010": Part("the whole view, beside unknown metadata and variants", lambda r: bool(r.expected), _whole),
    # Not a part of the view: a request the card does not allow makes every difference its consequence.
    "CLIENT-018": Part("the whole view, after a request the agent card does not allow",
                       lambda r: r.made("card refused", lambda run: any(c.outcome == "bad" for c in
                                                                          streaming_checks(run))), _whole),
    # Likewise a request sent where the card declares no interface: the replay answered it 404.
    "CLIENT-020": Part("the whole view, after a request sent where the agent card declares no interface",
                       lambda r: r.made("misdirected", lambda run: any(c.outcome == "bad" for c in
                                                                         interface_checks(run))), _whole),
    "CLIENT-013": Part("the open interaction's prompt",
                       lambda r: isinstance(r.expected.get("interaction"), dict) and
                       interactions_v1.PROMPT in r.expected["interaction"],
                       lambda r, d: d.part == PROMPT),
}


def _anything(run: ClientRun, d: Diff) -> bool:
    return True


def _foreign(run: ClientRun, d: Diff) -> bool:
    return d.why == FOREIGN


def _unended(run: ClientRun, d: Diff) -> bool:
    """What only the block a stream ended inside carried: an event dispatched that never was one."""
    return d.why == UNENDED


def _arrived_late(run: ClientRun, d: Diff) -> bool:
    """An older update's plan or text, which arrived after one stamped later (or again): arrival order trusted."""
    return d.why == STALE and bool(set(d.frames) & run.stream.late)


def _characters_lost(run: ClientRun, d: Diff) -> bool:
    return characters_lost(d.expected, d.got)


def _carried_lost(run: ClientRun, d: Diff) -> bool:
    """Something the stream carried is not shown: nothing, an older value of the task's, or a part left out."""
    return d.why == STALE or carried_lost(d.expected, d.got)


def _plan_mistake(run: ClientRun, d: Diff) -> bool:
    """A mistake in taking the plan, not in reading the stream (every other part of the view is right): it shows
    no plan, or not a list of steps,
    although a plan of the plain progress/v1 form was served; or it shows an older update's plan while the
    updates after it that it passed over carry nothing a client may not know (a variant is CLIENT-010's)."""
    if d.part != PLAN or any(e.part != PLAN for e in run.compared().diffs):
        return False  # the rest of the view is right: the stream was read to its end
    plain = [f for f in run.stream.plans if not f.variant]
    if d.got in (None, []) or not isinstance(d.got, list) or \
            not all(isinstance(s, dict) and "label" in s for s in d.got):
        return bool(plain)
    if d.why != STALE:
        return False
    skipped = [f for f in run.stream.plans if f.n > min(d.frames)]
    return bool(skipped) and not any(f.variant for f in skipped)


# Who a difference is blamed on, when the view is no stop (stop_of): the first entry whose requirement the
# case names and exercises, whose part holds the difference and whose test fits it. First the cause the run
# shows (a request the card does not allow, a frame of another task, an update that arrived late, a plan
# taken wrong while the stream was read, characters lost, something carried left out), then the part the
# difference is in, then, last, the variation of a case that changes how the stream reads.
BLAME: tuple[tuple[str, Callable[[ClientRun, Diff], bool]], ...] = (
    ("CLIENT-018", _anything),
    ("CLIENT-020", _anything),
    ("CLIENT-007", _foreign),
    ("CLIENT-005", _unended),
    ("CLIENT-002", _arrived_late),
    ("CLIENT-001", _plan_mistake),
    ("CLIENT-004", _characters_lost),
    ("CLIENT-005", _carried_lost),
    ("CLIENT-010", _carried_lost),
    ("CLIENT-007", _anything),
    ("CLIENT-001", _anything),
    ("CLIENT-003", _anything),
    ("CLIENT-008", lambda run, d: d.part == TASK_STATE),  # the rest of its part only as a stop (stop_of)
    ("CLIENT-013", _anything),
    ("CLIENT-004", _anything),
    ("CLIENT-005", _anything),
    ("CLIENT-010", _anything),
)


@dataclass(frozen=True)
class Stop:
    """A wrong view explained whole: it is exactly the task as the stream showed it up to `frame` (a place a
    client may wrongly take for the end) and nothing after; the mistake is `rid`'s."""

    rid: str
    frame: Frame
    where: str

    def describe(self) -> str:
        return f"the view is the task as the stream showed it up to frame {self.frame.n} ({self.where}) and " \
               f"nothing after"


ORDINALS = {2: "second", 3: "third", 4: "fourth"}


def stop_of(run: ClientRun) -> Stop | None:
    """The stop that explains the view, if one does: the candidates are the stream up to each of its interrupted
    states (CLIENT-008: the client did not go on after it; a task that pauses three times may be left at any of
    them) and up to its first lastChunk that more frames follow (CLIENT-006: lastChunk taken as the end); each is
    the view a client that read those frames rightly shows (Stream.shown_up_to), and explains the view when the
    view equals it and the expected view does not. The earlier candidate is tried first (it claims less was
    read)."""
    view = run.require_view()
    stream, expected = run.stream, run.expected
    candidates = []
    for k, pause in enumerate(stream.interruptions):  # a client that did not go on after this one
        candidates.append(Stop("CLIENT-008", pause, f"its {'first' if k == 0 else ORDINALS.get(k + 1, f'#{k + 1}')} "
                                                    f"interrupted state, {pause.state}"))
    if stream.last_chunk is not None:
        candidates.append(Stop("CLIENT-006", stream.last_chunk, f"the first lastChunk, of artifact "
                                                                 f"{stream.last_chunk.artifact_id}"))
    compare = ViewComparison(stream).compare
    for stop in sorted(candidates, key=lambda c: c.frame.n):
        shown_then = stream.shown_up_to(stop.frame.n, expected)
        if compare(expected, shown_then).diffs and not compare(shown_then, view).diffs:
            return stop
    return None


def blamed_on(run: ClientRun, d: Diff, named: set[str]) -> str | None:
    """The requirement a difference is blamed on: the stop's when the view is one (whether or not the case names
    it: no other requirement takes its blame), else the first fitting entry of BLAME."""
    stop = run.made("stop", stop_of)
    if stop is not None:
        return stop.rid if stop.rid in named else None
    return next((rid for rid, fits in BLAME if rid in named and PARTS[rid].exercised(run) and
                 PARTS[rid].holds(run, d) and fits(run, d)), None)


def departure(out: Verdict) -> Outcome:
    """A requirement not met: FAIL for a MUST, NON_STRICT for a SHOULD or a MAY (docs/contracts.md §3)."""
    req = load_catalogue().get(out.req_id)
    return Outcome.FAIL if req is None or req.level == "MUST" else Outcome.NON_STRICT


def shows_expected(run: ClientRun, out: Verdict, reading: str | None = None) -> None:
    """Judge the part of the view `out`'s requirement looks at: the differences blamed on it are a departure
    (FAIL for a crash: the client showed nothing of the task, see ClientRun.crash)."""
    part = PARTS[out.req_id]
    compared = run.compared()  # without a view: ERROR, whether or not the case exercises the requirement
    if not part.exercised(run):
        return
    named = set(run.listed or PARTS) | {out.req_id}
    stop = run.made("stop", stop_of)
    mine = compared.diffs if stop is not None and stop.rid == out.req_id else \
        [d for d in compared.diffs if part.holds(run, d)]
    blamed = [d for d in mine if blamed_on(run, d, named) == out.req_id]
    if blamed:
        read_to = stop.frame.n if stop is not None else None
        listed = "; ".join(d.describe(read_to) for d in blamed[:MORE_SHOWN])
        more = f" (and {len(blamed) - MORE_SHOWN} more)" if len(blamed) > MORE_SHOWN else ""
        why = f"{stop.describe()}: " if stop is not None else ""
        if run.crash:
            out.failed(f"{part.what}: {run.crash}; so nothing of it was shown: {listed}{more}",
                       [run.client_evidence(run.crash), *run.stream_evidence()], measured={"differences": len(blamed)})
            return
        out.add(departure(out), f"{part.what}: shown otherwise than the case expects: {why}{listed}{more}",
                [run.client_evidence(blamed[0].describe(read_to)), *run.stream_evidence(read_to=read_to)],
                measured={"differences": len(blamed)})
    elif not mine:
        readings = [r for r in (reading, *compared.readings) if r]
        out.passed(f"{part.what}: shown as the case expects", reading="; ".join(readings) or None)
    # else: the part differs only where another requirement takes the blame


# -- the requests the client sent ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Check:
    """One request judged: ok, weak (a weaker reading, NON_STRICT) or bad (FAIL), with why."""

    outcome: str  # "ok", "weak", "bad"
    text: str
    evidence: dict[str, Any]
    reading: str = ""


def ok(s: Sent, text: str, reading: str = "") -> Check:
    return Check("ok", text, s.evidence(), reading)


def weak(s: Sent, text: str, reading: str) -> Check:
    return Check("weak", text, s.evidence(text), reading)


def bad(s: Sent, text: str) -> Check:
    return Check("bad", text, s.evidence(text))


def judge_requests(out: Verdict, what: str, checks: list[Check]) -> None:
    """FAIL on any bad request, else NON_STRICT on any weak one, else PASS; nothing checked: no finding.
    `what` says what every request must do ("carry A2A-Version: 1.0")."""
    if not checks:
        return
    failed = [(c.text, c.evidence) for c in checks if c.outcome == "bad"]
    weaker = [c for c in checks if c.outcome == "weak"]
    readings = "; ".join(dict.fromkeys(c.reading for c in checks if c.reading)) or None
    if out.fail_each(f"of {len(checks)} request(s) that must {what}, departure(s)", failed, outcome=departure(out)):
        return
    if weaker:
        out.fail_each(f"of {len(checks)} request(s) that must {what}, weaker form(s)",
                      [(c.text, c.evidence) for c in weaker], outcome=Outcome.NON_STRICT, reading=readings)
    else:
        out.passed(f"all {len(checks)} request(s) {what}", reading=readings)


def version_check(s: Sent) -> Check:
    sent = header(s.ex, a2a.VERSION_HEADER)
    if sent is None:
        query = {k.lower(): v for k, v in parse_qs(urlsplit(s.ex.url).query).items()}
        if a2a.VERSION_HEADER.lower() in query:
            return _version(s, query[a2a.VERSION_HEADER.lower()][0], "as the request parameter A2A-Version")
        return bad(s, f"{s.method} (request #{s.n}) carries no A2A-Version")
    return _version(s, sent, "")


def _version(s: Sent, value: str, where: str) -> Check:
    value = value.strip()
    if value == a2a.PROTOCOL_VERSION:
        return ok(s, f"{s.method}: A2A-Version {value}", where and f"the version {where}")
    if re.fullmatch(r"1\.0\.\d+", value):
        return weak(s, f"{s.method} (request #{s.n}) sends A2A-Version {value!r}",
                    "a patch number in A2A-Version (1.0 is meant)")
    return bad(s, f"{s.method} (request #{s.n}) sends A2A-Version {shown(value)}, expected 1.0")


def accept_check(s: Sent) -> Check:
    accept = header(s.ex, "Accept")
    types = {part.split(";", 1)[0].strip().lower() for part in (accept or "").split(",")}
    if a2a.SSE_MEDIA_TYPE in types:
        return ok(s, f"{s.method}: Accept {accept}")
    if types & {"*/*", "text/*"}:
        return weak(s, f"{s.method} (request #{s.n}) sends Accept {accept!r}", "a wildcard Accept")
    return bad(s, f"{s.method} (request #{s.n}) sends " + (f"Accept {shown(accept)}" if accept else "no Accept"))


def message_id_checks(run: ClientRun) -> list[Check]:
    """Each message's messageId: present, a non-empty string, none the server or the case gave, and none
    another message (not a retry of it) carries."""
    sends = run.sends
    retried = {(a.n, b.n) for a, b in run.retries()}

    def same_message(a: Sent, b: Sent) -> bool:
        return (min(a.n, b.n), max(a.n, b.n)) in retried or \
            (run.content_key(a) is not None and run.content_key(a) == run.content_key(b))

    given_by_case = ids_in(run.context)
    checks = []
    for s in sends:
        mid = s.message.get("messageId")
        if not isinstance(mid, str) or not mid:
            checks.append(bad(s, f"message #{s.n} ({s.method}) carries messageId {shown(mid)}, not a non-empty string"))
        elif mid in run.stream.given_ids(before=s.n) or mid in given_by_case:
            checks.append(bad(s, f"message #{s.n} ({s.method}) carries messageId {mid!r}, an id it was given"))
        elif twin := next((o for o in sends if o is not s and o.message.get("messageId") == mid
                           and not same_message(s, o)), None):
            checks.append(bad(s, f"messages #{twin.n} and #{s.n} are different messages with one messageId {mid!r}"))
        else:
            checks.append(ok(s, f"message #{s.n}: messageId {mid!r}"))
    return checks


def new_task_check(run: ClientRun) -> list[Check]:
    """The first message carries neither taskId nor contextId (an empty one counts as absent)."""
    if not run.sends:
        return []
    first = run.sends[0]
    case_msg = run.context.get("message") if isinstance(run.context.get("message"), dict) else {}
    carried = {k: first.message.get(k) for k in ("taskId", "contextId")
               if first.message.get(k) not in (None, "") and first.message.get(k) != case_msg.get(k)}
    if "taskId" in carried:
        return [bad(first, f"the message that starts the task carries taskId {shown(carried['taskId'])}")]
    if carried:
        return [weak(first, f"the message that starts the task carries a contextId of its own "
                            f"({shown(carried['contextId'])})", "a client-minted contextId on a new task")]
    return [ok(first, f"the message that starts the task ({first.method}) carries no taskId and no contextId")]


def answer_checks(run: ClientRun) -> list[Check]:
    """Every answer: the task's ids, the extension listed, the open interaction's id under its URI."""
    asked = [f for f in run.stream.statuses if isinstance(f.interaction_id, str)]
    if not asked:
        return []
    tid, ctx = run.stream.task_ids
    checks = []  # no answer at all: the client did not go on (CLIENT-008), nothing here to judge
    for s in run.answers:
        msg = s.message
        open_ids = [f.interaction_id for f in asked if f.sent.n < s.n]
        named = interactions_v1.interaction_of(msg) or {}
        problems = [f"{key} {shown(msg.get(key))}, the task's is {want!r}" for key, want in
                    (("taskId", tid), ("contextId", ctx)) if want is not None and msg.get(key) != want]
        if open_ids and named.get(interactions_v1.INTERACTION_ID) != open_ids[-1]:
            problems.append(f"interactionId {shown(named.get(interactions_v1.INTERACTION_ID))} under the URI, the "
                            f"open interaction is {open_ids[-1]!r}")
        listed = isinstance(msg.get("extensions"), list) and interactions_v1.URI in msg["extensions"]
        in_header = interactions_v1.URI in (header(s.ex, a2a.EXTENSIONS_HEADER) or "")
        if not listed and not in_header:
            problems.append("the extension is not listed")
        if problems:
            checks.append(bad(s, f"the answer #{s.n} ({s.method}) carries " + "; ".join(problems)))
        elif not listed:
            checks.append(weak(s, f"the answer #{s.n} lists the extension only in its A2A-Extensions header",
                               "the extension in the A2A-Extensions header only"))
        else:
            checks.append(ok(s, f"answer #{s.n} on the task, listing the extension"))
    return checks


def _answer_form(kind: Any, msg: dict[str, Any]) -> tuple[str, str]:
    """How an answer to an interaction of `kind` answers it: ("ok" | "weak" | "bad", what it carries). Seed 004:
    an approval is answered by a boolean `approved` under the extension's URI (or a boolean `value`, read as
    approved), and text never approves; a question or a connection by a `value` (or `approved`, read as the
    value), or a data or text part."""
    named = interactions_v1.interaction_of(msg) or {}
    parts = [p for p in msg.get("parts") or [] if isinstance(p, dict)] if isinstance(msg.get("parts"), list) else []
    data = [p["data"] for p in parts if "data" in p]
    texts = [p["text"] for p in parts if isinstance(p.get("text"), str)]
    if kind == interactions_v1.APPROVAL:
        for key in (interactions_v1.APPROVED, interactions_v1.VALUE):
            if isinstance(named.get(key), bool):
                return "ok", f"{key} {json.dumps(named[key])} under the extension's URI"
        if any(isinstance(d, dict) and isinstance(d.get(interactions_v1.APPROVED), bool) for d in data):
            return "weak", "approved only in a data part"
        carried = f"text {shown(''.join(texts))}" if texts else "no boolean approved"
        return "bad", f"{carried} and no boolean approved under the extension's URI: text never approves"
    if interactions_v1.VALUE in named or interactions_v1.APPROVED in named:
        return "ok", "value under the extension's URI" if interactions_v1.VALUE in named else \
            "approved, read as the value"
    if data or texts:
        return "ok", "a data part" if data else "a text part"
    return "bad", "no value, no approved and no data or text part"


def answer_form_checks(run: ClientRun) -> list[Check]:
    """Every answer against the kind of the interaction open when it was sent."""
    asked = [f for f in run.stream.statuses if f.interaction is not None]
    checks = []
    for s in run.answers:
        open_ = [f for f in asked if f.sent.n < s.n]
        if not open_:
            continue
        kind = open_[-1].interaction.get(interactions_v1.KIND)
        outcome, what = _answer_form(kind, s.message)
        text = f"the answer #{s.n} to the {kind} carries {what}"
        checks.append(ok(s, text) if outcome == "ok" else
                      weak(s, text, "an approval's answer as a data part {approved} only") if outcome == "weak"
                      else bad(s, text))
    return checks


def interface_checks(run: ClientRun) -> list[Check]:
    """Every request at a URL the agent card declares: the card's GET at the origin's well-known path, every
    other request at a JSONRPC interface URL of the card (read before it, else the one the case served)."""
    checks = []
    for s in run.sent:
        path = urlsplit(s.ex.url).path or "/"
        if s.ex.method.upper() == "GET" and path.endswith(a2a.CARD_PATH):
            checks.append(ok(s, f"the card read at {path}") if path == a2a.CARD_PATH else
                          bad(s, f"request #{s.n} reads an agent card at {path}, not at the origin's {a2a.CARD_PATH}"))
            continue
        card = next((c for c in reversed(run.sent[:s.n - 1]) if c.is_card and c.answer.status == 200), None)
        declared = jsonrpc_paths(card.answer.json()[0] if card is not None else run.card)
        if not declared:
            continue  # no card that declares a JSONRPC interface: nothing to judge it against
        if path in declared:
            checks.append(ok(s, f"{s.method} (request #{s.n}) at the JSONRPC interface {path}"))
        else:
            checks.append(bad(s, f"{s.method} (request #{s.n}) sent to {path}, not to the JSONRPC interface the "
                                 f"card declares ({', '.join(sorted(declared))})"))
    return checks


def retry_checks(run: ClientRun) -> list[Check]:
    checks = []
    for first, again in run.retries():
        before, after = first.message.get("messageId"), again.message.get("messageId")
        if isinstance(before, str) and before and after == before:
            checks.append(ok(again, f"the answer #{first.n}, dropped, was sent again as #{again.n} with its "
                                    f"messageId {before!r}"))
        else:
            checks.append(bad(again, f"the answer #{first.n} (messageId {shown(before)}) was dropped and sent again "
                                     f"as #{again.n} with messageId {shown(after)}"))
    return checks


def streaming_checks(run: ClientRun) -> list[Check]:
    """Each message and subscription against the card read before it."""
    checks = []
    for s in run.sent:
        if s.method not in (*a2a.STREAMING_METHODS, a2a.SEND_MESSAGE):
            continue
        card = next((c for c in reversed(run.sent[:s.n - 1]) if c.is_card), None)
        value, _ = card.answer.json() if card is not None else (None, None)
        caps = value.get("capabilities") if isinstance(value, dict) else None
        streams = isinstance(caps, dict) and caps.get("streaming") is True
        if s.method == a2a.SEND_MESSAGE:
            checks.append(ok(s, f"SendMessage (request #{s.n})", "SendMessage to an agent that streams"
                             if streams else ""))
        elif card is None:
            checks.append(bad(s, f"{s.method} (request #{s.n}) sent without reading the agent card first"))
        elif value is None:
            continue  # the card served is not in the log: nothing to judge it against
        elif not streams:
            said = caps.get("streaming") if isinstance(caps, dict) else None
            checks.append(bad(s, f"{s.method} (request #{s.n}) sent although the card read as request #{card.n} "
                                 f"says capabilities.streaming {shown(said)}"))
        else:
            checks.append(ok(s, f"{s.method} (request #{s.n}) after the card said streaming: true"))
    return checks


# -- the rules: the view -------------------------------------------------------------------------------------

@rule("CLIENT-001", view=ClientRun)
def plan_replaced(v: ClientRun, out: Verdict) -> None:
    shows_expected(v, out)


@rule("CLIENT-002", view=ClientRun)
def latest_by_timestamp(v: ClientRun, out: Verdict) -> None:
    shows_expected(v, out)


@rule("CLIENT-003", view=ClientRun)
def artifacts_joined(v: ClientRun, out: Verdict) -> None:
    shows_expected(v, out)


@rule("CLIENT-004", view=ClientRun)
def characters_whole(v: ClientRun, out: Verdict) -> None:
    shows_expected(v, out)


@rule("CLIENT-005", view=ClientRun)
def every_event_read(v: ClientRun, out: Verdict) -> None:
    shows_expected(v, out)


@rule("CLIENT-006", view=ClientRun)
def last_chunk_ends_artifact(v: ClientRun, out: Verdict) -> None:
    shows_expected(v, out)


@rule("CLIENT-007", view=ClientRun)
def frames_matched_to_task(v: ClientRun, out: Verdict) -> None:
    shows_expected(v, out)


@rule("CLIENT-008", view=ClientRun)
def goes_on_after_interruption(v: ClientRun, out: Verdict) -> None:
    shows_expected(v, out, reading=v.d3_reading())


@rule("CLIENT-010", view=ClientRun)
def unknown_tolerated(v: ClientRun, out: Verdict) -> None:
    shows_expected(v, out)


@rule("CLIENT-013", view=ClientRun)
def prompt_shown(v: ClientRun, out: Verdict) -> None:
    shows_expected(v, out)


# -- the rules: how the client ended ------------------------------------------------------------------------

@rule("CLIENT-009", view=ClientRun)
def finishes_at_close(v: ClientRun, out: Verdict) -> None:
    if v.hung and v.closed_at is not None and v.stream.ended_terminal:
        out.warning(f"the client was still running after the last stream closed at the terminal status "
                   f"({v.stream.statuses[-1].state}), and {v.how_it_ended()}", [v.client_evidence()])
        return
    v.require_view()
    exited = v.exited_at
    if v.closed_at is None or exited is None or not v.stream.ended_terminal or exited < v.closed_at:
        return  # no close after a terminal status, or it did not wait for it: the view requirements judge that
    after = round(exited - v.closed_at, 3)
    tolerance = out.tolerance("finish_after_close_s", 2.0)
    if after > tolerance:
        out.warning(f"the client exited {after:g} s after the last stream closed, past the {tolerance:g} s "
                    f"tolerance", [v.client_evidence()], measured={"finish_after_close_s": after})
    else:
        out.passed(f"the client finished {after:g} s after the last stream closed",
                   measured={"finish_after_close_s": after})


# -- the rules: the requests --------------------------------------------------------------------------------

@rule("CLIENT-011", view=ClientRun)
def answers_on_the_task(v: ClientRun, out: Verdict) -> None:
    v.require_view()
    judge_requests(out, "answer the interaction on the task, listing interactions/v1", answer_checks(v))


@rule("CLIENT-019", view=ClientRun)
def answers_in_the_kinds_form(v: ClientRun, out: Verdict) -> None:
    v.require_view()
    judge_requests(out, "answer the interaction in the form its kind takes", answer_form_checks(v))


@rule("CLIENT-020", view=ClientRun)
def requests_at_declared_interfaces(v: ClientRun, out: Verdict) -> None:
    v.require_view()
    judge_requests(out, "go to a URL the agent card declares", interface_checks(v))


@rule("CLIENT-012", view=ClientRun)
def retry_keeps_message_id(v: ClientRun, out: Verdict) -> None:
    v.require_view()
    judge_requests(out, "retry an answer with its messageId", retry_checks(v))


@rule("CLIENT-014", view=ClientRun)
def version_sent(v: ClientRun, out: Verdict) -> None:
    v.require_view()
    judge_requests(out, "carry A2A-Version: 1.0", [version_check(s) for s in v.sent if s.is_rpc])


@rule("CLIENT-015", view=ClientRun)
def accepts_event_stream(v: ClientRun, out: Verdict) -> None:
    v.require_view()
    judge_requests(out, "accept text/event-stream",
                   [accept_check(s) for s in v.sent if s.method in a2a.STREAMING_METHODS])


@rule("CLIENT-016", view=ClientRun)
def message_ids_minted(v: ClientRun, out: Verdict) -> None:
    v.require_view()
    judge_requests(out, "carry a messageId the client minted", message_id_checks(v))


@rule("CLIENT-017", view=ClientRun)
def new_task_without_ids(v: ClientRun, out: Verdict) -> None:
    v.require_view()
    judge_requests(out, "start the task without taskId or contextId", new_task_check(v))


@rule("CLIENT-018", view=ClientRun)
def streams_where_the_card_says(v: ClientRun, out: Verdict) -> None:
    v.require_view()
    judge_requests(out, "use the method the agent card allows", streaming_checks(v))
