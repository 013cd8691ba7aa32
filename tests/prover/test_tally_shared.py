"""`prove --jobs N` stopped part-way counts the paths its forked workers finished: the
tally's count lives in memory the workers share, so the partial verdict's "after k of n
action paths" includes theirs."""
from __future__ import annotations

import os

from solver.prover import pool
from solver.prover.result import Tally


def test_paths_checked_in_forked_workers_count_in_the_parent():
    tally = Tally(stage="induction", total=7)

    def work(share, say=None):
        for _ in share:
            tally.add()
        return os.getpid()

    pids = pool.forked(work, pool.pulled(list(range(7)), 2), lambda m, **k: None)
    assert len(pids) == 2 and os.getpid() not in pids
    assert tally.done == 7
    assert "after 7 of 7 action paths" in tally.where()
    tally.done = 0            # a new Houdini round starts its count afresh
    assert tally.done == 0


def test_a_worker_stopped_part_way_keeps_its_count():
    """A worker that is interrupted after some paths: those paths still count."""
    tally = Tally(stage="induction", total=4)

    def work(share, say=None):
        for i in share:
            if i == 3:
                raise KeyboardInterrupt
            tally.add()
        return None

    try:
        pool.forked(work, [[0, 1, 2, 3]], lambda m, **k: None)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interrupt was not passed on")
    assert tally.done == 3


def test_a_proof_stopped_while_its_paths_are_built_says_so():
    t = Tally(stage="induction", round=1)
    assert t.where() == "during the inductive step (round 1), building its action paths"
    t.total = 430
    assert t.where() == "during the inductive step (round 1), after 0 of 430 action paths"
