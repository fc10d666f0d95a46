"""report.html in a real browser (Debian's chromium, driven by playwright): no console or page errors, the
verdict banner, the filters, a failure opened to its frames with the named member marked, a timing rule's
figure, hostile text shown and never run. Full-page screenshots of a passing and a failing report are written
to reports/test-output/report-html/ (the test prints the paths).

The reports are built with `build_report` on the shipped catalogue from findings shaped like real runs' (the
evidence and measured values are those the rules record: rules/a2a/stream.py, rules/progress/progress.py).

A missing browser or playwright fails these tests (it does not skip them): `.ci/run` installs both.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamcert.catalogue import PROFILES, load_catalogue
from streamcert.outcomes import Finding, Outcome
from streamcert.report.aggregate import Aggregator, build_report, regressions_section
from streamcert.report.html import html_frame, render_html
from streamcert.report.sources import source_url

CHROMIUM = "/usr/bin/chromium"
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run"]
OUTPUT = Path(__file__).resolve().parents[2] / "reports" / "test-output" / "report-html"
VIEWPORT = {"width": 1280, "height": 900}

P, F, E, W, NS = Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.WARNING, Outcome.NON_STRICT
CATALOGUE = load_catalogue()
HOSTILE = "</script><img src=x onerror=alert(1)><script>window.pwned=1</script>"
STREAM_TEST = "suite/test_a2a_stream.py::test_stream_basic"
STARTED, FINISHED = "2026-11-30T12:42:54.306Z", "2026-11-30T12:43:11.125Z"
TARGET = {"a2a": "http://127.0.0.1:38745", "acp": None, "progress": "http://127.0.0.1:38745/progress",
          "client": None, "fault": None, "embedded": True}


def envelope(result: dict) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": result}, separators=(",", ":"))


def frame(exchange: str, number: int, t: float, data: str, note: str = "") -> dict:
    item = {"exchange": exchange, "frame": number, "t": t, "data": data}
    return {**item, "note": note} if note else item


TASK = {"taskId": "6952dabc-09cc-4fa5-b9ce-e94a226c6402", "contextId": "8cac1cb7-e370-40ab-8ae8-40511347f443"}
# A frame cut short, as the quote limit leaves it; the same frame fails three requirements: one root cause.
CUT = envelope({"statusUpdate": {**TASK, "status": {"state": "TASK_STATE_WORKING"}}})[:120] + "… (455 chars)"
LATE_CHUNK = envelope({"artifactUpdate": {**TASK, "append": True, "artifact": {
    "artifactId": "test-log", "parts": [{"text": HOSTILE}]}}})
TERMINAL = envelope({"statusUpdate": {**TASK, "status": {"state": "TASK_STATE_COMPLETED",
                                                         "timestamp": "2026-11-30T12:44:18.555Z"}}})


def progress_frame(phase: str, **data) -> str:
    return json.dumps({"status": "Answering", "progress": {"phase": phase, "since": 1796042585024, **data}})


PACING = {"min_span_5_s": 0.078, "most_data_updates": 69, "min_gap_s": 0.019, "span_tolerance_s": 0.15,
          "max_updates_in_2_s": 69, "fail_updates": 12}


def failing_findings() -> list[tuple[str, list[Finding]]]:
    not_json = frame("stream", 2, 0.067, CUT, f"data is not JSON (JSONDecodeError) {HOSTILE}")
    return [
        (STREAM_TEST, [
            Finding("WIRE-002", F, f"frame 2: data is not JSON {HOSTILE}", [not_json]),
            Finding("A2A-STREAM-014", F, "no WORKING status says 'Checking out 9f3c2e1'",
                    [frame("stream", 2, 0.067, CUT)]),
            Finding("A2A-STREAM-009", F, "the stream ends without a terminal state", [frame("stream", 2, 0.067, CUT)]),
            Finding("A2A-STREAM-007", F, "stream chunk(s) with append: true to an artifact after its lastChunk",
                    [frame("stream", 8, 0.065, LATE_CHUNK, "append: true after its lastChunk")]),
            Finding("A2A-STREAM-010", F, "stream: still open 10.01 s after the terminal TASK_STATE_COMPLETED when "
                    "the suite cut it", [frame("stream", 9, 0.065, TERMINAL, "terminal")],
                    measured={"close_after_terminal_s": 10.011, "tolerance_s": 2.0}),
            Finding("A2A-TASK-010", E, "CancelTask: no answer before the time limit",
                    [{"exchange": "cancel", "request": "CancelTask", "status": 0, "content_type": "",
                      "error": "timed out after 15 s"}]),
        ]),
        ("suite/test_progress.py::test_fast_writer", [
            Finding("PROG-009", F, "writing: 69 data-only updates within 1.380 s, a sustained 34.5 a second over 2 s",
                    [frame("progress", 2, 0.042, progress_frame("writing", rate=50.0), "first"),
                     frame("progress", 70, 1.422, progress_frame("writing", rate=300.0), "last")], measured=PACING),
            Finding("PROG-010", W, "writing (step 2): 1.001 s without a frame while its data kept changing",
                    [frame("progress", 1, 0.022, progress_frame("writing"))],
                    measured={"max_gap_s": 1.001, "lasted_s": 2.26, "data_frames": 5, "gap_limit_s": 0.6}),
        ]),
    ]


def report_from(tests: list[tuple[str, list[Finding]]], profiles: set[str], **kw) -> dict:
    """Every selected requirement PASS but those the tests judged otherwise."""
    judged = {f.req_id for _, findings in tests for f in findings}
    agg = Aggregator()
    agg.add("suite/test_all.py::test_rest", [Finding(r.id, P, "as the catalogue says") for r in CATALOGUE.values()
                                            if r.profile in profiles and r.id not in judged])
    for nodeid, findings in tests:
        agg.add(nodeid, findings)
    return build_report(agg, selected_profiles=profiles, level="may", target=TARGET, started=STARTED,
                        finished=FINISHED, **kw)


def failing_report() -> dict:
    return report_from(failing_findings(), {"a2a", "progress"})


def passing_report() -> dict:
    extra = [("suite/test_progress.py::test_fast_writer", [
        Finding("PROG-010", W, "writing (step 2): 0.7 s without a frame while its data kept changing",
                [frame("progress", 1, 0.022, progress_frame("writing"))],
                measured={"max_gap_s": 0.7, "lasted_s": 2.26, "data_frames": 5, "gap_limit_s": 0.6}),
        Finding("PROG-009", P, "five consecutive data-only updates span at least 0.999 s",
                measured={**PACING, "min_span_5_s": 0.999, "max_updates_in_2_s": 5, "most_data_updates": 5}),
        Finding("WIRE-003", NS, "id echoed as a string", reading="B")])]
    return report_from(extra, set(PROFILES))


# -- the browser ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser() -> Iterator:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed: pip install '.[test]' (.ci/run does)")
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"no browser at {CHROMIUM}: apt-get install -y chromium (.ci/run does)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        yield chromium
        chromium.close()


class Page:
    """One report loaded from file://, with what the browser said about it."""

    def __init__(self, browser, report: dict, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_html(report), "utf-8")
        self.path = path
        self.page = browser.new_page(viewport=VIEWPORT)
        self.console: list[str] = []
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.goto(path.as_uri())

    def visible(self, selector: str, attribute: str = "id") -> list[str]:
        """An attribute of each element the selector finds that is shown (one round trip for a whole table)."""
        return self.page.eval_on_selector_all(
            selector, "(els, name) => els.filter(e => e.checkVisibility()).map(e => e.getAttribute(name))", attribute)

    def statuses(self, selector: str) -> list[str]:
        return self.visible(selector, "data-status")

    def assert_quiet(self) -> None:
        errors = [m for m in self.console if m.startswith(("error", "warning"))]
        assert not errors and not self.errors and not self.dialogs, (errors, self.errors, self.dialogs)

    def screenshot(self, name: str) -> Path:
        shot = OUTPUT / name
        self.page.screenshot(path=str(shot), full_page=True)
        return shot


