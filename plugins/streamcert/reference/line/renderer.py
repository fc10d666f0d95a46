"""The reference progress-line renderer (seed 003 §2–§3): the line every client draws.

`python -m streamcert.reference.line [--fault NAME]` reads one JSON object per line on stdin,
`{"progress": {…} | null, "now": MS}` and, optionally, `"form": "text"` for the text alone (the
form for places with no room), and writes exactly one line per object, flushed at once (docs/contracts.md §7).
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
from typing import TYPE_CHECKING, Any

from ...protocols.progress import ENDINGS  # stopped and failed are drawn as their text alone
from ..faults import check_fault, fault_argument, subclass_variants, variant

if TYPE_CHECKING:
    from ...wire.inprocess import Program

SEPARATOR = " · "  # progress.line: "{{text}} · {{elapsed}}"

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
    """Draws the line of each progress object from that object alone: a client holds no state."""

    fault: str | None = None  # the fault this renderer draws (faults.FAULTS; None: the correct one)

    # -- fields and numbers ------------------------------------------------------------------
    def field(self, progress: dict[str, Any], name: str) -> Any:
        """A field's value, or None when it is not known (absent or null)."""
        return progress.get(name)

    def integer(self, value: Any) -> str:
        return value if isinstance(value, str) else f"{int(value):,}"

    def rate(self, value: Any) -> str:
        return value if isinstance(value, str) else f"{value:,.1f}"

    def percent(self, done: int, total: int) -> int:
        return done * 100 // total  # floor(done × 100 / total), exact on integers

    def fixed(self, table: dict[str, str], word: Any) -> str:
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
        return TEXTS.get(phase, str(phase))

    def person_what(self, p: dict[str, Any]) -> str:
        what, tool = self.field(p, "what"), self.field(p, "tool")
        if what == "approval":
            return "an approval" if tool is None else f"allow {tool}?"
        return self.fixed(PERSON_WHAT, what)

    def countdown(self, p: dict[str, Any], now: int) -> int:
        """retrying's `in`, counted down from `since` in whole seconds, never below 0."""
        return max(0, int(p.get("in", 0)) - self.seconds(p, now))

    # -- elapsed and the line ----------------------------------------------------------------
    def since_of(self, p: dict[str, Any], now: int) -> int:
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
            return f"{minutes}m {secs:02d}s"
        hours, rest = divmod(seconds, 3600)
        return f"{hours}h {rest // 60:02d}m"

    def with_elapsed(self, progress: dict[str, Any], form: str) -> bool:
        """The text-alone form, and stopped and failed, are drawn without elapsed."""
        return form != "text" and progress.get("phase") not in ENDINGS

    def line(self, progress: dict[str, Any] | None, now: int, form: str = "line") -> str:
        if progress is None:
            return ""  # no progress: nothing to draw
        text = self.text_of(progress, now)
        seconds = self.seconds(progress, now)  # read in either form: an unreadable since draws an empty line
        if not self.with_elapsed(progress, form):
            return text
        return text + SEPARATOR + self.elapsed(seconds)


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


def renderer_for(fault: str | None = None) -> Renderer:
    """The correct renderer, or the variant that draws `fault`; UnknownFault for a name FAULTS does not declare."""
    check_fault(fault)
    return variant(fault, Renderer, VARIANTS)()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m streamcert.reference.line")
    parser.add_argument("--fault", type=fault_argument("line"), metavar="NAME",
                        help="draw lines as this fault variant does (`streamcert serve --list-faults`: the LINE- ones)")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(encoding="utf-8")
    sys.stdin.reconfigure(encoding="utf-8")
    serve_lines(renderer_for(args.fault))
    return 0


def in_process(fault: str | None = None) -> Program:
    """The program `targets.reference_command("line", fault)` runs, played in the suite's process
    (reference/in_process.py, wire/inprocess.py): `serve_lines` in a thread, on the lines the suite writes. (Imported
    here: the command does not need the suite's wire.)"""
    from ...wire.inprocess import in_thread

    renderer = renderer_for(fault)

    def main(stdin: Any, out: Any, err: Any) -> int:
        serve_lines(renderer, stdin, out)
        return 0

    return in_thread(main)


