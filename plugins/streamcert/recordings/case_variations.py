"""The variations of a client case (client_cases.py lists them by kind): what is served while a case is built
(`Served`, its `Block`s, the `Stage` every variation reads and changes) and one function per variation, on the
events' JSON, on the event stream's text and cuts, or on the exchanges."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ..contract.labels.a2a import STREAM
from ..contract.labels.client import DROPPED_SUFFIX
from ..framelog import Exchange
from ..protocols.progress_v1 import URI as EXT_PROGRESS

BOM = "\ufeff".encode("utf-8")
LINE_ENDS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}
MIXED = ("\n", "\r\n", "\r")  # line_ends "mixed": each line takes the next of these in turn
SPLITS = ("events", "utf8", "lines", "bytes")


class CaseError(ValueError):
    """A client case the suite cannot build (the message names the case and what is wrong)."""


# -- what is served, while it is built -----------------------------------------------------------------

@dataclass
class Block:
    """One block of a served event stream: a data event (its JSON payload) and the field lines written before
    its data line (`id`, `event`, `retry`), or a block without data (a comment, an `id:` alone)."""

    payload: Any = None  # the data event's JSON value; None: a block without data
    fields: list[tuple[str, str]] = field(default_factory=list)  # ("id", "7"), (":", "keep-alive") for a comment
    t: float = 0.0  # when it was recorded, seconds after the request


@dataclass
class Served:
    """One recorded exchange as the case serves it."""

    base: Exchange
    label: str
    blocks: list[Block] | None = None  # an event stream; None: a plain body
    value: Any = None  # a plain JSON answer to a POST, as parsed (written again when served); None: served as recorded
    line_ends: str = "lf"
    bom: bool = False
    split: dict[str, Any] = field(default_factory=lambda: {"split": "events"})
    hold: dict[str, Any] | None = None  # {"after_frame": n, "until": [[key, count], …]}
    dropped: bool = False  # no answer: the connection is dropped at once
    unterminated: str | None = None  # the last event without its blank line: "line" (its data line ends), "none"

    def frames(self) -> list[Block]:
        return [b for b in self.blocks or [] if b.payload is not None]


@dataclass
class Stage:
    """The exchanges being built, and what applies to all of them at the end."""

    served: list[Served]
    replace: dict[str, str] = field(default_factory=dict)  # recorded id → the case's (ids)

    def exchange(self, label: str | None) -> Served:
        label = label or STREAM
        for s in self.served:
            if s.label == label:
                if s.blocks is None:
                    raise CaseError(f"exchange {label} is not an event stream")
                return s
        raise CaseError(f"no served exchange {label} (served: {', '.join(s.label for s in self.served)})")

    def streams(self, label: str | None) -> list[Served]:
        return [self.exchange(label)] if label else [s for s in self.served if s.blocks is not None]


def blocks_of(ex: Exchange) -> list[Block]:
    blocks, t0 = [], ex.t_sent
    for ev in ex.events:
        if ev.is_comment:
            blocks.append(Block(fields=[(":", ev.data)], t=ev.t - t0))
        else:
            payload, error = ev.json()
            if error:
                raise CaseError(f"{ex.label}: frame {ev.index} is not JSON ({error})")
            blocks.append(Block(payload=payload, t=ev.t - t0))
    return blocks


def _frame(s: Served, n: int) -> Block:
    frames = s.frames()
    if not 1 <= n <= len(frames):
        raise CaseError(f"{s.label} has frames 1 to {len(frames)}, not {n}")
    return frames[n - 1]


def _insert_before(s: Served, n: int, new: list[Block]) -> None:
    """Put `new` before frame n (n = frames + 1: after the last)."""
    frames = s.frames()
    if n == len(frames) + 1:
        at = len(s.blocks or [])
        t = frames[-1].t if frames else 0.0
    else:
        target = _frame(s, n)
        at = next(i for i, b in enumerate(s.blocks or []) if b is target)
        t = target.t
    for b in new:
        b.t = t
    s.blocks[at:at] = new  # type: ignore[index]


def _result(block: Block) -> tuple[str, dict[str, Any]]:
    """(kind, object) of a frame's JSON-RPC result: ("statusUpdate", {...}), ("task", {...}), …"""
    result = block.payload.get("result") if isinstance(block.payload, dict) else None
    if isinstance(result, dict) and len(result) == 1:
        kind, value = next(iter(result.items()))
        if isinstance(value, dict):
            return kind, value
    return "", {}


