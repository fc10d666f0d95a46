"""junit.xml, written from the compatibility report (docs/contracts.md §3, §4) in the JUnit XML shape CI tools read
(xunit2: testsuites > testsuite > testcase > failure | error | skipped, system-out; checked in the tests
against tests/schemas/junit.xsd).

- One test case per requirement, in catalogue order, named by its ID and title, classname
  `streamcert.<family>` (the report's "profile" field), so a dashboard lists requirements, not pytest
  functions. FAIL is a `<failure>`, ERROR an `<error>`; NOT_TESTED, SKIPPED and UNSUPPORTED are
  `<skipped>` with their reason; NON_STRICT and WARNING pass, their message in `<system-out>`.
- In a run over A2A bindings a requirement stays one case (its status the worst over the bindings): a
  failure's message names the bindings it failed over ("over gRPC: …"), and its text lists the status
  over each binding with that binding's message; a passing case not tested over a certified binding says
  so in `<system-out>` (it keeps the verdict from PASS).
- An expected failure (baseline) stays a `<failure>` of its requirement, its message saying so: the
  requirement is still not met. Whether the run passed is the verdict case's to say.
- One more case, `streamcert.verdict`, first in the file: a `<failure>` on FAIL (and on a PASS whose run
  regressed against --against, as the run exits 1 then), an `<error>` on INCOMPLETE, so a partial run is
  never all green.
- One suite per `--profile` (a2a, interactions, …), so CI shows per-profile counts as the badges do, and
  the suite `streamcert` holding the verdict case and the run's facts as properties.

The report given to the writers is already scrubbed. Rendering is a function of the report alone (no
host name, no clock), so the same report gives the same file.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from xml.etree import ElementTree

from ..catalogue import PROFILES
from ..outcomes import Outcome
from .aggregate import untested_over
from .common import binding_title, evidence_label, evidence_text, first_line, over_text, run_profile

SUITE = "streamcert"
VERDICT_CASE = "verdict"
NAME_TITLE_CHARS = 100  # of the title in a test case's name; the whole title is in the case's text
MESSAGE_CHARS = 300  # of a message attribute (one line)
EVIDENCE_ITEMS = 3  # evidence items written out per failure; compatibility.json has them all
EVIDENCE_CHARS = 2000  # of one evidence item's text
LISTED_IDS = 20  # requirement ids named in the verdict case's message body

PASSING = (Outcome.PASS.value, Outcome.NON_STRICT.value, Outcome.WARNING.value)
NOT_JUDGED = (Outcome.NOT_TESTED.value, Outcome.SKIPPED.value, Outcome.UNSUPPORTED.value)

# XML 1.0 cannot carry these characters even escaped; a frame may hold them (an ESC, a NUL).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """`text` with the characters XML 1.0 cannot carry written as \\xNN / \\uNNNN."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", str(text))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _one_line(text: str) -> str:
    return xml_text(_cut(first_line(text.strip()), MESSAGE_CHARS))


# -- one requirement ----------------------------------------------------------------------------------

def case_name(entry: dict[str, Any]) -> str:
    return xml_text(f"{entry['id']}: {_cut(entry['title'], NAME_TITLE_CHARS)}")


def _case_text(entry: dict[str, Any], verdict_note: str) -> str:
    """What a failure, error or soft finding shows: the requirement, the message, the first evidence."""
    head = f"{entry['id']} · {entry['level']} · {entry['status']}{verdict_note}"
    lines = [head, entry["title"], f"source: {entry['source']}"]
    if entry.get("tests"):
        lines.append("tests: " + ", ".join(entry["tests"]))
    if entry.get("reading"):
        lines.append(f"reading taken: {entry['reading']}")
    if entry.get("measured"):
        lines.append("measured: " + ", ".join(f"{k}={v}" for k, v in entry["measured"].items()))
    if entry.get("bindings"):
        lines.append("bindings: " + ", ".join(f"{binding_title(b)} {s}" for b, s in entry["bindings"].items()))
        lines += [f"over {binding_title(b)}: {first_line(m)}" for b, m in (entry.get("binding_messages") or {}).items()]
    if entry.get("message"):
        lines += ["", entry["message"]]
    evidence = entry.get("evidence") or []
    shown = evidence[:EVIDENCE_ITEMS]
    total = len(evidence) + int(entry.get("evidence_omitted") or 0)
    for number, item in enumerate(shown, 1):
        lines += ["", f"evidence {number} of {total}: {evidence_label(item)}",
                  _cut(evidence_text(item), EVIDENCE_CHARS)]
    if total > len(shown):
        lines += ["", f"({total - len(shown)} more evidence item(s): see compatibility.json)"]
    return xml_text("\n".join(lines))


