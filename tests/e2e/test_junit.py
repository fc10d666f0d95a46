"""junit.xml (report/junit.py): valid against tests/schemas/junit.xsd (the JUnit/xunit2 format as CI tools
read it), one test case per requirement named by its ID, each outcome mapped to the element CI tools
count, and one more case for the verdict so that a partial run is never all green."""

from __future__ import annotations

import json
from xml.etree import ElementTree

import pytest
import test_cli
from report_cases import HOSTILE_FRAME, KINDS, UNREACHABLE, VERDICTS, junit_validator, report_validator

from streamcert.catalogue import load_catalogue
from streamcert.report.junit import EVIDENCE_ITEMS, render_junit
from streamcert.report.writers import write_all

RESULT_TAGS = ("failure", "error", "skipped")


@pytest.fixture(scope="module")
def xsd():
    return junit_validator()


def parse(xml: str) -> ElementTree.Element:
    return ElementTree.fromstring(xml.encode("utf-8"))


def cases_by_id(root: ElementTree.Element) -> dict[str, ElementTree.Element]:
    """The requirement cases by the ID their name starts with (the verdict case left out)."""
    out = {}
    for case in root.iter("testcase"):
        if case.get("classname") != "streamcert":
            req_id = case.get("name").split(":")[0]
            assert req_id not in out, f"{req_id} has two test cases"
            out[req_id] = case
    return out


def verdict_of(root: ElementTree.Element) -> ElementTree.Element:
    [case] = [c for c in root.iter("testcase") if (c.get("classname"), c.get("name")) == ("streamcert", "verdict")]
    return case


def result(case: ElementTree.Element) -> ElementTree.Element | None:
    found = [child for child in case if child.tag in RESULT_TAGS]
    assert len(found) <= 1
    return found[0] if found else None


def assert_counts_add_up(root: ElementTree.Element) -> None:
    """Each suite's tests/failures/errors/skipped are its cases', and the root's the suites' sums."""
    suites = root.findall("testsuite")
    for suite in suites:
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        for tag, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            assert int(suite.get(attr)) == sum(c.find(tag) is not None for c in cases), (suite.get("name"), attr)
    for attr in ("tests", "failures", "errors"):
        assert int(root.get(attr)) == sum(int(s.get(attr)) for s in suites)
    assert set(root.attrib) <= {"name", "time", "tests", "failures", "errors"}  # pytest's xunit2 schema: no `skipped`


def assert_lists_every_requirement(root: ElementTree.Element, report: dict) -> None:
    ids = [e["id"] for e in report["requirements"]]
    assert sum(1 for _ in root.iter("testcase")) == len(ids) + 1
    assert sorted(cases_by_id(root)) == sorted(ids)
    for suite in root.findall("testsuite")[1:]:  # each profile's requirements in catalogue order
        listed = [c.get("name").split(":")[0] for c in suite.findall("testcase")]
        assert listed == [i for i in ids if i in set(listed)], suite.get("name")
    for entry in report["requirements"]:
        case = cases_by_id(root)[entry["id"]]
        assert case.get("name").startswith(f"{entry['id']}: ") and case.get("classname") == f"streamcert.{entry['profile']}"


# -- every kind of run: valid, complete, counted --------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(KINDS))
def test_junit_is_valid_and_lists_every_requirement_once(kind, xsd):
    report = KINDS[kind]()
    assert report["verdict"] == VERDICTS[kind]
    xml = render_junit(report)
    xsd.validate(xml)
    root = parse(xml)
    assert_lists_every_requirement(root, report)
    assert_counts_add_up(root)
    assert [s.get("name") for s in root.findall("testsuite")] == [
        "streamcert", "streamcert.a2a", "streamcert.interactions", "streamcert.acp"]
    assert render_junit(report) == xml  # a function of the report alone


def test_the_xsd_refuses_what_ci_tools_would_misread(xsd):
    xml = render_junit(KINDS["failing"]())
    assert xsd.is_valid(xml)
    for broken in (xml.replace('tests="', 'tests="-', 1),  # a negative count
                   xml.replace('<testcase classname="streamcert" ', "<testcase ", 1),  # a case without a classname
                   xml.replace("<skipped ", "<failure /><skipped ", 1),  # two outcomes for one case
                   xml.replace("<testsuites ", '<testsuites skipped="1" ', 1),  # pytest's xunit2 schema refuses it
                   xml.replace('time="', 'time="0.0001', 1),  # more than the three decimals it allows
                   xml.replace("<testsuite ", "<testsuite><bogus/></testsuite><testsuite ", 1)):
        assert not xsd.is_valid(broken)


