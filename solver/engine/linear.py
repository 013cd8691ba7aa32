"""`exists real f[k in K where g]: body` — real unknowns under linear constraints, in both
value domains of the one evaluator.

The body is lowered, for one state, to *rows*: ``(guard, kind, term)`` meaning "if guard then
term ≤ 0 / = 0 / < 0", where a term is a sum of monomials ``coef · f[var]`` (``var`` = -1 for
the constant).  The lowering is written once; a `Lin` domain says how terms are held:

* concretely (`Conc`), guards are Python bools and a term is a dict ``var -> Fraction-free
  int coefficient``; the rows go to HiGHS (SciPy's `linprog`), and the answer is confirmed
  exactly: a feasible point is rationalised and checked in `Fraction`s, anything else is
  decided by Z3's exact simplex;
* symbolically (`Sym`), a guard or coefficient may depend on the state, so a term is a list of
  guarded monomials with integer coefficients (a symbolic integer is split over its interval,
  as `int * int` is), which keeps every product of a coefficient and an unknown linear.  The
  result is a fresh Bool ``c`` with the side condition ``(c → primal(x)) ∧ (¬c → dual(y))``:
  the dual is the Farkas (Motzkin) certificate of infeasibility, so exactly one side is
  satisfiable and ``c`` is the truth of the `exists`, in any polarity, with no quantifier.
  Side conditions are added to a solver by `symbolic.check` for the ``c`` its formula uses.
"""
from __future__ import annotations

import itertools
import sys
from contextlib import contextmanager
from fractions import Fraction
from math import gcd
from typing import Callable

import z3
from z3.z3 import _to_expr_ref as _expr_ref

from . import domains as dz
from ..prover import regionfacts
from . import fixinc
from ..lang import ir
from ..lang.irwalk import has_real, nodes
from ..lang.types import BagT, BoolT, EnumT, IntT, MapT, RecordT, SetT, finite

Fn = Callable


# ---- the two term domains ---------------------------------------------------------------------

class Conc:
    """Concrete terms: ``{var: coef}``, var -1 the constant; guards are bools."""

    symbolic = False

    @staticmethod
    def const(v, t):
        return {-1: v} if v else {}

    @staticmethod
    def var(active, o):
        return {o: 1} if active[o] else {}

    @staticmethod
    def add(a, b, sign=1):
        out = dict(a)
        for k, c in b.items():
            out[k] = out.get(k, 0) + sign * c
        return out

    @staticmethod
    def accumulate(acc, b):
        """``acc + b``, reusing ``acc`` (a sum's own accumulator, never shared)."""
        for k, c in b.items():
            acc[k] = acc.get(k, 0) + c
        return acc

    @staticmethod
    def scale(a, c, t):
        if c == 0:
            return {}
        return {k: c * v for k, v in a.items()}

    @staticmethod
    def guard(a, g):
        return a if g else {}


class Sym:
    """Symbolic terms: a list of ``(guard, int coef, var)``; guards are bools or z3 Bools."""

    symbolic = True

    @staticmethod
    def const(v, t):
        if not dz.is_sym(v):
            return [(True, v, -1)] if v else []
        lo, hi = (t.lo, t.hi) if isinstance(t, IntT) else (0, 0)
        return [(v == k, k, -1) for k in range(lo, hi + 1) if k]

    @staticmethod
    def var(active, o):
        if not dz.is_sym(o):
            a = active[o]
            return [] if a is False else [(a, 1, o)]
        return [(dz.and_(o == i, a), 1, i) for i, a in enumerate(active) if a is not False]

    @staticmethod
    def add(a, b, sign=1):
        if sign == 1:
            return a + b
        return a + [(g, -c, v) for g, c, v in b]

    @staticmethod
    def accumulate(acc, b):
        acc.extend(b)
        return acc

    @staticmethod
    def scale(a, c, t):
        if not dz.is_sym(c):
            return [(g, c * k, v) for g, k, v in a] if c else []
        lo, hi = (t.lo, t.hi) if isinstance(t, IntT) else (0, 0)
        return [(dz.and_(g, c == m), m * k, v) for m in range(lo, hi + 1) if m
                for g, k, v in a]

    @staticmethod
    def guard(a, g):
        if g is True:
            return a
        if g is False:
            return []
        return [(dz.and_(g, h), c, v) for h, c, v in a]


# ---- lowering the body to rows ------------------------------------------------------------------

