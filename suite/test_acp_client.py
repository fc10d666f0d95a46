"""CLIENT-ACP-: an ACP client (--acp-client-cmd) starts the suite's ACP agent and shows the plans it reports,
in protocol v2 and v1 (with and without clientCapabilities.plan); docs/clients.md."""

import pytest

SCENARIOS = {
    "acp-client-v2-items": "Two item plans updated in turn; one loses entries and gains others",
    "acp-client-v2-variants": "Markdown, file and custom plans beside item plans",
    "acp-client-v2-custom-values": "Entries with custom `_` statuses and priorities",
    "acp-client-v2-removed": "plan_removed; a removed plan reported again",
    "acp-client-v1-capability": "v1 with clientCapabilities.plan: plan_update and plan_removed",
    "acp-client-v1-fallback": "v1 without it: `plan` updates are the one plan",
    "acp-client-v1-fallback-removed": "v1 without it: an empty `plan`",
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_acp_client(streamcert, scenario):
    streamcert.check(scenario)
