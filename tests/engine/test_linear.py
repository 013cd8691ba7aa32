"""`exists real`: the interpreter (HiGHS, confirmed exactly) and the Z3 backend (linear real
arithmetic, the Farkas dual in negative position) must agree.

The fixture tests/fixtures/linear.rules keeps a small linear system in its state (rows ≤, =,
<, or off; optional sign bounds; unknowns switched off by the family's `where`).  For random
states the interpreter's answer is compared with z3's on the same concrete state, in both
polarities; then z3 picks states itself (symbolic leaves) and the interpreter replays them."""
from __future__ import annotations

from fractions import Fraction

import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from solver.engine import domains as dz
from solver.engine import lp
from solver.engine.game import load_path
from solver.engine.symbolic import check, make_solver


@pytest.fixture(scope="module")
def lin():
    game = load_path(FIXTURES / "linear.rules")
    return game, game.expr("feasible()")[0], game.expr("feasible()", symbolic=True)[0]


def states():
    row = st.tuples(st.integers(-3, 3), st.integers(-3, 3), st.integers(-3, 3))
    return st.tuples(st.tuples(row, row, row, row),
                     st.tuples(*[st.integers(-4, 4)] * 4),
                     st.tuples(*[st.integers(0, 3)] * 4),
                     st.booleans(),
                     st.tuples(*[st.booleans()] * 3))


def brute(state) -> bool:
    """The same question by exact Fourier–Motzkin-free means: z3 over the rows, written here
    independently of the spec (an oracle for the oracle)."""
    a, b, kind, signs, keep = state
    xs = [z3.Real(f"x{k}") if keep[k] else z3.RealVal(0) for k in range(3)]
    s = z3.Solver()
    for r in range(4):
        t = z3.Sum([a[r][k] * xs[k] for k in range(3)])
        if kind[r] == 1:
            s.add(t <= b[r])
        elif kind[r] == 2:
            s.add(t == b[r])
        elif kind[r] == 3:
            s.add(t < b[r])
    if signs:
        s.add(*[z3.And(x >= 0, x <= 5) for x in xs])
    return s.check() == z3.sat


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(states())
def test_interpreter_and_z3_agree_on_concrete_states(lin, state):
    game, conc, sym = lin
    want = brute(state)
    assert conc(state) == want
    lit = sym(state)
    for polarity in (True, False):
        s = make_solver(sides=game.symbolic.sides)
        s.add(dz.lift(lit) if polarity else z3.Not(dz.lift(lit)))
        assert check(s) == (want == polarity)


def test_z3_finds_states_both_ways_and_the_interpreter_agrees(lin):
    game, conc, sym = lin
    fresh = dz.Fresh("lin_")
    Z = fresh.value(game.state_type, "z")
    lit = dz.lift(sym(Z))
    seen = set()
    for polarity in (True, False):
        s = make_solver(sides=game.symbolic.sides)
        s.add(*fresh.constraints, lit if polarity else z3.Not(lit))
        # Ask for states with an equality and a strict row, so the dual's cases are exercised.
        s.add(z3.Or([k == 2 for k in Z[2]]), z3.Or([k == 3 for k in Z[2]]))
        for _ in range(6):
            assert check(s)
            m = s.model()
            S = dz.concretize(game.state_type, Z, m)
            assert conc(S) == polarity == brute(S), S
            seen.add(polarity)
            s.add(z3.Or([x != m.eval(x, model_completion=True) for x in z3_leaves(Z)]))
    assert seen == {True, False}


def z3_leaves(v):
    if isinstance(v, tuple):
        for x in v:
            yield from z3_leaves(x)
    elif dz.is_sym(v):
        yield v


def test_exact_confirmation_and_fallback_are_used():
    """A feasible point is confirmed in Fractions; an infeasible answer goes to z3's exact
    simplex.  Both paths of `decide` run on systems whose answer is known."""
    before = dict(lp.STATS)
    # x + y = 1, x - y = 1/3·3 ... x = 2/3 exactly needs a rational point.
    assert lp.decide([(True, "eq", {0: 3, 1: 0, -1: -2}), (True, "le", {1: 1, -1: -1})])
    assert not lp.decide([(True, "le", {0: 1, -1: 1}), (True, "le", {0: -1, -1: 1})])
    assert not lp.decide([(True, "lt", {0: 1}), (True, "le", {0: -1})])  # x < 0, x ≥ 0
    assert lp.decide([(True, "lt", {0: 1, -1: -1}), (True, "le", {0: -1})])  # 0 ≤ x < 1
    assert lp.STATS["exact_point"] > before["exact_point"]
    assert lp.STATS["z3"] > before["z3"]


def test_a_false_condition_alone_is_infeasible():
    assert not lp.decide([(True, "le", {-1: 1})])
    assert lp.decide([(False, "le", {-1: 1})])
    assert Fraction(1, 3) == Fraction(0.3333333333).limit_denominator(10 ** 6)


def test_both_lp_paths_agree_with_z3_on_random_row_systems():
    """HiGHS (non-strict rows, exact point or dual-ray certificate) and linprog (strict rows by a
    maximised margin) decide random small systems as z3's exact simplex does."""
    import random
    from fractions import Fraction

    from solver.engine import lp as L
    rnd = random.Random(3)
    verdicts = set()
    for _ in range(300):
        rows = []
        for _ in range(rnd.randint(1, 6)):
            kind = rnd.choice(["le", "le", "eq", "lt"])
            vs = rnd.sample(range(4), rnd.randint(1, 3))
            t = [(v, Fraction(rnd.choice([-3, -2, -1, 1, 2, 3]))) for v in sorted(vs)]
            t.append((-1, Fraction(rnd.randint(-5, 5))))
            rows.append((kind, tuple(t)))
        want = L._decide_z3(rows)
        verdicts.add(want)
        assert L._decide_linprog(rows) == want, rows
        if not any(k == "lt" for k, _ in rows):
            assert L._decide_highs(rows) in (None, want), rows
    assert verdicts == {True, False}
