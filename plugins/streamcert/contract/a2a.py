"""The A2A drivers' log (drivers/a2a.py, multi.py, plans.py): notes keys the rules read."""

UNPROBED = "unprobed"  # {binding: why}: interfaces the card declares that the card scenario could not probe
CONTEXT_ID = "context_id"  # the contextId the scenario's first task was given (ListTasks filters by it)
PLAN_AGENT = "plan_agent"  # which agent played the plans scenario ("plan", or the kind the target names)
CARD_KEYS = "card_keys"  # the card scenario's log.notes: the public JWKs the run trusts ([] when none was given)
CARD_KEYS_ERROR = "card_keys_error"  # why the --card-key files could not be read at run time
