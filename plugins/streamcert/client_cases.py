"""Client cases (cases/client/*.json, docs/clients.md): a reference recording, varied, as the replay serves it.

A case names its base (`cassettes/reference/<base>.yaml`), the recorded exchanges it serves (`serve`, by
label, in order) and its variations. `build(case)` loads the base, keeps those exchanges and applies the
variations in the order listed; what comes out is a frame log the replay server serves (replay.py) and
nothing of the base is changed. The variations are data, listed by kind in `VARIATIONS`:

  content (on the events' JSON)   ids, timestamps, plans, task_plan, duplicate, move, split_artifact,
                                  interleave, metadata, floats, text, foreign
  the event stream's text         line_ends, bom, keepalives, event_ids, unterminated
  how the bytes are cut           rechunk
  the exchanges                   hold, drop

Frames are numbered from 1 among an exchange's data events (comments not counted), as docs/rules.md numbers
them, at the moment a variation applies (after the variations before it). `describe` is the one-line view of
each served block that a case file lists under `served`, so that its `expected` view can be checked by
reading: tests/e2e/test_client_cases.py keeps the two in step.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import cassette
from .contract.client import CLIENT_CASE, HELD_OPEN, HOLD, SERVED_FROM, UNTERMINATED
from .contract.labels.a2a import CARD, STREAM
from .contract.labels.client import DROPPED_SUFFIX
from .framelog import END_CLOSED, END_ERROR, Chunk, Exchange, FrameLog, budgeted
from .protocols import a2a
from .protocols.bindings import jsonrpc_paths
from .protocols.interactions_v1 import URI as EXT_INTERACTIONS
from .protocols.progress_v1 import URI as EXT_PROGRESS
from .replay import substituted
from .wire.sse import SSEParser

BOM = "\ufeff".encode("utf-8")
LINE_ENDS = {"lf": "\n", "crlf": "\r\n", "cr": "\r"}
MIXED = ("\n", "\r\n", "\r")  # line_ends "mixed": each line takes the next of these in turn
SPLITS = ("events", "utf8", "lines", "bytes")
DEFAULT_SERVE = (CARD, STREAM)


class CaseError(ValueError):
    """A client case the suite cannot build (the message names the case and what is wrong)."""


def reference_dir() -> Path:
    return Path(str(resources.files("streamcert.cassettes") / "reference"))


def cases_dir() -> Path:
    return Path(str(resources.files("streamcert.cases") / "client"))


def load_case(case_id: str) -> dict[str, Any]:
    """A case file as it is written (cases/client/<id>.json), read without the catalogue."""
    return json.loads((cases_dir() / f"{case_id}.json").read_text("utf-8"))


def case_ids() -> list[str]:
    return sorted(p.stem for p in cases_dir().glob("client-*.json"))


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


def _blocks(ex: Exchange) -> list[Block]:
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
    count], …], replay.py) has come: the stream stays open at an interrupted state, and goes on after the
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


# -- building -----------------------------------------------------------------------------------------------

def build(case: dict[str, Any], folder: str | Path | None = None) -> FrameLog:
    """The frame log the replay serves for `case`: the base's exchanges named in `serve`, varied. The base is
    read from `folder` (default: the shipped reference recordings) and left as it is."""
    folder = Path(folder) if folder is not None else reference_dir()
    path = folder / f"{case['base']}{cassette.SUFFIX}"
    if not path.is_file():
        raise CaseError(f"case {case.get('id')}: no base recording {path}")
    base = cassette.load(path)
    stage = Stage(served=[])
    for label in case.get("serve") or DEFAULT_SERVE:
        ex = base.get(label)
        if ex is None:
            raise CaseError(f"case {case.get('id')}: {case['base']} has no exchange {label} "
                            f"({', '.join(e.label for e in base.exchanges)})")
        value = ex.json()[0] if not ex.is_sse and ex.method == "POST" and not ex.unjudged else None
        stage.served.append(Served(base=ex, label=label, blocks=_blocks(ex) if ex.is_sse else None, value=value))
    for n, v in enumerate(case.get("variations") or [], start=1):
        fn = VARIATIONS.get(v.get("kind"))
        if fn is None:
            raise CaseError(f"case {case.get('id')}: variation {n} has kind {v.get('kind')!r}; known: "
                            f"{', '.join(VARIATIONS)}")
        try:
            fn(stage, v)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise CaseError(f"case {case.get('id')}: variation {n} ({v.get('kind')}): "
                            f"{type(exc).__name__}: {exc}") from None
    log = FrameLog(scenario=base.scenario, target=base.target, notes={CLIENT_CASE: case.get("id")})
    for s in stage.served:
        log.add(_render(s, stage.replace))
    return log


def _text(s: Served) -> tuple[bytes, list[int], int | None]:
    """The stream's bytes, where each block starts, and where the first held block starts (None: no hold)."""
    ends = iter(MIXED) if s.line_ends == "mixed" else None
    out, starts, held = [BOM] if s.bom else [], [], None
    size = len(BOM) if s.bom else 0
    frames = 0

    last = ""

    def eol(line: str) -> str:
        nonlocal ends, last
        if ends is None:
            return LINE_ENDS[s.line_ends]
        while True:
            end = next(ends, None)
            if end is None:
                ends = iter(MIXED)
                continue
            # A CR then an empty line ended by LF would read as one CRLF: the blank line would be lost.
            if not (last == "\r" and not line and end == "\n"):
                last = end
                return end

    blocks = s.blocks or []
    if s.unterminated and (not blocks or blocks[-1].payload is None):
        raise CaseError(f"unterminated: the last block of {s.label} is not a data event (a variation after it added one)")
    for n, b in enumerate(blocks):
        lines = [f":{text}" if name == ":" and (not text or text[0] == " ") else
                 f": {text}" if name == ":" else f"{name}: {text}" for name, text in b.fields]
        if b.payload is not None:
            lines.append("data: " + json.dumps(b.payload, ensure_ascii=False, separators=(",", ":")))
        if s.unterminated and n == len(blocks) - 1:  # the stream ends inside this event: no blank line
            text = "".join(line + eol(line) for line in lines[:-1]) + lines[-1] + \
                (eol(lines[-1]) if s.unterminated == "line" else "")
        else:
            text = "".join(line + eol(line) for line in lines) + eol("")
        if s.hold is not None and held is None and frames == s.hold["after_frame"]:
            held = size
        starts.append(size)
        frames += b.payload is not None
        data = text.encode("utf-8")
        out.append(data)
        size += len(data)
    return b"".join(out), starts, held


