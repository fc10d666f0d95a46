"""Cassettes in vcrpy's format: one YAML file per scenario that plain vcrpy and pytest-recording load.

A cassette is vcrpy's document (`version`, `interactions` of request/response, `metadata`), written with
vcrpy's own `vcr.serialize.serialize` and read with vcrpy's YAML loader. What vcrpy has no place for
rides in keys it keeps as they are (docs/cassettes.md):

- a top-level `streamcert` key: the scenario, its script, the driver's notes, the target, the start (not
  vcrpy's own `metadata`, which pytest-recording 0.14 cannot load: it expects two lists from vcrpy);
- `response.streamcert`: the exchange's label and JSON-RPC method, when the request went out (`sent_ms`,
  from the start of the capture) and, in ms after it, when the headers came (`headers_ms`) and the answer
  ended (`end_ms`), how it ended (`end`, `error`), how the body arrived (`chunks`: [ms after the request,
  bytes] per read, in order, adding up to the body), the frames (`frames`: `{t: ms, data: …}`, `comment`,
  `event`, `id`, `retry` where the frame had them), the unterminated last block (`discarded`) and the
  capture's notes (`notes`, see docs/rules.md).

The body (`response.body.string`) is the body as the socket gave it: text where it is UTF-8, else bytes
(YAML `!!binary`). An answer that never came (refused, not sent) and a program on stdio have status 0 (and
`streamcert.status`: null, or the program's exit status).

Memory: a response of more than `STREAMED` bytes is never held whole. Its body and frames go into the
document as placeholders, and the writer streams them into the file in place of those (the body read
back from the spool, chunk by chunk, scrubbed as one body; each frame's text in slices), so recording a
stream near its size cap costs what the live log already holds, not two or three copies of it.
"""

from __future__ import annotations

import base64
import codecs
import json
import os
import re
import secrets
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import yaml
from vcr.request import Request as VcrRequest
from vcr.serialize import serialize as vcr_serialize
from vcr.serializers import yamlserializer

from ..framelog import Chunk, Event, Exchange, FrameLog, Spool, budgeted, read_json
from ..limits import MAX_CASSETTE, SPOOL_AFTER
from ..safe_names import confined

if TYPE_CHECKING:
    from ..scrub import Scrubber

FORMAT = 2  # metadata.streamcert.format; 1 is the suite's older JSON form (FrameLog.to_json), still read
SUFFIX = ".yaml"  # what --record names a cassette: <scenario>.yaml (pytest-recording's default too)
EXTRA = "streamcert"  # the key of the suite's own facts, in the metadata and in each response
NO_STATUS = 0  # the status of an answer that never came, and of a program on stdio

STREAMED = 1024 * 1024  # a response larger than this is streamed into the file, never held whole
_SLICE = 16 * 1024  # characters of a streamed scalar per line of the file


class CassetteError(ValueError):
    """A file that is not a cassette the suite reads (the message names the file and why)."""


# -- the YAML serializer handed to vcrpy -------------------------------------------------------------

try:
    _BaseDumper: type = yaml.CSafeDumper
except AttributeError:  # PyYAML without libyaml
    _BaseDumper = yaml.SafeDumper


class _Flow(list):
    """A list written on one line ([1.2, 4096]) or a mapping list item written as {t: …, data: …}."""


class _FlowMap(dict):
    pass


class _Dumper(_BaseDumper):  # type: ignore[misc, valid-type]
    def ignore_aliases(self, data: Any) -> bool:
        return True  # a value met twice is written twice: a cassette holds no alias (the loader refuses them)


def _str(dumper: yaml.BaseDumper, value: str) -> yaml.Node:
    # Text of several lines as a literal block, as a person reads it; the emitter falls back to a quoted
    # scalar where a block cannot hold the text exactly (trailing blanks, control characters, CR).
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)
_Dumper.add_representer(_Flow, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))
_Dumper.add_representer(_FlowMap, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v.items(),
                                                                     flow_style=True))