def announce(record_property, name: str, path: Path) -> None:
    record_property(name, str(path))
    print(f"{name}: {path}")


def test_passing_report_in_the_browser(browser, record_property):
    report = passing_report()
    report["implementation"] = {"name": "Acme <Agent>", "version": "2.1.0"}  # the card's own words
    assert report["verdict"] == "PASS"
    view = Page(browser, report, OUTPUT / "passing.html")
    page = view.page
    assert page.locator("header.banner").inner_text().startswith("streamcert verdict: PASS")
    meta = page.locator("p.meta").first.inner_text()
    assert meta.startswith("implementation: Acme <Agent> 2.1.0 · the embedded reference · a2a: ")
    assert "embedded: True" not in meta and "fault" not in meta
    # Each source links to the public text of its document where one is known, and only there.
    linked = next(r for r in CATALOGUE.values() if source_url(r.source) and r.profile in ("a2a", "progress"))
    unlinked = next(r for r in CATALOGUE.values() if not source_url(r.source) and r.profile in ("a2a", "progress"))
    link = page.locator(f'tr[data-id="{linked.id}"] .source a')
    assert link.get_attribute("href") == source_url(linked.source) and link.inner_text() == linked.source
    assert page.locator(f'tr[data-id="{unlinked.id}"] .source a').count() == 0
    assert page.locator(f'tr[data-id="{unlinked.id}"] .source').inner_text() == unlinked.source
    assert page.locator("header.banner.v-PASS").count() == 1
    assert not page.get_by_text("Failures by root cause").count()
    rows = view.visible("table.all tbody tr[data-status]")
    assert len(rows) == len(CATALOGUE)
    warning = page.locator("#req-PROG-010")
    warning.locator("> summary").click()
    assert warning.locator("figure.timing svg .limit").count() == 1  # gap_limit_s
    assert warning.locator("figure.timing svg .dot").count() == 1
    view.assert_quiet()
    announce(record_property, "screenshot_passing", view.screenshot("passing.png"))


