"""The symbolic domain's connectives (solver/engine/domains.py): Python booleans folded, and
the conjunctions and disjunctions of z3 terms, made by z3's C API in one call, the very
terms z3's own `And` and `Or` make (z3 hash-conses terms: `eq` is identity)."""
from __future__ import annotations

import z3

from solver.engine import domains as dz


def test_the_connectives_fold_python_booleans():
    a = z3.Bool("a")
    assert dz.all_([True, a, True]) is a
    assert dz.all_([a, False]) is False
    assert dz.any_([False, a]) is a
    assert dz.any_([a, True]) is True
    assert dz.all_([]) is True and dz.any_([]) is False
    assert dz.and_(True, a) is a and dz.or_(a, False) is a


def test_the_connectives_make_z3s_own_terms():
    a, b, c = z3.Bools("a b c")
    assert dz.all_([a, True, b, c]).eq(z3.And(a, b, c))
    assert dz.any_([a, False, b, c]).eq(z3.Or(a, b, c))
    assert dz.and_(a, b).eq(z3.And(a, b))
    assert dz.or_(a, z3.Not(b)).eq(z3.Or(a, z3.Not(b)))
    # Quantified and nested terms are booleans too.
    x = z3.Int("x")
    q = z3.ForAll([x], z3.Implies(x > 0, a))
    assert dz.all_([q, dz.any_([a, b])]).eq(z3.And(q, z3.Or(a, b)))


def test_terms_of_another_context_are_left_to_z3():
    other = z3.Context()
    a, b = z3.Bool("a", other), z3.Bool("b", other)
    got = dz.all_([a, b])
    assert got.ctx is other and got.eq(z3.And(a, b))
