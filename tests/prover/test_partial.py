"""A proof stopped part-way (Ctrl-C, the time limit) keeps what it established: "holds up to
depth k" for the depths completed, "not decided" otherwise, never "inductive" for a step that
did not finish; on the toy counter game (tests/fixtures/toy.rules) and, through the command
line, on les-5-tours."""
from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, run_cli
from solver.engine.game import load_path
from solver.lang.errors import TimeUp
from solver.prover.options import ProveOptions
from solver.prover.prove import prove
from solver.prover.result import Tally

DEPTH = 4
TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def toy():
    return load_path(FIXTURES / "toy.rules")


def _stop_in_induction(exc):
    """A progress callable that raises ``exc`` once the inductive step checks its paths."""
    def say(text, done=None, total=None, note=""):
        if text.startswith("induction: action paths checked"):
            raise exc
    say.takes_counts = True
    return say


def _verdicts(results):
    return {r.name: (r.status, r.depth) for r in results}


def test_ctrl_c_in_the_step_leaves_every_invariant_undecided(toy):
    res = prove(toy, ProveOptions(DEPTH, TIMEOUT_MS, keep_partial=True),
                _stop_in_induction(KeyboardInterrupt()))
    assert {r.status for r in res} == {"undecided"}
    assert all(r.stopped == "interrupted" for r in res)
    even = next(r for r in res if r.name == "even")
    assert even.headline() == "not decided"
    assert even.detail.startswith("stopped (interrupted) during the inductive step (round 1), "
                                  "after 0 of ") and "holds in the initial state" in even.detail
    assert even.as_json()["stopped"] == "interrupted"


def test_without_keep_partial_ctrl_c_propagates(toy):
    with pytest.raises(KeyboardInterrupt):
        prove(toy, ProveOptions(DEPTH, TIMEOUT_MS), _stop_in_induction(KeyboardInterrupt()))


def test_against_the_clock_bounded_model_checking_comes_first_and_is_kept(toy):
    """Stopped in the step, the depths bounded model checking completed stand: the false
    invariants are refuted, the others hold up to the depth, none is called inductive."""
    res = prove(toy, ProveOptions(DEPTH, TIMEOUT_MS, time_limit_s=600, keep_partial=True),
                _stop_in_induction(TimeUp(600)))
    got = _verdicts(res)
    assert got == {"even": ("holds", DEPTH), "not_eight": ("holds", DEPTH),
                   "small": ("refuted", 3), "m_grows": ("holds", DEPTH),
                   "n_grows": ("refuted", 2)}
    for r in res:
        if r.status == "holds":
            assert r.stopped == "time limit of 600 s" and "not proved inductive" in r.detail


def test_a_time_limit_not_reached_changes_no_verdict(toy):
    """The same verdicts (a refutation may come shorter: the depths are tried in turn)."""
    free = _verdicts(prove(toy, ProveOptions(DEPTH, TIMEOUT_MS)))
    timed = prove(toy, ProveOptions(DEPTH, TIMEOUT_MS, time_limit_s=600, keep_partial=True))
    assert not any(r.stopped for r in timed)
    for name, (status, depth) in _verdicts(timed).items():
        assert status == free[name][0]
        assert depth == free[name][1] or status == "refuted"
    assert free["even"] == ("inductive", None)


def test_prove_les_5_tours_under_a_time_limit_gives_a_partial_verdict():
    # --no-store: the stored proof's seed would answer every path at once.
    r = run_cli("prove", "les-5-tours", "--depth", "1", "--time-limit", "10", "--json",
                "--no-store")
    assert r.returncode == 4, r.stderr
    out = json.loads(r.stdout)
    assert out["stopped"] == "time limit of 10 s" and out["depth"] == 1
    assert out["params"] == {"players": 2}
    for res in out["results"]:
        assert (res["status"], res["depth"]) in {("holds", 1), ("undecided", None)}, res
        assert res["stopped"] == "time limit of 10 s"


HARD = """
import sys, time, z3
from solver.engine.symbolic import run_check
x = [z3.Int(f"x{i}") for i in range(40)]
s = z3.SolverFor("QF_NIA")
s.add(z3.Sum([v * v * v for v in x]) == 2**60 + 7, *[v > 1 for v in x])
print("checking", flush=True)
try:
    r = run_check(s)
    print("answered", r, s.reason_unknown(), flush=True)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
"""


def test_a_ctrl_c_that_z3_catches_is_raised_again():
    """z3 catches SIGINT during a check and answers "unknown": the prover's checks raise
    KeyboardInterrupt instead, or a Ctrl-C would only skip one query."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from conftest import ROOT
    p = subprocess.Popen([sys.executable, "-c", HARD], cwd=ROOT, text=True,
                         stdout=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.stdout.readline() == "checking\n"
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    assert out == "KeyboardInterrupt\n"


def test_ctrl_c_during_prove_prints_the_partial_verdicts():
    from support.interrupt import interrupt
    code, out, err = interrupt(["prove", "les-5-tours", "--depth", "1", "--json", "--progress",
                                "--no-store"], "induction: building the symbolic step")
    assert code == 130, err
    got = json.loads(out)
    assert got["stopped"] == "interrupted"
    assert {r["status"] for r in got["results"]} == {"undecided"}


def test_a_proof_stopped_while_its_paths_are_built_says_so():
    t = Tally(stage="induction", round=1)
    assert t.where() == "during the inductive step (round 1), building its action paths"
    t.total = 430
    assert t.where() == "during the inductive step (round 1), after 0 of 430 action paths"
    t.add(3)
    assert t.where() == "during the inductive step (round 1), after 3 of 430 action paths"
    t.done = 0            # a new Houdini round starts its count afresh; the run's stays
    assert (t.done, t.checked) == (0, 3)
