"""PUSH-: push notification configs and deliveries to the suite's own webhook receiver (docs/push.md)."""


def test_push_configs(streamcert):
    """Configs are created, read, listed and deleted; each webhook gets the task's events, in order."""
    streamcert.check("push-configs")


def test_push_deliveries(streamcert):
    """An inline config, deliveries across the pause and after the client drops its stream, the config's
    authentication, failing and slow webhooks, screened webhook URLs, Delete twice, an agent without push."""
    streamcert.check("push-deliveries")
