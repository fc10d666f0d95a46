"""The embedded reference A2A agent: a real HTTP server on loopback that plays test-agent scripts,
plus fault variants that each break one rule (faults.FAULTS).

Kept free of imports: the CLI and the pytest plugin read the fault table before pytest starts,
and importing the server here would load Starlette (and anyio) ahead of pytest's own plugins.
"""
