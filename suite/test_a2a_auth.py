"""A2A-AUTH-: declared security enforced, and the extended card served only to whom it is for."""


def test_security(streamcert):
    """An agent whose card requires credentials refuses a request without them (making no task), and serves its
    extended card only with them, extending the public card."""
    streamcert.check("security")
