"""The report over A2A bindings (issue 15): per-binding statuses in compatibility.json, the requirement's own
status the worst over the bindings, SKIPPED for a binding the run did not certify (and for a requirement none
of whose bindings it certified, without making the verdict INCOMPLETE), a finding without a binding counting
for every certified one; and how report.md, junit.xml and the console summary show them. report.html's
columns and binding filter are checked in a browser in tests/e2e/test_report_html.py."""

from __future__ import annotations

import re
from xml.etree import ElementTree

import pytest

from streamcert.catalogue import Requirement, family_of, load_catalogue
from streamcert.outcomes import Finding, Outcome
from streamcert.report.aggregate import Aggregator, build_report
from streamcert.report.junit import render_junit
from streamcert.report.markdown import MD_BUDGET, render_markdown
from streamcert.report.roots import group
from streamcert.report.summary import terminal_summary

P, F, E, W, NS = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.WARNING, Outcome.NON_STRICT
TARGET = {"a2a": "http://127.0.0.1:41241", "acp": None, "progress": None, "client": None}
ALL3 = ("jsonrpc", "http-json", "grpc")
T = "suite/test_a2a_stream.py::test_stream_basic"  # the scenario's test, one per binding: T[binding]


def req(req_id: str, level: str = "MUST", bindings: tuple[str, ...] = ()) -> Requirement:
    family, profile = family_of(req_id)
    return Requirement(id=req_id, level=level, title=f"title of {req_id}", source="A2A 1.0.1 · §1",
                       family=family, profile=profile, bindings=bindings)


# As the shipped catalogue has them: JSON-RPC only, JSON-RPC and HTTP+JSON, one binding's own, every binding
# (no `bindings`), a requirement of a profile that runs over no binding.
CATALOGUE = {r.id: r for r in [
    req("WIRE-001", bindings=("jsonrpc", "http-json")), req("WIRE-002", bindings=("jsonrpc",)),
    req("A2A-CARD-001"), req("A2A-STREAM-001"), req("A2A-STREAM-002"), req("A2A-STREAM-020", "SHOULD"),
    req("REST-001", bindings=("http-json",)), req("GRPC-001", bindings=("grpc",)),
    req("IX-001"), req("PROG-001"),
]}


def over(binding: str, *findings: Finding) -> tuple[str, list[Finding]]:
    """One test's findings over one binding (as the run loop sends them: each finding names its binding)."""
    for finding in findings:
        finding.binding = binding
    return f"{T}[{binding}]", list(findings)


def passing_over(binding: str, *, but: tuple[str, ...] = ()) -> tuple[str, list[Finding]]:
    """PASS for every requirement of the a2a and interactions profiles that applies to `binding`, but the card's
    (judged once, without a binding: `card`) and those in `but`."""
    return over(binding, *[Finding(r.id, P) for r in CATALOGUE.values()
                           if r.profile in ("a2a", "interactions") and r.family != "a2a-card"
                           and r.applies_to(binding) and r.id not in but])


def card(outcome: Outcome = P, message: str = "") -> tuple[str, list[Finding]]:
    return "suite/test_a2a_card.py::test_card", [Finding("A2A-CARD-001", outcome, message)]


def report_of(*tests: tuple[str, list[Finding]], certified=ALL3, skipped=None, declared=None,
              profiles=("a2a", "interactions"), catalogue=None, **kw) -> dict:
    agg = Aggregator()
    for nodeid, findings in tests:
        agg.add(nodeid, findings)
    bindings = {"certified": list(certified), "skipped": dict(skipped or {}), "declared": declared}
    return build_report(agg, selected_profiles=set(profiles), level="may", target=TARGET,
                        started="2026-11-30T15:00:00.000Z", finished="2026-11-30T15:00:09.000Z",
                        catalogue=CATALOGUE if catalogue is None else catalogue, bindings=bindings, **kw)


def entry(report: dict, req_id: str) -> dict:
    return next(e for e in report["requirements"] if e["id"] == req_id)


# -- compatibility.json ------------------------------------------------------------------------------------

