"""`largest k of { ... }`, the sum of the k largest items above 0: the interpreter and the Z3
terms give the value of a plain sort of the items (counts, guards, negative values and counts,
k below 0 or beyond the items), its type is 0..k·v, and Torres' bound reads it the same way."""
from __future__ import annotations

import itertools

import z3

from conftest import FIXTURES
from solver.engine import domains as dz
from solver.engine.game import load_path
from solver.lang.types import IntT

TEXT = "largest k of { t in 0..3 where t != v: t - 1 times n, 5 - t; v times 2; 3 }"
ENV = {"k": IntT(-1, 6), "v": IntT(0, 3), "n": IntT(-1, 3)}


def _oracle(k: int, v: int, n: int) -> int:
    items = []
    for t in range(4):
        if t != v:
            items += [t - 1] * max(n, 0) + [5 - t]
    items += [v] * 2 + [3]
    return sum(sorted((x for x in items if x > 0), reverse=True)[:max(k, 0)])


def test_largest_is_the_sum_of_the_k_largest_items_in_both_domains():
    g = load_path(FIXTURES / "flood.rules")
    f, typ = g.expr(TEXT, ENV)
    fs, _ = g.expr(TEXT, ENV, symbolic=True)
    assert typ == IntT(0, 30)           # k at most 6, an item at most 5
    st = g.initial()
    k, v, n = z3.Ints("k v n")
    term = dz.lift(fs(st, k, v, n))
    seen = set()
    for kk, vv, nn in itertools.product(range(-1, 7), range(4), range(-1, 4)):
        want = _oracle(kk, vv, nn)
        seen.add(want)
        assert f(st, kk, vv, nn) == want, (kk, vv, nn)
        got = z3.simplify(z3.substitute(term, (k, z3.IntVal(kk)), (v, z3.IntVal(vv)),
                                        (n, z3.IntVal(nn))))
        assert got.as_long() == want, (kk, vv, nn)
    assert len(seen) > 10               # the cases are not all alike


def test_largest_over_a_concrete_pool_folds_to_a_number():
    g = load_path(FIXTURES / "flood.rules")
    fs, _ = g.expr("largest 3 of { t in 0..4: t times t }", {}, symbolic=True)
    assert fs(g.initial()) == 4 + 4 + 4     # 4 copies of 4 are the three largest


def test_a_symbolic_count_is_solved_for():
    """z3 finds the fewest picks that reach a total: the term is exact, not just a bound."""
    g = load_path(FIXTURES / "flood.rules")
    fs, _ = g.expr("largest k of { t in 1..4: t times 2 }", {"k": IntT(0, 8)}, symbolic=True)
    k = z3.Int("k")
    o = z3.Optimize()
    o.add(dz.lift(fs(g.initial(), k)) >= 15, k >= 0, k <= 8)
    o.minimize(k)
    assert o.check() == z3.sat
    assert o.model()[k].as_long() == 5      # 4 + 4 + 3 + 3 = 14 < 15 <= 14 + 2