def test_failing_report_in_the_browser(browser, record_property):
    report = failing_report()
    assert report["verdict"] == "FAIL"
    view = Page(browser, report, OUTPUT / "failing.html")
    page = view.page
    banner = page.locator("header.banner").inner_text()
    assert banner.startswith("streamcert verdict: FAIL")
    assert "7 failing (6 FAIL, 1 ERROR) in 5 root causes" in banner
    # the failures come before the counts: the first screen shows what broke
    first_failure = page.locator(".root").first.bounding_box()
    assert first_failure["y"] < page.locator("section.overview").bounding_box()["y"]

    # One root cause for the three requirements its cut frame fails; each keeps its own status.
    grouped = page.locator(".root.grouped")
    assert grouped.count() == 1
    assert [d.get_attribute("id") for d in grouped.locator("details.req").all()] == [
        "req-WIRE-002", "req-A2A-STREAM-009", "req-A2A-STREAM-014"]
    assert "frame 2 of stream in test_stream_basic" in grouped.locator(".root-head").inner_text()
    assert grouped.locator(".root-tag").count() == 3  # the shared frame, in the evidence of each

    # Opened, a failure shows its sentence, the frame that decided it, and the member its note names, marked.
    late = page.locator("#req-A2A-STREAM-007")
    assert not late.locator("pre.json").is_visible()
    late.locator("> summary").click()
    assert late.locator("pre.json").is_visible()
    assert late.locator("> summary").inner_text().count(CATALOGUE["A2A-STREAM-007"].title) == 1
    assert [m.inner_text() for m in late.locator("mark.named").all()] == ['"append": true']
    head = page.locator("#req-WIRE-002")
    head.locator("> summary").click()
    assert head.locator(".frame.whole .root-tag").inner_text() == "root frame"  # the note names no member
    assert "… (455 chars)" in head.locator(".frame pre .cut").inner_text()

    # Timing rules: arrival times and the limits, drawn.
    for req_id, limits in (("PROG-009", 2 + 1), ("A2A-STREAM-010", 0)):
        entry = page.locator(f"#req-{req_id}")
        entry.locator("> summary").click()
        figure = entry.locator("figure.timing svg")
        assert figure.is_visible(), req_id
        assert figure.locator(".dot").count() >= 1 and figure.locator(".limit").count() == limits, req_id
    assert page.locator("#req-A2A-STREAM-010 svg .band").count() == 1  # the 2 s tolerance after the terminal frame
    assert page.locator("#req-A2A-STREAM-010 svg .end.warn").count() == 1  # ended 10.011 s after it
    assert page.locator("#req-PROG-009 svg .bar.bad").count() == 1  # 69 updates in 2 s; 12 fail

    # The hostile text is shown as text and ran nothing.
    assert HOSTILE in head.locator("pre.message").inner_text()
    assert HOSTILE in late.locator("pre.json").inner_text()
    assert page.locator("img").count() == 0
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.locator("script").count() == 1  # the page's own

    shot = view.screenshot("failing.png")  # before filtering: everything shown, four failures opened

    # Filters: outcome, then profile (both apply), then a cell of the matrix, then all again.
    filters = page.locator("#filters")
    filters.locator('button[data-set-outcome="FAIL"]').click()
    assert set(view.statuses("table.all tr[data-status]")) == {"FAIL"}
    assert len(view.statuses("table.all tr[data-status]")) == 6
    assert set(view.statuses("details.req")) == {"FAIL"}
    assert not page.locator("#req-PROG-010").is_visible() and not page.locator("#req-A2A-TASK-010").is_visible()
    filters.locator('button[data-set-profile="progress"]').click()
    assert view.statuses("table.all tr[data-status]") == ["FAIL"]
    assert page.locator("#filter-state").inner_text() == "showing 1 of %d requirements (FAIL · progress)" % len(CATALOGUE)
    filters.locator('button[data-set-outcome=""]').click()
    assert sorted(view.statuses("table.all tr[data-status]")) == sorted(
        e["status"] for e in report["requirements"] if e["profile"] == "progress")
    # The matrix's rows are the profiles as --profile names them (a2a holds WIRE-, A2A-TASK-, …).
    assert page.locator(".matrix tr[data-row-profile] > th").all_inner_texts() == list(PROFILES)
    page.locator('.matrix button[data-set-profile="a2a"][data-set-outcome="ERROR"]').click()
    assert view.visible("table.all tr[data-status]", "data-id") == ["A2A-TASK-010"]
    filters.locator('button[data-set-outcome=""]').click()
    page.locator(".matrix tr[data-row-profile=progress] > th").click()  # (a2a again would clear it: a toggle)
    shown = view.visible("table.all tr[data-status]", "data-id")
    assert shown and all(i.startswith("PROG-") for i in shown)
    filters.locator('button[data-set-outcome="SKIPPED"]').click()
    assert view.visible("#no-match")
    filters.locator('button[data-set-profile=""]').click()
    filters.locator('button[data-set-outcome=""]').click()
    assert len(view.visible("table.all tr[data-status]")) == len(CATALOGUE)
    view.assert_quiet()
    announce(record_property, "screenshot_failing", shot)


