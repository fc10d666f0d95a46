"""The push drivers' log (drivers/push.py, push_deliveries.py): notes keys the rules read. The receiver's
own keys (the path a webhook came to, ...) are the capture's (contract/capture.py)."""

PUSH = "push"  # log.notes: the dict of the keys below
HOOK_PATHS = "hooks"  # {config label: the webhook path it was given}
TOKENS = "tokens"  # {config label: the token it was given}
SLOW_DELAY_S = "slow_delay_s"  # how long the slow webhook waits before it answers (seconds)
AUTH = "auth"  # the inline config's authentication (push-deliveries)
WAIT_S = "wait_s"  # how long the driver waited for deliveries (push-deliveries)
SETTLED = "settled"  # False: the deliveries had not all arrived when the driver stopped waiting
