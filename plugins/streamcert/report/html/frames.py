"""An evidence item on report.html: where the frame is (test, exchange, frame, arrival), its note, and the frame
as indented JSON with the member its note names marked (`named_members`); a frame whose note names none of its
members is marked as a whole."""

from __future__ import annotations

import json
import re
from typing import Any

from ..common import quoted_key
from .text import esc, esc_text, is_number, short_test

# -- a frame: pretty JSON with the members its note names marked ---------------------------------------------

# One JSON token. Strings are kept as they came (escapes included): the page shows the frame, never a decoding.
_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<lit>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)'
                    r'|(?P<punct>[{}\[\]:,]))')


_MEMBER_NAME = re.compile(r"[A-Za-z_$@][\w$@.-]+")  # what a note can name: not "0", not "t"
INDENT = "  "


def json_tokens(text: str) -> tuple[list[tuple[str, str]], str]:
    """The JSON tokens `text` starts with (kind, text), and the rest from the first thing that is not one (a
    frame cut at the quote limit ends in "… (N chars)"; bytes that are not JSON stay as they are)."""
    tokens, pos = [], 0
    while pos < len(text):
        found = _TOKEN.match(text, pos)
        if not found or found.end() == pos:
            break
        kind = found.lastgroup or ""
        tokens.append((kind, found.group(kind)))
        pos = found.end()
    rest = text[pos:]
    return tokens, ("" if not rest.strip() else rest.lstrip())


# A quoted stretch of a note: often the frame's own bytes ("raw bytes: '{"jsonrpc":…'"), which name every member.
_QUOTED = re.compile(r"""(?<![A-Za-z])'[^']*(?:'|$)|"[^"]*(?:"|$)""")
MAX_NAMED = 3  # a note that names more of the frame's members than this points at none of them


def named_members(tokens: list[tuple[str, str]], note: str) -> set[str]:
    """The member names of the frame that its evidence note names as a word, outside quotes ("append: true
    after its lastChunk" names `append`): the only members the page can honestly point at. None when the
    note names more than MAX_NAMED of them (it describes the frame rather than one member)."""
    said = _QUOTED.sub(" ", note)
    if not said.strip():
        return set()
    keys = {text[1:-1] for (kind, text), nxt in zip(tokens, tokens[1:] + [("", "")])
            if kind == "str" and nxt == ("punct", ":")}
    named = {key for key in keys if _MEMBER_NAME.fullmatch(key)
             and re.search(rf"(?<![\w$@]){re.escape(key)}(?![\w$@]|['’]s\b)", said)}  # "the phase's": a noun
    return named if len(named) <= MAX_NAMED else set()


WIDTH = 64  # a container whose one-line form fits in this many characters stays on one line
MAX_DEPTH = 24  # deeper containers stay on one line (a hostile frame could nest a few hundred deep)


class _JsonPrinter:
    """Tokens → indented HTML. A member whose name is in `names` is marked: its name, and its value when the
    value is a scalar. Tolerant: tokens that do not follow JSON's grammar are printed in order all the same."""

    def __init__(self, tokens: list[tuple[str, str]], names: set[str]) -> None:
        self.tokens, self.names = tokens, names
        self.out: list[str] = []
        self.marked: list[str] = []
        self.mark_open = False
        self.closing = _matching_brackets(tokens)

    def tok(self, i: int) -> str:
        return self.tokens[i][1] if 0 <= i < len(self.tokens) else ""

    def is_key(self, i: int) -> bool:
        return self.tokens[i][0] == "str" and self.tok(i + 1) == ":"

    def emit_token(self, i: int) -> None:
        """One token, opening or closing a mark around a named member."""
        kind, text = self.tokens[i]
        if self.is_key(i) and text[1:-1] in self.names and not self.mark_open:
            self.out.append('<mark class="named">')
            self.mark_open = True
            if text[1:-1] not in self.marked:
                self.marked.append(text[1:-1])
            self.out.append(esc_text(text))
            return
        if kind == "punct" and text == ":":
            self.out.append(": ")
            if self.mark_open and self.tok(i + 1) in ("{", "["):  # a container value: the name alone is marked
                self.close_mark()
            return
        self.out.append(esc_text(text) + (" " if kind == "punct" and text == "," else ""))
        if self.mark_open and not self.is_key(i) and text not in ("{", "["):
            self.close_mark()

    def close_mark(self) -> None:
        if self.mark_open:
            self.out.append("</mark>")
            self.mark_open = False

    def one_line(self, i: int, j: int) -> int:
        """Tokens i..j on one line; the index after j."""
        for k in range(i, min(j, len(self.tokens) - 1) + 1):
            self.emit_token(k)
        return j + 1

    def fits(self, i: int, j: int | None, depth: int) -> bool:
        """Whether tokens i..j fit on the line they start, after the indentation and the member's name."""
        if j is None:
            return False
        name = len(self.tok(i - 2)) + 2 if self.tok(i - 1) == ":" else 0
        return sum(len(self.tok(k)) + (1 if self.tok(k) in (",", ":") else 0) for k in range(i, j + 1)) \
            <= WIDTH - len(INDENT) * depth - name

    def value(self, i: int, depth: int) -> int:
        """The value starting at token i; the index after it."""
        text = self.tok(i)
        if self.tokens[i][0] != "punct" or text not in ("{", "["):
            self.emit_token(i)
            return i + 1
        j = self.closing.get(i)
        if depth >= MAX_DEPTH or self.fits(i, j, depth):
            return self.one_line(i, len(self.tokens) - 1 if j is None else j)
        self.out.append(esc_text(text))
        i += 1
        if self.tok(i) in ("}", "]"):
            self.out.append(esc_text(self.tok(i)))
            return i + 1
        inner = "\n" + INDENT * (depth + 1)
        self.out.append(inner)
        while i < len(self.tokens):
            kind, tok = self.tokens[i]
            if kind == "punct" and tok in ("}", "]"):
                self.close_mark()
                self.out.append("\n" + INDENT * depth + esc_text(tok))
                return i + 1
            if kind == "punct" and tok == ",":
                self.close_mark()
                self.out.append("," + inner)
                i += 1
            elif self.is_key(i) or (kind == "punct" and tok == ":"):
                self.emit_token(i)
                i += 1
            else:
                i = self.value(i, depth + 1)
        return i  # the frame was cut inside this container


