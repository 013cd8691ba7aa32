"""The prover's reading of `component(seed, ok)` and `components(ok)`: unknowns, with facts
true of every grid's connected regions (``rulebook prove --region-facts``).

Unrolled, a flood over a large grid does not build; read as uninterpreted functions
(abstractions.py's `Opaque` with ``fixes``) it says nothing a step needs.  Here each distinct
set ``ok`` (its z3 leaves, by identity) is a `Region` of unknowns: ``same(i, j)`` (square j
lies in square i's component; symmetric by construction, ``same(i, i)`` is ``ok[i]``),
``size(i)`` (the number of squares of i's component) and ``count`` (the number of
components).  `component(i, ok)` is ``same(i, j)`` square by square and `components(ok)` is
``count``; a count over all of a component's squares is read as ``size(i)``
(`RegionFacts.whole`; the symbolic evaluator's `count`), so that the area of a region is the
unknown the facts speak of.

Facts, added to a query for the regions it mentions (`RegionFacts.facts_for`, through
`RegionFacts.side_conditions`), instantiated only around the squares where two of those
regions' sets differ, one square q apart (``around``: each such q and its neighbours):

- of one region: a square outside ``ok`` has size 0, one inside 1 to n; ``same(t, d)``
  (d around) puts t and d in ``ok`` with one size, and is transitive through squares around;
- of two regions whose sets agree but at q: equal at q, the same components; the second with
  q added (q outside the first): the number of components goes up by 1 - k (k: the distinct
  components beside q), q's size is 1 plus theirs, a square joins q's component exactly when
  it was with one of q's neighbours, nothing is split, no size shrinks, and a component that
  touches none of q's neighbours keeps its size; with q taken out, the same the other way
  round (a square that was with q is now with one of its neighbours).

Each fact is true of the components of any set, so a step proved under them holds for the
true components ("inductive" stays sound); they are checked on every set of a 3 x 3 board and
on random 8 x 8 sets by bench/region_lemmas.py, and by tests/prover/test_regionfacts.py.  Not for
witnesses: a model may give the unknowns values no set has.

Under the same option a long `max` or `min` of symbolic values is one unknown too (`fold`,
`Fold`), with the facts that define it exactly: on an 8 x 8 grid, the largest value over a
region as a chain of 64 `if`s was what z3 gave up on.

The unknowns of one proof, their facts and what its queries mention are a `RegionFacts`
object's, which the prover hands to the symbolic evaluator inside its `Opaque` abstraction.
"""
from __future__ import annotations

import itertools
from contextlib import contextmanager

import z3
from z3.z3 import _to_expr_ref as _expr_ref

from ..engine import domains as dz
from ..engine import linear

_FALSE = z3.BoolVal(False)


def _leaf_key(b):
    """A square's leaf as a key: True, False or its z3 id."""
    v = dz.simplify_bool(b)
    return v if isinstance(v, bool) else v.get_id()


class Region:
    """The unknowns of one set of squares ``ok`` of a grid (``nb``: each square's
    neighbours, by ordinal): functions of the set's leaves, so that two sets with equal
    leaves have the same unknowns, and a substitution into the leaves carries them along."""

    def __init__(self, ok: tuple, nb, keys: tuple, facts: "RegionFacts"):
        self.ok = tuple(z3.BoolVal(b) if isinstance(b, bool) else b for b in ok)
        self.keys = keys            # each leaf's `_leaf_key`: the region's name too
        self.nb = nb
        self.rows = facts.rows      # where `_row` records the square a fact is about
        self._decls = facts         # whose declarations its functions are
        self._wholes = facts.wholes
        self._cache: dict = {}
        self._arr = None
        self.own = None         # the facts of this region alone, once made

    def _app(self, key, what, out, squares=()):
        v = self._cache.get(key)
        if v is None:
            # The C API's application, the arguments' array made once (z3's own call casts
            # each argument).
            if self._arr is None:
                self._arr = (z3.Ast * len(self.ok))(*[b.as_ast() for b in self.ok])
            f = self._decls.function(self.nb, what(), out, squares)
            ctx = f.ctx
            v = self._cache[key] = _expr_ref(
                z3.Z3_mk_app(ctx.ref(), f.ast, len(self.ok), self._arr), ctx)
        return v

    def same(self, a: int, b: int):
        if a == b:
            return self.ok[a]
        if self.keys[a] is False or self.keys[b] is False:
            return _FALSE
        if a > b:
            a, b = b, a
        return self._app((a, b), lambda: f"same{a}_{b}", z3.BoolSort(), (a, b))

    def size(self, a: int):
        return self._app(a, lambda: f"size{a}", z3.IntSort(), (a,))

    @property
    def count(self):
        return self._app("count", lambda: "count", z3.IntSort())

    def component(self, a: int) -> tuple:
        c = tuple(self.same(a, j) for j in range(len(self.ok)))
        keys = tuple(_leaf_key(b) for b in c)
        if any(k is not False for k in keys):
            self._wholes.setdefault(keys, self.size(a))
        return c