def _verdict_note(entry: dict[str, Any]) -> str:
    if entry.get("baseline") == "expected":
        return " (expected by baseline)"
    if entry.get("baseline") == "stale":
        return " (stale baseline entry: listed as an expected failure, now judged; the run fails)"
    if entry["level"] != "MUST" and entry["status"] in (Outcome.FAIL.value, Outcome.ERROR.value):
        return " (does not change the verdict: only MUST requirements do)"
    if entry["level"] == "MUST" and untested_over(entry):
        return (" (not tested over " + ", ".join(binding_title(b) for b in untested_over(entry))
                + ", a certified binding: the verdict cannot be PASS)")
    return ""


def over_bindings(entry: dict[str, Any]) -> str:
    """"over HTTP+JSON, gRPC: " for a status found over some bindings ("" in a run without bindings)."""
    said = over_text(entry)
    return f"over {said}: " if said else ""


def requirement_case(entry: dict[str, Any]) -> ElementTree.Element:
    case = ElementTree.Element("testcase", classname=f"{SUITE}.{entry['profile']}", name=case_name(entry),
                               time="0")
    status = entry["status"]
    note = _verdict_note(entry)
    if status in (Outcome.FAIL.value, Outcome.ERROR.value):
        tag = "failure" if status == Outcome.FAIL.value else "error"
        prefix = "expected by baseline: " if entry.get("baseline") == "expected" else ""
        message = _one_line(prefix + over_bindings(entry) + (first_line(entry["message"].strip()) or status))
        ElementTree.SubElement(case, tag, message=message, type=status).text = _case_text(entry, note)
    elif status in NOT_JUDGED:
        reason = entry.get("unsupported_reason") or entry["message"] or "no reason given"
        ElementTree.SubElement(case, "skipped", message=_one_line(f"{status}: {reason}"))
    elif status != Outcome.PASS.value or note:  # NON_STRICT, WARNING, or a stale baseline entry
        ElementTree.SubElement(case, "system-out").text = _case_text(entry, note)
    return case


# -- the verdict --------------------------------------------------------------------------------------

def _ids(entries: list[dict[str, Any]]) -> str:
    ids = [e["id"] for e in entries]
    more = f" and {len(ids) - LISTED_IDS} more" if len(ids) > LISTED_IDS else ""
    return ", ".join(ids[:LISTED_IDS]) + more


def verdict_lines(report: dict[str, Any]) -> tuple[str, list[str]]:
    """The verdict case's message (one line) and the lines of its text."""
    verdict = report["verdict"]
    musts = [e for e in report["requirements"] if e["level"] == "MUST" and e["status"] != Outcome.SKIPPED.value]
    passing = [e for e in musts if e["status"] in PASSING]
    failing = [e for e in musts if Outcome(e["status"]).is_failure and e.get("baseline") != "expected"]
    expected = [e for e in musts if e.get("baseline") == "expected"]
    untested = [e for e in musts if e["status"] == Outcome.NOT_TESTED.value]
    untested_binding = [e for e in musts if untested_over(e)]
    unsupported = [e for e in musts if e["status"] == Outcome.UNSUPPORTED.value]
    stale = report.get("stale_baseline") or []
    found = (report.get("regressions") or {}).get("found") or []

    counted = f"{len(passing)}/{len(musts)} selected MUST requirements pass"
    if report.get("could_not_run"):
        message = f"{verdict}: could not run: {first_line(report['could_not_run'])}"
    elif verdict == "FAIL" and failing:
        message = f"FAIL: {len(failing)} selected MUST requirement(s) fail or err ({counted})"
    elif verdict == "FAIL" and stale:
        message = f"FAIL: {len(stale)} stale baseline entr{'y' if len(stale) == 1 else 'ies'} ({counted})"
    elif verdict == "INCOMPLETE" and not musts:
        message = "INCOMPLETE: no MUST requirement was selected, so nothing is certified"
    elif verdict == "INCOMPLETE" and untested:
        message = f"INCOMPLETE: {len(untested)} selected MUST requirement(s) not tested ({counted})"
    elif verdict == "INCOMPLETE" and untested_binding:
        message = (f"INCOMPLETE: {len(untested_binding)} selected MUST requirement(s) not tested over a certified "
                   f"binding ({counted})")
    elif verdict == "INCOMPLETE":  # a narrowed run (--requirement, --scenario, -k) never certifies
        message = f"INCOMPLETE: the run was narrowed, so it certifies nothing ({counted})"
    elif found:
        message = f"{verdict}, but {len(found)} scenario(s) regressed against {report['regressions']['against']}"
    else:
        message = f"{verdict}: {counted}"

    lines = [message]
    if failing:
        lines.append(f"failing: {_ids(failing)}")
    if expected:
        lines.append(f"expected by baseline (not counted against the verdict): {_ids(expected)}")
    if stale:
        lines.append(f"stale baseline entries (listed as expected failures, now passing): {', '.join(stale)}")
    if untested:
        lines.append(f"not tested: {_ids(untested)}")
    if untested_binding:
        named = [f"{e['id']} ({', '.join(untested_over(e))})" for e in untested_binding]
        more = f" and {len(named) - LISTED_IDS} more" if len(named) > LISTED_IDS else ""
        lines.append(f"not tested over a certified binding: {', '.join(named[:LISTED_IDS])}{more}")
    if unsupported:
        lines.append(f"unsupported by the target: {_ids(unsupported)}")
    for item in found:
        lines.append(f"regressed: {item['scenario']} ({item['differences']} difference(s))")
    if report.get("baseline_unknown"):
        lines.append("baseline ids not in the catalogue: " + ", ".join(report["baseline_unknown"]))
    if report.get("unknown_findings"):
        lines.append("findings on ids not in the catalogue (a harness bug): "
                     + ", ".join(item["id"] for item in report["unknown_findings"]))
    return message, lines