class YamlSerializer:
    """vcrpy's serializer interface (`serialize`, `deserialize`): vcrpy's own safe loader to read; to
    write, the safe dumper with the document's order kept, long lines left whole and literal blocks."""

    @staticmethod
    def serialize(cassette_dict: dict[str, Any]) -> str:
        return yaml.dump(cassette_dict, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=2 ** 30,
                         default_flow_style=False)

    @staticmethod
    def deserialize(cassette_string: str | IO[str]) -> Any:
        """vcrpy's safe loader's values (of a text, or of a file read as the parser goes), built as the parser's
        events come (`_built`), refusing any alias (`*name`) when it is met: an 18 KB "billion laughs" document
        names a node again and again until the walk over it needs gigabytes. The suite's cassettes never hold one
        (`_Dumper` writes none)."""
        return _read(cassette_string)


def _read(source: str | IO[str], frame: Callable[[dict[str, Any], int], Any] | None = None) -> Any:
    """The document's values (`YamlSerializer.deserialize`); with `frame`, each mapping of a response's `frames`
    list (`_FRAMES`) is replaced by what `frame(mapping, its position)` makes of it the moment the mapping ends."""
    loader = _Loader(source)
    try:
        return _built(loader, frame)
    finally:
        loader.dispose()


_Loader = getattr(yamlserializer, "_CassetteLoader", getattr(yaml, "CSafeLoader", yaml.SafeLoader))
ALIAS = "uses a YAML alias (a node named again with *), which no cassette holds: refused before reading it"
_PLAIN = (None, "!")  # a node without a tag of its own: its value says what it is (the loader's resolvers)
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


_FRAMES = ("response", EXTRA, "frames")  # where a frame's mapping is: in a response's own facts, its `frames`


def _built(loader: Any, frame: Callable[[dict[str, Any], int], Any] | None = None) -> Any:
    """The single document's value, built from the parser's events as they come: each scalar is resolved and
    constructed by the loader (so a value reads as the safe loader reads it: numbers, null, !!binary), but the
    document's node graph is never composed whole. PyYAML composes every node (with two marks each) before it
    builds anything, so a 30 MB cassette of 50 000 frames peaked at 212 MiB while loading; built this way, it
    holds what it builds. An alias, a second document or a tag the safe loader does not build is refused. With
    `frame`, a frame's mapping lives only until its end (see `_read`): the 100 000 frames of a cassette are never
    held as mappings beside the events made of them, whose texts they would scatter among their own leftovers."""
    loader.get_event()  # the stream's start
    if loader.check_event(yaml.StreamEndEvent):
        return None
    loader.get_event()  # the document's start
    root: list[Any] = []
    # (container, the key waiting for its value, the key the container itself goes under in its parent)
    stack: list[tuple[Any, list[Any], Any]] = [(root, [], None)]

    def add(value: Any) -> None:
        container, key, _ = stack[-1]
        if isinstance(container, dict):
            if not key:
                try:
                    hash(value)
                except TypeError:
                    raise ValueError("a mapping key that is not a scalar") from None
                key.append(value)
            else:
                container[key.pop()] = value
        else:
            container.append(value)

    while not loader.check_event(yaml.DocumentEndEvent):
        event = loader.get_event()
        if isinstance(event, yaml.AliasEvent):
            raise ValueError(ALIAS)
        if isinstance(event, yaml.ScalarEvent):
            tag = event.tag
            if tag in _PLAIN and not event.implicit[0]:
                add(event.value)  # quoted or a block: a string, as the resolver would say (the frames' texts)
                continue
            if tag in _PLAIN:
                tag = loader.resolve(yaml.ScalarNode, event.value, event.implicit)
            node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
            build = loader.yaml_constructors.get(tag) or loader.yaml_constructors.get(None)
            add(build(loader, node))
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            mapping = isinstance(event, yaml.MappingStartEvent)
            if event.tag not in (*_PLAIN, _MAP if mapping else _SEQ):
                raise ValueError(f"a node tagged {event.tag}, which the safe loader does not build")
            parent, pending, _ = stack[-1]
            stack.append(({} if mapping else [], [], pending[0] if isinstance(parent, dict) and pending else None))
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            container = stack.pop()[0]
            parent, _, under = stack[-1]
            if frame is not None and isinstance(container, dict) and isinstance(parent, list) and \
                    tuple(entry[2] for entry in stack[-3:]) == _FRAMES:
                container = frame(container, len(parent))
            add(container)
    loader.get_event()  # the document's end
    if not loader.check_event(yaml.StreamEndEvent):
        raise ValueError("more than one YAML document")
    return root[0] if root else None