# -- the outcome of each requirement -------------------------------------------------------------------

@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_status_maps_to_its_element(kind):
    report = KINDS[kind]()
    cases = cases_by_id(parse(render_junit(report)))
    for entry in report["requirements"]:
        status, found = entry["status"], result(cases[entry["id"]])
        out = cases[entry["id"]].find("system-out")
        if status == "FAIL":
            assert found.tag == "failure" and found.get("type") == "FAIL", entry["id"]
        elif status == "ERROR":
            assert found.tag == "error" and found.get("type") == "ERROR", entry["id"]
        elif status in ("NOT_TESTED", "SKIPPED", "UNSUPPORTED"):
            assert found.tag == "skipped" and found.get("message").startswith(f"{status}: "), entry["id"]
            reason = entry.get("unsupported_reason") or entry["message"]
            assert found.get("message") == f"{status}: {reason}"
        elif status in ("NON_STRICT", "WARNING"):  # passing, with their message
            assert found is None and entry["message"] in out.text, entry["id"]
        else:
            assert status == "PASS" and found is None, entry["id"]
            assert (out is not None) == (entry.get("baseline") == "stale"), entry["id"]


def test_failure_carries_the_first_line_the_message_and_the_first_evidence():
    report = KINDS["failing"]()
    failure = result(cases_by_id(parse(render_junit(report)))["WIRE-001"])
    assert failure.get("message") == "frame 1 is not JSON"
    text = failure.text
    assert "the parser said: Expecting value" in text and "title of WIRE-001" in text
    assert [f"frame {n}" in text for n in range(2, 6)] == [n <= EVIDENCE_ITEMS for n in range(2, 6)]
    assert "2 more evidence item(s)" in text
    # What XML 1.0 cannot carry is written out, the rest comes back as it was.
    assert "\\x1b[31mred\\x00 ü" in text
    assert '</failure><b>&amp;' in text and HOSTILE_FRAME.split("\x1b")[0] in text


def test_error_and_should_failure_say_what_they_are():
    cases = cases_by_id(parse(render_junit(KINDS["failing"]())))
    assert result(cases["WIRE-002"]).get("message") == "timeout before any frame"
    should = result(cases["WIRE-007"])
    assert should.tag == "failure" and "SHOULD · FAIL (does not change the verdict" in should.text


def test_expected_failure_stays_a_failure_that_says_so():
    report = KINDS["expected_only"]()
    root = parse(render_junit(report))
    failure = result(cases_by_id(root)["A2A-STREAM-001"])
    assert failure.tag == "failure"
    assert failure.get("message") == "expected by baseline: the first frame is not a Task"
    assert result(verdict_of(root)) is None  # the run passed: the verdict case says it
    assert "expected by baseline" in verdict_of(root).find("system-out").text


def test_soft_findings_pass_with_their_message_and_measure():
    cases = cases_by_id(parse(render_junit(KINDS["passing"]())))
    out = cases["WIRE-002"].find("system-out").text
    assert "WARNING" in out and "first frame after 2.4 s" in out and "first_frame_s=2.4" in out
    assert "reading taken: B" in cases["WIRE-007"].find("system-out").text


# -- the verdict case ----------------------------------------------------------------------------------

def test_verdict_case_passes_only_on_a_pass():
    root = parse(render_junit(KINDS["passing"]()))
    case = verdict_of(root)
    assert result(case) is None
    assert case.find("system-out").text.startswith("PASS: 6/7 selected MUST requirements pass")
    assert root.get("failures") == root.get("errors") == "0"


def test_verdict_case_fails_on_fail_naming_the_unexpected_failures():
    failure = result(verdict_of(parse(render_junit(KINDS["failing"]()))))
    assert failure.tag == "failure" and failure.get("type") == "FAIL"
    assert failure.get("message").startswith("FAIL: 2 selected MUST requirement(s) fail or err")
    assert "failing: WIRE-001, WIRE-002" in failure.text
    assert "expected by baseline (not counted against the verdict): A2A-STREAM-001" in failure.text


