"""`reachable using ... within N: goal` (solver/engine/reach.py): the interpreter's bounded
search, worked by hand on the counter of tests/fixtures/reach.rules; a search nested in the
moves it searches; and what z3 makes of one (decided over a known state, an unknown boolean
over a state with unknowns)."""
from __future__ import annotations

import pytest
import z3

from conftest import FIXTURES
from solver.engine.evaluate import Refused
from solver.engine.game import Move, load_path
from solver.lang.types import IntT


@pytest.fixture(scope="module")
def game():
    return load_path(FIXTURES / "reach.rules")


def _at(game, x, y=0):
    return (x, y)


@pytest.mark.parametrize("x, k, expected", [
    (5, 0, True),     # no move at all: the goal holds already
    (4, 0, False),
    (4, 1, True),     # 4 + 1
    (3, 1, True),     # 3 + 2
    (2, 1, False),    # 2 + 2 = 4 at most
    (1, 2, True),     # 1 + 2 + 2
    (0, 2, False),    # 0 + 2 + 2 = 4
    (0, 3, True),     # 0 + 2 + 2 + 1
])
def test_the_search_reaches_five_by_hand(game, x, k, expected):
    f = game.expr("five_within(k)", {"k": IntT(0, 9)})[0]
    assert f(_at(game, x), k) is expected


def test_the_search_makes_only_legal_moves(game):
    """push stops at 9: from y = 7 three pushes reach 9 but never pass it."""
    f = game.expr("pushed_to(t)", {"t": IntT(0, 9)})[0]
    assert f(_at(game, 0, 7), 9) is True
    assert f(_at(game, 0, 7), 8) is True
    assert f(_at(game, 0, 5), 9) is False    # four pushes needed, three allowed


def test_a_search_inside_the_moves_it_searches(game):
    """careful(n) is legal only if 5 is then at most one careful or plain step away: from 0
    neither careful step is (1 or 2, then at most 4); from 1 only careful 2 (3, then 5); from
    3 both (4 then 5, or 5 at once).  The search from 3 tries careful moves, which search in
    turn."""
    def careful(x):
        return {m.params for m, _, _ in game.legal(_at(game, x), {"careful"})}
    assert careful(0) == set()
    assert careful(1) == {(2,)}
    assert careful(3) == {(1,), (2,)}
    with pytest.raises(Refused) as r:
        game.apply(_at(game, 1), Move("careful", (1,)))
    assert r.value.rule == "on_course"


def test_z3_decides_a_search_over_a_known_state(game):
    f = game.expr("five_within(k)", {"k": IntT(0, 9)}, symbolic=True)[0]
    assert f((z3.IntVal(3), z3.IntVal(0)), z3.IntVal(1)) is True
    assert f((2, 0), 1) is False


def test_z3_reads_a_search_over_unknowns_as_an_unknown_boolean(game):
    """Over-approximated: z3 may take it either way (each evaluation its own unknown)."""
    f = game.expr("five_within(k)", {"k": IntT(0, 9)}, symbolic=True)[0]
    x = z3.Int("x")
    v = f((x, 0), 1)
    assert isinstance(v, z3.BoolRef) and z3.is_const(v) and not z3.is_true(v) \
        and not z3.is_false(v)
    for want in (True, False):
        s = z3.Solver()
        s.add(x == 0, v == want)
        assert s.check() == z3.sat
    assert not (f((x, 0), 1) is v)


def test_a_search_from_a_state_its_set_up_makes(game):
    """`from { x = 3; }`: one step of 2 reaches 5 whatever x was; a set-up whose own rule
    fails leaves no state to search from (false), in both domains."""
    three = game.expr("five_from_three()", {})[0]
    assert three(_at(game, 0)) is True and three(_at(game, 5)) is True
    low = game.expr("from_four_if_low()", {})[0]
    assert low(_at(game, 1)) is True
    assert low(_at(game, 2)) is False
    sym = game.expr("from_four_if_low()", {}, symbolic=True)[0]
    assert sym((1, 0)) is True and sym((z3.IntVal(3), 0)) is False
