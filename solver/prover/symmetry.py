"""The board's symmetries in the inductive step (``rulebook prove --symmetry``).

A grid (a record of two integer fields, `types.is_grid`) has the symmetries of its
rectangle: the two mirrors and the half turn, and on a square grid the two diagonal mirrors
and the quarter turns too.  A symmetry σ maps squares to squares and keeps neighbours
neighbours.  Renaming the state's leaves by it (the leaf of square s of every table over the
grid becomes that of σ(s): `Symmetry.pairs`) maps a formula about one board to the same
formula about the mirrored board.

A path of the step proved for the parameters p (the action's squares) says: every state that
satisfies the invariants and the path's guard satisfies its post-state conjuncts.  Renamed,
that holds of the path's image, as a formula (`Symmetry.image`); so when z3 shows that the
path of the parameters σ(p) asks no more than that image (its guard implies the image's, and
the image's conclusion implies its own), it needs no proof of its own.  Nothing here trusts
the rules to be symmetric: a rule that names particular squares, or counts them in an order,
makes the check fail on the paths it touches, and those are proved as usual.  What is
trusted is only what holds of every grid:

- renaming universally quantified variables keeps a formula valid; the state's bounds are
  checked to be renamed into bounds (`Symmetry.holds_of`, once per case, together with the
  invariants themselves: the invariants assumed of the image must be assumed of the state);
- a region's unknowns (`regionfacts`: same, size, count) are about connected regions, which
  a symmetry of the grid maps onto connected regions: the size of square i's component in
  a set is the size of σ(i)'s in the mirrored set;
- a `max` or `min` read as one unknown does not depend on the order of its elements.
"""
from __future__ import annotations

import z3
from z3 import z3core as C
from z3.z3 import _to_expr_ref as _expr_ref

from ..engine import domains as dz
from ..engine.domains import leaf_sorts
from . import abstractions
from . import regionfacts
from ..engine import regions
from ..engine.symbolic import leaves, make_solver, run_check
from ..lang.types import (BagT, EnumT, IntT, BoolT, MapT, RecordT, SeqT, SetT, TextT, Type,
                          finite, is_grid)

# z3's limit on one symmetry check (ms): the checks compare formulas of one shape, and one
# that takes longer than this is not worth waiting for; the path is then proved itself.
CHECK_MS = 10_000
# Terms whose images a symmetry remembers before it forgets them all (memory over a case).
CACHE_TERMS = 200_000


def _unknowns(terms: list, facts, into: bool = True, also=()) -> list:
    """The applications of a region's or a fold's functions (those of the `RegionFacts`
    ``facts``, if any; or of those whose declarations' ids are in ``also``) in ``terms``, each
    before those it is an argument of; without ``into``, only the outermost (not those in the
    arguments of another)."""
    wanted = (facts.declared() if facts is not None else ()) + ((also,) if also else ())
    if not terms or not wanted:
        return []
    ctx = terms[0].ctx
    return [_expr_ref(a, ctx) for a, _, _ in
            regionfacts.unknowns_in(ctx.ref(), [t.as_ast() for t in terms], set(), wanted,
                                    into)]


def _arrays(pairs: list) -> tuple:
    n = len(pairs)
    return (n, (z3.Ast * n)(*[a.as_ast() for a, _ in pairs]),
            (z3.Ast * n)(*[b.as_ast() for _, b in pairs]))


def _substitute(term, pairs: list, arrays=None):
    """z3's substitution through the C API (z3.substitute checks each pair's sorts in
    Python: most of the time of a step's many small terms); ``arrays``: the pairs' made
    already."""
    ctx = term.ctx
    n, src, dst = arrays or _arrays(pairs)
    return _expr_ref(C.Z3_substitute(ctx.ref(), term.as_ast(), n, src, dst), ctx)


