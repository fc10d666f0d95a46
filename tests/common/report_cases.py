"""Compatibility reports for the writers' tests (junit.xml, badges, the report's JSON Schema): built with
`build_report` from a small catalogue of three profiles, one report per kind of run."""

from __future__ import annotations

import dataclasses
import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

from streamcert.catalogue import Requirement, family_of
from streamcert.outcomes import Finding, Outcome
from streamcert.report.aggregate import Aggregator, build_report, regressions_section

P, F, E, W = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.WARNING
NS, U = Outcome.NON_STRICT, Outcome.UNSUPPORTED

JUNIT_XSD = Path(__file__).parents[1] / "schemas" / "junit.xsd"
TARGET = {"a2a": "http://127.0.0.1:41241", "acp": None, "progress": None, "client": None,
          "fault": None, "embedded": True}
SELECTED = {"a2a", "interactions"}  # acp is in the catalogue but not selected: SKIPPED, no badge
UNREACHABLE = "cannot reach http://127.0.0.1:9/.well-known/agent-card.json: connection refused"
# Characters XML 1.0 cannot carry (ESC, NUL), markup, and a non-ASCII letter, as a broken frame may hold.
HOSTILE_FRAME = 'data: {"kind": "</failure><b>&amp;", "text": "\x1b[31mred\x00 ü"}'


def req(req_id: str, level: str = "MUST") -> Requirement:
    family, profile = family_of(req_id)
    return Requirement(id=req_id, level=level, title=f"title of {req_id}", source="seed · §1",
                       family=family, profile=profile)


CATALOGUE = {r.id: r for r in [
    req("WIRE-001"), req("WIRE-002"), req("WIRE-007", "SHOULD"),
    req("A2A-STREAM-001"), req("A2A-STREAM-002"), req("A2A-STREAM-003"), req("A2A-STREAM-020", "MAY"),
    req("IX-001"), req("IX-002"),
    req("ACP-PLAN-001"),
]}


def report_of(findings: list[Finding], *, baseline=None, could_not_run=None, regressions=None,
              bindings=None) -> dict:
    agg = Aggregator()
    agg.add("suite/test_x.py::test_one", findings)
    return build_report(agg, selected_profiles=SELECTED, level="may", target=TARGET,
                        started="2026-11-29T15:00:00.000Z", finished="2026-11-29T15:00:09.120Z",
                        baseline=baseline, catalogue=CATALOGUE, could_not_run=could_not_run,
                        regressions=regressions, bindings=bindings)


def _passing_findings() -> list[Finding]:
    return [Finding("WIRE-001", P), Finding("WIRE-002", W, "first frame after 2.4 s (limit 2 s)",
                                            measured={"first_frame_s": 2.4}),
            Finding("WIRE-007", NS, "id echoed as a string", reading="B"), Finding("A2A-STREAM-001", P),
            Finding("A2A-STREAM-002", NS, "accepted the weaker reading"),
            Finding("A2A-STREAM-003", U, "the card does not declare the extension"),
            Finding("A2A-STREAM-020", P), Finding("IX-001", P), Finding("IX-002", P)]


def _replacing(findings: list[Finding], *changed: Finding) -> list[Finding]:
    ids = {f.req_id for f in changed}
    return [f for f in findings if f.req_id not in ids] + list(changed)


def passing() -> dict:
    """PASS, with a WARNING, two NON_STRICT, an UNSUPPORTED MUST and an unselected profile."""
    return report_of(_passing_findings())


def failing() -> dict:
    """FAIL: a MUST failure with five evidence items, a MUST error, a SHOULD failure, an expected failure."""
    evidence = [{"exchange": "message/stream", "frame": n, "data": HOSTILE_FRAME if n == 1 else f"frame {n}"}
                for n in range(1, 6)]
    return report_of(_replacing(
        _passing_findings(),
        Finding("WIRE-001", F, "frame 1 is not JSON\nthe parser said: Expecting value", evidence=evidence),
        Finding("WIRE-002", E, "timeout before any frame"),
        Finding("WIRE-007", F, "the id is not echoed"),
        Finding("A2A-STREAM-001", F, "the first frame is not a Task"),
    ), baseline={"expected_failures": ["A2A-STREAM-001"]})


def expected_only() -> dict:
    """PASS although a MUST fails: the baseline expects it."""
    return report_of(_replacing(_passing_findings(), Finding("A2A-STREAM-001", F, "the first frame is not a Task")),
                     baseline={"expected_failures": ["A2A-STREAM-001"]})


def stale() -> dict:
    """FAIL only because the baseline lists a requirement that now passes."""
    return report_of(_passing_findings(), baseline={"expected_failures": ["IX-001"]})


def partial() -> dict:
    """INCOMPLETE: what was judged passed, but most selected requirements were never reached."""
    return report_of([Finding("WIRE-001", P), Finding("A2A-STREAM-001", P)])


def narrowed() -> dict:
    """Every selected requirement judged, but the run was narrowed (--scenario, -k): INCOMPLETE. Marked by
    hand as the selection code does (selection.narrowing), to test the writers alone."""
    report = passing()
    report["selection"]["narrowed"] = True
    report["verdict"] = "INCOMPLETE"
    return report


def could_not_run() -> dict:
    """The target was down: every selected requirement ERROR with the reason, verdict INCOMPLETE."""
    return report_of([], could_not_run=UNREACHABLE)


def regressed() -> dict:
    """PASS, but a scenario differs from its earlier cassette (--against): the run exits 1."""
    compared = [{"scenario": "stream-basic", "cassette": "old/stream-basic.yaml", "test": "t.py::t",
                 "differences": 2, "lines": ["frame 3: kind changed", "frame 4: missing"]}]
    return report_of(_passing_findings(), regressions=regressions_section("old", 1.0, compared))


def over_bindings() -> dict:
    """FAIL over HTTP+JSON only, in a run that certified JSON-RPC and HTTP+JSON but not gRPC (issue 15): each
    requirement with its status over each binding, the worst its own."""
    over = [dataclasses.replace(f, binding=b) for b in ("jsonrpc", "http-json") for f in _passing_findings()]
    over.append(Finding("WIRE-001", F, "HTTP+JSON: 405 for POST /message:stream", binding="http-json"))
    return report_of(over, bindings={"certified": ["jsonrpc", "http-json"],
                                     "skipped": {"grpc": "the agent card does not declare it"},
                                     "declared": ["jsonrpc", "http-json"]})


KINDS = {"passing": passing, "failing": failing, "expected_only": expected_only, "stale": stale,
         "partial": partial, "narrowed": narrowed, "could_not_run": could_not_run, "regressed": regressed,
         "bindings": over_bindings}
VERDICTS = {"passing": "PASS", "failing": "FAIL", "expected_only": "PASS", "stale": "FAIL",
            "partial": "INCOMPLETE", "narrowed": "INCOMPLETE", "could_not_run": "INCOMPLETE", "regressed": "PASS",
            "bindings": "FAIL"}


@lru_cache(maxsize=1)
def report_schema() -> dict:
    """cases/schemas/compatibility.schema.json, read as the installed package holds it."""
    text = (resources.files("streamcert.cases") / "schemas" / "compatibility.schema.json").read_text("utf-8")
    return json.loads(text)


def report_validator():
    import jsonschema

    return jsonschema.Draft202012Validator(report_schema(), format_checker=jsonschema.FormatChecker())


def junit_validator():
    import xmlschema

    return xmlschema.XMLSchema(str(JUNIT_XSD))