# ---- max and min as unknowns ------------------------------------------------------------------

# A `max` or `min` over more elements than this, of values not all numbers, is one unknown
# (`fold`); a shorter one stays the evaluator's chain of `if`s.
FOLD_TERMS = 8


class Fold:
    """One `max` or `min` read as an unknown ``app``: an uninterpreted function of the
    elements' guards and values (so that equal folds are one unknown, and a substitution into
    their leaves carries it), defined by its facts: it is at least (at most) each value whose
    guard holds, the default when none holds, and one of those values otherwise.  Exact:
    every model gives it the fold's own value."""

    def __init__(self, app, kind: str, n: int, dflt: int):
        self.app = app
        self.keys = ("fold", app.get_id())
        self.kind, self.n, self.dflt = kind, n, dflt
        self.facts = None

    def defining(self) -> list:
        if self.facts is None:
            args = [self.app.arg(k) for k in range(2 * self.n)]
            gs, vs = args[:self.n], args[self.n:]
            f = self.app
            bound = [z3.Implies(g, f >= v if self.kind == "max" else f <= v)
                     for g, v in zip(gs, vs) if not z3.is_false(g)]
            some = z3.Or(gs)
            self.facts = bound + [
                z3.Implies(z3.Not(some), f == self.dflt),
                z3.Implies(some, z3.Or([z3.And(g, f == v) for g, v in zip(gs, vs)]))]
        return self.facts


# ---- the facts --------------------------------------------------------------------------------

def distinct(r, squares, area: bool = False):
    """How many components of r the squares meet (each counted at its first square), or with
    ``area`` the sum of their sizes."""
    terms = [z3.If(z3.And(r.ok[u], *[z3.Not(r.same(v, u)) for v in squares[:i]]),
                   r.size(u) if area else z3.IntVal(1), z3.IntVal(0))
             for i, u in enumerate(squares)]
    return z3.Sum(terms) if terms else z3.IntVal(0)


def _row(r, t: int, fact):
    """``fact``, recorded (in ``r.rows``) as one about square t (and the squares around the
    change, which every query keeps): what a query `sliced` to other squares leaves out."""
    r.rows[fact.get_id()] = t
    return fact


def _own(r: Region) -> list:
    """A region's sizes' bounds: 0 outside the set, 1 to the grid's size inside.  (That a
    size is the number of the component's squares is not said square by square: on a large
    grid those sums were most of a query; a count over a whole component is read as its
    size instead, `whole`.)"""
    if r.own is None:
        n = len(r.ok)
        r.own = [_row(r, t, z3.If(r.ok[t], z3.And(r.size(t) >= 1, r.size(t) <= n),
                               r.size(t) == 0))
                 for t in range(n)]
    return r.own


def _basic(r: Region, around) -> list:
    return _own(r) + classes(r, around)


