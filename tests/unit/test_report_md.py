"""report.md, the CI step summary: failures by root cause with their frames folded, counts and short lists for
the rest, text from the run escaped, and never more than MD_BUDGET bytes, whatever the run."""

from __future__ import annotations

import json
import re

import pytest

from streamcert.catalogue import PROFILES, Requirement, family_of, load_catalogue
from streamcert.outcomes import Finding, Outcome
from streamcert.report.aggregate import Aggregator, build_report, regressions_section
from streamcert.report.markdown import MD_BUDGET, md_source, md_text, render_markdown
from streamcert.report.writers import write_all

P, F, E, W, NS = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.WARNING, Outcome.NON_STRICT
TARGET = {"a2a": "http://127.0.0.1:41241", "acp": None, "progress": None, "client": None}
XSS = "<script>alert('x')</script>"
SEED_FILE = re.compile(r"\d{3}_[0-9a-f]{16}\.txt")
T1, T2 = "suite/test_a2a_stream.py::test_stream_basic", "suite/test_a2a_stream.py::test_cancel"


def req(req_id: str, level: str = "MUST", title: str = "", source: str = "") -> Requirement:
    family, profile = family_of(req_id)
    return Requirement(id=req_id, level=level, title=title or f"Title of {req_id}.",
                       source=source or f"A2A 1.0.1 · §3.{req_id[-1]} Streaming ¶2", family=family, profile=profile)


CATALOGUE = {r.id: r for r in [
    req("WIRE-001"), req("WIRE-002"), req("WIRE-007", "SHOULD"), req("A2A-STREAM-001"), req("A2A-STREAM-002"),
    req("A2A-STREAM-014"), req("A2A-STREAM-020", "SHOULD"), req("A2A-TASK-010"), req("IX-001"),
]}


def report_of(*tests: tuple[str, list[Finding]], catalogue=None, profiles=("a2a", "interactions"), **kw) -> dict:
    agg = Aggregator()
    for nodeid, findings in tests:
        agg.add(nodeid, findings)
    return build_report(agg, selected_profiles=set(profiles), level="may", target=TARGET,
                        started="2026-11-29T15:00:00.000Z", finished="2026-11-29T15:00:09.120Z",
                        catalogue=CATALOGUE if catalogue is None else catalogue, **kw)


def frame(n: int, data: str, note: str = "", exchange: str = "stream") -> dict:
    item = {"exchange": exchange, "frame": n, "t": 0.01 * n, "data": data}
    return {**item, "note": note} if note else item


def exchange(label: str = "stream", **kw) -> dict:
    return {"exchange": label, "request": "SendStreamingMessage", "status": 200,
            "content_type": "text/event-stream", **kw}


BROKEN = '{"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "t-1", "sta'
GOOD = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "t-1", "kind": "</pre><b>"}}})


def one_broken_frame() -> dict:
    """A run whose frame 2 is not JSON: WIRE-002 blames it, A2A-STREAM-014 could not read it (its evidence
    names it as ex_evidence does), A2A-TASK-010 fails for a reason of its own."""
    source = CATALOGUE["A2A-STREAM-014"].source
    return report_of(
        (T1, [Finding("WIRE-002", F, "frame 2: data is not JSON", evidence=[frame(2, BROKEN, "data is not JSON")]),
              Finding("A2A-STREAM-014", F, f"no WORKING status says 'Checking out' [{source}]",
                      evidence=[exchange(frame=2, t=0.02, data=BROKEN, unread="data is not JSON (cut)")]),
              Finding("A2A-STREAM-001", F, "first frame is not a Task",
                      evidence=[exchange(), frame(1, GOOD, "the first frame")]),
              Finding("WIRE-007", W, "echo | missing"), Finding("WIRE-001", P), Finding("A2A-STREAM-002", P)]),
        (T2, [Finding("A2A-TASK-010", F, "CancelTask did not return the task",
                      evidence=[{"exchange": "cancel", "request": "CancelTask", "status": 200,
                                 "content_type": "application/json", "body": '{"error": {"code": -32002}}'}])]),
    )


