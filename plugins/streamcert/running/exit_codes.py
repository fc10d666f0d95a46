"""The exit codes of a run, one table for `streamcert run` and for pytest with the plugin (README "Exit codes").

0: the verdict is PASS; 1: FAIL or INCOMPLETE (or a regression against --against); 2: usage, refused before the
run; 3: could not run (no target answered). A plain pytest run keeps pytest's own codes for what pytest decides
(4 for its usage errors, 2 when interrupted): the plugin only turns a 0 or 1 into the verdict's code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

EXIT_PASS = 0  # the verdict is PASS
EXIT_FAIL = 1  # the verdict is FAIL or INCOMPLETE
EXIT_USAGE = 2  # a bad option: refused before the run
EXIT_COULD_NOT_RUN = 3  # no target answered (or the run broke down before writing a report)


def of_report(report: Mapping[str, Any], *, could_not_run: bool = False) -> int:
    """The exit code a written report gives: PASS without a regression is 0, a target that never answered 3."""
    if could_not_run or report.get("could_not_run"):
        return EXIT_COULD_NOT_RUN
    regressions = (report.get("regressions") or {}).get("found")
    return EXIT_PASS if report.get("verdict") == "PASS" and not regressions else EXIT_FAIL
