"""report.md (docs/contracts.md §4), the CI step summary, one module per part: page.py the page and how its budget
is spent (`render_markdown`), head.py its head (verdict, counts, bindings, regressions), failures.py the failures
by root cause with their evidence, text.py the sizes, Markdown text and the page's parts."""

from .page import render_markdown
from .text import MD_BUDGET, md_source, md_text

__all__ = ["MD_BUDGET", "md_source", "md_text", "render_markdown"]
