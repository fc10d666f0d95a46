"""The reference progress-line renderer (seed 003 §2–§3): the line every client draws.

`python -m streamcert.reference.line [--fault NAME]` reads one JSON object per line on stdin,
`{"progress": {…} | null, "now": MS}` and, optionally, `"form": "text"` for the text alone (the
form for places with no room), and writes exactly one line per object, flushed at once (DESIGN §7).
Input it cannot read draws an empty line, so its output stays one line per input.

Choices where the seed leaves room (the catalogue lists them as readings):
- the locale is en: integers grouped by thousands with "," (12,800), `rate` with one decimal;
- a fixed word draws the words it stands for (`busy` → "it serves one request at a time and is
  answering another", `person` → "by you", `approval` without `tool` → "an approval");
- elapsed past a day keeps counting hours ("26h 03m");
- no progress (`null`) draws an empty line: there is nothing to draw.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .options import Options

SEPARATOR = " · "  # progress.line: "{{text}} · {{elapsed}}"
TERMINAL = ("stopped", "failed")  # drawn as their text alone

# progress.texts: the base text of each phase (its variant without an optional field is in text_of)
TEXTS = {
    "queued": "Queued: {ahead} ahead",
    "waiting_for_model": "Waiting for {model}: {reason}",
    "loading_model": "Loading {model}",
    "reading_prompt": "Reading the prompt: {done} / {total} tokens ({percent}%)",
    "thinking": "Thinking",
    "writing": "Writing: {rate} tok/s",
    "running_tool": "Running {tool}: {what}",
    "waiting_for_person": "Waiting for you: {what}",
    "waiting_for_subagents": "Waiting for subagents: {running} running",
    "compacting": "Compacting the conversation",
    "retrying": "Retrying in {in} s: {reason}",
    "stopped": "Stopped: {reason}",
    "failed": "Failed: {reason}",
}

# The fixed words a field stands for: progress.reason, progress.what, progress.stopped_reason.
MODEL_REASONS = {"busy": "it serves one request at a time and is answering another",
                 "slots": "all its slots are in use", "group": "its server holds another model now"}
PERSON_WHAT = {"question": "a question", "plan": "the plan"}  # approval: see person_what()
STOPPED_REASONS = {"person": "by you", "steps": "step limit", "budget": "budget"}


class Renderer:
    """Draws lines; holds state only for the fault variants that need it (a real client holds none)."""

    def __init__(self, fault: str | None = None) -> None:
        self.options = Options(fault=fault)
        self._memo: dict[str, str] = {}
        self._last: tuple[str, int] | None = None  # (phase, since) of the previous object

    def has(self, name: str) -> bool:
        return self.options.has(name)

    # -- fields and numbers ------------------------------------------------------------------
    def field(self, progress: dict[str, Any], name: str) -> Any:
        """A field's value, or None when it is not known (absent or null)."""
        if self.has("null-drawn") and name in progress and progress[name] is None:
            return "null"  # a renderer that interpolates JSON text
        value = progress.get(name)
        if value is None and self.has("absent-guessed") and name in ("ahead", "rate"):
            return 0  # a guess where the field is not known
        return value

    def integer(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        if self.has("integers-as-decimals"):
            return f"{value:,.1f}"
        return f"{int(value):,}"

    def rate(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        if self.has("rate-unformatted"):
            return str(value)
        return f"{value:,.1f}"

    def percent(self, done: int, total: int) -> int:
        if self.has("percent-rounded"):
            return round(done * 100 / total)
        return done * 100 // total  # floor(done × 100 / total), exact on integers

    def fixed(self, table: dict[str, str], word: Any) -> str:
        if self.has("raw-fixed-words"):
            return str(word)
        return table.get(word, str(word))

    # -- the text ----------------------------------------------------------------------------
    def text_of(self, p: dict[str, Any], now: int) -> str:
        phase = p.get("phase")
        f = self.field
        if phase == "queued":
            ahead = f(p, "ahead")
            return "Queued" if ahead is None else TEXTS[phase].format(ahead=self.integer(ahead))
        if phase == "waiting_for_model":
            return TEXTS[phase].format(model=f(p, "model"), reason=self.fixed(MODEL_REASONS, f(p, "reason")))
        if phase == "loading_model":
            return TEXTS[phase].format(model=f(p, "model"))
        if phase == "reading_prompt":
            done, total = f(p, "done"), f(p, "total")
            if done is None or total is None or isinstance(total, str) or isinstance(done, str):
                return "Reading the prompt"
            return TEXTS[phase].format(done=self.integer(done), total=self.integer(total),
                                       percent=self.integer(self.percent(done, total)))
        if phase == "writing":
            rate = f(p, "rate")
            return "Writing" if rate is None else TEXTS[phase].format(rate=self.rate(rate))
        if phase == "running_tool":
            what = f(p, "what")
            return f"Running {f(p, 'tool')}" if what is None else TEXTS[phase].format(tool=f(p, "tool"), what=what)
        if phase == "waiting_for_person":
            return TEXTS[phase].format(what=self.person_what(p))
        if phase == "waiting_for_subagents":
            return TEXTS[phase].format(running=self.integer(f(p, "running")))
        if phase == "retrying":
            return TEXTS[phase].format(**{"in": self.integer(self.countdown(p, now)), "reason": f(p, "reason")})
        if phase == "stopped":
            reason = f(p, "reason")
            return "Stopped" if reason is None else TEXTS[phase].format(reason=self.fixed(STOPPED_REASONS, reason))
        if phase == "failed":
            return TEXTS[phase].format(reason=f(p, "reason"))
        if phase == "compacting" and self.has("texts-paraphrased"):
            return "Compacting conversation"
        return TEXTS.get(phase, str(phase))

    def person_what(self, p: dict[str, Any]) -> str:
        what, tool = self.field(p, "what"), self.field(p, "tool")
        if what == "approval" and not self.has("raw-fixed-words"):
            return "an approval" if tool is None else f"allow {tool}?"
        return self.fixed(PERSON_WHAT, what)

    def countdown(self, p: dict[str, Any], now: int) -> int:
        """retrying's `in`, counted down from `since` in whole seconds, never below 0."""
        left = int(p.get("in", 0)) - self.seconds(p, now)
        return left if self.has("countdown-below-zero") else max(0, left)

    # -- elapsed and the line ----------------------------------------------------------------
    def since_of(self, p: dict[str, Any], now: int) -> int:
        if self.has("stateful-since") and self._last and self._last[0] == p.get("phase"):
            return self._last[1]  # a client that times a phase itself, across objects
        return int(p.get("since", now))

    def seconds(self, p: dict[str, Any], now: int) -> int:
        """now − since in whole seconds (a clock behind `since` shows 0)."""
        return max(0, (now - self.since_of(p, now)) // 1000)

    def elapsed(self, seconds: int) -> str:
        """As a ticking clock writes durations: 5s, 1m 05s, 1h 02m (hours keep counting past a day)."""
        if seconds < 60:
            return f"{seconds}s"
        if seconds < 3600:
            minutes, secs = divmod(seconds, 60)
            return f"{minutes}m {secs}s" if self.has("elapsed-unpadded") else f"{minutes}m {secs:02d}s"
        hours, rest = divmod(seconds, 3600)
        return f"{hours}h {rest // 60}m" if self.has("elapsed-unpadded") else f"{hours}h {rest // 60:02d}m"

    def line(self, progress: dict[str, Any] | None, now: int, form: str = "line") -> str:
        if progress is None:
            return "null" if self.has("null-drawn") else ""
        key = json.dumps([progress, form], sort_keys=True)
        if self.has("frozen-elapsed") and key in self._memo:
            return self._memo[key]  # a line drawn once and never redrawn
        text = self.text_of(progress, now)
        if form == "text" and not self.has("text-form-ignored"):
            out = text
        elif progress.get("phase") in TERMINAL and not self.has("stopped-with-elapsed"):
            out = text
        elif self.has("no-elapsed"):
            out = text
        else:
            out = text + SEPARATOR + self.elapsed(self.seconds(progress, now))
        self._memo[key] = out
        self._last = (progress.get("phase"), self.since_of(progress, now))
        return out


def render(progress: dict[str, Any] | None, now: int, form: str = "line") -> str:
    """The line (or, with form "text", the text alone) the reference draws for one object."""
    return Renderer().line(progress, now, form)


def serve_lines(renderer: Renderer, stdin: Any = None, stdout: Any = None) -> None:
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    for raw in stdin:
        try:
            item = json.loads(raw)
            out = renderer.line(item.get("progress"), int(item["now"]), item.get("form", "line"))
        except (ValueError, KeyError, TypeError, AttributeError):
            out = ""
        stdout.write(out.replace("\n", " ") + "\n")
        stdout.flush()


def main(argv: list[str] | None = None) -> int:
    from .faults import FAULTS

    parser = argparse.ArgumentParser(prog="python -m streamcert.reference.line")
    parser.add_argument("--fault", choices=sorted(n for n, f in FAULTS.items() if f.target == "line"),
                        help="draw lines as this fault variant does")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(encoding="utf-8")
    sys.stdin.reconfigure(encoding="utf-8")
    serve_lines(Renderer(args.fault))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