def verdict_case(report: dict[str, Any], seconds: float) -> ElementTree.Element:
    case = ElementTree.Element("testcase", classname=SUITE, name=VERDICT_CASE, time=f"{seconds:.3f}")
    message, lines = verdict_lines(report)
    text = xml_text("\n".join(lines))
    regressed = bool((report.get("regressions") or {}).get("found"))
    if report["verdict"] == "FAIL" or (report["verdict"] == "PASS" and regressed):
        ElementTree.SubElement(case, "failure", message=_one_line(message), type=report["verdict"]).text = text
    elif report["verdict"] == "INCOMPLETE":
        ElementTree.SubElement(case, "error", message=_one_line(message), type="INCOMPLETE").text = text
    else:
        ElementTree.SubElement(case, "system-out").text = text
    return case


# -- suites -------------------------------------------------------------------------------------------

def run_seconds(report: dict[str, Any]) -> float:
    try:
        started = datetime.fromisoformat(report["started"])
        finished = datetime.fromisoformat(report["finished"])
    except (KeyError, TypeError, ValueError):
        return 0.0
    return max(0.0, (finished - started).total_seconds())


def _timestamp(report: dict[str, Any]) -> str | None:
    try:
        datetime.fromisoformat(report.get("started") or "")
    except (TypeError, ValueError):
        return None
    return report["started"]


def _properties(report: dict[str, Any]) -> ElementTree.Element:
    facts = {"verdict": report["verdict"],
             "tool.version": (report.get("tool") or {}).get("version"),
             "catalogue.version": (report.get("catalogue") or {}).get("version")}
    facts.update({f"target.{name}": value for name, value in (report.get("target") or {}).items()
                  if isinstance(value, str) and value})
    selection = report.get("selection") or {}
    if selection:
        facts["selection.profiles"] = ",".join(selection.get("profiles") or [])
        facts["selection.level"] = selection.get("level")
    if report.get("could_not_run"):
        facts["could_not_run"] = report["could_not_run"]
    bindings = report.get("bindings")
    if bindings is not None:
        facts["bindings.certified"] = ",".join(bindings.get("certified") or [])
        facts.update({f"bindings.skipped.{b}": why for b, why in (bindings.get("skipped") or {}).items()})
        if bindings.get("declared") is not None:
            facts["bindings.declared"] = ",".join(bindings["declared"])
    props = ElementTree.Element("properties")
    for name, value in facts.items():
        if value is not None:
            ElementTree.SubElement(props, "property", name=name, value=xml_text(str(value)))
    return props


def _suite(name: str, cases: list[ElementTree.Element], seconds: float, timestamp: str | None,
           properties: ElementTree.Element | None = None) -> ElementTree.Element:
    def count(tag: str) -> int:
        return sum(case.find(tag) is not None for case in cases)

    suite = ElementTree.Element("testsuite", name=name, tests=str(len(cases)), failures=str(count("failure")),
                                errors=str(count("error")), skipped=str(count("skipped")), time=f"{seconds:.3f}")
    if timestamp:
        suite.set("timestamp", timestamp)
    if properties is not None:
        suite.append(properties)  # before the cases: the format's order
    suite.extend(cases)
    return suite


def render_junit(report: dict[str, Any]) -> str:
    """junit.xml for `report` (a compatibility report as built by aggregate.build_report, scrubbed)."""
    seconds = run_seconds(report)
    timestamp = _timestamp(report)
    by_profile: dict[str, list[ElementTree.Element]] = {}
    for entry in report["requirements"]:
        by_profile.setdefault(run_profile(entry), []).append(requirement_case(entry))
    order = [p for p in PROFILES if p in by_profile] + [p for p in by_profile if p not in PROFILES]

    suites = [_suite(SUITE, [verdict_case(report, seconds)], seconds, timestamp, _properties(report))]
    suites += [_suite(f"{SUITE}.{profile}", by_profile[profile], 0.0, timestamp) for profile in order]
    root = ElementTree.Element("testsuites", name=SUITE)
    # pytest's xunit2 schema allows these counts on <testsuites>, not `skipped`: that one stays on each <testsuite>
    for attr in ("tests", "failures", "errors"):
        root.set(attr, str(sum(int(suite.get(attr)) for suite in suites)))
    root.set("time", f"{seconds:.3f}")
    root.extend(suites)
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"
