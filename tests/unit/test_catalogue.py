"""The catalogue's wording: each requirement is one sentence with a source a reader can follow
(docs/catalogue.md), and each has a rule to decide it."""

from __future__ import annotations

import re

import pytest

from streamcert.catalogue import PROFILES, load_catalogue
from streamcert.outcomes import Finding, Outcome
from streamcert.report.aggregate import Aggregator, build_report
from streamcert.report.html import esc, render_html
from streamcert.report.markdown import MD_BUDGET, md_text, render_markdown
from streamcert.rules import registered_ids

# The specifications a source may cite, by the name docs/catalogue.md gives them. The five seeds are
# named as their index says; the others are the public documents the suite also judges against.
SPECIFICATIONS = (
    "A2A 1.0.1",
    "A2A 1.0.1 topic: Extensions in A2A",
    "A2A 101, part 1: The Protocol on One Page",
    "nylorun A2A extension progress/v1",
    "nylorun A2A extension interactions/v1",
    "Agent Client Protocol: Agent Plan",
    "Agent Client Protocol v1: Agent Plan",
    "Agent Client Protocol v1: Initialization",
    "Agent Client Protocol v1: Prompt Turn",
    "Agent Client Protocol v1: Session Setup",
    "Agent Client Protocol v1: Transports",
    "Agent Client Protocol v2: Migrating from v1",
    "Agent Client Protocol v2: Transports",
    "Agent Client Protocol RFD: Plan Operations Support",
    "LLeMbas progress 3.4.0 (progress.md)",
    "JSON-RPC 2.0",
    "WHATWG HTML",
)
SEED_FILE = re.compile(r"\d{3}_[0-9a-f]{16}\.txt")
# One cited place: "<specification> · <section heading> ¶<paragraph>", then pointers or a quote.
PLACE = re.compile(r"(?P<spec>.+?) · (?P<section>[^¶;]+?) ¶(?P<paragraph>\d+)")
SENTENCE_END = re.compile(r"[.!?](?=\s)")

CATALOGUE = load_catalogue()
REQUIREMENTS = sorted(CATALOGUE.values(), key=lambda r: r.id)


def places(source: str) -> list[str]:
    return source.split("; ")


@pytest.mark.parametrize("req", REQUIREMENTS, ids=lambda r: r.id)
def test_every_source_names_known_specifications(req):
    for place in places(req.source):
        found = PLACE.match(place)
        assert found, f"{req.id}: {place!r} is not '<specification> · <section> ¶<paragraph>'"
        assert found["spec"] in SPECIFICATIONS, f"{req.id}: {found['spec']!r} is not a known specification"
        assert int(found["paragraph"]) > 0


@pytest.mark.parametrize("req", REQUIREMENTS, ids=lambda r: r.id)
def test_no_source_or_title_names_a_seed_file(req):
    assert not SEED_FILE.search(req.source), req.source
    assert not SEED_FILE.search(req.title), req.title


@pytest.mark.parametrize("req", REQUIREMENTS, ids=lambda r: r.id)
def test_every_title_is_one_sentence(req):
    title = req.title
    assert title[:1].isupper(), f"{req.id}: a title starts with a capital letter: {title!r}"
    assert title.endswith(".") and "\n" not in title, f"{req.id}: a title is one sentence ending in a full stop"
    assert not SENTENCE_END.search(title[:-1]), f"{req.id}: more than one sentence: {title!r}"


def test_every_requirement_has_a_rule():
    missing = sorted(set(CATALOGUE) - registered_ids())
    assert not missing, f"requirements no rule decides: {missing}"


def test_the_report_shows_each_requirement_with_its_source():
    # Every requirement gets one outcome of a rotation (the last one none: NOT_TESTED).
    shown = (Outcome.FAIL, Outcome.WARNING, Outcome.NON_STRICT, Outcome.PASS, None)
    agg = Aggregator()
    agg.add("suite/test_x.py::test_x", [Finding(r.id, out, f"message of {r.id}")
                                        for r, out in zip(REQUIREMENTS, shown * len(REQUIREMENTS)) if out])
    report = build_report(agg, selected_profiles=set(PROFILES), level="may", target={},
                          started="2026-11-29T15:00:00.000Z", finished="2026-11-29T15:00:01.000Z")
    md, page = render_markdown(report), render_html(report)
    for e in report["requirements"]:
        req = CATALOGUE[e["id"]]
        assert (e["title"], e["source"]) == (req.title, req.source)
        assert esc(req.title) in page and esc(req.source) in page, e["id"]
        if f"### {e['status']} {md_text(e['id'])} — " in md:  # report.md: the failures its 10 KB hold
            # the source as text, or as the text of a link to its public document (report/sources.py)
            assert f" · {md_text(req.source)}\n" in md or f" · [{md_text(req.source)}](" in md, e["id"]
    # Every source passes through report.md, a few failures at a time: test_report_md.py
    assert len(md.encode("utf-8")) <= MD_BUDGET and not SEED_FILE.search(md)


def test_the_check_catches_the_old_form():
    old = "001_59e0fde98d9a357a.txt · Frame 1 (\"the stream must begin with the Task object\"); A2A §3.1.2"
    assert SEED_FILE.search(old)
    assert not all(PLACE.match(place) for place in places(old))
    assert SENTENCE_END.search("A stream opens with the Task. It ends at a terminal state"[:-1])
