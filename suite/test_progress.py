"""PROG-: a live progress stream (seed 003): phases, since, fields, the turn's end, the status beside
progress, and pacing judged on arrival times."""


def test_prompt_read_in_40_updates(streamcert):
    """reading_prompt with 40 prompt-progress updates over one second: data-only frames paced to 4/s."""
    streamcert.check("progress-prompt")


def test_fast_writer(streamcert):
    """writing whose measured rate changes every 20 ms for 1.4 s: coalesced, at most four a second."""
    streamcert.check("progress-writer")


def test_tool_calls_in_a_row(streamcert):
    """The same call twice (a new since each), a call without a title, a long multi-line command."""
    streamcert.check("progress-tools")


def test_stopped_by_the_person(streamcert):
    """stopped {reason: person} is the turn's last progress."""
    streamcert.check("progress-stopped")


def test_failed_turn(streamcert):
    """failed with a one-line reason is the turn's last progress."""
    streamcert.check("progress-failed")


def test_question_in_the_middle(streamcert):
    """waiting_for_person: a question, then an approval with its tool, then the reply and null."""
    streamcert.check("progress-question")


def test_waits_before_and_between_requests(streamcert):
    """queued (ahead counting down), waiting_for_model (slots, group, busy), loading_model, retrying (in,
    attempt) twice, compacting: the waits each show their phase and data."""
    streamcert.check("progress-waits")


def test_subagents_each_with_its_own_sequence(streamcert):
    """waiting_for_subagents with running; each subagent's frames carry agent and are judged on their own
    (one finishes with null, one is stopped by its step limit); the main agent is stopped by its budget."""
    streamcert.check("progress-subagents")


def test_plan_arguments_and_calls_in_parallel(streamcert):
    """waiting_for_person plan, writing while a call's arguments stream, running_tool showing the first-started
    of calls in parallel, stopped by the step limit."""
    streamcert.check("progress-parallel")
