"""Wall time and peak memory of `streamcert diff` (capture_diff.diff_logs) as streams grow: two captures of
one scenario whose stream holds N artifact chunks, the new one with a few chunks changed, one dropped and one
added. The time per frame should stay about flat as N grows (linear in frames), where it grew with N before.

    python bench/diff.py [--frames 10000 40000 100000] [--through-files]

With --through-files the captures are written as cassettes and read back, as `streamcert diff OLD NEW` does.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "common"))

from logs import artifact_update, frame_log, sse, status_update, stream_task  # noqa: E402

from streamcert.framelog import FrameLog  # noqa: E402
from streamcert.recordings.capture_diff import diff_logs  # noqa: E402

MIB = 1024 * 1024


def capture(frames: int, changed: bool) -> FrameLog:
    chunks = [artifact_update("a1", text=f"token {n}", append=n > 0) for n in range(frames)]
    if changed:
        for n in range(frames // 7, frames, max(1, frames // 5)):
            chunks[n] = artifact_update("a1", text=f"changed {n}", append=True)
        del chunks[frames // 2]
        chunks.insert(frames // 3, artifact_update("a1", text="added", append=True))
    items = [stream_task(), status_update("TASK_STATE_WORKING"), *chunks, status_update("TASK_STATE_COMPLETED")]
    return frame_log(sse("stream", items, dt=0.001), scenario="stream-basic")


def one(frames: int, through_files: bool) -> dict[str, float]:
    """One measure, in this process (a fresh one per size: its peak memory is its own)."""
    old, new = capture(frames, False), capture(frames, True)
    with tempfile.TemporaryDirectory() as folder:
        if through_files:
            old = FrameLog.load(old.save(Path(folder) / "old.yaml"))
            new = FrameLog.load(new.save(Path(folder) / "new.yaml"))
        started = time.perf_counter()
        diff = diff_logs(old, new)
        lines = diff.lines()
        seconds = time.perf_counter() - started
    with open("/proc/self/status") as status:
        peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
    return {"seconds": seconds, "peak_mib": peak, "differences": diff.count, "lines": len(lines)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, nargs="+", default=[10_000, 40_000, 100_000])
    parser.add_argument("--through-files", action="store_true")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.through_files)))
        return 0
    print("| frames | wall s (diff only) | µs per frame | peak MiB (the whole process) | differences |")
    print("| --- | --- | --- | --- | --- |")
    for frames in args.frames:
        cmd = [sys.executable, __file__, "--one", str(frames)] + (["--through-files"] if args.through_files else [])
        got = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        print(f"| {frames} | {got['seconds']:.2f} | {got['seconds'] / frames * 1e6:.0f} | {got['peak_mib']:.0f} | "
              f"{got['differences']} ({got['lines']} lines) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
