"""The incremental evaluation of a `fix` whose step is a table (solver/engine/fixinc.py) gives the
values of the plain iteration: the same floods, the same widest paths, the same `within` cut."""
from __future__ import annotations

import random

import pytest

from conftest import FIXTURES
from solver.engine import codegen
from solver.engine import fixinc
from solver.lang import ir
from solver.lang.errors import Span
from solver.lang.irwalk import nodes
from solver.engine.game import load_path
from solver.lang.types import IntT, finite

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


# ---- shortest paths (fixinc.min_plus) -------------------------------------------------------

class _MinPlusSpy:
    """Compiles with fixinc.min_plus on (recording what it decides, by the fix's line) or off."""

    def __init__(self, on: bool):
        self.on, self.taken, self.orig = on, {}, fixinc.min_plus

    def __enter__(self):
        def spy(e, cache):
            got = self.orig(e, cache) if self.on else None
            self.taken[e.span.line] = got is not None
            return got
        fixinc.min_plus = spy
        codegen.LAZY = False
        return self

    def __exit__(self, *exc):
        fixinc.min_plus = self.orig
        codegen.LAZY = True


def _values(path, params, exprs, states, on):
    with _MinPlusSpy(on) as spy:
        g = load_path(path, (), params)
        fs = [g.expr(x)[0] for x in exprs]
        return [[f(st) for f in fs] for st in states], spy.taken


def test_shortest_paths_solved_at_once_equal_the_iteration():
    path = FIXTURES / "minplus.rules"
    g = load_path(path, (), ())
    rng = random.Random(5)
    states = [_random_state(g, rng, {"cost": lambda r: r.choice([0, 0, 1, 1, 2, 3]),
                                     "src": lambda r: r.random() < 0.2}) for _ in range(150)]
    exprs = ["dist(0)", "short(0)", "east(0)", "moving(0)"]
    fast, taken = _values(path, (), exprs, states, True)
    plain, _ = _values(path, (), exprs, states, False)
    assert fast == plain
    lines = path.read_text().splitlines()
    shapes = {lines[ln - 2].split("(")[0].split()[-1]: t for ln, t in taken.items()}
    # dist, short and east are shortest paths; moving's edges read the state.
    assert shapes == {"dist": True, "short": True, "east": True, "moving": False}
    # `within 2` really cut some iterations short: the fallback was compared too.
    assert any(d != s for d, s, _, _ in fast)


def test_torres_moves_to_solved_at_once_equals_the_iteration():
    spec = ROOT / "spec" / "torres.rules"
    g = load_path(spec, (), (("w", 5), ("h", 4)))
    kinds = list(finite(g.p.types["Occupant"]).values)
    rng = random.Random(3)
    states = [_random_state(g, rng, {"height": lambda r: r.choice([0, 0, 0, 1, 2]),
                                     "occupant": lambda r: r.choice(kinds[:1] * 6 + kinds)})
              for _ in range(60)]
    fast, taken = _values(spec, (("w", 5), ("h", 4)), ["moves_to(0)", "moves_to(1)"], states,
                          True)
    plain, _ = _values(spec, (("w", 5), ("h", 4)), ["moves_to(0)", "moves_to(1)"], states,
                       False)
    assert any(taken.values())
    assert fast == plain
    assert any(max(x) > 1 for row in fast for x in row)     # some squares are far
