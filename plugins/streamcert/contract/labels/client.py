"""Labels of the client-certification driver (drivers/client.py) and the replay server (recordings/replay.py)."""

CLIENT = "client"  # the client's run (its stdout read as the view it printed)
SERVED = "served"  # an exchange the replay served, in the order served (notes: served_as, its label in the case)
SENT = "sent"  # a request the replay server received
DROPPED_SUFFIX = "_dropped"  # <label>_dropped: the case's exchange cut where the client should notice it
