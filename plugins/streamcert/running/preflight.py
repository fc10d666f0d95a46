"""Before any scenario: is the target there at all?

`streamcert run` fetches the A2A agent card (and asks the progress URL for any answer) once, bounded
in every way a hostile server could stretch it: one time limit for the whole fetch (`--timeout`, not
per read, so a card that trickles forever ends), the per-response size cap and the decompressed-size
cap (a gzip bomb is inflated through zlib a slice at a time, never past the cap).

Only "no answer at all" stops the run (a refused connection, a silent socket, a connection closed
before any response): that is `Preflight.fatal`, and the run ends with exit code 3. A card that
answers but is broken (404, HTML, not JSON, too big, trickling) is the scenarios' to judge; the check
only says what it saw in `Preflight.notes`.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from .. import limits
from ..protocols.a2a import CARD_PATH
from ..scrub import NOBODY, Scrubber
from ..targets import Target
from ..wire.pool import no_tls, verifying_context
from ..wire.urls import join

POLL_S = 0.25  # --wait-for-target: the pause between two attempts on a target that is not up yet
SAY_EVERY_S = 5.0  # --wait-for-target: how often the wait says what it is waiting for
INFLATE_SLICE = 1 << 20  # bytes zlib may produce per call: the check's memory stays near this


@dataclass
class Preflight:
    fatal: str | None = None  # why the run cannot run; None: every target answered
    notes: list[str] = field(default_factory=list)  # what the check saw that the scenarios will judge
    waited: float = 0.0  # seconds spent before the targets answered (with --wait-for-target)


@dataclass
class _Fetch:
    status: int | None = None
    raw_bytes: int = 0
    decoded_bytes: int = 0
    error: str | None = None  # no answer: why
    note: str | None = None  # an answer past a bound: what


def card_url(base: str) -> str:
    """The card's URL under an A2A base URL that may carry a query (`http://h:1?api_key=K`): the path
    is appended to the base's path and the query kept, as the drivers do."""
    return join(base, CARD_PATH)


def check_targets(target: Target, *, wait: float = 0.0, scrubber: Scrubber = NOBODY,
                  say: Callable[[str], None] | None = None) -> Preflight:
    """Check the A2A target's card and the progress URL, retrying for `wait` seconds while none answers; every
    SAY_EVERY_S seconds of waiting, `say` is told what is waited for and why it has not answered yet."""
    checks = []
    if target.a2a_url:
        checks.append((card_url(target.a2a_url), False))
    if target.progress_url:
        checks.append((target.progress_url, True))
    started = time.monotonic()
    deadline = started + wait
    result = Preflight()
    said = started
    for url, status_only in checks:
        shown = scrubber.url(url)
        while True:
            fetch = asyncio.run(_fetch(url, target, status_only=status_only))
            if fetch.error is None or time.monotonic() + POLL_S > deadline:
                break
            if say is not None and time.monotonic() - said >= SAY_EVERY_S:
                said = time.monotonic()
                why = fetch.error.replace("{url}", shown)
                say(scrubber.text(f"still waiting, {said - started:.0f} s of {wait:g} s (--wait-for-target): {why}"))
            time.sleep(POLL_S)
        if fetch.error is not None:
            waited = f" (waited {wait:g} s with --wait-for-target)" if wait else ""
            result.fatal = scrubber.text(fetch.error.replace("{url}", shown) + waited)
            return result
        if fetch.note:
            result.notes.append(scrubber.text(f"{shown}: {fetch.note}"))
    result.waited = time.monotonic() - started
    return result


async def _fetch(url: str, target: Target, *, status_only: bool) -> _Fetch:
    """GET `url` within `target.timeout` seconds in all. `error` (with `{url}` to fill in) when nothing
    answered; otherwise the status and, unless `status_only`, the body's size read within the bounds."""
    out = _Fetch()
    headers = {**target.headers, "Accept-Encoding": "identity"}
    try:
        async with asyncio.timeout(target.timeout):  # the one bound: connect, answer and body together
            # the process's one TLS context (wire/pool.py), none built for a plain-HTTP URL
            verify = verifying_context() if httpx.URL(url).scheme == "https" else no_tls()
            async with httpx.AsyncClient(timeout=None, follow_redirects=False, verify=verify) as client:
                async with client.stream("GET", url, headers=headers) as response:
                    out.status = response.status_code
                    if response.is_redirect:  # not followed: it may lead elsewhere, credentials and all
                        out.note = (f"answered {out.status} with Location {response.headers.get('location', '')!r} "
                                    "(not followed; the scenarios will judge it)")
                    elif not status_only:
                        await _read_body(response, target, out)
    except TimeoutError:
        if out.status is None:
            out.error = f"{{url}} gave no answer within {target.timeout:g} s (--timeout)"
        else:
            out.note = (f"the card was still arriving after {target.timeout:g} s ({out.raw_bytes} bytes read); "
                        "the scenarios will judge it")
    except httpx.HTTPError as exc:
        why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        if out.status is None:
            out.error = f"cannot reach {{url}} ({why})"
        else:
            out.note = f"the card's body broke off after {out.raw_bytes} bytes ({why})"
    return out


async def _read_body(response: httpx.Response, target: Target, out: _Fetch) -> None:
    """Read the body's raw bytes up to the size cap, inflating a compressed one up to the decompressed
    cap without keeping it: the check needs the sizes, the scenarios fetch the card again."""
    encoding = response.headers.get("content-encoding", "").strip().lower()
    inflater = _inflater(encoding)
    async for part in response.aiter_raw():
        out.raw_bytes += len(part)
        if out.raw_bytes > target.max_body_bytes:
            out.note = limits.MAX_BODY.reached(f"a card of more than {limits.show(target.max_body_bytes, 'bytes')}",
                                               target.max_body_bytes)
            return
        if inflater is None:
            continue
        try:
            pending = part
            while pending:
                room = target.max_decompressed_bytes - out.decoded_bytes
                out.decoded_bytes += len(inflater.decompress(pending, min(INFLATE_SLICE, room + 1)))
                if out.decoded_bytes > target.max_decompressed_bytes:
                    figure = (f"{encoding}: a card of {limits.show(out.raw_bytes, 'bytes')} read that decodes to "
                              f"more than {limits.show(target.max_decompressed_bytes, 'bytes')}")
                    out.note = limits.MAX_DECOMPRESSED.reached(figure, target.max_decompressed_bytes)
                    return
                pending = inflater.unconsumed_tail
        except zlib.error as exc:
            out.note = f"the card's {encoding} body is corrupt ({exc}); the scenarios will judge it"
            return


def _inflater(encoding: str):
    if encoding in ("gzip", "x-gzip"):
        return zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":  # zlib-wrapped, as RFC 9110 says (a gzip header is accepted too)
        return zlib.decompressobj(32 + zlib.MAX_WBITS)
    return None
