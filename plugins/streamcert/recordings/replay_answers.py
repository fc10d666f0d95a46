"""Which recorded answer the replay server gives a request, and that answer as bytes (replay.py says how a
request is matched): the recordings of one scenario (`Recording`), the key a request is counted under, the
scenario a request names, and the recorded bytes with the request's JSON-RPC id and the server's own origin
substituted."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..contract.capture import NOT_SENT
from ..contract.run import BINDING
from ..framelog import Exchange, FrameLog
from ..protocols.script import SCRIPT_KEY

PACES = ("recorded", "fast")
ID_KEYS = ("id", "taskId", "contextId")


@dataclass
class Recording:
    """The answers of one scenario's cassette, by what asks for them."""

    scenario: str
    path: Path
    log: FrameLog
    answers: dict[str, list[Exchange]] = field(default_factory=dict)  # "rpc GetTask" | "POST /p" | "GET /p"
    ids: set[str] = field(default_factory=set)  # task and context ids its answers hold

    @classmethod
    def of(cls, path: Path | FrameLog, max_bytes: int | None = None) -> Recording:
        """The recording of a cassette file (one larger than `max_bytes`, default limits.MAX_CASSETTE, refused
        before it is read), or of a frame log already in memory (a client case's stream)."""
        log = path if isinstance(path, FrameLog) else FrameLog.load(path, max_bytes)
        binding = log.notes.get(BINDING, "jsonrpc")
        if binding != "jsonrpc":  # served here as JSON-RPC over HTTP/1.1; judged offline by `streamcert check`
            raise ValueError(f"{path if not isinstance(path, FrameLog) else log.scenario} was recorded over "
                             f"{binding}: replay serves JSON-RPC recordings (judge this one with streamcert check)")
        rec = cls(log.scenario, Path(f"<{log.scenario}>") if isinstance(path, FrameLog) else path, log)
        for ex in log.exchanges:
            if ex.method == "STDIO" or ex.notes.get(NOT_SENT) or ex.binding != "jsonrpc":
                continue  # never reached an HTTP server (or the card's probe of another binding): nothing to answer
            rec.answers.setdefault(request_key(ex.method, urlsplit(ex.url).path, ex.rpc_method), []).append(ex)
            for value in _answer_values(ex):
                rec.ids.update(_ids(value))
        return rec

    def order(self) -> str:
        return ", ".join(key.split(" ", 1)[1] for key in (request_key(ex.method, urlsplit(ex.url).path, ex.rpc_method)
                                                          for ex in self.log.exchanges if ex.method != "STDIO"))


def request_key(method: str, path: str, rpc_method: str | None) -> str:
    if method == "POST" and rpc_method:
        return f"rpc {rpc_method}"
    return f"{method} {path}"


def key_of(method: str, path: str, body: Any) -> str:
    """The request_key of a request as it arrived (its JSON-RPC method read from its body)."""
    rpc = body.get("method") if method == "POST" and isinstance(body, dict) and "jsonrpc" in body else None
    return request_key(method, path, rpc if isinstance(rpc, str) else None)


def _answer_values(ex: Exchange) -> Iterable[Any]:
    if ex.is_sse:
        for ev in ex.data_events():
            yield ev.payload
    else:
        yield ex.json()[0]