def test_the_status_is_the_worst_over_the_bindings_and_each_binding_keeps_its_own():
    frame = {"exchange": "stream", "frame": 1, "data": "{}"}
    report = report_of(
        passing_over("jsonrpc"),
        passing_over("http-json", but=("A2A-STREAM-001",)),
        over("http-json", Finding("A2A-STREAM-001", F, "the first event is not a Task", [frame])),
        passing_over("grpc", but=("A2A-STREAM-001",)),
        over("grpc", Finding("A2A-STREAM-001", W, "the Task came after 2.4 s")),
        card())
    stream = entry(report, "A2A-STREAM-001")
    assert stream["status"] == "FAIL" and stream["message"] == "the first event is not a Task"
    assert stream["bindings"] == {"jsonrpc": "PASS", "http-json": "FAIL", "grpc": "WARNING"}
    assert stream["binding_messages"] == {"http-json": "the first event is not a Task",
                                          "grpc": "the Task came after 2.4 s"}
    assert stream["evidence"] == [{**frame, "test": f"{T}[http-json]", "binding": "http-json"}]
    assert stream["findings"] == 3
    assert entry(report, "A2A-STREAM-002")["bindings"] == dict.fromkeys(ALL3, "PASS")
    assert "binding_messages" not in entry(report, "A2A-STREAM-002")
    # Only the bindings a requirement applies to: WIRE-002 is JSON-RPC's, REST-001 HTTP+JSON's.
    assert entry(report, "WIRE-002")["bindings"] == {"jsonrpc": "PASS"}
    assert entry(report, "WIRE-001")["bindings"] == {"jsonrpc": "PASS", "http-json": "PASS"}
    assert entry(report, "REST-001")["bindings"] == {"http-json": "PASS"}
    assert entry(report, "GRPC-001")["bindings"] == {"grpc": "PASS"}
    assert entry(report, "IX-001")["bindings"] == dict.fromkeys(ALL3, "PASS")  # interactions run over them too
    assert "bindings" not in entry(report, "PROG-001")  # a progress stream: no A2A binding
    assert report["verdict"] == "FAIL"
    assert report["bindings"] == {"certified": list(ALL3), "skipped": {}, "declared": None}


def test_a_binding_the_run_did_not_certify_is_skipped_with_its_reason_in_the_report():
    why = "the agent card does not declare a GRPC interface"
    report = report_of(passing_over("jsonrpc"), passing_over("http-json"), card(),
                       certified=("jsonrpc", "http-json"), skipped={"grpc": why}, declared=["jsonrpc", "http-json"])
    assert report["bindings"] == {"certified": ["jsonrpc", "http-json"], "skipped": {"grpc": why},
                                  "declared": ["jsonrpc", "http-json"]}
    stream = entry(report, "A2A-STREAM-001")
    assert stream["bindings"] == {"jsonrpc": "PASS", "http-json": "PASS", "grpc": "SKIPPED"}
    assert stream["status"] == "PASS"
    assert entry(report, "A2A-CARD-001")["bindings"] == {"jsonrpc": "PASS", "http-json": "PASS", "grpc": "SKIPPED"}
    grpc = entry(report, "GRPC-001")
    assert grpc["status"] == "SKIPPED"
    assert grpc["message"] == f"a requirement of the gRPC binding, which this run did not certify: {why}"
    assert grpc["bindings"] == {"grpc": "SKIPPED"}
    assert report["verdict"] == "PASS"


def test_a_grpc_requirement_in_a_json_rpc_only_run_is_skipped_and_keeps_the_verdict_pass():
    skipped = {"http-json": "--binding jsonrpc", "grpc": "--binding jsonrpc"}
    # Even a stray finding on it (a harness slip) does not judge a requirement of a binding the run did not
    # certify, as one of a profile not selected.
    stray = ("suite/test_x.py::test_stray", [Finding("GRPC-001", F, "UNIMPLEMENTED", binding="grpc")])
    report = report_of(passing_over("jsonrpc"), card(), stray, certified=("jsonrpc",), skipped=skipped)
    for req_id in ("GRPC-001", "REST-001"):
        assert entry(report, req_id)["status"] == "SKIPPED", req_id
        assert entry(report, req_id)["tests"] == []
    assert entry(report, "REST-001")["message"] == ("a requirement of the HTTP+JSON binding, which this run did not "
                                                    "certify: --binding jsonrpc")
    assert entry(report, "WIRE-001")["bindings"] == {"jsonrpc": "PASS", "http-json": "SKIPPED"}
    assert report["summary"]["MUST"]["SKIPPED"] == 3  # GRPC-001, REST-001, PROG-001 (progress not selected)
    assert report["summary"]["MUST"]["NOT_TESTED"] == 0
    assert report["verdict"] == "PASS"


