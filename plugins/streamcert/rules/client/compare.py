"""A client's view compared with the case's expected one: each difference, tagged with the part of the view it is
in and, where the stream shows why, with what the client showed instead (stale, foreign, unended), and the
characters a text lost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...protocols import interactions_v1
from .printed import same, shown
from .served import STEP_FIELDS, Stream

# Parts of the view a difference can be in.
TASK_IDS, TASK_STATE, STATUS_TEXT, PLAN, ARTIFACT, PROMPT, OTHER = (
    "task ids", "task state", "status text", "plan", "artifact", "interaction prompt", "other")


STALE, FOREIGN, UNENDED = "stale", "foreign", "unended"


ARTIFACT_FIELDS = ("artifactId", "name", "text", "data")
ELLIPSIS = "…"


# -- the view compared with the expected one --------------------------------------------------------------

@dataclass(frozen=True)
class Diff:
    """One place where the view differs from the case's expected view."""

    path: str  # "plan", "task.state", "artifacts[test-log]", …
    part: str
    expected: Any
    got: Any
    why: str = ""  # STALE, FOREIGN, UNENDED or ""
    artifact: Any = None
    frames: tuple[int, ...] = ()  # the frames whose value the view shows instead (STALE, FOREIGN)

    def describe(self, read_to: int | None = None) -> str:
        """The difference in words; the frames it cites are those up to `read_to` (the last frame the client
        read, when a stop shows it: blame cites no frame the client never read)."""
        cited = [n for n in self.frames if read_to is None or n <= read_to]
        frames = ", ".join(map(str, cited[:3]))
        instead = {STALE: f" (what the task's own frame {frames} carried, not the latest)",
                   FOREIGN: f" (what frame {frames}, of another task or context, carried)"}.get(self.why, "") \
            if cited else ""
        if self.why == UNENDED:  # no frame to cite: the block was never an event
            instead = " (what the block the stream ended inside carried: no blank line ended it, so it is no event)"
        # the note says where the shown value came from: it stands beside that value, not the expected one
        return f"{self.path}: shown {shown(self.got)}{instead}, expected {shown(self.expected)}"


@dataclass
class Compared:
    diffs: list[Diff] = field(default_factory=list)
    readings: list[str] = field(default_factory=list)


