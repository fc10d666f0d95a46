"""Recordings: a frame log's file form (cassette.py), the regression diff of two captures (capture_diff.py; what
it compares of a capture, capture_shape.py), the replay server that serves cassettes as an agent (replay.py; which
answer a request gets, replay_answers.py), and the cases built from recordings for a client (client_cases.py,
case_variations.py) or a line renderer (progress_cases.py). docs/architecture.md names the layer of each."""
