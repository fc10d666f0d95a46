"""report.html (docs/contracts.md §4), one module per part of the page: page.py the page and its sections (with
page.css and page.js, package data), tables.py the tables and filters, requirements.py one requirement opened and
a root cause, frames.py an evidence frame, timing.py a timing rule's figure, text.py escaping and small pieces."""

from .frames import html_frame, pretty_json
from .page import render_html
from .text import esc

__all__ = ["esc", "html_frame", "pretty_json", "render_html"]