SERIALIZER = YamlSerializer()


# -- writing -----------------------------------------------------------------------------------------

def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def _after(t: float | None, sent: float) -> float | None:
    return None if t is None else round((t - sent) * 1000, 3)


class _Streams:
    """The placeholders of one document and what each stands for."""

    def __init__(self) -> None:
        self.nonce = secrets.token_hex(8)
        # token → ("body" | "frames", (exchange, scrubber))
        self.parts: dict[str, tuple[str, Any]] = {}

    def token(self, kind: str, value: Any) -> str:
        token = f"streamcert{self.nonce}x{len(self.parts)}"
        self.parts[token] = (kind, value)
        return token

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(f"streamcert{self.nonce}x[0-9]+")


def _request_body(ex: Exchange) -> tuple[str | None, str | None]:
    """(the body as sent, how the suite reads it back: None for JSON, "text", "lines"). No body is written
    as vcrpy writes it, '' (so vcrpy's `body` matcher matches a GET replayed through it)."""
    body = ex.request_body
    if body is None:
        return "", None
    if isinstance(body, str):
        return body, "text"
    if ex.method == "STDIO" and isinstance(body, list) and all(isinstance(line, str) for line in body):
        return "".join(line + "\n" for line in body), "lines"
    return json.dumps(body), None  # what the A2A client sends (wire/a2a_client.py)


def _frame(ex: Exchange, n: int, ev: Event, scrubber: Scrubber) -> dict[str, Any]:
    """One frame of the cassette's `frames` list (its members in the order they are written)."""
    frame: dict[str, Any] = {"t": _after(ev.t, ex.t_sent)}
    if ev.index != n:
        frame["i"] = ev.index
    frame["comment" if ev.is_comment else "data"] = scrubber.text(ev.data)
    if ev.event_type != "message":
        frame["event"] = scrubber.text(ev.event_type)
    if ev.last_event_id:
        frame["id"] = scrubber.text(ev.last_event_id)
    if ev.retry is not None:
        frame["retry"] = ev.retry
    return frame


def _frames(ex: Exchange, scrubber: Scrubber) -> list[dict[str, Any]]:
    return [_FlowMap(_frame(ex, n, ev, scrubber)) for n, ev in enumerate(ex.events)]


def _frames_out(out: IO[str], ex: Exchange, scrubber: Scrubber, indent: str) -> None:
    """The `frames` list of a large response, written one frame at a time as the dumper writes one (a block
    sequence of flow mappings at the key's `indent`, strings double-quoted): 100 000 frames never become
    100 000 YAML nodes at once (issue 25: the memory of --record)."""
    for n, ev in enumerate(ex.events):
        out.write("\n" + indent + "- {")
        for k, (key, value) in enumerate(_frame(ex, n, ev, scrubber).items()):
            out.write((", " if k else "") + key + ": ")
            if isinstance(value, str):
                _quoted(out, _slices(value), indent + "  ")
            else:
                out.write(_scalar(value))
        out.write("}")


def _scalar(value: Any) -> str:
    """A number (or null) as YAML reads it back: repr where YAML 1.1 reads that as the same number."""
    if value is None:
        return "null"
    text = repr(value)
    if isinstance(value, int) or (isinstance(value, float) and "." in text and "e" not in text):
        return text
    return yaml.dump(value, Dumper=_Dumper, default_flow_style=True).removesuffix("\n...\n").strip()


def _scrubbed_pieces(ex: Exchange, scrubber: Scrubber) -> Iterator[bytes]:
    from ..framelog import _ChunkBytes

    return scrubber.iter_pieces(_ChunkBytes(ex.chunks))


