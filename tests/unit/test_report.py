"""The report engine: aggregation, verdict, baseline, writers and the console summary."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

import streamcert
from streamcert.catalogue import Requirement, family_of, load_catalogue
from streamcert.outcomes import Finding, Outcome
from streamcert.report.aggregate import (
    MAX_EVIDENCE,
    MAX_MESSAGES,
    Aggregator,
    build_report,
    expected_failures_of,
    load_baseline,
)
from streamcert.report.sources import PUBLIC_TEXT
from streamcert.report.summary import terminal_summary
from streamcert.report.writers import write_all

P, F, E, W = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.WARNING
NS, U = Outcome.NON_STRICT, Outcome.UNSUPPORTED

REPORT_KEYS = ["tool", "catalogue", "target", "started", "finished", "verdict", "summary", "requirements"]
ENTRY_KEYS = ["id", "profile", "level", "status", "title", "source", "message", "tests", "evidence"]
TARGET = {"a2a": "http://127.0.0.1:41241", "acp": None, "progress": None, "client": None}


def req(req_id: str, level: str = "MUST", title: str = "", **kw) -> Requirement:
    family, profile = family_of(req_id)
    return Requirement(id=req_id, level=level, title=title or f"title of {req_id}", source="seed · §1",
                       family=family, profile=profile, **kw)


# A small catalogue: two a2a families (MUST and SHOULD), one interactions MUST, one MAY.
CATALOGUE = {r.id: r for r in [
    req("WIRE-001"),
    req("WIRE-007", "SHOULD"),
    req("A2A-STREAM-001"),
    req("A2A-STREAM-002"),
    req("A2A-STREAM-020", "MAY"),
    req("IX-001"),
]}
A2A_MUSTS = ["WIRE-001", "A2A-STREAM-001", "A2A-STREAM-002"]


def finding(req_id: str, outcome: Outcome, message: str = "", **kw) -> Finding:
    return Finding(req_id, outcome, message, **kw)


def aggregate(*tests: tuple[str, list[Finding]]) -> Aggregator:
    agg = Aggregator()
    for nodeid, findings in tests:
        agg.add(nodeid, findings)
    return agg


def report_of(agg: Aggregator, profiles=("a2a",), level="may", baseline=None) -> dict:
    return build_report(agg, selected_profiles=set(profiles), level=level, target=TARGET,
                        started="2026-11-29T15:00:00.000Z", finished="2026-11-29T15:00:09.120Z",
                        baseline=baseline, catalogue=CATALOGUE)


def all_pass(*extra: Finding) -> Aggregator:
    return aggregate(("suite/test_a.py::test_ok", [finding(i, P) for i in A2A_MUSTS] + list(extra)))


def entry(report: dict, req_id: str) -> dict:
    return next(e for e in report["requirements"] if e["id"] == req_id)


# -- aggregation ----------------------------------------------------------------------------------


def test_worst_outcome_across_tests_with_its_message_and_evidence():
    frame = {"exchange": "stream", "frame": 1, "data": '{"result": {}}'}
    agg = aggregate(
        ("suite/test_b.py::test_two", [finding("A2A-STREAM-001", P, "fine")]),
        ("suite/test_a.py::test_one", [finding("A2A-STREAM-001", F, "first frame is not a Task",
                                               evidence=[frame])]),
        ("suite/test_c.py::test_three", [finding("A2A-STREAM-001", W, "slow")]),
    )
    result = agg.results()["A2A-STREAM-001"]
    assert result.outcome is F
    assert result.message == "first frame is not a Task"
    assert result.evidence == ({**frame, "test": "suite/test_a.py::test_one"},)
    assert result.tests == ("suite/test_a.py::test_one", "suite/test_b.py::test_two",
                            "suite/test_c.py::test_three")
    assert result.finding_count == 3


def test_fail_outranks_error_and_messages_are_bounded():
    agg = aggregate(*[(f"t.py::test_{n}", [finding("WIRE-001", F, f"broken {n}")]) for n in range(5)],
                    ("t.py::test_err", [finding("WIRE-001", E, "timeout")]))
    result = agg.results()["WIRE-001"]
    assert result.outcome is F
    assert result.message.splitlines() == ["broken 0", "broken 1", "broken 2", "(and 2 more)"]
    assert MAX_MESSAGES == 3


def test_evidence_is_bounded_and_the_rest_counted():
    frames = [{"frame": n} for n in range(MAX_EVIDENCE + 4)]  # over two findings (each is bounded too: limits.py)
    half = len(frames) // 2
    result = aggregate(("t.py::t", [finding("WIRE-001", F, "x", evidence=frames[:half]),
                                    finding("WIRE-001", F, "x", evidence=frames[half:])])).results()["WIRE-001"]
    assert len(result.evidence) == MAX_EVIDENCE
    assert result.evidence_omitted == 4


def test_add_accepts_serialized_findings():
    agg = aggregate(("t.py::t", [finding("WIRE-001", NS, "weaker", reading="B").to_json()]))
    result = agg.results()["WIRE-001"]
    assert (result.outcome, result.reading) == (NS, "B")


def test_untested_requirement_of_selected_profile_is_not_tested():
    report = report_of(aggregate(("t.py::t", [finding("WIRE-001", P)])))
    assert entry(report, "A2A-STREAM-001")["status"] == "NOT_TESTED"
    assert report["summary"]["MUST"]["NOT_TESTED"] == 2


def test_unselected_profile_is_skipped_even_when_a_test_judged_it():
    report = report_of(all_pass(finding("IX-001", F, "no")), profiles=("a2a",))
    ix = entry(report, "IX-001")
    assert ix["status"] == "SKIPPED"
    assert "interactions" in ix["message"]
    assert report["verdict"] == "PASS"


def test_level_below_the_selection_is_skipped():
    report = report_of(all_pass(finding("WIRE-007", F, "no echo")), level="must")
    assert entry(report, "WIRE-007")["status"] == "SKIPPED"
    assert entry(report, "A2A-STREAM-020")["status"] == "SKIPPED"
    report = report_of(all_pass(finding("WIRE-007", F, "no echo")), level="should")
    assert entry(report, "WIRE-007")["status"] == "FAIL"
    assert entry(report, "A2A-STREAM-020")["status"] == "SKIPPED"


def test_every_catalogue_requirement_is_reported_in_order():
    report = report_of(Aggregator(), profiles=())
    assert [e["id"] for e in report["requirements"]] == list(CATALOGUE)
    assert sum(sum(counts.values()) for counts in report["summary"].values()) == len(CATALOGUE)


def test_unsupported_carries_its_reason():
    report = report_of(all_pass(finding("WIRE-007", U, "card declares no extension")))
    assert entry(report, "WIRE-007")["unsupported_reason"] == "card declares no extension"


def test_findings_on_unknown_ids_are_shown_not_dropped():
    report = report_of(all_pass(finding("WIRE-999", F, "typo in a rule")))
    assert report["unknown_findings"][0]["id"] == "WIRE-999"


# -- verdict --------------------------------------------------------------------------------------


def test_verdict_pass_when_every_selected_must_passes():
    assert report_of(all_pass(), level="must")["verdict"] == "PASS"


def test_verdict_fail_on_a_must_failure():
    assert report_of(all_pass(finding("A2A-STREAM-002", F, "x")))["verdict"] == "FAIL"


def test_verdict_fail_on_a_must_error():
    assert report_of(all_pass(finding("WIRE-001", E, "unreachable")))["verdict"] == "FAIL"


def test_verdict_incomplete_when_a_must_is_not_tested():
    report = report_of(aggregate(("t.py::t", [finding("WIRE-001", P), finding("A2A-STREAM-001", P)])))
    assert report["verdict"] == "INCOMPLETE"


def test_verdict_incomplete_when_nothing_is_selected():
    assert report_of(Aggregator(), profiles=())["verdict"] == "INCOMPLETE"


def test_should_failure_keeps_its_status_but_not_the_verdict():
    report = report_of(all_pass(finding("WIRE-007", F, "no echo")), level="should")
    assert entry(report, "WIRE-007")["status"] == "FAIL"
    assert report["summary"]["SHOULD"]["FAIL"] == 1
    assert report["verdict"] == "PASS"


def test_warning_and_non_strict_musts_pass():
    report = report_of(all_pass(finding("WIRE-001", W, "slow"), finding("A2A-STREAM-001", NS, "weak")))
    assert report["verdict"] == "PASS"


def test_unknown_profile_or_level_is_refused():
    with pytest.raises(ValueError):
        report_of(Aggregator(), profiles=("a2a", "nope"))
    with pytest.raises(ValueError):
        report_of(Aggregator(), level="strict")


# -- baseline -------------------------------------------------------------------------------------


def test_expected_failure_does_not_fail_the_verdict():
    report = report_of(all_pass(finding("A2A-STREAM-002", F, "known")),
                       baseline={"expected_failures": ["A2A-STREAM-002"]})
    stream = entry(report, "A2A-STREAM-002")
    assert (stream["status"], stream["baseline"]) == ("FAIL", "expected")
    assert report["expected_failures"] == ["A2A-STREAM-002"]
    assert report["stale_baseline"] == []
    assert report["verdict"] == "PASS"


def test_unlisted_failure_still_fails_with_a_baseline():
    report = report_of(all_pass(finding("A2A-STREAM-002", F, "known"), finding("WIRE-001", F, "new")),
                       baseline={"expected_failures": ["A2A-STREAM-002"]})
    assert report["verdict"] == "FAIL"


def test_stale_baseline_entry_fails_the_run():
    report = report_of(all_pass(), baseline={"expected_failures": ["WIRE-001", "IX-001", "NOPE-1"]})
    assert report["stale_baseline"] == ["WIRE-001"]  # IX-001 was skipped: not judged, not stale
    assert report["baseline_unknown"] == ["NOPE-1"]
    assert report["verdict"] == "FAIL"


def test_baseline_from_a_previous_compatibility_json(tmp_path):
    previous = report_of(all_pass(finding("A2A-STREAM-002", F, "x"), finding("WIRE-001", E, "y")))
    assert expected_failures_of(previous) == {"A2A-STREAM-002", "WIRE-001"}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(previous))
    report = report_of(all_pass(finding("A2A-STREAM-002", F, "x"), finding("WIRE-001", E, "y")),
                       baseline=load_baseline(path))
    assert report["verdict"] == "PASS"


def test_malformed_baseline_is_refused(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"expected": ["WIRE-001"]}')
    with pytest.raises(ValueError):
        load_baseline(path)


# -- the §4 shape and the real catalogue --------------------------------------------------------------


def test_report_shape_against_the_shipped_catalogue():
    agg = aggregate(("t.py::t", [finding("A2A-STREAM-001", P)]))
    report = build_report(agg, selected_profiles={"a2a"}, level="must", target=TARGET,
                          started="s", finished="f", baseline=None)
    assert list(report)[: len(REPORT_KEYS)] == REPORT_KEYS
    assert report["tool"] == {"name": "streamcert", "version": streamcert.__version__}
    assert report["catalogue"]["version"]
    assert [e["id"] for e in report["requirements"]] == list(load_catalogue())
    for item in report["requirements"]:
        assert list(item)[: len(ENTRY_KEYS)] == ENTRY_KEYS
    stream = entry(report, "A2A-STREAM-001")
    assert (stream["profile"], stream["status"], stream["tests"]) == ("a2a-stream", "PASS", ["t.py::t"])


# -- writers --------------------------------------------------------------------------------------

XSS = "<script>alert('x')</script>"


def failing_report() -> dict:
    frames = [{"exchange": "message/stream", "frame": 2, "t": 0.012, "data": '{"kind": "</pre><b>"}'}]
    return report_of(all_pass(
        finding("A2A-STREAM-002", F, f"bad frame {XSS}\nsecond line", evidence=frames),
        finding("WIRE-001", E, "connection refused"),
        finding("WIRE-007", W, "echo | missing"),
    ))


class _TagCollector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.text: list[str] = []
        self.links: list[str] = []  # each <a href>

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.tags.extend(f"{tag}@{name}" for name, _ in attrs)
        self.links += [value for name, value in attrs if tag == "a" and name == "href"]

    def handle_data(self, data):
        self.text.append(data)


def test_write_all_writes_the_report_files_and_valid_json(tmp_path):
    report = failing_report()
    paths = write_all(report, tmp_path / "out")
    assert sorted(p.name for p in paths) == ["badge-a2a.json", "badge.json", "compatibility.json", "junit.xml",
                                             "report.html", "report.md"]
    loaded = json.loads((tmp_path / "out" / "compatibility.json").read_text("utf-8"))
    assert loaded == report
    assert list(loaded)[: len(REPORT_KEYS)] == REPORT_KEYS


# report.md: tests/unit/test_report_md.py


def test_html_is_self_contained_and_escaped(tmp_path):
    write_all(failing_report(), tmp_path)
    page = (tmp_path / "report.html").read_text("utf-8")
    collector = _TagCollector()
    collector.feed(page)
    assert collector.tags.count("script") == 1 and "script@src" not in collector.tags  # the page's own code only
    # Nothing is loaded from elsewhere; the only links are the sources' public texts (report/sources.py), opened
    # by the reader, never fetched by the page.
    assert not [t for t in collector.tags if t.endswith("@src") or (t.endswith("@href") and t != "a@href") or t == "link"]
    assert set(collector.links) <= set(PUBLIC_TEXT.values())
    text = "".join(collector.text)
    assert XSS in text  # shown to the reader as text, not run
    assert '{"kind": "</pre><b>"}' in text
    assert "b" not in collector.tags
    assert "streamcert verdict: FAIL" in text
    assert re.search(r"<th>a2a</th>.*?</tr>", page)  # a row per profile as --profile names it


# -- console summary ------------------------------------------------------------------------------


def test_terminal_summary_lines():
    report = failing_report()
    entry(report, "WIRE-001")["message"] = "x" * 500 + "\nnot shown"
    lines = terminal_summary(report)
    assert lines[0] == "streamcert verdict: FAIL"
    assert lines[1] == "  MUST   1 PASS, 1 FAIL, 1 SKIPPED, 1 ERROR"
    assert lines[2] == "  SHOULD 1 WARNING"
    assert lines[3] == "  MAY    1 NOT_TESTED"
    failure = lines.index(f"  A2A-STREAM-002  title of A2A-STREAM-002 — bad frame {XSS}")
    error = lines.index("  WIRE-001  title of WIRE-001 — ERROR: " + "x" * 159 + "…")
    warning = lines.index("  WIRE-007  title of WIRE-007 — echo | missing")
    assert lines[error - 1] == "FAIL/ERROR (2):" and error < failure < warning  # catalogue order
    assert lines[-1] == "NOT_TESTED: 1  UNSUPPORTED: 0"
    assert not any("not shown" in line for line in lines)


def test_terminal_summary_marks_expected_and_stale_baseline():
    report = report_of(all_pass(finding("A2A-STREAM-002", F, "known")),
                       baseline={"expected_failures": ["A2A-STREAM-002", "WIRE-001"]})
    lines = terminal_summary(report)
    assert any(line.endswith("known [expected by baseline]") for line in lines)
    assert "stale baseline entries (now passing): WIRE-001" in lines


@pytest.mark.parametrize("document", [{"expected_failures": "WIRE-001"}, ["WIRE-001"], {}])
def test_baseline_of_the_wrong_shape_is_refused(document):
    with pytest.raises(ValueError):
        expected_failures_of(document)
