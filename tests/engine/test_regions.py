"""The region primitives `component(seed, ok)` and `components(ok)` (solver/engine/regions.py): the
values a flood written with `fix` gives, on every board of a 3 x 3 grid; the Z3 terms equal
the interpreter's values, and equal the `fix` flood's terms for every board at once (z3
proves it); a flood unrolled once is kept for the same squares; a wrong use is refused with
its place."""
from __future__ import annotations

import itertools
import random

import pytest
import z3

from conftest import FIXTURES
from solver.engine import domains as dz
from solver.engine import regions
from solver.engine.abstraction import EXACT
from solver.engine.values import identical
from solver.lang.errors import SpecError
from solver.engine.game import load_path
from solver.prover.abstractions import Opaque
from solver.lang.types import finite
from support.floods import components, decls, square_type, state, symbolic_agrees

BUILT = "table t in Sq: height[t] > 0"


@pytest.fixture(scope="module")
def flood():
    return load_path(FIXTURES / "flood.rules")


def _every_board():
    cells = list(itertools.product(range(3), range(3)))
    for bits in itertools.product((0, 1), repeat=9):
        yield {c: b for c, b in zip(cells, bits)}


def test_component_and_components_on_every_board_of_a_3x3_grid(flood):
    sq = square_type(flood)
    comp = flood.expr(f"component(s, {BUILT})", {"s": sq})[0]
    castle = flood.expr("castle(s)", {"s": sq})[0]
    count = flood.expr(f"components({BUILT})")[0]
    sqs = finite(sq).values
    for heights in _every_board():
        S = state(flood, heights)
        parts = set()
        for s in sqs:
            got = comp(S, s)
            assert got == castle(S, s)
            assert {t for t, b in zip(sqs, got) if b} == components(heights, s)
            if heights.get(s):
                parts.add(frozenset(components(heights, s)))
        assert count(S) == len(parts), heights


def test_the_z3_terms_agree_with_the_interpreter(flood):
    rng = random.Random(7)
    cells = list(itertools.product(range(3), range(3)))
    boards = [{c: rng.choice([0, 0, 1, 2]) for c in cells} for _ in range(12)] + [{}]
    for text in (f"component(s, {BUILT})", f"components({BUILT})",
                 "component(s, table t in Sq: height[t] > 1)"):
        symbolic_agrees(flood, text, boards)


def test_z3_proves_the_primitive_is_the_fix_flood_on_every_board(flood):
    """For a symbolic board (every height at once), the primitive's terms and the `fix`
    castle's are equal, square by square: z3 finds no board where they differ."""
    sq = square_type(flood)
    Z = dz.Fresh("p_").value(flood.state_type, "z")
    prim = flood.expr(f"component(s, {BUILT})", {"s": sq}, symbolic=True)[0]
    fix = flood.expr("castle(s)", {"s": sq}, symbolic=True)[0]
    s = z3.Solver()
    s.add([z3.And(h >= 0, h <= 3) for h in Z[flood.field_index["height"]]])
    differ = [dz.lift(a) != dz.lift(b)
              for v in finite(sq).values for a, b in zip(prim(Z, v), fix(Z, v))]
    s.add(z3.Or(differ))
    assert s.check() == z3.unsat
    # The seed symbolic too: any square of any board.
    x, y = z3.Ints("seed_x seed_y")
    s = z3.Solver()
    s.add([z3.And(h >= 0, h <= 3) for h in Z[flood.field_index["height"]]])
    s.add(x >= 0, x <= 2, y >= 0, y <= 2)
    s.add(z3.Or([dz.lift(a) != dz.lift(b) for a, b in zip(prim(Z, (x, y)), fix(Z, (x, y)))]))
    assert s.check() == z3.unsat


def test_z3_counts_the_components_of_a_symbolic_board(flood):
    """components() on a symbolic board is the number of its castles: z3 finds no board of
    heights 0/1 where it differs from a count of the first square of each `fix` castle."""
    Z = dz.Fresh("q_").value(flood.state_type, "z")
    prim = flood.expr(f"components({BUILT})", symbolic=True)[0]
    firsts = flood.expr("count s in Sq: height[s] > 0 and (let c = castle(s) in "
                        "forall t in Sq where c[t]: not (t.x < s.x or (t.x == s.x and t.y < s.y)))",
                        symbolic=True)[0]
    s = z3.Solver()
    s.add([z3.And(h >= 0, h <= 1) for h in Z[flood.field_index["height"]]])
    s.add(dz.lift(prim(Z)) != dz.lift(firsts(Z)))
    assert s.check() == z3.unsat


@pytest.mark.parametrize("text,message", [
    ("component(s, 3)", "component needs a map from grid squares"),
    ("components(height)", "components needs a map from grid squares"),
    ("component(s)", "component takes a square and a region"),
    ("components(table t in Sq: height[t] > 0, 1)", "components takes one region"),
    ("component(1, table t in Sq: height[t] > 0)", "component's seed must be a Sq"),
])
def test_a_wrong_use_is_refused_with_its_place(flood, text, message):
    with pytest.raises(SpecError, match=message) as e:
        flood.expr(text, {"s": square_type(flood)})
    assert ":1:" in str(e.value)


def test_the_prover_may_read_a_component_as_unknowns(flood):
    """Under the prover's `Opaque` abstraction with ``fixes`` (--opaque-fix) a region builtin
    over a symbolic board is, like a `fix`, uninterpreted functions of what it reads;
    outside, the unrolled flood."""
    Z = dz.Fresh("o_").value(flood.state_type, "z")
    with flood.symbolic.abstracted(Opaque(reals=False, fixes=True)):
        inside = flood.expr(f"components({BUILT})", symbolic=True)[0](Z)
    outside = flood.expr(f"components({BUILT})", symbolic=True)[0](Z)
    assert inside.decl().kind() == z3.Z3_OP_UNINTERPRETED
    assert not z3.eq(inside, outside)
    assert any(d.kind() == z3.Z3_OP_ITE for d in decls(outside))




def test_a_component_unrolled_once_is_kept_for_the_same_squares(flood):
    """An `Unrolled` gives back the very terms it unrolled for the same seed and squares
    (equal to a flood unrolled afresh), and nothing for other squares, another grid or
    another abstraction."""
    sq = square_type(flood)
    Z = dz.Fresh("u_").value(flood.state_type, "z")
    ok = tuple(h > 0 for h in Z[flood.field_index["height"]])
    seed = finite(sq).values[4]
    kept = regions.Unrolled()
    first = regions.component(sq, seed, ok, EXACT, kept)
    assert regions.component(sq, seed, ok, EXACT, kept) is first
    assert identical(first, regions.component(sq, seed, ok, EXACT))
    other = tuple(h > 1 for h in Z[flood.field_index["height"]])
    assert kept.get(sq, seed, other, EXACT) is None
    assert kept.get(sq, finite(sq).values[0], ok, EXACT) is None
    assert kept.get(sq, seed, ok, Opaque(fixes=True)) is None
    assert regions.components(sq, ok, EXACT, kept) is not None and len(kept.memo) == 9