def compile_exists(comp, e: ir.RealExists) -> Fn:
    """Compile an `exists real` with the evaluator ``comp`` (either domain)."""
    D = Sym if comp.symbolic else Conc
    fd = comp.domain(e.domain)
    fw = comp.expr(e.where) if e.where is not None else None
    s1, fam1 = e.slot + 1, e.family + 1
    rows_f = _rows(comp, D, e.body)
    n = finite(e.domain.elem).size
    name = e.name
    inputs = _inputs(e) if comp.symbolic else None

    def run(st, env):
        app = _predicate(e, inputs, st, env) if _OPAQUE[0] and inputs is not None else None
        if app is not None and not z3.is_true(app[1]):
            return app[0]
        active = []
        for g, v in fd(st, env):
            if fw is not None:
                env[s1] = v
                g = dz.and_(g, fw(st, env)) if comp.symbolic else (g and fw(st, env))
            active.append(g)
        assert len(active) == n
        env[fam1] = active
        rows = rows_f(st, env, True)
        if comp.symbolic:
            c = decide_symbolic(rows, active, name)
            if app is not None:
                # Concrete inputs: the predicate at them is what the rows decide, so that a
                # term the step reaches by substitution, the same application, knows it too.
                _SIDE[app[0].get_id()] = (app[0], app[0] == c)
                # Every query that applies the predicate to terms gets this fact too: a term
                # that equals these inputs (the guard says so) then has the same answer.
                _FACTS.setdefault(app[0].decl().name(), set()).add(app[0].get_id())
            return c
        return decide(rows)
    return run


def _and(D, a, b):
    return dz.and_(a, b) if D.symbolic else (a and b)


def _not(D, a):
    return dz.not_(a) if D.symbolic else (not a)


def _rows(comp, D, e) -> Fn:
    """``f(st, env, guard) -> [(guard, kind, term)]`` for a bool in the body."""
    if not has_real(e):
        fc = comp.expr(e)
        one = D.const(1, IntT(1, 1))

        def plain(st, env, g):
            b = fc(st, env)
            if b is True:
                return []
            # A false condition is the row 1 ≤ 0 (under its guard).
            h = _and(D, g, _not(D, b))
            return [] if h is False else [(h, "le", one)]
        return plain
    match e:
        case ir.Binary(op="and", left=l, right=r):
            fl, fr = _rows(comp, D, l), _rows(comp, D, r)
            return lambda st, env, g: fl(st, env, g) + fr(st, env, g)
        case ir.Binary(op="or", left=l, right=r):
            # Only `a implies b` (checked as `not a or b`) reaches here with a real-free side.
            cond, body = (l, r) if not has_real(l) else (r, l)
            fc, fb = comp.expr(cond), _rows(comp, D, body)

            def implies(st, env, g):
                c = fc(st, env)
                if c is True:
                    return []
                return fb(st, env, _and(D, g, _not(D, c)))
            return implies
        case ir.Binary(op=op, left=l, right=r) if op in ("<=", ">=", "<", ">", "=="):
            fl, fr = _term(comp, D, l), _term(comp, D, r)
            kind = {"<=": "le", ">=": "le", "<": "lt", ">": "lt", "==": "eq"}[op]
            flip = op in (">=", ">")

            def cmp(st, env, g):
                a, b = fl(st, env), fr(st, env)
                t = D.add(b, a, -1) if flip else D.add(a, b, -1)
                return [(g, kind, t)]
            return cmp
        case ir.Quant(kind="forall", slot=s, domain=d, where=w, body=b):
            fd = comp.domain(d)
            fw = comp.expr(w) if w is not None else None
            fb = _rows(comp, D, b)
            s1 = s + 1

            def forall(st, env, g):
                out = []
                for dg, v in fd(st, env):
                    env[s1] = v
                    h = _and(D, g, dg)
                    if fw is not None:
                        h = _and(D, h, fw(st, env))
                    if h is False:
                        continue
                    out += fb(st, env, h)
                return out
            return forall
        case ir.Ite(cond=c, then=a, other=b):
            fc, fa, fb = comp.expr(c), _rows(comp, D, a), _rows(comp, D, b)

            def ite(st, env, g):
                cv = fc(st, env)
                if cv is True:
                    return fa(st, env, g)
                if cv is False:
                    return fb(st, env, g)
                return fa(st, env, _and(D, g, cv)) + fb(st, env, _and(D, g, _not(D, cv)))
            return ite
        case ir.Let(slot=s, value=v, body=b):
            fv = _term(comp, D, v) if has_real(v) else comp.expr(v)
            fb, s1 = _rows(comp, D, b), s + 1
            reads = None if D.symbolic or has_real(v) else _pure_reads(b)
            if reads is not None:
                return _remembered_let(fv, fb, s1, *reads)

            def let(st, env, g):
                env[s1] = fv(st, env)
                return fb(st, env, g)
            return let
    raise AssertionError(f"the checker lets no {type(e).__name__} over reals through")


