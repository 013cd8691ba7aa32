"""Differential testing with the Tours de pouvoir expansion on: for generated states (playout
prefixes, builds in progress with tree cards owed, a rebuild on offer, a sand end chosen), the
interpreter's verdict on every action instance, its successor state and the scores (candy/scary
pairs included) equal what the Z3 terms say.  The machinery is test_differential's."""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import GAME, walk
from solver.lang.codec import from_json
from solver.engine.game import load_game
from support.differential import Sym, compare, states

EXT = "tours-de-pouvoir"


@pytest.fixture(scope="module")
def sym():
    return Sym(load_game(GAME, (EXT,), (("players", 2),)))


@st.composite
def power_states(draw, game):
    """A base-style generated state, then the powers' fields set as a build in progress might
    have them: tree cards owed (with a tree tower to pay them), a rebuild on offer (with a pile),
    an end of the sand tower chosen, tree cards paid."""
    S = list(draw(states(game)))
    fi = game.field_index
    ft = {f.name: f.type for f in game.p.state}
    if draw(st.booleans()):
        S[fi["owed"]] = draw(st.integers(0, 3))
    S[fi["offer"]] = draw(st.booleans())
    S[fi["sand_side"]] = draw(st.integers(0, 2))
    if draw(st.booleans()):
        S[fi["paid"]] = tuple(draw(st.lists(st.integers(1, 15), max_size=2)))
    turn = S[fi["turn"]]
    if draw(st.booleans()):
        towers = [list(t) for t in S[fi["towers"]]]
        tree = ft["towers"].val.key.members.index("tree")
        towers[turn][tree] = tuple(draw(st.lists(st.integers(1, 15), unique=True, max_size=4)
                                        .map(lambda xs: sorted(xs, reverse=True))))
        S[fi["towers"]] = tuple(tuple(t) for t in towers)
    if draw(st.booleans()):
        piles = list(S[fi["pile"]])
        cards = draw(st.lists(st.tuples(st.sampled_from(["candy", "scrap", "sand", "tree"]),
                                        st.integers(1, 15)), max_size=3, unique=True))
        piles[turn] = from_json(ft["pile"].val, [list(c) for c in cards], "pile")
        S[fi["pile"]] = tuple(piles)
    return tuple(S)


def test_every_new_action_has_branches(sym):
    names = {b.action for b in sym.branches}
    assert {"pay", "stop_taking", "rebuild", "rebuild_bottom", "build_bottom",
            "decline"} <= names
    # With the tree power a bid may go up to 27.
    assert {b.params for b in sym.branches if b.action == "bid"} == {(n,) for n in range(28)}


@pytest.mark.parametrize("seed", [1, 2])
def test_states_along_a_playout(sym, seed):
    game = sym.game
    _, moves = walk(game, random.Random(seed), 100_000)
    replay = game.initial()
    picks = {len(moves) * i // 5 for i in range(5)}
    legal = 0
    for k, m in enumerate(moves):
        if k in picks:
            legal += compare(sym, replay)["legal"]
        replay, _ = game.apply(replay, m)
    compare(sym, replay)
    assert legal > 0


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_generated_power_states(sym, data):
    compare(sym, data.draw(power_states(sym.game)))
