"""streamcert: a conformance test suite and fixture recorder for agent task streams.

Importing it sets nothing: the settings the suite wants for gRPC's core are made where grpc is first imported
(protocols/grpc_messages.import_grpc)."""

__version__ = "0.1.0"
