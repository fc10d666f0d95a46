"""A flood judged end to end: the suite's A2A stream scenario against a bench server that streams
the Task, 100 000 artifactUpdate chunks and the COMPLETED status as fast as it can.

Drives `stream-basic` with `run_scenario` (the server ignores the script and floods), then judges
the log with every requirement of the scenario, timed as a run judges it (no profiler; the rule modules
imported first, as a run has them before its first scenario). Prints the stream's own arrival time (first
to last byte), the driving time, the judging time against `json.loads` of the same events (goal: judging
at most 3x), the total and total / arrival, and the peak resident memory of this process. Then it drives the
scenario again and judges that log under cProfile, to show the rules and functions that took the time
(cProfile slows them about twofold) and how many times `read_json` ran per event. Then (unless --no-scale)
it judges floods of --sizes events and prints the exponent of judging time in the event count (1.0: linear).
Judging is capped: past --cap seconds it stops and says "not judged within N s". The last line holds the
ratios; it also gives the judging time against an arrival of 5 s, the pace of the hostile case of issue 12
(the bench server itself floods as fast as the socket takes).

    python bench/flood.py [--chunks 100000] [--chunk-bytes 16] [--cap 120] [--no-profile]
                          [--sizes 30000,100000,300000] [--no-scale]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
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
from streamcert.rules import RuleContext, judge, registered_ids
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


STREAM_CAP = 256 * 1024 * 1024  # above the default per-stream size cap: 300 000 events are about 75 MB


def drive(url: str, stream_limit: float) -> tuple[FrameLog, float]:
    target = Target(a2a_url=url, stream_limit=stream_limit, timeout=30.0, max_stream_bytes=STREAM_CAP)
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


def loads_time(log: FrameLog) -> float:
    """Seconds `json.loads` takes over the data of every event of the log's stream (the floor judging is held to):
    the median of three passes, so that one pass slowed by the load beside it does not flatter the ratio."""
    events = [ev.data for ev in log.get("stream").data_events()]
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        for data in events:
            json.loads(data)
        times.append(time.perf_counter() - t0)
    return sorted(times)[1]


def exponent(points: list[tuple[int, float]]) -> float:
    """The slope of log(seconds) against log(events), least squares: 1.0 is linear."""
    xs, ys = [math.log(n) for n, _ in points], [math.log(t) for _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def scale(sizes: list[int], chunk_bytes: int, stream_limit: float, cap: float) -> list[tuple[int, float, float]]:
    """(events, judging seconds, json.loads seconds) of a flood of each size, each in a server of its own."""
    out = []
    for n in sizes:
        with bench_server(n, chunk_bytes, lifetime=stream_limit * 2 + 60) as url:
            log, _ = drive(url, stream_limit)
        _, judging = timed_judge(log, cap)
        if judging is None:
            print(f"  {n} events: not judged within {cap:.0f} s (stopped)")
            break
        out.append((len(log.get("stream").data_events()), judging, loads_time(log)))
        print(f"  {out[-1][0]} events: judging {judging:.2f} s, json.loads {out[-1][2]:.2f} s "
              f"({judging / out[-1][2]:.1f}x)")
        del log
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--chunk-bytes", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=0.0,
                        help="the bench server spreads the chunks over this long (issue 12's case: 5)")
    parser.add_argument("--cap", type=float, default=120.0, help="seconds judging may take before it is stopped")
    parser.add_argument("--stream-limit", type=float, default=120.0, help="seconds the stream may stay open")
    parser.add_argument("--no-profile", action="store_true", help="skip the second, profiled drive and judging")
    parser.add_argument("--sizes", default="30000,100000,300000", help="the flood sizes the exponent is measured on")
    parser.add_argument("--no-scale", action="store_true", help="skip measuring the exponent")
    args = parser.parse_args()
    registered_ids()  # the rule modules imported, as a run has them before its first scenario
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
        loads = loads_time(log)
        if judging is None:
            print(f"judging: not judged within {args.cap:.0f} s (stopped)")
        else:
            counts = {o.value: sum(f.outcome == o for f in findings) for o in Outcome}
            print(f"judging: {judging:.2f} s, {len(findings)} findings "
                  f"({', '.join(f'{k} {v}' for k, v in counts.items() if v)}); json.loads of the same events "
                  f"{loads:.2f} s; peak RSS of this process {peak:.0f} MiB")
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
            reads = sum(v[1] for (path, _, func), v in stats.stats.items()  # type: ignore[attr-defined]
                        if func == "read_json" and path.endswith("framelog.py"))
            events = len(again.get("stream").data_events())
            print(f"read_json {reads} calls for {events} events ({reads / events:.2f} per event)")
            del again
    fitted = None
    if not args.no_scale and judging is not None:
        print(f"judging floods of {args.sizes} events (exponent of judging time in the event count):")
        points = scale([int(n) for n in args.sizes.split(",")], args.chunk_bytes, args.stream_limit, args.cap)
        if len(points) >= 2:
            fitted = exponent([(n, t) for n, t, _ in points])
            print(f"  exponent {fitted:.2f} from {points[0][0]} to {points[-1][0]} events (1.00: linear)")
    if judging is None:
        print(f"arrival {arrival:.2f} s, judging > {args.cap:.0f} s (capped), total/arrival > "
              f"{(driving + args.cap) / arrival:.1f}x (goal < 3x) — at least: judging was stopped")
        return 0
    total = driving + judging
    shown = f"; exponent to {points[-1][0]} events {fitted:.2f}" if fitted is not None else ""
    print(f"arrival {arrival:.2f} s, judging {judging:.2f} s, json.loads {loads:.2f} s, "
          f"judging/json.loads {judging / loads:.1f}x (goal <= 3x), total {total:.2f} s, "
          f"total/arrival {total / arrival if arrival else float('inf'):.1f}x (goal < 3x); "
          f"judging/5 s arrival {judging / 5:.2f}x; peak RSS {peak:.0f} MiB{shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
