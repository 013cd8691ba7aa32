"""Clock Towers' capacities (issue 64, point 6): a tower holds « n'importe quel nombre de cartes
Etage » and a player builds « n'importe quel nombre de clochers », so no bound may refuse a play
the rules allow.  The capacities are the params `tower_cards` and `player_towers`, sized from
the cards; these tests count, from the spec's own defs, what the cards allow and check every
capacity holds it, and play the worst cases: every floor card in play in one tower, every one
starting a tower of its own.  At the stored proof's bounds (10 and 8) the same plays are refused
by rule `bounds`, as they were before."""
from __future__ import annotations

import pytest

from solver.engine.evaluate import Refused
from solver.engine.game import Move, load_game

CT = "clock-towers"
OLD = (("tower_cards", 10), ("player_towers", 8))     # the bounds of the stored proof


@pytest.fixture(scope="module")
def ct():
    return load_game(CT)


def _value(g, text: str) -> int:
    """An expression of no state evaluated by the spec (its defs and params)."""
    return g.expr(text, {})[0](g.initial())


def _in_play(g, pile: str) -> int:
    """The cards of a pile the game holds, less those set aside unseen in the box."""
    return _value(g, f"(sum c in Card where pile_of(c) == {pile}: copies(c)) - set_aside({pile})")


def _field_type(g, name: str):
    return g.p.state[g.field_index[name]].type


@pytest.mark.parametrize("params", [(), (("players", 5),), (("players", 1),),
                                    (("one_floor_cats", 7), ("one_floor_mice", 7),
                                     ("two_floor_cats", 0), ("two_floor_mice", 14))],
                         ids=["default", "5p", "1p", "split"])
def test_capacities_hold_what_the_cards_allow(params):
    g = load_game(CT, (), params)
    floors = _in_play(g, "floors")
    cards = _value(g, "sum c in Card: copies(c)")
    boxed = _value(g, "sum k in Pile: set_aside(k)")
    most_copies = _value(g, "max c in Card: copies(c)")
    tower = g.p.types["Tower"]
    # Only a floor card starts a tower, and a tower holds one clock and one roof at most
    # (invariants legal_towers, one_clock_one_roof): every floor card in play may be in one
    # tower, or each start its own.
    assert tower.cap >= floors + 1 + 1
    assert _field_type(g, "towers").val.cap >= floors
    # A hand holds 3 cards, 4 mid-turn (invariant three_cards); a bag's bound is per card.
    assert _field_type(g, "hands").val.most >= 4
    for name in ("stock", "discards"):
        assert _field_type(g, name).most >= most_copies, name
    assert _field_type(g, "box").most >= _value(g, "max k in Pile: set_aside(k)")
    assert _field_type(g, "piles").val.cap >= max(_in_play(g, k)
                                                  for k in ("roofs", "clocks", "floors"))
    # Each turn plays or discards one card from a hand; a boxed card never reaches one.
    assert _field_type(g, "played").hi >= cards - boxed
    # The ranges of the defs over towers hold their worst case.
    t = {"t": tower}
    assert g.expr("storeys(t)", t)[1].hi >= 2 * floors
    assert g.expr("ready(0)", {})[1].hi >= floors and g.expr("bare(0)", {})[1].hi >= floors
    assert g.expr("score(0)", {})[1].hi >= 5 * _in_play(g, "roofs")
    assert g.expr("in_towers(towers[0], floor1)", {})[1].hi >= floors


def _floors_in_play(g) -> list[str]:
    """As many floor cards as the game puts in play, within each kind's copies."""
    names = g.p.types["Card"].members
    copies = g.expr("copies(c)", {"c": g.p.types["Card"]})[0]
    is_floor = g.expr("is_floor(c)", {"c": g.p.types["Card"]})[0]
    out = [n for i, n in enumerate(names) if is_floor(g.initial(), i)
           for _ in range(copies(g.initial(), i))]
    return out[:_in_play(g, "floors")]


def _state(g, towers: list, hand: list[str]):
    return g.state_from_json({"phase": "playing", "stock": [], "hands": [hand, ["floor2"]],
                              "towers": [towers, []]})


def _move(g, action: str, *args) -> Move:
    names = g.p.types["Card"].members
    return Move(action, tuple(names.index(a) if isinstance(a, str) else a for a in args))


def test_every_floor_in_play_fits_in_one_tower_with_its_clock(ct):
    floors = _floors_in_play(ct)
    st = _state(ct, [floors[:-1]], [floors[-1], "clock"])
    st, _ = ct.apply(st, _move(ct, "add", floors[-1], 0))
    st, _ = ct.apply(st, _move(ct, "discard", "floor2"))        # player 1's turn
    st, _ = ct.apply(st, _move(ct, "add", "clock", 0))
    tower = st[ct.field_index["towers"]][0][0]
    assert len(tower) == len(floors) + 1 < ct.p.types["Tower"].cap   # room for the roof


def test_every_floor_in_play_may_start_a_tower(ct):
    floors = _floors_in_play(ct)
    st = _state(ct, [[c] for c in floors[:-1]], [floors[-1]])
    st, _ = ct.apply(st, _move(ct, "build", floors[-1]))
    assert len(st[ct.field_index["towers"]][0]) == len(floors)


def test_the_old_bounds_refused_the_issues_ninth_tower_and_eleventh_card():
    """Issue 64: with 8 incomplete towers a floor card could not start a ninth, nor a floor
    card go on a tower of 10 cards (spec example `ninth_tower` plays both at the new bounds)."""
    old = load_game(CT, (), OLD)
    st = _state(old, [["floor1"]] * 8, ["floor1_cat"])
    with pytest.raises(Refused) as r:
        old.apply(st, _move(old, "build", "floor1_cat"))
    assert r.value.rule == "bounds"
    st = _state(old, [["floor1"] * 4 + ["floor2"] * 6], ["floor1_cat"])
    with pytest.raises(Refused) as r:
        old.apply(st, _move(old, "add", "floor1_cat", 0))
    assert r.value.rule == "bounds"
