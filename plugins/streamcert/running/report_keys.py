"""The keys of what a conformance test's pytest report carries to the controller (its `user_properties`, which
pytest-xdist sends from the worker that ran the test), read by the plugin (plugin.py) and by the progress lines
(running/live.py)."""

FINDINGS_KEY = "streamcert_findings"  # the test's findings, as JSON
REGRESSIONS_KEY = "streamcert_regressions"  # how a scenario differs from its --against cassette
XDIST_CRASH = "???"  # the `when` of the report pytest-xdist makes for a test whose worker died
