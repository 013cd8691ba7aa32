"""`exists real f[k in K where g]: body` — real unknowns under linear constraints, in both
value domains of the one evaluator.

The body is lowered, for one state, to *rows*: ``(guard, kind, term)`` meaning "if guard then
term ≤ 0 / = 0 / < 0", where a term is a sum of monomials ``coef · f[var]`` (``var`` = -1 for
the constant).  The lowering is written once; a `Lin` domain says how terms are held:

* concretely (`Conc`), guards are Python bools and a term is a dict ``var -> Fraction-free
  int coefficient``; the rows go to HiGHS (SciPy's `linprog`), and the answer is confirmed
  exactly: a feasible point is rationalised and checked in `Fraction`s, anything else is
  decided by Z3's exact simplex (lp.py);
* symbolically (`Sym`), a guard or coefficient may depend on the state, so a term is a list of
  guarded monomials with integer coefficients (a symbolic integer is split over its interval,
  as `int * int` is), which keeps every product of a coefficient and an unknown linear.  The
  result is a fresh Bool ``c`` with the side condition ``(c → primal(x)) ∧ (¬c → dual(y))``:
  the dual is the Farkas (Motzkin) certificate of infeasibility, so exactly one side is
  satisfiable and ``c`` is the truth of the `exists`, in any polarity, with no quantifier.
  The side condition is recorded in the `Sides` of the evaluator that made ``c`` (each symbolic
  evaluator owns one); a solver made with those `Sides` gets, at `symbolic.check`, the side
  conditions of the ``c`` its formula uses, and a solver whose `Sides` are empty walks nothing.

Over a symbolic state the evaluator's `Abstraction` may answer instead (a prover's
uninterpreted predicate of the inputs: `Abstraction.real_exists`).
"""
from __future__ import annotations

import itertools
from typing import Callable

import z3

from . import domains as dz
from . import lp
from .abstraction import Abstraction
from ..lang import ir
from ..lang.irwalk import has_real
from ..lang.types import IntT, finite

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
    symbolic = comp.symbolic
    # Concretely, a family over a whole type with no `where` has every member active.
    everyone = not symbolic and fw is None and isinstance(e.domain, ir.TypeDomain)

    def run(st, env):
        # Symbolically, the evaluator's abstraction may answer (a prover's uninterpreted
        # predicate of the inputs), and decide it as well when the inputs are concrete.
        app = comp.abstraction.real_exists(e, st, env) if symbolic else None
        if app is not None and not z3.is_true(app[1]):
            return app[0]
        if everyone:
            env[fam1] = _ALL
            return lp.decide(rows_f(st, env, True))
        active = []
        for g, v in fd(st, env):
            if fw is not None:
                env[s1] = v
                g = dz.and_(g, fw(st, env)) if comp.symbolic else (g and fw(st, env))
            active.append(g)
        assert len(active) == n
        # Every unknown active (no `where`, or one that holds throughout): the family reads
        # as `_ALL`, so remembered rows need no filtering.
        env[fam1] = _ALL if not symbolic and all(a is True for a in active) else active
        rows = rows_f(st, env, True)
        if comp.symbolic:
            c = decide_symbolic(rows, active, name, comp.sides)
            if app is not None:
                comp.abstraction.real_decided(app[0], c, comp.sides)
            return c
        return lp.decide(rows)
    return run


def _and(D, a, b):
    return dz.and_(a, b) if D.symbolic else (a and b)


def _not(D, a):
    return dz.not_(a) if D.symbolic else (not a)