def classes(r, around) -> list:
    """Components are equivalence classes of one size, through the squares ``around``."""
    out = []
    for t in range(len(r.ok)):
        for d in around:
            if d == t:
                continue
            out.append(_row(r, t, z3.Implies(r.same(t, d),
                                          z3.And(r.ok[t], r.ok[d], r.size(t) == r.size(d)))))
            for e in around:
                if e not in (d, t):
                    out.append(_row(r, t, z3.Implies(z3.And(r.same(t, d), r.same(d, e)),
                                                  r.same(t, e))))
    return out


def unchanged(r, r2, around) -> list:
    """r2's set is r's: the same components."""
    out = [r2.count == r.count]
    for t in range(len(r.ok)):
        out.append(_row(r, t, r2.size(t) == r.size(t)))
        out += [_row(r, t, r2.same(t, d) == r.same(t, d)) for d in around if d != t]
    return out


def added(r, r2, q: int, around) -> list:
    """r2 is r with q added (q not in r)."""
    near = list(r.nb[q])
    out = [r2.count == r.count + 1 - distinct(r, near),
           r2.size(q) == 1 + distinct(r, near, area=True)]
    for t in range(len(r.ok)):
        if t == q:
            continue
        row = [z3.Implies(r.ok[t], r2.size(t) >= r.size(t))]
        for d in around:
            if d != t and d != q:
                row.append(z3.Implies(r.same(t, d), r2.same(t, d)))
        row.append(r2.same(t, q) == z3.Or([r.same(t, d) for d in near if d != t]
                                          + ([r.ok[t]] if t in near else [])))
        apart = z3.Not(z3.Or([r.same(t, d) if d != t else z3.BoolVal(True) for d in near]))
        row.append(z3.Implies(z3.And(r.ok[t], apart), r2.size(t) == r.size(t)))
        out += [_row(r, t, f) for f in row]
    return out


def removed(r, r2, q: int, around) -> list:
    """r2 is r with q taken out (q in r)."""
    near = list(r.nb[q])
    out = [r2.count == r.count - 1 + distinct(r2, near),
           r.size(q) == 1 + distinct(r2, near, area=True)]
    for t in range(len(r.ok)):
        if t == q:
            continue
        with_q = r.same(t, q)
        row = [z3.Implies(z3.And(r.ok[t], z3.Not(with_q)), r2.size(t) == r.size(t)),
               z3.Implies(z3.And(r2.ok[t], with_q),
                          z3.Or([r2.same(t, d) if d != t else z3.BoolVal(True)
                                 for d in near]))]
        for d in around:
            if d != t and d != q:
                row.append(z3.Implies(r2.same(t, d), r.same(t, d)))
        out += [_row(r, t, f) for f in row]
    return out


def _apart_at(r: Region, r2: Region) -> int | None:
    """The one square where the two regions' sets may differ (None: more than one, or another
    grid)."""
    if r.nb is not r2.nb:
        return None
    diff = [i for i, (a, b) in enumerate(zip(r.keys, r2.keys)) if a != b]
    return diff[0] if len(diff) == 1 else None


def _pair(r, r2, q: int, parts: list):
    """The facts of two regions whose sets may differ at q: the same components when they
    agree there, else those of q added or taken out."""
    same, plus, minus = parts
    return z3.If(r.ok[q] == r2.ok[q], _and(same), z3.If(r2.ok[q], _and(plus), _and(minus)))


def _and(facts: list):
    """z3's And of Bools, through the C API (the wrapper casts each of thousands)."""
    if not facts:
        return z3.BoolVal(True)
    ctx = facts[0].ctx
    arr = (z3.Ast * len(facts))(*[f.as_ast() for f in facts])
    return z3.BoolRef(z3.Z3_mk_and(ctx.ref(), len(facts), arr), ctx)


