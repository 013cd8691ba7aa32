"""The incremental evaluation of a `fix` whose step is a table (solver/fixinc.py) gives the
values of the plain iteration: the same floods, the same widest paths, the same `within` cut."""
from __future__ import annotations

import random

import pytest

from conftest import FIXTURES
from solver import codegen, fixinc, ir
from solver.errors import Span
from solver.irwalk import nodes
from solver.game import load_path
from solver.types import IntT, finite

ROOT = FIXTURES.parent.parent


def _both(path, params=()):
    # The decisions are made when the code is written: all of it now, inside each patch.
    codegen.LAZY = False
    try:
        return _both_now(path, params)
    finally:
        codegen.LAZY = True


def _both_now(path, params):
    used = []
    orig = fixinc.applies
    fixinc.applies = lambda e: used.append(orig(e)) or used[-1]
    try:
        inc = load_path(path, (), params)
    finally:
        fixinc.applies = orig
    assert any(used)      # the incremental path is really taken
    orig = fixinc.applies
    fixinc.applies = lambda e: False
    try:
        plain = load_path(path, (), params)
    finally:
        fixinc.applies = orig
    return inc, plain


def _random_state(g, rng, fields):
    fi = g.field_index
    S = list(g.initial())
    n = len(finite(g.p.types["Sq"]).values)
    for name, make in fields.items():
        S[fi[name]] = tuple(make(rng) for _ in range(n))
    return tuple(S)


@pytest.mark.parametrize("expr", ["castle(s)", "widest(s)"])
def test_flood_fixture_incremental_equals_plain(expr):
    inc, plain = _both(FIXTURES / "flood.rules")
    sq = inc.p.types["Sq"]
    fi, fp = inc.expr(expr, {"s": sq})[0], plain.expr(expr, {"s": sq})[0]
    rng = random.Random(7)
    for _ in range(60):
        st = _random_state(inc, rng, {"height": lambda r: r.choice([0, 0, 1, 2, 3]),
                                      "piece": lambda r: r.choice([0, 0, 0, 1])})
        for s in finite(sq).values:
            assert fi(st, s) == fp(st, s)


def test_torres_passage_incremental_equals_plain():
    spec = ROOT / "spec" / "torres.rules"
    inc, plain = _both(spec, (("w", 5), ("h", 4)))
    sq = inc.p.types["Sq"]
    occ = inc.p.types["Occupant"]
    kinds = list(finite(occ).values)
    binds = {"a": sq, "k": IntT(0, 16)}
    fi, fp = inc.expr("passage(a, k)", binds)[0], plain.expr("passage(a, k)", binds)[0]
    rng = random.Random(11)
    hit = 0
    for _ in range(40):
        st = _random_state(inc, rng, {"height": lambda r: r.choice([0, 0, 1, 2, 3, 4]),
                                      "occupant": lambda r: r.choice(kinds[:1] * 4 + kinds)})
        for a in finite(sq).values:
            for k in range(4):
                x, y = fi(st, a, k), fp(st, a, k)
                assert x == y
                hit += any(x)
    assert hit > 0     # some passages are not empty: the comparison is not vacuous


def test_a_constant_value_is_not_walked_as_ir():
    """A constant's value is data: the walks stop at the Const (Towers' SHAPE table, inlined
    at every call, made them walk millions of tuples).  A value holding an IR-shaped object
    shows it: were it walked, the Local inside would be yielded and read."""
    sp = Span("t", 1, 1)
    inner = ir.Local(IntT(0, 1), sp, "x", 7)
    c = ir.Const(IntT(0, 1), sp, ((inner, 1), (2, 3)))
    e = ir.Binary(IntT(0, 2), sp, "+", c, ir.Local(IntT(0, 1), sp, "y", 3))
    assert [type(n).__name__ for n in nodes(e)] == ["Binary", "Const", "Local"]
    reads = fixinc.summary(e, {})[0]
    assert reads == {3}
    assert fixinc.state_fields(e, {}) == frozenset()
