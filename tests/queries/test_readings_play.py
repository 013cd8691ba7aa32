"""Seeded random playouts of every game of spec/ under every option of every reading: a state
that is not terminal always has a legal move, and every invariant holds at every state.

The stored proofs and the other playout tests use the default readings only.  A reading's other
option changes rules, and may leave a rule set with no way on: Tours de pouvoir under
demolition_order:anytime once let a demolition decline a rebuild offer after the last card was
built, with nothing left to end the build (tests/games/tours_de_pouvoir/test_pouvoir.py)."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from conftest import ROOT, holds, walk
from solver.lang.sources import read_source
from solver.engine.game import load_game

# Games per option and moves per game at most (the dead end found came after 42 moves); the
# board games' moves cost more.
BUDGET = {"torres": (1, 150), "towers": (1, 30)}
DEFAULT_BUDGET = (2, 400)


def _options():
    """(game, option) for every option of every reading; an expansion plays its base's readings
    too when it changes rules of the base's kind (a card-game expansion), else only its own."""
    out = []
    for path in sorted((ROOT / "spec").glob("*.rules")):
        game = Path(path).stem
        g = load_game(game, (), ())
        base = read_source(path).base
        own = {r.name for r in g.p.readings}
        if base and game.startswith("torres"):
            own -= {r.name for r in load_game(base, (), ()).p.readings}
        for r in g.p.readings:
            if r.name in own:
                out.extend((game, f"{r.name}:{name}") for name, _ in r.options)
    return out


OPTIONS = _options()


def test_every_reading_is_played():
    assert {g for g, _ in OPTIONS} >= {"les-5-tours", "tours-de-pouvoir", "clock-towers",
                                       "torres", "towers"}
    assert ("tours-de-pouvoir", "demolition_order:anytime") in OPTIONS


@pytest.mark.parametrize("game, option", OPTIONS, ids=[f"{g}-{o}" for g, o in OPTIONS])
def test_no_dead_end_and_invariants_hold_under_each_option(game, option):
    g = load_game(game, (option,), ())
    invs = [i for i in g.p.invariants if not i.transition]

    def invariants_hold(m, st):
        broken = [i.name for i in invs if not holds(g, i, st)]
        assert not broken, f"after {m.label(g)}: {broken}"
    seeds, moves = BUDGET.get(game.split("-")[0], DEFAULT_BUDGET)
    for seed in range(seeds):
        walk(g, random.Random(seed), moves, invariants_hold)     # raises at a dead end
