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

The reading is in four modules: printed.py (the final view on stdout, JSON values, a crash's error line),
served.py (what the client sent and was answered, the stream as served), compare.py (the view against the
expected one, each difference tagged) and this one (the run: `ClientRun`, which the rules read).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterator
from urllib.parse import urlsplit

from ... import limits
from ...contract.capture import ANSWERED_BY, EXITED_AFTER, LIMIT, REFUSED, STDERR
from ...contract.client import CASE_ERROR, CLIENT_CASE, RETURNCODE, SERVED_AS, STDERR_TAIL, STREAM_CLOSED_AT
from ...contract.labels.client import CLIENT, SENT, SERVED
from ...framelog import (
    END_CLIENT_STOP,
    END_ERROR,
    END_TIME_LIMIT,
    Exchange,
    FrameLog,
)
from ...protocols import a2a, interactions_v1
from ...wire.stdio import how_it_ended
from .. import RuleContext, Unjudgeable, quote
from .compare import Compared, ViewComparison
from .printed import SHOWN_LIMIT, canonical, error_line, final_view
from .served import Sent, Stream, answered_results, method_of

# Limits of time: a client cut at one of these did not finish (it hung); a size cap is another story.
TIME_CAPS = {limits.EXCHANGE.field, limits.STREAM.field, limits.START.field, limits.RUN.field, limits.IDLE.field}


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
        sent = [Sent(n, ex, method_of(ex), served.get(ex.notes.get(ANSWERED_BY))) for n, ex in
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
