"""Work on stored cassettes: `streamcert check` (the same rules, offline) and `streamcert diff`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from deepdiff import DeepDiff

from .catalogue import load_catalogue, load_scenario
from .framelog import Exchange, FrameLog
from .rules import RuleContext, judge
from .targets import Target
from .wallclock import now


def check_cassettes(paths: list[Path], report_dir: Path) -> dict[str, Any]:
    from .report.aggregate import Aggregator, build_report
    from .report.summary import terminal_summary
    from .report.writers import write_all

    started = now()
    agg = Aggregator()
    profiles: set[str] = set()
    targets: set[str] = set()
    for path in paths:
        log = FrameLog.load(path)
        scenario = load_scenario(log.scenario)
        profiles.add(scenario.profile)
        targets.add(log.target)
        agg.add(f"cassette:{path}::{scenario.id}", judge(log, scenario.requirements, RuleContext(scenario=scenario)))
    report = build_report(agg, selected_profiles=profiles, level="may",
                          target={**Target(a2a_url=", ".join(sorted(t for t in targets if t)) or None).report_json(),
                                  "cassettes": [str(p) for p in paths]},
                          started=started, finished=now(), catalogue=load_catalogue())
    write_all(report, report_dir)
    for line in terminal_summary(report):
        print(line)
    print(f"report: {report_dir}/compatibility.json")
    return report


# -- diff ------------------------------------------------------------------------------------------------

UUIDISH = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
ORIGIN = re.compile(r"^(https?://)[^/]+")  # host and port differ between runs of a local server
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
# Values that differ on every run by design: compared by their shape, not their value.
VOLATILE_KEYS = {"id", "taskId", "contextId", "messageId", "nextPageToken", "timestamp"}


def shape_of(value: Any, key: str | None = None) -> Any:
    """The value with ids and timestamps replaced by a description of their form."""
    if isinstance(value, dict):
        return {k: shape_of(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [shape_of(v) for v in value]
    if isinstance(value, str):
        if TIMESTAMP.match(value):
            ms = "." in value and len(value.split(".")[1].rstrip("Z").split("+")[0].split("-")[0]) or 0
            return f"<timestamp {'Z' if value.endswith('Z') else 'offset'} {ms} fraction digits>"
        if UUIDISH.match(value):
            return "<uuid>"
        if ORIGIN.match(value):
            return ORIGIN.sub(r"\1<host>", value)
        if key in VOLATILE_KEYS:
            return "<string>" if value else "<empty string>"
    return value


def _view(ex: Exchange) -> dict[str, Any]:
    if ex.is_sse:
        frames = [shape_of(ev.payload) if ev.json()[1] is None else {"raw": ev.data} for ev in ex.data_events()]
        body: Any = frames
    else:
        value, err = ex.json()
        body = shape_of(value) if err is None else {"raw": ex.first_bytes(200)}
    return {"status": ex.status, "media_type": ex.media_type, "end": ex.end, "body": body}


def diff_cassettes(old_path: Path, new_path: Path) -> list[str]:
    old, new = FrameLog.load(old_path), FrameLog.load(new_path)
    if old.scenario != new.scenario:
        raise ValueError(f"the cassettes are of different scenarios ({old.scenario} and {new.scenario})")
    lines = []
    old_labels = [ex.label for ex in old.exchanges]
    new_labels = [ex.label for ex in new.exchanges]
    if old_labels != new_labels:
        lines.append(f"exchanges: {old_labels} → {new_labels}")
    for label in dict.fromkeys(old_labels + new_labels):
        a, b = old.get(label), new.get(label)
        if a is None or b is None:
            lines.append(f"{label}: only in {'new' if a is None else 'old'}")
            continue
        delta = DeepDiff(_view(a), _view(b), verbose_level=2)
        for kind, changes in delta.items():
            items = changes.items() if isinstance(changes, dict) else ((c, None) for c in changes)
            for where, change in items:
                lines.append(f"{label}: {kind} {where}: {_short(change)}")
    return lines


def _short(change: Any) -> str:
    if isinstance(change, dict) and "old_value" in change:
        return f"{change['old_value']!r} → {change['new_value']!r}"[:300]
    return repr(change)[:300] if change is not None else ""
