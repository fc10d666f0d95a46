"""Fault variants of the reference agent: each breaks one rule so the suite can prove it catches it.

`catches`: requirement IDs the suite must flag (FAIL, or WARNING/NON_STRICT for a SHOULD).
`also`: IDs it may flag as collateral, because the broken frame hides what they look at.
A site switches a fault on through `switch(NAME)` (below), which refuses a name not declared here.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar


@dataclass(frozen=True)
class Fault:
    name: str
    description: str
    catches: tuple[str, ...]
    also: tuple[str, ...] = ()
    # Which embedded program the fault breaks: "server" (the reference HTTP server: its A2A agents
    # and its progress route), "line" (the reference line renderer), "acp" (the reference ACP agent),
    # "client" (the reference A2A client), "acp_client" (the reference ACP client).
    target: str = "server"
    # The A2A binding the meta-test drives the fault's scenarios over ("jsonrpc", "http-json", "grpc"): a fault
    # in one binding's form is played over that binding; every other fault over JSON-RPC only.
    binding: str = "jsonrpc"
    # Scenarios the meta-test plays besides those `catches` and `also` select: a legal variation (catches and also
    # empty) names where the suite must judge it exactly as it judges the correct reference.
    plays: tuple[str, ...] = ()


def ids(prefix: str) -> Callable[..., tuple[str, ...]]:
    """The requirement IDs of one prefix by number (docs/contracts.md §2): ids("PUSH")(1, 11) is
    ("PUSH-001", "PUSH-011"). The faults below name what they catch through the table under it."""
    return lambda *nums: tuple(f"{prefix}-{n:03d}" for n in nums)


# One short name per prefix the faults name.
_stream = ids("A2A-STREAM")
_task = ids("A2A-TASK")
_err = ids("A2A-ERR")
_push = ids("PUSH")
_line = ids("LINE")
_plan = ids("PLAN")
_acp = ids("ACP-PLAN")
_client = ids("CLIENT")
_int = ids("A2A-INT")
_ix = ids("IX")
_idem = ids("IDEM")
_rest = ids("REST")
_grpc = ids("GRPC")


# What a suite cannot see when the card or the stream is unusable.
_NO_STREAM = _stream(*range(1, 15)) + _task(10, 11, 12)
_NO_CARD = ("A2A-CARD-002", "A2A-CARD-003", "A2A-CARD-004", "A2A-CARD-005", "WIRE-007", "A2A-STREAM-015") + _err(1)


# The push agent's faults (reference/agent/push.py, the agent at /agents/push): what each breaks in the config
# operations or in the deliveries the suite's webhook receiver records.
PUSH_FAULTS = (
    Fault("push-create-no-id", "Create answers the config without the id it assigned", _push(1),
          _push(2, 3, 4, 11)),
    Fault("push-second-create-replaces", "every Create without an id stores its config under one id: a second "
          "Create replaces the first, whose webhook gets nothing more", _push(2), _push(3, 4, 7, 8, 11, 12, 13)),
    Fault("push-get-no-url", "Get answers the config without its url", _push(3)),
    Fault("push-unknown-config-answered", "Get and Delete of a config id no Create made answer as if it existed",
          _push(4)),
    Fault("push-url-not-checked", "a Create without url is stored (and never delivered)", _push(5)),
    Fault("push-body-wrapped", "each POST body is the event wrapped as a JSON-RPC response, not a StreamResponse",
          _push(6), _push(7, 8, 12)),
    Fault("push-drops-artifacts", "artifact updates are never pushed, only status updates", _push(7), _push(8)),
    Fault("push-reordered", "the first artifact update is POSTed after the event that follows it", _push(8), _push(12)),
    Fault("push-token-dropped", "the config's token is sent in no header", _push(9)),
    Fault("push-media-type-json", "the POSTs say Content-Type: application/json", _push(10)),
    Fault("push-delete-keeps-sending", "Delete forgets the config but its webhook keeps getting the task's events",
          _push(11)),
    Fault("push-after-terminal", "after the terminal event one more POST shows the task working again", _push(12)),
    Fault("push-holds-stream", "the task's open streams get each event only after the first config's webhook "
          "answered its POST: a slow webhook holds the stream back", _push(13)),
    Fault("push-inline-ignored", "a config given inline in SendMessage's configuration is ignored", _push(14),
          _push(15, 16, 17, 18, 30)),
    Fault("push-inline-not-listed", "an inline config is delivered to but never stored where List and Get look",
          _push(15), _push(30)),
    Fault("push-stops-at-pause", "a config's deliveries end at the task's first interrupted state", _push(16),
          _push(17)),
    Fault("push-stops-without-stream", "an event no client is streaming is not pushed either: deliveries stop when "
          "the client drops its stream", _push(17), _push(16, 25)),
    Fault("push-auth-dropped", "the config's authentication is sent in no header", _push(18)),
    Fault("push-auth-scheme-not-checked", "a Create whose authentication has no scheme is stored", _push(19)),
    Fault("push-link-local-accepted", "a webhook URL naming a link-local address (169.254.0.0/16) is accepted",
          _push(20)),
    Fault("push-private-accepted", "a webhook URL naming a private address (10/8, 172.16/12, 192.168/16) is accepted",
          _push(21)),
    Fault("push-scheme-not-checked", "a webhook URL of another scheme than http(s) is accepted", _push(22)),
    Fault("push-non-url-accepted", "a webhook URL that is no URL is accepted", _push(23)),
    Fault("push-no-retry", "a POST the webhook answered with a failure is never tried again", _push(24)),
    Fault("push-stops-after-failure", "a webhook that failed once gets nothing more (and no retry)", _push(25),
          _push(24)),
    Fault("push-timeout-short", "each POST to a webhook is given up after 0.5 s", _push(26)),
    Fault("push-delete-keeps-listing", "Delete stops a config's deliveries but List still shows it", _push(27)),
    Fault("push-delete-twice-fails", "a second Delete of one config answers InternalError", _push(28)),
    Fault("push-inline-without-capability", "the agent without push notifications POSTs to a webhook given inline "
          "in SendMessage", _push(29)),
    Fault("push-get-drops-settings", "Get answers a config without its token and authentication", _push(30)),
)


# The reference line renderer's faults (`python -m streamcert.reference.line --fault NAME`).
# A case names every requirement it exercises and a wrong text is blamed on each of them
# (rules/line/line.py), so a fault in one part of a text is also seen on the other requirements of the
# cases it breaks: that collateral is listed in `also`.
LINE_FAULTS = (
    Fault("texts-paraphrased", "compacting is drawn in the client's own words ('Compacting conversation')",
          _line(1), target="line"),
    Fault("absent-guessed", "a missing ahead or rate is drawn as 0 ('Queued: 0 ahead', 'Writing: 0.0 tok/s')",
          _line(2), _line(1, 12), target="line"),
    Fault("raw-fixed-words", "fixed words are drawn as the field's value ('Stopped: person', 'Waiting for you: approval')",
          _line(3), _line(1, 2, 12), target="line"),
    Fault("percent-rounded", "percent is rounded, not floored (999 of 1000 → 100%)", _line(4), _line(5),
          target="line"),
    Fault("integers-as-decimals", "integers are written with one decimal like the rate ('Queued: 2.0 ahead')",
          _line(5), _line(1, 2, 4, 10, 12), target="line"),
    Fault("rate-unformatted", "rate is written as it came (12 → '12', 12.34 → '12.34')", _line(6), target="line"),
    Fault("no-elapsed", "every phase is drawn as its text alone, without · elapsed", _line(7), target="line"),
    Fault("elapsed-unpadded", "elapsed seconds and minutes are not padded ('1m 5s', '1h 2m')", _line(8),
          _line(9), target="line"),
    Fault("frozen-elapsed", "a line drawn once for an object is never redrawn: elapsed stands still", _line(9),
          target="line"),
    Fault("countdown-below-zero", "retrying's in goes below 0 ('Retrying in -15 s')", _line(10), target="line"),
    Fault("stopped-with-elapsed", "stopped and failed are drawn with · elapsed", _line(11), target="line"),
    Fault("null-drawn", "a null field is drawn ('Queued: null ahead'); no progress draws 'null'", _line(12),
          target="line"),
    Fault("text-form-ignored", "the text-alone form still carries · elapsed", _line(13), target="line"),
    Fault("stateful-since", "the renderer keeps the since of the previous object of the same phase",
          _line(14), _line(2, 8, 10, 12), target="line"),
)

# progress/v1 plans (the player's plan step and reference/agent/plans.py).
PLAN_FAULTS = (
    Fault("plan-drop-second", "the second plan update of a task is recorded but never sent", _plan(1),
          _plan(12, 13)),  # a task whose last plan is the dropped one: GetTask/ListTasks show an unsent plan
    Fault("plan-diff", "after the first, a plan update carries only the new or changed steps (a diff)",
          _plan(2)),
    Fault("plan-unknown-state", "a step in state active is sent as in_progress", _plan(3), _plan(2)),
    Fault("plan-note-null", "a step without a note is sent with note: null", _plan(4)),
    Fault("plan-21-steps", "a plan keeps 21 steps", _plan(5)),
    Fault("plan-cut-no-ellipsis", "a long label is cut to 120 characters without the ellipsis", _plan(6)),
    Fault("plan-cut-splits-surrogate", "labels are cut by UTF-16 units, halving a surrogate pair at the cut "
          "(the lone half is sent as U+FFFD)", _plan(6), _plan(7)),
    Fault("plan-cut-121", "a long label keeps 120 characters and adds the ellipsis (121 in all)", _plan(6),
          _plan(7)),  # one label's cut is a grapheme-cluster cut (NON_STRICT)
    Fault("plan-cut-utf16", "labels are counted and cut in UTF-16 code units (a pair at the cut dropped "
          "whole)", _plan(7)),
    Fault("plan-note-no-ellipsis", "a long note is cut to 280 characters without the ellipsis", _plan(8)),
    Fault("plan-note-cut-utf16", "notes are counted and cut in UTF-16 code units (a pair at the cut dropped whole)",
          _plan(9)),
    Fault("plan-note-cut-281", "a long note keeps 280 characters and adds the ellipsis (281 in all)", _plan(8),
          _plan(9)),  # one note's cut is a grapheme-cluster cut (NON_STRICT)
    Fault("plan-length-fails", "update_plan fails (a tool error, no plan) when the plan is over a limit",
          _plan(10), _plan(1)),
    Fault("plan-wrong-shape-accepted", "update_plan drops the malformed steps and sends the rest as the plan",
          _plan(11), _plan(1)),
    Fault("plan-stale-get", "GetTask carries the task's first plan, not the latest", _plan(12)),
    Fault("plan-task-stale-get", "GetTask of a task that carries a plan shows it TASK_STATE_WORKING, without its "
          "artifacts", _plan(19)),
    Fault("plan-list-missing", "ListTasks leaves the plan out of each task's metadata", _plan(13)),
    Fault("plan-note-leak", "the first step without a note carries the agent's last status text (a tool result)",
          _plan(14), _plan(2)),
    Fault("plan-no-timestamp", "plan status updates carry no status.timestamp", _plan(15)),
    Fault("plan-no-plan-agent-sends", "the agent without loop.plan gets the built-in update_plan anyway",
          _plan(16)),
    Fault("plan-shadow-ignored", "the built-in update_plan runs although the agent declares its own",
          _plan(17)),
)

_ACP_FAULTS = tuple(Fault(name, description, catches, also, target="acp") for name, description, catches, also in (
    ("acp-log-on-stdout", "a log line is written on stdout before the initialize answer", _acp(1), ()),
    ("acp-two-messages-per-line", "the first session/update and the message after it share one line",
     _acp(2), ()),
    ("acp-wrong-session-id", "session/update notifications name another session", _acp(3), ()),
    ("acp-unstable-without-capability", "v1: plan_update/plan_removed sent although the client did not "
     "advertise clientCapabilities.plan", _acp(10), ()),
    ("acp-v2-plan-form", "v2: item plans are sent in the removed v1 `plan` form", _acp(20), ()),
    ("acp-no-plan-id", "custom (`_`) plan variants are sent without planId", _acp(21),
     _acp(30, 31)),  # a plan without its id cannot be told reported
    ("acp-entry-missing-priority", "plan entries are sent without priority", _acp(22),
     _acp(27)),  # the entry's priority is not the one the script gave
    ("acp-unknown-status", "custom statuses lose their `_` (`_blocked` goes out as `blocked`)", _acp(23),
     _acp(27)),  # the entry's status is not the one the script gave
    ("acp-unknown-priority", "custom priorities lose their `_` (`_stretch` goes out as `stretch`)",
     _acp(24), _acp(27)),  # the entry's priority is not the one the script gave
    ("acp-priority-reset", "every plan entry goes out with priority medium, whatever the script gave", _acp(27), ()),
    ("acp-custom-type-no-underscore", "custom plan types lose their `_` (`_kanban` goes out as `kanban`)",
     _acp(25), ()),
    ("acp-relative-file-uri", "file plans carry the script's relative path as their uri", _acp(26), ()),
    ("acp-diff-updates", "plan updates carry only the entries that changed (a diff)", _acp(27), ()),
    ("acp-remove-unknown-plan", "plan_removed names a plan that was never reported", _acp(28), ()),
    ("acp-plan-not-reported", "the first plan of the script is never sent", _acp(30),
     _acp(31)),
    ("acp-first-update-only", "each plan is sent once; its updates are not", _acp(31), ()),
))

# CLIENT-ACP-: the reference ACP client (reference/acp_client/client.py), judged on the view it prints.
_ACP_CLIENT_FAULTS = tuple(Fault(name, description, catches, also, target="acp_client")
                           for name, description, catches, also in (
    ("acp-merge-entries", "a plan update is merged into the plan shown (entries kept by content), not replacing it",
     ("CLIENT-ACP-001",), ("CLIENT-ACP-002", "CLIENT-ACP-003")),  # merged custom plans; an empty v1 plan merged
    ("acp-drops-custom", "plan entries whose status or priority is not listed for the version are dropped",
     ("CLIENT-ACP-002",), ()),
    ("acp-keeps-removed", "plan_removed and an empty v1 plan are ignored: the plan stays shown",
     ("CLIENT-ACP-003",), ("CLIENT-ACP-001",)),  # the v1 plan then is not the latest (empty) update
))


# CLIENT-: the reference A2A client (reference/client/), judged on the view it prints and on the
# requests the replay server saw it send.
CLIENT_FAULTS = tuple(Fault(name, description, catches, also, target="client") for name, description, catches, also in (
    ("merge-plans", "a plan update is merged into the plan shown (steps matched by label, new ones added at "
     "the end, old ones kept), not replacing it", _client(1), ()),
    ("arrival-order", "status updates are taken in arrival order: the state, plan and status text shown are "
     "the last to arrive, not the latest by status.timestamp", _client(2), ()),
    ("split-char-lost", "each chunk of the stream is decoded alone: a character split across two chunks is "
     "lost", _client(4), ()),
    ("bom-drops-first", "a stream that begins with a BOM loses its first event (the BOM is read as part of "
     "the first field's name)", _client(5), ()),
    ("dispatches-unterminated", "at the end of the stream, the event it ended inside (a data line with no blank "
     "line after it) is dispatched, as if the blank line had come", _client(5), ()),
    ("lastchunk-ends-stream", "an artifact's lastChunk is taken as the end of the stream: what follows is "
     "never read", _client(6), ()),
    ("waits-final-flag", "after the terminal status and the close, the client waits for a final: true that "
     "never comes (2.5 s, past CLIENT-009's tolerance, or to its deadline)", _client(9), ()),
    ("unknown-variant-gives-up", "at the first frame with metadata or a plan variant it does not know, the "
     "client stops reading and shows what it had", _client(10), ()),
    ("new-id-on-retry", "an answer sent again after the connection dropped carries a new messageId", _client(12),
     ()),
    # The requirements the design leaves to collateral get a fault of their own too (docs/faults.md: every
    # judged requirement is caught by one).
    ("artifacts-by-arrival", "an appended chunk goes to the artifact written last, whatever its artifactId",
     _client(3), ()),
    ("other-task-frames", "frames are not matched to the task: those naming another task or context are shown "
     "too", _client(7), ()),
    ("d3-close-ends", "a stream that closes at an interrupted state is taken as the end of the task: nothing "
     "is answered", _client(8), ()),
    ("answers-first-pause-only", "only the task's first pause is answered: at a later one the client stops and "
     "shows the task waiting there", _client(8), ()),
    ("answer-without-extension", "the answer to an interaction does not list the interactions/v1 extension",
     _client(11), ()),
    ("approval-as-text", "an approval is answered in words (a text part 'yes' or 'no') with no boolean approved",
     _client(19), ()),
    ("prompt-not-shown", "the interaction shown leaves out its prompt", _client(13), ()),
    ("no-version-header", "requests carry no A2A-Version header", _client(14), ()),
    ("stream-accept-json", "streaming calls send Accept: application/json", _client(15), ()),
    ("answer-reuses-id", "the answer carries the messageId of the task's first message", _client(16), ()),
    ("new-task-with-task-id", "a new task's message carries a taskId the client made up", _client(17), ()),
    ("streams-regardless", "SendStreamingMessage is used whatever the card says about streaming", _client(18), ()),
    ("posts-to-origin", "JSON-RPC requests go to STREAMCERT_URL itself, not to the interface URL the card declares",
     _client(20), ()),
))

# PROG-: the reference's progress route (reference/progress/stream.py, reference/progress/pacing.py).
PROGRESS_FAULTS = (
    Fault("prog-unknown-phase", "the turn opens with a phase of no such name ('preparing')", ("PROG-001",)),
    Fault("prog-since-seconds", "since is Unix time in seconds, with a fraction", ("PROG-002",)),
    Fault("prog-field-types", "reading_prompt's done and total are strings", ("PROG-003",)),
    Fault("prog-total-without-done", "reading_prompt sends total without done (done is known once total is)",
          ("PROG-003",)),
    Fault("prog-null-field", "fields not known are sent as null (done/total, rate, what)", ("PROG-004",)),
    Fault("prog-guessed-what", "a tool call without a title gets the tool's name as its what", ("PROG-005",)),
    Fault("prog-what-unshortened", "running_tool's what is the whole command, several lines and long", ("PROG-006",)),
    Fault("prog-since-reset-on-data", "every data-only change starts a new since", ("PROG-007",)),
    Fault("prog-since-not-renewed", "a call of the tool already running keeps the since of the call before",
          ("PROG-008",)),
    Fault("prog-pacing-off", "every data-only change is sent (40 a second while the prompt is read)", ("PROG-009",)),
    Fault("prog-pacing-five", "data-only changes are paced at five a second, not four", ("PROG-009",)),
    Fault("prog-data-frozen", "data-only changes are never sent: only the phase's first frame", ("PROG-010",)),
    Fault("prog-pacing-delays-phase", "a new phase after data-only frames waits 1 s behind their pacing",
          ("PROG-011",), ("PROG-010",)),  # the held phase leaves the phase before without frames for 1 s
    Fault("prog-stopped-then-null", "a stopped or failed turn sends null after its last phase", ("PROG-012",)),
    Fault("prog-ends-with-last-phase", "a finished turn ends on its last phase, without null", ("PROG-013",)),
    Fault("prog-status-replaced", "the status text is replaced by a text made from the phase", ("PROG-014",)),
    Fault("prog-status-without-progress", "a new status text is sent in a frame of its own, without progress",
          ("PROG-014",)),
    Fault("prog-phase-mismatch", "a question is announced as waiting_for_person approval", ("PROG-015",)),
    # the steps of docs/script-extensions.md: waits, subagents, calls in parallel, a plan to approve
    # (without agent, the main agent's sequence holds the subagents' phases: their since, times and stopped)
    Fault("prog-subagent-no-agent", "a subagent's frames carry no agent: its progress reads as the main agent's",
          ("PROG-016",), ("PROG-007", "PROG-008", "PROG-011", "PROG-012", "PROG-015")),
    Fault("prog-subagent-no-null", "a subagent that finishes sends no null: its last phase stays", ("PROG-013",)),
    Fault("prog-running-counts-ended", "waiting_for_subagents counts the subagents that have ended, not those "
          "running", ("PROG-015",)),
    Fault("prog-model-reason-words", "waiting_for_model's reason is the server's own words ('all slots in use'), "
          "not busy, slots or group", ("PROG-003",), ("PROG-015",)),  # the reason no longer names the script's
    Fault("prog-retry-without-in", "retrying leaves out in (the seconds until the retry)", ("PROG-003",)),
    Fault("prog-parallel-last-started", "with calls in parallel, running_tool shows the call that started last",
          ("PROG-017",), ("PROG-011",)),  # a later call shown early: the script's times no longer line up
    Fault("prog-args-as-thinking", "while a tool call's arguments stream, the progress shows thinking, not writing",
          ("PROG-015",)),
    Fault("prog-plan-as-approval", "a plan to approve is announced as waiting_for_person approval", ("PROG-015",)),
    Fault("prog-waits-not-shown", "queued, loading_model and compacting are never sent: the phase before holds",
          ("PROG-015",)),
)

# Interrupted states and interactions/v1 (reference/agent/interactions.py, pauses.py, methods.py, streams.py).
IX_FAULTS = (
    Fault("ask-stays-working", "an ask publishes its question in TASK_STATE_WORKING and waits there",
          _int(1), _ix(1, 14) + _int(6)),  # no pause at all: nothing else about it can be judged (the stream is
    # cut at the suite's limit without a terminal state)
    Fault("interrupted-streams-silent", "a stream that has reached an interrupted state, or was opened on a task "
          "in one, carries nothing more and closes at the end: after the answer no stream shows the task",
          _int(2, 7), _int(5, 6)),  # (streams that never end keep the driver from the task's end)
    Fault("resume-submitted", "an answered task announces TASK_STATE_SUBMITTED instead of returning to WORKING",
          _int(3)),
    Fault("answer-stream-status-first", "a stream opened by an answer begins with the status update that moves "
          "the task on, without the Task", _int(6)),
    Fault("message-ends-streams", "a message taken on a task (an answer, a retry, a second message) ends the "
          "task's open streams at once, whatever state the task is in", _int(7) + _task(14), _int(2, 5, 6)),
    # (the streams end before the task: the answer to the ended task may then reach it still working)
    Fault("list-status-message-dropped", "ListTasks leaves out each task's status message", _int(8)),
    Fault("pause-message-dropped-get", "GetTask of a task in an interrupted state leaves out its status message",
          _int(4), _ix(5, 11, 14) + _idem(2)),  # GetTask is how those (and a client without the extension) see the task
    Fault("answer-terminal-accepted", "an interactions/v1 answer to a task in a terminal state is accepted",
          _int(5)),
    Fault("answer-terminal-wrong-code", "an interactions/v1 answer to a task in a terminal state is refused with "
          "-32602 instead of UnsupportedOperationError", _int(5)),
    Fault("approval-input-required", "an approval pauses in TASK_STATE_INPUT_REQUIRED", _ix(1)),
    Fault("interaction-no-extensions-list", "the interrupted status message does not list the extension in "
          "`extensions`", _ix(2)),
    Fault("approval-detail-missing-tool", "an approval's detail names the server but not the tool", _ix(3)),
    Fault("approval-detail-args", "an approval's detail carries the held call's arguments", _ix(4)),
    Fault("get-task-interaction-dropped", "GetTask of a paused task leaves the interaction metadata off its "
          "status message", _ix(5), _ix(11) + _idem(2)),  # GetTask is how those see the open interaction
    Fault("approval-not-run", "approved: true is taken as a denial: the model sees tool.denied", _ix(6)),
    Fault("denial-runs-call", "approved: false runs the held call anyway", _ix(7)),
    Fault("approval-sends-other-args", "an approved call runs with arguments other than those it was held with "
          "(an extra member draft: true)", _ix(15)),
    Fault("answer-value-mangled", "a question's answer reaches the model as Python's str(), not as JSON", _ix(8)),
    Fault("connection-true-not-read", "a connection answered with true or approved: true is read as declined",
          _ix(9)),
    Fault("truncate-utf16", "request_connection counts UTF-16 code units and cuts inside a surrogate pair",
          _ix(10)),
    Fault("connection-reason-uncut", "request_connection cuts the app but sends the reason whole, past 280 "
          "characters", _ix(10)),
    Fault("connection-cut-plus-ellipsis", "request_connection keeps 80 (280) code points and appends …: one past "
          "the limit", _ix(10)),
    Fault("text-approves", "a text reply to a task waiting for an approval approves the call", _ix(11)),
    Fault("interaction-id-ignored", "an answer is taken for the open interaction whatever interactionId it names",
          _ix(12), _ix(13)),  # the wrong id answers the last question: the stale answer then meets an ended task
    Fault("stale-answer-accepted", "an answer naming an interaction already answered is accepted (and ignored)",
          _ix(13)),
    Fault("value-false-approves", "an approval answered with value: false (not approved) is taken as a yes",
          _ix(7)),
    Fault("question-approved-ignored", "a question answered with approved gets no value: the model sees null",
          _ix(8)),
    Fault("connection-truthy", "a connection answered with any value but false, null or {connected: false} "
          "connects (\"yes\", 1 and {connected: \"true\"} included)", _ix(9)),
    Fault("connection-approved-false-connects", "a connection answered approved: false (a boolean false) connects: "
          "the model sees Connected", _ix(9)),
    Fault("wrong-id-taken", "an answer naming an interaction never opened is refused, and taken anyway as the "
          "answer to the open one", _ix(12)),
    Fault("prompt-only-in-metadata", "the interrupted status message has no text part: the prompt is only in a "
          "data part", _ix(14), _int(1) + _ix(2)),
    Fault("pause-text-for-questions-only", "an approval's or a connection's status message has no text part (the "
          "prompt only in a data part): only a question reads as plain text", _ix(14), _ix(2)),
    Fault("retry-shows-before", "an answer retried with the same messageId and body gets the task as it was "
          "before the answer (its interaction still open)", _idem(1)),
    Fault("retry-answers-again", "messageIds are not remembered: a retried answer answers whatever is open",
          _idem(2), _idem(1, 3) + _int(4, 8)),  # (the twin answers the next question before GetTask reads it,
    # and unseen: the streams had closed at that question)
    Fault("concurrent-double-effect", "the messageId is recorded only once an answer is done: an identical answer "
          "in flight (up to 0.5 s after the first is done) is taken as a second answer", _idem(3),
          _idem(1, 2) + _int(4, 8)),  # a quick sequential retry falls inside the same window
)

# REST-: the HTTP+JSON binding (reference/agent/rest.py), played over that binding. Each breaks one route or one
# error, so that what the other rules read over HTTP+JSON stays whole. (The interactions scenarios subscribe
# too: played over HTTP+JSON, rest-subscribe-missing would also flag A2A-INT-002/006/007 there.)
REST_FAULTS = tuple(Fault(name, description, catches, also, binding="http-json")
                    for name, description, catches, also in (
    ("rest-subscribe-missing", "SubscribeToTask is not served: POST and GET /tasks/{id}:subscribe answer 404 "
     "(google.rpc.Status without ErrorInfo, as for a path no route serves)", _rest(1),
     _task(11) + _err(1, 2, 5)),  # every SubscribeToTask of the a2a scenarios is lost (read as MethodNotFound)
    ("rest-jsonrpc-envelope", "CancelTask's answer is wrapped in a JSON-RPC envelope "
     "({\"jsonrpc\": \"2.0\", \"id\": null, \"result\": <Task>})", _rest(2),
     _task(10)),  # the canceled Task is not where it should be
    ("rest-unwrapped-events", "stream events carry what the StreamResponse holds without the wrapper: a bare Task, "
     "TaskStatusUpdateEvent, TaskArtifactUpdateEvent or Message", _rest(2),
     _NO_STREAM + _int(1, 2, 6, 7) + _ix(1, 14) + _plan(1, 18)),  # no frame reads as a task stream's result
    ("rest-cancel-accepted-empty", "CancelTask is answered 202 Accepted with an empty body, not the canceled Task "
     "(the task is canceled all the same)", _rest(2) + _task(10), ()),
    ("rest-json-content-type", "answers with a JSON body (results and errors) are sent as application/json, "
     "not application/a2a+json", _rest(3), ()),
    ("rest-wrong-error-status", "TaskNotCancelableError is answered HTTP 409 Conflict instead of 400 (its "
     "ErrorInfo still names it)", _rest(4), ()),
    ("rest-status-jsonrpc-code", "error bodies carry the JSON-RPC code in error.code (-32001, …), not the HTTP "
     "status", _rest(5), ()),
    ("rest-no-errorinfo", "TaskNotCancelableError comes without its ErrorInfo (no error.details): only HTTP 400 "
     "tells it, which InvalidParams shares", _rest(6), _err(3)),  # read as a generic invalid argument
))


# GRPC-: the gRPC binding (reference/agent/grpc_server.py), played over that binding; each breaks one method, one
# error or one message. card-phantom-grpc is played over JSON-RPC: the card declares a gRPC interface nothing
# serves, which the card's probe of every declared interface (A2A-CARD-006) finds.
GRPC_FAULTS = tuple(Fault(name, description, catches, also, binding=binding)
                    for name, description, catches, also, binding in (
    ("grpc-unimplemented-subscribe", "SubscribeToTask is not served: the call ends UNIMPLEMENTED, as for a "
     "method the server does not have", _grpc(1),
     _task(11, 12) + _err(1, 2, 5) + _int(2, 6, 7), "grpc"),  # every SubscribeToTask is lost
    ("grpc-garbage-message", "the second message of the task stream is no StreamResponse: bytes that do not "
     "decode as a protobuf message", _grpc(2),
     _stream(4, 9, 14) + _int(1, 6, 7) + _ix(1, 14) + _plan(1, 18) + _task(10, 11, 12), "grpc"),  # as bad-json-frame
    ("grpc-wrong-status", "TaskNotFoundError ends the call FAILED_PRECONDITION instead of NOT_FOUND (its "
     "ErrorInfo still names it)", _grpc(3), (), "grpc"),
    ("grpc-no-errorinfo", "TaskNotCancelableError comes without its ErrorInfo (no grpc-status-details-bin): only "
     "FAILED_PRECONDITION tells it, which four other errors share", _grpc(4), _err(3), "grpc"),
    ("card-phantom-grpc", "the card declares a GRPC interface at a loopback port where nothing serves (no gRPC "
     "server runs)", ("A2A-CARD-006",), (), "jsonrpc"),
))

_TABLE = (
    # WIRE-
    Fault("no-stream", "SendStreamingMessage and SubscribeToTask answer application/json (the final Task)",
          ("WIRE-001", "A2A-STREAM-015"), _NO_STREAM),
    Fault("answer-stream-json", "a SendStreamingMessage to a task that exists (a streamed answer) is answered as "
          "application/json (the Task where its stream would end)", ("WIRE-001",) + _int(6), _int(2, 5)),
    # (under the close reading of D3 no stream then shows the task go on after the answer (A2A-INT-002), and the
    # driver, which waits on the streams, may send its answer to the ended task before the task has ended)
    Fault("bad-json-frame", "the second task-stream event's data is cut short: not valid JSON",
          ("WIRE-002",), _stream(4, 9, 14) + _int(1, 6, 7) + _ix(1, 14) + _plan(1, 18) + _task(10, 11, 12)),
    # (the broken frame may be the pause, or a plan update; in cancel-subscribe it is the WORKING status the
    # driver waits for, so it cancels and subscribes only once the task has completed)
    Fault("bare-result", "stream events carry the StreamResponse without the JSON-RPC envelope",
          ("WIRE-002",), ("WIRE-003", "WIRE-004") + _NO_STREAM + _int(1, 6) + _ix(1, 14)),
    Fault("wrong-rpc-id", "every JSON-RPC response carries an id other than its request's",
          ("WIRE-003",), _int(6) + _plan(18)),
    Fault("falsy-id-null", "a response to a request whose id is 0 or \"\" carries id null (read as no id)",
          ("WIRE-003",)),
    Fault("error-id-null", "every error response carries id null, whatever the request's id", ("WIRE-003",)),
    Fault("invalid-id-echoed", "a request whose id is neither a string, a number nor null (true, an object) is "
          "answered with that id echoed, not null", ("WIRE-003",)),
    # A legal server the suite must judge as the correct one (catches nothing, blames nothing): `plays` names the
    # scenario it is played in, where a request sent on a connection the server then dropped once made A2A-ERR-007
    # or -008 ERROR from run to run.
    Fault("close-after-error", "after each error answer the connection serves nothing more, without Connection: "
          "close: the next request on it is dropped unread and the connection closed (legal: RFC 9112 §9.6)", (),
          plays=("errors",)),
    Fault("list-snake-case", "ListTasks answers with the proto field names (next_page_token, context_id, "
          "status.message.message_id …), not the lowerCamelCase JSON names", ("WIRE-010",),
          _task(5, 6, 7, 8, 9, 13)),  # their members are not where the JSON names put them
    Fault("jsonrpc-version-ignored", "a request whose jsonrpc is not \"2.0\" is served like one that is",
          ("WIRE-008",)),
    Fault("wrong-code-no-method", "a request without method gets -32601 instead of -32600", ("WIRE-008",)),
    Fault("notification-answered", "a notification (no id) is answered like a request, with id null",
          ("WIRE-009",)),
    Fault("result-and-error", "the second task-stream event carries an error member beside its result",
          ("WIRE-004",), _stream(14) + _int(6) + _plan(18)),
    Fault("html-error", "JSON-RPC errors come back as an HTML page (text/html, HTTP 500)",
          ("WIRE-005",), ("WIRE-008",) + _err(*range(1, 11), 12, 13, 14, 16) + _task(18)),
    Fault("bad-utf8", "one byte of the second task-stream event is not UTF-8",
          ("WIRE-006",), ("WIRE-002",) + _stream(14) + _int(1, 4, 6, 8) + _ix(2, 14) + _plan(1, 18)),  # (the pause's
    # text, or a plan update)
    Fault("unterminated-last-block", "the terminal event is sent without its blank line (lost by clients)",
          ("WIRE-006",), _stream(8, 9, 10, 14) + _task(1, 2, 10, 11, 12) + _int(6, 7) + _plan(18)),
    Fault("no-extension-echo", "activated extensions are not echoed in an A2A-Extensions response header",
          ("WIRE-007",)),
    # A2A-CARD-
    Fault("card-404", "the agent card is not served (404)", ("A2A-CARD-001",), _NO_CARD),
    Fault("card-not-json", "the agent card is served as an HTML page", ("A2A-CARD-001",), _NO_CARD),
    Fault("card-missing-field", "the card has no version field", ("A2A-CARD-002",)),
    Fault("card-no-jsonrpc", "the card declares its JSON-RPC endpoint as its only interface, labelled GRPC: a binding "
          "it does not serve there", ("A2A-CARD-006",),
          ("WIRE-007", "A2A-STREAM-015") + _NO_STREAM + _task(*range(1, 10)) + _err(*range(1, 11))),
    Fault("card-old-version", "the card's JSONRPC interface says protocolVersion 0.3", ("A2A-CARD-003",)),
    Fault("extension-no-uri", "the card's first extension has no uri", ("A2A-CARD-004",), ("WIRE-007",)),
    Fault("extension-required-not-bool", "the card's extensions give required as a string, not a boolean",
          ("A2A-CARD-004",)),
    Fault("card-oneof-internal", "the card's security scheme is an SDK's own encoding of the oneof: "
          "{\"scheme\": {\"http_auth_security_scheme\": …}}", ("A2A-CARD-005",)),
    Fault("card-snake-case", "the card writes capabilities.pushNotifications as push_notifications",
          ("A2A-CARD-005",)),
    Fault("card-no-cache-headers", "the agent card is served without Cache-Control and ETag",
          ("A2A-CARD-007", "A2A-CARD-010")),
    Fault("card-ignores-revalidation", "a GET of the agent card whose If-None-Match names its ETag gets the whole "
          "card again (HTTP 200), not 304 Not Modified", ("A2A-CARD-010",)),
    Fault("auth-not-enforced", "the secured agent serves every operation but GetExtendedAgentCard to a request "
          "without its bearer token", ("A2A-AUTH-001",), also=("A2A-AUTH-002",)),  # the message served made a task
    Fault("auth-task-created", "the secured agent refuses a SendMessage without its bearer token with HTTP 401, "
          "having made its task all the same", ("A2A-AUTH-002",)),
    Fault("auth-no-www-authenticate", "the secured agent's HTTP 401 carries no WWW-Authenticate header",
          ("A2A-AUTH-003",)),
    Fault("extended-card-to-anyone", "the secured agent serves its extended card to a request without its bearer "
          "token", ("A2A-AUTH-004",)),
    Fault("extended-card-contradicts", "the extended card moves the public card's first interface to another URL",
          ("A2A-AUTH-005",)),
    Fault("card-signature-pretty", "the card's signature is made over the pretty-printed card, not its RFC 8785 "
          "canonical form", ("A2A-CARD-009",)),
    Fault("card-changed-after-signing", "the card's description is changed after the card was signed",
          ("A2A-CARD-009",)),
    Fault("card-signature-alg-mismatch", "the card is signed with ES256, its protected header naming ES384",
          ("A2A-CARD-009",)),
    Fault("card-signature-alg-none", "the card's signature names alg none and signs nothing",
          ("A2A-CARD-008",)),
    # A2A-STREAM-
    Fault("status-first", "the task stream begins with a statusUpdate (SUBMITTED) instead of the Task",
          _stream(1) + _plan(18), _stream(2, 3, 4) + _int(6)),
    Fault("client-ids", "the task id and context id are not minted: empty strings",
          _stream(2), _stream(3, 4, 9) + _task(*range(1, 14)) + _err(2, 3, 4, 5, 10)
          + _int(*range(1, 9)) + _ix(*range(1, 15)) + _idem(1, 2, 3)),  # an answer naming task "" starts a new task
    Fault("history-ids-missing", "the server's copy of the client message lacks taskId and contextId",
          _stream(3)),
    Fault("wrong-context", "status events carry a contextId other than the task's", _stream(4),
          _int(6) + _plan(18)),
    Fault("two-kinds", "every artifactUpdate result also carries a statusUpdate", _stream(5),
          _stream(14) + _task(3) + _plan(18, 19)),
    Fault("append-first", "the first chunk of an artifact carries append: true", _stream(6), _plan(18)),
    Fault("append-after-last", "one more chunk is appended to an artifact after its lastChunk",
          _stream(7), _stream(14) + _task(3) + _plan(18)),
    Fault("event-after-terminal", "on the task stream an artifactUpdate follows the terminal status",
          _stream(8), _stream(14) + _task(3, 12) + _int(8) + _plan(18, 19)),
    Fault("close-early", "the stream closes after its second event, before any terminal state",
          _stream(9), _stream(8, 10, 14) + _task(1, 2, 3, 10, 12) + _int(1, 5, 6, 7, 8) + _ix(1) + _plan(18)),
    Fault("no-close", "the stream stays open after the terminal status (until the client leaves)",
          _stream(10), _task(1, 2, 3, 10, 11, 12) + _int(2, 5, 6, 7) + _plan(18)),  # (GetTask after the cut
    # stream may get no answer; the interactions driver waits on streams that never close)
    Fault("offset-timestamps", "status timestamps end in +00:00 instead of Z", _stream(11),
          _int(6) + _plan(18)),
    Fault("second-timestamps", "status timestamps have no milliseconds", _stream(12)),
    Fault("v03-names", "stream events use 0.3 names: state 'working', role 'agent', parts with kind",
          _stream(13), _stream(8, 9, 10, 14) + _task(1, 2, 10, 11, 12) + _int(1, 6, 7) + _ix(1, 4, 14) + _plan(18)),
    # (0.3 states hide the pause; the 0.3 role "user" hides which messages are the suite's own)
    Fault("terminal-stamped-early", "the terminal status is streamed stamped an hour before it was recorded",
          _stream(16), _int(6) + _plan(18)),
    Fault("final-flag", "status updates carry the 0.3 final member (true on the terminal status, false before)",
          _stream(17), _int(6)),
    Fault("task-again-mid-stream", "the task stream sends the Task again right after its first status update",
          _stream(18), _int(6) + _plan(18)),
    Fault("drop-chunk", "the third chunk of a chunked artifact is never sent (nor stored)", _stream(14)),
    Fault("wrong-final-text", "the finish message differs from the script's text", _stream(14)),
    Fault("stream-refused", "SendStreamingMessage is refused (-32004) although the card declares streaming",
          _stream(15), ("WIRE-001",) + _NO_STREAM + _err(2)),
    # A2A-TASK-
    Fault("stale-task", "GetTask reports TASK_STATE_WORKING after the task ended", _task(1), _task(10) + _int(8)),
    Fault("wrong-status-message", "GetTask's status message is the first status message, not the last",
          _task(2), _int(4, 8) + _ix(5, 14) + _idem(2)),  # GetTask during a pause shows another message
    Fault("artifacts-not-joined", "the store keeps only the last chunk of an artifact", _task(3), _task(7)),
    Fault("history-length-ignored", "GetTask ignores historyLength", _task(4)),
    Fault("list-missing-task", "ListTasks leaves out the most recent task", _task(5),
          _task(6, 8, 9) + _plan(13) + _int(8)),
    Fault("list-missing-fields", "ListTasks answers without pageSize, totalSize and nextPageToken",
          _task(5), _task(8)),
    Fault("list-oldest-first", "ListTasks sorts oldest first", _task(6), _task(8)),
    Fault("list-artifacts-always", "ListTasks includes artifacts without includeArtifacts", _task(7)),
    Fault("list-paging-broken", "ListTasks ignores pageSize: every task on one page", _task(8), _task(5)),
    Fault("list-filter-ignored", "ListTasks ignores the contextId and status filters", _task(9), _task(5, 8, 17)),
    Fault("list-after-exclusive", "ListTasks' statusTimestampAfter leaves out the task stamped exactly then",
          _task(13)),
    Fault("proto-names-ignored", "a request field named by its proto name (context_id) is left unread: ListTasks "
          "so filtered lists every context", _task(17)),
    Fault("list-page-size-unbounded", "ListTasks takes any pageSize (150, 0) and answers it as the page size used",
          _task(18)),
    Fault("cancel-ignored", "CancelTask answers the task unchanged and the work goes on", _task(10),
          _stream(9) + _task(12)),
    Fault("subscribe-refused", "SubscribeToTask on a task that has not ended is refused with -32004 (as "
          "application/json)", _task(11), _task(12) + _int(2, 6)),
    Fault("subscribe-no-task", "SubscribeToTask starts with live events, without the Task", _task(11),
          _stream(1, 9) + _task(10, 12) + _int(6)),
    Fault("second-stream-diverges", "SubscribeToTask sends a fresh status (new timestamp, no message) "
          "after the Task: an event the task stream never carried", _task(12),
          _int(3, 4) + _ix(1, 2, 3, 5, 8, 9) + _idem(2)),  # the fresh status reads as one more pause
    Fault("disconnect-cancels", "a client closing its stream before the task has ended cancels the task",
          _task(15)),
    Fault("blocking-returns-early", "a blocking SendMessage returns at the next status update, the task still "
          "working", _task(16)),
    # A2A-ERR-
    Fault("streaming-not-refused", "the no-streaming agent streams anyway", _err(1)),
    Fault("wrong-code-not-found", "an unknown task id gets -32603 instead of -32001", _err(2)),
    Fault("wrong-code-not-cancelable", "canceling a terminal task gets -32004 instead of -32002", _err(3)),
    Fault("wrong-code-terminal-send", "a message to a terminal task gets -32602 instead of -32004", _err(4),
          _int(5)),
    Fault("subscribe-terminal-streams", "SubscribeToTask on a terminal task streams the Task and closes",
          _err(5)),
    Fault("wrong-code-protocol", "an unknown method and a non-JSON body both get -32600", _err(6)),
    Fault("wrong-code-params", "invalid params get -32603 instead of -32602", _err(7), _err(10, 12)),
    Fault("version-ignored", "the A2A-Version header is not checked", _err(8, 16)),
    Fault("extension-required-ignored", "the agent whose card marks progress/v1 required serves a request that does "
          "not activate it", _err(17)),
    Fault("version-missing-served", "a request without A2A-Version, or with it empty, is served as 1.0, not read "
          "as 0.3 and refused", _err(16)),
    Fault("error-data-missing", "errors carry no data array", _err(9)),
    Fault("cross-context-accepted", "a message whose taskId belongs to another context is accepted",
          _err(10)),
    Fault("wrong-code-cancel-unknown", "CancelTask on an unknown id gets -32002 instead of -32001", _err(2)),
    Fault("wrong-code-subscribe-unknown", "SubscribeToTask on an unknown id gets -32004 instead of -32001",
          _err(2)),
    Fault("version-patch-refused", "A2A-Version: 1.0.1 is refused with -32009: the patch number is considered",
          _err(11)),
    *PUSH_FAULTS,
    Fault("capability-methods-unimplemented", "the four push-notification-config methods and GetExtendedAgentCard "
          "are answered as methods the agent lacks (-32601), not with the errors of an undeclared capability",
          _err(13, 14)),
    Fault("unknown-fields-stored", "members a message and its parts do not have are stored with it and sent back "
          "in the task's history", _err(15)),
    Fault("message-role-defaulted", "a message without role, or with a role the enum does not name, is taken "
          "as ROLE_USER and run", _err(12)),
    *REST_FAULTS,  # REST-: over HTTP+JSON
    *GRPC_FAULTS,  # GRPC-: over gRPC
    *IX_FAULTS,  # A2A-INT-, IX-, IDEM-
    *LINE_FAULTS,
    *PLAN_FAULTS,
    *_ACP_FAULTS,  # ACP-PLAN-: the reference ACP agent
    *PROGRESS_FAULTS,  # PROG-: the reference's progress route
    *_ACP_CLIENT_FAULTS,  # CLIENT-ACP-: the reference ACP client
    *CLIENT_FAULTS,  # CLIENT-: the reference A2A client
)

FAULTS: dict[str, Fault] = {fault.name: fault for fault in _TABLE}


# -- switching a fault on -------------------------------------------------------------------------
# A program runs at most one fault. Every place that changes what a program does under a fault holds a
# Switch, made when its module is imported by `switch(NAME)`: a name FAULTS does not declare stops
# the module from loading. `SWITCH.on(program)` asks whether the program runs that fault; `program` is
# what the fault was given to (the server's Options, the ACP Agent: anything with a `fault`) or the
# fault's name itself.

T = TypeVar("T")


class UnknownFault(ValueError):
    """A fault name that FAULTS does not declare."""


class Program(Protocol):
    fault: str | None


@dataclass(frozen=True)
class Switch:
    name: str

    def on(self, program: Program | str | None) -> bool:
        fault = program if program is None or isinstance(program, str) else program.fault
        return fault == self.name


_SWITCHED: set[str] = set()


def switch(name: str) -> Switch:
    """The switch of the declared fault `name`; UnknownFault for a name FAULTS does not declare."""
    check_fault(name)
    _SWITCHED.add(name)
    return Switch(name)


def switched() -> frozenset[str]:
    """The faults that the modules imported so far hold a switch for."""
    return frozenset(_SWITCHED)


def variant(program: Program | str | None, correct: T, variants: Mapping[Switch, T]) -> T:
    """What `program` uses: the variant of the fault it runs, else `correct`."""
    return next((value for fault, value in variants.items() if fault.on(program)), correct)


def subclass_variants() -> tuple[dict[Switch, type], Callable[[str], Callable[[type], type]]]:
    """For a program whose fault variants are subclasses of its correct class (the line renderer, the ACP
    agent): the table switch → subclass that `variant` reads, and the class decorator that fills it."""
    table: dict[Switch, type] = {}

    def register_as(name: str) -> Callable[[type], type]:
        def register(cls: type) -> type:
            table[switch(name)] = cls
            cls.fault = name
            return cls
        return register

    return table, register_as


def unknown_fault_message(name: str) -> str:
    near = difflib.get_close_matches(name, FAULTS, n=1)
    hint = f"did you mean {near[0]!r}? " if near else ""
    return f"unknown fault {name!r}; {hint}`streamcert serve --list-faults` lists them"


def check_fault(name: str | None) -> str | None:
    """`name` when FAULTS declares it, or None (the correct program); else UnknownFault."""
    if name is not None and name not in FAULTS:
        raise UnknownFault(unknown_fault_message(name))
    return name


PROGRAMS = {"server": "the reference server", "line": "the reference line renderer", "acp": "the reference ACP agent"}
PROGRAMS["acp_client"] = "the reference ACP client"
PROGRAMS["client"] = "the reference A2A client"


def fault_argument(target: str) -> Callable[[str], str]:
    """An argparse `type` for --fault: the name of a declared fault that breaks `target` (a Fault.target)."""
    def fault_name(name: str) -> str:
        try:
            check_fault(name)
        except UnknownFault as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        if FAULTS[name].target != target:
            raise argparse.ArgumentTypeError(f"fault {name!r} breaks {PROGRAMS[FAULTS[name].target]}, "
                                             f"not {PROGRAMS[target]}")
        return name
    return fault_name


def describe_faults() -> list[str]:
    """One line per fault, for `streamcert serve --list-faults`."""
    width = max(len(name) for name in FAULTS)
    return [f"{f.name:<{width}}  {', '.join(f.catches):<28}  {f.description}" for f in FAULTS.values()]