def unknowns_in(ref, roots: list, seen: set, wanted: tuple, into: bool = True,
                skip=frozenset()) -> list:
    """The applications of the functions whose declarations' ids are in one of the
    containers ``wanted`` (a `RegionFacts`' unknowns: `RegionFacts.declared`) under the raw
    z3 ASTs ``roots`` (of the context ``ref``), each once
    and after those among its arguments, as (AST, its declaration's id, the app).  ``into``:
    whether their arguments are walked; ``seen``: the ids of the ASTs walked already, grown;
    ``skip``: more ids not to walk into.  The walk is over raw ASTs: wrapping each node costs
    more than the rest."""
    from z3 import z3core as C
    app_kind = z3.Z3_APP_AST
    found: list = []
    stack = list(roots)
    while stack:
        a = stack.pop()
        if type(a) is tuple:            # an unknown, its arguments walked
            found.append(a)
            continue
        i = C.Z3_get_ast_id(ref, a)
        if i in seen or i in skip:
            continue
        seen.add(i)
        if C.Z3_get_ast_kind(ref, a) != app_kind:
            continue
        app = C.Z3_to_app(ref, a)
        n = C.Z3_get_app_num_args(ref, app)
        if not n:
            continue
        decl = C.Z3_get_ast_id(ref, C.Z3_get_app_decl(ref, app))
        if any(decl in w for w in wanted):
            stack.append((a, decl, app))
            if not into:
                continue
        stack.extend(C.Z3_get_app_arg(ref, app, k) for k in range(n))
    return found