def _ids(value: Any, depth: int = 0) -> set[str]:
    """The task and context ids in a JSON value (a recorded answer, or a request's params)."""
    found: set[str] = set()
    if depth > 12:
        return found
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ID_KEYS and isinstance(item, str) and item:
                found.add(item)
            elif isinstance(item, (dict, list)):
                found |= _ids(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            found |= _ids(item, depth + 1)
    return found


def script_name(body: Any) -> str | None:
    """The scenario a request's script metadata names (A2A message metadata, or a progress request's body)."""
    if not isinstance(body, dict):
        return None
    places = [body]
    params = body.get("params")
    if isinstance(params, dict):
        message = params.get("message")
        if isinstance(message, dict) and isinstance(message.get("metadata"), dict):
            places.insert(0, message["metadata"])
    for place in places:
        script = place.get(SCRIPT_KEY)
        if isinstance(script, dict) and isinstance(script.get("name"), str):
            return script["name"]
    return None


class Replayer:
    """Which recorded answer a request gets (thread-safe: counts per scenario and method)."""

    def __init__(self, paths: Iterable[str | Path | FrameLog], scenario: str | None = None,
                 pace: str = "recorded", max_bytes: int | None = None) -> None:
        if pace not in PACES:
            raise ValueError(f"--pace must be one of {', '.join(PACES)}")
        self.recordings: dict[str, Recording] = {}
        for path in paths:
            rec = Recording.of(path if isinstance(path, FrameLog) else Path(path), max_bytes)
            if rec.scenario in self.recordings:
                raise ValueError(f"{path} and {self.recordings[rec.scenario].path} are both of scenario {rec.scenario}")
            self.recordings[rec.scenario] = rec
        if not self.recordings:
            raise ValueError("no cassette to serve")
        if scenario is not None and scenario not in self.recordings:
            raise ValueError(f"--scenario {scenario}: not among the cassettes served ({', '.join(self.recordings)})")
        self.scenario = scenario
        self.pace = pace
        self._served: dict[tuple[str, str], int] = {}
        self.arrived: dict[str, int] = {}  # requests received, by request_key (matched or not)
        self._lock = threading.Lock()

    def which(self, body: Any) -> tuple[Recording | None, str]:
        """The recording a request is for, and how it was chosen (or why none could be)."""
        named = script_name(body)
        if named is not None:
            if named in self.recordings:
                return self.recordings[named], f"its script names {named}"
            return None, f"its script names scenario {named!r}, which no cassette served holds " \
                         f"({', '.join(self.recordings)})"
        asked = _ids(body.get("params")) if isinstance(body, dict) else set()
        holders = [rec for rec in self.recordings.values() if asked & rec.ids]
        if len(holders) == 1:
            return holders[0], "its task id is one of that cassette's"
        if self.scenario is not None:
            return self.recordings[self.scenario], "--scenario"
        if len(self.recordings) == 1:
            return next(iter(self.recordings.values())), "the only cassette served"
        return None, (f"several cassettes are served ({', '.join(self.recordings)}) and the request names no "
                      f"scenario in its script metadata ({SCRIPT_KEY}) nor a task id one of them recorded; "
                      f"give --scenario")

    def answer(self, method: str, path: str, body: Any) -> tuple[Exchange | None, str]:
        """The recorded answer for a request, or (None, the sentence saying what was expected)."""
        key = key_of(method, path, body)
        with self._lock:
            self.arrived[key] = self.arrived.get(key, 0) + 1
        if method == "GET":
            for rec in self._for_get():
                if rec.answers.get(key):
                    return rec.answers[key][0], ""
            return None, f"no cassette served recorded a GET of {path}"
        rec, why = self.which(body)
        if rec is None:
            return None, why
        answers = rec.answers.get(key, [])
        with self._lock:
            n = self._served.get((rec.scenario, key), 0)
            if n < len(answers):
                self._served[(rec.scenario, key)] = n + 1
                return answers[n], ""
        what = key.split(" ", 1)[1]
        return None, (f"streamcert replay: no recorded answer for {what} #{n + 1} in scenario {rec.scenario} (chosen: "
                      f"{why}); its cassette {rec.path} holds {len(answers)} {what} answer(s); its requests in order: "
                      f"{rec.order()}")

    def _for_get(self) -> list[Recording]:
        first = [self.recordings[self.scenario]] if self.scenario else []
        return first + [r for r in self.recordings.values() if r not in first]


# -- the answer as bytes ---------------------------------------------------------------------------

def substituted(chunks: list[bytes], subs: list[tuple[int, int, bytes]]) -> list[bytes]:
    """The chunks of a body with the spans `subs` (start, end, replacement; sorted, apart) replaced, cut where
    the recorded chunks were cut (a cut inside a replaced span moves to its end)."""
    if not subs:
        return chunks
    body = b"".join(chunks)
    out, at = [], 0
    for s, e, rep in subs:
        out += [body[at:s], rep]
        at = e
    out.append(body[at:])
    new = b"".join(out)

    def moved(p: int) -> int:
        shift = 0
        for s, e, rep in subs:
            if e <= p:
                shift += len(rep) - (e - s)
            elif s < p:
                return e + shift + len(rep) - (e - s)
        return p + shift

    cuts, total = [], 0
    for c in chunks:
        total += len(c)
        cuts.append(moved(total))
    pieces, prev = [], 0
    for cut in cuts:
        pieces.append(new[prev:cut])
        prev = max(prev, cut)
    return pieces


def id_spans(body: bytes, recorded: Any, sent: Any) -> list[tuple[int, int, bytes]]:
    """Where the recorded JSON-RPC id stands as an `"id":` member of the body, to become the request's."""
    if recorded is None or recorded == sent or isinstance(recorded, (dict, list, bool)):
        return []
    pattern = re.compile(rb'("id"\s*:\s*)' + re.escape(json.dumps(recorded).encode()) + rb"(?=\s*[,}])")
    value = json.dumps(sent, ensure_ascii=False).encode("utf-8")
    return [(m.start(0) + len(m.group(1)), m.end(0), value) for m in pattern.finditer(body)]


def origin_spans(body: bytes, recorded_url: str, here: str) -> list[tuple[int, int, bytes]]:
    """Where the recorded server's origin stands in the body (the card's interface URLs), to point here."""
    parts = urlsplit(recorded_url)
    if not parts.netloc:
        return []
    origin = f"{parts.scheme}://{parts.netloc}".encode()
    return [(m.start(), m.end(), here.encode()) for m in re.finditer(re.escape(origin), body)]
