"""streamcert: a conformance test suite and fixture recorder for agent task streams."""

import os

__version__ = "0.1.0"

# gRPC's core logs at INFO to stderr (a server that goes away…); the suite reports what it sees itself. Its fork
# handlers are left out: the suite starts programs (a client, an ACP agent) while gRPC threads run, and a child
# running those handlers before its exec crashed now and then (SIGSEGV). A user's own settings stand.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
