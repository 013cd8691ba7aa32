"""An exhaustive puzzle search (`answer x = runs`, `count`, `all`) says how far it is and,
stopped by Ctrl-C or the time limit, keeps what it found with the scope it covers."""
from __future__ import annotations

import json

import pytest

from solver.lang.errors import TimeUp
from solver.lang.resources import REPO
from solver.queries.puzzles import solve
from solver.queries.puzzlesearch import Stopped

PLACEMENTS = json.loads((REPO / "examples" / "puzzles" / "towers-placements.json").read_text())
GATES = json.loads((REPO / "examples" / "puzzles" / "torres-gates.json").read_text())


class StopAt:
    """A progress printer that hears every count and stops the work at the ``n``-th line
    whose text starts with ``what``."""

    takes_counts = True

    def __init__(self, what: str, n: int, stop=None):
        self.what, self.n, self.lines = what, n, []
        self.stop = stop or TimeUp(3)

    def __call__(self, text, done=None, total=None, note=""):
        self.lines.append((text, done, total, note))
        if text.startswith(self.what) and len([x for x in self.lines
                                               if x[0].startswith(self.what)]) == self.n:
            raise self.stop


@pytest.fixture(scope="module")
def all_runs():
    return solve(PLACEMENTS, progress=StopAt("nothing", 0))


def test_runs_say_how_far_they_are(all_runs):
    p = StopAt("nothing", 0)
    solve(PLACEMENTS, progress=p)
    counts = [x for x in p.lines if x[0].startswith("runs: first moves explored")]
    assert counts and counts[0][2] == counts[-1][2] > 1
    assert [x[1] for x in counts] == list(range(counts[0][2]))


def test_runs_stopped_keep_the_runs_found(all_runs):
    with pytest.raises(Stopped) as e:
        solve(PLACEMENTS, progress=StopAt("runs: first moves explored", 40))
    ans = e.value.answer
    assert ans["stopped"] == "time limit of 3 s"
    assert "39 of" in ans["scope"] and "at least" in ans["scope"]
    assert 0 < ans["count"] < all_runs["count"] and ans["count"] == len(ans["placements"])
    assert all(r in all_runs["placements"] for r in ans["placements"])


def test_an_interrupted_all_search_says_what_it_covers():
    """Stopped while it explores the reachable states (a `using` that pins nothing), no choice
    is checked yet; stopped among the choices (`destinations` pins the move to the choice),
    the choices checked keep their answers."""
    squares = {k: v for k, v in GATES.items() if k != "piece"} | {"ask": "block-squares"}
    with pytest.raises(Stopped) as e:
        solve(squares, progress=StopAt("states reachable", 1, KeyboardInterrupt()))
    ans = e.value.answer
    assert ans["stopped"] == "interrupted" and ans["squares"] == []
    assert "no choice checked" in ans["scope"]
    full = solve(GATES)["destinations"]
    with pytest.raises(Stopped) as e:
        solve(GATES, progress=StopAt("choices checked", 12, KeyboardInterrupt()))
    ans = e.value.answer
    assert ans["stopped"] == "interrupted" and "11 of 64 choices checked" in ans["scope"]
    assert all(d in full for d in ans["destinations"])


def test_a_branch_and_bound_stopped_keeps_its_best_run():
    golden = json.loads((REPO / "tests" / "golden" / "torres" / "best_turn_small.json")
                        .read_text())
    puzzle = golden["input"]
    full = solve(puzzle)
    with pytest.raises(Stopped) as e:
        solve(puzzle, progress=StopAt("found", 1))
    ans = e.value.answer
    assert ans["stopped"] == "time limit of 3 s" and ans["score"] == "unknown"
    assert ans["best_found"]["score"] <= full["score"] <= ans["at_most"]["score"]
    assert "the optimum is at most" in ans["scope"]
