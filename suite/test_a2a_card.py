"""A2A-CARD-: the agent card."""


def test_card(streamcert):
    streamcert.check("card")


def test_security(streamcert):
    """An agent whose card requires credentials refuses a request without them (making no task), and serves its
    extended card only with them (A2A-AUTH-, A2A-CARD-011)."""
    streamcert.check("security")
