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
import threading
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
           "frame_no", "judge", "load_rules", "quote", "registered_ids", "rule"]

# The modules of this package holding the rules of each requirement-ID prefix (the ID without its number). A judgement
# imports only the modules of the IDs it judges: an a2a run never pays for the client, ACP, plan or progress rules
# and their views. tests/e2e/test_run_imports.py checks this table against what each module registers.
RULE_MODULES = {
    "A2A-AUTH": ("a2a.auth",), "A2A-CARD": ("a2a.card", "a2a.card_signatures"), "A2A-ERR": ("a2a.errors",),
    "A2A-INT": ("a2a.everystream", "interactions.interactions", "interactions.ixstreams"),
    "A2A-STREAM": ("a2a.stream", "a2a.stream_forms"),
    "A2A-TASK": ("a2a.multistream", "a2a.task", "a2a.task_cancel", "a2a.task_list"), "GRPC": ("a2a.grpc_binding",),
    "IDEM": ("interactions.idempotency",), "REST": ("a2a.rest",), "WIRE": ("a2a.field_names", "a2a.wire"),
    "PUSH": ("push.push", "push.push_deliveries"), "IX": ("interactions.interactions", "interactions.ixtruncation"),
    "PLAN": ("a2a.everystream", "plans.plans"), "PROG": ("progress.progress",), "ACP-PLAN": ("acp.acp_plans",),
    "LINE": ("line.line",), "CLIENT": ("client.client",), "CLIENT-ACP": ("acp_client.client_acp",),
}
_loaded: set[str] = set()  # the prefixes whose modules are imported ("*": every module)
_loading = threading.Lock()  # judgements in threads (the meta-test's pool): a prefix is marked once its rules are in


def prefix_of(req_id: str) -> str:
    """`A2A-STREAM-004` → `A2A-STREAM`: the key of RULE_MODULES."""
    return req_id.rpartition("-")[0]


def load_rules(req_ids: Iterable[str] | None = None) -> None:
    """Import the modules of this package that decide `req_ids` (None: every module of every profile's package),
    each once: importing a module registers the rules it defines."""
    with _loading:
        if "*" in _loaded:
            return
        if req_ids is None:
            names = [info.name for info in pkgutil.walk_packages(__path__, prefix=f"{__name__}.")]
            prefixes = {"*"}
        else:
            prefixes = {prefix_of(rid) for rid in req_ids} - _loaded
            names = sorted({f"{__name__}.{name}" for prefix in prefixes for name in RULE_MODULES.get(prefix, ())})
        for name in names:
            importlib.import_module(name)
        _loaded.update(prefixes)


def registered_ids() -> set[str]:
    load_rules()
    return registered()


def judge(log: FrameLog, req_ids: Iterable[str], ctx: RuleContext | None = None) -> list[Finding]:
    """Run every rule that decides one of `req_ids` on `log`; keep the findings for those IDs."""
    req_ids = list(req_ids)
    load_rules(req_ids)
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