def headings(md: str) -> list[str]:
    return re.findall(r"^### (\S+) (\S+) — ", md, re.M)


def size(md: str) -> int:
    return len(md.encode("utf-8"))


def outside_fences(md: str) -> str:
    return re.sub(r"^(`{3,})[^\n]*\n.*?\n\1$", "", md, flags=re.M | re.S)


def details_balanced(md: str) -> bool:
    """Each fold opens and closes, on lines of its own after a blank line (GitHub reads Markdown again only
    after a blank line), with a blank line after its summary."""
    page = outside_fences(md)
    return (page.count("<details>") == page.count("</details>") == page.count("\n\n<details><summary>")
            == len(re.findall(r"</summary>\n\n", page)) == page.count("\n\n</details>\n"))


# -- grouped by root cause -------------------------------------------------------------------------------

def test_one_broken_frame_is_one_section_with_what_it_caused_listed_under_it():
    md = render_markdown(one_broken_frame())
    assert headings(md) == [("FAIL", "WIRE-002"), ("FAIL", "A2A-STREAM-001"), ("FAIL", "A2A-TASK-010")]
    assert "## Failures: 4 requirement(s), 3 root cause(s)" in md
    wire = md.index("### FAIL WIRE-002")
    member = md.index("- also failed by this frame: **A2A-STREAM-014** — Title of A2A-STREAM-014. (FAIL · MUST)")
    assert wire < member < md.index("### FAIL A2A-STREAM-001")
    # the head: its sentence, its source, its message; its frame, folded
    assert md.index("MUST · wire · [A2A 1.0.1 · §3.2 Streaming ¶2](https://a2a-protocol.org/v1.0.0/specification/)") > wire
    assert "frame 2: data is not JSON" in md
    assert "**frame 2 of stream** · at 0.02 s · test " + md_text(T1) in md
    assert f"```\n{BROKEN}\n```" in md  # not JSON: as it came
    assert details_balanced(md)
    # the member's message, once, without the source its finding appended (shown beside the title instead)
    assert "**A2A-STREAM-014**: no WORKING status says 'Checking out'\n" in md
    assert "[" + md_text(CATALOGUE["A2A-STREAM-014"].source) not in md


def test_the_same_frame_of_several_runs_is_shown_once():
    same = [{**frame(2, BROKEN, "data is not JSON"), "test": test} for test in (T1, T2, "suite/t.py::t3")]
    report = report_of((T1, [Finding("WIRE-002", F, "frame 2: data is not JSON", evidence=same)]))
    md = render_markdown(report)
    assert md.count(BROKEN) == 1
    assert f"_The same frame in the run of 2 more tests: {md_text(T2)}, suite/t.py::t3_" in md


def test_frames_come_first_pretty_printed_then_the_exchanges():
    md = render_markdown(one_broken_frame())
    section = md[md.index("### FAIL A2A-STREAM-001"):md.index("### FAIL A2A-TASK-010")]
    assert section.index("**frame 1 of stream**") < section.index("**exchange stream** · SendStreamingMessage → "
                                                                  "HTTP 200 · text/event-stream")
    assert '```json\n{\n  "jsonrpc": "2.0",' in section  # a frame that is JSON: pretty-printed
    assert '"kind": "</pre><b>"' in section  # inside the fence, verbatim
    assert "the first frame" in section  # its note
    cancel = md[md.index("### FAIL A2A-TASK-010"):]
    assert '```json\n{\n  "error": {\n    "code": -32002' in cancel  # a body that is JSON, too


def test_failures_without_a_frame_and_with_one_message_are_one_section():
    # A view that could not be built: every requirement of its rules is ERROR with the same message.
    why = "stream (SendStreamingMessage): ReadTimeout"
    report = report_of((T1, [Finding(r, E, why, evidence=[exchange(error="ReadTimeout")])
                             for r in ("A2A-STREAM-001", "A2A-STREAM-002", "A2A-STREAM-014")]))
    md = render_markdown(report)
    assert headings(md) == [("ERROR", "A2A-STREAM-001")]
    assert "## Failures: 3 requirement(s), 3 root cause(s); 2 said what another said and are listed under it" in md
    assert md.count("- also failed with the same message: ") == 2
    assert "**A2A-STREAM-014** — Title of A2A-STREAM-014. (ERROR · MUST)" in md


