"""A2A-STREAM- and WIRE-: the streamed-task sequence of seed 001, and GetTask after it."""


def test_stream_basic(streamcert):
    """The seed's test-runner story: status, test-log.txt in five chunks, summary.json, COMPLETED."""
    streamcert.check("stream-basic")


def test_stream_fail(streamcert):
    """Two artifacts, then TASK_STATE_FAILED."""
    streamcert.check("stream-fail")


def test_cancel_and_subscribe(streamcert):
    """A second stream on a running task, then CancelTask: both streams end at CANCELED."""
    streamcert.check("cancel-subscribe")
