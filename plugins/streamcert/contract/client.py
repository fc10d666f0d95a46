"""The client-certification driver's log (drivers/client.py, recordings/client_cases.py, recordings/replay.py): notes
keys the CLIENT- rules read."""

CLIENT_CASE = "client_case"  # log.notes: the case played (its id, pace, the card's streaming, the URL, ...)
CASE_ERROR = "case_error"  # log.notes: why the case could not be built
STREAM_CLOSED_AT = "stream_closed_at"  # log.notes: when the replay finished the last stream (the log's seconds)
RETURNCODE = "returncode"  # the client's Exchange.notes: its exit code (None when the suite stopped it)
STDERR_TAIL = "stderr_tail"  # the client's Exchange.notes: the last of its stderr
SERVED_AS = "served_as"  # a served exchange's label in the case (card, stream, answer_1, answer_1_dropped…)
SERVED_FROM = "served_from"  # a case exchange's label in the recording it was built from
HELD_OPEN = "held_open"  # how the recording's stream ended when the replay keeps the case's stream open
HOLD = "replay_hold"  # an answer's hold: write its chunks from one on only once a request has come
UNTERMINATED = "unterminated"  # a served stream's last block, which no blank line ended
