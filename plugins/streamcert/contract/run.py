"""log.notes keys any play of a scenario may carry, whatever its family (drivers/__init__.py, the drivers'
shared helpers, the proxy's and the replay's logs)."""

BINDING = "binding"  # the A2A binding this play of the scenario went over (protocols/bindings.py's name)
STREAM_LIMIT_S = "stream_limit_s"  # the per-stream time limit the run used, in seconds
UNSUPPORTED = "unsupported"  # {requirement id: reason}: requirements the target does not offer (UNSUPPORTED)
UNREACHABLE = "unreachable"  # why the card could not be fetched at all (every requirement of the scenario ERROR)
NOT_TESTED = "not_tested"  # {requirement id: reason}: requirements this play could not exercise (NOT_TESTED)
CREDENTIALS = "credentials"  # the NAMES of the headers the run sends as credentials (never their values; A2A-AUTH-)
PROXIED = "proxied"  # the upstream agent `streamcert proxy` forwarded this log's exchanges to