class RegionFacts:
    """The region builtins' unknowns and facts for one proof (an `Opaque` abstraction's
    ``regions``): its regions, their facts and what the queries walked, remembered here."""

    def __init__(self):
        self._regions: dict = {}    # (grid, ok leaf keys) -> Region
        self._by_app: dict = {}     # an unknown's arguments' z3 ids -> (arguments, Region)
        self._facts: dict = {}      # (regions' keys, around) -> their facts
        self.wholes: dict = {}      # a component's squares (their keys) -> its size
        self._fold_apps: dict = {}  # a fold's arguments' z3 ids -> (arguments, Fold)
        self.rows: dict = {}        # a fact's z3 id -> the one square it is about (`_row`)
        self._slice = None          # the squares a query is about, within `sliced`
        self._walked: dict = {}     # (a conjunct's z3 id, base) -> (it, its regions, base)
        # The memo of a solver queried in a scope first, its base never walked alone: one
        # for all such solvers (read only), so that each conjunct's walk is remembered
        # across their queries.
        self._no_base: tuple = ([], set(), set())
        # The z3 declarations of the unknowns (their names number them).
        self._functions: dict = {}      # (grid size, what) -> z3 function
        self._family_ids: dict = {}     # a function's z3 id -> the neighbours of its grid
        self._fold_kinds: dict = {}     # a fold function's z3 id -> (kind, n, empty default)
        self._squares: dict = {}        # an unknown's function's z3 id -> its squares
        self._kinds: dict = {}          # ... -> which unknown it is: same, size or count

    def function(self, nb, what: str, out, squares=()):
        """One uninterpreted function of a grid's set (its squares' Bools), per unknown
        (``squares``: those it is about, by ordinal)."""
        key = (len(nb), what)
        f = self._functions.get(key)
        if f is None:
            name = f"region{len(nb)}.{what}"
            f = self._functions[key] = z3.Function(name, *([z3.BoolSort()] * len(nb)), out)
            self._family_ids[f.get_id()] = nb
            self._squares[f.get_id()] = tuple(squares)
            self._kinds[f.get_id()] = next(k for k in ("same", "size", "count")
                                           if what.startswith(k))
        return f

    def what(self, decl_id: int) -> tuple[str, tuple] | None:
        """Which unknown one of a region's functions is, by the z3 id of its declaration:
        ("same", (a, b)), ("size", (a,)) or ("count", ()); None for another function."""
        kind = self._kinds.get(decl_id)
        return None if kind is None else (kind, self._squares[decl_id])

    def fold_kind(self, decl_id: int):
        """(kind, elements, default) of one of the folds' functions, by the z3 id of its
        declaration; None for another function."""
        return self._fold_kinds.get(decl_id)

    def family(self, decl_id: int):
        """The neighbours of the grid of one of the regions' functions, by the z3 id of its
        declaration; None for another function."""
        return self._family_ids.get(decl_id)

    def declared(self) -> tuple:
        """The containers of the z3 ids of the unknowns' declarations (`unknowns_in`)."""
        return (self._family_ids, self._fold_kinds)

    def squares_in(self, terms) -> frozenset:
        """The squares of the unknowns these z3 terms mention (not those of the sets the
        unknowns are of: an unknown's arguments are not walked into)."""
        out: set = set()
        seen: set = set()
        wanted = self.declared()
        for t in terms:
            for _, decl, _ in unknowns_in(t.ctx.ref(), [t.as_ast()], seen, wanted, into=False):
                out.update(self._squares.get(decl, ()))
        return frozenset(out)

    def region(self, ok: tuple, nb) -> Region:
        keys = tuple(_leaf_key(b) for b in ok)
        r = self._regions.get((id(nb), keys))
        if r is None:
            r = self._regions[(id(nb), keys)] = Region(ok, nb, keys, self)
        return r

    def whole(self, squares) -> z3.ArithRef | None:
        """The size of the component whose squares are exactly these (a count over all of
        them: the evaluator's `count t in Sq: c[t]` of c = component(s, ok)), or None.  Two
        components with the same squares, term for term, have the same number of them, so
        any one's size will do."""
        return self.wholes.get(tuple(_leaf_key(b) for b in squares))

    def fold(self, kind: str, pairs, dflt: int):
        """``kind`` (max or min) of the values whose guards hold, over ``pairs`` of (guard,
        value), ``dflt`` when none holds: one unknown with its facts (`Fold`), which a query
        gets when it mentions it (`facts_for`).  As the evaluator's chain of `if`s, a bound on
        the fold (a square's value at most the largest over its region) is z3's to find
        through every link; as an unknown it is one implication.  None when the fold is short
        or of numbers only, or its values are not integers."""
        if len(pairs) <= FOLD_TERMS:
            return None
        gs = [z3.BoolVal(g) if isinstance(g, bool) else g for g, _ in pairs]
        vs = [z3.IntVal(v) if isinstance(v, int) and not isinstance(v, bool) else v
              for _, v in pairs]
        if not all(isinstance(g, z3.BoolRef) for g in gs) or \
                not all(isinstance(v, z3.ArithRef) and v.is_int() for v in vs):
            return None
        n = len(pairs)
        key = (f"fold{n}", kind, dflt)
        f = self._functions.get(key)
        if f is None:
            f = self._functions[key] = z3.Function(f"fold.{kind}{n}.{dflt}",
                                                   *([z3.BoolSort()] * n + [z3.IntSort()] * n),
                                                   z3.IntSort())
            self._fold_kinds[f.get_id()] = (kind, n, dflt)
        return f(*gs, *vs)

    def fold_mentioned(self, arg_ids: tuple, app, kind) -> Fold:
        """The `Fold` of an application of a fold's function (``app()``: the application,
        asked only for one not met yet)."""
        hit = self._fold_apps.get(arg_ids)
        if hit is None:
            a = app()
            hit = self._fold_apps[arg_ids] = (a, Fold(a, *kind))
        return hit[1]

    def mentioned(self, arg_ids: tuple, children, nb):
        """The region of an application of one of the unknowns' functions (of grid ``nb``),
        by its arguments' z3 ids (``children()``: the arguments, asked only for a region not
        met yet)."""
        hit = self._by_app.get(arg_ids)
        if hit is None:
            ok = children()
            hit = self._by_app[arg_ids] = (ok, self.region(ok, nb))    # ok keeps the ids alive
        return hit[1]

    @contextmanager
    def sliced(self, squares):
        """Within it, `facts_for` gives only the facts about ``squares`` (by ordinal) and the
        squares around the change: a weaker set of assumptions (a query proved under it is
        proved under all the facts), much smaller on a large grid."""
        before = self._slice
        self._slice = frozenset(squares)
        try:
            yield
        finally:
            self._slice = before

    def slicing(self) -> bool:
        return self._slice is not None

    def facts_for(self, regions) -> list:
        """The facts of these regions (those a query mentions), as one list of z3 Bools; a `Fold`
        among them brings its own.  Within `sliced`, only the facts about the squares it names,
        those around the change, and those about no one square (how the counts change, the
        folds')."""
        regions = set(regions)
        folds = [f for f in regions if isinstance(f, Fold)]
        out = [c for f in folds for c in f.defining()]
        regions = sorted(regions.difference(folds), key=lambda r: str(r.keys))
        if not regions:
            return out
        pairs = []
        for r, r2 in itertools.combinations(regions, 2):
            q = _apart_at(r, r2)
            if q is not None:
                pairs.append((r, r2, q))
        around = tuple(sorted({x for _, _, q in pairs for x in (q, *regions[0].nb[q])}))
        rows = self._slice
        keep = None if rows is None else frozenset(rows).union(around)

        def kept(key, facts: list) -> list:
            if keep is None:
                return facts
            # The facts by square, once: a slice is then a few of its rows.
            none, by_row = self._cached(("rows", key), lambda: [self._by_row(facts)])[0]
            return none + [f for t in keep for f in by_row.get(t, ())]

        for r in regions:
            key = ("basic", r.keys, around)
            out += kept(key, self._cached(key, lambda: _basic(r, around)))
        for r, r2, q in pairs:
            key = ("parts", r.keys, r2.keys, around)
            parts = self._cached(key, lambda: [
                unchanged(r, r2, around), added(r, r2, q, around), removed(r, r2, q, around)])
            if keep is None:
                out += self._cached(("pair", r.keys, r2.keys, around), lambda: [
                    _pair(r, r2, q, parts)])
            else:
                out.append(_pair(r, r2, q, [kept((key, k), p) for k, p in enumerate(parts)]))
        return out

    def _by_row(self, facts: list) -> tuple:
        """The facts about no one square, and the others by the square they are about."""
        none, by_row = [], {}
        for f in facts:
            t = self.rows.get(f.get_id())
            if t is None:
                none.append(f)
            else:
                by_row.setdefault(t, []).append(f)
        return none, by_row

    def side_conditions(self, solver, assumptions) -> list:
        """The facts of the regions whose unknowns the solver's formula or the assumptions
        mention (`facts_for`), once per solver scope and set of regions.  The walk is
        over raw z3 ASTs (wrapping each node costs more than the rest), and what the solver's
        first assertions mention is remembered on it: a step's queries share them."""
        from z3 import z3core as C
        ctx = getattr(solver, "ctx", None) or z3.main_ctx()
        ref = ctx.ref()

        def walk(asts, seen, found, base=frozenset()):
            for a, decl, app in unknowns_in(ref, asts, seen, self.declared(), skip=base):
                args = [C.Z3_get_app_arg(ref, app, k)
                        for k in range(C.Z3_get_app_num_args(ref, app))]
                ids = tuple(C.Z3_get_ast_id(ref, x) for x in args)
                nb = self.family(decl)
                if nb is not None:
                    found.add(self.mentioned(
                        ids, lambda args=args: tuple(_expr_ref(x, ctx) for x in args), nb))
                else:
                    found.add(self.fold_mentioned(
                        ids, lambda a=a: _expr_ref(a, ctx), self.fold_kind(decl)))

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
                memo = self._no_base
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
            hit = self._walked.get(key)
            if hit is None or not hit[0].eq(c) or hit[2] is not memo[1]:
                got: set = set()
                walk([c.as_ast()], set(), got, memo[1])
                hit = (c, frozenset(got), memo[1])
                if len(self._walked) > 4096:
                    self._walked.clear()
                self._walked[key] = hit
            found |= hit[1]
        if not found:
            return []
        key = tuple(sorted(str(r.keys) for r in found))
        done = linear.added_to(solver, "_rulebook_regions")
        if key in done:
            return []
        if (not hasattr(solver, "num_scopes") or solver.num_scopes() == 0) \
                and not self.slicing():
            done.add(key)       # (a sliced query's facts are not all of them)
        return self.facts_for(found)

    def _cached(self, key, make) -> list:
        hit = self._facts.get(key)
        if hit is None:
            hit = self._facts[key] = make()
        return hit