def _meaning(terms: list, facts) -> list:
    """What is true of the unknowns in ``terms`` on any grid: a component's size and the
    number of components are between 0 and the number of squares, a square outside the set
    has size 0 and one inside at least 1; a fold is what its facts define.  (Without them
    a `max` over sizes with 0 for none is not the same chain of `if`s in another order.)"""
    out = []
    for a in _unknowns(terms, facts):
        d = a.decl().get_id()
        kind = facts.what(d)
        if kind is not None:
            n = a.num_args()
            if kind[0] == "size":
                inside = a.arg(kind[1][0])
                out += [z3.Implies(inside, z3.And(a >= 1, a <= n)),
                        z3.Implies(z3.Not(inside), a == 0)]
            elif kind[0] == "count":
                out += [a >= 0, a <= n]
            continue
        fk = facts.fold_kind(d)
        if fk is not None:
            out += regionfacts.Fold(a, *fk).defining()
    return out


def _grids_in(t: Type, keys: set, values: set) -> None:
    """The grid types ``t`` holds, as keys of tables (``keys``) or as values (``values``)."""
    match t:
        case RecordT(fields=fields):
            if is_grid(t):
                values.add(t)
            for _, ft in fields:
                _grids_in(ft, keys, values)
        case MapT(key=k, val=vt):
            if is_grid(k):
                keys.add(k)
            _grids_in(vt, keys, values)
        case BagT(elem=et) | SetT(elem=et):
            if is_grid(et):
                keys.add(et)
            elif isinstance(et, RecordT):
                _grids_in(et, keys, values)
        case SeqT(elem=et):
            inner_k: set = set()
            inner_v: set = set()
            _grids_in(et, inner_k, inner_v)
            # A sequence's slots are not renamed: a grid in one is a grid of values.
            values |= inner_k | inner_v


def _has_grid(t: Type) -> bool:
    """Whether a value of type ``t`` holds a grid, as the key of a table or as a value."""
    found: set = set()
    _grids_in(t, found, found)
    return bool(found)


def grid_of(game) -> tuple[RecordT | None, str]:
    """The one grid whose tables the state holds, or None and why there is none to use."""
    keys: set = set()
    values: set = set()
    _grids_in(game.state_type, keys, values)
    if not keys:
        return None, "the state has no table over a grid"
    if len(keys) > 1:
        return None, "the state has tables over more than one grid"
    (g,) = keys
    if g in values:
        return None, "the state holds squares of the grid as values, not only as keys"
    return g, ""


def _coordinates(w: int, h: int) -> dict:
    """The grid's symmetries other than the identity as maps of a square's coordinates from
    0 (integers or z3 terms alike)."""
    maps = {"mirror x": lambda x, y: (w - 1 - x, y), "mirror y": lambda x, y: (x, h - 1 - y),
            "half turn": lambda x, y: (w - 1 - x, h - 1 - y)}
    if w == h:
        maps |= {"diagonal": lambda x, y: (y, x),
                 "antidiagonal": lambda x, y: (w - 1 - y, w - 1 - x),
                 "quarter turn": lambda x, y: (y, w - 1 - x),
                 "three-quarter turn": lambda x, y: (w - 1 - y, x)}
    return maps


def _extent(g: RecordT) -> tuple:
    (_, fx), (_, fy) = g.fields
    return fx.lo, fy.lo, fx.hi - fx.lo + 1, fy.hi - fy.lo + 1


def permutations(g: RecordT) -> list[tuple[str, tuple[int, ...]]]:
    """The grid's symmetries other than the identity, each named and as a permutation of
    the ordinals (σ[i] is the image of square i); each is checked to keep neighbours."""
    x0, y0, w, h = _extent(g)
    fin = finite(g)
    nb = regions.neighbours(g)
    out = []
    for name, f in _coordinates(w, h).items():
        perm = []
        for x, y in fin.values:
            u, v = f(x - x0, y - y0)
            perm.append(fin.index[(u + x0, v + y0)])
        if all(sorted(perm[j] for j in nb[i]) == sorted(nb[perm[i]])
               for i in range(len(perm))) and perm != list(range(len(perm))):
            out.append((name, tuple(perm)))
    return out


