"""Rules: pure functions from a frame log to findings, one place per requirement.

A rule is registered for the requirement IDs it decides, with the view it reads (see `engine`). It
reads only the frame log and the context (the scenario, the script sent, declared tolerances); it
never touches the network or the clock, so the live run, `streamcert check` on a cassette and the
project's own tests share it. A rule that finds nothing to judge in a log gives no finding for that
ID (it stays NOT_TESTED unless another test decides it).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Iterable

from ..catalogue import load_catalogue
from ..contract.run import BINDING, NOT_TESTED, UNREACHABLE, UNSUPPORTED
from ..framelog import FrameLog, forget_last_parse
from ..outcomes import Finding, Outcome
from .engine import (
    RuleContext,
    Run,
    Unjudgeable,
    Verdict,
    Verdicts,
    answered,
    ev_evidence,
    ex_evidence,
    frame_no,
    quote,
    registered,
    rule,
    run_rules,
)

__all__ = ["RuleContext", "Run", "Unjudgeable", "Verdict", "Verdicts", "answered", "ev_evidence", "ex_evidence",
           "frame_no", "judge", "quote", "registered_ids", "rule"]

_loaded = False


def _load() -> None:
    """Import every module of this package and its profiles' packages once: each registers the rules it defines."""
    global _loaded
    if not _loaded:
        for info in pkgutil.walk_packages(__path__, prefix=f"{__name__}."):
            importlib.import_module(info.name)
        _loaded = True


def registered_ids() -> set[str]:
    _load()
    return registered()


def judge(log: FrameLog, req_ids: Iterable[str], ctx: RuleContext | None = None) -> list[Finding]:
    """Run every rule that decides one of `req_ids` on `log`; keep the findings for those IDs."""
    _load()
    ctx = ctx or RuleContext()
    # A log that went over one A2A binding judges only the requirements of that binding (a JSON-RPC envelope
    # requirement has nothing to read in a gRPC log); each finding says which binding it was judged on.
    binding = log.notes.get(BINDING)
    catalogue = load_catalogue()
    wanted = [r for r in dict.fromkeys(req_ids) if r not in catalogue or catalogue[r].applies_to(binding)]
    try:
        findings = _judge(log, wanted, ctx)
    finally:
        forget_last_parse()  # the last large parse is not carried into the report
    if binding:
        for finding in findings:
            finding.binding = binding
    return findings


def _judge(log: FrameLog, wanted: list[str], ctx: RuleContext) -> list[Finding]:
    # A target whose card could not be fetched at all gave no answer: every requirement is ERROR
    # (not UNSUPPORTED: nothing about its features is known).
    unreachable = log.notes.get(UNREACHABLE)
    if unreachable:
        return [Finding(rid, Outcome.ERROR, f"the target did not answer: {unreachable}") for rid in wanted]
    # A driver that found the target without the feature a requirement needs says so in the log;
    # those requirements are UNSUPPORTED with its reason, and their rules do not run.
    # Those the driver could not reach for a reason that is no missing feature (the test agent ignores the
    # script) are NOT_TESTED with it.
    unsupported = log.notes.get(UNSUPPORTED, {})
    not_tested = log.notes.get(NOT_TESTED, {})
    findings = [Finding(rid, Outcome.UNSUPPORTED, unsupported[rid]) for rid in wanted if rid in unsupported]
    findings += [Finding(rid, Outcome.NOT_TESTED, not_tested[rid]) for rid in wanted
                 if rid in not_tested and rid not in unsupported]
    return findings + run_rules(log, [r for r in wanted if r not in unsupported and r not in not_tested], ctx)
