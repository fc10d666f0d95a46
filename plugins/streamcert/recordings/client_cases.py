"""Client cases (cases/client/*.json, docs/clients.md): a reference recording, varied, as the replay serves it.

A case names its base (`cassettes/reference/<base>.yaml`), the recorded exchanges it serves (`serve`, by
label, in order) and its variations. `build(case)` loads the base, keeps those exchanges and applies the
variations in the order listed; what comes out is a frame log the replay server serves (recordings/replay.py) and
nothing of the base is changed. The variations are data, listed by kind in `VARIATIONS` (case_variations.py, with
one function each):

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
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..contract.client import CLIENT_CASE, HELD_OPEN, HOLD, SERVED_FROM, UNTERMINATED
from ..contract.labels.a2a import CARD, STREAM
from ..framelog import END_CLOSED, END_ERROR, Chunk, Exchange, FrameLog, budgeted
from ..protocols import a2a
from ..protocols.bindings import jsonrpc_paths
from ..protocols.interactions_v1 import URI as EXT_INTERACTIONS
from ..protocols.progress_v1 import URI as EXT_PROGRESS
from ..wire.sse import SSEParser
from . import cassette
from .case_variations import BOM, LINE_ENDS, MIXED, VARIATIONS, CaseError, Served, Stage, blocks_of
from .replay_answers import substituted

DEFAULT_SERVE = (CARD, STREAM)


def reference_dir() -> Path:
    return Path(str(resources.files("streamcert.cassettes") / "reference"))


def cases_dir() -> Path:
    return Path(str(resources.files("streamcert.cases") / "client"))


def load_case(case_id: str) -> dict[str, Any]:
    """A case file as it is written (cases/client/<id>.json), read without the catalogue."""
    return json.loads((cases_dir() / f"{case_id}.json").read_text("utf-8"))


def case_ids() -> list[str]:
    return sorted(p.stem for p in cases_dir().glob("client-*.json"))


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
        stage.served.append(Served(base=ex, label=label, blocks=blocks_of(ex) if ex.is_sse else None, value=value))
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
