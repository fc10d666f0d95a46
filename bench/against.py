"""Whether `streamcert run --against` is deterministic on an unchanged implementation: each scenario is
recorded once from the embedded reference (written and read back as a cassette, as `--record` does), then
played again `--runs` times, each against a reference process of its own (as a later `streamcert run` is:
its hash seed, so the order it iterates a protobuf map in, is another), and compared with its recording in
the terms of `--against` (recordings/capture_diff.py, the default timing tolerance). An unchanged implementation must
show 0 regressions.

    python bench/against.py [--runs 20] [--binding jsonrpc --binding grpc] [SCENARIO …]

The scenarios default to those whose recordings carry what a run may legally change: member order
(`ix-answer-forms` echoes a JSON object; over gRPC its Struct comes in no fixed order), fresh ids, paced
updates. Exit code 1 when a comparison differed (its lines are printed).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

from streamcert import run_options
from streamcert.drivers import run_scenario
from streamcert.framelog import FrameLog
from streamcert.recordings.capture_diff import DEFAULT_TOLERANCE_S, diff_logs
from streamcert.recordings.cassette import path_for
from streamcert.reference.process import ReferenceProcess
from streamcert.targets import Target

SCENARIOS = ("ix-answer-forms", "stream-basic", "list-tasks", "ix-question")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", default=list(SCENARIOS))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--binding", action="append", choices=("jsonrpc", "http-json", "grpc"))
    args = parser.parse_args(argv)
    bindings = args.binding or ["jsonrpc", "grpc"]
    recorded: dict[tuple[str, str], FrameLog] = {}
    found: dict[tuple[str, str], int] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for run in range(args.runs + 1):  # run 0 records
            with reference() as target:
                for binding in bindings:
                    bound = dataclasses.replace(target, binding=binding)
                    for scenario in args.scenarios:
                        log, key = run_scenario(scenario, bound), (scenario, binding)
                        if not run:
                            recorded[key] = FrameLog.load(log.save(path_for(folder, scenario, binding)))
                            continue
                        diff = diff_logs(recorded[key], log, DEFAULT_TOLERANCE_S)
                        found[key] = found.get(key, 0) + bool(diff.count)
                        if diff.count:
                            print(f"{scenario}@{binding} run {run}:", *diff.lines()[:20], sep="\n  ", flush=True)
    for (scenario, binding), count in found.items():
        print(f"{scenario}@{binding}: {count} of {args.runs} comparisons differed")
    print(f"{sum(found.values())} regressions in {args.runs * len(found)} comparisons "
          f"({time.perf_counter() - started:.0f} s)")
    return 1 if any(found.values()) else 0


@contextmanager
def reference() -> Iterator[Target]:
    """The embedded reference in a process of its own, as a run starts it."""
    process = ReferenceProcess()
    process.start()
    try:
        yield run_options.target_of(process.targets())
    finally:
        process.stop()


if __name__ == "__main__":
    sys.exit(main())