class _AllActive:
    """A family in which every unknown is active: rows remembered with it are filtered by the
    real family afterwards (an inactive unknown only drops out of its monomials)."""

    def __getitem__(self, i):
        return True


_ALL = _AllActive()
_LET_CAP = 4096
_LET_MEMOS: list = []


def forget() -> None:
    """Drop every remembered answer and row (benchmarks measure a cold decision)."""
    _DECIDED.clear()
    for m in _LET_MEMOS:
        m.clear()


def _pure_reads(body):
    """``(locals, families)``: the outer slots that the rows of ``body`` read, when it reads
    no state (then its rows are a function of those values alone), else None."""
    from ..lang.irwalk import nodes
    bound: set = set()
    used: set = set()
    fams: set = set()
    for n in nodes(body):
        match n:
            case ir.StateRef():
                return None
            case ir.Quant(slot=sl) | ir.Let(slot=sl) | ir.Fix(slot=sl) | ir.ItemGroup(slot=sl):
                bound.add(sl)
            case ir.Call(slots=ss):
                bound.update(ss)
            case ir.RealExists(slot=sl, family=fam):
                bound.update((sl, fam))
            case ir.Local(slot=sl):
                used.add(sl)
            case ir.RealVar(slot=sl):
                fams.add(sl)
    fams -= bound
    if len(fams) != 1:
        return None
    return tuple(sorted(used - bound)), tuple(fams)


def _remembered_let(fv, fb, s1, reads, fams):
    """A `let` whose body's rows depend only on the values of the locals it reads: its rows
    are remembered per those values, built with every unknown active, and filtered by the
    actual families.  Between two candidates only the parts near the changed one change, so
    the rows of every other part are found here instead of being rebuilt."""
    memo: dict = {}
    _LET_MEMOS.append(memo)
    slots = tuple(r + 1 for r in reads)
    fslots = tuple(f + 1 for f in fams)

    def let(st, env, g):
        env[s1] = fv(st, env)
        try:
            key = tuple(env[x] for x in slots)
            hit = memo.get(key)
        except TypeError:   # an unhashable value
            return fb(st, env, g)
        if hit is None:
            saved = [env[x] for x in fslots]
            for x in fslots:
                env[x] = _ALL
            try:
                hit = fb(st, env, True)
            finally:
                for x, a in zip(fslots, saved):
                    env[x] = a
            if len(memo) >= _LET_CAP:
                memo.clear()
            memo[key] = hit
        if not g:
            return []
        active = env[fslots[0]]
        return [(True, kind, {v: c for v, c in t.items() if v == -1 or active[v]})
                for _, kind, t in hit]
    return let


def _term(comp, D, e) -> Fn:
    """``f(st, env) -> term`` for a real (or integer) term of the body."""
    if not has_real(e):
        fc, t = comp.expr(e), e.type
        return lambda st, env: D.const(fc(st, env), t)
    match e:
        case ir.RealVar(slot=s, key=k):
            fk = comp._key(e.key.type, comp.expr(k))
            s1 = s + 1
            return lambda st, env: D.var(env[s1], fk(st, env))
        case ir.Local(slot=s):
            s1 = s + 1
            return lambda st, env: env[s1]
        case ir.Unary(op="neg", arg=a):
            fa = _term(comp, D, a)
            return lambda st, env: D.add({} if not D.symbolic else [], fa(st, env), -1)
        case ir.Binary(op="+" | "-", left=l, right=r):
            fl, fr = _term(comp, D, l), _term(comp, D, r)
            sign = 1 if e.op == "+" else -1
            return lambda st, env: D.add(fl(st, env), fr(st, env), sign)
        case ir.Binary(op="*", left=l, right=r):
            real, coef = (l, r) if has_real(l) else (r, l)
            fr, fc, ct = _term(comp, D, real), comp.expr(coef), coef.type
            return lambda st, env: D.scale(fr(st, env), fc(st, env), ct)
        case ir.Quant(kind="sum", slot=s, domain=d, where=w, body=b):
            fd = comp.domain(d)
            fw = comp.expr(w) if w is not None else None
            fb = _term(comp, D, b)
            s1 = s + 1

            def total(st, env):
                acc = [] if D.symbolic else {}
                for dg, v in fd(st, env):
                    env[s1] = v
                    if fw is not None:
                        dg = _and(D, dg, fw(st, env))
                    if dg is False:
                        continue
                    acc = D.accumulate(acc, D.guard(fb(st, env), dg))
                return acc
            return total
        case ir.Ite(cond=c, then=a, other=b):
            fc, fa, fb = comp.expr(c), _term(comp, D, a), _term(comp, D, b)

            def ite(st, env):
                cv = fc(st, env)
                if cv is True:
                    return fa(st, env)
                if cv is False:
                    return fb(st, env)
                return D.add(D.guard(fa(st, env), cv), D.guard(fb(st, env), dz.not_(cv)))
            return ite
        case ir.Let(slot=s, value=v, body=b):
            fv = _term(comp, D, v) if has_real(v) else comp.expr(v)
            fb, s1 = _term(comp, D, b), s + 1

            def let(st, env):
                env[s1] = fv(st, env)
                return fb(st, env)
            return let
    raise AssertionError(f"the checker lets no {type(e).__name__} into a real term")


