"""What `streamcert proxy` makes of the exchanges it forwarded: one frame log per task, labelled as the suite's
own driver labels what it judges, written as cassettes and judged with `streamcert check`'s code.

A proxied client plays no script, so each task's log is the `stream-basic` scenario judged as it is (the notes
`--prompt` writes: no script, no step played): what rests on a script's content is NOT_TESTED with that reason,
every frame of every stream and GetTask against the stream are judged. Labels (drivers/a2a.py):

  card                  the card the client read last before the task began (the upstream's, as it sent it)
  stream                the task's first SendStreamingMessage; later ones on the task answer_1_N
  send_N                a SendMessage
  get_task, get_task_h0, get_task_h1
                        the first GetTask after the task's streams ended with historyLength unset, 0, 1; any
                        other GetTask get_task_more_N (read during a stream, it need not match its end)
  subscribe, cancel     the first SubscribeToTask and CancelTask; more: resubscribe_N, cancel_N
  <Operation>_N         anything else (ListTasks, push configs, an unknown method)

The card goes into a cassette of its own (scenario `card`); requests that name no task and get none back go into
one `untasked` cassette (scenario `stream-basic`, without a stream), where the envelope rules judge them.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from ..contract.labels.a2a import CANCEL, CARD, GET_TASK, GET_TASK_H0, GET_TASK_H1, STREAM, SUBSCRIBE
from ..contract.run import BINDING, PROXIED
from ..drivers.a2a import task_ids, unary_task
from ..framelog import Exchange, FrameLog
from ..protocols import a2a
from ..protocols.script import NO_SCRIPT_NOTE, PLAYED_NOTE
from ..recordings.cassette import SUFFIX
from ..safe_names import confined
from ..scrub import Scrubber, header_secrets
from ..targets import Target
from ..wallclock import now

SCENARIO = "stream-basic"  # what a proxied task is judged as (without a script)


def task_of(ex: Exchange) -> str | None:
    """The task an exchange is about: the one its request names, else the one its answer shows."""
    params = ex.params
    if isinstance(params, dict):
        if ex.rpc_method in (a2a.SEND_MESSAGE, a2a.SEND_STREAMING_MESSAGE):
            message = params.get("message")
            named = message.get("taskId") if isinstance(message, dict) else None
        else:
            named = params.get("id") if ex.rpc_method in (a2a.GET_TASK, a2a.CANCEL_TASK, a2a.SUBSCRIBE_TO_TASK) \
                else params.get("taskId")
        if isinstance(named, str) and named:
            return named
    if ex.is_sse:
        return task_ids(ex)[0]
    task = unary_task(ex) if ex.status is not None else None
    tid = task.get("id") if isinstance(task, dict) else None
    return tid if isinstance(tid, str) and tid else None


class Filing:
    """The exchanges in the order they were sent, filed into one log per task."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.cards: list[Exchange] = []
        self.tasks: dict[str, FrameLog] = {}  # by binding and task id
        self.untasked = self._log()
        self._counts: dict[int, Counter] = {}

    def _log(self) -> FrameLog:
        return FrameLog(SCENARIO, target=self.upstream, started=now(),
                        notes={NO_SCRIPT_NOTE: True, PLAYED_NOTE: [], PROXIED: self.upstream})

    def add(self, ex: Exchange) -> None:
        if ex.label == CARD:
            self.cards.append(ex)
            return
        tid = task_of(ex)
        if tid is None:
            ex.label = self._next(self.untasked, ex.rpc_method or "request")
            self.untasked.add(ex)
            return
        key = f"{ex.binding} {tid}"  # a task read over two bindings: one log each, each judged for its binding
        log = self.tasks.get(key)
        if log is None:
            log = self.tasks[key] = self._log()
            card = next((c for c in reversed(self.cards) if c.t_sent <= ex.t_sent), None)
            if card is not None:
                log.add(card)
        ex.label = self._label(log, ex)
        log.notes.setdefault(BINDING, ex.binding)
        log.add(ex)

    def _next(self, log: FrameLog, stem: str) -> str:
        counts = self._counts.setdefault(id(log), Counter())
        counts[stem] += 1
        return f"{stem}_{counts[stem]}"

    def _label(self, log: FrameLog, ex: Exchange) -> str:
        op = ex.rpc_method
        if op == a2a.SEND_STREAMING_MESSAGE:
            return STREAM if log.get(STREAM) is None else self._next(log, "answer_1")
        if op == a2a.SEND_MESSAGE:
            return self._next(log, "send")
        if op == a2a.GET_TASK:
            params = ex.params if isinstance(ex.params, dict) else {}
            label = {None: GET_TASK, 0: GET_TASK_H0, 1: GET_TASK_H1}.get(_history(params), "")
            streams = log.streams()
            after = streams and all(s.t_end is not None and s.t_end <= ex.t_sent for s in streams)
            return label if label and after and log.get(label) is None else self._next(log, "get_task_more")
        if op == a2a.SUBSCRIBE_TO_TASK:
            return SUBSCRIBE if log.get(SUBSCRIBE) is None else self._next(log, "resubscribe")
        if op == a2a.CANCEL_TASK:
            return CANCEL if log.get(CANCEL) is None else self._next(log, CANCEL)
        return self._next(log, op or "request")

    def logs(self) -> list[tuple[str, FrameLog]]:
        """(cassette stem, log) of everything filed: the card, each task in order, the untasked requests."""
        out: list[tuple[str, FrameLog]] = []
        if self.cards:
            card = FrameLog("card", target=self.upstream, started=now(), notes={PROXIED: self.upstream})
            card.add(self.cards[-1])
            out.append(("card", card))
        out += [(f"task-{n:03d}", log) for n, log in enumerate(self.tasks.values(), start=1)]
        if self.untasked.exchanges:
            out.append(("untasked", self.untasked))
        return out


def _history(params: dict[str, Any]) -> Any:
    value = params.get("historyLength")
    if isinstance(value, str) and value.isdigit():  # an HTTP+JSON query parameter
        return int(value)
    return value


def scrubber_for(upstream: str, exchanges: list[Exchange], names: tuple[str, ...]) -> Scrubber:
    """The run's scrubbing (Scrubber.of), with the credentials the proxied client sent as secrets: masked by
    name where they were sent and by value wherever they are echoed."""
    base = Scrubber.of(Target(a2a_url=upstream, scrub=names))
    secrets: list[str] = []
    for ex in exchanges:
        for name, value in ex.request_headers.items():
            if base.is_credential_name(name):
                secrets += header_secrets(name, value, credential=True)
    return base.with_secrets(list(base.secrets) + secrets)


def write_and_judge(exchanges: list[Exchange], upstream: str, record: Path, report: Path,
                    scrub_names: tuple[str, ...] = (), out: TextIO | None = None) -> dict[str, Any]:
    """File the exchanges, write one cassette each into `record`, and judge them into `report` (check's code)."""
    from .offline import check_cassettes

    filing = Filing(upstream)
    for ex in sorted(exchanges, key=lambda e: e.t_sent):
        filing.add(ex)
    scrubber = scrubber_for(upstream, exchanges, scrub_names)
    paths = [log.save(confined(record, stem + SUFFIX, what="cassette name"), scrubber=scrubber)
             for stem, log in filing.logs()]
    print(f"streamcert proxy: {len(exchanges)} exchange(s), {len(filing.tasks)} task(s): "
          f"{len(paths)} cassette(s) in {record}", file=out, flush=True)
    if not paths:
        return {}
    return check_cassettes(paths, report)

