"""A query's time-out holds however the time is spent: in one objective that takes seconds
(the interpreter's search), or in building the z3 formula (merging the states of an unrolled
layer).  Both were found by the fuzzer running 10 s past `--timeout 1`."""
from __future__ import annotations

import itertools

import pytest
import z3

from solver.engine import symbolic
from solver.engine.symbolic import Unknown, _merge_states
from solver.lang.types import IntT, RecordT
from solver.queries import puzzlesearch
from solver.queries.puzzles import solve

# Towers: with no tower yet, every block of the roll is tried once, and each try counts the
# stable placements of a block: a handful of states, each a long evaluation.
HARDEST = {"game": "towers", "ask": "hardest-block", "blocks": [],
           "variants": ["floating:falls"]}


def test_a_search_of_few_states_still_stops_at_its_deadline(monkeypatch):
    ticks = itertools.count()
    monkeypatch.setattr(puzzlesearch, "_clock", lambda: 1000.0 * next(ticks))  # 1000 s a call
    got = solve(HARDEST, "search", timeout_ms=50_000)
    assert got["fewest"] == "unknown" and got["choice"] is None


def test_merging_the_states_of_a_layer_looks_at_the_deadline():
    t = RecordT("S", (("a", IntT(0, 9)), ("b", IntT(0, 9))))
    members = [(z3.Bool("c0"), (1, 2)), (z3.Bool("c1"), (3, 4))]
    cons: list = []
    merged = _merge_states(t, members, "m", cons)
    assert all(z3.is_int(v) for v in merged) and len(cons) == 4
    with pytest.raises(Unknown):
        _merge_states(t, members, "m", [], deadline=symbolic.time.monotonic() - 1, depth=3)
