"""cone.py decides small linear systems without an LP: every answer it gives (a refutation,
a decision, or the smaller system it leaves) must be z3's exact answer on the whole system.

The systems are drawn in the shape the statics of a stack produce, and off it: bodies with
non-negative forces at bearing points (a force row, two moment rows), some resting on
another (the lower body's rows read the upper's forces negated, as a tower's do, or read
only some of them), and now and then a stray row (an upper bound, a strict row, a
non-integer or a free unknown) that keeps cone.py from deciding."""
from __future__ import annotations

from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.engine import cone, lp


@st.composite
def stacks(draw):
    bodies = draw(st.integers(1, 4))
    rows: list = []
    eqs: list = []          # per body: its three rows as dicts
    nvar = 0
    for b in range(bodies):
        points = draw(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)),
                               min_size=1, max_size=5))
        vs = list(range(nvar, nvar + len(points)))
        nvar += len(points)
        weight = draw(st.integers(0, 4))
        cx, cy = draw(st.integers(-1, 9)), draw(st.integers(-1, 9))
        body = [{v: 1 for v in vs}, {v: 2 * x for v, (x, _) in zip(vs, points)},
                {v: 2 * y for v, (_, y) in zip(vs, points)}]
        body[0][-1] = -weight
        body[1][-1] = -weight * cx
        body[2][-1] = -weight * cy
        if b and draw(st.booleans()):
            # Resting on an earlier body: its rows carry this one's forces, negated (all of
            # them, or only some: resting on two bodies).
            below = eqs[draw(st.integers(0, b - 1))]
            some = draw(st.booleans())
            for r_up, r_down in zip(body, below):
                for k, v in enumerate(vs):
                    if some and k % 2:
                        continue
                    r_down[v] = r_down.get(v, 0) - r_up.get(v, 0)
        eqs.append(body)
        for v in vs:
            rows.append(("le", {v: -1}))
    for body in eqs:
        for r in body:
            rows.append(("eq", r))
    stray = draw(st.sampled_from(["none", "none", "upper", "strict", "fraction", "free"]))
    if stray == "upper":
        rows.append(("le", {0: 1, -1: -draw(st.integers(0, 3))}))
    elif stray == "strict":
        rows.append(("lt", {0: -1}))
    elif stray == "fraction":
        rows.append(("eq", {0: Fraction(1, 2), -1: Fraction(-1, 4)}))
    elif stray == "free":
        rows.append(("eq", {nvar: 1, 0: 1, -1: -1}))
    return rows


def _key(rows):
    """The rows that read an unknown, in lp.decide's form."""
    return tuple(sorted((kind, tuple(sorted((v, c) for v, c in t.items() if c)))
                        for kind, t in rows if any(c for v, c in t.items() if v != -1)))


def _constants_hold(rows) -> bool:
    """Whether the rows that read no unknown hold (c0 ≤ 0, c0 = 0)."""
    return all((kind == "le" and t.get(-1, 0) <= 0) or (kind == "eq" and t.get(-1, 0) == 0)
               for kind, t in rows if not any(c for v, c in t.items() if v != -1))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stacks())
def test_cone_agrees_with_z3(rows):
    key = _key(rows)
    want = _constants_hold(rows) and lp._decide_z3(key)
    got = cone.reduce(key)
    if got is True or got is False:
        assert got == lp._decide_z3(key)
    elif got is not None:
        assert len(got) < len(key)
        assert lp._decide_z3(got) == lp._decide_z3(key)
    lp.forget()
    assert lp.decide([(True, kind, t) for kind, t in rows]) == want


def test_cone_decides_and_refutes_a_stack():
    """A body of weight 2 on points x = 0 and x = 2 (doubled: 0 and 4), on another resting
    on the base at x = 0..4: it stands with its centre at 1 (2 doubled), not at 5."""
    def system(centre):
        up = [{0: 1, 1: 1, -1: -2}, {0: 0, 1: 4, -1: -2 * centre}]
        down = [{2: 1, 3: 1, 0: -1, 1: -1, -1: -1}, {2: 0, 3: 8, 0: 0, 1: -4, -1: -4}]
        return _key([("le", {v: -1}) for v in range(4)] + [("eq", r) for r in up + down])
    before = dict(cone.STATS)
    cone.forget()
    assert cone.reduce(system(2)) is True
    assert cone.reduce(system(5)) is False
    assert lp._decide_z3(system(2)) and not lp._decide_z3(system(5))
    assert cone.STATS["decided"] > before["decided"]
    assert cone.STATS["refuted"] > before["refuted"]


def test_in_hull_boundary_and_degenerate_hulls():
    square = sorted({(0, 0), (4, 0), (0, 4), (4, 4)})
    assert cone._in_hull(square, (2, 2))
    assert cone._in_hull(square, (4, 2))          # on an edge
    assert not cone._in_hull(square, (5, 2))
    line = sorted({(0, 0), (2, 2), (4, 4)})
    assert cone._in_hull(line, (1, 1)) and not cone._in_hull(line, (1, 2))
    assert not cone._in_hull(line, (5, 5))
    assert cone._in_hull([(3, 3)], (3, 3)) and not cone._in_hull([(3, 3)], (3, 4))


class _Row(tuple):
    """A row whose hash is counted: how often its terms are walked."""
    hashes = 0

    def __hash__(self):
        _Row.hashes += 1
        return super().__hash__()


def test_a_row_met_again_is_found_by_identity():
    """lp.py hands the same row objects to system after system: reduce finds their parse
    by identity, without hashing their terms again, and decides as it did the first time;
    a row equal to one met but another object is still found by its content."""
    def system(centre):
        up = [{0: 1, 1: 1, -1: -2}, {0: 0, 1: 4, -1: -2 * centre}]
        down = [{2: 1, 3: 1, 0: -1, 1: -1, -1: -1}, {2: 0, 3: 8, 0: 0, 1: -4, -1: -4}]
        return tuple((kind, _Row(t) if kind == "eq" else t) for kind, t in _key(
            [("le", {v: -1}) for v in range(4)] + [("eq", r) for r in up + down]))
    cone.forget()
    rows = system(2)
    assert cone.reduce(rows) is True
    _Row.hashes = 0
    assert cone.reduce(rows) is True
    assert _Row.hashes == 0
    again = system(2)               # equal rows, other objects: parsed once, by content
    assert cone.reduce(again) is True
    assert len({info[3] for info in cone._PARSED.values()}) == len(cone._PARSED)
    assert cone.reduce(system(5)) is False
