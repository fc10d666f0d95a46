"""streamcert: a conformance test suite and fixture recorder for agent task streams."""

__version__ = "0.1.0"