def test_in_a_grpc_only_run_the_json_rpc_requirements_are_skipped_naming_each_binding():
    skipped = {"jsonrpc": "the card declares GRPC only", "http-json": "the card declares GRPC only"}
    report = report_of(passing_over("grpc"), card(), certified=("grpc",), skipped=skipped, declared=["grpc"])
    assert entry(report, "WIRE-002")["message"] == ("a requirement of the JSON-RPC binding, which this run did not "
                                                    "certify: the card declares GRPC only")
    assert entry(report, "WIRE-001")["message"] == (
        "a requirement of the JSON-RPC and HTTP+JSON bindings, which this run did not certify: "
        "JSON-RPC: the card declares GRPC only; HTTP+JSON: the card declares GRPC only")
    assert entry(report, "A2A-STREAM-001")["bindings"] == {"jsonrpc": "SKIPPED", "http-json": "SKIPPED",
                                                           "grpc": "PASS"}
    assert report["verdict"] == "PASS"  # a gRPC-only agent can reach PASS


def test_a_finding_without_a_binding_counts_for_every_certified_binding():
    report = report_of(passing_over("jsonrpc"), passing_over("http-json"),
                       ("suite/test_a2a_stream.py::test_once", [Finding("A2A-STREAM-002", W, "judged once")]),
                       card(F, "the card has no name"),
                       certified=("jsonrpc", "http-json"), skipped={"grpc": "not declared"})
    assert entry(report, "A2A-CARD-001")["bindings"] == {"jsonrpc": "FAIL", "http-json": "FAIL", "grpc": "SKIPPED"}
    assert entry(report, "A2A-CARD-001")["binding_messages"] == {"jsonrpc": "the card has no name",
                                                                 "http-json": "the card has no name"}
    # Worse than what each binding's own finding said, so it is each binding's outcome.
    assert entry(report, "A2A-STREAM-002")["bindings"] == {"jsonrpc": "WARNING", "http-json": "WARNING",
                                                           "grpc": "SKIPPED"}
    # Alone, it is what a certified binding without a finding of its own gets.
    only_once = report_of(card(), certified=("jsonrpc", "http-json"), skipped={"grpc": "not declared"})
    assert entry(only_once, "A2A-CARD-001")["bindings"] == {"jsonrpc": "PASS", "http-json": "PASS",
                                                            "grpc": "SKIPPED"}


def test_a_certified_binding_without_a_finding_is_not_tested_and_the_verdict_incomplete():
    report = report_of(passing_over("jsonrpc"), passing_over("http-json"), passing_over("grpc", but=("A2A-STREAM-001",)),
                       card())
    stream = entry(report, "A2A-STREAM-001")
    assert stream["status"] == "PASS"  # the worst of its findings, as before bindings
    assert stream["bindings"] == {"jsonrpc": "PASS", "http-json": "PASS", "grpc": "NOT_TESTED"}
    assert stream["binding_messages"] == {"grpc": "no test produced a finding over gRPC"}
    assert report["verdict"] == "INCOMPLETE"  # a binding it certified was not tested: not a PASS
    assert report["summary"]["MUST"]["NOT_TESTED"] == 0
    # A SHOULD not tested over a binding does not hold the verdict back (only MUST requirements decide it).
    should = report_of(passing_over("jsonrpc"), passing_over("http-json"),
                       passing_over("grpc", but=("A2A-STREAM-020",)), card())
    assert entry(should, "A2A-STREAM-020")["bindings"]["grpc"] == "NOT_TESTED"
    assert should["verdict"] == "PASS"


def test_unselected_and_narrowed_requirements_say_so_over_every_binding():
    report = report_of(passing_over("jsonrpc"), card(), certified=("jsonrpc", "http-json"),
                       skipped={"grpc": "not declared"}, profiles=("a2a",),
                       selection={"narrowed": True, "not_selected": {"A2A-STREAM-002": "not selected (-k x)"}})
    assert entry(report, "IX-001")["status"] == "SKIPPED"
    assert entry(report, "IX-001")["bindings"] == dict.fromkeys(ALL3, "SKIPPED")
    narrowed = entry(report, "A2A-STREAM-002")
    assert (narrowed["status"], narrowed["message"]) == ("NOT_TESTED", "not selected (-k x)")
    assert narrowed["bindings"] == {"jsonrpc": "NOT_TESTED", "http-json": "NOT_TESTED", "grpc": "SKIPPED"}
    assert "binding_messages" not in narrowed


