"""Readers several profiles share and none owns: the A2A task stream (streamview.py), the answer of a unary A2A call
(unary.py), and how a text is cut or counted in characters (characters.py)."""
