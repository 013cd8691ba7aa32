"""Differential testing of the one evaluator's two domains on les-5-tours: for generated
concrete states, the interpreter's verdict on every action instance (legal or refused), its
successor state, and score/winner equal what the Z3 terms say once the symbolic state is
replaced by the concrete one.

The symbolic side is built ONCE per module: ``symbolic.branches`` over a fully symbolic state
Z (several seconds).  Per generated state S every leaf variable of Z is substituted by S's leaf
and the terms are simplified to constants.  All terms are substituted in one go, as the
arguments of one uninterpreted function, so that shared subterms are rewritten once."""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import walk
from solver.lang.types import finite
from support.differential import Sym, compare, states


@pytest.fixture(scope="module")
def sym(game2):
    return Sym(game2)


@pytest.fixture(scope="module")
def sym4(game4):
    return Sym(game4)


def test_symbolic_state_covers_every_action(sym):
    """Every action of the spec has branches, and the branch instances cover all parameters."""
    names = {b.action for b in sym.branches}
    # take_random exists only under the reading market_choice:random: its guard folds to false.
    assert names == {a.name for a in sym.game.actions} - {"take_random"}
    card_t = sym.game.p.types["Card"]
    assert {b.params for b in sym.branches if b.action == "draw"} == \
        {(c,) for c in finite(card_t).values}
    assert {b.params for b in sym.branches if b.action == "bid"} == {(n,) for n in range(6)}


def test_initial_state(sym):
    counts = compare(sym, sym.game.initial())
    assert counts["legal"] == 80          # one draw per card of the 2-player deck


@pytest.mark.parametrize("seed", [1, 2])
def test_states_along_a_playout(sym, seed):
    """Six states spread over a whole random game (all phases, both players), and the end."""
    game = sym.game
    rng = random.Random(seed)
    st_, moves = walk(game, rng, 100_000)
    assert game.is_terminal(st_)
    replay = game.initial()
    seen_legal = 0
    picks = {len(moves) * i // 6 for i in range(6)}
    for k, m in enumerate(moves):
        if k in picks:
            seen_legal += compare(sym, replay)["legal"]
        replay, _ = game.apply(replay, m)
    compare(sym, replay)   # the final state: no move, but the scores
    assert seen_legal > 0


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_generated_states(sym, data):
    S = data.draw(states(sym.game))
    compare(sym, S)


def test_a_building_state_by_hand(sym):
    """The rulebook's building example (anything on an 8, a 9 on anything but a 0...)."""
    game = sym.game
    fi = game.field_index
    ftype = {f.name: f.type for f in game.p.state}
    from solver.lang.codec import from_json
    S = list(game.initial())
    S[fi["phase"]] = ftype["phase"].members.index("building")
    towers = list(S[fi["towers"]])
    towers[0] = from_json(ftype["towers"].val, {"sand": [8], "tree": [3], "candy": [5, 0],
                                                  "scrap": [5]}, "towers")
    S[fi["towers"]] = tuple(towers)
    S[fi["hand"]] = from_json(ftype["hand"], [["sand", 12], ["tree", 9], ["candy", 9],
                                              ["scrap", 7], ["scrap", 4]], "hand")
    S[fi["bids"]] = from_json(ftype["bids"], [[5, 0]], "bids")
    counts = compare(sym, tuple(S))
    # build: sand 12, tree 9, scrap 4; demolish: sand, tree, scrap (not candy: a 0 on top);
    # and undo: the candy 9 can never be placed (its tower has a top), so the rest of the hand
    # cannot be built in any order.
    assert counts["legal"] == 7


# ---- four players: the 110-card deck (doubled cards) and four bidders ------------------------

def test_four_players_initial_and_playout(sym4):
    game = sym4.game
    assert compare(sym4, game.initial())["legal"] == 80   # 80 distinct cards, 30 of them twice
    st_, moves = walk(game, random.Random(5), 100_000)
    replay = game.initial()
    picks = {len(moves) * i // 4 for i in range(1, 4)}
    legal = 0
    for k, m in enumerate(moves):
        if k in picks:
            legal += compare(sym4, replay)["legal"]
        replay, _ = game.apply(replay, m)
    assert replay == st_
    compare(sym4, replay)
    assert legal > 0


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_four_players_generated_states(sym4, data):
    compare(sym4, data.draw(states(sym4.game)))