def test_without_bindings_the_report_is_as_before():
    findings = [Finding(r.id, P) for r in CATALOGUE.values()]
    agg = Aggregator()
    agg.add("t.py::t", findings)
    report = build_report(agg, selected_profiles={"a2a"}, level="may", target=TARGET, started="s", finished="f",
                          catalogue=CATALOGUE)
    assert "bindings" not in report
    assert not any("bindings" in e or "binding_messages" in e for e in report["requirements"])
    assert report["verdict"] == "PASS"
    assert not any(line.lstrip().startswith("binding") for line in terminal_summary(report))
    assert "## Bindings" not in render_markdown(report)


@pytest.mark.parametrize("given, complaint", [
    ({"certified": ["jsonrpc", "soap"]}, "unknown binding(s): soap"),
    ({"certified": ["grpc"], "skipped": {"grpc": "x"}}, "both certified and skipped: grpc"),
])
def test_a_selection_naming_an_unknown_binding_or_one_twice_is_refused(given, complaint):
    with pytest.raises(ValueError, match=re.escape(complaint)):
        build_report(Aggregator(), selected_profiles={"a2a"}, level="may", target=TARGET, started="s",
                     finished="f", catalogue=CATALOGUE, bindings=given)


def test_the_same_frame_number_over_two_bindings_is_two_roots():
    """One test id for both bindings (a run loop that does not parametrize by binding), the same exchange label
    and frame number: two different frames, so two root causes; each evidence item names its binding."""
    frame = {"exchange": "stream", "frame": 2, "data": "not JSON"}
    agg = Aggregator()
    agg.add(T, [Finding("A2A-STREAM-001", F, "not a Task", [frame], binding="jsonrpc"),
                Finding("A2A-STREAM-002", F, "no status", [frame], binding="grpc")])
    report = build_report(agg, selected_profiles={"a2a"}, level="may", target=TARGET, started="s", finished="f",
                          catalogue=CATALOGUE, bindings={"certified": ["jsonrpc", "grpc"], "skipped": {}})
    roots = group([e for e in report["requirements"] if e["status"] == "FAIL"])
    assert [root.ids for root in roots] == [["A2A-STREAM-001"], ["A2A-STREAM-002"]]
    assert [root.frame["binding"] for root in roots] == ["jsonrpc", "grpc"]
    same = build_report(agg, selected_profiles={"a2a"}, level="may", target=TARGET, started="s", finished="f",
                        catalogue=CATALOGUE)  # without bindings (evidence still names them): apart all the same
    assert len(group([e for e in same["requirements"] if e["status"] == "FAIL"])) == 2


# -- the writers ---------------------------------------------------------------------------------------------

def three_bindings_failing() -> dict:
    frame = {"exchange": "stream", "frame": 1, "data": '{"statusUpdate": {}}', "note": "not a Task"}
    return report_of(
        passing_over("jsonrpc"),
        passing_over("http-json", but=("A2A-STREAM-001", "REST-001")),
        over("http-json", Finding("A2A-STREAM-001", F, "the first event is not a Task", [frame]),
             Finding("REST-001", F, "GET /tasks/t-1 answered 404 without an ErrorInfo")),
        passing_over("grpc", but=("A2A-STREAM-001",)),
        over("grpc", Finding("A2A-STREAM-001", E, "no answer before the time limit")),
        card(), declared=list(ALL3))


