"""A2A-INT-, IX-, IDEM-: interrupted states, interactions/v1 and idempotent answers (seed 004; D3 of seed 001).

Every stream a scenario opens (the task's, a SubscribeToTask at a pause, an answer's) is judged as a task
stream (A2A-INT-006..008, docs/streams.md); answers go by SendMessage and by SendStreamingMessage."""

import pytest

SCENARIOS = {
    "ix-question": "A question: INPUT_REQUIRED, answered with a JSON value by a stream, the answer retried while that "
                   "stream is open, then sent after the end",
    "ix-question-plain": "Two questions to a client without the extension, answered by plain text, by SendMessage then "
                         "by SendStreamingMessage",
    "ix-plain-kinds": "An approval and a connection to a client without the extension: plain text in their kind's "
                      "state; answered with the extension activated on the answer alone",
    "ix-approval-granted": "Two held calls approved (approved: true, value: true); never the arguments; each runs "
                           "as it was held",
    "ix-approval-denied": "Held calls denied by approved: false and by value: false: the model sees tool.denied",
    "ix-approval-text": "A held call answered by text: -32004, the task unchanged; then approved",
    "ix-connection": "Connections: {connected: true}, true, approved: true, {connected: false}, approved: false, "
                     "and other values (Not connected)",
    "ix-truncation": "request_connection with an over-long app and reason (emoji, combining marks at the cut)",
    "ix-two-questions": "Two questions in a row: retry, reused messageId, wrong and stale interactionIds",
    "ix-answer-forms": "Questions answered with approved, a plain data reply, and values of every JSON type",
    "ix-concurrent": "Two identical answers at the same moment: one effect",
    "ix-three-kinds": "An approval, a question and a connection in one task, each answered once",
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_interactions(streamcert, scenario):
    streamcert.check(scenario)
