"""Exact decisions of small linear systems without an LP (lp.py asks here first).

A *group* is a set of at most three equalities over the same unknowns, every one of them
non-negative (a row ``-c·x + c0 ≤ 0`` with ``c > 0``, ``c0 ≥ 0`` among the rows), one of the
equalities (or its negation) having a positive coefficient on each of them.  That row
normalises the others: with ``a0·x = b0`` and ``b0 > 0``, the weights ``λ_j = a0_j x_j / b0``
are a convex combination, and the group has a solution exactly when the point
``q = (b_i / b0)`` lies in the convex hull of the points ``p_j = (a_ij / a0_j)`` — an
interval (two rows) or a polygon (three rows), tested here in integers.  (A body resting on
bearing points is such a group: its force row normalises the two moment rows, and it can be
held exactly when its centre of mass lies over the hull of the points.)

Dropping rows keeps every solution, so a group without a solution refutes the whole system;
a system that is nothing but one group (and its sign rows) is decided by it either way."""
from __future__ import annotations

from math import lcm

STATS = {"refuted": 0, "decided": 0, "reduced": 0}


def reduce(rows):
    """For rows ``(kind, ((var, coef), ...))`` (var -1 the constant, the row meaning
    ``Σ coef·var (kind) 0``, kind "le", "lt" or "eq", integer coefficients): False when the
    groups found have no solution; True when the equalities fall apart into groups that all
    have one and every other row is a sign row ``x ≥ 0``; when only some do, the smaller
    system of rows left, which has a solution exactly when the rows do; None when this
    cannot tell.

    A group over the unknowns V is taken apart from the rest by row operations on the
    equalities (which keep the solutions): an equality r that reads some of V must read
    them as a multiple of one of the group's rows g, and ``g_j·r - r_j·g`` replaces it
    (a body resting on one other: the load it puts on the one below is fixed by its own
    rows, so the lower body's rows read its weight and moments instead of its forces)."""
    nonneg: set = set()
    signs = 0                       # rows that say x ≥ 0 and nothing else
    others = 0
    parsed, by_id = _PARSED, _BY_ID
    if len(parsed) >= _CAP or len(by_id) >= _CAP:   # never during a call: it reads them
        # The rows' numbers name them in the groups' and eliminations' keys: all go together.
        forget()
    # The equalities by their numbers (`_parse`): the sets and keys below hash and compare
    # small ints, where the rows themselves walk all their terms at every hash.  A number
    # names one row content while the tables live, so equal rows are one row, as before.
    info_of: dict = {}              # number -> the row's parse
    live: set = set()
    n_eqs = 0
    for kind, t in rows:
        if kind == "eq":
            info = _info(t, parsed, by_id)
            if info is False:
                return None         # integers only (the interpreter's rows are)
            info_of[info[3]] = info
            live.add(info[3])
            n_eqs += 1
            continue
        others += 1
        if kind == "le":
            # -c·x + c0 ≤ 0 with c > 0: x ≥ c0 / c, so x ≥ 0 when c0 ≥ 0.
            if len(t) == 1:
                if t[0][0] != -1 and t[0][1] < 0:
                    nonneg.add(t[0][0])
                    signs += 1
            elif len(t) == 2 and t[0][0] == -1 and t[0][1] >= 0 and t[1][1] < 0:
                nonneg.add(t[1][0])
    exact = others == signs
    # The widest rows first (pop takes the last): a body's force row reads all its bearing
    # points, its moment rows only some, and its group is the force row's.
    todo = sorted((n for n in live if info_of[n][2] and info_of[n][0] <= nonneg),
                  key=lambda n: len(info_of[n][0]))
    while todo:
        n0 = todo.pop()
        if n0 not in live:
            continue
        vs = info_of[n0][0]
        group, near = [], []
        for n in live:
            ws = info_of[n][0]
            if ws <= vs:
                group.append(n)
            elif not ws.isdisjoint(vs):
                near.append(n)
        if len(group) > 3:
            continue
        group.sort(key=lambda n: info_of[n][4])     # by content, as the rows were
        gkey = tuple(group)
        res = _GROUPS.get(gkey, _GROUPS)
        if res is _GROUPS:
            res = _group(vs, [info_of[n][1] for n in group])
            if len(_GROUPS) >= _CAP:
                _GROUPS.clear()
            _GROUPS[gkey] = res
        if res is False:            # a relaxation of the system has no solution
            STATS["refuted"] += 1
            return False
        if res is None:
            continue
        new = []
        for n in near:
            ekey = (n, gkey)
            r = _ELIMINATED.get(ekey, _ELIMINATED)
            if r is _ELIMINATED:
                r = _eliminate(info_of[n][1], [info_of[g][1] for g in group], vs)
                if r is not None:
                    r = tuple(sorted(r.items()))
                if len(_ELIMINATED) >= _CAP:
                    _ELIMINATED.clear()
                _ELIMINATED[ekey] = r
            if r is None:
                break
            new.append(r)
        else:
            # The group stands apart, and has a solution: it goes, and the rows it touched
            # are replaced by their eliminated forms.
            live.difference_update(group)
            live.difference_update(near)
            for r in new:
                if len(r) == 1 and r[0][0] == -1:   # c0 = 0 with c0 not 0
                    STATS["refuted"] += 1
                    return False
                if not r:
                    continue
                info = _info(r, parsed, by_id)
                info_of[info[3]] = info
                live.add(info[3])
                if info[2] and info[0] <= nonneg:
                    todo.append(info[3])
    if not exact:
        return None
    if not live:
        STATS["decided"] += 1
        return True
    if len(live) == n_eqs:
        return None
    # What is left, with the sign rows of its unknowns: the groups taken apart have
    # solutions and share no unknown with it, so it decides the system.
    STATS["reduced"] += 1
    vs = set().union(*(info_of[n][0] for n in live))
    out = [("eq", info_of[n][4]) for n in live]
    out += [("le", ((v, -1),)) for v in vs if v in nonneg]
    return tuple(sorted(out))


