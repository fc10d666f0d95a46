"""The few lines printed on the console at the end of a run."""

from __future__ import annotations

from typing import Any

from ..outcomes import Outcome
from ..protocols.script import NEEDS_SCRIPT
from .aggregate import untested_over
from .common import binding_counts, binding_title, certified_bindings, not_certified_note, over_text, verdict_claim
from .roots import Root, card_root

WHY_LIMIT = 160
UNTESTED_IDS = 10  # requirements named in the line of those not tested over a certified binding
DEPENDENT_IDS = 12  # requirements named under a card that could not be read


def one_line_why(message: str) -> str:
    line = message.splitlines()[0].strip() if message.strip() else "(no message)"
    return line if len(line) <= WHY_LIMIT else line[: WHY_LIMIT - 1] + "…"


def counts_text(counts: dict[str, int]) -> str:
    nonzero = [f"{count} {outcome}" for outcome, count in counts.items() if count]
    return ", ".join(nonzero) if nonzero else "none"


def level_counts_line(level: str, counts: dict[str, int]) -> str:
    return f"  {level:<7}" + counts_text(counts)


def requirement_line(entry: dict[str, Any]) -> str:
    why = one_line_why(entry["message"])
    if entry["status"] == Outcome.ERROR.value:
        why = f"ERROR: {why}"
    if entry.get("baseline") == "expected":
        reason = entry.get("baseline_reason")
        why += " [expected by baseline" + (f": {reason}" if reason else "") + "]"
    elif entry.get("baseline_scenarios"):  # scoped to other scenarios than the ones that failed it
        why += f" [the baseline expects it only in {', '.join(entry['baseline_scenarios'])}]"
    over = over_text(entry)
    if over:
        why += f" [over {over}]"
    return f"  {entry['id']}  {entry['title']} — {why}"


def binding_lines(report: dict[str, Any]) -> list[str]:
    """One line per binding: a certified one's counts, or why it was not certified; then the MUST requirements
    not tested over a certified binding (they keep the verdict from PASS)."""
    given = report.get("bindings")
    if given is None:
        return []
    counts = binding_counts(report)
    lines = [f"  binding {binding_title(b):<10}" + counts_text(counts[b]) for b in certified_bindings(report)]
    lines += [f"  binding {binding_title(b):<10}not certified: {one_line_why(why)}"
              for b, why in (given.get("skipped") or {}).items()]
    untested = [e for e in report["requirements"] if e["level"] == "MUST" and untested_over(e)]
    if untested:
        named = ", ".join(f"{e['id']} ({', '.join(untested_over(e))})" for e in untested[:UNTESTED_IDS])
        more = f" and {len(untested) - UNTESTED_IDS} more" if len(untested) > UNTESTED_IDS else ""
        lines.append(f"MUST requirements not tested over a certified binding ({len(untested)}): {named}{more}")
    return lines


JUDGED = (Outcome.PASS, Outcome.FAIL, Outcome.NON_STRICT, Outcome.WARNING)


def card_lines(card: Root) -> list[str]:
    """A card that could not be read, said once: the URL tried, the likely fix, the failures that depend on it."""
    lines = [f"root cause: {card.cause}", f"  likely fix: {card.fix}"]
    if card.members:
        named = ", ".join(e["id"] for e in card.members[:DEPENDENT_IDS])
        more = f" and {len(card.members) - DEPENDENT_IDS} more" if len(card.members) > DEPENDENT_IDS else ""
        lines.append(f"  {len(card.members)} other failure(s) on this agent follow from it: {named}{more}")
    return lines


def terminal_summary(report: dict[str, Any]) -> list[str]:
    entries = report["requirements"]
    lines = [f"streamcert verdict: {verdict_claim(report)}"]
    if report.get("interrupted"):
        lines.append(f"interrupted: {report['interrupted']}")
    if note := not_certified_note(report):
        lines.append(f"  {note}")
    if need := sum(e["status"] == Outcome.NOT_TESTED.value and NEEDS_SCRIPT in (e.get("message") or "")
                   for e in entries):  # judged as it is (--prompt): what was judged, and what only a script can show
        judged = sum(Outcome(e["status"]) in JUDGED for e in entries)
        lines.append(f"observed: {judged} requirements judged without a script; {need} need a script")
    failures = [e for e in entries if Outcome(e["status"]).is_failure]
    card = card_root(failures, (report.get("target") or {}).get("a2a")) if not report.get("could_not_run") else None
    if card is not None:  # the cause of (nearly) everything below: first
        lines += card_lines(card)
        taken = {id(e) for e in card.entries}
        failures = [e for e in failures if id(e) not in taken]
    lines += [level_counts_line(level, counts) for level, counts in report["summary"].items()]
    lines += binding_lines(report)
    if report.get("could_not_run"):  # one reason for every requirement: said once
        errors = sum(e["status"] == Outcome.ERROR.value for e in entries)
        lines.append(f"could not run: {one_line_why(report['could_not_run'])}")
        lines.append(f"ERROR: {errors} (every selected requirement, for that reason)")
        return lines

    if failures:
        lines.append(f"{'other ' if card else ''}FAIL/ERROR ({len(failures)}):")
        lines += [requirement_line(e) for e in failures]
    if report.get("stale_baseline"):
        lines.append("stale baseline entries (now passing): " + ", ".join(report["stale_baseline"]))
    warnings = [e for e in entries if e["status"] == Outcome.WARNING.value]
    if warnings:
        lines.append(f"WARNING ({len(warnings)}):")
        lines += [requirement_line(e) for e in warnings]
    if report.get("unknown_findings"):
        ids = ", ".join(item["id"] for item in report["unknown_findings"])
        lines.append(f"findings on ids not in the catalogue (harness bug): {ids}")

    regressions = report.get("regressions")
    if regressions:
        found = regressions.get("found") or []
        lines.append(f"regressions against {regressions['against']}: {len(found)} of "
                     f"{len(regressions.get('compared') or [])} scenario(s) differ"
                     + (" (the run fails)" if found else ""))
        for item in found:
            lines.append(f"  {item['scenario']}: {item['differences']} difference(s); the first: "
                         f"{one_line_why((item.get('lines') or ['?'])[0])}")
    not_tested = sum(e["status"] == Outcome.NOT_TESTED.value for e in entries)
    unsupported = sum(e["status"] == Outcome.UNSUPPORTED.value for e in entries)
    lines.append(f"NOT_TESTED: {not_tested}  UNSUPPORTED: {unsupported}")
    return lines