def test_junit_names_the_bindings_of_a_failure_and_keeps_one_case_per_requirement():
    report = three_bindings_failing()
    root = ElementTree.fromstring(render_junit(report).encode("utf-8"))
    names = [c.get("name") for c in root.iter("testcase") if c.get("classname") != "streamcert"]
    assert sorted(n.split(":")[0] for n in names) == sorted(CATALOGUE)  # one case each, named as before
    [case] = [c for c in root.iter("testcase") if c.get("name").startswith("A2A-STREAM-001:")]
    failure = case.find("failure")
    assert failure.get("message") == "over HTTP+JSON (FAIL), gRPC (ERROR): the first event is not a Task"
    assert "bindings: JSON-RPC PASS, HTTP+JSON FAIL, gRPC ERROR" in failure.text
    assert "over gRPC: no answer before the time limit" in failure.text
    [rest] = [c for c in root.iter("testcase") if c.get("name").startswith("REST-001:")]
    assert rest.find("failure").get("message").startswith("over HTTP+JSON: GET /tasks/t-1 answered 404")
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["bindings.certified"] == "jsonrpc,http-json,grpc"
    assert props["bindings.declared"] == "jsonrpc,http-json,grpc"


def test_junit_verdict_says_which_requirements_a_certified_binding_did_not_test():
    report = report_of(passing_over("jsonrpc"), passing_over("http-json"),
                       passing_over("grpc", but=("A2A-STREAM-001",)), card(),
                       certified=ALL3, skipped={})
    root = ElementTree.fromstring(render_junit(report).encode("utf-8"))
    [verdict] = [c for c in root.iter("testcase") if c.get("name") == "verdict"]
    error = verdict.find("error")
    assert error.get("message").startswith("INCOMPLETE: 1 selected MUST requirement(s) not tested over a certified "
                                           "binding")
    assert "not tested over a certified binding: A2A-STREAM-001 (grpc)" in error.text
    [case] = [c for c in root.iter("testcase") if c.get("name").startswith("A2A-STREAM-001:")]
    assert case.find("failure") is None and case.find("skipped") is None  # it passed where it was judged
    assert "not tested over gRPC, a certified binding" in case.find("system-out").text


def test_junit_skips_a_requirement_of_a_binding_not_certified_with_its_reason():
    report = report_of(passing_over("jsonrpc"), card(), certified=("jsonrpc",),
                       skipped={"http-json": "--binding jsonrpc", "grpc": "--binding jsonrpc"})
    root = ElementTree.fromstring(render_junit(report).encode("utf-8"))
    [case] = [c for c in root.iter("testcase") if c.get("name").startswith("GRPC-001:")]
    assert case.find("skipped").get("message") == ("SKIPPED: a requirement of the gRPC binding, which this run did "
                                                   "not certify: --binding jsonrpc")


def test_terminal_summary_has_a_line_per_binding():
    report = three_bindings_failing()
    lines = terminal_summary(report)
    assert "  binding JSON-RPC  7 PASS" in lines
    assert "  binding HTTP+JSON 5 PASS, 2 FAIL" in lines
    assert "  binding gRPC      5 PASS, 1 ERROR" in lines
    assert ("  A2A-STREAM-001  title of A2A-STREAM-001 — the first event is not a Task [over HTTP+JSON (FAIL), "
            "gRPC (ERROR)]") in lines
    assert "  REST-001  title of REST-001 — GET /tasks/t-1 answered 404 without an ErrorInfo [over HTTP+JSON]" in lines
    skipped = report_of(passing_over("jsonrpc"), card(), certified=("jsonrpc",),
                        skipped={"http-json": "--binding jsonrpc", "grpc": "the card does not declare it"})
    lines = terminal_summary(skipped)
    assert "  binding gRPC      not certified: the card does not declare it" in lines
    untested = report_of(passing_over("jsonrpc"), passing_over("http-json"),
                         passing_over("grpc", but=("A2A-STREAM-001", "IX-001")), card())
    assert ("MUST requirements not tested over a certified binding (2): A2A-STREAM-001 (grpc), IX-001 (grpc)"
            in terminal_summary(untested))