# Remembered per row and per group (their content): between two systems that differ in a
# few rows, the others are parsed, tested and eliminated once.  A row's parse carries a
# number, which names it in the keys of the groups and eliminations (a tuple of ints hashes
# in a few steps; the rows themselves walk all their terms): the three are emptied together.
_CAP = 1 << 16
_PARSED: dict = {}
_GROUPS: dict = {}
_ELIMINATED: dict = {}
# The same parses by the row's identity: id(row) -> (row, parse).  lp.py hands the same row
# objects to system after system (its numbered forms), and `_ELIMINATED` its own results, so
# most rows are found here without hashing their terms.  The row is kept with its entry, so
# its id is not reused while the entry lives.
_BY_ID: dict = {}


def forget() -> None:
    """Drop every remembered row and group."""
    _PARSED.clear()
    _BY_ID.clear()
    _GROUPS.clear()
    _ELIMINATED.clear()


def _info(t, parsed: dict, by_id: dict):
    """The parse of the equality ``t`` (`_parse`), remembered by identity and by content."""
    hit = by_id.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    info = parsed.get(t)
    if info is None:
        info = parsed[t] = _parse(t, len(parsed))
    by_id[id(t)] = (t, info)
    return info


def _parse(t, number: int):
    """(the unknowns, the row as a dict, whether it has one sign, ``number``: the row's name
    in `reduce` and in the keys of `_GROUPS` and `_ELIMINATED`, the row) of an equality; False
    when a coefficient is not an integer."""
    d = dict(t)
    for c in d.values():
        if type(c) is not int:
            return False
    vs = frozenset([v for v in d if v != -1])
    ps = [d[v] > 0 for v in vs]
    return vs, d, bool(ps) and (all(ps) or not any(ps)), number, t


def _eliminate(r: dict, group: list, vs: set):
    """``r`` without the unknowns ``vs``, by a multiple of one of the group's rows that reads
    them as r does; None when none does."""
    j = next(v for v in r if v in vs)
    for g in group:
        gj = g.get(j, 0)
        if gj == 0:
            continue
        rj = r[j]
        out: dict = {}
        for v, c in r.items():
            out[v] = gj * c
        for v, c in g.items():
            out[v] = out.get(v, 0) - rj * c
        out = {v: c for v, c in out.items() if c}
        if not any(v in vs for v in out):
            return out
    return None


def _group(vs, eqs):
    """Whether ``Σ a_ij x_j + c_i = 0`` (each of ``eqs``, a dict var -> coef) has a solution
    with x ≥ 0; None when no row normalises the group."""
    order = sorted(vs)
    rows = [([d.get(v, 0) for v in order], -d.get(-1, 0)) for d in eqs]
    norm = None
    for i, (a, b) in enumerate(rows):
        if all(c > 0 for c in a):
            norm = i
            break
        if all(c < 0 for c in a):
            rows[i] = ([-c for c in a], -b)
            norm = i
            break
    if norm is None:
        return None
    a0, b0 = rows[norm]
    rest = [r for i, r in enumerate(rows) if i != norm]
    if b0 < 0:
        return False
    if b0 == 0:     # x = 0 is the only solution of a0·x = 0 with x ≥ 0
        return all(b == 0 for _, b in rest)
    if not rest:
        return True
    # Scaled by L·b0 > 0 (L the lcm of a0), the points and q are integers: point j is
    # (a_ij · (L / a0_j) · b0)_i.
    L = lcm(*a0)
    scale = [L // c * b0 for c in a0]
    if len(rest) == 1:
        (a, b), = rest
        xs = [c * m for c, m in zip(a, scale)]
        return min(xs) <= b * L <= max(xs)
    if len(rest) == 2:
        (a, b), (a2, b2) = rest
        pts = set(zip([c * m for c, m in zip(a, scale)], [c * m for c, m in zip(a2, scale)]))
        return _in_hull(sorted(pts), (b * L, b2 * L))
    pts = {tuple(a[j] * scale[j] for a, _ in rest) for j in range(len(order))}
    return _in_hull(sorted(pts), tuple(b * L for _, b in rest))


def _cross(o, a, b) -> int:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _in_hull(pts: list, q: tuple) -> bool:
    """Whether the integer point q lies in the convex hull of the (sorted, distinct) integer
    points (its boundary included)."""
    if len(pts) == 1:
        return pts[0] == q
    lower: list = []
    for p in pts:
        while len(lower) >= 2 and _cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper: list = []
    for p in reversed(pts):
        while len(upper) >= 2 and _cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    hull = lower[:-1] + upper[:-1]      # counter-clockwise, no three collinear
    if len(hull) == 2:                  # every point on one segment
        a, b = hull
        return _cross(a, b, q) == 0 and min(a[0], b[0]) <= q[0] <= max(a[0], b[0]) \
            and min(a[1], b[1]) <= q[1] <= max(a[1], b[1])
    n = len(hull)
    return all(_cross(hull[i], hull[(i + 1) % n], q) >= 0 for i in range(n))
