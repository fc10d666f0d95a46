"""The A2A client of a run: one built from the target the run drives (its URL, binding, limits, caps,
credentials and the origins allowed them), for the drivers (drivers/) and for reading the card before the run
(drivers/binding_choice.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..framelog import FrameLog
from .a2a_client import A2AClient
from .bounds import Bounds

if TYPE_CHECKING:  # the run's Target (targets.py) is read, never imported: the wire layer sits below it
    from ..targets import Target


def client_for(target: Target, log: FrameLog, url: str | None = None, stream_limit: float | None = None,
               clock: Any = None, credentials: bool = True) -> A2AClient:
    """The A2A client of a run on `target`: its limits, caps, credentials and the origins allowed them (`clock`:
    another client's, for a second client whose arrival times are compared with the first's; `credentials`
    False: a client that sends none of the run's headers, A2A-AUTH-)."""
    return A2AClient(url or target.a2a_url or "", log, clock=clock,
                     stream_limit=target.stream_limit if stream_limit is None else stream_limit,
                     timeout=target.timeout, headers=target.headers if credentials else {}, bounds=Bounds.of(target),
                     allow_origins=target.allow_origins, binding=target.binding, own_interfaces=target.own_interfaces)