def test_markdown_shows_the_bindings_side_by_side():
    md = render_markdown(three_bindings_failing())
    section = md.split("## Bindings", 1)[1].split("\n## ", 1)[0]
    assert "Certified: JSON-RPC, HTTP+JSON, gRPC. Declared by the agent card: JSON-RPC, HTTP+JSON, gRPC." in section
    assert "| outcome | JSON-RPC | HTTP+JSON | gRPC |" in section
    assert "| PASS | 7 | 5 | 5 |" in section and "| FAIL | 0 | 2 | 0 |" in section and "| ERROR | 0 | 0 | 1 |" in section
    assert "1 requirement differs between the bindings." in section
    assert "| A2A-STREAM-001 | MUST | PASS | FAIL | ERROR |" in section
    assert "REST-001 |" not in section  # HTTP+JSON's own: nothing to differ from
    # The failure's head says where it failed, each binding with its status when they differ.
    assert ("MUST · a2a-stream · [A2A 1.0.1 · §1](https://a2a-protocol.org/v1.0.0/specification/) · over HTTP+JSON "
            "(FAIL), gRPC (ERROR)") in md
    assert "MUST · rest · [A2A 1.0.1 · §1](https://a2a-protocol.org/v1.0.0/specification/) · over HTTP+JSON\n" in md
    skipped = render_markdown(report_of(passing_over("jsonrpc"), card(), certified=("jsonrpc",),
                                       skipped={"http-json": "--binding jsonrpc", "grpc": "<b>not</b> declared"}))
    assert "Not certified: gRPC — &lt;b&gt;not&lt;/b&gt; declared" in skipped
    assert "differ" not in skipped.split("## Bindings", 1)[1]  # one binding: nothing to compare


def test_markdown_stays_in_budget_when_every_requirement_differs():
    """The shipped catalogue, every requirement of the binding profiles failing over gRPC only with a long
    message: the table of differences is cut, the page stays under its bound and says what it left out."""
    catalogue = load_catalogue()
    agg = Aggregator()
    profiles = {"a2a", "interactions", "plans"}
    for binding in ALL3:
        outcome = F if binding == "grpc" else P
        agg.add(f"{T}[{binding}]", [Finding(r.id, outcome, "broken over gRPC " + "x" * 300, binding=binding)
                                    for r in catalogue.values() if r.profile in profiles and r.applies_to(binding)])
    report = build_report(agg, selected_profiles=profiles, level="may", target=TARGET, started="s", finished="f",
                          bindings={"certified": list(ALL3), "skipped": {}, "declared": list(ALL3)})
    md = render_markdown(report)
    assert len(md.encode("utf-8")) <= MD_BUDGET
    assert "## Bindings" in md and "| outcome | JSON-RPC | HTTP+JSON | gRPC |" in md
    rows = re.findall(r"^\| [A-Z0-9-]+ \| (?:MUST|SHOULD|MAY) \| PASS \| PASS \| FAIL \|$", md, re.M)
    differ = sum(1 for e in report["requirements"] if len(set(e.get("bindings", {}).values())) > 1)
    assert 0 < len(rows) < differ
    assert f"of the table of the {differ} requirement(s) whose status differs between bindings" in md


# -- who was certified, in words (issue 28) ----------------------------------------------------------------

def test_the_implementation_its_card_names_is_in_every_report_and_no_internal_word_is():
    report = report_of(passing_over("jsonrpc"), passing_over("http-json"), card(), certified=("jsonrpc", "http-json"))
    report["target"] = {**TARGET, "fault": None, "embedded": True}
    report["implementation"] = {"name": "Acme *Agent*", "version": "2.1.0"}
    line = terminal_summary(report)[0]
    assert line.startswith("streamcert verdict: PASS · A2A over JSON-RPC and HTTP+JSON · ")
    assert line.endswith(" MUST · Acme *Agent* 2.1.0")
    md = render_markdown(report)
    head = md.split("\n\n")[:3]
    assert head[0].endswith(" MUST · Acme \\*Agent\\* 2.1.0")  # the card's words, inert in Markdown
    run = next(p for p in md.split("\n\n") if p.startswith("implementation: "))
    assert run.startswith("implementation: Acme \\*Agent\\* 2.1.0 · the embedded reference · a2a: http://127.0.0.1:41241")
    for internal in ("embedded: True", "fault: None", "True", "None"):
        assert internal not in md, internal
    assert "No requirement differs between the bindings." in md  # its verb agrees
    # "By profile": the profiles as --profile names them, never a requirement family
    table = md.split("| profile |", 1)[1].split("\n\n", 1)[0]
    rows = [row.split(" | ")[0].strip("| ") for row in table.splitlines()[2:]]
    assert rows == ["a2a", "interactions"]
    without = report_of(passing_over("jsonrpc"), card(), certified=("jsonrpc",))
    assert terminal_summary(without)[0].endswith(" MUST")  # no card read: nothing added
    assert not [p for p in render_markdown(without).split("\n\n") if p.startswith("implementation: ")]
