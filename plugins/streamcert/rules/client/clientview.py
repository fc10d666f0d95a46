"""What the CLIENT- rules read: one run of an A2A client under test on one client case (issue 11; docs/contracts.md §7
extended), from the frame log of drivers/client.py (driver `client-case`).

What is read, as the shared design of client certification says it is written:
  log.notes["client_case"]       {"id", "base", "variations", "context", "expected"}: the case as played (the
                                 scenario's own data, ctx.scenario.data, stands in when the note is absent)
  log.notes["stream_closed_at"]  when the replay server finished sending the last stream, in the log's seconds
                                 (the clock of every exchange's t_sent / t_end); absent or null: none closed
  exchange `client`              the client process, recorded by wire/stdio.py: `events` its stdout lines;
                                 its exit code in `status` (or notes["returncode"]); the end of its stderr in
                                 notes["stderr"] (or notes["stderr_tail"]); the limit that cut it in
                                 notes["limit"] ({"cap", "figure", "limit"}, `end` time_limit); a last line
                                 without its line end in notes["partial_line"]; notes["exited_after"] the seconds
                                 from its start to its exit
  exchanges `sent`               every request the replay server received, in order: `method`, `url` (its path;
                                 its query when kept), `rpc_method` (else read from request_body["method"]),
                                 `request_headers` (names in any case), `request_body` (parsed JSON when it is),
                                 `status`, `response_headers`, `t_sent`, `end`; notes["served"] (how the recorded
                                 answer it served ended: "error" or "reset" for the dropped connection that makes
                                 a client retry, None when none matched; without the note, `end` says so) and
                                 notes["answer"] (the label, in the case, of the exchange that answered it)
  exchanges `served`             what the replay server had to serve, as the case built it, each with
                                 notes["served_as"] (its label in the case, which a `sent` exchange's
                                 notes["answer"] names): its chunks and the events parsed from them (parsed here
                                 with the suite's SSE parser when only the chunks are there). Without a `served`
                                 exchange for it, a `sent` exchange's own chunks or events are read.

The final view is the last stdout line that is a JSON object (a line starting with `{` that parses to an
object; the stdout's last line without a line end counts), or else the whole stdout parsed as one JSON
object. Reading is bounded (framelog.read_json: a text nested deeper than the suite reads is a complaint,
never a harness fault). A client that could not be started, was cut at a limit, did not exit by itself,
or printed no JSON object has no view: every requirement of the case is ERROR with that reason (CLIENT-009
reads `hung` first: see rules/client/client.py). One that exited with a status other than 0 after frames were served
crashed on them: its view is empty ({}) and `crash` says how, quoting its stderr from the error line; before
any frame was served it has no view.

The view is compared with the case's `expected` as JSON values: numbers by value (11.0 equals 11, an integer
and a float equal only when they are the same number; true is not 1), strings exactly, objects whatever
their key order. Top-level fields absent from `expected` are not compared. Inside the view's own objects
(task, artifact, plan step, interaction) members the view holds beyond the expected ones are ignored, and a
member the view defines (a step's `note`, an artifact's `name`, `text`, `data`) left out equals null. A data
value (an artifact's `data`) compares whole: an extra key there is a difference. Artifacts are matched by
artifactId, in any order; plan steps in order.

Each difference found is tagged with the part of the view it is in and, where the stream shows why, with
what the client showed instead: `stale` (the plan or status text of another of the task's status updates: an
older one), `foreign` (what a frame of another task or context carried), `unended` (what only the block a stream
ended inside carried: no blank line ended it, so no reader dispatches it, WHATWG HTML §9.2.6). Which requirement
a difference is blamed on is decided in rules/client/client.py.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any, Iterator
from urllib.parse import urlsplit

from ... import limits
from ...contract.capture import ANSWERED_BY, EXITED_AFTER, LIMIT, PARTIAL_LINE, REFUSED, SERVED_END, STDERR
from ...contract.client import CASE_ERROR, CLIENT_CASE, RETURNCODE, SERVED_AS, STDERR_TAIL, STREAM_CLOSED_AT
from ...contract.labels.client import CLIENT, SENT, SERVED
from ...framelog import (
    END_CLIENT_STOP,
    END_ERROR,
    END_RESET,
    END_TIME_LIMIT,
    MAX_JSON_DEPTH,
    Exchange,
    FrameLog,
    nested_deeper,
    read_json,
)
from ...protocols import a2a, interactions_v1, progress_v1
from ...wire.sse import SSEParser
from ...wire.stdio import how_it_ended
from .. import RuleContext, Unjudgeable, ex_evidence, quote
from ..plans.planview import plan_of, steps_of, timestamp

SEND_METHODS = (a2a.SEND_MESSAGE, a2a.SEND_STREAMING_MESSAGE)
# Limits of time: a client cut at one of these did not finish (it hung); a size cap is another story.
TIME_CAPS = {limits.EXCHANGE.field, limits.STREAM.field, limits.START.field, limits.RUN.field, limits.IDLE.field}
DROPPED = {END_RESET, END_ERROR, "dropped"}  # how a served answer ended when the connection was cut
ID_KEYS = ("id", "taskId", "contextId", "messageId", "artifactId", "interactionId")
WALK_BUDGET = 200_000  # values looked at when collecting the ids an answer holds
SHOWN_LIMIT = 160  # characters of a value a finding quotes

# Parts of the view a difference can be in.
TASK_IDS, TASK_STATE, STATUS_TEXT, PLAN, ARTIFACT, PROMPT, OTHER = (
    "task ids", "task state", "status text", "plan", "artifact", "interaction prompt", "other")
STALE, FOREIGN, UNENDED = "stale", "foreign", "unended"
ARTIFACT_FIELDS = ("artifactId", "name", "text", "data")
STEP_FIELDS = ("label", "state", "note")
ELLIPSIS = "…"


# -- the final view on stdout (docs/contracts.md §7: "prints one JSON object") --------------------------------------------

@dataclass
class FoundView:
    value: dict[str, Any] | None  # the final view, or None
    text: str  # its text; without one, the last line that is not blank
    t: float | None  # when it came
    lines: int  # the lines read
    complaint: str = ""  # why the last line that looked like JSON was not a JSON object


def final_view(ex: Exchange, *, partial: bool = True) -> FoundView:
    """A client's final view: its last output line that is a JSON object (a last line without its line end
    included when `partial`), else its whole stdout read as one JSON object; read within the suite's JSON
    bounds, so hostile output cannot make the reading raise."""
    lines = [(ev.data, ev.t) for ev in ex.events]
    last_line = ex.notes.get(PARTIAL_LINE)
    if partial and isinstance(last_line, str) and last_line.strip():
        lines.append((last_line, ex.t_end))
    complaint = ""
    for text, t in reversed(lines):
        if not text.lstrip().startswith("{"):
            continue
        value, error = read_json(text.strip())
        if isinstance(value, dict):
            return FoundView(value, text, t, len(lines))
        complaint = complaint or error or ""
    whole = "\n".join(text for text, _ in lines)
    value, error = read_json(whole) if len(lines) > 1 and whole.lstrip().startswith("{") else (None, None)
    if isinstance(value, dict):
        return FoundView(value, whole, lines[-1][1], len(lines))
    last = next((text for text, _ in reversed(lines) if text.strip()), "")
    return FoundView(None, last, None, len(lines), complaint or error or "")


# -- JSON values ------------------------------------------------------------------------------------------

def same(a: Any, b: Any) -> bool:
    """Equal as JSON values: numbers by value (11.0 == 11, true is not 1), objects whatever their key order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def shown(value: Any) -> str:
    """A value as a finding quotes it (compact JSON, cut)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return quote(text, SHOWN_LIMIT)


def canonical(value: Any) -> str | None:
    """A key for a JSON value (sorted keys), or None for one nested deeper than the suite reads."""
    if isinstance(value, (dict, list)) and nested_deeper(value, MAX_JSON_DEPTH):
        return None
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def header(ex: Exchange, name: str) -> str | None:
    """A request header's value, the name matched in any case."""
    wanted = name.lower()
    return next((str(v) for k, v in ex.request_headers.items() if str(k).lower() == wanted), None)


