"""`rulebook prove --region-facts`: the region builtins as unknowns with the facts of connected
regions (solver/prover/regionfacts.py).  The facts are true of every set of a small grid (its
components found by a graph search), a false one is caught, and on a small spec of castles
they prove what reading the builtins as uninterpreted functions cannot; a guard taken out, or a
fact, and the proof no longer goes through."""
from __future__ import annotations

import itertools

import pytest
import z3

from conftest import FIXTURES
from support.floods import decls
from solver.engine.abstraction import EXACT
from solver.prover import regionfacts
from solver.prover.abstractions import Opaque
from solver.engine.game import load_path
from solver.prover.options import ProveOptions
from solver.prover.prove import prove
from solver.engine.regions import labels

TIMEOUT_MS = 60_000


def _grid(w: int, h: int):
    """Each square's side neighbours, by index y * w + x."""
    return tuple(tuple((y + dy) * w + x + dx for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
                       if 0 <= x + dx < w and 0 <= y + dy < h)
                 for y in range(h) for x in range(w))


def _truth(r, nb, ok) -> list:
    """r's unknowns pinned to the values of ok's components."""
    label = labels(nb, ok)
    n = len(ok)
    out = [r.count == len({x for x in label if x >= 0})]
    for a in range(n):
        out.append(r.size(a) == (label.count(label[a]) if label[a] >= 0 else 0))
        for b in range(a + 1, n):
            out.append(r.same(a, b) == (label[a] >= 0 and label[a] == label[b]))
    return out


def _violations(nb, limit: int = 1) -> list:
    """The (set, q) where the facts of a set and the set with q flipped do not hold of their
    true components."""
    facts = regionfacts.RegionFacts()   # its facts are remembered by the regions' sets
    n, bad = len(nb), []
    for bits in itertools.product((False, True), repeat=n):
        ok = list(bits)
        for q in range(n):
            other = [b if i != q else not b for i, b in enumerate(ok)]
            r, r2 = facts.region(tuple(ok), nb), facts.region(tuple(other), nb)
            s = z3.Solver()
            s.add(_truth(r, nb, ok) + _truth(r2, nb, other))
            s.add(z3.Not(z3.And(facts.facts_for([r, r2]))))
            if s.check() != z3.unsat:
                bad.append((ok, q))
                if len(bad) >= limit:
                    return bad
    return bad


def test_the_facts_hold_of_every_set_of_a_2x3_grid():
    """Every set of the 6 squares and every square added or taken out: 384 cases."""
    assert _violations(_grid(3, 2)) == []


def test_a_false_fact_is_caught(monkeypatch):
    """Claiming that adding a square always adds a component is false (it may join one)."""
    real = regionfacts.added

    def wrong(r, r2, q, around):
        return real(r, r2, q, around) + [r2.count == r.count + 1]
    monkeypatch.setattr(regionfacts, "added", wrong)
    assert _violations(_grid(3, 2)) != []


@pytest.fixture(scope="module")
def castles():
    return load_path(FIXTURES / "regions.rules")


def _status(game, **kw) -> dict:
    return {r.name: r.status for r in prove(game, ProveOptions(1, TIMEOUT_MS, **kw))}


def test_region_facts_prove_what_uninterpreted_functions_cannot(castles):
    assert _status(castles, region_facts=True) == {"low": "inductive", "apart": "inductive"}
    assert _status(castles, opaque_fix=True) == {"low": "holds", "apart": "holds"}


def test_without_no_merge_castles_merge(tmp_path):
    """The guard taken out: a real merge (a block between the two starting castles), found by
    bounded model checking, not proved away."""
    text = (FIXTURES / "regions.rules").read_text()
    cut = text.replace('  requires no_merge "castles never join": not merges(s);\n', "")
    assert cut != text
    p = tmp_path / "merging.rules"
    p.write_text(cut)
    got = _status(load_path(p), region_facts=True)
    assert got["apart"] == "refuted"


