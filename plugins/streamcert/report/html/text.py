"""What every part of report.html writes with: escaping (all text the report holds is the implementation's own,
docs/contracts.md §4), a requirement's source as a link, a status badge, a plural."""

from __future__ import annotations

import html
import math
from typing import Any

from ..sources import source_url


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def html_source(source: str) -> str:
    """A requirement's source, a link to the document's public text where one is known (sources.py)."""
    url = source_url(source)
    return (f'<a href="{esc(url)}" rel="noopener noreferrer" target="_blank">{esc(source)}</a>' if url
            else esc(source))


def esc_text(value: Any) -> str:
    """For element content only (never an attribute): quotes stay, which keeps quoted frames half the size."""
    return html.escape(str(value), quote=False)


def short_test(nodeid: str) -> str:
    return nodeid.rsplit("::", 1)[-1] if nodeid else ""


NUMBER = (int, float)


def is_number(value: Any) -> bool:
    return isinstance(value, NUMBER) and not isinstance(value, bool) and math.isfinite(value)


def badge(status: str) -> str:
    return f'<span class="badge s-{esc(status)}">{esc(status)}</span>'


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
