"""PLAN-: progress/v1 plans over A2A (seed 000): replacement, limits, wrong shapes, read-back, agents."""

import pytest


@pytest.mark.parametrize("scenario", ["plan-replace", "plan-limits", "plan-wrong-shape", "plan-no-tool",
                                      "plan-shadow"])
def test_plans(streamcert, scenario):
    streamcert.check(scenario)