def test_the_area_is_the_size_the_facts_speak_of(castles, monkeypatch):
    """A count over a whole component is read as its size, which the facts relate across
    the step (no sum of the component's squares is linked to it): read as a plain count,
    the area is unknown to the facts and the step is not proved."""
    monkeypatch.setattr(regionfacts.RegionFacts, "whole", lambda self, squares: None)
    assert _status(castles, region_facts=True) == {"low": "holds", "apart": "inductive"}


def test_a_count_over_part_of_a_component_is_not_its_size():
    """Only a count over every square of a component is read as its size."""
    a, b = z3.Bools("a b")
    nb = ((1,), (0,))
    facts = regionfacts.RegionFacts()
    r = facts.region((a, b), nb)
    c = r.component(0)
    assert facts.whole(c).eq(r.size(0))
    assert facts.whole((c[0], False)) is None
    assert facts.whole((False, False)) is None
    assert EXACT.whole(c) is None               # without region facts: a plain count


def test_a_symbolic_seed_picks_its_square_among_the_regions_unknowns():
    """Under region facts, component(seed, ok) of a symbolic seed is, square by square, the
    component of the square the seed is: z3 finds no seed where they differ."""
    from solver.engine import domains as dz
    game = load_path(FIXTURES / "flood.rules")
    sq = game.p.types["Sq"]
    Z = dz.Fresh("rs_").value(game.state_type, "z")
    x, y = z3.Ints("seed_x seed_y")
    rf = regionfacts.RegionFacts()
    with game.symbolic.abstracted(Opaque(reals=False, regions=rf)):
        f = game.expr("component(s, table t in Sq: height[t] > 0)", {"s": sq},
                      symbolic=True)[0]
        sym = f(Z, (x, y))
        for a in range(3):
            for b in range(3):
                fixed = f(Z, (a, b))
                s = z3.Solver()
                s.add(x == a, y == b)
                s.add(z3.Or([dz.lift(u) != dz.lift(v) for u, v in zip(sym, fixed)]))
                assert s.check() == z3.unsat
    assert any(rf.family(d.get_id()) is not None
               for t in sym for d in decls(dz.lift(t)))



def test_a_long_max_or_min_is_the_value_its_facts_allow_and_no_other():
    """Under region facts a max or min over more than FOLD_TERMS elements is one unknown: its
    facts pin it to the fold's value for any guards and values, the default when no guard
    holds (random cases, some with every guard false)."""
    import random
    n = regionfacts.FOLD_TERMS + 2
    gs, vs = z3.Bools(" ".join(f"g{i}" for i in range(n))), z3.Ints(" ".join(
        f"v{i}" for i in range(n)))
    rng = random.Random(5)
    rf = regionfacts.RegionFacts()
    for kind, pick in (("max", max), ("min", min)):
        f = rf.fold(kind, list(zip(gs, vs)), 0)
        assert f is not None
        facts = regionfacts.Fold(f, kind, n, 0).defining()
        for case in range(40):
            on = [rng.random() < (0 if case % 8 == 0 else 0.4) for _ in range(n)]
            val = [rng.randint(-5, 9) for _ in range(n)]
            want = pick([v for o, v in zip(on, val) if o], default=0)
            s = z3.Solver()
            s.add(*facts, *[g == o for g, o in zip(gs, on)], *[v == x for v, x in zip(vs, val)])
            assert s.check(f == want) == z3.sat
            assert s.check(f != want) == z3.unsat
    assert rf.fold("max", list(zip(gs, vs))[:regionfacts.FOLD_TERMS], 0) is None
    assert EXACT.fold("max", list(zip(gs, vs)), 0) is None     # without region facts


@pytest.fixture(scope="module")
def capped():
    return load_path(FIXTURES / "folds.rules")


