"""Protocol facts, one module per protocol: names, limits, states, metadata keys, URIs, error codes and
response kinds, with at most tiny readers of a shape. The reference, the drivers and the rules all
import them from here; no judging and no agent behaviour lives here.

    a2a              A2A 1.0.1 (methods, task states, error codes, StreamResponse members)
    progress_v1      nylorun A2A extension progress/v1: plans from update_plan (seed 000)
    interactions_v1  nylorun A2A extension interactions/v1: approval, question, connection (seed 004)
    progress         LLeMbas progress 3.4.0: phases, pacing (seed 003)
    acp              Agent Client Protocol plans (seed 002)
    script           the test-agent script every target is driven by (docs/contracts.md §6)
"""
