"""The concrete decision of an `exists real` (linear.py): its rows to HiGHS (or SciPy's
`linprog`), the answer confirmed exactly: a feasible point rationalised and checked in
`Fraction`s, an infeasibility by a Farkas certificate; anything else decided by Z3's exact
simplex."""
from __future__ import annotations

import functools
import sys
from fractions import Fraction
from math import gcd

import z3

from . import cone

_DECIDED: dict = {}
_DECIDED_CAP = 4096
STATS = {"lp": 0, "cached": 0, "exact_point": 0, "farkas": 0, "z3": 0}


def decide(rows) -> bool:
    """Whether the (concrete) rows have a real solution.

    Exactly, and without an LP where the geometry decides: cone.py takes apart the groups
    of rows that a convex-hull test settles (a body resting on bearing points), and
    refutes the system, decides it, or leaves a smaller system for HiGHS."""
    live = []
    seen = _ROWS
    if len(seen) >= _ROWS_CAP or len(_FORMS) >= _FORMS_CAP:
        # The numbers name the forms in the remembered answers' keys: all go together.
        seen.clear()
        _FORMS.clear()
        _FORM_LIST.clear()
        _DECIDED.clear()
    for row in rows:
        # A row's normal form by the row's identity: a remembered `let` hands the same rows
        # to every system its body is part of (the bodies below a new top one).  The row is
        # kept with it, so its id is not reused while the entry lives.
        hit = seen.get(id(row))
        if hit is None or hit[0] is not row:
            n = _normal(row)
            if n:
                # A form is named by a number: a system's key is then a sorted tuple of
                # numbers, sorted and hashed without walking every row's terms.
                i = _FORMS.get(n)
                if i is None:
                    i = _FORMS[n] = len(_FORM_LIST)
                    _FORM_LIST.append(n)
                n = i
            hit = seen[id(row)] = (row, n)
        n = hit[1]
        if n is None:
            continue
        if n is False:
            return False
        live.append(n)
    if not live:
        return True
    key = tuple(sorted(live))
    hit = _DECIDED.get(key)
    if hit is not None:
        STATS["cached"] += 1
        return hit
    forms = _FORM_LIST
    key_rows = tuple([forms[i] for i in key])
    res = cone.reduce(key_rows)
    if res is None:
        res = _decide_lp(key_rows)
    elif res is not True and res is not False:
        # What is left is often left again (the same lower bodies under another top one).
        left = res
        res = _DECIDED.get(left)
        if res is None:
            res = _DECIDED[left] = _decide_lp(left)
        else:
            STATS["cached"] += 1
    if len(_DECIDED) >= _DECIDED_CAP:
        _DECIDED.clear()
    _DECIDED[key] = res
    return res


# Rows are never changed once made (linear.py builds new ones), so a row's normal form is
# remembered by its identity: id(row) -> (row, `_normal(row)`).
_ROWS: dict = {}
_ROWS_CAP = 1 << 13     # bounded: each entry keeps its row alive (a few hundred systems)
# Each normal form met has a number (`_FORMS`; `_FORM_LIST` the other way): `decide`'s keys
# are tuples of them.  Numbers are dropped with every answer remembered by them.
_FORMS: dict = {}
_FORM_LIST: list = []
_FORMS_CAP = 1 << 16


def _normal(row):
    """``(kind, ((var, coef), ...))`` of a row ``(guard, kind, {var: coef})``, its zero
    coefficients dropped; None when it always holds (or its guard is false), False when it
    never does."""
    g, kind, t = row
    if not g:
        return None
    if 0 in t.values():         # (a test at C speed: most rows have no zero coefficient)
        t = {v: c for v, c in t.items() if c}
    if len(t) == 0 or (len(t) == 1 and -1 in t):
        c0 = t.get(-1, 0)
        if (kind == "le" and c0 > 0) or (kind == "lt" and c0 >= 0) or \
                (kind == "eq" and c0 != 0):
            return False
        return None
    # By the unknowns alone (they are distinct): the pairs in the order of sorted items.
    return kind, tuple([(v, t[v]) for v in sorted(t)])


def forget() -> None:
    """Drop every remembered answer."""
    _DECIDED.clear()
    _ROWS.clear()
    _FORMS.clear()
    _FORM_LIST.clear()
    cone.forget()