def text_of(message: Any) -> str | None:
    """The text parts of a message, joined (None: no message or no text part)."""
    parts = message.get("parts") if isinstance(message, dict) else None
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)] \
        if isinstance(parts, list) else []
    return "".join(texts) if texts else None


# -- a crash's error line -----------------------------------------------------------------------------

# A line that names an error: Python's exception line (the last of its traceback), the first line of a
# JavaScript error (its stack follows it), Go's panic, a Rust or shell `error:` line.
ERROR_LINE = re.compile(r"^(?:Uncaught\s+)?[A-Za-z_$][\w.$]*(?:Error|Exception)\b|^(?:panic|error|fatal)\b",
                        re.IGNORECASE)
STACK_LINE = re.compile(r"^\s+(?:at\s|File\s|\^)|^\s*Traceback\b|^\s*$")


def error_line(stderr: str) -> str:
    """What a crashed client's stderr says went wrong, quoted from its error line (the last line naming an
    error, with what follows it up to the quote's limit), not from the bottom of a stack; without one, its
    last line that is no stack frame; "" for an empty stderr."""
    lines = stderr.splitlines()
    at = next((i for i in range(len(lines) - 1, -1, -1) if ERROR_LINE.match(lines[i].strip())
               and not lines[i][:1].isspace()), None)
    if at is None:
        at = next((i for i in range(len(lines) - 1, -1, -1) if not STACK_LINE.match(lines[i])), None)
    return quote("\n".join(line.rstrip() for line in lines[at:]).strip(), SHOWN_LIMIT) if at is not None else ""


# -- what the client sent, and what it was answered ------------------------------------------------------

@dataclass
class Sent:
    """One request the client sent, as the replay server recorded it, with the results it was answered."""

    n: int  # 1-based, in the order the replay server received them
    ex: Exchange
    method: str  # the JSON-RPC method, or the HTTP method and path
    served: Exchange | None = None  # the case's exchange that answered it
    results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def answer(self) -> Exchange:
        """What it was answered: the case's exchange, or the bytes the record kept with the request."""
        return self.served if self.served is not None else self.ex

    @property
    def is_rpc(self) -> bool:
        """A POST: a request to the JSON-RPC endpoint (the replay server serves nothing else by POST)."""
        return self.ex.method.upper() == "POST"

    @property
    def is_card(self) -> bool:
        return self.ex.method.upper() == "GET" and urlsplit(self.ex.url).path.endswith(a2a.CARD_PATH)

    @property
    def message(self) -> dict[str, Any] | None:
        """The message of a SendMessage or SendStreamingMessage."""
        body = self.ex.request_body
        params = body.get("params") if isinstance(body, dict) else None
        msg = params.get("message") if isinstance(params, dict) else None
        return msg if self.method in SEND_METHODS and isinstance(msg, dict) else None

    @property
    def dropped(self) -> bool:
        """The replay server cut the connection before a whole answer (the case's reset, or none recorded)."""
        served = self.ex.notes.get(SERVED_END)
        return served in DROPPED if served is not None else self.ex.end in DROPPED or self.ex.status is None

    def evidence(self, note: str = "") -> dict[str, Any]:
        out = ex_evidence(self.ex, note)
        out.update(exchange=f"{SENT} #{self.n}", request=self.method)
        return out


