"""A guard's leading requires are asked in the order learned to be cheapest (`checks.Order`):
the verdicts are those of the written order, whatever order is learned, and so is an error the
written order meets before any refusal."""
from __future__ import annotations

import pytest

from solver.engine.checks import LEARN, WINDOWS
from solver.engine.game import load_path
from solver.lang.errors import EvalError

# `bound` is written first and costs a sum over 3,000 terms (of the candidate and the state,
# each state a new object: nothing remembers it); `one` costs an index and refuses
# nine candidates in ten while the seq is full.  `one` raises when i is past the seq's end,
# where `bound` refuses first.
RULES = '''game "order";
state { xs: seq[0..1, 20]; }
action pick(i in 0..19) {
  requires bound "i is within xs": (sum k in 0..2999: (k + i + len(xs)) % 7) > 0 and i < len(xs);
  requires one "xs holds a 1 at i": xs[i] == 1;
  xs = [];
}
'''
# Enough evaluations for every window (20 candidates a `legal`).
CALLS = (sum(WINDOWS) + len(WINDOWS) * LEARN) // 20 + 2


@pytest.fixture
def game(tmp_path):
    path = tmp_path / "order.rules"
    path.write_text(RULES)
    return lambda: load_path(path)


def seq(ones, n=20):
    return {"xs": [1 if i in ones else 0 for i in range(n)]}


def moves(g, st):
    return [m.params for m, _, _ in g.legal(st, shown=False)]


def test_the_cheap_refusal_is_learned_first_and_the_verdicts_stay(game):
    g = game()
    for _ in range(CALLS):
        assert moves(g, g.state_from_json(seq({3, 13}), "state")) == [(3,), (13,)]
    pick = next(a for a in g.actions if a.name == "pick")
    assert pick.guard_check.order.order == (1, 0)
    # Now `one` is asked first.  On a short seq it raises past the end, where the written
    # order's `bound` refuses: the written order answers, as a fresh game's does.
    short = g.state_from_json(seq({1, 4}, 6), "state")
    fresh = game()
    assert moves(g, short) == moves(fresh, fresh.state_from_json(seq({1, 4}, 6), "state")) \
        == [(1,), (4,)]


def test_an_error_while_learning_keeps_the_written_order(game):
    g = game()
    for _ in range(CALLS):
        assert moves(g, g.state_from_json(seq({1, 4}, 6), "state")) == [(1,), (4,)]
    pick = next(a for a in g.actions if a.name == "pick")
    assert pick.guard_check.order.order == (0, 1)


def test_an_error_the_written_order_meets_is_raised(tmp_path):
    """Reordered or not, a requires that raises where the ones before it hold raises."""
    path = tmp_path / "raises.rules"
    path.write_text(RULES.replace("and i < len(xs)", "and i < 20"))
    g = load_path(path)
    for _ in range(CALLS):
        moves(g, g.state_from_json(seq({3}), "state"))
    with pytest.raises(EvalError):
        moves(g, g.state_from_json(seq({3}, 6), "state"))