def _decide_lp(rows) -> bool:
    if _highs() is not None and not any(k == "lt" for k, _ in rows):
        res = _decide_highs(rows)
        if res is not None:
            return res
    return _decide_linprog(rows)


def _silently(make):
    """``make()`` with the process's standard output shut: highspy 1.16 prints its banner from
    C++ when a solver is made, before any option can turn output off, and the CLI's stdout is
    JSON."""
    import os
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 1)
            return make()
        finally:
            try:                     # what C's stdio still buffers goes to /dev/null too
                import ctypes
                ctypes.CDLL(None).fflush(None)
            except (OSError, AttributeError):
                pass
            os.close(null)
    finally:
        os.dup2(saved, 1)
        os.close(saved)


@functools.cache
def _highs():
    """One reused `highspy.Highs` (None without highspy): SciPy's `linprog` wraps the same
    solver, but its checks and conversions cost more than the small LPs themselves, and it
    gives no dual ray, so an infeasibility needed a second LP to be certified."""
    try:
        import highspy
    except ImportError:
        return None
    h = _silently(highspy.Highs)
    h.setOptionValue("output_flag", False)
    # Presolve can settle infeasibility without a ray; these LPs are small.
    h.setOptionValue("presolve", "off")
    return highspy, h


def _columns(rows):
    """The rows in column form for an LP: the variables read (sorted) and their columns, the
    bounds that single-variable ≤ rows put on a column (``lo``, ``hi``; HiGHS keeps bounds out
    of the matrix), those rows per column as (c, c0) for c·x_j + c0 ≤ 0, and the other rows
    as (kind, [(column, c)], c0)."""
    vars_ = sorted({v for _, t in rows for v, _ in t if v != -1})
    col = {v: i for i, v in enumerate(vars_)}
    n = len(vars_)
    lo: list = [None] * n
    hi: list = [None] * n
    bound_rows: list = [[] for _ in range(n)]
    mrows = []
    for kind, t in rows:
        c0 = 0
        terms = []
        for v, c in t:
            if v == -1:
                c0 = c
            else:
                terms.append((col[v], c))
        if kind == "le" and len(terms) == 1:
            j, c = terms[0]
            bound_rows[j].append((c, c0))
            b = -c0 * c if c in (1, -1) else Fraction(-c0, c)
            if c > 0:
                hi[j] = b if hi[j] is None else min(hi[j], b)
            else:
                lo[j] = b if lo[j] is None else max(lo[j], b)
            continue
        mrows.append((kind, terms, c0))
    return vars_, col, lo, hi, bound_rows, mrows


# The scale of the first, integer check of HiGHS's answers: lcm(1..16).  A vertex of these
# small systems has small denominators, so its rounding to a multiple of 1/_SCALE is usually
# the vertex itself; when it is not, the Fraction path (limit_denominator) tries.
_SCALE = 720720


def _decide_highs(rows):
    """Decide non-strict rows with HiGHS; confirm a point exactly, or an infeasibility by the
    dual ray as a Farkas certificate, exactly.  None when neither survives exact arithmetic."""
    import numpy as np
    highspy, h = _highs()
    vars_, col, lo, hi, bound_rows, mrows = _columns(rows)
    n = len(vars_)
    for j in range(n):
        if lo[j] is not None and hi[j] is not None and lo[j] > hi[j]:
            return None
    inf = highspy.kHighsInf
    start, index, value = [0], [], []
    rlo, rhi = [], []
    for kind, terms, c0 in mrows:
        for j, c in terms:
            index.append(j)
            value.append(c)
        start.append(len(index))
        rhi.append(-c0)
        rlo.append(-c0 if kind == "eq" else -inf)
    h.clearModel()
    # num_col, num_row, num_nz, a_format (2: row-wise), sense (1: minimise), offset, costs,
    # column bounds, row bounds, the matrix, every column continuous.
    passed = h.passModel(n, len(mrows), len(index), 2, 1, 0.0, np.zeros(n),
                np.array([-inf if a is None else float(a) for a in lo], dtype=np.float64),
                np.array([inf if b is None else float(b) for b in hi], dtype=np.float64),
                np.array(rlo, dtype=np.float64), np.array(rhi, dtype=np.float64),
                np.array(start, dtype=np.int32), np.array(index, dtype=np.int32),
                np.array(value, dtype=np.float64), np.zeros(n, dtype=np.int32))
    if passed != highspy.HighsStatus.kOk:
        return None
    h.run()
    status = h.getModelStatus()
    STATS["lp"] += 1
    if status == highspy.HighsModelStatus.kOptimal:
        x = h.getSolution().col_value
        if _holds_scaled(rows, col, x) or _holds(
                rows, col, [Fraction(v).limit_denominator(10 ** 6) for v in x]):
            STATS["exact_point"] += 1
            return True
        return None
    if status == highspy.HighsModelStatus.kInfeasible:
        _, has_ray, ray = h.getDualRay()
        if has_ray and _ray_certifies(mrows, bound_rows, ray):
            STATS["farkas"] += 1
            return False
    return None