def _method(ex: Exchange) -> str:
    body = ex.request_body
    named = body.get("method") if isinstance(body, dict) else None
    if ex.rpc_method or isinstance(named, str):
        return ex.rpc_method or named
    return f"{ex.method} {urlsplit(ex.url).path}"


def answered_results(ex: Exchange) -> list[dict[str, Any]]:
    """The JSON-RPC results the replay server sent for a request: each event's of a stream, or the body's."""
    if ex.is_sse or ex.events:
        events = list(ex.events)
        if not events and ex.chunks:
            parser = SSEParser()
            for chunk in ex.chunks:
                events += parser.feed(chunk.data, chunk.t)
            parser.finish()
        values = [ev.json()[0] for ev in events if not ev.is_comment]
    else:
        values = [ex.json()[0]] if ex.chunks else []
    return [v["result"] for v in values if isinstance(v, dict) and isinstance(v.get("result"), dict)]


def unended_result(ex: Exchange) -> dict[str, Any] | None:
    """The JSON-RPC result of the block a served stream ended inside (no blank line after it), which no
    event-stream reader dispatches (WHATWG HTML §9.2.6): None when every block was ended."""
    if not ex.chunks or not (ex.is_sse or ex.events):
        return None
    parser = SSEParser()
    for chunk in ex.chunks:
        parser.feed(chunk.data, chunk.t)
    parser.finish()
    text = parser.discarded
    data = "\n".join(line[5:].removeprefix(" ") for line in (text or "").split("\n") if line.startswith("data:"))
    value = read_json(data)[0] if data else None
    result = value.get("result") if isinstance(value, dict) else None
    return result if isinstance(result, dict) else None


# -- the stream as served ---------------------------------------------------------------------------------

@dataclass
class Frame:
    """One result the replay server answered, in the order served over every request."""

    n: int
    sent: Sent
    kind: str | None  # task, message, statusUpdate, artifactUpdate (None: none of them)
    body: dict[str, Any]
    last_of_answer: bool

    @cached_property
    def ids(self) -> tuple[Any, Any]:
        if self.kind == a2a.TASK:
            return self.body.get("id"), self.body.get("contextId")
        return self.body.get("taskId"), self.body.get("contextId")

    @cached_property
    def status(self) -> dict[str, Any] | None:
        status = self.body.get("status") if self.kind in (a2a.TASK, a2a.STATUS_UPDATE) else None
        return status if isinstance(status, dict) else None

    @cached_property
    def state(self) -> Any:
        return self.status.get("state") if self.status else None

    @cached_property
    def text(self) -> str | None:
        return text_of(self.status.get("message")) if self.status else None

    @cached_property
    def when(self) -> datetime | None:
        return timestamp(self.body) if self.status else None

    @cached_property
    def steps(self) -> list[Any] | None:
        return steps_of(plan_of(self.body.get("metadata"))) if self.kind == a2a.STATUS_UPDATE else None

    @cached_property
    def interaction(self) -> dict[str, Any] | None:
        """The open interaction its status message carries under interactions/v1."""
        return interactions_v1.interaction_of(self.status.get("message")) if self.status else None

    @cached_property
    def interaction_id(self) -> Any:
        return self.interaction.get(interactions_v1.INTERACTION_ID) if self.interaction else None

    @cached_property
    def prompt(self) -> Any:
        return self.interaction.get(interactions_v1.PROMPT) if self.interaction else None

    @cached_property
    def chunk_text(self) -> str | None:
        """The text parts of an artifact chunk, joined."""
        art = self.body.get("artifact") if self.kind == a2a.ARTIFACT_UPDATE else None
        return text_of(art)

    @cached_property
    def artifact_id(self) -> Any:
        art = self.body.get("artifact") if self.kind == a2a.ARTIFACT_UPDATE else None
        return art.get("artifactId") if isinstance(art, dict) else None

    @cached_property
    def plan(self) -> list[Any] | None:
        """The steps of the progress/v1 plan a Task or status update carries (None: it carries none)."""
        return steps_of(plan_of(self.body.get("metadata"))) if self.status is not None else None

    @cached_property
    def variant(self) -> bool:
        """It carries something a client may not know: metadata under another URI than progress/v1's, members
        of the plan or of a step beyond progress/v1's, or a step state progress/v1 does not list."""
        metadata = self.body.get("metadata")
        if isinstance(metadata, dict) and any(k != progress_v1.URI for k in metadata):
            return True
        plan = plan_of(metadata)
        if isinstance(plan, dict) and set(plan) - {"steps"}:
            return True
        return any(not isinstance(step, dict) or set(step) - set(progress_v1.STEP_FIELDS) or
                   step.get("state") not in progress_v1.STATES for step in self.plan or [])


