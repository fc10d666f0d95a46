"""report.html (docs/contracts.md §4): the page, rendered by `render_html`; the names other modules and the tests
use are imported here."""

from .page import esc, html_frame, pretty_json, render_html

__all__ = ["esc", "html_frame", "pretty_json", "render_html"]
