"""A flood judged end to end: the suite's A2A stream scenario against a bench server that streams
the Task, 100 000 artifactUpdate chunks and the COMPLETED status as fast as it can.

Drives `stream-basic` with `run_scenario` (the server ignores the script and floods), then judges
the log with every requirement of the scenario, timed as a run judges it (no profiler). Prints the
stream's own arrival time (first to last byte), the driving time, the judging time, the total and
total / arrival (goal < 3×), and the peak resident memory of this process. Then it drives the
scenario again and judges that log under cProfile, to show the rules and functions that took the
time (cProfile slows them about twofold). Judging is capped: past --cap seconds it stops and says
"not judged within N s". The last line also gives the judging time against an arrival of 5 s, the
pace of the hostile case of issue 12 (the bench server itself floods as fast as the socket takes).

    python bench/flood.py [--chunks 100000] [--chunk-bytes 16] [--cap 120] [--no-profile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import signal
import sys
import time

from _common import bench_server

from streamcert.catalogue import load_scenario
from streamcert.drivers import Target, run_scenario
from streamcert.framelog import FrameLog
from streamcert.outcomes import Outcome
from streamcert.rules import RuleContext, judge
from streamcert.rules.engine import _REGISTRY  # read only: which function decides which requirement

SCENARIO = "stream-basic"


class _Capped(BaseException):
    """Raised by the alarm; not an Exception, so the engine's net for rule faults lets it through."""


def _on_alarm(signum, frame):
    raise _Capped()


def rule_times(profile: cProfile.Profile) -> list[tuple[float, str, str]]:
    """(cumulative seconds, function, requirement ids) of every registered rule that ran, slowest first."""
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    by_code = {(k[0], k[1], k[2]): v for k, v in stats.items()}
    seen, out = set(), []
    for rules in _REGISTRY.values():
        for entry in rules:
            code = entry.fn.__code__
            key = (code.co_filename, code.co_firstlineno, code.co_name)
            if key in seen or key not in by_code:
                continue
            seen.add(key)
            out.append((by_code[key][3], entry.name, ",".join(entry.req_ids)))
    return sorted(out, reverse=True)


def drive(url: str, stream_limit: float) -> tuple[FrameLog, float]:
    target = Target(a2a_url=url, stream_limit=stream_limit, timeout=30.0)
    t0 = time.monotonic()
    log = run_scenario(SCENARIO, target)
    return log, time.monotonic() - t0


def timed_judge(log: FrameLog, cap: float, profile: cProfile.Profile | None = None) -> tuple[list, float | None]:
    """(findings, seconds) of judging `log`; seconds None when the cap stopped it."""
    scenario = load_scenario(SCENARIO)
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, cap)
    t0 = time.monotonic()
    if profile is not None:
        profile.enable()
    try:
        findings = judge(log, scenario.requirements, RuleContext(scenario=scenario))
    except _Capped:
        return [], None
    finally:
        if profile is not None:
            profile.disable()
        signal.setitimer(signal.ITIMER_REAL, 0)
    return findings, time.monotonic() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--chunk-bytes", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=0.0,
                        help="the bench server spreads the chunks over this long (issue 12's case: 5)")
    parser.add_argument("--cap", type=float, default=120.0, help="seconds judging may take before it is stopped")
    parser.add_argument("--stream-limit", type=float, default=120.0, help="seconds the stream may stay open")
    parser.add_argument("--no-profile", action="store_true", help="skip the second, profiled drive and judging")
    args = parser.parse_args()
    with bench_server(args.chunks, args.chunk_bytes, lifetime=args.stream_limit * 2 + 60, seconds=args.seconds) as url:
        log, driving = drive(url, args.stream_limit)
        stream = log.get("stream")
        if stream is None or not stream.chunks:
            print(f"the stream did not arrive: {stream and stream.error}")
            return 1
        arrival = stream.chunks[-1].t - stream.chunks[0].t
        print(f"stream: {len(stream.events)} events, {sum(c.length for c in stream.chunks) / 1e6:.1f} MB in "
              f"{len(stream.chunks)} chunks, end {stream.end}; arrival (first to last byte) {arrival:.2f} s; "
              f"driving (card, stream, 3 GetTask) {driving:.2f} s")
        findings, judging = timed_judge(log, args.cap)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        if judging is None:
            print(f"judging: not judged within {args.cap:.0f} s (stopped)")
        else:
            counts = {o.value: sum(f.outcome == o for f in findings) for o in Outcome}
            print(f"judging: {judging:.2f} s, {len(findings)} findings "
                  f"({', '.join(f'{k} {v}' for k, v in counts.items() if v)}); peak RSS of this process "
                  f"{peak:.0f} MiB")
            for f in findings:
                if f.outcome not in (Outcome.PASS, Outcome.UNSUPPORTED):
                    print(f"  {f.req_id} {f.outcome.value}: {f.message[:110]}")
        del log, stream, findings
        if not args.no_profile:
            profile = cProfile.Profile()
            again, _ = drive(url, args.stream_limit)
            _, profiled = timed_judge(again, args.cap, profile)
            shown = "stopped" if profiled is None else f"{profiled:.2f} s"
            print(f"the same judged again under cProfile ({shown}); rules by cumulative time:")
            for seconds, name, ids in rule_times(profile)[:8]:
                print(f"  {seconds:8.2f} s  {name:<28} {ids}")
            print("top functions by own time (cProfile):")
            stats = pstats.Stats(profile)
            top = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:6]  # type: ignore[attr-defined]
            for (path, line, func), (_, calls, own, cum, _) in top:
                print(f"  {own:8.2f} s own {cum:8.2f} s cum {calls:>10} calls  {func} ({path.rsplit('/', 2)[-1]}:{line})")
    if judging is None:
        print(f"arrival {arrival:.2f} s, judging > {args.cap:.0f} s (capped), total/arrival > "
              f"{(driving + args.cap) / arrival:.1f}x (goal < 3x) — at least: judging was stopped")
        return 0
    total = driving + judging
    print(f"arrival {arrival:.2f} s, judging {judging:.2f} s, total {total:.2f} s, "
          f"total/arrival {total / arrival if arrival else float('inf'):.1f}x (goal < 3x); "
          f"judging/5 s arrival {judging / 5:.2f}x; peak RSS {peak:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