@dataclass
class Stream:
    """The task as the replay server served it: its frames, and what a client must make of them."""

    frames: list[Frame]
    unended: list[Frame] = field(default_factory=list)  # blocks an answer's stream ended inside (n 0: no event)

    @classmethod
    def of(cls, sent: list[Sent]) -> Stream:
        frames: list[Frame] = []
        unended: list[Frame] = []
        for s in sent:
            for i, result in enumerate(s.results):
                kind = a2a.stream_kind(result)
                body = result.get(kind) if kind else None
                frames.append(Frame(len(frames) + 1, s, kind, body if isinstance(body, dict) else {},
                                    i == len(s.results) - 1))
            result = unended_result(s.answer) if not s.dropped else None
            if result is not None:
                kind = a2a.stream_kind(result)
                body = result.get(kind) if kind else None
                unended.append(Frame(0, s, kind, body if isinstance(body, dict) else {}, True))
        return cls(frames, unended)

    @cached_property
    def task_ids(self) -> tuple[Any, Any]:
        """The ids of the first Task served (None, None before one)."""
        return next((f.ids for f in self.frames if f.kind == a2a.TASK), (None, None))

    def foreign(self, f: Frame) -> bool:
        """A frame of another task or context than the Task's."""
        tid, ctx = self.task_ids
        ftid, fctx = f.ids
        return tid is not None and f.kind in (a2a.STATUS_UPDATE, a2a.ARTIFACT_UPDATE) and (ftid, fctx) != (tid, ctx)

    @cached_property
    def own(self) -> list[Frame]:
        return [f for f in self.frames if not self.foreign(f)]

    @cached_property
    def statuses(self) -> list[Frame]:
        return [f for f in self.own if f.status is not None]

    @cached_property
    def updates(self) -> list[Frame]:
        """The task's status updates that carry a timestamp, in the order served."""
        return [f for f in self.statuses if f.kind == a2a.STATUS_UPDATE and f.when is not None]

    @cached_property
    def late(self) -> set[int]:
        """The status updates served after one stamped later, or served again (the same update twice)."""
        latest: datetime | None = None
        seen: list[dict[str, Any]] = []
        out = set()
        for f in self.updates:
            if latest is not None and f.when < latest or any(same(f.body, b) for b in seen):
                out.add(f.n)
            latest = f.when if latest is None else max(latest, f.when)
            seen.append(f.body)
        return out

    @cached_property
    def disordered(self) -> bool:
        return bool(self.late)

    def latest(self, frames: list[Frame]) -> list[Frame]:
        """Those of `frames` stamped latest (several when stamped alike); all of them when none is stamped."""
        stamped = [f for f in frames if f.when is not None]
        if not stamped:
            return frames[-1:]
        top = max(f.when for f in stamped)
        return [f for f in stamped if f.when == top]

    @cached_property
    def plans(self) -> list[Frame]:
        return [f for f in self.own if f.steps is not None]

    @cached_property
    def interruptions(self) -> list[Frame]:
        """The interrupted statuses served, in order."""
        return [f for f in self.statuses if a2a.is_interrupted(f.state)]

    @cached_property
    def interrupted(self) -> Frame | None:
        """The first interrupted status served."""
        return self.interruptions[0] if self.interruptions else None

    @cached_property
    def last_chunk(self) -> Frame | None:
        """The first of the task's artifact chunks with lastChunk that more frames follow."""
        return next((f for f in self.own if f.artifact_id is not None and f.body.get("lastChunk") is True
                     and f.n < len(self.frames)), None)

    @cached_property
    def last_chunks(self) -> dict[str, int]:
        """Each of the task's artifacts: the frame of its last chunk served."""
        last: dict[str, int] = {}
        for g in self.own:
            if isinstance(g.artifact_id, str):
                last[g.artifact_id] = g.n
        return last

    def after(self, f: Frame) -> set[Any]:
        """The artifact ids with a chunk served after `f`."""
        return {aid for aid, n in self.last_chunks.items() if n > f.n}

    @cached_property
    def ended_terminal(self) -> bool:
        """The task's last status served is terminal, on an answer served whole (the close that ends it)."""
        last = self.statuses[-1] if self.statuses else None
        return last is not None and a2a.is_terminal(last.state) and not last.sent.dropped

    def shown_up_to(self, n: int, expected: dict[str, Any]) -> dict[str, Any]:
        """The view a client that reads the task's frames 1 to `n` rightly shows, in the fields `expected` holds
        (docs/contracts.md §7): the Task's ids; the state, status text, plan and interaction of the latest status
        (status.timestamp, a tie or a status without one by arrival) that carried each; the artifacts begun,
        their chunks joined. A field no frame up to `n` set (a status text, say) is left out."""
        tid, ctx = self.task_ids
        latest: dict[str, tuple[datetime | None, Any]] = {}
        artifacts: dict[Any, dict[str, Any]] = {}
        for f in self.own:
            if f.n > n:
                break
            if f.status is not None:
                shown_plan = [{k: s.get(k) for k in STEP_FIELDS} if isinstance(s, dict) else s for s in f.plan] \
                    if f.plan is not None else None
                for key, value in (("state", f.state), ("statusText", f.text), ("plan", shown_plan),
                                   ("interaction", f.interaction)):
                    before = latest.get(key)
                    if value is not None and (before is None or f.when is None or before[0] is None
                                              or f.when >= before[0]):
                        latest[key] = (f.when if f.when is not None else before and before[0], value)
            if f.kind == a2a.TASK and isinstance(f.body.get("artifacts"), list):
                artifacts = {}
                for art in f.body["artifacts"]:
                    _join(artifacts, art, append=False)
            elif f.kind == a2a.ARTIFACT_UPDATE:
                _join(artifacts, f.body.get("artifact"), append=f.body.get("append") is True)
        view: dict[str, Any] = {}
        for key, want in expected.items():
            if key == "task":
                task = {"id": tid, "contextId": ctx}
                if "state" in latest:
                    task["state"] = latest["state"][1]
                view[key] = {k: task[k] for k in want if k in task} if isinstance(want, dict) else task
            elif key == "artifacts":
                view[key] = [_artifact_shown(a) for a in artifacts.values()]
            elif key == "plan":
                view[key] = latest["plan"][1] if "plan" in latest else None
            elif key == "interaction":
                got = latest["interaction"][1] if "interaction" in latest else None
                keys = want if isinstance(want, dict) else ("kind", interactions_v1.PROMPT)
                view[key] = {k: got.get(k) for k in keys} if isinstance(got, dict) else None
            elif key in latest:
                view[key] = latest[key][1]
        return view

    def given_ids(self, before: int) -> set[str]:
        """Every id the server gave in answers to the requests before request `before`."""
        found: set[str] = set()
        for f in self.frames:
            if f.sent.n < before:
                found |= ids_in(f.body)
        return found