class Symmetry:
    """One symmetry of the grid over one symbolic state ``S`` (its leaves the variables)."""

    def __init__(self, game, grid: RecordT, name: str, perm: tuple, S):
        self.name = name
        x0, y0, w, h = _extent(grid)
        f = _coordinates(w, h)[name]

        def moved_square(x, y):
            u, v = f(x - x0, y - y0)
            return u + x0, v + y0
        self._board(grid, perm, moved_square)
        # The step's region facts (`Opaque.regions`): its regions' images are found there.
        self.facts = abstractions.regions_of(game.symbolic.abstraction)
        self.step = game.symbolic.abstraction
        t = game.state_type
        pairs = []
        self.fixed = True       # the concrete leaves (the split fields) are their own images
        for a, b in zip(leaves(t, S), leaves(t, self._moved(t, S))):
            if a is b:
                continue
            if not (dz.is_sym(a) and dz.is_sym(b)):
                if not (dz.is_sym(a) or dz.is_sym(b)) and a == b:
                    continue
                self.fixed = False
                continue
            pairs.append((a, b))
        self.pairs = pairs

    def _board(self, grid: RecordT | None, perm: tuple, moved_square) -> None:
        """What a symmetry does to the squares (``perm`` to their ordinals, ``moved_square``
        to their coordinates), and its caches of images, empty."""
        self.grid, self.perm = grid, perm
        self.inverse = tuple(sorted(range(len(perm)), key=lambda i: perm[i]))
        self.nb = regions.neighbours(grid) if grid is not None else None
        self.index = finite(grid).index if grid is not None else {}
        self.values = finite(grid).values if grid is not None else ()
        self.moved_square = moved_square
        self._apps: dict = {}        # an application's z3 id -> (it, its image)
        self._args: dict = {}        # its arguments' z3 ids -> (them, their images, region)
        self._images: dict = {}      # a term's z3 id -> (it, its image)
        self._arrays = None          # the leaves' pairs for the C API, made once

    def _moved(self, t: Type, v):
        """The state whose square i holds what square σ(i) holds in ``v``."""
        match t:
            case BoolT() | IntT() | EnumT() | TextT():
                return v
            case RecordT(fields=fields):
                return tuple(self._moved(ft, x) for (_, ft), x in zip(fields, v))
            case MapT(key=k, val=vt):
                if k == self.grid:
                    return tuple(self._moved(vt, v[self.perm[i]]) for i in range(len(v)))
                return tuple(self._moved(vt, x) for x in v)
            case BagT(elem=et) | SetT(elem=et):
                return tuple(v[self.perm[i]] for i in range(len(v))) if et == self.grid \
                    else v
        return v

    def square(self, value, inverse: bool = False):
        """The image of one square (a record value), or with ``inverse`` its preimage."""
        return self.values[(self.inverse if inverse else self.perm)[self.index[value]]]

    def image(self, term):
        """``term`` about the mirrored board: its leaves renamed, a region's unknowns and
        the long folds rewritten as above."""
        key = term.get_id()
        hit = self._images.get(key)
        if hit is not None:
            return hit[1]
        if len(self._images) > CACHE_TERMS:
            # A case of 8 x 8 has some 17,000 paths: the images of one path's terms are
            # those the next paths reuse, not every one since the first.
            self._images.clear()
            self._apps.clear()
            self._args.clear()
        # (The outermost unknowns only: each one's image is made of its arguments' images.)
        apps = [self._app(a) for a in _unknowns([term], self.facts, into=False,
                                                also=abstractions.fix_functions(self.step))]
        if apps:
            out = _substitute(term, self.pairs + apps)
        elif self.pairs:
            if self._arrays is None:
                self._arrays = _arrays(self.pairs)
            out = _substitute(term, self.pairs, self._arrays)
        else:
            out = term
        self._images[key] = (term, out)        # the term kept alive with its id
        return out

    def _app(self, a) -> tuple:
        i = a.get_id()
        hit = self._apps.get(i)
        if hit is None:
            hit = self._apps[i] = (a, self._app_image(a))
        return hit

    def _app_image(self, e):
        ctx = e.ctx
        ref = ctx.ref()
        app = C.Z3_to_app(ref, e.as_ast())
        raw = [C.Z3_get_app_arg(ref, app, k) for k in range(C.Z3_get_app_num_args(ref, app))]
        key = tuple(C.Z3_get_ast_id(ref, x) for x in raw)
        # A region's unknowns (its `same`, each square's `size`, its `count`) share their
        # arguments, the set's squares: imaged once, and the mirrored region found once.
        hit = self._args.get(key)
        if hit is None:
            them = [_expr_ref(x, ctx) for x in raw]
            hit = self._args[key] = [them, [self.image(x) for x in them], None]
        args = hit[1]
        d = e.decl()
        nb = None if self.facts is None else self.facts.family(d.get_id())
        n = len(self.perm)
        if nb is not None:
            what = self.facts.what(d.get_id())
            if nb is not self.nb or len(args) != n or what is None:
                return d(*args)
            kind, squares = what
            r = hit[2]
            if r is None:
                moved = tuple(args[self.inverse[k]] for k in range(n))
                r = hit[2] = self.facts.mentioned(tuple(x.get_id() for x in moved),
                                                  lambda: moved, nb)
            if kind == "same":
                return r.same(*(self.perm[s] for s in squares))
            if kind == "size":
                return r.size(self.perm[squares[0]])
            return r.count
        kind = None if self.facts is None else self.facts.fold_kind(d.get_id())
        if kind is not None and kind[1] == n:
            gs, vs = args[:n], args[n:]
            return d(*[gs[self.inverse[k]] for k in range(n)],
                     *[vs[self.inverse[k]] for k in range(n)])
        family = abstractions.fix_family(self.step, d.get_id())
        if family is not None:
            out = self._fix_image(family, args)
            if out is not None:
                return out
        return d(*args)

    def _fix_image(self, family, args: list):
        """The image of one leaf of a fixpoint read as uninterpreted functions (`abstractions.
        Opaque`), ``args`` the images of its arguments: the family's function of the
        mirrored leaf (square s's becomes σ(s)'s) applied to the mirrored inputs (a table
        over the grid permuted, a square moved).  A proof holds for every function, so for
        these too; None when the value or an input holds squares otherwise (a path of the
        family is then proved itself)."""
        fs, i, t, inputs = family
        j = self._leaf(t, i)
        if j is None:
            return None
        moved: list = []
        at = 0
        for it in inputs:
            sorts = leaf_sorts(it)
            if sorts is None:
                return None
            part = self._value(it, args[at:at + len(sorts)])
            if part is None:
                return None
            moved += part
            at += len(sorts)
        return fs[j](*moved) if at == len(args) else None

    def _leaf(self, t: Type, i: int) -> int | None:
        """Which leaf of a value of type ``t`` leaf ``i`` is about on the mirrored board."""
        if not _has_grid(t):
            return i
        match t:
            case MapT(key=k, val=vt) if k == self.grid:
                if _has_grid(vt):
                    return None
                n = len(leaf_sorts(vt))
                return self.perm[i // n] * n + i % n
            case SetT(elem=et) | BagT(elem=et) if et == self.grid:
                return self.perm[i]
        return None

    def _value(self, t: Type, leaves: list) -> list | None:
        """The leaves of the mirrored value of type ``t`` whose leaves are ``leaves`` (their
        images already)."""
        if not _has_grid(t):
            return leaves
        match t:
            case _ if t == self.grid:
                xy = [x.as_long() if z3.is_int_value(x) else x for x in leaves]
                return [z3.IntVal(u) if isinstance(u, int) else z3.simplify(u)
                        for u in self.moved_square(*xy)]
            case MapT(key=k, val=vt) if k == self.grid:
                if _has_grid(vt):
                    return None
                n = len(leaf_sorts(vt))
                return [x for k2 in range(len(self.perm))
                        for x in leaves[self.inverse[k2] * n:(self.inverse[k2] + 1) * n]]
            case SetT(elem=et) | BagT(elem=et) if et == self.grid:
                return [leaves[self.inverse[k2]] for k2 in range(len(self.perm))]
            case RecordT(fields=fields):
                out: list = []
                at = 0
                for _, ft in fields:
                    n = len(leaf_sorts(ft) or ())
                    part = self._value(ft, leaves[at:at + n])
                    if part is None:
                        return None
                    out += part
                    at += n
                return out
        return None

    def holds_of(self, bounds: list, assumed: list) -> bool:
        """Whether the bounds and the assumed conjuncts imply the images of those the proved
        paths assumed (`_proved_from`): what a proof there assumes then holds here.  False
        also when z3 gives up (``CHECK_MS`` per query)."""
        if not self.fixed:
            return False
        have = {c.get_id() for c in bounds + assumed}
        goal = [g for g in (self.image(c) for c in bounds + self._proved_from(assumed))
                if g.get_id() not in have]
        s = make_solver(CHECK_MS, general=True)
        s.add(*bounds, *assumed, *_meaning(assumed + goal, self.facts))
        # One image at a time (the invariants are many conjuncts over the whole board: z3
        # gave up on all of them at once within CHECK_MS on 8 x 8).
        for g in goal:
            s.push()
            s.add(z3.Not(g))
            r = run_check(s)
            s.pop()
            if r != z3.unsat:
                return False
        return True

    def _proved_from(self, assumed: list) -> list:
        """The conjuncts the proved paths assumed: on the same case, this case's own."""
        return assumed

    def follows(self, bounds: list, guard, goal: list, proved_guard, proved_goal: list) -> bool:
        """Whether a path of ``guard`` whose post-state must satisfy ``goal`` is settled by
        a proved path (``proved_guard``, ``proved_goal``) mirrored: given ``holds_of`` for
        this case, the mirrored proof holds wherever the invariants do, and z3 shows that it
        implies this path's, from the bounds alone."""
        if not goal:
            return True
        known = z3.Implies(self.image(proved_guard),
                           z3.And([self.image(c) for c in proved_goal]))
        s = make_solver(CHECK_MS, general=True)
        s.add(*bounds, guard, known, z3.Not(z3.And(goal)),
              *_meaning([guard, known] + goal, self.facts))
        return run_check(s) == z3.unsat


class Rotation(Symmetry):
    """The players numbered from another one (the spec's `rotate`, ``game.p.rotate``): from
    the states of one case (``S0``, its actor player 0) to those of another (``Sr``, actor r),
    player p's part of the state (the `rotate` fields) becomes player p + r's, mod n, and
    the pieces piece(p) piece(p + r) wherever their enum is.  An image is a formula about a
    state of ``Sr``'s case: each leaf of ``S0`` replaced by what that state, numbered back,
    holds there.  The squares are not moved; nothing trusts the rules to be symmetric."""

    def __init__(self, game, r: int, S0, Sr, assumed0: list):
        rot = game.p.rotate
        self.name = f"players' rotation by {r}"
        grid, _ = grid_of(game)
        size = finite(grid).size if grid is not None else 0
        self._board(grid, tuple(range(size)), lambda x, y: (x, y))
        self.facts = abstractions.regions_of(game.symbolic.abstraction)
        self.step = game.symbolic.abstraction
        self.r, self.n = r, rot.n
        f, _ = game.expr(f"{rot.piece}(p)", {"p": IntT(0, rot.n - 1)})
        st = game.default_state()
        self.pieces = [f(st, p) for p in range(rot.n)]
        self.enum = next((ft for ft in _types_in(game.state_type) if isinstance(ft, EnumT)
                          and ft.name == rot.enum), None)
        self.assumed0 = assumed0
        t = game.state_type
        self._enum_leaves = set()
        self._raw: dict = {}        # a leaf numbered back's z3 id -> (it, the leaf)
        for (name, ft), x in zip(t.fields, S0):
            self._enum_leaf_ids(ft, x)
        moved = tuple(self._back(ft, x, name in rot.fields)
                      for (name, ft), x in zip(t.fields, Sr))
        pairs = []
        self.fixed = len(set(self.pieces)) == rot.n
        atoms = []
        for a, b in zip(leaves(t, S0), leaves(t, moved)):
            if a is b:
                continue
            if not dz.is_sym(a):
                if dz.is_sym(b) or a != b:
                    self.fixed = False
                continue
            pairs.append((a, dz.lift(b)))
            if self.enum is not None and b is not a and self._pieces_of(a):
                # `a == piece(p)` is `a == piece(p + r)` of the rotated case, term for term
                # (the leaf numbered back would be an `if` that z3 must see through, in a
                # count over every square: it gave up on 8 x 8).
                for v in range(len(self.enum.members)):
                    to = _eq(a, z3.IntVal(self.forward(v)))
                    atoms += [(_eq(a, z3.IntVal(v)), to), (_eq(z3.IntVal(v), a), to)]
        self.pairs = atoms + pairs

    def forward(self, v: int) -> int:
        """The value of the pieces' enum that ``v`` is in the rotated case."""
        fwd = {self.pieces[p]: self.pieces[(p + self.r) % self.n] for p in range(self.n)}
        return fwd.get(v, v)

    def _pieces_of(self, leaf) -> bool:
        return leaf.get_id() in self._enum_leaves

    def _player(self, v):
        """Player v numbered back (v - r, mod n)."""
        if not dz.is_sym(v):
            return (v - self.r) % self.n
        return z3.If(v >= self.r, v - self.r, v - self.r + self.n)

    def _piece(self, v):
        """A value of the pieces' enum numbered back."""
        back = {self.pieces[p]: self.pieces[(p - self.r) % self.n] for p in range(self.n)}
        if not dz.is_sym(v):
            return back.get(v, v)
        out = self._renumbered(v, back, -self.r)
        self._raw[out.get_id()] = (out, v)
        return out

    def _renumbered(self, v, to: dict, by: int):
        """The symbolic value ``v`` of the pieces' enum with each piece ``to`` another, the
        players counted on ``by``."""
        k0 = self.pieces[0]
        if self.pieces == list(range(k0, k0 + self.n)):
            # Pieces of consecutive values (the usual order of an enum's members): two
            # `if`s, not one a player.
            d = by % self.n
            return z3.If(v >= k0 + self.n - d, z3.If(v < k0 + self.n, v - (self.n - d), v),
                         z3.If(v >= k0, v + d, v))
        out = v
        for a, b in to.items():
            out = z3.If(v == a, z3.IntVal(b), out)
        return out

    def _forward_term(self, y):
        """``y``, a value of the pieces' enum numbered back, numbered forward again: the
        leaf itself for a leaf numbered back."""
        hit = self._raw.get(y.get_id())
        if hit is not None:
            return dz.lift(hit[1])
        if z3.is_int_value(y):
            return z3.IntVal(self.forward(y.as_long()))
        return self._renumbered(y, {a: self.forward(a) for a in self.pieces}, self.r)

    def _back(self, t: Type, v, rotated: bool):
        """What the state ``v`` of the rotated case holds, numbered back, for a field of type
        ``t`` (``rotated``: one of the `rotate` fields)."""
        if rotated and isinstance(t, IntT):
            return self._player(v)
        if rotated and isinstance(t, MapT):
            return tuple(self._back(t.val, v[(p + self.r) % self.n], False)
                         for p in range(len(v)))
        match t:
            case EnumT() if t == self.enum:
                return self._piece(v)
            case RecordT(fields=fields):
                return tuple(self._back(ft, x, False) for (_, ft), x in zip(fields, v))
            case MapT(val=vt):
                return tuple(self._back(vt, x, False) for x in v)
        return v

    def _enum_leaf_ids(self, t: Type, v) -> None:
        match t:
            case EnumT() if t == self.enum:
                if dz.is_sym(v):
                    self._enum_leaves.add(v.get_id())
            case RecordT(fields=fields):
                for (_, ft), x in zip(fields, v):
                    self._enum_leaf_ids(ft, x)
            case MapT(val=vt):
                for x in v:
                    self._enum_leaf_ids(vt, x)

    def _fix_image(self, family, args: list):
        """A fixpoint's function of the same leaf (the squares do not move) applied to its
        inputs with their pieces numbered forward again: a proof holds for every function,
        f(x) and f(forward(x)) alike, and forward(x numbered back) is the rotated case's own
        input.  Its other inputs (a player's number among them) are only numbered back."""
        fs, i, _, inputs = family
        flags = [f for it in inputs for f in _enum_flags(it, self.enum)]
        if self.enum is None or len(flags) != len(args) or not any(flags):
            return None
        return fs[i](*[self._forward_term(y) if f else y for f, y in zip(flags, args)])

    def _proved_from(self, assumed: list) -> list:
        """The first case's (``assumed0``): its proofs hold of this case numbered back."""
        return self.assumed0


def _enum_flags(t: Type, enum: EnumT | None) -> list[bool]:
    """For each z3 leaf of a value of type ``t`` (`domains.leaf_sorts`' order), whether it is
    a value of ``enum``."""
    match t:
        case EnumT():
            return [t == enum]
        case RecordT(fields=fields):
            return [f for _, ft in fields for f in _enum_flags(ft, enum)]
        case MapT(key=k, val=vt):
            return _enum_flags(vt, enum) * finite(k).size
        case SetT(elem=et) | BagT(elem=et):
            return [False] * finite(et).size
    return [False]


def _eq(a, b):
    """``a == b`` in this order (z3's ``==`` puts a number first: Python asks its subclass)."""
    return z3.BoolRef(C.Z3_mk_eq(a.ctx.ref(), a.as_ast(), b.as_ast()), a.ctx)


def _types_in(t: Type):
    yield t
    match t:
        case RecordT(fields=fields):
            for _, ft in fields:
                yield from _types_in(ft)
        case MapT(key=k, val=vt):
            yield from _types_in(vt)
        case SeqT(elem=et):
            yield from _types_in(et)


def group(game, S) -> tuple[list[Symmetry], str]:
    """The grid's symmetries over the symbolic state ``S`` that leave its concrete (split)
    leaves alone, or none and why."""
    grid, why = grid_of(game)
    if grid is None:
        return [], why
    out = [Symmetry(game, grid, name, perm, S) for name, perm in permutations(grid)]
    return [s for s in out if s.fixed], ""


def keys_of(paths: list, more=None) -> list:
    """What names each path among the step's, in order: its action, its parameters (and
    ``more(path)`` when given), and which of the paths of those it is."""
    seen: dict = {}
    out = []
    for b in paths:
        base = (b.action, _hashable(b.params)) + ((more(b),) if more is not None else ())
        k = seen.get(base, 0)
        seen[base] = k + 1
        out.append(base + (k,))
    return out


def _hashable(v):
    if isinstance(v, (list, tuple)):
        return tuple(_hashable(x) for x in v)
    return v


def moved_key(game, sym: Symmetry, key, inverse: bool = False):
    """The key of the image path: the action's grid parameters mirrored (by the inverse
    symmetry with ``inverse``)."""
    action, params, k = key
    binders = _binders(game, action)
    if binders is None or len(binders) != len(params):
        return None
    out = []
    for b, p in zip(binders, params):
        if is_square(b, sym.grid):
            if p not in sym.index:
                return None
            out.append(sym.square(p, inverse))
        else:
            out.append(p)
    return (action, tuple(out), k)


def _binders(game, action: str):
    for a in game.actions:
        if a.name == action:
            return a.ir.params
    return None


def is_square(binder, grid) -> bool:
    from ..lang.ir import TypeDomain
    return isinstance(binder.domain, TypeDomain) and binder.domain.elem == grid


def orbits(game, syms: list[Symmetry], keys: list) -> dict[int, list[tuple[int, Symmetry]]]:
    """For each path that is the image of an earlier one: [(that path, the symmetry that maps
    it onto this one), ...], the earliest first (the first of its orbit, which has none)."""
    where = {k: at for at, k in enumerate(keys)}
    out: dict = {}
    for at, k in enumerate(keys):
        from_ = []
        for s in syms:
            k0 = moved_key(game, s, k, inverse=True)
            at0 = where.get(k0)
            if at0 is not None and at0 < at:
                from_.append((at0, s))
        if from_:
            out[at] = sorted(from_, key=lambda x: x[0])
    return out