def test_other_kinds_of_report_render_without_errors(browser, tmp_path):
    """A run that could not run (one section), one with regressions (--against), one with a stale baseline."""
    agg = Aggregator()
    down = build_report(agg, selected_profiles={"a2a"}, level="may", target=TARGET, started=STARTED,
                        finished=FINISHED, could_not_run=f"cannot reach the card: connection refused {HOSTILE}")
    view = Page(browser, down, tmp_path / "down.html")
    assert view.page.locator("header.banner").inner_text().startswith("streamcert verdict: INCOMPLETE")
    assert view.page.locator("section h2").all_inner_texts() == ["Could not run"]
    assert view.page.locator("details.req").count() == 0
    view.assert_quiet()

    regressions = regressions_section("reports/cassettes", 0.5, [
        {"scenario": "stream-basic", "cassette": "reports/cassettes/stream-basic.yaml", "test": STREAM_TEST,
         "differences": 1, "lines": [f"frame 3: {HOSTILE}"]}])
    stale = report_from(failing_findings(), {"a2a", "progress"}, regressions=regressions,
                        baseline={"expected_failures": ["WIRE-002", "WIRE-001"]})
    view = Page(browser, stale, tmp_path / "stale.html")
    text = view.page.locator("body").inner_text()
    assert "Regressions against reports/cassettes" in text and f"frame 3: {HOSTILE}" in text
    assert "Stale baseline entries (now passing)" in text
    assert view.page.locator("#req-WIRE-002 .flag").inner_text() == "expected by baseline"
    view.assert_quiet()


# -- the A2A bindings side by side (issue 15) ------------------------------------------------------------------

BINDINGS = ("jsonrpc", "http-json", "grpc")
BINDING_PROFILES = {"a2a", "interactions", "plans"}