def _join(artifacts: dict[Any, dict[str, Any]], art: Any, append: bool) -> None:
    """One artifact chunk joined into the artifacts shown (by artifactId)."""
    if not isinstance(art, dict):
        return
    aid = art.get("artifactId")
    parts = [p for p in art.get("parts") or [] if isinstance(p, dict)]
    if append and aid in artifacts:
        artifacts[aid]["parts"] += parts
    else:
        artifacts[aid] = {"artifactId": aid, "name": None, "parts": parts}
    if isinstance(art.get("name"), str):
        artifacts[aid]["name"] = art["name"]


def _artifact_shown(joined: dict[str, Any]) -> dict[str, Any]:
    texts = [p["text"] for p in joined["parts"] if isinstance(p.get("text"), str)]
    data = [p["data"] for p in joined["parts"] if "data" in p]
    shown = {"artifactId": joined["artifactId"], "name": joined["name"]}
    if data and not texts:
        shown["data"] = data[0] if len(data) == 1 else data
    else:
        shown["text"] = "".join(texts)
    return shown


def ids_in(value: Any) -> set[str]:
    """The strings under id-like keys in a JSON value (walked without recursion, within a budget)."""
    found: set[str] = set()
    stack, budget = [value], WALK_BUDGET
    while stack and budget > 0:
        item = stack.pop()
        budget -= 1
        if isinstance(item, dict):
            for k, v in item.items():
                if k in ID_KEYS and isinstance(v, str) and v:
                    found.add(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list)))
    return found


# -- the view compared with the expected one --------------------------------------------------------------

@dataclass(frozen=True)
class Diff:
    """One place where the view differs from the case's expected view."""

    path: str  # "plan", "task.state", "artifacts[test-log]", …
    part: str
    expected: Any
    got: Any
    why: str = ""  # STALE, FOREIGN, UNENDED or ""
    artifact: Any = None
    frames: tuple[int, ...] = ()  # the frames whose value the view shows instead (STALE, FOREIGN)

    def describe(self, read_to: int | None = None) -> str:
        """The difference in words; the frames it cites are those up to `read_to` (the last frame the client
        read, when a stop shows it: blame cites no frame the client never read)."""
        cited = [n for n in self.frames if read_to is None or n <= read_to]
        frames = ", ".join(map(str, cited[:3]))
        instead = {STALE: f" (what the task's own frame {frames} carried, not the latest)",
                   FOREIGN: f" (what frame {frames}, of another task or context, carried)"}.get(self.why, "") \
            if cited else ""
        if self.why == UNENDED:  # no frame to cite: the block was never an event
            instead = " (what the block the stream ended inside carried: no blank line ended it, so it is no event)"
        # the note says where the shown value came from: it stands beside that value, not the expected one
        return f"{self.path}: shown {shown(self.got)}{instead}, expected {shown(self.expected)}"


@dataclass
class Compared:
    diffs: list[Diff] = field(default_factory=list)
    readings: list[str] = field(default_factory=list)


