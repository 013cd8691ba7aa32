"""A value computed out of its type is caught where it matters, in the closures and in the
generated code alike: an int key where it is looked up, and a record where it is looked up
(evaluation errors: a bug of the spec), a record or seq holding a field or item out of its
range where it is stored (the move is refused, as any store out of its type).  Before,
`m[n - 4]` read the last entry of the map (a Python index of -1), `m[n]` past the end raised
a Python IndexError, `q[P(n, 1)]` a Python KeyError, and `s = [n + 1]` or `p = P(n, 0)` went
into the state out of its type."""
from __future__ import annotations

from pathlib import Path

import pytest

from solver.engine.evaluate import Refused
from solver.engine.game import Game, load_game
from solver.lang.errors import EvalError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# action: (the error's class, its message, its line: a record out of its type is placed at the
# action it stopped, the table of its type's ordinals being shared)
CASES = {
    "seq_item": (Refused, "s would leave seq[0..2, 2]", 25),
    "record_field": (Refused, "p would leave P", 26),
    "record_with": (Refused, "p would leave P", 27),
    "key_below": (EvalError, "key -1 is outside the keys 0..2", 28),
    "key_above": (EvalError, "key 3 is outside the keys 0..2", 29),
    "key_assigned": (EvalError, "key 3 is outside the keys 0..2", 30),
    "record_key": (EvalError, "(3, 1) is outside P", 31),
    "bag_member": (EvalError, "key 3 is outside the keys 0..2", 32),
}


@pytest.fixture(params=["generated", "closures"])
def game(request, monkeypatch):
    monkeypatch.setenv("RULEBOOK_SPECS", str(FIXTURES))
    g = load_game("ranges")
    if request.param == "generated":
        assert g.concrete.codegen
        return g
    monkeypatch.setenv("RULEBOOK_CODEGEN", "0")
    plain = Game(g.p, g.symbols)
    assert not plain.concrete.codegen
    return plain


@pytest.mark.parametrize("action", sorted(CASES))
def test_a_value_out_of_its_type_is_caught(game, action):
    kind, message, line = CASES[action]
    with pytest.raises(kind) as err:
        game.action(action).apply(game.initial(), ())
    assert type(err.value) is kind and err.value.message == message
    if kind is Refused:
        assert err.value.rule == "bounds"
    assert err.value.span.line == line


def test_the_same_constructs_in_range_are_values(game):
    st, _ = game.action("fine").apply(game.initial(), ())
    fi = game.field_index
    assert st[fi["s"]] == (2,) and st[fi["p"]] == (2, 0) and st[fi["out"]] == 0 + 5   # m[0] + q[P(0, 1)]
    assert st[fi["yes"]] is False


def test_play_says_where_the_rule_failed():
    from conftest import run_cli
    path = FIXTURES / "ranges_play.rules"
    shown = path.relative_to(FIXTURES.parent.parent)        # spans are shown from the root
    for extra in ((), ("--trace",)):
        r = run_cli("play", str(path), "--seed", "0", *extra)
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert r.stderr.strip() == (f"rulebook: {shown}:15:23: game 1 of seed 0: key -1 is "
                                    "outside the keys 0..2"), r.stderr
