"""The meta-test's pool (fault_runs.py) keeps its own promises: a run plays in a player process and its results or
its error come back, a run past its bound is its error (the player replaced, never a hang), and the runs of an
xdist worker that died are taken back even while that worker is a zombie nobody has reaped yet."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from fault_runs import Player, Pool, Run
from processes import ended_within

from streamcert.outcomes import Outcome


class _Short(Run):
    """A run bounded at half a second."""

    bound_s = 0.5


def test_a_run_plays_in_a_player_process_and_its_results_or_its_error_come_back(tmp_path):
    player = Player(tmp_path)
    try:
        lost = player.play(Run("lost", "acp", None, ("no-such-scenario",)))
        played = player.play(Run("played", "acp", None, ("acp-v1-capability",)))
    finally:
        player.close()
    assert "no-such-scenario" in lost["error"]
    assert lost["pid"] == played["pid"] != os.getpid()  # one player, reused, not this process
    assert played["results"] and {outcome for outcome, _ in played["results"].values()} == {Outcome.PASS.value}


def test_a_run_past_its_bound_is_its_error_and_the_next_run_gets_a_new_player(tmp_path):
    player = Player(tmp_path)
    try:
        # a stream that never closes is waited for until the stream limit (5 s): never done within the bound
        cut = player.play(_Short("cut", "server", "no-close", ("stream-basic",)))
        after = player.play(Run("after", "acp", None, ("acp-v1-capability",)))
    finally:
        player.close()
    assert cut["error"].startswith("did not finish within 0 s"), cut["error"][:300]
    assert "results" in after


def test_the_runs_of_a_worker_that_died_are_taken_back_while_it_is_still_a_zombie(tmp_path):
    run = Run("claimed", "acp", None, ("acp-v1-capability",))
    pool = Pool([run], tmp_path, 1)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        # exited and not reaped (never waited for until the end): a zombie, which kill(pid, 0) still finds
        assert ended_within(dead.pid, 30.0) and Path(f"/proc/{dead.pid}").exists(), "the child never exited"
        (tmp_path / "claimed.claim").write_text(str(dead.pid))
        assert pool._abandoned(run) and not (tmp_path / "claimed.claim").exists()
        (tmp_path / "claimed.claim").write_text(str(os.getppid()))  # a live worker keeps its claim
        assert not pool._abandoned(run) and (tmp_path / "claimed.claim").exists()
    finally:
        dead.wait()