def _rows(comp, D, e, outer=None) -> Fn:
    """``f(st, env, guard) -> [(guard, kind, term)]`` for a bool in the body.  ``outer``:
    the locals read by the nearest remembered part around ``e`` (`_sub_memo`), if any."""
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
            fl, fr = _rows(comp, D, l, outer), _rows(comp, D, r, outer)
            return lambda st, env, g: fl(st, env, g) + fr(st, env, g)
        case ir.Binary(op="or", left=l, right=r):
            # Only `a implies b` (checked as `not a or b`) reaches here with a real-free side.
            cond, body = (l, r) if not has_real(l) else (r, l)
            fc, fb = comp.expr(cond), _rows(comp, D, body, outer)

            def implies(st, env, g):
                c = fc(st, env)
                if c is True:
                    return []
                return fb(st, env, _and(D, g, _not(D, c)))
            return implies
        case ir.Binary(op=op, left=l, right=r) if op in ("<=", ">=", "<", ">", "=="):
            fl, fr = _term(comp, D, l, outer), _term(comp, D, r, outer)
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
            sub = _sub_memo(D, e, outer)
            fb = _rows(comp, D, b, outer if sub is None else _INSIDE)
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
            return forall if sub is None else _remembered_rows(forall, *sub)
        case ir.Ite(cond=c, then=a, other=b):
            fc, fa, fb = comp.expr(c), _rows(comp, D, a, outer), _rows(comp, D, b, outer)

            def ite(st, env, g):
                cv = fc(st, env)
                if cv is True:
                    return fa(st, env, g)
                if cv is False:
                    return fb(st, env, g)
                return fa(st, env, _and(D, g, cv)) + fb(st, env, _and(D, g, _not(D, cv)))
            return ite
        case ir.Let(slot=s, value=v, body=b):
            fv = _term(comp, D, v, outer) if has_real(v) else comp.expr(v)
            s1 = s + 1
            reads = None if D.symbolic or has_real(v) else _pure_reads(b)
            # Only the innermost of nested remembered lets: an outer one's key holds what
            # the inner ones read and more (a whole state, say), and seldom recurs.
            if reads is not None and not (isinstance(b, ir.Let) and not has_real(b.value)
                                          and _pure_reads(b.body) is not None):
                return _remembered_let(fv, _rows(comp, D, b, reads[0]), s1, *reads)
            fb = _rows(comp, D, b, outer)

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
    lp.forget()
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
    actual families (`_remembered_rows`).  Between two candidates only the parts near the
    changed one change, so the rows of every other part are found here instead of being
    rebuilt."""
    rows = _remembered_rows(fb, reads, fams)

    def let(st, env, g):
        env[s1] = fv(st, env)
        return rows(st, env, g)
    return let


# Below a part remembered apart (`_sub_memo`), none more: one level of parts only.
_INSIDE = False


def _sub_memo(D, e, outer):
    """``(locals, families)`` when the quantifier ``e`` (a `forall` of rows, a `sum` of a
    term) is remembered apart, by the values of the locals it reads: concretely, under a
    remembered `let` (``outer``: the locals its key holds) when ``e`` reads no state and
    not every one of those (a body's sign rows do not read what lies on it; its moments'
    bearing part, not what lies on it either).  When the let's key changes in a local that
    ``e`` does not read, its rows are found here instead of being built again, and they
    are the same row objects as before (lp.py knows their normal forms by identity).  None
    otherwise, and inside such a part."""
    if D.symbolic or not outer:
        return None
    got = _pure_reads(e)
    if got is None or set(outer) <= set(got[0]):
        return None
    return got


def _remembered(fb, reads, fams):
    """``(find, slot)``: ``find(st, env, *args)`` is ``fb(st, env, *args)`` built with every
    unknown of the families active (`_ALL`), remembered per the values of the locals
    ``reads`` (None for an unhashable value: the caller builds it as it is); ``slot``: the
    env slot of the families, whose actual unknowns the caller keeps.  The memo is
    registered with `forget`."""
    memo: dict = {}
    _LET_MEMOS.append(memo)
    slots, fslots = tuple(r + 1 for r in reads), tuple(f + 1 for f in fams)

    def find(st, env, *args):
        try:
            key = tuple([env[x] for x in slots])
            hit = memo.get(key)
        except TypeError:   # an unhashable value
            return None
        if hit is None:
            saved = [env[x] for x in fslots]
            for x in fslots:
                env[x] = _ALL
            try:
                hit = fb(st, env, *args)
            finally:
                for x, a in zip(fslots, saved):
                    env[x] = a
            if len(memo) >= _LET_CAP:
                memo.clear()
            memo[key] = hit
        return hit
    return find, fslots[0]


def _active_only(t: dict, active) -> dict:
    """Term ``t`` without the unknowns ``active`` leaves out (they only drop out of it)."""
    return {v: c for v, c in t.items() if v == -1 or active[v]}


def _remembered_rows(fb, reads, fams):
    """The rows of a `forall` (``fb``) remembered per the values of the locals it reads,
    also a let's body (`_remembered_let`)."""
    find, fslot = _remembered(fb, reads, fams)

    def rows(st, env, g):
        hit = find(st, env, True)
        if hit is None:
            return fb(st, env, g)
        if not g:
            return []
        active = env[fslot]
        if active is _ALL:
            return hit      # shared: the rows are read, never changed, by their users
        return [(True, kind, _active_only(t, active)) for _, kind, t in hit]
    return rows