def _ray_certifies(mrows, bound_rows, ray) -> bool:
    """Whether the dual ray (either sign: HiGHS's convention is not ours), rationalised and
    completed by the column bounds, is a Farkas certificate: y ≥ 0 on ≤ rows, Σ y_r a_r = 0,
    Σ y_r β_r < 0 (β_r = -const_r), checked exactly.  The conditions are homogeneous in y, so
    the ray is tried first scaled to integers (by `_SCALE`), then rationalised."""
    big = max((abs(v) for v in ray), default=0.0)
    if big == 0:
        return False
    try:
        scaled = [round(v / big * _SCALE) for v in ray]
    except (OverflowError, ValueError):     # not a finite ray
        return False
    if _certifies(mrows, bound_rows, scaled):
        return True
    return _certifies(mrows, bound_rows,
                      [Fraction(v / big).limit_denominator(10 ** 6) for v in ray])


def _certifies(mrows, bound_rows, ys) -> bool:
    """`_ray_certifies` for one exact (int or Fraction) ray ``ys``, in either sign."""
    for sign in (1, -1):
        y = [sign * v for v in ys]
        if any(kind != "eq" and w < 0 for (kind, _, _), w in zip(mrows, y)):
            continue
        s = [0] * len(bound_rows)
        total = 0
        for (kind, terms, c0), w in zip(mrows, y):
            if w:
                total -= c0 * w
                for j, c in terms:
                    s[j] += c * w
        ok = True
        for j, sj in enumerate(s):
            if sj == 0:
                continue
            # A bound row c·x_j + c0 ≤ 0 with weight w = -s_j / c ≥ 0 cancels s_j; take the
            # one that lowers Σ y β most (its gain -w·c0 = s_j·c0 / c).
            best = None
            for c, c0 in bound_rows[j]:
                if (c > 0) == (sj < 0):
                    gain = sj * c0 * c if c in (1, -1) else Fraction(sj * c0, c)
                    best = gain if best is None else min(best, gain)
            if best is None:
                ok = False
                break
            total += best
        if ok and total < 0:
            return True
    return False


def _decide_linprog(rows) -> bool:
    import numpy as np
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix
    STATS["lp"] += 1
    vars_, col, lo, hi, _, mrows = _columns(rows)
    strict = any(k == "lt" for k, _ in rows)
    n = len(vars_) + (1 if strict else 0)
    if strict:
        lo.append(None)
        hi.append(None)
    ub = ([], [], [])   # data, row, column
    eq = ([], [], [])
    bub, beq = [], []
    for kind, terms, c0 in mrows:
        if kind == "eq":
            m, rhs, r = eq, beq, len(beq)
        else:
            m, rhs, r = ub, bub, len(bub)
            if kind == "lt":
                terms.append((n - 1, 1))   # a·x + s ≤ -c0 with the margin s maximised
        for j, c in terms:
            m[0].append(float(c))
            m[1].append(r)
            m[2].append(j)
        rhs.append(float(-c0))
    for j in range(len(vars_)):
        if lo[j] is not None and hi[j] is not None and lo[j] > hi[j]:
            return _decide_z3(rows)
    bounds = [(None if a is None else float(a), None if b is None else float(b))
              for a, b in zip(lo, hi)]
    cost = np.zeros(n)
    if strict:
        cost[-1] = -1.0
        bounds[-1] = (0, 1)
    a_ub = csr_matrix((ub[0], (ub[1], ub[2])), shape=(len(bub), n)) if bub else None
    a_eq = csr_matrix((eq[0], (eq[1], eq[2])), shape=(len(beq), n)) if beq else None
    res = linprog(cost, A_ub=a_ub, b_ub=bub or None, A_eq=a_eq, b_eq=beq or None,
                  bounds=bounds, method="highs")
    if res.status == 0 and (not strict or res.x[-1] > 1e-9):
        point = [Fraction(x).limit_denominator(10 ** 6) for x in res.x[:len(vars_)]]
        if _holds(rows, col, point):
            STATS["exact_point"] += 1
            return True
    if res.status == 2 and not strict and _farkas(rows, col):
        STATS["farkas"] += 1
        return False
    # A point or a certificate that does not survive exact arithmetic: z3's exact simplex
    # decides.
    return _decide_z3(rows)


