"""The side conditions of `exists real` literals belong to the symbolic evaluator that made them
(`linear.Sides`, ``game.symbolic.sides``), not to the process: a check on a solver made with a
game whose formulas hold none walks nothing, even after another game's statics were evaluated
in the same process; a solver given several games' sides (two readings compared) gets each
literal's own condition."""
from __future__ import annotations

import z3

from solver.engine import domains as dz
from solver.engine import linear
from solver.engine.game import load_game
from solver.engine.symbolic import branches, check, make_solver

STANDS = ("stands(with_block(tower[0], cube, 0, Cell(x, 0, 2)), "
          "with_cells(tower[0], occ[0], cube, 0, Cell(x, 0, 2)))")


def _on_a_bar(g):
    """Towers' initial state with player 0's tower a cube under a bar of three (the bar
    overhangs the cube by one on each side), and the statics literal of a cube put at
    ``Cell(x, 0, 2)`` on it."""
    fi, T = g.field_index, g.p.types
    setup, _ = g.expr("occupancy(as_tower(bs))", {"bs": g.p.puzzles[0].inputs[0].type})
    shape = T["Shape"].members
    bs = ((shape.index("cube"), ((0, 0, 0),)),
          (shape.index("tri_line"), ((-1, 0, 1), (0, 0, 1), (1, 0, 1))))
    st = list(g.initial())
    st[fi["tower"]] = (tuple(bs[i] if i < len(bs) else (0, ()) for i in range(12)),) \
        + st[fi["tower"]][1:]
    st[fi["occ"]] = (setup(g.initial(), bs),) + st[fi["occ"]][1:]
    sym, _ = g.expr(STANDS, {"x": T["Coord"]}, symbolic=True)
    return tuple(st), sym


def test_a_check_without_exists_real_walks_nothing_after_towers_statics(monkeypatch):
    towers = load_game("towers")
    st, sym = _on_a_bar(towers)
    before = len(towers.symbolic.sides)
    lit = dz.lift(sym(st, 0))       # the statics of a placement, decided by a fresh Bool
    assert z3.is_bool(lit) and len(towers.symbolic.sides) > before

    walks = []
    walk = linear._walk_sides
    monkeypatch.setattr(linear, "_walk_sides", lambda *a: walks.append(1) or walk(*a))
    clock = load_game("clock-towers")
    fresh = dz.Fresh("side_")
    S = fresh.value(clock.state_type, "s")
    bs = [b for b in branches(clock, S, ["discard", "build"]) if b.guard is not True]
    assert bs, "no symbolic guard to ask z3 about"
    s = make_solver(sides=clock.symbolic.sides)
    s.add(*fresh.constraints)
    asked = 0
    for b in bs[:5]:
        check(s, dz.lift(b.guard))
        asked += 1
    assert asked and len(clock.symbolic.sides) == 0
    assert walks == []
    # The Towers literal's own solver does walk its formula, and the walk finds its condition.
    s = make_solver(sides=towers.symbolic.sides)
    s.add(lit)
    assert linear.side_conditions(s, books=(towers.symbolic.sides,))
    assert walks


def test_a_solver_of_two_games_gets_each_literals_condition():
    towers = load_game("towers")
    clock = load_game("clock-towers")
    st, sym = _on_a_bar(towers)
    # A cube at x = 0 stands (above the support); at x = 3 it is off the bar, and the
    # interpreter refuses it.  The literal is a fresh Bool: only its side condition decides.
    for x, want in ((0, True), (3, False)):
        assert bool(towers.expr(STANDS, {"x": towers.p.types["Coord"]})[0](st, x)) == want
        lit = dz.lift(sym(st, x))
        for sides in ((clock.symbolic.sides, towers.symbolic.sides), towers.symbolic.sides):
            s = make_solver(sides=sides)
            assert check(s, z3.Not(lit) if want else lit) is False, (x, sides)
        # Without the evaluator's sides the literal is unconstrained: both answers are sat.
        s = make_solver()
        assert check(s, z3.Not(lit) if want else lit) is True