def bindings_report() -> dict:
    """Every requirement of the binding profiles PASS over every binding it applies to (the card's judged once,
    without a binding), but A2A-STREAM-001 FAIL over gRPC, REST-002 FAIL over HTTP+JSON (its own binding),
    A2A-TASK-003 WARNING over HTTP+JSON, A2A-TASK-004 not tested over gRPC; the progress profile unselected."""
    odd = {("A2A-STREAM-001", "grpc"): Finding("A2A-STREAM-001", F, f"the first event is a statusUpdate {HOSTILE}",
                                               [frame("stream", 1, 0.012, CUT, "not a Task")]),
           ("REST-002", "http-json"): Finding("REST-002", F, "the answer carries a JSON-RPC envelope (jsonrpc, id)"),
           ("A2A-TASK-003", "http-json"): Finding("A2A-TASK-003", W, "the artifact's name came only in GetTask")}
    agg = Aggregator()
    agg.add("suite/test_a2a_card.py::test_card", [Finding(r.id, P) for r in CATALOGUE.values()
                                                  if r.family == "a2a-card"])
    for binding in BINDINGS:
        findings = []
        for r in CATALOGUE.values():
            if r.profile not in BINDING_PROFILES or r.family == "a2a-card" or not r.applies_to(binding):
                continue
            if (r.id, binding) == ("A2A-TASK-004", "grpc"):
                continue
            findings.append(odd.get((r.id, binding)) or Finding(r.id, P, "as the catalogue says"))
        for f in findings:
            f.binding = binding
        agg.add(f"suite/test_all.py::test_all[{binding}]", findings)
    return build_report(agg, selected_profiles=BINDING_PROFILES, level="may", target=TARGET, started=STARTED,
                        finished=FINISHED, bindings={"certified": list(BINDINGS), "skipped": {},
                                                     "declared": list(BINDINGS)})


def test_bindings_side_by_side_in_the_browser(browser, record_property):
    report = bindings_report()
    assert report["verdict"] == "FAIL"
    view = Page(browser, report, OUTPUT / "bindings.html")
    page = view.page
    assert page.locator("header.banner").inner_text().endswith("1 MUST not tested over a certified binding")
    over = {b: {e["id"] for e in report["requirements"] if b in (e.get("bindings") or {})} for b in BINDINGS}

    # One status column per certified binding, between the requirement's own status and its sentence.
    heads = page.locator("table.all thead th").all_inner_texts()
    assert heads == ["id", "level", "status", "JSON-RPC", "HTTP+JSON", "gRPC", "requirement · source", "message"]
    row = page.locator('table.all tr[data-id="A2A-STREAM-001"]')
    assert row.locator("td .badge").all_inner_texts() == ["FAIL", "PASS", "PASS", "FAIL"]
    assert row.locator('td[data-binding="grpc"]').get_attribute("title").startswith("the first event is a statusUpdate")
    assert page.locator('table.all tr[data-id="WIRE-002"] td.b').all_inner_texts() == ["PASS", "—", "—"]
    assert page.locator('table.all tr[data-id="A2A-TASK-004"] td.b .badge').all_inner_texts() == [
        "PASS", "PASS", "NOT_TESTED"]
    assert page.locator('table.all tr[data-id="PROG-001"] td.b').all_inner_texts() == ["—", "—", "—"]

    # The failure says which binding it came from, and lists the status over each.
    stream = page.locator("#req-A2A-STREAM-001")
    assert stream.locator("> summary .over").inner_text() == "over gRPC"
    stream.locator("> summary").click()
    assert stream.locator("ul.by-binding li").all_inner_texts()[2].startswith("FAIL gRPC the first event")
    assert "binding grpc" in stream.locator(".frame-head").inner_text()  # the frame came over gRPC
    assert page.locator("#req-REST-002 > summary .over").inner_text() == "over HTTP+JSON"
    assert page.locator("#by-binding table.bindings").is_visible()

    # The binding filter: only what runs over it, read by its status over it.
    filters = page.locator("#filters")
    filters.locator('button[data-set-binding="grpc"]').click()
    assert set(view.visible("table.all tr[data-status]", "data-id")) == over["grpc"]
    assert "REST-002" not in over["grpc"] and not page.locator("#req-REST-002").is_visible()
    filters.locator('button[data-set-outcome="FAIL"]').click()
    assert view.visible("table.all tr[data-status]", "data-id") == ["A2A-STREAM-001"]
    assert page.locator("#filter-state").inner_text() == (
        f"showing 1 of {len(CATALOGUE)} requirements (FAIL · over grpc)")
    assert filters.locator('button[data-set-binding="grpc"]').get_attribute("aria-pressed") == "true"
    filters.locator('button[data-set-binding="http-json"]').click()  # FAIL over HTTP+JSON: its own requirement only
    assert view.visible("table.all tr[data-status]", "data-id") == ["REST-002"]
    assert page.locator("#req-REST-002").is_visible() and not page.locator("#req-A2A-STREAM-001").is_visible()
    filters.locator('button[data-set-binding=""]').click()  # every binding: the requirement's own status
    assert view.visible("table.all tr[data-status]", "data-id") == ["A2A-STREAM-001", "REST-002"]
    filters.locator('button[data-set-outcome=""]').click()
    # A count of the bindings' table filters to its outcome over its binding; the same again clears both.
    cell = page.locator('#by-binding button[data-set-outcome="NOT_TESTED"][data-set-binding="grpc"]')
    assert cell.inner_text() == "1"
    cell.click()
    assert view.visible("table.all tr[data-status]", "data-id") == ["A2A-TASK-004"]
    cell.click()
    assert len(view.visible("table.all tr[data-status]")) == len(CATALOGUE)
    view.assert_quiet()
    announce(record_property, "screenshot_bindings", view.screenshot("bindings.png"))


