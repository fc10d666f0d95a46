"""CLIENT-: an A2A client (--client-cmd) run on each client case (cases/client/client-*.json): a reference
recording with adversarial variations, served on loopback; judged on the view it prints and the requests it
sends (docs/clients.md). The cases are listed here by id (so `streamcert explain` finds the test that runs
each); tests/unit/test_listing.py checks that every case of cases/client/ is listed."""

import pytest

SCENARIOS = [
    "client-approval",
    "client-artifacts-interleaved",
    "client-basic",
    "client-bom",
    "client-d3-close",
    "client-d3-open",
    "client-foreign-frames",
    "client-keepalives",
    "client-keepalives-ids",
    "client-line-ends-cr",
    "client-line-ends-crlf",
    "client-line-ends-mixed",
    "client-line-separators",
    "client-no-streaming",
    "client-number-float",
    "client-plans-duplicated",
    "client-plans-in-order",
    "client-plans-reordered",
    "client-plans-reordered-duplicated",
    "client-plans-shrinking",
    "client-retry",
    "client-sse-lines-split",
    "client-status-reordered",
    "client-three-kinds",
    "client-unknown-extensions",
    "client-unknown-plan",
    "client-unterminated",
    "client-utf8-bytes",
    "client-utf8-split",
]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_client(streamcert, scenario):
    streamcert.check(scenario)
