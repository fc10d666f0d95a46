"""report.md (docs/contracts.md §4), the CI step summary, rendered by `render_markdown`; the names other modules
and the tests use are imported here."""

from .page import MD_BUDGET, md_source, md_text, render_markdown

__all__ = ["MD_BUDGET", "md_source", "md_text", "render_markdown"]