# -- without the browser: the marked member, and the size of a big failing report -------------------------------

def test_the_member_a_note_names_is_marked_and_only_that():
    from streamcert.report.html import pretty_json

    shown, marked = pretty_json(LATE_CHUNK, "append: true after its lastChunk")
    assert marked == ["append"]  # lastChunk is not in this frame: nothing to point at
    assert shown.count("<mark") == 1 and '<mark class="named">"append": true</mark>' in shown
    assert "&lt;/script&gt;&lt;img src=x" in shown and "<img" not in shown
    shown, marked = pretty_json('{"status": {"state": "x"}, "final": false}', "a 0.3 final member")
    assert marked == ["final"] and '<mark class="named">"final": false</mark>' in shown
    shown, marked = pretty_json('{"status": {"state": "x"}}', "status")  # a container: its name alone
    assert '<mark class="named">"status": </mark>{"state": "x"}' in shown
    assert pretty_json(CUT, "data is not JSON")[1] == []  # a cut frame: printed up to the cut, nothing marked
    assert pretty_json("not JSON <b>", "b") == ("not JSON &lt;b&gt;", [])


def test_a_big_failing_report_stays_reasonable():
    """Every requirement of every profile failing, each with the most evidence a requirement carries, every
    frame at the quote limit: the page stays within a few times the report's JSON."""
    from streamcert.report.aggregate import MAX_EVIDENCE
    from streamcert.rules.engine import QUOTE_LIMIT, quote

    data = envelope({"statusUpdate": {**TASK, "status": {"state": "TASK_STATE_WORKING", "message": {
        "parts": [{"text": "checking out the repository " * 40}]}}}})
    assert len(data) > QUOTE_LIMIT
    agg = Aggregator()
    for n in range(MAX_EVIDENCE):
        agg.add(f"suite/test_big.py::test_{n}", [
            Finding(r.id, F, f"broken in test {n}: " + "x" * 200,
                    [frame("stream", k + 1, 0.1 * k, quote(data), "status") for k in range(2)],
                    measured={"max_gap_s": 1.0, "gap_limit_s": 0.6}) for r in CATALOGUE.values()])
    report = build_report(agg, selected_profiles=set(PROFILES), level="may", target=TARGET, started=STARTED,
                          finished=FINISHED)
    assert all(len(e["evidence"]) == MAX_EVIDENCE for e in report["requirements"])
    page = render_html(report).encode("utf-8")
    size = len(json.dumps(report, ensure_ascii=False).encode("utf-8"))
    print(f"{len(CATALOGUE)} failing requirements: report {size // 1024} KB, report.html {len(page) // 1024} KB")
    assert len(page) < 3 * size and len(page) < 4_000_000


def test_a_frame_shows_the_request_that_was_sent_beside_it():
    shown = html_frame({"exchange": "stream", "request": "SendStreamingMessage", "sent": '{"id":1,"x":"<b>"}'},
                       is_root=False)
    assert '<div class="sent">sent <code>{&quot;id&quot;:1,&quot;x&quot;:&quot;&lt;b&gt;&quot;}</code></div>' in shown
    assert "sent <strong>" not in shown  # once, on its own line, not again among the head's facts
    assert '<div class="sent">' not in html_frame({"exchange": "card", "request": "GET"}, is_root=False)