def test_verdict_case_fails_on_a_stale_baseline_entry():
    root = parse(render_junit(KINDS["stale"]()))
    failure = result(verdict_of(root))
    assert failure.tag == "failure" and "stale baseline entry" in failure.get("message") and "IX-001" in failure.text
    assert "stale baseline entry" in cases_by_id(root)["IX-001"].find("system-out").text


def test_partial_run_is_never_all_green():
    root = parse(render_junit(KINDS["partial"]()))
    error = result(verdict_of(root))
    assert error.tag == "error" and error.get("type") == "INCOMPLETE"
    assert error.get("message").startswith("INCOMPLETE: 5 selected MUST requirement(s) not tested")
    assert int(root.get("errors")) == 1 and int(root.get("failures")) == 0  # only the verdict says it


def test_narrowed_run_is_never_all_green():
    error = result(verdict_of(parse(render_junit(KINDS["narrowed"]()))))
    assert error.tag == "error" and error.get("message").startswith("INCOMPLETE: the run was narrowed")


def test_could_not_run_goes_through_the_same_writer(tmp_path, xsd):
    report = KINDS["could_not_run"]()
    write_all(report, tmp_path)
    xml = (tmp_path / "junit.xml").read_text("utf-8")
    xsd.validate(xml)
    root = parse(xml)
    error = result(verdict_of(root))
    assert error.tag == "error" and error.get("message") == f"INCOMPLETE: could not run: {UNREACHABLE}"
    selected = [e for e in report["requirements"] if e["status"] != "SKIPPED"]
    assert all(result(cases_by_id(root)[e["id"]]).get("message") == UNREACHABLE for e in selected)
    assert int(root.get("errors")) == len(selected) + 1


def test_regressed_run_does_not_pass_its_verdict_case():
    failure = result(verdict_of(parse(render_junit(KINDS["regressed"]()))))
    assert failure.tag == "failure" and "1 scenario(s) regressed against old" in failure.get("message")
    assert "stream-basic (2 difference(s))" in failure.text


def test_run_facts_are_suite_properties():
    root = parse(render_junit(KINDS["passing"]()))
    props = {p.get("name"): p.get("value") for p in root.find("testsuite").iter("property")}
    assert props["verdict"] == "PASS" and props["target.a2a"] == "http://127.0.0.1:41241"
    assert props["selection.profiles"] == "a2a,interactions" and props["catalogue.version"]
    assert root.find("testsuite").get("timestamp") == "2026-11-29T15:00:00.000Z"
    assert verdict_of(root).get("time") == root.get("time") == "9.120"


# -- end to end ------------------------------------------------------------------------------------------

wheel_run = test_cli.wheel_run  # the fixture: one a2a run, made once per session (once.py)

def test_streamcert_run_writes_junit_badges_and_a_valid_report(wheel_run, xsd):
    """One embedded run of the a2a profile: junit.xml valid and listing every requirement of the catalogue,
    compatibility.json valid against the published schema, a badge for the run and for a2a only. The run is the
    one the wheel test installs and makes (test_cli.wheel_run: `streamcert run --profile a2a … -- -n 2`)."""
    elsewhere, made = wheel_run
    proc = made["run"]
    assert proc and proc["returncode"] == 0, (proc or made)["stdout"][-3000:] + (proc or made)["stderr"][-3000:]
    folder = elsewhere / "rep"
    report = json.loads((folder / "compatibility.json").read_text("utf-8"))
    report_validator().validate(report)
    xml = (folder / "junit.xml").read_text("utf-8")
    xsd.validate(xml)
    root = parse(xml)
    assert [e["id"] for e in report["requirements"]] == list(load_catalogue())
    assert_lists_every_requirement(root, report)
    assert_counts_add_up(root)
    assert result(verdict_of(root)) is None and report["verdict"] == "PASS"
    a2a = root.find("testsuite[@name='streamcert.a2a']")
    assert a2a.get("failures") == a2a.get("errors") == a2a.get("skipped") == "0"
    assert sorted(p.name for p in folder.glob("badge*.json")) == ["badge-a2a.json", "badge.json"]
    badge = json.loads((folder / "badge.json").read_text("utf-8"))
    assert badge["message"].startswith("PASS · ") and badge["color"] == "green"