def test_members_without_evidence_are_folded_with_their_messages():
    report = report_of((T1, [Finding(r, E, "stream (SendStreamingMessage): ReadTimeout") for r in
                             ("A2A-STREAM-001", "A2A-STREAM-002")] + [Finding("WIRE-001", F, "one\ntwo")]))
    md = render_markdown(report)
    assert headings(md) == [("FAIL", "WIRE-001"), ("ERROR", "A2A-STREAM-001")]
    assert "<details><summary>The messages</summary>\n\ntwo\n\n</details>" in md
    assert "<details><summary>The messages</summary>\n\n**A2A-STREAM-002**: stream (SendStreamingMessage): " in md


def test_must_before_should_and_expected_failures_last():
    report = report_of(
        (T1, [Finding("WIRE-007", F, "should, failed"), Finding("WIRE-001", F, "expected"),
              Finding("A2A-STREAM-020", F, "should too"), Finding("A2A-TASK-010", F, "must")]),
        baseline={"expected_failures": ["WIRE-001"]})
    md = render_markdown(report)
    assert [h[1] for h in headings(md)] == ["A2A-TASK-010", "WIRE-007", "A2A-STREAM-020", "WIRE-001"]
    assert "· expected by baseline" in md[md.index("### FAIL WIRE-001"):]


# -- counts and folded lists -----------------------------------------------------------------------------

def test_warnings_and_untested_are_counted_with_a_short_folded_list():
    report = report_of((T1, [Finding("WIRE-007", W, "echo | missing"), Finding("A2A-STREAM-020", NS, "weaker",
                                                                                reading="B"),
                             Finding("WIRE-001", P)]))
    md = render_markdown(report)
    assert "## Warnings and non-strict readings: 1 WARNING, 1 NON_STRICT" in md
    assert "- WARNING **WIRE-007** Title of WIRE-007. — echo \\| missing" in md
    untested = [e["id"] for e in report["requirements"] if e["status"] == "NOT_TESTED"]
    assert f"## Not tested: {len(untested)}" in md
    assert "Each for the same reason: no test produced a finding." in md
    folded = md[md.index("## Not tested"):]
    assert folded.index("<details><summary>") < folded.index("- MUST **IX-001**") < folded.index("</details>")
    assert details_balanced(md)


def test_the_lists_are_short():
    many = {r.id: r for r in (req(f"A2A-STREAM-{n:03d}", title="A title that runs on. " * 4) for n in range(1, 200))}
    report = report_of((T1, [Finding(rid, W, "slow " * 40) for rid in list(many)[:100]]), catalogue=many,
                       profiles=("a2a",))
    md = render_markdown(report)
    assert size(md) <= MD_BUDGET
    assert "## Warnings and non-strict readings: 100 WARNING" in md and "## Not tested: 99" in md
    assert re.search(r"- and \d+ more in compatibility\.json", md)


# -- escaping ----------------------------------------------------------------------------------------------

def test_text_from_the_run_stays_escaped_everywhere():
    fence_breaker = "```</details>`````"
    evidence = [frame(2, fence_breaker + XSS, note=XSS, exchange=XSS),
                {"exchange": "card", "request": XSS, "status": 500, "content_type": XSS, "body": XSS, "test": XSS,
                 "error": XSS, "odd": XSS, "nested": {"x": XSS}}]
    report = report_of((XSS, [Finding("WIRE-002", F, f"bad frame {XSS}\n| pipe | {XSS}", evidence=evidence),
                              Finding("WIRE-007", W, XSS), Finding("A2A-STREAM-014", E, XSS)]))
    md = render_markdown(report)
    outside = outside_fences(md)
    assert "<script>" not in outside and "&lt;script&gt;" in outside
    assert "</details>" not in outside.replace("\n</details>\n", "\n")  # only the page's own
    assert "\\| pipe \\|" in outside
    assert "``````\n```</details>`````<script>" in md  # a fence longer than any run of backticks it holds
    for summary in re.findall(r"<summary>(.*?)</summary>", md):
        assert re.fullmatch(r"[A-Za-z0-9 ,()]+", summary), summary  # only the page's own words
    assert details_balanced(md)