# ---- the concrete decision: HiGHS, confirmed exactly ----------------------------------------------

_DECIDED: dict = {}
_DECIDED_CAP = 4096
STATS = {"lp": 0, "cached": 0, "exact_point": 0, "farkas": 0, "z3": 0}


def decide(rows) -> bool:
    """Whether the (concrete) rows have a real solution."""
    live = []
    for g, kind, t in rows:
        if not g:
            continue
        t = {v: c for v, c in t.items() if c}
        if len(t) == 0 or (len(t) == 1 and -1 in t):
            c0 = t.get(-1, 0)
            if (kind == "le" and c0 > 0) or (kind == "lt" and c0 >= 0) or \
                    (kind == "eq" and c0 != 0):
                return False
            continue
        live.append((kind, tuple(sorted(t.items()))))
    if not live:
        return True
    key = tuple(sorted(live))
    hit = _DECIDED.get(key)
    if hit is not None:
        STATS["cached"] += 1
        return hit
    res = _decide_lp(key)
    if len(_DECIDED) >= _DECIDED_CAP:
        _DECIDED.clear()
    _DECIDED[key] = res
    return res


def _decide_lp(rows) -> bool:
    if _highs() is not None and not any(k == "lt" for k, _ in rows):
        res = _decide_highs(rows)
        if res is not None:
            return res
    return _decide_linprog(rows)


_HIGHS: list = []


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


