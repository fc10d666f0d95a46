"""IX-010: request_connection cuts the app at 80 and the reason at 280 characters (seed 004 · Connections).

Characters are Unicode code points. A cut counted in UTF-16 code units is NON_STRICT (with both
counts); a cut inside a character (a lone surrogate, U+FFFD) or one that is not a prefix of the text
fails. Whether the cut ends in "…" is not said for these fields: both are accepted and reported.
"""

from __future__ import annotations

from typing import Any

from ..framelog import FrameLog
from ..outcomes import Finding, Outcome
from . import RuleContext, ev_evidence, fail, ok, outcome, rule
from .ixview import SEED, IxView

LIMITS = {"app": 80, "reason": 280}
ELLIPSIS = "…"


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def judge_cut(given: str, got: Any, limit: int) -> tuple[str, str]:
    """("strict" | "utf16" | "bad", what was seen) for one cut field."""
    if not isinstance(got, str):
        return "bad", f"{got!r} is not a string"
    counts = f"{len(got)} code points, {utf16_len(got)} UTF-16 units (limit {limit}; the text had {len(given)} code points)"
    if any(0xD800 <= ord(c) <= 0xDFFF for c in got) or ("\ufffd" in got and "\ufffd" not in given):
        return "bad", f"the cut splits a character (lone surrogate or U+FFFD): {counts}"
    if len(given) <= limit:
        return ("strict", "not cut (within the limit)") if got == given else ("bad", f"{got!r} for {given!r}")
    body = got[:-1] if got.endswith(ELLIPSIS) else got
    if not given.startswith(body):
        return "bad", f"not a cut of the text: {counts}"
    mark = " ending in …" if body != got else " without …"
    if len(got) == limit or (body != got and len(body) == limit):
        return "strict", f"cut at {len(got)} code points{mark}"
    if utf16_len(got) == limit or (body != got and utf16_len(body) == limit):
        return "utf16", f"cut counted in UTF-16 code units{mark}: {counts}"
    return "bad", f"cut at neither {limit} code points nor {limit} UTF-16 units{mark}: {counts}"


@rule("IX-010")
def connection_cut(log: FrameLog, ctx: RuleContext) -> list[Finding]:
    view = IxView.of(log)
    if not view.extension:
        return []
    results: list[tuple[str, str, Any]] = []
    for pause in view.pauses:
        step = view.step(pause)
        if step is None or step.kind != "connection" or not isinstance(step.arg, dict):
            continue
        detail = (pause.interaction or {}).get("detail")
        detail = detail if isinstance(detail, dict) else {}
        for name, limit in LIMITS.items():
            given = step.arg.get(name)
            if isinstance(given, str) and len(given) > limit:
                verdict, seen = judge_cut(given, detail.get(name), limit)
                results.append((verdict, f"pause {pause.n} {name}: {seen}",
                                ev_evidence(pause.exchange, pause.event, f"{name}: {seen}")))
    if not results:
        return []
    text = "; ".join(r[1] for r in results)
    bad = [r for r in results if r[0] == "bad"]
    if bad:
        return [fail("IX-010", f"{text} ({SEED} · Connections: \"the app cut at 80 characters, the reason at 280\")",
                     [r[2] for r in bad])]
    marks = sorted({"ending in …" if "ending in …" in r[1] else "without …" for r in results})
    measured = {"cuts": [r[1] for r in results]}
    if any(r[0] == "utf16" for r in results):
        return [outcome("IX-010", Outcome.NON_STRICT, f"{text}: characters counted as UTF-16 code units, not "
                        "code points", [r[2] for r in results if r[0] == "utf16"], measured=measured,
                        reading="UTF-16 code units")]
    return [ok("IX-010", text, measured=measured, reading=f"code points, {' and '.join(marks)}")]


