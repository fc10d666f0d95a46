"""Where the public text of each specification the catalogue cites can be read: a requirement's `source` starts
with the name the catalogue cites it by (docs/catalogue.md), and the reports link that name to its page.

Only pages known to hold the text are listed. The two nylorun extensions are linked at their URI, which each
document gives as its own address; the A2A 101 manual, the LLeMbas progress document and the ACP Plan Operations
RFD have no public address known here, and get no link."""

from __future__ import annotations

PUBLIC_TEXT = {
    "A2A 1.0.1": "https://a2a-protocol.org/v1.0.0/specification/",
    "JSON-RPC 2.0": "https://www.jsonrpc.org/specification",
    "WHATWG HTML": "https://html.spec.whatwg.org/multipage/server-sent-events.html",
    "nylorun A2A extension progress/v1": "https://docs.nylorun.com/a2a/progress/v1",
    "nylorun A2A extension interactions/v1": "https://docs.nylorun.com/a2a/interactions/v1",
    "Agent Client Protocol: Agent Plan": "https://agentclientprotocol.com/protocol/agent-plan",
    "Agent Client Protocol v1: Transports": "https://agentclientprotocol.com/protocol/transports",
    "Agent Client Protocol v1: Initialization": "https://agentclientprotocol.com/protocol/initialization",
}


def source_url(source: str) -> str | None:
    """The public page of the document a requirement's `source` cites ("A2A 1.0.1 · §3.1.2 …"), or None. The
    name must be the whole of the source's first part: "A2A 1.0.1 topic: …" is another document."""
    name = (source or "").split(" · ")[0].strip()
    return PUBLIC_TEXT.get(name)
