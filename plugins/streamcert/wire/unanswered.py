"""What a target has shown it does not answer, remembered for the rest of the process (issue 25).

A unary request waits at most the --timeout in all. When one waits it out (no response headers, or a body still
arriving or silent when the time is up), or a stream's answer never begins, the next requests of the same kind (the
same HTTP method at the same URL: the card, the JSON-RPC endpoint, one HTTP+JSON route or gRPC method) are still
sent, but given `SHORT_S` instead (a stream: for its answer to begin; once it has, its whole limit holds). A target
that accepts and never answers costs one --timeout and then half a second a request, not one --timeout each.
They are never skipped: an answer within the short wait is read and judged as any other, and forgets the
silence. One that does not come ends the exchange with both sentences, so its findings say why they waited less.

Kinds are keyed by the URL as sent (an HTTP+JSON route by its operation, its ids aside), so a server that hangs on
one route only is not presumed to hang on the others. The run forgets them as it starts (plugin.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from .urls import origin

SHORT_S = 0.5  # seconds a request of a kind the target has not answered is given (the --timeout if shorter)
MAX_KINDS = 256  # kinds remembered at most (the oldest are forgotten first)


@dataclass(frozen=True)
class Silence:
    label: str  # the exchange that waited out the --timeout
    said: str  # how it ended (its error sentence)


_shown: dict[tuple[str, str], Silence] = {}


def kind(method: str, url: str, route: str | None = None) -> tuple[str, str]:
    """The kind of a request: its HTTP method and URL, or, for an operation whose URL carries its request (an
    HTTP+JSON route such as GET /tasks/{id}), its method, origin and the operation (`route`)."""
    return method.upper(), (f"{origin(url)} {route}" if route else url)


def shown(key: tuple[str, str]) -> Silence | None:
    """The silence of an earlier request of this kind (None: the target answered the last one, or none was sent)."""
    return _shown.get(key)


def wait(key: tuple[str, str], full: float) -> float:
    """How long a request of this kind may wait for its answer to begin: `full` (a unary answer's --timeout, a
    stream's limit), or `SHORT_S` once the target has shown it does not answer this kind."""
    return min(full, SHORT_S) if key in _shown else full


def because(key: tuple[str, str], waited: float, full: float, what: str = "the --timeout") -> str:
    """Why a request of a kind shown silent was given `waited` seconds instead of `full` (`what`: the name of that
    wait); empty when it was not."""
    earlier = _shown.get(key)
    if earlier is None or waited >= full:
        return ""
    return (f" (given {waited:g} s, not {what} of {full:g} s: the target did not answer an earlier "
            f"{key[0]} to this URL, {earlier.label}: {earlier.said})")


def silent(key: tuple[str, str], label: str, said: str) -> None:
    """A request of this kind waited out its time (`said`: how it ended)."""
    if key in _shown:
        return  # the first silence stands (it is the one that waited the whole --timeout)
    while len(_shown) >= MAX_KINDS:
        del _shown[next(iter(_shown))]
    _shown[key] = Silence(label, said)


def answered(key: tuple[str, str]) -> None:
    """A request of this kind was answered whole: its kind is waited for in full again."""
    _shown.pop(key, None)


def forget() -> None:
    """Forget every silence (a new run in this process, or a test)."""
    _shown.clear()