def _highs():
    """One reused `highspy.Highs` (None without highspy): SciPy's `linprog` wraps the same
    solver, but its checks and conversions cost more than the small LPs themselves, and it
    gives no dual ray, so an infeasibility needed a second LP to be certified."""
    if not _HIGHS:
        try:
            import highspy
        except ImportError:
            _HIGHS.append(None)
        else:
            h = _silently(highspy.Highs)
            h.setOptionValue("output_flag", False)
            # Presolve can settle infeasibility without a ray; these LPs are small.
            h.setOptionValue("presolve", "off")
            _HIGHS.append((highspy, h))
    return _HIGHS[0]


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
            b = Fraction(-c0, c)
            if c > 0:
                hi[j] = b if hi[j] is None else min(hi[j], b)
            else:
                lo[j] = b if lo[j] is None else max(lo[j], b)
            continue
        mrows.append((kind, terms, c0))
    return vars_, col, lo, hi, bound_rows, mrows


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
            value.append(float(c))
        start.append(len(index))
        rhi.append(float(-c0))
        rlo.append(float(-c0) if kind == "eq" else -inf)
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = len(mrows)
    lp.col_cost_ = np.zeros(n)
    lp.col_lower_ = np.array([-inf if a is None else float(a) for a in lo])
    lp.col_upper_ = np.array([inf if b is None else float(b) for b in hi])
    lp.row_lower_ = np.array(rlo)
    lp.row_upper_ = np.array(rhi)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(start, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(value)
    h.clearModel()
    h.passModel(lp)
    h.run()
    status = h.getModelStatus()
    STATS["lp"] += 1
    if status == highspy.HighsModelStatus.kOptimal:
        point = [Fraction(x).limit_denominator(10 ** 6) for x in h.getSolution().col_value]
        if _holds(rows, col, point):
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
    Σ y_r β_r < 0 (β_r = -const_r), checked in Fractions."""
    big = max((abs(v) for v in ray), default=0.0)
    if big == 0:
        return False
    ys = [Fraction(v / big).limit_denominator(10 ** 6) for v in ray]
    for sign in (1, -1):
        y = [sign * v for v in ys]
        if any(kind != "eq" and w < 0 for (kind, _, _), w in zip(mrows, y)):
            continue
        s = [Fraction(0)] * len(bound_rows)
        total = Fraction(0)
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
            # one that lowers Σ y β most.
            best = None
            for c, c0 in bound_rows[j]:
                if (c > 0) == (sj < 0):
                    gain = -(-sj / c) * c0
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
    num = [x.numerator * (den // x.denominator) for x in point]
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
    if r == z3.unknown:
        raise RuntimeError(f"z3 could not decide a linear system: {s.reason_unknown()}")
    return r == z3.sat


# ---- the prover's abstraction: an `exists real` as an uninterpreted predicate ----------------

_OPAQUE = [False]
_PREDICATES: dict = {}
_FACTS: dict = {}       # predicate name -> ids in _SIDE of its applications to concrete inputs


@contextmanager
def opaque():
    """Within it, a symbolic `exists real` whose inputs are not all concrete is an uninterpreted
    predicate applied to the values it reads, one predicate per `exists real` of the source:
    two places that ask it of equal values get one answer, and nothing else is known of it.
    A step proved so holds for every predicate, the true one included, and costs no real
    arithmetic (the Farkas dual of a body whose lever arms are symbolic splits every product
    over its interval).  Not for witnesses: a model may give the predicate any truth."""
    before = _OPAQUE[0]
    _OPAQUE[0] = True
    try:
        yield
    finally:
        _OPAQUE[0] = before


def _inputs(e: ir.Expr):
    """What an `exists real` (or a `fix`, or a def's body) reads from outside: its free locals
    (in order of first use, the same at every place its def is inlined), the current state's
    fields and the previous state's (in a transition's `old(...)`), each with its type; None
    when it reads a state whole."""
    bound = set(fixinc.summary(e, {})[1])   # e's own slot and family included
    locs: dict = {}
    fields: dict = {}
    olds: dict = {}
    parents = [0, 0]        # field reads of the current state, of the previous one
    refs = [0, 0]
    for n in nodes(e):
        match n:
            case ir.Local(slot=sl) if sl not in bound and sl not in locs:
                locs[sl] = n.type
            case ir.Field(record=ir.StateRef(old=o), index=i):
                (olds if o else fields).setdefault(i, n.type)
                parents[o] += 1
            case ir.StateRef(old=o):
                refs[o] += 1
    if refs[0] > parents[0] or refs[1] > parents[1]:
        return None     # a state passed whole (to a def, or compared)
    return tuple(locs.items()), tuple(sorted(fields.items())), tuple(sorted(olds.items()))


def _arguments(inputs, st, env) -> list | None:
    """The z3 leaves of what `_inputs` found, in its order; None when one has no z3 leaf (a
    text)."""
    locs, fields, olds = inputs
    args = []
    for sl, t in locs:
        sub = dz.canonical_leaves(t, env[sl + 1])     # env[0] is the old state
        if sub is None:
            return None
        args += sub
    for state, read in ((st, fields), (env[0], olds)):
        for i, t in read:
            sub = dz.canonical_leaves(t, state[i])
            if sub is None:
                return None
            args += sub
    return args


def _all_concrete(args) -> bool:
    return all(z3.is_int_value(a) or z3.is_true(a) or z3.is_false(a) for a in args)


def _predicate(e: ir.RealExists, inputs, st, env):
    """The uninterpreted predicate of ``e`` applied to what it reads, and whether every input
    is concrete (true: the caller decides it exactly as well); None when an input has no z3
    leaf (a text)."""
    args = _arguments(inputs, st, env)
    if args is None:
        return None
    concrete = _all_concrete(args)
    sorts = tuple(a.sort() for a in args)
    key = (e.span.file, e.span.line, e.span.col, e.name, tuple(str(x) for x in sorts))
    f = _PREDICATES.get(key)
    if f is None:
        f = _PREDICATES[key] = z3.Function(
            f"{e.name}@{e.span.line}:{e.span.col}#{len(_PREDICATES)}", *sorts, z3.BoolSort())
    return f(*args), z3.BoolVal(concrete)


# ---- the prover's abstraction of a fixpoint: uninterpreted functions of what it reads -------

_OPAQUE_FIX = [False]
_FIX_FUNCTIONS: dict = {}
# A fix function's z3 id -> (its family, which leaf of the value it is, the value's type, the
# types of the inputs its arguments are the leaves of): `fix_family`.
_FIX_LAYOUT: dict = {}


@contextmanager
def opaque_fixes():
    """Within it, a symbolic expression that computes a `fix` (see `opaque_node`), with
    inputs not all concrete, is, leaf by leaf, an uninterpreted function of the values it
    reads (one family of functions per node of the source): equal inputs give equal values,
    and nothing else is known of them.  A step proved so holds for every function, the
    fixpoint's own included, so "inductive" stays sound; what does not depend on what the
    fixpoint computes (a count of pieces, beside a guard that floods a region) is proved
    without unrolling it, which on a large board does not build.  Not for witnesses: a model
    may give the functions any value."""
    before = _OPAQUE_FIX[0]
    _OPAQUE_FIX[0] = True
    try:
        yield
    finally:
        _OPAQUE_FIX[0] = before


def _leaf_sorts(t) -> list | None:
    """The z3 sorts of a value of type ``t``, leaf by leaf; None for a type whose leaves are
    not a fixed list (a seq, a text)."""
    match t:
        case BoolT():
            return [z3.BoolSort()]
        case IntT() | EnumT():
            return [z3.IntSort()]
        case RecordT(fields=fields):
            out = []
            for _, ft in fields:
                sub = _leaf_sorts(ft)
                if sub is None:
                    return None
                out += sub
            return out
        case MapT(key=k, val=vt):
            sub = _leaf_sorts(vt)
            return None if sub is None else sub * finite(k).size
        case SetT(elem=et):
            return [z3.BoolSort()] * finite(et).size
        case BagT(elem=et):
            return [z3.IntSort()] * finite(et).size
    return None


def _rebuild(t, leaves):
    """A value of type ``t`` (the symbolic domain's shape) from an iterator of its leaves."""
    match t:
        case BoolT() | IntT() | EnumT():
            return next(leaves)
        case RecordT(fields=fields):
            return tuple(_rebuild(ft, leaves) for _, ft in fields)
        case MapT(key=k, val=vt):
            return tuple(_rebuild(vt, leaves) for _ in range(finite(k).size))
        case SetT(elem=et) | BagT(elem=et):
            return tuple(next(leaves) for _ in range(finite(et).size))
    raise TypeError(t)


def _applied(key: tuple, label: str, t, args: list, inputs: tuple = ()):
    """A value of type ``t`` whose leaves are uninterpreted functions (one family per ``key``)
    applied to ``args`` (the leaves of values of the types ``inputs``, one after the other);
    None when ``t`` has no fixed list of z3 leaves."""
    out = _leaf_sorts(t)
    if out is None:
        return None
    sorts = tuple(a.sort() for a in args)
    key = key + (tuple(s.kind() for s in sorts),)
    fs = _FIX_FUNCTIONS.get(key)
    if fs is None:
        n = len(_FIX_FUNCTIONS)
        fs = _FIX_FUNCTIONS[key] = [z3.Function(f"{label}#{n}[{i}]", *sorts, srt)
                                    for i, srt in enumerate(out)]
        for i, f in enumerate(fs):
            _FIX_LAYOUT[f.get_id()] = (fs, i, t, inputs)
    # One argument array for every leaf (z3's own call casts each argument, leaf by leaf).
    arr = (z3.Ast * len(args))(*[a.as_ast() for a in args])
    ctx = args[0].ctx
    return _rebuild(t, iter([_expr_ref(z3.Z3_mk_app(ctx.ref(), f.ast, len(args), arr), ctx)
                             for f in fs]))


# The builtins that are fixpoints too (solver/engine/regions.py: a flood, a count of floods).
REGIONS = ("component", "components")


def computes_fixpoint(node, cache: dict, regions: bool = True) -> bool:
    """Whether an IR subtree computes a `fix` or (with ``regions``) a region builtin, in
    itself or in a def it calls; ``cache`` (one per value of ``regions``) is keyed by node id
    and keeps the node alive."""
    if isinstance(node, tuple):
        return any(computes_fixpoint(x, cache, regions) for x in node)
    if not hasattr(node, "__dataclass_fields__") or isinstance(node, (ir.Const, ir.Text)):
        return False
    hit = cache.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    r = isinstance(node, ir.Fix) \
        or (regions and isinstance(node, ir.Builtin) and node.name in REGIONS) \
        or any(computes_fixpoint(getattr(node, f), cache, regions)
               for f in node.__dataclass_fields__ if f not in ("type", "span"))
    cache[id(node)] = (node, r)
    return r


def opaque_node(e: ir.Expr, f):
    """``f``, the compiled ``e`` (an expression that computes a fixpoint), read within
    `opaque_fixes` as uninterpreted functions of what ``e`` reads (its free locals, a def's
    parameters among them, and the state fields) when one of those is symbolic.  One family
    per node of the source: a def's body is one node wherever the def is called, so every
    call site shares its functions."""
    inputs = _inputs(e)
    if inputs is None or _leaf_sorts(e.type) is None:
        return f
    # Under `regionfacts`, what computes a fixpoint only through a region builtin is computed,
    # the builtin giving its region's unknowns.
    proper = computes_fixpoint(e, {}, regions=False)
    sp = e.span
    key = ("node", sp.file, sp.line, sp.col, sp.end_line, sp.end_col, type(e).__name__)
    label = f"{type(e).__name__.lower()}@{sp.line}:{sp.col}"

    def opaque(st, env):
        if not _OPAQUE_FIX[0] or (not proper and regionfacts.on()):
            return f(st, env)
        args = _arguments(inputs, st, env)
        if not args or _all_concrete(args):
            return f(st, env)
        return _applied(key, label, e.type, args,
                        tuple(t for part in inputs for _, t in part))
    return opaque


def fix_functions():
    """The z3 ids of `opaque_fixes`' functions' declarations (a container)."""
    return _FIX_LAYOUT


def fix_family(decl_id: int):
    """(its family's functions, which leaf of the value it is, the value's type, the types of
    the inputs its arguments are the leaves of) of one of `opaque_fixes`' functions, by the
    z3 id of its declaration; None for another function."""
    return _FIX_LAYOUT.get(decl_id)


# ---- the symbolic decision: primal or Farkas dual, chosen by a fresh Bool ---------------------------

_SIDE: dict = {}        # z3 ast id of c -> (c, side condition)
_COUNTER = itertools.count()


def _lin_real(mons, xs):
    """The real term of guarded monomials over the unknowns ``xs``."""
    out = []
    for g, c, v in mons:
        base = z3.RealVal(1) if v == -1 else xs[v]
        term = c * base if c != 1 else base
        out.append(term if g is True else z3.If(g, term, z3.RealVal(0)))
    if not out:
        return z3.RealVal(0)
    return z3.Sum(out) if len(out) > 1 else out[0]


def decide_symbolic(rows, active, name: str):
    k = next(_COUNTER)
    rows = [(g, kind, t) for g, kind, t in rows if g is not False]
    # Primal: the unknowns themselves.
    xs = {i: z3.Real(f"{name}!{k}[{i}]") for i, a in enumerate(active) if a is not False}
    primal = []
    for g, kind, t in rows:
        lhs = _lin_real(t, xs)
        atom = lhs <= 0 if kind == "le" else lhs < 0 if kind == "lt" else lhs == 0
        primal.append(atom if g is True else z3.Implies(g, atom))
    # Dual (Motzkin's transposition theorem): y ≥ 0 on inequalities, free on equalities,
    # Σ y_r a_r = 0 and (Σ y_r β_r < 0, or = 0 with some strict row weighted), β_r = -const_r.
    ys = [z3.Real(f"{name}!{k}~y{r}") for r in range(len(rows))]
    dual = []
    per_var: dict = {}
    consts = []
    strict = []
    for (g, kind, t), y in zip(rows, ys):
        if kind != "eq":
            dual.append(y >= 0)
        if g is not True:
            dual.append(z3.Implies(dz.not_(g), y == 0))
        for h, c, v in t:
            term = c * y if c != 1 else y
            term = term if h is True else z3.If(h, term, z3.RealVal(0))
            if v == -1:
                consts.append(term)
            else:
                per_var.setdefault(v, []).append(term)
        if kind == "lt":
            strict.append(y)
    for v, terms in per_var.items():
        dual.append((z3.Sum(terms) if len(terms) > 1 else terms[0]) == 0)
    # Σ y_r const_r > 0  ⇔  Σ y_r β_r < 0.
    cy = z3.Sum(consts) if len(consts) > 1 else (consts[0] if consts else z3.RealVal(0))
    sy = z3.Sum(strict) if len(strict) > 1 else (strict[0] if strict else z3.RealVal(0))
    dual.append(z3.Or(cy > 0, z3.And(cy == 0, sy > 0)) if strict else cy > 0)
    c = z3.Bool(f"{name}!{k}?")
    side = z3.And(z3.Implies(c, z3.And(primal) if primal else z3.BoolVal(True)),
                  z3.Implies(z3.Not(c), z3.And(dual)))
    _SIDE[c.get_id()] = (c, side)
    return c


def side_conditions(solver, assumptions=()) -> list:
    """The side conditions of every `exists real` literal that the solver's formula (or the
    assumptions) mentions, not yet added to it; under `regionfacts`, the facts of the regions
    it mentions."""
    if regionfacts.on():
        return _region_facts(solver, assumptions) + side_conditions_real(solver, assumptions)
    return side_conditions_real(solver, assumptions)


_WALKED: dict = {}      # (a conjunct's z3 id, base) -> (conjunct, its regions, base)
# The memo of a solver queried in a scope first, its base never walked alone: one for all such
# solvers (read only), so that each conjunct's walk is remembered across their queries.
_NO_BASE: tuple = ([], set(), set())


def _region_facts(solver, assumptions) -> list:
    """The facts of the regions whose unknowns the solver's formula or the assumptions
    mention (regionfacts.facts_for), once per solver scope and set of regions.  The walk is
    over raw z3 ASTs (wrapping each node costs more than the rest), and what the solver's
    first assertions mention is remembered on it: a step's queries share them."""
    from z3 import z3core as C
    ctx = getattr(solver, "ctx", None) or z3.main_ctx()
    ref = ctx.ref()

    def walk(asts, seen, found, base=frozenset()):
        for a, decl, app in regionfacts.unknowns_in(ref, asts, seen, skip=base):
            args = [C.Z3_get_app_arg(ref, app, k)
                    for k in range(C.Z3_get_app_num_args(ref, app))]
            ids = tuple(C.Z3_get_ast_id(ref, x) for x in args)
            nb = regionfacts.family(decl)
            if nb is not None:
                found.add(regionfacts.mentioned(
                    ids, lambda args=args: tuple(_expr_ref(x, ctx) for x in args), nb))
            else:
                found.add(regionfacts.fold_mentioned(
                    ids, lambda a=a: _expr_ref(a, ctx), regionfacts.fold_kind(decl)))

    held = solver.assertions()
    ids = [held[k].get_id() for k in range(len(held))]
    memo = getattr(solver, "_rulebook_walk", None)
    if memo is None or memo[0] != ids[:len(memo[0])]:
        # The first assertions (those outside any scope): walked once.
        base = solver.num_scopes() == 0 if hasattr(solver, "num_scopes") else False
        if base:
            memo = (ids, set(), set())
            walk([held[k].as_ast() for k in range(len(held))], memo[1], memo[2])
            try:
                solver._rulebook_walk = memo
            except AttributeError:
                pass
        else:
            memo = _NO_BASE
    found = set(memo[2])
    rest = [held[k] for k in range(len(memo[0]), len(held))]
    rest += [a for a in assumptions if dz.is_sym(a)]
    # A query's scoped part is a conjunction of the path's guard, the goal and assumptions,
    # the same terms across the tiers of a path: each conjunct's regions are remembered.
    parts = [c for t in rest for c in (t.children() if z3.is_and(t) else (t,))]
    for c in parts:
        # (What lies under the solver's first assertions is in ``found`` already, and not
        # walked again: the memo is per set of those.)
        key = (c.get_id(), id(memo[1]))
        hit = _WALKED.get(key)
        if hit is None or not hit[0].eq(c) or hit[2] is not memo[1]:
            got: set = set()
            walk([c.as_ast()], set(), got, memo[1])
            hit = (c, frozenset(got), memo[1])
            if len(_WALKED) > 4096:
                _WALKED.clear()
            _WALKED[key] = hit
        found |= hit[1]
    if not found:
        return []
    key = tuple(sorted(str(r.keys) for r in found))
    done = _added(solver, "_rulebook_regions")
    if key in done:
        return []
    if (not hasattr(solver, "num_scopes") or solver.num_scopes() == 0) \
            and not regionfacts.slicing():
        done.add(key)       # (a sliced query's facts are not all of them)
    return regionfacts.facts_for(found)


def _added(solver, attr: str) -> set:
    """What has been added to the solver at its base level, kept on it under ``attr`` (a
    fresh set for a solver that takes no attribute)."""
    done = getattr(solver, attr, None)
    if done is None:
        done = set()
        try:
            setattr(solver, attr, done)
        except AttributeError:
            pass
    return done


def side_conditions_real(solver, assumptions=()) -> list:
    """The side conditions of every `exists real` literal that the solver's formula (or the
    assumptions) mentions, not yet added to it."""
    if not _SIDE:
        return []
    done = _added(solver, "_rulebook_side")
    # Added inside a scope, a side condition goes with it when the scope is popped: only one
    # added at the base level is remembered as added.
    base = not hasattr(solver, "num_scopes") or solver.num_scopes() == 0
    out = []
    todo = list(solver.assertions()) + [a for a in assumptions if dz.is_sym(a)]
    seen: set = set()
    while todo:
        found = []
        stack = list(todo)
        todo = []
        while stack:
            a = stack.pop()
            i = a.get_id()
            if i in seen:
                continue
            seen.add(i)
            if i in _SIDE and i not in done:
                found.append(i)
            if z3.is_app(a):
                if _FACTS and a.num_args() and a.decl().name() in _FACTS:
                    found.extend(j for j in _FACTS[a.decl().name()] if j not in done)
                stack.extend(a.children())
        for i in dict.fromkeys(found):
            if base:
                done.add(i)
            side = _SIDE[i][1]
            out.append(side)
            todo.append(side)   # a side condition may mention another literal (nesting)
    return out