# -- fault variants: each a renderer that draws one thing as a wrong client does ---------------------
VARIANTS, _variant = subclass_variants()


@_variant("texts-paraphrased")
class _TextsParaphrased(Renderer):
    def text_of(self, p: dict[str, Any], now: int) -> str:
        return "Compacting conversation" if p.get("phase") == "compacting" else super().text_of(p, now)


@_variant("absent-guessed")
class _AbsentGuessed(Renderer):
    def field(self, progress: dict[str, Any], name: str) -> Any:
        value = progress.get(name)
        return 0 if value is None and name in ("ahead", "rate") else value  # a guess where it is not known


@_variant("raw-fixed-words")
class _RawFixedWords(Renderer):
    def fixed(self, table: dict[str, str], word: Any) -> str:
        return str(word)

    def person_what(self, p: dict[str, Any]) -> str:
        return self.fixed(PERSON_WHAT, self.field(p, "what"))


@_variant("percent-rounded")
class _PercentRounded(Renderer):
    def percent(self, done: int, total: int) -> int:
        return round(done * 100 / total)


@_variant("integers-as-decimals")
class _IntegersAsDecimals(Renderer):
    def integer(self, value: Any) -> str:
        return value if isinstance(value, str) else f"{value:,.1f}"


@_variant("rate-unformatted")
class _RateUnformatted(Renderer):
    def rate(self, value: Any) -> str:
        return value if isinstance(value, str) else str(value)


@_variant("no-elapsed")
class _NoElapsed(Renderer):
    def with_elapsed(self, progress: dict[str, Any], form: str) -> bool:
        return False


@_variant("elapsed-unpadded")
class _ElapsedUnpadded(Renderer):
    def elapsed(self, seconds: int) -> str:
        if seconds < 60:
            return f"{seconds}s"
        if seconds < 3600:
            minutes, secs = divmod(seconds, 60)
            return f"{minutes}m {secs}s"
        hours, rest = divmod(seconds, 3600)
        return f"{hours}h {rest // 60}m"


@_variant("frozen-elapsed")
class _FrozenElapsed(Renderer):
    """A line drawn once for an object is never redrawn."""

    def __init__(self) -> None:
        self.drawn: dict[str, str] = {}

    def line(self, progress: dict[str, Any] | None, now: int, form: str = "line") -> str:
        if progress is None:
            return super().line(progress, now, form)
        key = json.dumps([progress, form], sort_keys=True)
        if key not in self.drawn:
            self.drawn[key] = super().line(progress, now, form)
        return self.drawn[key]


@_variant("countdown-below-zero")
class _CountdownBelowZero(Renderer):
    def countdown(self, p: dict[str, Any], now: int) -> int:
        return int(p.get("in", 0)) - self.seconds(p, now)


@_variant("stopped-with-elapsed")
class _StoppedWithElapsed(Renderer):
    def with_elapsed(self, progress: dict[str, Any], form: str) -> bool:
        return form != "text"


@_variant("null-drawn")
class _NullDrawn(Renderer):
    """A renderer that interpolates JSON text."""

    def field(self, progress: dict[str, Any], name: str) -> Any:
        return "null" if name in progress and progress[name] is None else progress.get(name)

    def line(self, progress: dict[str, Any] | None, now: int, form: str = "line") -> str:
        return "null" if progress is None else super().line(progress, now, form)


@_variant("text-form-ignored")
class _TextFormIgnored(Renderer):
    def with_elapsed(self, progress: dict[str, Any], form: str) -> bool:
        return progress.get("phase") not in ENDINGS


@_variant("stateful-since")
class _StatefulSince(Renderer):
    """A client that times a phase itself, across objects: it keeps the since of the object before
    when the phase is the same."""

    def __init__(self) -> None:
        self.last: tuple[str, int] | None = None  # (phase, since) of the object before

    def since_of(self, p: dict[str, Any], now: int) -> int:
        if self.last and self.last[0] == p.get("phase"):
            return self.last[1]
        return super().since_of(p, now)

    def line(self, progress: dict[str, Any] | None, now: int, form: str = "line") -> str:
        out = super().line(progress, now, form)
        if progress is not None:
            self.last = (progress.get("phase"), self.since_of(progress, now))
        return out
