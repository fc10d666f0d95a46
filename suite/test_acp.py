"""ACP-PLAN-: plans over ACP stdio (seed 002 for protocol v2; v1 stable and unstable forms), and the
stdio discipline, one prompt turn per scenario."""


def test_acp_v2_items(streamcert):
    """v2: one item plan reported and updated four times (cancelled, `_blocked`, `_stretch` included)."""
    streamcert.check("acp-v2-items")


def test_acp_v2_variants(streamcert):
    """v2: item, markdown, file and custom plans; the markdown plan removed."""
    streamcert.check("acp-v2-variants")


def test_acp_v1_capability(streamcert):
    """v1 with clientCapabilities.plan: plan_update and plan_removed allowed."""
    streamcert.check("acp-v1-capability")


def test_acp_v1_fallback(streamcert):
    """v1 without the capability: the stable `plan` form only."""
    streamcert.check("acp-v1-fallback")