def test_markdown_lists_failures_escaped_then_warnings_then_not_tested(tmp_path):
    # moved from test_report.py: a frame that is JSON is now pretty-printed, so its member is asserted alone
    frames = [{"exchange": "message/stream", "frame": 2, "t": 0.012, "data": '{"kind": "</pre><b>"}'}]
    agg = Aggregator()
    agg.add("suite/test_a.py::test_ok", [
        Finding("WIRE-001", E, "connection refused"), Finding("A2A-STREAM-001", P), Finding("A2A-STREAM-014", P),
        Finding("A2A-STREAM-002", F, f"bad frame {XSS}\nsecond line", evidence=frames),
        Finding("WIRE-007", W, "echo | missing")])
    report = build_report(agg, selected_profiles={"a2a"}, level="may", target=TARGET, started="s", finished="f",
                          catalogue=CATALOGUE)
    report["requirements"].append({**report["requirements"][-1], "id": "IX-002", "status": "NOT_TESTED"})
    write_all(report, tmp_path)
    md = (tmp_path / "report.md").read_text("utf-8")
    assert "**FAIL**" in md.splitlines()[0]
    assert "| MUST |" in md
    assert "<script>" not in md
    assert "&lt;script&gt;" in md
    assert md.index("A2A-STREAM-002") < md.index("WIRE-007") < md.index("IX-002")
    assert "connection refused" in md
    assert "echo \\| missing" in md  # a pipe cannot break the Markdown
    assert '```json\n{\n  "kind": "</pre><b>"\n}\n```' in md  # evidence sits inside a code fence, verbatim


# -- the budget ------------------------------------------------------------------------------------------

def long_evidence(n: int) -> list[dict]:
    data = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"text": "<b>x</b> " * 60}}})
    return [frame(i + 1, data[:400], note="a long note " * 30) for i in range(n)] + [
        exchange(body="x" * 400, error="ReadTimeout " * 20)]


def test_a_huge_failing_report_stays_in_budget_heads_first_most_severe_first():
    levels = ("SHOULD", "MUST", "MUST", "MAY")
    many = {r.id: r for r in (req(f"A2A-STREAM-{n:03d}", levels[n % 4], title="A requirement sentence. " * 6,
                                  source="A2A 1.0.1 · §3.1.2 Send Streaming Message ¶10 item 2; " * 3)
                              for n in range(1, 400))}
    message = "\n".join([f"it broke {XSS} " * 40] * 3)
    agg = Aggregator()
    for n, rid in enumerate(many):
        agg.add(f"suite/test_x.py::test_{n}", [Finding(rid, F if n % 3 else E, message, evidence=long_evidence(12))])
    report = build_report(agg, selected_profiles={"a2a"}, level="may", target=TARGET, started="s", finished="f",
                          catalogue=many)
    md = render_markdown(report)
    assert size(md) <= MD_BUDGET
    assert details_balanced(md)
    shown = [rid for _, rid in headings(md)]
    assert shown and all(many[rid].level == "MUST" for rid in shown)  # MUST before SHOULD: no SHOULD fits
    musts = [rid for rid in many if many[rid].level == "MUST"]
    assert shown == musts[:len(shown)]  # catalogue order within a level; none skipped
    last = md.rstrip("\n").splitlines()[-1]
    assert last.startswith("_Left out to keep this summary under 10 KB: ")
    assert "compatibility.json and report.html" in last and f"{len(many) - len(shown)} root cause(s)" in last


def test_every_source_of_the_catalogue_is_cited_as_the_catalogue_has_it():
    catalogue = load_catalogue()
    ids = list(catalogue)
    for start in range(0, len(ids), 8):  # eight failures at a time: each shown with its source
        chunk = ids[start:start + 8]
        agg = Aggregator()
        agg.add("suite/test_x.py::test_x", [Finding(rid, F, f"message of {rid} [{catalogue[rid].source}]")
                                            for rid in chunk])
        report = build_report(agg, selected_profiles=set(PROFILES), level="may", target={}, started="s",
                              finished="f")
        md = render_markdown(report)
        assert size(md) <= MD_BUDGET and not SEED_FILE.search(md)
        for rid in chunk:
            assert f"— {md_text(catalogue[rid].title)}\n" in md, rid
            assert f" · {md_source(catalogue[rid].source)}\n" in md, rid  # linked where its text is public