def test_a_bound_on_the_tallest_is_proved_through_the_folds_facts(capped, monkeypatch):
    """A column no taller than the tallest, the tallest within the cap: inductive under
    region facts, where the max is an unknown, as with the evaluator's chain of ifs; with
    the fold's facts left out the unknown could be anything, and the step is not proved."""
    assert _status(capped, region_facts=True) == {"capped": "inductive"}
    assert _status(capped) == {"capped": "inductive"}
    monkeypatch.setattr(regionfacts.Fold, "defining", lambda self: [])
    assert _status(capped, region_facts=True) == {"capped": "holds"}


def test_the_folds_facts_prove_nothing_false():
    """With a slack of one block over the cap the invariant is false after four raises: the
    step is not proved under region facts (the facts do not say more than the fold is)."""
    game = load_path(FIXTURES / "folds.rules", (), (("slack", 1),))
    got = {r.name: (r.status, r.depth)
           for r in prove(game, ProveOptions(4, TIMEOUT_MS, region_facts=True))}
    assert got == {"capped": ("refuted", 4)}


def _two_regions(facts, q: int):
    """A 3 x 3 grid's set of free Bools and the same set with q's leaf another Bool."""
    nb = _grid(3, 3)
    ok = z3.Bools(" ".join(f"sl{i}" for i in range(9)))
    other = list(ok)
    other[q] = z3.Bool(f"sl{q}_after")
    return nb, facts.region(tuple(ok), nb), facts.region(tuple(other), nb)


def test_a_sliced_query_gets_fewer_facts_each_implied_by_all_of_them():
    """Sliced to one square, the facts are a weaker set (all of them imply each), smaller,
    and about no square but it and those around the change (q = 0: squares 0, 1 and 3)."""
    facts = regionfacts.RegionFacts()
    nb, r, r2 = _two_regions(facts, 0)
    full = facts.facts_for([r, r2])
    with facts.sliced({8}):
        part = facts.facts_for([r, r2])
    s = z3.Solver()
    s.add(*full)
    assert s.check(z3.Not(z3.And(part))) == z3.unsat
    assert 0 < sum(len(f.sexpr()) for f in part) < sum(len(f.sexpr()) for f in full) / 2
    assert facts.squares_in(part) == {0, 1, 3, 8}
    assert facts.squares_in(full) == set(range(9))


def test_a_sliced_query_still_proves_its_own_squares_rows():
    """With square 0 added, square 8's component grows or stays: proved from 8's rows alone;
    and what needs another square's rows (5 with 8 means 8 with 5's size) is not."""
    facts = regionfacts.RegionFacts()
    nb, r, r2 = _two_regions(facts, 0)
    with facts.sliced({8}):
        part = facts.facts_for([r, r2])
    s = z3.Solver()
    s.add(*part, z3.Not(r.ok[0]), r2.ok[0], r.ok[8])
    assert s.check(r2.size(8) < r.size(8)) == z3.unsat
    assert s.check(z3.And(r2.same(5, 2), r2.size(5) != r2.size(2))) == z3.sat


def test_slicing_decides_the_castle_steps_with_the_same_verdicts(castles, monkeypatch):
    """The castle fixture's step, each conjunct on its own (as on a large board, where z3
    gives up on them together): sliced queries prove conjuncts, and the verdicts are those
    with no slicing at all; the merging spec is still refuted with it (above)."""
    from solver.prover import tiers as pv
    from solver.engine.symbolic import Unknown
    real, real_step = pv._sliced_proof, pv.step
    proved = []

    def counting(*a, **k):
        got = real(*a, **k)
        proved.append(got)
        return got

    def alone(local, guard, goal, conj, name, items, *a, **k):
        if len(items) > 1:
            raise Unknown("one at a time")
        return real_step(local, guard, goal, conj, name, items, *a, **k)
    monkeypatch.setattr(pv, "step", alone)
    monkeypatch.setattr(pv, "_sliced_proof", counting)
    assert _status(castles, region_facts=True) == {"low": "inductive", "apart": "inductive"}
    assert sum(proved) >= 5
    monkeypatch.setattr(pv, "_sliced_proof", lambda *a, **k: False)
    assert _status(castles, region_facts=True) == {"low": "inductive", "apart": "inductive"}
