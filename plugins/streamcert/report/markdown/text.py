"""Writing report.md within its budget (page.py says how the budget is spent): the sizes each piece is cut to,
Markdown text escaped and fenced, and the page's parts, each in the forms it can take (`Part`, `Page`)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..sources import source_url

MD_BUDGET = 10_000  # bytes of UTF-8: "at most 10 KB" in either reading of KB
NOTE_RESERVE = 800  # kept back for the last line that says what was left out (`left_out_note` stays under it)
TARGET_CHARS = 400  # of the run's line (an ACP command line can be long)
LINE_CHARS = 300  # of one line of a message
TITLE_CHARS = 160  # of a member's or a listed requirement's title
VALUE_CHARS = 200  # of one fact of an evidence item
FENCE_CHARS = 1200  # of a frame or a body, pretty-printed
FENCE_LINES = 30
MEMBERS_SHOWN = 8  # members listed with their title; the others by ID
IDS_SHOWN = 20  # IDs listed where only IDs are
NOTE_IDS = 15  # IDs the last line names
DETAIL_FRAMES = 3  # frame items in a root's full details
DETAIL_EXCHANGES = 2  # exchange items in a root's full details
LIST_CAPS = (700, 1800)  # the short folded lists (warnings, not tested): their two sizes
DIFF_LINES = (8, 30)  # of a regression's diff: its two sizes
REGRESSIONS_LISTED = 10  # scenarios named with their counts, and with their diffs
COULD_NOT_RUN_CHARS = 1000  # escaped, up to 4 bytes a character (`<` is `&lt;`)
DIFFER_ROWS = (12, 40)  # rows of the table of requirements whose status differs between bindings: its two sizes


# -- Markdown ------------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")


def md_text(text: Any) -> str:
    """Text from the run, made inert in Markdown: HTML escaped, Markdown punctuation backslashed."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(text), quote=False))


def md_source(source: str) -> str:
    """A requirement's source, linked to the document's public text where one is known (sources.py)."""
    url = source_url(source)
    return f"[{md_text(source)}]({url})" if url else md_text(source)


def md_fence(text: str, info: str = "") -> str:
    longest_run = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest_run + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def md_message(text: str) -> str:
    return "  \n".join(md_text(line) for line in text.splitlines()) or "_(no message)_"


def cut(text: str, limit: int) -> str:
    """`text` up to `limit` characters, cut before it is escaped (an escape is never split)."""
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "…"


def size(text: str) -> int:
    return len(text.encode("utf-8"))


def block(lines: Iterable[str]) -> str:
    """Lines as one part of the page, one blank line after it."""
    return "\n".join(lines).rstrip("\n") + "\n\n"


def message_lines(entry: dict[str, Any]) -> list[str]:
    """The entry's message, line by line, without the source a failing finding appends to each (`[source]`:
    rules/engine.py Verdict.add): the page shows the source once, beside the title."""
    suffix = f" [{entry.get('source')}]"
    return [line.removesuffix(suffix) for line in str(entry.get("message") or "").splitlines() if line.strip()]


def counted(n: int, what: str) -> str:
    return "" if n == 0 else f"{n} {what}" + ("" if n == 1 else "s")


def ids_line(entries: list[dict[str, Any]], limit: int = IDS_SHOWN) -> str:
    shown = [f"{md_text(e['id'])} ({e['status']})" for e in entries[:limit]]
    more = f" and {len(entries) - limit} more" if len(entries) > limit else ""
    return ", ".join(shown) + more


# -- the page and its budget -----------------------------------------------------------------------------

@dataclass
class Part:
    """One part of the page in the forms it can take, smallest first ("" for left out)."""

    forms: list[str]
    chosen: int = 0

    @property
    def text(self) -> str:
        return self.forms[self.chosen]


@dataclass
class Page:
    budget: int
    parts: list[Part] = field(default_factory=list)
    used: int = 0

    def add(self, *forms: str) -> Part:
        part = Part(list(forms))
        self.parts.append(part)
        self.used += size(part.text)
        return part

    def enlarge(self, part: Part, form: int) -> bool:
        """Take `form` for `part` when the budget allows (a smaller or equal form: nothing to do)."""
        form = min(form, len(part.forms) - 1)
        if form <= part.chosen:
            return True
        extra = size(part.forms[form]) - size(part.text)
        if self.used + extra > self.budget:
            return False
        part.chosen, self.used = form, self.used + extra
        return True

    @property
    def text(self) -> str:
        return "".join(part.text for part in self.parts)