def test_a_run_that_could_not_run_is_one_section_in_budget():
    why = "cannot reach http://127.0.0.1:9/.well-known/agent-card.json (ConnectError: " + "<x> " * 2000 + ")"
    report = build_report(Aggregator(), selected_profiles=set(PROFILES), level="may", target=TARGET,
                          started="s", finished="f", could_not_run=why)
    md = render_markdown(report)
    assert size(md) <= MD_BUDGET
    assert md.count("## Could not run") == 1 and not headings(md)
    assert f"the {len(load_catalogue())} selected requirements are ERROR with this reason" in md


def test_a_target_gone_during_the_run_is_one_section_in_budget():
    why = "stream (SendStreamingMessage): ConnectError: All connection attempts failed"
    agg = Aggregator()
    for rid in load_catalogue():
        agg.add("suite/test_x.py::test_x", [Finding(rid, E, why, evidence=[exchange(error="ConnectError")])])
    report = build_report(agg, selected_profiles=set(PROFILES), level="may", target=TARGET, started="s",
                          finished="f")
    md = render_markdown(report)
    assert size(md) <= MD_BUDGET and len(headings(md)) == 1


def test_stale_baseline_and_regressions_are_shown_within_budget():
    compared = [{"scenario": f"scenario-{n}", "cassette": f"cassettes/s{n}.json", "test": "t.py::t",
                 "differences": 90, "lines": [f"- frame {i}: {'<b>' * 50}" for i in range(90)]} for n in range(40)]
    report = report_of((T1, [Finding("WIRE-001", P), Finding("WIRE-002", F, "broken " * 200,
                                                              evidence=long_evidence(10))]),
                       baseline={"expected_failures": ["WIRE-001"]},
                       regressions=regressions_section("cassettes/", None, compared))
    md = render_markdown(report)
    assert size(md) <= MD_BUDGET and details_balanced(md)
    assert "## Stale baseline entries (now passing: remove them from the baseline)\n\n- WIRE-001" in md
    assert "## Regressions against cassettes/" in md and "40 of 40 scenario(s) differ" in md
    assert "- scenario-0: 90 difference(s) · cassettes/s0.json · t.py::t" in md
    assert "- and 30 more: scenario-18, scenario-19" in md
    assert "### FAIL WIRE-002" in md  # the failure's head has its place beside the diffs
    assert "<details><summary>The differences of scenario 1 of 40</summary>\n\n**scenario-0**" in md
    assert "the diffs of" in md.rstrip("\n").splitlines()[-1]


@pytest.mark.parametrize("budget", [3000, 5000, 8000])
def test_a_smaller_budget_is_kept_too(budget):
    report = report_of((T1, [Finding(rid, F, "x " * 300, evidence=long_evidence(5)) for rid in CATALOGUE]))
    md = render_markdown(report, budget=budget)
    assert size(md) <= budget and details_balanced(md)
    assert "Left out to keep this summary under" in md


def test_fixed_parts_over_the_budget_are_cut_at_a_line():
    many = {r.id: r for r in (req(f"A2A-STREAM-{n:03d}") for n in range(1, 300))}
    stale = {"expected_failures": list(many)}
    report = report_of((T1, [Finding(rid, P) for rid in many]), catalogue=many, profiles=("a2a",), baseline=stale)
    report["target"] = {f"target {n}": "x" * 300 for n in range(100)}
    assert size(render_markdown(report, budget=3000)) <= 3000  # bounded by construction: whole
    md = render_markdown(report, budget=1400)
    assert size(md) <= 1400
    assert md.startswith("# streamcert verdict: **FAIL**")
    assert md.rstrip("\n").splitlines()[-1].startswith("_Cut here to keep this summary under 1.4 KB: ")