# -- content variations ------------------------------------------------------------------------------------

def _replace_in(value: Any, replace: dict[str, str]) -> Any:
    if isinstance(value, str):
        for old, new in replace.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [_replace_in(v, replace) for v in value]
    if isinstance(value, dict):
        return {k: _replace_in(v, replace) for k, v in value.items()}
    return value


def _values(s: Served) -> list[Any]:
    """The JSON values an exchange serves: its frames' payloads, or its plain JSON answer."""
    return [b.payload for b in s.frames()] if s.blocks is not None else [s.value] if s.value is not None else []


def _recorded_ids(stage: Stage) -> tuple[str, str]:
    """The task id and context id the base recorded (its first Task)."""
    for s in stage.served:
        for value in _values(s):
            result = value.get("result") if isinstance(value, dict) else None
            task = result.get("task", result) if isinstance(result, dict) else None
            if isinstance(task, dict) and isinstance(task.get("id"), str) and isinstance(task.get("contextId"), str):
                return task["id"], task["contextId"]
    raise CaseError("the served exchanges hold no Task: no ids to replace")


def ids(stage: Stage, v: dict[str, Any]) -> None:
    """The recorded task and context ids become `task` and `context` everywhere they stand (so a case's expected
    view survives a new recording of its base)."""
    task, context = _recorded_ids(stage)
    stage.replace.update({task: v["task"], context: v["context"]})
    for s in stage.served:
        for b in s.blocks or []:
            if b.payload is not None:
                b.payload = _replace_in(b.payload, stage.replace)
        if s.value is not None:
            s.value = _replace_in(s.value, stage.replace)