def _farkas(rows, col) -> bool:
    """Confirm infeasibility exactly: find y (≥ 0 on ≤ rows) with Σ y_r a_r = 0 and
    Σ y_r β_r < 0 (β_r = -const_r) by a second LP over the box |y| ≤ 1, then check the
    rationalised y in integers."""
    import numpy as np
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix
    data, ri, ci = [], [], []
    beta = []
    bounds = []
    for r, (kind, t) in enumerate(rows):
        c0 = 0
        for v, c in t:
            if v == -1:
                c0 = c
            else:
                data.append(float(c))
                ri.append(col[v])
                ci.append(r)
        beta.append(float(-c0))
        bounds.append((0, 1) if kind == "le" else (-1, 1))
    a = csr_matrix((data, (ri, ci)), shape=(len(col), len(rows)))
    res = linprog(np.array(beta), A_eq=a, b_eq=np.zeros(len(col)), bounds=bounds,
                  method="highs")
    if res.status != 0 or res.fun >= -1e-9:
        return False
    y = [Fraction(v).limit_denominator(10 ** 6) for v in res.x]
    den = 1
    for v in y:
        den = den * v.denominator // gcd(den, v.denominator)
    yn = [v.numerator * (den // v.denominator) for v in y]
    sums = [0] * len(col)
    total = 0
    for (kind, t), w in zip(rows, yn):
        if kind == "le" and w < 0:
            return False
        for v, c in t:
            if v == -1:
                total -= c * w
            else:
                sums[col[v]] += c * w
    return total < 0 and not any(sums)


def _holds(rows, col, point) -> bool:
    """Check the rows exactly at a rational point, in integers over a common denominator."""
    den = 1
    for x in point:
        den = den * x.denominator // gcd(den, x.denominator)
    return _holds_at(rows, col, den, [x.numerator * (den // x.denominator) for x in point])


def _holds_scaled(rows, col, x) -> bool:
    """Check the rows exactly at the float point ``x`` rounded to multiples of 1/`_SCALE`, in
    integers; False when that point misses a row (or ``x`` is not finite)."""
    d = _SCALE
    try:
        num = [round(v * d) for v in x]
    except (OverflowError, ValueError):
        return False
    return _holds_at(rows, col, d, num)


def _holds_at(rows, col, den: int, num: list) -> bool:
    """Whether the rows hold at the point ``num[i] / den``, in integers (the constant term,
    unknown -1, times ``den``)."""
    for kind, t in rows:
        s = 0
        for v, c in t:
            s += c * den if v == -1 else c * num[col[v]]
        if (kind == "le" and s > 0) or (kind == "lt" and s >= 0) or (kind == "eq" and s != 0):
            return False
    return True


def _decide_z3(rows) -> bool:
    STATS["z3"] += 1
    xs: dict = {}
    s = z3.SolverFor("QF_LRA")
    s.set("random_seed", 0)
    for kind, t in rows:
        terms = []
        for v, c in t:
            if v == -1:
                terms.append(z3.RealVal(c))
            else:
                x = xs.get(v)
                if x is None:
                    x = xs[v] = z3.Real(f"x{v}")
                terms.append(c * x)
        lhs = z3.Sum(terms) if len(terms) > 1 else terms[0]
        s.add(lhs <= 0 if kind == "le" else lhs < 0 if kind == "lt" else lhs == 0)
    r = s.check()
    if r == z3.unknown and s.reason_unknown() == "interrupted from keyboard":
        raise KeyboardInterrupt
    if r == z3.unknown:
        raise RuntimeError(f"z3 could not decide a linear system: {s.reason_unknown()}")
    return r == z3.sat