def _interaction(ex: Exchange, scrubber: Scrubber, streams: _Streams) -> tuple[VcrRequest, dict[str, Any]]:
    body, request_kind = _request_body(ex)
    if request_kind is None and body:
        body = json.dumps(scrubber.value(ex.request_body))
    elif request_kind is not None:
        body = scrubber.text(body)
    request = VcrRequest(ex.method, scrubber.url(ex.url), body, scrubber.value(dict(ex.request_headers)))

    big = ex.size > STREAMED
    if big:
        lengths = [len(piece) for piece in _scrubbed_pieces(ex, scrubber)]
        string: Any = streams.token("body", (ex, scrubber))
    else:
        pieces = list(_scrubbed_pieces(ex, scrubber))
        lengths = [len(piece) for piece in pieces]
        raw = b"".join(pieces)
        try:
            string = raw.decode("utf-8")
        except UnicodeDecodeError:
            string = raw  # YAML !!binary
    extra: dict[str, Any] = {"label": ex.label}
    if ex.binding != "jsonrpc":  # the A2A binding it went over (a gRPC call: its messages as ProtoJSON frames)
        extra["binding"] = ex.binding
    if ex.rpc_method:
        extra["rpc_method"] = ex.rpc_method
    if request_kind:
        extra["request"] = request_kind
    extra["sent_ms"] = _ms(ex.t_sent)
    extra["headers_ms"] = _after(ex.t_headers, ex.t_sent)
    extra["end_ms"] = _after(ex.t_end, ex.t_sent)
    extra["end"] = ex.end
    if ex.error is not None:
        extra["error"] = scrubber.text(ex.error)
    extra["chunks"] = [_Flow([_after(c.t, ex.t_sent), n]) for c, n in zip(ex.chunks, lengths)]
    if ex.events:
        extra["frames"] = streams.token("frames", (ex, scrubber)) if big else _frames(ex, scrubber)
    if ex.discarded is not None:
        extra["discarded"] = scrubber.text(ex.discarded)
    http = isinstance(ex.status, int) and 100 <= ex.status <= 599
    if not http:  # no answer (None), or a program's exit status: vcrpy's code says 0, this says which
        extra["status"] = ex.status
    if ex.notes:
        extra["notes"] = scrubber.value(ex.notes)
    response = {
        "status": {"code": ex.status if http else NO_STATUS, "message": ""},
        "headers": {name: [value] for name, value in scrubber.value(dict(ex.response_headers)).items()},
        "body": {"string": string},
        EXTRA: extra,
    }
    return request, response


def document(log: FrameLog, scrubber: Scrubber | None = None) -> tuple[str, _Streams]:
    """The cassette's YAML text (through vcrpy's `serialize`), with a placeholder for each part to stream."""
    from ..scrub import BY_NAME

    scrubber = scrubber or BY_NAME
    streams = _Streams()
    pairs = [_interaction(ex, scrubber, streams) for ex in log.exchanges]
    meta = {EXTRA: scrubber.value({"format": FORMAT, "scenario": log.scenario, "target": scrubber.url(log.target),
                                   "started": log.started, "script": log.script, "notes": log.notes})}
    text = vcr_serialize({"requests": [r for r, _ in pairs], "responses": [r for _, r in pairs]}, SERIALIZER)
    text = text.removesuffix("...\n")  # the end-of-document mark PyYAML writes after an open plain scalar
    return text + SERIALIZER.serialize(meta), streams  # one more key of the top-level mapping