def _remembered_term(fb, reads, fams):
    """The term of a `sum` (``fb``) remembered per the values of the locals it reads, its
    inactive unknowns dropped."""
    find, fslot = _remembered(fb, reads, fams)

    def term(st, env):
        hit = find(st, env)
        if hit is None:
            return fb(st, env)
        active = env[fslot]
        return hit if active is _ALL else _active_only(hit, active)
    return term


def _term(comp, D, e, outer=None) -> Fn:
    """``f(st, env) -> term`` for a real (or integer) term of the body (``outer`` as in
    `_rows`)."""
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
            fa = _term(comp, D, a, outer)
            return lambda st, env: D.add({} if not D.symbolic else [], fa(st, env), -1)
        case ir.Binary(op="+" | "-", left=l, right=r):
            fl, fr = _term(comp, D, l, outer), _term(comp, D, r, outer)
            sign = 1 if e.op == "+" else -1
            return lambda st, env: D.add(fl(st, env), fr(st, env), sign)
        case ir.Binary(op="*", left=l, right=r):
            real, coef = (l, r) if has_real(l) else (r, l)
            fc, ct = comp.expr(coef), coef.type
            if not D.symbolic and isinstance(real, ir.RealVar):
                # `c * f[k]`, concretely: the one monomial, without the two dicts of a
                # variable then scaled (a body's moment rows are sums of these).
                fk = comp._key(real.key.type, comp.expr(real.key))
                s1 = real.slot + 1

                def monomial(st, env):
                    o = fk(st, env)
                    c = fc(st, env)
                    return {o: c} if c and env[s1][o] else {}
                return monomial
            fr = _term(comp, D, real, outer)
            return lambda st, env: D.scale(fr(st, env), fc(st, env), ct)
        case ir.Quant(kind="sum", slot=s, domain=d, where=w, body=b):
            fd = comp.domain(d)
            fw = comp.expr(w) if w is not None else None
            sub = _sub_memo(D, e, outer)
            fb = _term(comp, D, b, outer if sub is None else _INSIDE)
            s1 = s + 1

            if not D.symbolic:
                def total_conc(st, env):
                    # `total` for concrete terms: the summands added in place, no copies.
                    acc: dict = {}
                    get = acc.get
                    for dg, v in fd(st, env):
                        env[s1] = v
                        if fw is not None:
                            dg = dg and fw(st, env)
                        if dg is False:
                            continue
                        t = fb(st, env)
                        if dg:
                            for k, c in t.items():
                                acc[k] = get(k, 0) + c
                    return acc
                return total_conc if sub is None else _remembered_term(total_conc, *sub)

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
            fc, fa, fb = comp.expr(c), _term(comp, D, a, outer), _term(comp, D, b, outer)

            def ite(st, env):
                cv = fc(st, env)
                if cv is True:
                    return fa(st, env)
                if cv is False:
                    return fb(st, env)
                return D.add(D.guard(fa(st, env), cv), D.guard(fb(st, env), dz.not_(cv)))
            return ite
        case ir.Let(slot=s, value=v, body=b):
            fv = _term(comp, D, v, outer) if has_real(v) else comp.expr(v)
            fb, s1 = _term(comp, D, b, outer), s + 1

            def let(st, env):
                env[s1] = fv(st, env)
                return fb(st, env)
            return let
    raise AssertionError(f"the checker lets no {type(e).__name__} into a real term")


# ---- the symbolic decision: primal or Farkas dual, chosen by a fresh Bool -----------------------

# Fresh names for the unknowns, process-wide as z3's own names are: two evaluators' terms may
# meet in one solver (two readings compared), and equal names would be one z3 constant.
_COUNTER = itertools.count()


