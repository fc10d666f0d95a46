"""What every test module shares: the `e2e` marker (tests/README.md).

A module is end to end when its tests start what a run starts (the embedded reference, `streamcert` in a
subprocess, a hostile server, a browser) rather than judging hand-made logs. `pytest -m "not e2e" tests` runs the
unit half alone; the README's test command runs both. The list is by module, so a module that mixes both kinds is
listed when its live tests are what it costs."""

from __future__ import annotations

import pytest

E2E_MODULES = frozenset({
    "test_acp_reference", "test_capture", "test_capture_caps", "test_cassettes", "test_cli", "test_client_cases",
    "test_faults", "test_first_hour", "test_github_action", "test_grpc_transport", "test_hostile",
    "test_interactions_driver", "test_interactions_reference", "test_junit", "test_lifecycle", "test_line",
    "test_live", "test_matrix", "test_own_checks", "test_plans_reference", "test_progress_phases", "test_proxy",
    "test_record", "test_reference", "test_reference_client", "test_reference_fixture", "test_reference_rest",
    "test_replay", "test_replay_bounds", "test_report_html", "test_run_imports", "test_script_steps", "test_scrub",
    "test_security", "test_stdio_hostile", "test_waits",
})


def pytest_configure(config: pytest.Config) -> None:
    # registered here too: `streamcert run` in this folder loads this file under its own options, not pyproject's
    config.addinivalue_line("markers", "e2e: starts what a run starts (tests/conftest.py)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and module.__name__.rsplit(".", 1)[-1] in E2E_MODULES:
            item.add_marker(pytest.mark.e2e)
