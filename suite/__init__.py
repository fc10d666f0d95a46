"""The conformance test modules (run with `pytest --pyargs streamcert.suite`)."""