class Sides:
    """The side conditions that one symbolic evaluator's terms carry: z3 id of a term (an
    `exists real` literal, or a term an abstraction defined) -> (the term, its condition).
    The terms are kept alive here, so their ids are not reused."""

    __slots__ = ("_by_id",)

    def __init__(self):
        self._by_id: dict = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, i: int) -> bool:
        return i in self._by_id

    def define(self, term, condition) -> None:
        """Make ``condition`` the side condition of ``term`` (a z3 term): every check whose
        formula mentions the term, on a solver made with these `Sides`, gets it."""
        self._by_id[term.get_id()] = (term, condition)

    def condition(self, i: int):
        """The side condition of the term of z3 id ``i`` (one of these `Sides`)."""
        return self._by_id[i][1]


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


def decide_symbolic(rows, active, name: str, sides: Sides):
    """A fresh Bool that is the truth of the rows' system, its side condition (primal or
    Farkas dual) recorded in ``sides``."""
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
    sides.define(c, side)
    return c


def side_conditions(solver, assumptions=(), abstraction: Abstraction | None = None,
                    books: tuple = ()) -> list:
    """The side conditions (in the `Sides` ``books``) of every term that the solver's formula
    (or the assumptions) mentions, not yet added to it, after what the ``abstraction`` adds (a
    prover's facts of the regions it mentions)."""
    if abstraction is None:
        return side_conditions_real(solver, assumptions, books=books)
    return abstraction.side_conditions(solver, assumptions) + side_conditions_real(
        solver, assumptions, abstraction.predicates, books)


def added_to(solver, attr: str) -> set:
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


def side_conditions_real(solver, assumptions=(), predicates: dict | None = None,
                         books: tuple = ()) -> list:
    """The side conditions (in the `Sides` ``books``) of every term that the solver's
    formula (or the assumptions) mentions, not yet added to it; with ``predicates`` (an
    uninterpreted predicate's name -> ids of terms of ``books``), those of every predicate it
    applies.  Nothing is walked when ``books`` hold nothing."""
    facts = predicates or {}
    books = tuple(b for b in books if len(b))
    if not books:
        return []
    done = added_to(solver, "_rulebook_side")
    # Added inside a scope, a side condition goes with it when the scope is popped: only one
    # added at the base level is remembered as added.
    base = not hasattr(solver, "num_scopes") or solver.num_scopes() == 0
    # The terms of the base assertions walked by an earlier call: the solver keeps them alive
    # (their ids are not reused) and their side conditions were added at the base level, so a
    # query of many checks walks its base formula once, not once a check.  The assumptions'
    # terms are walked every time (nothing keeps them alive).  Not with an abstraction's
    # predicates, whose facts may grow between checks.
    walked = added_to(solver, "_rulebook_walked") if not facts else set()
    out: list = []
    asserted, assumed = list(solver.assertions()), [a for a in assumptions if dz.is_sym(a)]
    book = books[0] if len(books) == 1 else _Union(books)
    if base and not facts:          # the assertions' walk records into ``walked`` itself
        _walk_sides(asserted, walked, frozenset(), done, facts, base, out, book)
        _walk_sides(assumed, set(), walked, done, facts, base, out, book)
    else:
        seen: set = set()
        _walk_sides(asserted, seen, walked, done, facts, base, out, book)
        _walk_sides(assumed, seen, walked, done, facts, base, out, book)
    return out


class _Union:
    """Several evaluators' `Sides` read as one (their terms' ids are distinct z3 terms)."""

    def __init__(self, books: tuple):
        self.books = books

    def __contains__(self, i: int) -> bool:
        return any(i in b for b in self.books)

    def condition(self, i: int):
        return next(b.condition(i) for b in self.books if i in b)


def _walk_sides(todo, seen, known, done, facts, base, out, book) -> None:
    """`side_conditions_real`'s walk from the terms ``todo``, past the ids in ``seen`` (where
    it adds those it visits) and in ``known``: the side conditions in ``book`` found go to
    ``out`` (and to ``done`` at the base level)."""
    while todo:
        found = []
        stack = list(todo)
        todo = []
        while stack:
            a = stack.pop()
            i = a.get_id()
            if i in seen or i in known:
                continue
            seen.add(i)
            if i in book and i not in done:
                found.append(i)
            if z3.is_app(a):
                if facts and a.num_args() and a.decl().name() in facts:
                    found.extend(j for j in facts[a.decl().name()] if j not in done)
                stack.extend(a.children())
        for i in dict.fromkeys(found):
            if base:
                done.add(i)
            side = book.condition(i)
            out.append(side)
            todo.append(side)   # a side condition may mention another literal (nesting)
