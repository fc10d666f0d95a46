"""One requirement on report.html, opened (a <details>: the sentence's source, the message, a timing figure,
the frames that decided it, the tests, its status over each binding), and a root cause with the requirements its
first frame also failed."""

from __future__ import annotations

import json
from typing import Any

from ...outcomes import Outcome
from ..aggregate import untested_over
from ..common import FAILURES, binding_title, first_line, over_text, run_profile
from ..roots import Root
from .frames import html_frame
from .text import badge, esc, html_source, plural, short_test
from .timing import timing_figure

# -- one requirement, opened ------------------------------------------------------------------------------

def html_measured(measured: dict[str, Any]) -> str:
    if not measured:
        return ""
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))}</dd>"
                   for k, v in measured.items())
    return f'<dl class="measured">{rows}</dl>'


def html_requirement(entry: dict[str, Any], *, root_frame: dict[str, Any] | None = None, role: str = "") -> str:
    """A requirement that did not simply pass, as a <details>: the summary says what failed; opened, the
    sentence's source, the message, a timing figure, the frames that decided it, the tests."""
    status = entry["status"]
    flags, baseline = "", ""
    if entry.get("baseline") == "expected":
        flags = '<span class="flag">expected by baseline</span>'
    elif entry.get("baseline_scenarios") and status in FAILURES:
        flags = (f'<span class="flag">the baseline expects it only in '
                 f'{esc(", ".join(map(str, entry["baseline_scenarios"])))}</span>')
    if entry.get("baseline_reason"):
        baseline = f'<p class="meta">the baseline says: {esc(entry["baseline_reason"])}</p>'
    message = entry.get("message") or ""
    readings = "".join(f"<li>{esc(r)}</li>" for r in entry.get("readings") or ())
    how = ""
    if entry.get("reading") or readings or entry.get("note"):
        how = ('<details class="how"><summary>how it is judged</summary>'
               + (f"<p>reading taken: <strong>{esc(entry['reading'])}</strong></p>" if entry.get("reading") else "")
               + (f"<ul>{readings}</ul>" if readings else "")
               + (f"<p>{esc(entry['note'])}</p>" if entry.get("note") else "") + "</details>")
    frames = [html_frame(item, is_root=item is root_frame) for item in entry.get("evidence") or ()]
    if entry.get("evidence_omitted"):
        frames.append(f'<p class="meta">{esc(entry["evidence_omitted"])} more evidence item(s) omitted</p>')
    tests = "".join(f"<li><code>{esc(t)}</code></li>" for t in entry.get("tests") or ())
    over = over_text(entry)
    over_tag = f'<span class="over">over {esc(over)}</span>' if over and status != Outcome.PASS.value else ""
    return (f'<details class="req {role}" id="req-{esc(entry["id"])}" data-status="{esc(status)}" '
            f'data-profile="{esc(run_profile(entry))}"{binding_attrs(entry)}><summary>{badge(status)} '
            f'<code class="id">{esc(entry["id"])}</code> <span class="title">{esc(entry["title"])}</span>{over_tag}'
            f'{flags}<span class="first">{esc(first_line(message))}</span></summary><div class="body">'
            f'<p class="meta">{esc(entry["level"])} · {esc(entry["profile"])} · source: {html_source(entry["source"])}</p>'
            f"{baseline}{html_by_binding(entry)}"
            f'<h4>Message</h4><pre class="message{"" if status in FAILURES else " soft"}">'
            f'{esc(message) or "(no message)"}</pre>'
            f"{timing_figure(entry)}{html_measured(entry.get('measured') or {})}{how}"
            + (f'<h4>The frames that decided it</h4><div class="frames">{"".join(frames)}</div>' if frames else "")
            + (f'<h4>Tests</h4><ul class="tests">{tests}</ul>' if tests else "") + "</div></details>")


def binding_attrs(entry: dict[str, Any]) -> str:
    """`data-b-<binding>="<status>"` for each binding the requirement runs over (the binding filter reads them)."""
    return "".join(f' data-b-{esc(b)}="{esc(s)}"' for b, s in (entry.get("bindings") or {}).items())


def html_by_binding(entry: dict[str, Any]) -> str:
    """The status over each binding, with that binding's message where it is not PASS."""
    if not entry.get("bindings"):
        return ""
    messages = entry.get("binding_messages") or {}
    untested = untested_over(entry)
    items = "".join(f"<li>{badge(s)} {esc(binding_title(b))}"
                    + (f' <span class="first">{esc(first_line(messages[b]))}</span>' if messages.get(b) else "")
                    + (' <span class="flag">a certified binding it was not tested over</span>' if b in untested else "")
                    + "</li>" for b, s in entry["bindings"].items())
    return f'<ul class="by-binding">{items}</ul>'


def same_frame(entry: dict[str, Any], frame: dict[str, Any] | None) -> dict[str, Any] | None:
    """The entry's evidence item on the same frame (test, binding, exchange, number) as `frame`, if it has one."""
    if not frame:
        return None
    where = (frame.get("test"), frame.get("binding"), frame.get("exchange"), frame.get("frame"))
    return next((item for item in entry.get("evidence") or ()
                 if (item.get("test"), item.get("binding"), item.get("exchange"), item.get("frame")) == where), None)


def root_where(frame: dict[str, Any] | None) -> str:
    if not frame:
        return ""
    test = short_test(str(frame.get("test") or ""))
    over = f" over {binding_title(str(frame['binding']))}" if frame.get("binding") else ""
    return (f"frame {frame.get('frame')} of {frame.get('exchange') or 'the exchange'}{over}"
            + (f" in {test}" if test else ""))


def html_root(root: Root) -> str:
    """One root cause: its head first, the requirements its frame also failed under it (each keeps its status)."""
    if root.cause:  # a card that could not be read: what was tried, the likely fix, what follows from it
        members = "".join(html_requirement(m, role="member") for m in root.members)
        label = (f'<div class="members-label">on this agent {plural(len(root.members), "more requirement")} '
                 f'failed, each following from it:</div>{members}') if root.members else ""
        return (f'<div class="root grouped card-root" data-group="root"><div class="root-head"><strong>Root cause: '
                f'{esc(root.cause)}</strong><br>Likely fix: {esc(root.fix or "")}</div>'
                f'{html_requirement(root.head, role="head")}<div class="members">{label}</div></div>')
    if not root.members:
        return f'<div class="root" data-group="root">{html_requirement(root.head)}</div>'
    head = html_requirement(root.head, root_frame=root.frame, role="head")
    members = "".join(html_requirement(m, root_frame=same_frame(m, root.frame), role="member") for m in root.members)
    return (f'<div class="root grouped" data-group="root"><div class="root-head">one root cause, '
            f'<strong>{esc(root_where(root.frame))}</strong>: {len(root.entries)} requirements</div>{head}'
            f'<div class="members"><div class="members-label">its first frame also fails '
            f'{plural(len(root.members), "requirement")}:</div>{members}</div></div>')