def _cuts(body: bytes, starts: list[int], split: dict[str, Any]) -> list[int]:
    how = split.get("split", "events")
    if how == "events":
        return sorted({0, *starts}) if body else []
    cuts: set[int] = set()
    if how == "bytes":
        cuts = set(range(0, len(body), max(1, int(split.get("size", 1)))))
    elif how == "utf8":
        cuts = {i + 1 for i, byte in enumerate(body) if byte >= 0xC0}  # after the lead byte of each character
    elif how == "lines":
        at = 0
        while at < len(body):
            end = at
            while end < len(body) and body[end] not in b"\r\n":
                end += 1
            width = 2 if body[end:end + 2] == b"\r\n" else 1
            if end > at:
                cuts |= {at + min(2, end - at), at + (end - at) // 2, end}  # field name, value, before the end
            if width == 2:
                cuts.add(end + 1)  # between CR and LF
            at = end + width
    return sorted(c for c in cuts | {0} if 0 <= c < len(body))


def served_url(url: str, method: str) -> str:
    """Where the replay serves a recorded exchange: the agent card at the origin's
    /.well-known/agent-card.json whatever path the recording found it under (STREAMCERT_URL is an origin,
    docs/clients.md), everything else where it was recorded."""
    parts = urlsplit(url)
    if method == "GET" and parts.path.endswith(a2a.CARD_PATH):
        return f"{parts.scheme}://{parts.netloc}{a2a.CARD_PATH}"
    return url


def _render(s: Served, replace: dict[str, str]) -> Exchange:
    base = s.base
    ex = Exchange(label=s.label, method=base.method, url=served_url(base.url, base.method), rpc_method=base.rpc_method,
                  request_headers=dict(base.request_headers), request_body=copy.deepcopy(base.request_body),
                  status=base.status, response_headers=dict(base.response_headers), t_sent=0.0,
                  t_headers=0.0, end=base.end, notes={SERVED_FROM: base.label})
    if s.dropped:
        ex.status, ex.response_headers, ex.t_headers, ex.end = None, {}, None, END_ERROR
        ex.t_end = 0.0
        return ex
    if s.value is not None:
        t = base.chunks[0].t - base.t_sent if base.chunks else 0.0
        ex.chunks = [Chunk(t, json.dumps(s.value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))]
        ex.t_end = t
        ex.response_headers.pop("content-length", None)
        return ex
    if s.blocks is None:
        chunks = [c.data for c in base.chunks]
        body = b"".join(chunks)
        spans = sorted((m, m + len(old.encode()), new.encode()) for old, new in replace.items()
                       for m in _find_all(body, old.encode()))
        t0 = base.t_sent
        ex.chunks = [Chunk(c.t - t0, data) for c, data in zip(base.chunks, substituted(chunks, spans))]
        ex.t_headers = None if base.t_headers is None else base.t_headers - t0
        ex.t_end = None if base.t_end is None else base.t_end - t0
        return ex
    body, starts, held = _text(s)
    cuts = _cuts(body, starts, s.split)
    if held is not None and held < len(body):
        cuts = sorted(set(cuts) | {held})
    gap = float(s.split.get("gap_ms", 0)) / 1000
    block_t = [b.t for b in s.blocks or []]
    chunks = []
    for n, (start, end) in enumerate(zip(cuts, [*cuts[1:], len(body)])):
        if gap:
            t = (block_t[0] if block_t else 0.0) + n * gap
        else:  # the time of the block the read starts in
            t = block_t[max(0, sum(1 for st in starts if st <= start) - 1)] if block_t else 0.0
        chunks.append(Chunk(t, body[start:end]))
    ex.chunks = chunks
    ex.t_end = chunks[-1].t if chunks else 0.0
    parser = SSEParser()
    events = []
    for c in chunks:
        events += parser.feed(c.data, c.t)
    events += parser.finish(ex.t_end)
    ex.events = budgeted(events)
    if parser.discarded is not None:
        ex.notes[UNTERMINATED] = parser.discarded  # the block the stream ended inside: no reader dispatches it
    ex.response_headers.pop("content-length", None)
    if held is not None:
        ex.notes[HOLD] = {"chunk": cuts.index(held), "until": s.hold["until"]}  # type: ignore[index]
    if base.end != END_CLOSED:
        ex.notes[HELD_OPEN] = base.end  # the recording's stream was left open: the replay keeps it open
    return ex


def _find_all(body: bytes, needle: bytes) -> Iterator[int]:
    at = body.find(needle)
    while needle and at >= 0:
        yield at
        at = body.find(needle, at + len(needle))


def served_card(log: FrameLog) -> Any:
    """The agent card the case serves (its JSON value; None: no card)."""
    return next((ex.json()[0] for ex in log.exchanges if ex.method == "GET" and
                 urlsplit(ex.url).path == a2a.CARD_PATH), None)


def interface_paths(log: FrameLog) -> set[str]:
    """The paths of the JSONRPC interfaces the served card declares: the only ones the replay answers at."""
    return jsonrpc_paths(served_card(log))


def card_streaming(log: FrameLog) -> bool | None:
    """What the served card says of `capabilities.streaming` (None: no card, or it says nothing)."""
    card = served_card(log)
    caps = card.get("capabilities") if isinstance(card, dict) else None
    value = caps.get("streaming") if isinstance(caps, dict) else None
    return value if isinstance(value, bool) else None


def stream_time(log: FrameLog, pace: str) -> float:
    """Seconds the served answers take under `pace` (recorded: each answer's last read; fast: none)."""
    if pace == "fast":
        return 0.0
    return sum(ex.t_end or 0.0 for ex in log.exchanges)


# -- the one-line view of each served block (a case's `served`) -------------------------------------------

def describe(log: FrameLog) -> dict[str, list[str]]:
    """Each served event stream, one line per block as a reader of the stream sees it (its data parsed), and
    one line for each other exchange: what a case file lists under `served`."""
    out: dict[str, list[str]] = {}
    for ex in log.exchanges:
        if ex.status is None:
            out[ex.label] = [f"{ex.rpc_method or ex.method}: the connection dropped, no answer"]
        elif not ex.is_sse:
            out[ex.label] = [_describe_body(ex)]
        else:
            task = None
            lines = []
            for ev in ex.events:
                if ev.is_comment:
                    lines.append(f":{ev.data}")
                    continue
                line, task = _describe_frame(ev.payload, task)
                lines.append(line + (f" [id {ev.last_event_id}]" if ev.last_event_id else ""))
            if ex.notes.get(HOLD):
                lines.insert(_held_line(ex), "(held until: " + ", ".join(
                    f"{key.split(' ', 1)[1]} #{n}" for key, n in ex.notes[HOLD]["until"]) + ")")
            if isinstance(ex.notes.get(UNTERMINATED), str):
                lines.append(_describe_unterminated(ex.notes[UNTERMINATED], task))
            out[ex.label] = lines
    return out


def _describe_unterminated(text: str, task: str | None) -> str:
    """The line of a block the stream ended inside: not an event, so marked as never dispatched."""
    data = "\n".join(line[len("data:"):].removeprefix(" ") for line in text.split("\n") if line.startswith("data:"))
    try:
        line = _describe_frame(json.loads(data), task)[0]
    except ValueError:
        line = json.dumps(text, ensure_ascii=False)[:200]
    return f"(the stream ends inside this event, never dispatched) {line}"


def _held_line(ex: Exchange) -> int:
    chunk = ex.notes[HOLD]["chunk"]
    held_at = sum(c.length for c in ex.chunks[:chunk])
    parser, n = SSEParser(), 0
    body = ex.wire_bytes[:held_at]
    n = len(parser.feed(body, 0.0))
    return n


def _describe_body(ex: Exchange) -> str:
    value = ex.json()[0]
    if ex.method == "GET":
        caps = value.get("capabilities", {}) if isinstance(value, dict) else {}
        return f"card: streaming {json.dumps(caps.get('streaming'))}"
    result = value.get("result") if isinstance(value, dict) else None
    if isinstance(value, dict) and "error" in value:
        return f"{ex.rpc_method}: error {value['error'].get('code')} {json.dumps(value['error'].get('message'))}"
    if isinstance(result, dict) and isinstance(result.get("task"), dict):
        return f"{ex.rpc_method}: " + _describe_task(result["task"])
    return f"{ex.rpc_method}: {json.dumps(value, ensure_ascii=False)[:200]}"


def _text_of(message: Any) -> str | None:
    if not isinstance(message, dict):
        return None
    return "".join(p.get("text", "") for p in message.get("parts") or [] if isinstance(p, dict))


def _describe_task(task: dict[str, Any]) -> str:
    status = task.get("status") or {}
    line = f"task {task.get('id')} {status.get('state')} {status.get('timestamp')}"
    if _text_of(status.get("message")) is not None:
        line += f" {json.dumps(_text_of(status.get('message')), ensure_ascii=False)}"
    for art in task.get("artifacts") or []:
        line += f" artifact {art.get('artifactId')}"
    metadata = task.get("metadata") or {}
    if EXT_PROGRESS in metadata:
        line += " " + _describe_plan(metadata[EXT_PROGRESS])
    return line


def _describe_plan(plan: Any) -> str:
    if not isinstance(plan, dict) or not isinstance(plan.get("steps"), list):
        return f"plan {json.dumps(plan, ensure_ascii=False)}"
    steps = []
    for step in plan["steps"]:
        if not isinstance(step, dict):
            steps.append(json.dumps(step))
            continue
        s = f"{step.get('label')}={step.get('state')}"
        if step.get("note") is not None:
            s += f" ({step['note']})"
        extra = sorted(set(step) - {"label", "state", "note"})
        if extra:
            s += " +" + ",".join(extra)
        steps.append(s)
    extra = sorted(set(plan) - {"steps"})
    return "plan [" + "; ".join(steps) + "]" + (" +" + ",".join(extra) if extra else "")


def _describe_frame(payload: Any, task: str | None) -> tuple[str, str | None]:
    result = payload.get("result") if isinstance(payload, dict) else None
    if not isinstance(result, dict) or len(result) != 1:
        return f"frame {json.dumps(payload, ensure_ascii=False)[:200]}", task
    kind, value = next(iter(result.items()))
    if kind == "task":
        return _describe_task(value), value.get("id")
    other = "" if value.get("taskId") == task else f" (task {value.get('taskId')}, context {value.get('contextId')})"
    metadata = value.get("metadata") or {}
    unknown = sorted(k for k in metadata if k not in (EXT_PROGRESS,))
    if kind == "statusUpdate":
        status = value.get("status") or {}
        line = f"status {status.get('state')} {status.get('timestamp')}"
        text = _text_of(status.get("message"))
        if text is not None:
            line += f" {json.dumps(text, ensure_ascii=False)}"
        ix = ((status.get("message") or {}).get("metadata") or {}).get(EXT_INTERACTIONS)
        if isinstance(ix, dict):
            line += f" interaction {ix.get('kind')} {json.dumps(ix.get('prompt'), ensure_ascii=False)}"
        if EXT_PROGRESS in metadata:
            line += " " + _describe_plan(metadata[EXT_PROGRESS])
    elif kind == "artifactUpdate":
        art = value.get("artifact") or {}
        line = f"artifact {art.get('artifactId')}"
        if art.get("name"):
            line += f" name {art['name']}"
        line += "".join(f" {flag}" for flag in ("append", "lastChunk") if value.get(flag))
        for part in art.get("parts") or []:
            if "text" in part:
                line += f" text {json.dumps(part['text'], ensure_ascii=False)}"
            elif "data" in part:
                line += f" data {json.dumps(part['data'], ensure_ascii=False)}"
    else:
        line = f"{kind} {json.dumps(value, ensure_ascii=False)[:200]}"
    if unknown:
        line += " +metadata " + ",".join(unknown)
    return line + other, task
