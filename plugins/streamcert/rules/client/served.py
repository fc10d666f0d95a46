"""What a client under test sent to the replay server and what it was answered, and the stream as served: its
frames, the task and context each belongs to, and what only a block the stream ended inside carried."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit

from ...contract.capture import SERVED_END
from ...contract.labels.client import SENT
from ...framelog import (
    END_ERROR,
    END_RESET,
    Exchange,
    read_json,
)
from ...protocols import a2a, interactions_v1, progress_v1
from ...wire.sse import SSEParser
from .. import ex_evidence
from ..plans.planview import plan_of, steps_of, timestamp
from .printed import same, text_of

SEND_METHODS = (a2a.SEND_MESSAGE, a2a.SEND_STREAMING_MESSAGE)
DROPPED = {END_RESET, END_ERROR, "dropped"}  # how a served answer ended when the connection was cut
ID_KEYS = ("id", "taskId", "contextId", "messageId", "artifactId", "interactionId")
WALK_BUDGET = 200_000  # values looked at when collecting the ids an answer holds
STEP_FIELDS = ("label", "state", "note")


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


def method_of(ex: Exchange) -> str:
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
