"""PUSH-: push notification configs and deliveries to the suite's own webhook receiver (docs/push.md)."""


def test_push_configs(streamcert):
    """Configs are created, read, listed and deleted; each webhook gets the task's events, in order."""
    streamcert.check("push-configs")
