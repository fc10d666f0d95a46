"""The driver ↔ rule contract as code: the exchange labels and the notes keys a driver (or the capture) writes
into a frame log and the rules read back (docs/architecture.md, "The driver ↔ rule contract").

One module per family of drivers, named for it, plus `run` (the log's notes every play of a scenario may
carry) and `capture` (the exchange's notes the wire layer writes). Each constant is the string written into the
log, with a one-line comment of what it holds; a label written with a number or a binding after it is a prefix
(its name ends in `_PREFIX`). These modules import nothing: every layer may read them.
tests/unit/test_contract_keys.py checks that every key and label a rule reads is one a driver or the capture writes,
and that no driver, rule or wire module spells one as a bare string.
"""
