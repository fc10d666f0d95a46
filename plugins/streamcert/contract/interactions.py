"""The interrupted-state driver's log (drivers/interactions.py): notes keys the rules read."""

INTERACTIONS = "interactions"  # log.notes: the dict of the keys below
EXTENSION = "extension"  # True: the run activated interactions/v1
SENTINEL = "sentinel"  # the string the script puts in a call's args (None: none)
PAUSES = "pauses"  # [{"stream": label, "interactionId": id|None}], one per pause
ACTIVATED = "activated"  # [label…]: requests sent with the extension in a run without it
SILENT_SUBSCRIPTION = "silent_subscription"  # the label of a subscription that carried nothing until its limit
