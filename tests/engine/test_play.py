"""Seeded random playouts of les-5-tours: deterministic, always ending in the terminal phase,
and every invariant of the spec true at the end (and along the way)."""
from __future__ import annotations

import random

import pytest

from conftest import GAME, holds, walk
from solver.engine.game import load_game

GAMES = 20


def _game(players):
    return load_game(GAME, (), (("players", players),))


def _phase(game, st):
    return game.p.types["Phase"].members[st[game.field_index["phase"]]]


@pytest.mark.parametrize("players", [2, 4])
def test_same_seed_same_game(players):
    game = _game(players)
    a = game.playout(random.Random(11))
    b = game.playout(random.Random(11))
    assert a == b
    c = game.playout(random.Random(12))
    assert c != a


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_twenty_games_end_well(players):
    game = _game(players)
    invs = {i.name: i for i in game.p.invariants if not i.transition}
    deck_size = sum(game.initial()[game.field_index["deck"]])
    assert deck_size == (80 if players <= 3 else 110)
    rng = random.Random(1000 + players)
    lengths = []
    for _ in range(GAMES):
        st, n = game.playout(rng)
        lengths.append(n)
        assert game.is_terminal(st)
        assert _phase(game, st) == "over"
        assert holds(game, invs["whole_deck"], st)
        assert holds(game, invs["legal_towers"], st)
        for name, inv in invs.items():
            assert holds(game, inv, st), name
        # Conservation, counted directly: every card is in exactly one place at the end.
        fi = game.field_index
        towers = st[fi["towers"]]
        in_towers = sum(len(t) for per_player in towers for t in per_player)
        in_bags = sum(sum(st[fi[f]]) for f in ("deck", "market", "discard", "hand"))
        in_piles = sum(sum(p) for p in st[fi["pile"]])
        assert in_towers + in_bags + in_piles == deck_size
    assert len(set(lengths)) > 1, "twenty games of the same length: the seed is not used"


@pytest.mark.parametrize("players,games", [(2, 2), (4, 1)])
def test_invariants_along_a_game(players, games):
    """Every state invariant in every state, and every transition property on every move, of
    a few whole games."""
    game = _game(players)
    invs = [i for i in game.p.invariants if not i.transition]
    trans = [i for i in game.p.invariants if i.transition]
    assert trans, "les-5-tours declares a transition property"
    rng = random.Random(players)
    for _ in range(games):
        st, moves = walk(game, rng, 100_000)
        assert game.is_terminal(st)
        cur = game.initial()
        for m in moves:
            nxt, _ = game.apply(cur, m)
            for inv in trans:
                assert holds(game, inv, nxt, old=cur), (inv.name, m)
            cur = nxt
            for inv in invs:
                assert holds(game, inv, cur), (inv.name, m)
        assert cur == st


def test_walk_matches_playout():
    """The test helper `walk` plays the same game as Game.playout for the same seed."""
    game = _game(3)
    st, n = game.playout(random.Random(5))
    st2, moves = walk(game, random.Random(5), 100_000)
    assert (st2, len(moves)) == (st, n)


def test_scores_at_the_end_are_consistent():
    """score(p) at the end of a game, recomputed by hand from the towers and piles."""
    game = _game(4)
    fi = game.field_index
    score = game.expr("score(p)", {"p": game.p.types["Player"]})[0]
    winner = game.expr("winner(p)", {"p": game.p.types["Player"]})[0]
    rng = random.Random(99)
    for _ in range(5):
        st, _ = game.playout(rng)
        scores = []
        for p in range(4):
            towers = st[fi["towers"]][p]
            pts = sum(2 * len(t) if 0 in t else len(t) for t in towers)
            pts += max(len(t) for t in towers)
            n = sum(st[fi["pile"]][p])
            pts -= n * (n + 1) // 2
            assert score(st, p) == pts
            scores.append(pts)
        assert [p for p in range(4) if winner(st, p)] == \
            [p for p in range(4) if scores[p] == max(scores)]