def _member(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else None


def _same_text(want: Any, got: Any, readings: list[str], where: str) -> bool:
    """A label or note: equal, or the cut's … written as three full stops (a reading)."""
    if same(want, got):
        return True
    if isinstance(want, str) and isinstance(got, str) and want.endswith(ELLIPSIS) and got == want[:-1] + "...":
        readings.append(f"{where}: the cut's … shown as three full stops")
        return True
    return False


def same_plan(want: Any, got: Any, readings: list[str] | None = None) -> bool:
    """Plans as the view shows them: steps in order, each label, state and note (absent equals null)."""
    if want is None or got is None or not isinstance(want, list) or not isinstance(got, list):
        return same(want, got) or (want is None and got is None)
    if len(want) != len(got):
        return False
    notes: list[str] = []
    for i, (w, g) in enumerate(zip(want, got)):
        if not isinstance(w, dict) or not isinstance(g, dict):
            return False
        for key in dict.fromkeys((*STEP_FIELDS, *w)):
            if key in ("label", "note"):
                if not _same_text(w.get(key), g.get(key), notes, f"step {i + 1} {key}"):
                    return False
            elif not same(w.get(key), g.get(key)):
                return False
    if readings is not None:
        readings.extend(notes)
    return True


# -- what a difference looks like ------------------------------------------------------------------------
# How the rules tell one cause of a difference from another (rules/client/client.py, BLAME). Each reads the expected
# and the shown value only.

REPLACEMENT = "\ufffd"


def _text_lost(want: str, got: str) -> list[str] | None:
    """The characters of `want` that `got` leaves out or shows as U+FFFD (what a decoder puts for the bytes of
    a character split between chunks and decoded apart), when that is all that differs; else None."""
    lost: list[str] = []
    i = j = 0
    while i < len(want):
        if j < len(got) and got[j] == want[i]:
            j += 1
        else:
            lost.append(want[i])
            while j < len(got) and got[j] == REPLACEMENT:
                j += 1
        i += 1
    while j < len(got) and got[j] == REPLACEMENT:
        j += 1
    return lost if j == len(got) and got != want else None


def characters_lost(want: Any, got: Any) -> bool:
    """`got` is `want` with characters outside ASCII left out or shown as U+FFFD, and nothing else changed."""
    if isinstance(want, str) and isinstance(got, str):
        lost = _text_lost(want, got)
        return lost is not None and all(not c.isascii() for c in lost)
    if isinstance(want, list) and isinstance(got, list):
        return len(want) == len(got) and any(not same(w, g) for w, g in zip(want, got)) and \
            all(same(w, g) or characters_lost(w, g) for w, g in zip(want, got))
    if isinstance(want, dict) and isinstance(got, dict):
        changed = [k for k in want if not same(want[k], got.get(k))]
        return bool(changed) and all(characters_lost(want[k], got.get(k)) for k in changed)
    return False


def carried_lost(want: Any, got: Any) -> bool:
    """`got` is `want` with parts left out: nothing shown, characters or the end of a text missing, items of a
    list missing (those kept in order and unchanged), members of an object missing or so reduced."""
    if want is not None and got is None:
        return True
    if isinstance(want, str) and isinstance(got, str):
        return _text_lost(want, got) is not None
    if isinstance(want, list) and isinstance(got, list):
        if len(got) < len(want):
            j = 0
            for w in want:
                if j < len(got) and same(w, got[j]):
                    j += 1
            return j == len(got)
        return len(got) == len(want) and any(not same(w, g) for w, g in zip(want, got)) and \
            all(same(w, g) or carried_lost(w, g) for w, g in zip(want, got))
    if isinstance(want, dict) and isinstance(got, dict):
        changed = [k for k in want if not same(want[k], got.get(k))]
        return bool(changed) and all(carried_lost(want[k], got.get(k)) for k in changed)
    return False


class ViewComparison:
    """Compares a client's view with the case's expected view, knowing the stream it was served."""

    def __init__(self, stream: Stream) -> None:
        self.stream = stream

    def compare(self, expected: dict[str, Any], view: dict[str, Any]) -> Compared:
        out = Compared()
        for key, want in expected.items():
            got = view.get(key)
            if key == "task":
                self._task(want, got, out)
            elif key == "plan":
                self._plan(want, got, out)
            elif key == "artifacts":
                self._artifacts(want, got, out)
            elif key == "statusText":
                if not same(want, got):
                    why, frames = self._why(got, lambda f: f.text, same)
                    out.diffs.append(Diff(key, STATUS_TEXT, want, got, why, frames=frames))
            elif key == "interaction":
                self._interaction(want, got, out)
            elif not same(want, got):
                out.diffs.append(Diff(key, OTHER, want, got))
        return out

    def _task(self, want: Any, got: Any, out: Compared) -> None:
        if not isinstance(want, dict):
            if not same(want, got):
                out.diffs.append(Diff("task", OTHER, want, got))
            return
        for key, value in want.items():
            seen = _member(got, key)
            if not same(value, seen):
                part = TASK_IDS if key in ("id", "contextId") else TASK_STATE if key == "state" else OTHER
                why, frames = self._why(seen, lambda f: f.state, same) if key == "state" else ("", ())
                out.diffs.append(Diff(f"task.{key}", part, value, seen, why, frames=frames))

    def _why(self, got: Any, value_of: Any, equal: Any) -> tuple[str, tuple[int, ...]]:
        """(FOREIGN, the frames) when `got` is what frames of another task carried and none of the task's own;
        (STALE, the frames) when it is what other frames of the task carried; (UNENDED, ()) when only the block
        a stream ended inside carried it (never an event); ("", ()) otherwise."""
        if got is None:
            return "", ()
        own = tuple(f.n for f in self.stream.own if value_of(f) is not None and equal(value_of(f), got))
        foreign = tuple(f.n for f in self.stream.frames
                        if self.stream.foreign(f) and value_of(f) is not None and equal(value_of(f), got))
        if own:
            return STALE, own
        if foreign:
            return FOREIGN, foreign
        unended = any(value_of(f) is not None and equal(value_of(f), got) for f in self.stream.unended)
        return (UNENDED, ()) if unended else ("", ())

    def _plan(self, want: Any, got: Any, out: Compared) -> None:
        readings: list[str] = []
        if same_plan(want, got, readings):
            out.readings += readings
            return
        # The view may show the plan of an update stamped alike with the latest: either is the latest.
        tied = self.stream.latest(self.stream.plans) if self.stream.disordered else []
        if len(tied) > 1 and any(same_plan(f.steps, got) for f in tied):
            out.readings.append("updates stamped alike: the plan of the other one shown")
            return
        why, frames = self._why(got, lambda f: f.steps, same_plan)
        out.diffs.append(Diff("plan", PLAN, want, got, why, frames=frames))

    def _artifacts(self, want: Any, got: Any, out: Compared) -> None:
        wanted = {a.get("artifactId"): a for a in want if isinstance(a, dict)} if isinstance(want, list) else {}
        found: dict[Any, list[Any]] = {}
        for a in got if isinstance(got, list) else []:
            aid = _member(a, "artifactId")
            found.setdefault(aid if isinstance(aid, (str, int)) else None, []).append(a)
        foreign = {f.artifact_id: f.n for f in self.stream.frames if self.stream.foreign(f)}
        for aid, exp in wanted.items():
            have = found.get(aid, [])
            if len(have) != 1:
                out.diffs.append(Diff(f"artifacts[{aid}]", ARTIFACT, exp, have[0] if len(have) == 1 else
                                      (have or None), artifact=aid))
                continue
            bad = [k for k in dict.fromkeys((*ARTIFACT_FIELDS, *exp)) if not same(exp.get(k), _member(have[0], k))]
            if bad:
                got_value = _member(have[0], bad[0])
                mixed = self._foreign_chunks(exp.get(bad[0]), got_value)
                out.diffs.append(Diff(f"artifacts[{aid}].{bad[0]}", ARTIFACT, exp.get(bad[0]), got_value,
                                      FOREIGN if mixed else "", aid, mixed))
        extras = [aid for aid in found if aid not in wanted and aid not in foreign]
        for aid in (aid for aid in found if aid not in wanted and aid in foreign):
            out.diffs.append(Diff(f"artifacts[{aid}]", ARTIFACT, None, found[aid][0], FOREIGN, aid, (foreign[aid],)))
        if extras:  # artifacts no frame of the task carried: one difference, however many
            out.diffs.append(Diff(f"artifacts[{', '.join(map(str, extras[:3]))}{', …' if len(extras) > 3 else ''}]",
                                  ARTIFACT, None, found[extras[0]][0] if len(extras) == 1 else
                                  f"{len(extras)} artifacts no frame of the task carried",
                                  artifact=extras[0]))

    def _foreign_chunks(self, want: Any, got: Any) -> tuple[int, ...]:
        """The frames of another task whose chunk text the shown text holds and the expected does not."""
        if not isinstance(got, str):
            return ()
        return tuple(f.n for f in self.stream.frames if self.stream.foreign(f) and f.chunk_text
                     and f.chunk_text in got and not (isinstance(want, str) and f.chunk_text in want))

    def _interaction(self, want: Any, got: Any, out: Compared) -> None:
        if not isinstance(want, dict):
            if not same(want, got):
                out.diffs.append(Diff("interaction", OTHER, want, got))
            return
        for key, value in want.items():
            seen = _member(got, key)
            if not same(value, seen):
                why, frames = self._why(seen, lambda f, k=key: f.interaction.get(k) if f.interaction else None, same)
                out.diffs.append(Diff(f"interaction.{key}", PROMPT if key == interactions_v1.PROMPT else OTHER,
                                      value, seen, why, frames=frames))