def _stamp(base: datetime, ms: float) -> str:
    return (base + timedelta(milliseconds=ms)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _status_of(payload: Any) -> tuple[dict[str, Any] | None, Any]:
    """(the status object of a Task or statusUpdate frame, or of a plain answer's Task; what makes that status
    the same one elsewhere)."""
    kind, value = _result(Block(payload=payload))
    if not kind and isinstance(payload, dict) and isinstance(payload.get("result"), dict) \
            and "status" in payload["result"] and "id" in payload["result"]:
        kind, value = "task", payload["result"]  # GetTask's answer is the Task itself
    status = value.get("status") if kind in ("task", "statusUpdate") else None
    if not isinstance(status, dict):
        return None, None
    # The same status sent on two streams (D3 open: the first stream and the answer's) is one status:
    # the same object with the same recorded timestamp; a statusUpdate's metadata (its plan) is part of it.
    metadata = value.get("metadata") if kind == "statusUpdate" else None
    return status, json.dumps([status, metadata], sort_keys=True)


def timestamps(stage: Stage, v: dict[str, Any]) -> None:
    """Every status (of Task and statusUpdate frames and of plain answers' Tasks, in the served order) stamped
    anew: `start`, then `step_ms` later for each next status, or the `stamps` listed (one per status); a status
    served twice (the same status on two streams, or in a stream and an answer) keeps one stamp.
    The reference stamps in milliseconds and its statuses often share one: this gives each its own, in the
    order they were recorded, before any variation reorders them."""
    given = list(v.get("stamps") or [])
    base = None if given else datetime.fromisoformat(v["start"].replace("Z", "+00:00")).astimezone(timezone.utc)
    stamps: dict[str, str] = {}
    for s in stage.served:
        for value in _values(s):
            status, key = _status_of(value)
            if status is None:
                continue
            if key not in stamps:
                n = len(stamps)
                if base is None and n >= len(given):
                    raise CaseError(f"timestamps: {len(given)} stamps given for more statuses")
                stamps[key] = given[n] if base is None else _stamp(base, n * float(v.get("step_ms", 1000)))
            status["timestamp"] = stamps[key]
    if base is None and len(stamps) != len(given):
        raise CaseError(f"timestamps: {len(given)} stamps given for {len(stamps)} statuses")


def plans(stage: Stage, v: dict[str, Any]) -> None:
    """Status updates (WORKING, no message) inserted before frame `before`, one per item of `updates`:
    {"timestamp", "plan": a progress/v1 object, "metadata": more metadata (optional)}."""
    s = stage.exchange(v.get("label"))
    first = s.frames()[0].payload
    kind, task = _result(s.frames()[0])
    task_id = task.get("id") if kind == "task" else task.get("taskId")
    new = []
    for item in v["updates"]:
        metadata = dict(item.get("metadata") or {})
        if "plan" in item:
            metadata[EXT_PROGRESS] = item["plan"]
        update = {"taskId": task_id, "contextId": task.get("contextId"),
                  "status": {"state": item.get("state", "TASK_STATE_WORKING"), "timestamp": item["timestamp"]},
                  "metadata": metadata}
        new.append(Block(payload={"jsonrpc": "2.0", "id": first.get("id"), "result": {"statusUpdate": update}}))
    _insert_before(s, int(v["before"]), new)


def duplicate(stage: Stage, v: dict[str, Any]) -> None:
    """A copy of frame `frame` (timestamps and all) inserted before frame `before`."""
    s = stage.exchange(v.get("label"))
    _insert_before(s, int(v["before"]), [copy.deepcopy(_frame(s, int(v["frame"])))])


def move(stage: Stage, v: dict[str, Any]) -> None:
    """Frame `frame` taken out and put before frame `before` (numbered before it is taken out)."""
    s = stage.exchange(v.get("label"))
    moved = _frame(s, int(v["frame"]))
    anchor = _frame(s, int(v["before"])) if int(v["before"]) <= len(s.frames()) else None
    s.blocks.remove(moved)  # type: ignore[union-attr]
    at = len(s.blocks) if anchor is None else next(i for i, b in enumerate(s.blocks) if b is anchor)  # type: ignore
    s.blocks.insert(at, moved)  # type: ignore[union-attr]


def _artifact_frames(s: Served, artifact_id: str) -> list[Block]:
    return [b for b in s.frames() if _result(b)[0] == "artifactUpdate"
            and _result(b)[1].get("artifact", {}).get("artifactId") == artifact_id]


def split_artifact(stage: Stage, v: dict[str, Any]) -> None:
    """Each chunk of artifact `artifact` (text parts only) cut into chunks of `size` characters: the first piece
    keeps the chunk's `append` and `name`, the next ones append; `lastChunk` stays on the last piece."""
    s = stage.exchange(v.get("label"))
    size = int(v["size"])
    for b in _artifact_frames(s, v["artifact"]):
        update = _result(b)[1]
        parts = update["artifact"].get("parts") or []
        if not parts or any(set(p) - {"text", "metadata"} for p in parts):
            raise CaseError(f"artifact {v['artifact']}: only text chunks can be split")
        text = "".join(p["text"] for p in parts)
        pieces = [text[i:i + size] for i in range(0, len(text), size)] or [""]
        new = []
        for n, piece in enumerate(pieces):
            u = copy.deepcopy(update)
            u["artifact"]["parts"] = [{"text": piece}]
            if n:
                u["append"] = True
                u["artifact"].pop("name", None)
            if n < len(pieces) - 1:
                u.pop("lastChunk", None)
            payload = dict(b.payload)
            payload["result"] = {"artifactUpdate": u}
            new.append(Block(payload=payload, t=b.t))
        at = s.blocks.index(b)  # type: ignore[union-attr]
        s.blocks[at:at + 1] = new  # type: ignore[index]


def interleave(stage: Stage, v: dict[str, Any]) -> None:
    """The chunks of the two artifacts `artifacts` [a, b] put one of each in turn (a1 b1 a2 b2 …, the rest of
    the longer at the end), in the places their chunks held; every other frame stays where it was."""
    s = stage.exchange(v.get("label"))
    a, b = (_artifact_frames(s, name) for name in v["artifacts"])
    turns = [x for pair in zip(a, b) for x in pair] + a[len(b):] + b[len(a):]
    places = sorted(s.blocks.index(x) for x in a + b)  # type: ignore[union-attr]
    for at, block in zip(places, turns):
        s.blocks[at] = block  # type: ignore[index]


def metadata(stage: Stage, v: dict[str, Any]) -> None:
    """`key`: `value` added to the metadata of every frame (the update, its status message, its artifact; the
    Task), in the exchange `label` or in every stream."""
    for s in stage.streams(v.get("label")):
        for b in s.frames():
            kind, value = _result(b)
            places = [value]
            if kind == "statusUpdate" and isinstance(value.get("status", {}).get("message"), dict):
                places.append(value["status"]["message"])
            if kind == "artifactUpdate" and isinstance(value.get("artifact"), dict):
                places.append(value["artifact"])
            for place in places:
                place.setdefault("metadata", {})[v["key"]] = copy.deepcopy(v["value"])


def _floats(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, list):
        return [_floats(x) for x in value]
    if isinstance(value, dict):
        return {k: _floats(x) for k, x in value.items()}
    return value


def floats(stage: Stage, v: dict[str, Any]) -> None:
    """Every integer in the data parts of artifact `artifact` written as a number with a fraction (11 → 11.0)."""
    for s in stage.streams(v.get("label")):
        for b in _artifact_frames(s, v["artifact"]):
            for part in _result(b)[1]["artifact"].get("parts") or []:
                if "data" in part:
                    part["data"] = _floats(part["data"])


def task_plan(stage: Stage, v: dict[str, Any]) -> None:
    """The stream's Task (its first frame) carries `plan`, a progress/v1 object, in its metadata: seed 000 has a
    Task carry the task's latest plan there. With no later plan, it is the plan a client shows, and only that
    frame carries it: a client that loses the first event shows no plan."""
    s = stage.exchange(v.get("label"))
    kind, task = _result(_frame(s, 1))
    if kind != "task":
        raise CaseError(f"task_plan: frame 1 of {s.label} is a {kind or 'frame'}, not the Task")
    task.setdefault("metadata", {})[EXT_PROGRESS] = copy.deepcopy(v["plan"])


def _set_text(kind: str, value: dict[str, Any], text: str, where: str) -> None:
    """The text parts of a status update's message, or of an artifact chunk, become the one text part `text`."""
    if kind == "statusUpdate":
        message = value.get("status", {}).get("message")
        parts = message.get("parts") if isinstance(message, dict) else None
    elif kind == "artifactUpdate":
        parts = value.get("artifact", {}).get("parts")
    else:
        raise CaseError(f"{where} is a {kind or 'frame'}, not an update")
    if not parts or any(set(p) - {"text", "metadata"} for p in parts):
        raise CaseError(f"{where} has no text (only text parts can be replaced)")
    parts[:] = [{"text": text}]


def text(stage: Stage, v: dict[str, Any]) -> None:
    """The text of frame `frame` (a status update's message, or an artifact chunk) becomes `text`, written as it
    is: JSON lets U+2028, U+2029 and U+0085 stand raw in a string, and the stream carries them so."""
    s = stage.exchange(v.get("label"))
    kind, value = _result(_frame(s, int(v["frame"])))
    _set_text(kind, value, str(v["text"]), f"text: frame {v['frame']}")


def foreign(stage: Stage, v: dict[str, Any]) -> None:
    """A copy of frame `frame` made another task's (`task`, `context`; its text `text` if given: a status
    message's or an artifact chunk's), inserted before frame `before`."""
    s = stage.exchange(v.get("label"))
    block = copy.deepcopy(_frame(s, int(v["frame"])))
    kind, value = _result(block)
    if kind not in ("statusUpdate", "artifactUpdate"):
        raise CaseError(f"foreign: frame {v['frame']} is a {kind or 'frame'}, not an update")
    value["taskId"], value["contextId"] = v["task"], v["context"]
    message = value.get("status", {}).get("message") if kind == "statusUpdate" else None
    if isinstance(message, dict):
        message["taskId"], message["contextId"] = v["task"], v["context"]
        message["messageId"] = f"{v['task']}-message"
    if "text" in v:
        _set_text(kind, value, v["text"], f"foreign: frame {v['frame']}")
    _insert_before(s, int(v["before"]), [block])


# -- the event stream's text and its cuts ----------------------------------------------------------------

def line_ends(stage: Stage, v: dict[str, Any]) -> None:
    """Every line of the streams ends in `value`: lf, crlf, cr, or mixed (LF, CRLF, CR in turn)."""
    if v["value"] not in (*LINE_ENDS, "mixed"):
        raise CaseError(f"line_ends: {v['value']!r} is not one of lf, crlf, cr, mixed")
    for s in stage.streams(v.get("label")):
        s.line_ends = v["value"]


def bom(stage: Stage, v: dict[str, Any]) -> None:
    """The stream begins with a byte order mark (EF BB BF), which an event-stream reader skips."""
    for s in stage.streams(v.get("label")):
        s.bom = True


KEEPALIVES = {"comment": lambda n, text: [(":", text)], "id": lambda n, text: [("id", f"ka-{n}")],
              "retry": lambda n, text: [("retry", "2500")], "empty-comment": lambda n, text: [(":", "")]}


def keepalives(stage: Stage, v: dict[str, Any]) -> None:
    """A block without data after every data event (and before the first when `lead`), of the `forms` in turn:
    `comment` (": keep-alive"), `empty-comment` (":"), `id` ("id: ka-N" alone: it sets the last event id and
    dispatches nothing), `retry` ("retry: 2500" alone)."""
    forms = list(v.get("forms") or ["comment"])
    text = str(v.get("text", "keep-alive"))
    for s in stage.streams(v.get("label")):
        out: list[Block] = []
        for i, b in enumerate(s.blocks or []):
            if i == 0 and v.get("lead"):
                out.append(Block(t=b.t))
            out.append(b)
            if b.payload is not None:
                out.append(Block(t=b.t))
        for n, b in enumerate(x for x in out if x.payload is None and not x.fields):
            b.fields = KEEPALIVES[forms[n % len(forms)]](n + 1, text)
        s.blocks = out


def event_ids(stage: Stage, v: dict[str, Any]) -> None:
    """Every data event gets an `id:` line (`prefix` and its number) and, with `event`, an `event:` line."""
    for s in stage.streams(v.get("label")):
        for n, b in enumerate(s.frames(), start=1):
            b.fields = [("id", f"{v.get('prefix', 'e')}{n}")] + ([("event", v["event"])] if v.get("event") else [])


def unterminated(stage: Stage, v: dict[str, Any]) -> None:
    """The stream ends inside its last event: its data line is written without the blank line that ends the
    block (with `line_end` false, without even its own line end). WHATWG HTML §9.2.6: at the end of the stream
    the pending data is discarded, so that event is never dispatched: a reader shows the stream without it."""
    s = stage.exchange(v.get("label"))
    if not s.blocks or s.blocks[-1].payload is None:
        raise CaseError(f"unterminated: the last block of {s.label} is not a data event")
    s.unterminated = "line" if v.get("line_end", True) else "none"


def rechunk(stage: Stage, v: dict[str, Any]) -> None:
    """How the body is cut into reads: `events` (one per block, as the reference writes), `utf8` (inside every
    character of more than one byte, after its first byte), `lines` (inside every line: in its field name, in
    its value, before its line end, and between the CR and LF of a CRLF), `bytes` (every `size` bytes). With
    `gap_ms`, each read comes that long after the one before (under `pace: recorded`)."""
    if v["split"] not in SPLITS:
        raise CaseError(f"rechunk: {v['split']!r} is not one of {', '.join(SPLITS)}")
    for s in stage.streams(v.get("label")):
        s.split = dict(v)


# -- the exchanges -------------------------------------------------------------------------------------------

def hold(stage: Stage, v: dict[str, Any]) -> None:
    """The frames after frame `after_frame` are written only once one of the requests `until` ([[request key,
    count], …], recordings/replay.py) has come: the stream stays open at an interrupted state, and goes on after the
    answer (conflict D3, "open")."""
    s = stage.exchange(v.get("label"))
    _frame(s, int(v["after_frame"]))
    s.hold = {"after_frame": int(v["after_frame"]), "until": [[str(k), int(n)] for k, n in v["until"]]}


def drop(stage: Stage, v: dict[str, Any]) -> None:
    """Before exchange `before` (an answer), one more of the same request whose connection is dropped at once,
    with no answer: the client must send it again (seed 004: the same messageId)."""
    at = next((i for i, s in enumerate(stage.served) if s.label == v["before"]), None)
    if at is None:
        raise CaseError(f"drop: no served exchange {v['before']}")
    base = stage.served[at].base
    stage.served.insert(at, Served(base=base, label=f"{v['before']}{DROPPED_SUFFIX}", dropped=True))


VARIATIONS: dict[str, Callable[[Stage, dict[str, Any]], None]] = {
    fn.__name__: fn for fn in (ids, timestamps, plans, task_plan, duplicate, move, split_artifact, interleave,
                               metadata, floats, text, foreign, line_ends, bom, keepalives, event_ids, unterminated,
                               rechunk, hold, drop)
}