def _member(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def _same_text(want: Any, got: Any, readings: list[str], where: str) -> bool:
    """A label or note: equal, or the cut's … written as three full stops (a reading)."""
    if same(want, got):
        return True
    if isinstance(want, str) and isinstance(got, str) and want.endswith(ELLIPSIS) and got == want[:-1] + "...":
        readings.append(f"{where}: the cut's … shown as three full stops")
        return True
    return False


def same_plan(want: Any, got: Any, readings: list[str] | None = None) -> bool:
    """Plans as the view shows them: steps in order, each label, state and note (absent equals null)."""
    if want is None or got is None or not isinstance(want, list) or not isinstance(got, list):
        return same(want, got) or (want is None and got is None)
    if len(want) != len(got):
        return False
    notes: list[str] = []
    for i, (w, g) in enumerate(zip(want, got)):
        if not isinstance(w, dict) or not isinstance(g, dict):
            return False
        for key in dict.fromkeys((*STEP_FIELDS, *w)):
            if key in ("label", "note"):
                if not _same_text(w.get(key), g.get(key), notes, f"step {i + 1} {key}"):
                    return False
            elif not same(w.get(key), g.get(key)):
                return False
    if readings is not None:
        readings.extend(notes)
    return True


# -- what a difference looks like ------------------------------------------------------------------------
# How the rules tell one cause of a difference from another (rules/client/client.py, BLAME). Each reads the expected
# and the shown value only.

REPLACEMENT = "\ufffd"


def _text_lost(want: str, got: str) -> list[str] | None:
    """The characters of `want` that `got` leaves out or shows as U+FFFD (what a decoder puts for the bytes of
    a character split between chunks and decoded apart), when that is all that differs; else None."""
    lost: list[str] = []
    i = j = 0
    while i < len(want):
        if j < len(got) and got[j] == want[i]:
            j += 1
        else:
            lost.append(want[i])
            while j < len(got) and got[j] == REPLACEMENT:
                j += 1
        i += 1
    while j < len(got) and got[j] == REPLACEMENT:
        j += 1
    return lost if j == len(got) and got != want else None


def characters_lost(want: Any, got: Any) -> bool:
    """`got` is `want` with characters outside ASCII left out or shown as U+FFFD, and nothing else changed."""
    if isinstance(want, str) and isinstance(got, str):
        lost = _text_lost(want, got)
        return lost is not None and all(not c.isascii() for c in lost)
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and any(not same(w, g) for w, g in zip(want, got)) and \
            all(same(w, g) or characters_lost(w, g) for w, g in zip(want, got))
    if isinstance(want, dict) and isinstance(got, dict):
        changed = [k for k in want if not same(want[k], got.get(k))]
        return bool(changed) and all(characters_lost(want[k], got.get(k)) for k in changed)
    return False


def carried_lost(want: Any, got: Any) -> bool:
    """`got` is `want` with parts left out: nothing shown, characters or the end of a text missing, items of a
    list missing (those kept in order and unchanged), members of an object missing or so reduced."""
    if want is not None and got is None:
        return True
    if isinstance(want, str) and isinstance(got, str):
        return _text_lost(want, got) is not None
    if isinstance(want, list) and isinstance(got, list):
        if len(got) < len(want):
            j = 0
            for w in want:
                if j < len(got) and same(w, got[j]):
                    j += 1
            return j == len(got)
        return len(got) == len(want) and any(not same(w, g) for w, g in zip(want, got)) and \
            all(same(w, g) or carried_lost(w, g) for w, g in zip(want, got))
    if isinstance(want, dict) and isinstance(got, dict):
        changed = [k for k in want if not same(want[k], got.get(k))]
        return bool(changed) and all(carried_lost(want[k], got.get(k)) for k in changed)
    return False


class ViewComparison:
    """Compares a client's view with the case's expected view, knowing the stream it was served."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream

    def compare(self, expected: dict[str, Any], view: dict[str, Any]) -> Compared:
        out = Compared()
        for key, want in expected.items():
            got = view.get(key)
            if key == "task":
                self._task(want, got, out)
            elif key == "plan":
                self._plan(want, got, out)
            elif key == "artifacts":
                self._artifacts(want, got, out)
            elif key == "statusText":
                if not same(want, got):
                    why, frames = self._why(got, lambda f: f.text, same)
                    out.diffs.append(Diff(key, STATUS_TEXT, want, got, why, frames=frames))
            elif key == "interaction":
                self._interaction(want, got, out)
            elif not same(want, got):
                out.diffs.append(Diff(key, OTHER, want, got))
        return out

    def _task(self, want: Any, got: Any, out: Compared) -> None:
        if not isinstance(want, dict):
            if not same(want, got):
                out.diffs.append(Diff("task", OTHER, want, got))
            return
        for key, value in want.items():
            seen = _member(got, key)
            if not same(value, seen):
                part = TASK_IDS if key in ("id", "contextId") else TASK_STATE if key == "state" else OTHER
                why, frames = self._why(seen, lambda f: f.state, same) if key == "state" else ("", ())
                out.diffs.append(Diff(f"task.{key}", part, value, seen, why, frames=frames))

    def _why(self, got: Any, value_of: Any, equal: Any) -> tuple[str, tuple[int, ...]]:
        """(FOREIGN, the frames) when `got` is what frames of another task carried and none of the task's own;
        (STALE, the frames) when it is what other frames of the task carried; (UNENDED, ()) when only the block
        a stream ended inside carried it (never an event); ("", ()) otherwise."""
        if got is None:
            return "", ()
        own = tuple(f.n for f in self.stream.own if value_of(f) is not None and equal(value_of(f), got))
        foreign = tuple(f.n for f in self.stream.frames
                        if self.stream.foreign(f) and value_of(f) is not None and equal(value_of(f), got))
        if own:
            return STALE, own
        if foreign:
            return FOREIGN, foreign
        unended = any(value_of(f) is not None and equal(value_of(f), got) for f in self.stream.unended)
        return (UNENDED, ()) if unended else ("", ())

    def _plan(self, want: Any, got: Any, out: Compared) -> None:
        readings: list[str] = []
        if same_plan(want, got, readings):
            out.readings += readings
            return
        # The view may show the plan of an update stamped alike with the latest: either is the latest.
        tied = self.stream.latest(self.stream.plans) if self.stream.disordered else []
        if len(tied) > 1 and any(same_plan(f.steps, got) for f in tied):
            out.readings.append("updates stamped alike: the plan of the other one shown")
            return
        why, frames = self._why(got, lambda f: f.steps, same_plan)
        out.diffs.append(Diff("plan", PLAN, want, got, why, frames=frames))

    def _artifacts(self, want: Any, got: Any, out: Compared) -> None:
        wanted = {a.get("artifactId"): a for a in want if isinstance(a, dict)} if isinstance(want, list) else {}
        found: dict[Any, list[Any]] = {}
        for a in got if isinstance(got, list) else []:
            aid = _member(a, "artifactId")
            found.setdefault(aid if isinstance(aid, (str, int)) else None, []).append(a)
        foreign = {f.artifact_id: f.n for f in self.stream.frames if self.stream.foreign(f)}
        for aid, exp in wanted.items():
            have = found.get(aid, [])
            if len(have) != 1:
                out.diffs.append(Diff(f"artifacts[{aid}]", ARTIFACT, exp, have[0] if len(have) == 1 else
                                      (have or None), artifact=aid))
                continue
            bad = [k for k in dict.fromkeys((*ARTIFACT_FIELDS, *exp)) if not same(exp.get(k), _member(have[0], k))]
            if bad:
                got_value = _member(have[0], bad[0])
                mixed = self._foreign_chunks(exp.get(bad[0]), got_value)
                out.diffs.append(Diff(f"artifacts[{aid}].{bad[0]}", ARTIFACT, exp.get(bad[0]), got_value,
                                      FOREIGN if mixed else "", aid, mixed))
        extras = [aid for aid in found if aid not in wanted and aid not in foreign]
        for aid in (aid for aid in found if aid not in wanted and aid in foreign):
            out.diffs.append(Diff(f"artifacts[{aid}]", ARTIFACT, None, found[aid][0], FOREIGN, aid, (foreign[aid],)))
        if extras:  # artifacts no frame of the task carried: one difference, however many
            out.diffs.append(Diff(f"artifacts[{', '.join(map(str, extras[:3]))}{', …' if len(extras) > 3 else ''}]",
                                  ARTIFACT, None, found[extras[0]][0] if len(extras) == 1 else
                                  f"{len(extras)} artifacts no frame of the task carried",
                                  artifact=extras[0]))

    def _foreign_chunks(self, want: Any, got: Any) -> tuple[int, ...]:
        """The frames of another task whose chunk text the shown text holds and the expected does not."""
        if not isinstance(got, str):
            return ()
        return tuple(f.n for f in self.stream.frames if self.stream.foreign(f) and f.chunk_text
                     and f.chunk_text in got and not (isinstance(want, str) and f.chunk_text in want))

    def _interaction(self, want: Any, got: Any, out: Compared) -> None:
        if not isinstance(want, dict):
            if not same(want, got):
                out.diffs.append(Diff("interaction", OTHER, want, got))
            return
        for key, value in want.items():
            seen = _member(got, key)
            if not same(value, seen):
                why, frames = self._why(seen, lambda f, k=key: f.interaction.get(k) if f.interaction else None, same)
                out.diffs.append(Diff(f"interaction.{key}", PROMPT if key == interactions_v1.PROMPT else OTHER,
                                      value, seen, why, frames=frames))


# -- the run --------------------------------------------------------------------------------------------

@dataclass
class ClientRun:
    """One client case as played: the case, the client's final view (or why there is none), the requests it
    sent and the stream as the replay server served it."""

    case: dict[str, Any]
    listed: tuple[str, ...]  # the requirements the case names
    client: Exchange
    sent: list[Sent]
    stream: Stream
    closed_at: float | None
    card: Any = None  # the agent card the case served (its JSON value)
    view: dict[str, Any] | None = None
    view_line: str = ""
    view_t: float | None = None
    no_view: str = ""  # why there is no view
    crash: str = ""  # the client exited in error after the stream was served: how, quoting its error line
    _made: dict[str, Any] = field(default_factory=dict, repr=False)  # what `made` keeps

    @classmethod
    def of(cls, log: FrameLog, ctx: RuleContext) -> ClientRun:
        if why := log.notes.get(CASE_ERROR):  # the case could not be built: nothing was run, nothing passes
            raise Unjudgeable(f"the client case could not be built, so the client was not run: {why}")
        data = ctx.scenario.data if ctx.scenario else {}
        case = log.notes.get(CLIENT_CASE) or (data if "expected" in data else None)
        client = log.get(CLIENT)
        if not isinstance(case, dict) or client is None:
            raise Unjudgeable()  # not a client case, or the driver never ran the client
        listed = tuple(ctx.scenario.requirements) if ctx.scenario else tuple(case.get("requirements") or ())
        served: dict[Any, Exchange] = {}
        for ex in log.all(SERVED):
            served.setdefault(ex.notes.get(SERVED_AS), ex)
        sent = [Sent(n, ex, _method(ex), served.get(ex.notes.get(ANSWERED_BY))) for n, ex in
                enumerate(log.all(SENT), start=1)]
        for s in sent:
            s.results = answered_results(s.answer) if not s.dropped else []
        closed = log.notes.get(STREAM_CLOSED_AT)
        card = next((ex.json()[0] for ex in served.values() if ex.method.upper() == "GET"
                     and urlsplit(ex.url).path.endswith(a2a.CARD_PATH)), None)
        run = cls(case, listed, client, sent, Stream.of(sent), closed if isinstance(closed, (int, float)) else None,
                  card)
        run._read_view()
        return run

    @property
    def unjudged(self) -> list[tuple[str, list[dict[str, Any]]]]:
        """The requests the replay server refused before reading them whole (a body past its cap, recordings/replay.py): each
        makes every requirement of the case ERROR naming the cap, beside what is judged (a cap is never blamed
        by itself, and never passed over in silence)."""
        return [(f"request #{s.n} ({s.method}): {s.ex.notes[REFUSED]}", [s.evidence()])
                for s in self.sent if s.ex.notes.get(REFUSED)]

    # -- how the client ended -----------------------------------------------------------------------------
    @property
    def exit_status(self) -> int | None:
        status = self.client.status if self.client.status is not None else self.client.notes.get(RETURNCODE)
        return status if isinstance(status, int) and self.client.end not in (END_TIME_LIMIT, END_CLIENT_STOP) else None

    @property
    def limit(self) -> dict[str, Any] | None:
        stop = self.client.notes.get(LIMIT)
        return stop if isinstance(stop, dict) else None

    @property
    def hung(self) -> bool:
        """Still running when the suite stopped it at a limit of time (or when the driver was done)."""
        if self.client.end == END_CLIENT_STOP:
            return True
        stop = self.limit
        return stop.get("cap") in TIME_CAPS if stop else self.client.end == END_TIME_LIMIT

    @property
    def exited_at(self) -> float | None:
        """When the client exited by itself, in the log's seconds."""
        if self.exit_status is None:
            return None
        after = self.client.notes.get(EXITED_AFTER)
        return self.client.t_sent + after if isinstance(after, (int, float)) else self.client.t_end

    def how_it_ended(self) -> str:
        ex = self.client
        stderr = ex.notes.get(STDERR) or ex.notes.get(STDERR_TAIL)
        normal = dataclasses.replace(ex, status=self.exit_status, notes={**ex.notes, STDERR: stderr or ""})
        return how_it_ended(normal)

    # -- the view ----------------------------------------------------------------------------------------
    def _read_view(self) -> None:
        ex = self.client
        if ex.end == END_ERROR:
            self.no_view = f"the client could not be started: {ex.error}"
            return
        if self.limit is not None or self.exit_status is None:
            self.no_view = f"the client gave no final view: it {self.how_it_ended()} ({len(ex.events)} line(s) printed)"
            return
        found = final_view(ex)
        if found.value is not None:
            self.view, self.view_line, self.view_t = found.value, found.text, found.t
        else:
            why = f"; the last JSON-looking line: {found.complaint}" if found.complaint else ""
            self.no_view = (f"the client printed no JSON object as its final view ({found.lines} line(s); the "
                            f"last: {quote(found.text, SHOWN_LIMIT)!r}{why}); it {self.how_it_ended()}")
        if self.exit_status != 0:
            printed = "a JSON object, not taken as a final view" if self.view is not None else "no JSON object"
            self.view = None
            self.no_view = f"the client crashed: it {self.how_it_ended()}; it printed {found.lines} line(s), {printed}"
            if self.stream.frames:  # it crashed on what it was served: judged on an empty view (docs/contracts.md §7)
                stderr = str(self.client.notes.get(STDERR) or self.client.notes.get(STDERR_TAIL) or "")
                line = error_line(stderr)
                self.view, self.view_line = {}, line
                self.crash = f"the client crashed (exit status {self.exit_status}) on the stream it was served" + \
                    (f": {line!r}" if line else ", with nothing on its stderr")

    def require_view(self) -> dict[str, Any]:
        """The final view; without one, every requirement of the case is ERROR with why."""
        if self.view is None:
            raise Unjudgeable(self.no_view, [self.client_evidence()])
        return self.view

    @property
    def expected(self) -> dict[str, Any]:
        want = self.case.get("expected")
        return want if isinstance(want, dict) else {}

    @property
    def context(self) -> dict[str, Any]:
        ctx = self.case.get("context")
        return ctx if isinstance(ctx, dict) else {}

    def made(self, name: str, build: Any) -> Any:
        """What `build(self)` makes of the run, made once (every rule reading the run shares it)."""
        if name not in self._made:
            self._made[name] = build(self)
        return self._made[name]

    def compared(self) -> Compared:
        """The view compared with the expected one."""
        view = self.require_view()
        return self.made("compared", lambda run: ViewComparison(run.stream).compare(run.expected, view))

    def d3_reading(self) -> str | None:
        """Which way the case's stream went at its first interrupted state (conflict D3)."""
        f = self.stream.interrupted
        if f is None:
            return None
        if f.last_of_answer:
            return f"D3, closes: the stream of request #{f.sent.n} ended at {f.state}"
        return f"D3, stays open: the stream of request #{f.sent.n} went on after {f.state}"

    # -- what the client sent ------------------------------------------------------------------------------
    @property
    def sends(self) -> list[Sent]:
        """The messages the client sent (SendMessage, SendStreamingMessage), in order."""
        return [s for s in self.sent if s.message is not None]

    @property
    def answers(self) -> list[Sent]:
        """The messages after the one that started the task."""
        return self.sends[1:]

    def answer_key(self, s: Sent) -> Any:
        """What an answer answers: the interactionId it names, else its content without the messageId."""
        named = interactions_v1.interaction_of(s.message)
        if named and isinstance(named.get(interactions_v1.INTERACTION_ID), str):
            return ("interaction", named[interactions_v1.INTERACTION_ID])
        return ("content", self.content_key(s))

    @staticmethod
    def content_key(s: Sent) -> str | None:
        msg = {k: v for k, v in (s.message or {}).items() if k != "messageId"}
        return canonical(msg)

    def retries(self) -> Iterator[tuple[Sent, Sent]]:
        """(an answer whose connection the replay server dropped, the same answer sent again after it)."""
        answers = self.answers
        for i, first in enumerate(answers):
            if first.dropped:
                key = self.answer_key(first)
                again = next((s for s in answers[i + 1:] if self.answer_key(s) == key), None)
                if again is not None:
                    yield first, again

    # -- evidence ----------------------------------------------------------------------------------------
    def stream_evidence(self, shown_at_most: int = 2, read_to: int | None = None) -> list[dict[str, Any]]:
        """The requests whose answers carried the task's stream (up to frame `read_to`, when given)."""
        carried = list(dict.fromkeys(f.sent.n for f in self.stream.frames if read_to is None or f.n <= read_to))
        return [self.sent[n - 1].evidence("served the task's stream") for n in carried[:shown_at_most]]

    def client_evidence(self, note: str = "") -> dict[str, Any]:
        out: dict[str, Any] = {"exchange": CLIENT, "request": "STDIO", "ended": self.how_it_ended()}
        if self.view_t is not None:
            out["t"] = round(self.view_t, 3)
        if self.view_line:
            out["data"] = quote(self.view_line)
        elif self.client.events:
            out["data"] = quote(self.client.events[-1].data)
        if note:
            out["note"] = note
        return out
