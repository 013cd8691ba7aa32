"""Torres, the rulebook's variant with one's own pile of action cards (spec/torres-own-pile.rules):
the example, the shuffled piles (each a permutation of the ten cards of the colour), buying
from the pile (never from a common deck) and whole seeded games."""
from __future__ import annotations

import random

from solver.queries.examples import run_examples
from solver.engine.game import load_game
from solver.lang.types import finite

VARIANT = ("torres-own-pile",)


def test_examples_confirmed():
    res = {r.name: r for r in run_examples("torres", VARIANT)}
    assert res["pile_purchase"].confirmed
    assert res["castle_score"].confirmed       # the base game's examples still hold


def test_piles_are_shuffled_permutations_and_buying_uses_them():
    g = load_game("torres", VARIANT, (("players", 2),))
    fi = g.field_index
    cards = finite(g.p.types["Card"]).values
    orders = set()
    for seed in range(3):
        rng = random.Random(seed)
        st = g.initial()
        while any(
                any(row) for row in st[fi["to_deal"]]):
            moves = g.legal(st)
            assert {m.action for m, _, _ in moves} == {"shuffle"}
            _, st, _ = rng.choice(moves)
        for p in range(2):
            assert sorted(st[fi["pile"]][p]) == sorted(cards)
        orders.add(st[fi["pile"]][0])
        # Play on until a purchase is possible: it is buy_from_pile, never buy.
        for _ in range(400):
            moves = g.legal(st)
            names = {m.action for m, _, _ in moves}
            assert "buy" not in names
            if "buy_from_pile" in names:
                m, st2, _ = next(x for x in moves if x[0].action == "buy_from_pile")
                t = st[fi["turn"]]
                assert len(st2[fi["pile"]][t]) == len(st[fi["pile"]][t]) - 1
                assert sum(st2[fi["fresh"]]) == sum(st[fi["fresh"]]) + 1
                break
            _, st, _ = rng.choice(moves)
        else:
            raise AssertionError("no purchase became possible")
    assert len(orders) > 1      # the seeds shuffle differently


def test_whole_games_end():
    g = load_game("torres", VARIANT, (("players", 3),))
    st, n = g.playout(random.Random(5))
    assert g.is_terminal(st) and n > 20
