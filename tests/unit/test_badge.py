"""Badges (report/badge.py) in the shields.io endpoint format: badge.json for the run, badge-<profile>.json
for each selected profile, with the status, the MUST count and the colour."""

from __future__ import annotations

import json

import pytest
from report_cases import KINDS

from streamcert.report.badge import badges, profile_status
from streamcert.report.writers import write_all

# The endpoint format's fields: the three it requires and the optional ones it defines.
REQUIRED = {"schemaVersion", "label", "message"}
OPTIONAL = {"color", "labelColor", "isError", "namedLogo", "logoSvg", "logoColor", "logoWidth", "logoSize",
            "logoPosition", "style", "cacheSeconds"}
WRITTEN = {"schemaVersion", "label", "message", "color"}


def assert_endpoint_badge(badge: dict) -> None:
    assert REQUIRED <= set(badge) <= REQUIRED | OPTIONAL
    assert set(badge) == WRITTEN
    assert badge["schemaVersion"] == 1 and type(badge["schemaVersion"]) is int
    assert isinstance(badge["label"], str) and isinstance(badge["message"], str) and badge["message"].strip()
    assert badge["color"] in ("green", "red", "orange")


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_badge_is_an_endpoint_badge_and_only_selected_profiles_get_one(kind):
    report = KINDS[kind]()
    made = badges(report)
    assert sorted(made) == ["badge-a2a.json", "badge-interactions.json", "badge.json"]  # no badge-acp.json
    for badge in made.values():
        assert_endpoint_badge(badge)
    assert made["badge.json"]["label"] == "streamcert"
    assert made["badge-a2a.json"]["label"] == "streamcert a2a"


def test_a_selected_profile_without_requirements_gets_no_badge():
    report = KINDS["passing"]()
    report["selection"]["profiles"].append("plans")  # selected, but the catalogue has no PLAN- requirement
    assert "badge-plans.json" not in badges(report)


def test_passing_run():
    made = badges(KINDS["passing"]())
    # 7 selected MUSTs; the UNSUPPORTED one is not met, and is counted (never dropped from the denominator).
    assert made["badge.json"] == {"schemaVersion": 1, "label": "streamcert", "message": "PASS · 6/7 MUST",
                                  "color": "green"}
    assert made["badge-a2a.json"]["message"] == "PASS · 4/5 MUST"
    assert made["badge-interactions.json"] == {"schemaVersion": 1, "label": "streamcert interactions",
                                               "message": "PASS · 2/2 MUST", "color": "green"}


def test_failing_run_is_red_where_it_fails():
    made = badges(KINDS["failing"]())
    assert made["badge.json"] == {"schemaVersion": 1, "label": "streamcert",
                                  "message": "FAIL · 3/7 MUST · 1 expected", "color": "red"}
    assert (made["badge-a2a.json"]["message"], made["badge-a2a.json"]["color"]) == ("FAIL · 1/5 MUST · 1 expected",
                                                                                      "red")
    assert (made["badge-interactions.json"]["message"], made["badge-interactions.json"]["color"]) == (
        "PASS · 2/2 MUST", "green")


def test_partial_run_is_orange():
    made = badges(KINDS["partial"]())
    assert (made["badge.json"]["message"], made["badge.json"]["color"]) == ("INCOMPLETE · 2/7 MUST", "orange")
    assert (made["badge-a2a.json"]["message"], made["badge-a2a.json"]["color"]) == ("INCOMPLETE · 2/5 MUST", "orange")
    assert profile_status(KINDS["partial"](), "interactions") == "INCOMPLETE"


def test_a_narrowed_run_certifies_no_profile():
    made = badges(KINDS["narrowed"]())
    assert {b["message"].split(" · ")[0] for b in made.values()} == {"INCOMPLETE"}
    assert made["badge-interactions.json"]["message"] == "INCOMPLETE · 2/2 MUST"


def test_a_run_that_could_not_run_is_incomplete_not_failed():
    made = badges(KINDS["could_not_run"]())
    assert {b["message"].split(" · ")[0] for b in made.values()} == {"INCOMPLETE"}
    assert {b["color"] for b in made.values()} == {"orange"}


def test_baseline_decides_a_profile_as_it_decides_the_verdict():
    expected = badges(KINDS["expected_only"]())
    assert (expected["badge-a2a.json"]["message"], expected["badge-a2a.json"]["color"]) == (
        "PASS · 3/5 MUST · 1 expected", "green")  # the failure the baseline expects still shows in the count
    stale = KINDS["stale"]()
    assert profile_status(stale, "interactions") == "FAIL"  # the stale entry is IX-001's
    assert profile_status(stale, "a2a") == "PASS"
    assert badges(stale)["badge.json"]["color"] == "red"


def test_write_all_writes_the_badges_and_drops_an_unselected_profiles_old_one(tmp_path):
    (tmp_path / "badge-acp.json").write_text('{"schemaVersion": 1, "label": "old", "message": "PASS"}\n')
    (tmp_path / "badge-mine.json").write_text("{}\n")  # not a profile's: left alone
    written = {p.name for p in write_all(KINDS["failing"](), tmp_path)}
    assert {"badge.json", "badge-a2a.json", "badge-interactions.json", "junit.xml"} <= written
    assert not (tmp_path / "badge-acp.json").exists()
    assert (tmp_path / "badge-mine.json").exists()
    assert json.loads((tmp_path / "badge.json").read_text("utf-8"))["color"] == "red"
