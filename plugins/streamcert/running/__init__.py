"""Running: what the commands and the pytest plugin lean on besides the engine — which tests and scenarios a run
selects (selection.py) and lists (listing.py), the progress lines (live.py), the keys of a test report
(report_keys.py), `streamcert check` on cassettes (offline.py), the targets' first answer (preflight.py), the
exit codes (exit_codes.py), the checks a user's own tests run (own_checks.py) and the recording proxy
(proxy.py, proxy_logs.py). The public entry points stay at the package's top: `streamcert.cli:main` (the
command), `streamcert.plugin` (the pytest plugin), `streamcert.run_options` (the options by name) and
`python -m streamcert.github_action`."""