def write(log: FrameLog, path: str | Path, scrubber: Scrubber | None = None) -> Path:
    """Write the cassette of `log` to `path` atomically (a reader sees the old file or the whole new one)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text, streams = document(log, scrubber)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as out:
            if not streams.parts:
                out.write(text)
            else:
                _write_streamed(out, text, streams)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def _write_streamed(out: IO[str], text: str, streams: _Streams) -> None:
    pattern = streams.pattern
    for line in text.splitlines(keepends=True):
        at = 0
        indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
        for m in pattern.finditer(line):
            kind, (ex, scrubber) = streams.parts[m.group(0)]
            if kind == "frames":  # a block sequence, from the next line on (`frames:` ends its own)
                out.write(line[at:m.start()].rstrip(" "))
                _frames_out(out, ex, scrubber, indent[:-2])
            else:
                out.write(line[at:m.start()])
                _body(out, ex, scrubber, indent)
            at = m.end()
        out.write(line[at:])


def _slices(text: str) -> Iterator[str]:
    for at in range(0, len(text), _SLICE):
        yield text[at:at + _SLICE]


# Characters YAML does not take raw in a scalar, or reads as line breaks (NEL, LS, PS), beyond what JSON escapes.
_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")


def _escape(piece: str) -> str:
    escaped = json.dumps(piece, ensure_ascii=False)[1:-1]
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", escaped)


def _quoted(out: IO[str], pieces: Iterable[str], indent: str) -> None:
    """A double-quoted YAML scalar of `pieces`, one line of the file per piece: each line break is escaped
    (`\\` at its end), so it adds nothing; a blank opening a line is escaped, so it is not taken for indent."""
    out.write('"')
    first = True
    for piece in pieces:
        if not piece:
            continue
        escaped = _escape(piece)
        if not first:
            out.write("\\\n" + indent)
            if escaped[0] == " ":
                escaped = "\\x20" + escaped[1:]
        out.write(escaped)
        first = False
    out.write('"')


def _body(out: IO[str], ex: Exchange, scrubber: Scrubber, indent: str) -> None:
    """The body of a large response, read back chunk by chunk: text where it is UTF-8, else base64."""
    check = codecs.getincrementaldecoder("utf-8")()
    try:
        for piece in _scrubbed_pieces(ex, scrubber):
            check.decode(piece)
        check.decode(b"", final=True)
        text = True
    except UnicodeDecodeError:
        text = False
    if text:
        decoder = codecs.getincrementaldecoder("utf-8")()

        def decoded() -> Iterator[str]:
            for piece in _scrubbed_pieces(ex, scrubber):
                yield from _slices(decoder.decode(piece))
            yield decoder.decode(b"", final=True)

        _quoted(out, decoded(), indent)
        return
    out.write("!!binary |")
    carry = b""
    for piece in _scrubbed_pieces(ex, scrubber):
        carry += piece
        whole = len(carry) - len(carry) % 57  # 57 bytes: one 76-character line of base64
        for at in range(0, whole, 57):
            out.write("\n" + indent + base64.b64encode(carry[at:at + 57]).decode("ascii"))
        carry = carry[whole:]
    if carry:
        out.write("\n" + indent + base64.b64encode(carry).decode("ascii"))


# -- reading -----------------------------------------------------------------------------------------

def load(path: str | Path, max_bytes: int = int(MAX_CASSETTE.default), *, stream_bytes: bool = True) -> FrameLog:
    """The frame log of a cassette: this format, or the suite's older JSON form (format 1). A file larger than
    `max_bytes` is refused before it is read (limits.MAX_CASSETTE). Without `stream_bytes` an answer with frames
    keeps its frames and not its bytes (no chunks: what `streamcert diff` compares, at a third less memory)."""
    path = Path(path)
    size = path.stat().st_size
    if size > max_bytes:
        raise CassetteError(f"{path}: {MAX_CASSETTE.reached(size, max_bytes)}")
    try:
        if _first_byte(path) == b"{":
            text = path.read_text("utf-8")
            value, complaint = read_json(text)  # nesting bounded as any JSON the suite reads
            if complaint:
                raise CassetteError(f"{path} is not a streamcert cassette: {complaint}")
            if isinstance(value, dict) and "streamcert_cassette" in value:
                try:
                    return FrameLog.from_json(value)
                except (KeyError, TypeError, ValueError) as exc:
                    raise CassetteError(f"{path} is not a streamcert cassette: {exc}") from None
        with open(path, encoding="utf-8") as stream:  # read by the parser as it goes: the text is never held whole
            data = _read(stream, _frame_event)
    except UnicodeDecodeError as exc:
        raise CassetteError(f"{path} is not a cassette: not UTF-8 text ({exc})") from None
    except (yaml.YAMLError, ValueError) as exc:
        if isinstance(exc, CassetteError):
            raise
        raise CassetteError(f"{path} is not a cassette: {str(exc).splitlines()[0]}") from None
    try:
        return from_document(data, stream_bytes)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CassetteError(f"{path} is not a streamcert cassette: {type(exc).__name__}: {exc}") from None


def _first_byte(path: Path) -> bytes:
    """The file's first byte that is not white space (b"" for none): `{` opens the suite's older JSON form."""
    with open(path, "rb") as raw:
        while piece := raw.read(64 * 1024):
            if stripped := piece.lstrip():
                return stripped[:1]
    return b""


def from_document(data: Any, stream_bytes: bool = True) -> FrameLog:
    """The frame log of a loaded vcrpy document (a dict with `interactions`)."""
    if not isinstance(data, dict) or not isinstance(data.get("interactions"), list):
        raise ValueError("no vcrpy `interactions` list")
    meta = data.get(EXTRA)
    if not isinstance(meta, dict) or not meta.get("scenario"):
        raise ValueError("a vcrpy cassette, but not one the suite recorded (no streamcert.scenario)")
    if int(meta.get("format", FORMAT)) > FORMAT:
        raise ValueError(f"format {meta.get('format')} is newer than this streamcert reads ({FORMAT})")
    log = FrameLog(scenario=meta["scenario"], target=meta.get("target") or "", script=meta.get("script"),
                   notes=dict(meta.get("notes") or {}), started=meta.get("started") or "")
    for n, item in enumerate(data["interactions"], start=1):
        try:
            log.add(_exchange(item["request"], item["response"], stream_bytes))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"interaction {n}: {type(exc).__name__}: {exc}") from None
    return log


def _seconds(ms: Any, base: float = 0.0) -> float | None:
    return None if ms is None else round(base + float(ms) / 1000, 6)


def _exchange(request: dict[str, Any], response: dict[str, Any], stream_bytes: bool = True) -> Exchange:
    extra = response.get(EXTRA) or {}
    body = (response.get("body") or {}).get("string")
    sent_ms = float(extra.get("sent_ms") or 0.0)
    sent = _seconds(sent_ms) or 0.0
    events = []
    for n, frame in enumerate(extra.get("frames") or []):
        ev = frame if isinstance(frame, Event) else _frame_event(frame, n, strict=True)
        ev.t = _seconds(sent_ms + ev.t) or 0.0  # its time in the frame log: the request's, plus its own
        events.append(ev)
    keep = stream_bytes or not events  # else its frames alone are read: its bytes are checked, not kept
    if isinstance(body, str):
        raw = body.encode("utf-8") if keep else b""
        size = len(raw) if keep else _utf8_size(body)
    else:
        raw = bytes(body or b"")
        size = len(raw)
    # A large body goes to a temporary file, as the capture keeps it (wire/capture.py): its chunks read it back,
    # and memory holds only the events decoded from it.
    spool, base = (Spool(), 0) if keep and len(raw) > SPOOL_AFTER else (None, 0)
    if spool is not None:
        base = spool.add(raw)
    chunks, at = [], 0
    for offset, length in extra.get("chunks") or []:
        t = _seconds(sent_ms + float(offset)) or 0.0
        if keep:
            chunks.append(Chunk(t, raw[at:at + int(length)]) if spool is None else
                          Chunk(t, spool=spool, at=base + at, length=int(length)))
        at += int(length)
    if at != size:
        raise ValueError(f"its chunks add up to {at} bytes, its body holds {size}")
    kind = extra.get("request")
    sent_body = request.get("body")
    if isinstance(sent_body, bytes):
        sent_body = sent_body.decode("utf-8", "replace")
    if sent_body is None or (sent_body == "" and kind is None):  # no body: '' (vcrpy's), null (written before)
        request_body: Any = None
    elif kind == "text":
        request_body = sent_body
    elif kind == "lines":
        request_body = sent_body.split("\n")[:-1] if sent_body else []
    else:
        request_body = json.loads(sent_body)
    code = int((response.get("status") or {}).get("code") or NO_STATUS)
    status = extra["status"] if "status" in extra else (None if code == NO_STATUS else code)
    return Exchange(
        label=extra.get("label", ""),
        method=request.get("method", "POST"),
        url=request.get("uri", ""),
        rpc_method=extra.get("rpc_method"),
        request_headers={k: _one(v) for k, v in (request.get("headers") or {}).items()},
        request_body=request_body,
        status=status,
        response_headers={k.lower(): _one(v) for k, v in (response.get("headers") or {}).items()},
        t_sent=sent,
        t_headers=_seconds(_plus(sent_ms, extra.get("headers_ms"))),
        t_end=_seconds(_plus(sent_ms, extra.get("end_ms"))),
        end=extra.get("end", "closed"),
        error=extra.get("error"),
        chunks=chunks,
        events=budgeted(events),
        discarded=extra.get("discarded"),
        notes=dict(extra.get("notes") or {}),
        binding=extra.get("binding", "jsonrpc"),
    )


def _utf8_size(text: str, piece: int = 1 << 20) -> int:
    """The bytes of `text` in UTF-8, encoded a slice at a time (a 20 MB body is not encoded whole to count it)."""
    return sum(len(text[at:at + piece].encode("utf-8")) for at in range(0, len(text), piece))


def _frame_event(frame: dict[str, Any], n: int, strict: bool = False) -> Any:
    """The Event of the `n`th frame of a cassette's `frames`, its `t` still the frame's milliseconds from the
    request (`_exchange` adds the request's time). Made as the loader reads each frame (`_read`); a frame it
    cannot make stays a mapping, for `_exchange` to make again with `strict` and say what is wrong with it."""
    try:
        comment = "comment" in frame
        return Event(index=int(frame.get("i", n)), t=float(frame["t"]), kind="comment" if comment else "event",
                     data=str(frame["comment"] if comment else frame.get("data", "")),
                     event_type=frame.get("event", "message"), last_event_id=frame.get("id", ""),
                     retry=frame.get("retry"))
    except (KeyError, TypeError, ValueError, AttributeError):
        if strict:
            raise
        return frame


def _plus(base: float, ms: Any) -> float | None:
    return None if ms is None else base + float(ms)


def _one(value: Any) -> str:
    """vcrpy keeps each header as a list of values; the suite as one (joined as httpx joins them)."""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


# -- what a directory holds ------------------------------------------------------------------------

def stem(scenario: str, binding: str | None = None) -> str:
    """A cassette's name without its suffix: the scenario, and the A2A binding it went over unless that is
    JSON-RPC (whose cassettes keep the name they always had): stream-basic, stream-basic@grpc."""
    return scenario if binding in (None, "jsonrpc") else f"{scenario}@{binding}"


def path_for(folder: str | Path, scenario: str, binding: str | None = None) -> Path:
    """<folder>/<stem>.yaml, what convert and --record write: the name is one file in `folder` or refused
    (safe_names.confined), whatever scenario or binding a cassette named."""
    return confined(folder, f"{stem(scenario, binding)}{SUFFIX}", what="cassette name")


def find(folder: str | Path, scenario: str, binding: str | None = None) -> Path | None:
    """The cassette of `scenario` (over `binding`) in `folder`: <stem>.yaml, else an older <stem>.json."""
    for suffix in (SUFFIX, ".yml", ".json"):
        path = Path(folder) / f"{stem(scenario, binding)}{suffix}"
        if path.is_file():
            return path
    return None


def existing(folder: str | Path, scenarios: Iterable[str]) -> list[Path]:
    """The cassettes a recording of `scenarios` into `folder` would replace (over any binding)."""
    out = []
    for sid in scenarios:
        out += [path for path in [path_for(folder, sid), *sorted(Path(folder).glob(f"{sid}@*{SUFFIX}"))]
                if path.exists()]
    return out


def convert(source: str | Path, into: str | Path | None = None, max_bytes: int = int(MAX_CASSETTE.default)) -> Path:
    """Write a cassette (an older JSON one, say) again in this format: <scenario>.yaml beside it or in `into`.
    Nothing is scrubbed but credential names (the older writer scrubbed the secrets of its run)."""
    log = load(source, max_bytes)
    return write(log, path_for(Path(into) if into is not None else Path(source).parent, log.scenario))
