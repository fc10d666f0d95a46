"""The test-agent script (DESIGN §6, version 1): how the suite tells any target's test agent what to do.

On A2A it rides in the first message's metadata, on ACP in session/prompt `_meta`, on a progress
stream in the request body, always under SCRIPT_KEY: {"version": 1, "name": ..., "steps": [...]}.
"""

from __future__ import annotations

from . import interactions_v1

SCRIPT_KEY = "urn:streamcert:script"
SCRIPT_VERSION = 1

# The steps that pause the turn for a person, and the interactions/v1 kind each raises.
PAUSING = {"ask": interactions_v1.QUESTION, "call": interactions_v1.APPROVAL, "connect": interactions_v1.CONNECTION}
