"""A2A-CARD-: the agent card."""


def test_card(streamcert):
    streamcert.check("card")
