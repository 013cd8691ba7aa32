"""The fast paths behind the performance targets, each checked against the plain definition it
replaces: the z3 backend's explicit-state runs (from a concrete start) against brute force and
against the layered unrolling; the interpreter's legal moves against applying every instance."""
from __future__ import annotations

import random

import pytest

import solver.queries.puzzlez3 as puzzlez3
from conftest import golden
from solver.queries.puzzleprep import query_start
from solver.queries.puzzles import prepare, solve
from solver.engine.symbolic import explore

GOLDEN = list(golden("puzzles"))
KEYS = ("feasible", "best_score", "max_take")


def _queries(puzzle: dict):
    """(game, query, start state, env, bound) of each query the puzzle asks."""
    prep = prepare(puzzle)
    for q in prep.puzzle.queries:
        if q.when is not None and q.when not in prep.present:
            continue
        st0, env = query_start(prep, q)
        yield prep.game, q, st0, env, prep.game.compiled(q.within)(st0, env)


@pytest.mark.parametrize("name,puzzle", [(n, p) for n, p, _ in GOLDEN])
def test_explore_lists_every_state_within_the_bound_at_its_distance(name, puzzle):
    for game, q, st0, _, depth in _queries(puzzle):
        using = tuple(q.using) or None
        ex = explore(game, st0, depth, using, budget=10**6)
        # Brute force: the states first reached after exactly k moves, k = 0..depth.
        dist = {st0: 0}
        frontier = [st0]
        for k in range(1, depth + 1):
            nxt = []
            for st in frontier:
                for _, st2, _ in game.legal(st, using):
                    if st2 not in dist:
                        dist[st2] = k
                        nxt.append(st2)
            frontier = nxt
        assert len(ex.states) == len(set(ex.states)) == len(dist), name
        for n, st in enumerate(ex.states):
            assert dist[st] == ex.level[n], name
            for i, m in ex.into[n]:
                assert ex.level[i] == ex.level[n] - 1
                assert game.apply(ex.states[i], m)[0] == st
            if n:
                assert ex.into[n], "a state other than the start has a predecessor"


@pytest.mark.parametrize("name,puzzle,expected", GOLDEN)
def test_z3_explicit_runs_give_the_golden_answers_and_replay(name, puzzle, expected):
    z = solve(puzzle, backend="z3")
    assert {k: z[k] for k in KEYS} == {k: expected[k] for k in KEYS}, name
    assert (z["steps"] is None) == (expected["steps"] is None)


@pytest.mark.parametrize("name", ["needs_demolition", "infeasible_two_demolitions",
                                  "nine_on_anything", "market_empty_hand"])
def test_layered_unrolling_agrees_with_explicit_runs(name, monkeypatch):
    """Past the budget the layered unrolling answers: it must give the same answers."""
    puzzle, expected = next((p, e) for n, p, e in GOLDEN if n == name)
    explicit = solve(puzzle, backend="z3")
    monkeypatch.setattr(puzzlez3, "EXPLICIT_BUDGET", 0)
    layered = solve(puzzle, backend="z3")
    assert {k: layered[k] for k in KEYS} == {k: explicit[k] for k in KEYS} \
        == {k: expected[k] for k in KEYS}


@pytest.mark.parametrize("players,seed", [(2, 1), (4, 2), (5, 3)])
def test_legal_is_every_instance_that_applies(players, seed):
    """Game.legal skips actions whose leading guards fail and checks the rest without
    exceptions: it must list exactly the instances `apply` accepts, in the same order, with
    the same successors and shown items."""
    from solver.engine.game import load_game
    game = load_game("les-5-tours", (), (("players", players),))
    rng = random.Random(seed)
    st = game.initial()
    phases = set()
    for _ in range(600):
        if game.is_terminal(st):
            break
        ref = [(m, st2, shows) for m, st2, shows, refused in game.moves(st) if refused is None]
        assert game.legal(st) == ref
        phases.add(st[game.field_index["phase"]])
        st = ref[rng.randrange(len(ref))][1]
    assert len(phases) >= 4, "the walk saw reveal, bidding, taking and building states"