def _matching_brackets(tokens: list[tuple[str, str]]) -> dict[int, int]:
    """Index of each opening bracket → index of the bracket that closes it (unclosed ones are left out)."""
    stack: list[int] = []
    closing: dict[int, int] = {}
    for i, (kind, text) in enumerate(tokens):
        if kind != "punct":
            continue
        if text in ("{", "["):
            stack.append(i)
        elif text in ("}", "]") and stack:
            closing[stack.pop()] = i
    return closing


def pretty_json(text: str, note: str = "") -> tuple[str, list[str]]:
    """HTML of `text` indented as JSON, the members named by `note` in <mark> (the name, and the value when
    it is a scalar); and the names marked. Text that does not start as JSON comes back as it is."""
    tokens, rest = json_tokens(text)
    if not tokens or tokens[0] not in (("punct", "{"), ("punct", "[")):
        return esc_text(text), []
    printer = _JsonPrinter(tokens, named_members(tokens, note))
    i = 0
    while i < len(tokens):
        i = printer.value(i, 0)
    printer.close_mark()
    if rest:
        printer.out.append(f'<span class="cut">{esc_text(rest)}</span>')
    return "".join(printer.out), printer.marked


def evidence_body(item: dict[str, Any]) -> tuple[str, str]:
    """(the quoted frame, body or error; the key it came from) or the whole item as JSON."""
    key = quoted_key(item)
    return (item[key], key) if key else (json.dumps(item, ensure_ascii=False), "")


_HEAD_KEYS = ("test", "exchange", "frame", "t", "note", "data", "body", "error", "sent")


def html_frame(item: dict[str, Any], *, is_root: bool) -> str:
    """One evidence item: where it is (test, exchange, frame, arrival), its note, the frame with the member
    the note names marked; a frame whose note names none of its members is marked as a whole."""
    text, source = evidence_body(item)
    note = str(item.get("note") or "")
    shown, marked = pretty_json(text, note)
    where = [f'<span class="tag">{esc(short_test(str(item["test"])))}</span>' if item.get("test") else "",
             f"{esc(item['exchange'])}" if item.get("exchange") else "",
             f"frame <strong>{esc(item['frame'])}</strong>" if "frame" in item else "",
             f"at <strong>{esc(item['t'])} s</strong>" if is_number(item.get("t")) else ""]
    where += [f"{esc(k)} <strong>{esc(v)}</strong>" for k, v in item.items()
              if k not in _HEAD_KEYS and isinstance(v, (str, int, float, bool)) and v != ""]
    if source == "error":
        where.append("<strong>error</strong>")
    elif isinstance(item.get("error"), str):  # a stream's transport error beside its unreadable frame
        where.append(f"error <strong>{esc(item['error'])}</strong>")
    whole = "frame" in item and not marked
    if marked:
        why = " — marks " + ", ".join(f"<code>{esc(m)}</code>" for m in marked)
    elif whole:
        why = " — names no member of the frame as quoted: the whole frame is marked" if note else "the whole frame is marked"
    else:
        why = ""
    root = '<span class="root-tag">root frame</span>' if is_root else ""
    said = f"note “{esc(note)}”" if note else ""
    sent = item.get("sent")
    return (f'<div class="frame{" whole" if whole else ""}"><div class="frame-head">{root}'
            f'{" · ".join(w for w in where if w)}</div>'
            + (f'<div class="sent">sent <code>{esc(sent)}</code></div>' if isinstance(sent, str) else "")
            + (f'<div class="note">{said}{why}</div>' if said or why else "")
            + f'<pre class="json">{shown}</pre></div>')
