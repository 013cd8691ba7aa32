"""The prover's abstractions of its inductive step, read by the symbolic evaluator through the
engine's `Abstraction` protocol (solver/engine/abstraction.py): an `exists real` as an
uninterpreted predicate of its inputs, an expression that computes a fixpoint as
uninterpreted functions of what it reads, and the region builtins as unknowns with the facts
of connected regions (regionfacts.py).  Each reading is coarser than the evaluator's: a step
proved under it holds for every predicate and function, the true ones included, so
"inductive" stays sound; none is for witnesses (a model may give them any value)."""
from __future__ import annotations

import time

import z3
from z3.z3 import _to_expr_ref as _expr_ref

from ..engine import domains as dz
from ..engine import fixinc
from ..engine.abstraction import Abstraction
from ..engine.domains import leaf_sorts
from ..lang import ir
from ..lang.irwalk import nodes
from ..lang.types import BagT, BoolT, EnumT, IntT, MapT, RecordT, SetT, finite
from .regionfacts import RegionFacts


def for_step(options) -> Opaque:
    """The reading of the inductive step under ``options`` (a `ProveOptions`): each
    `exists real` uninterpreted unless ``exact_reals``, the fixpoints with ``opaque_fix`` or
    ``region_facts``, the region builtins with the facts of connected regions with the
    latter (one `RegionFacts` a proof: it keeps the declarations it makes)."""
    return Opaque(reals=not options.exact_reals, fixes=options.opaque_fixpoints,
                  regions=RegionFacts() if options.region_facts else None,
                  budget_ms=None if options.opaque_fixpoints else options.fix_budget_ms)


class _OverBudget(Exception):
    """The unrolling's time budget ran out: ``node`` (a `fix`) is to be read coarsely."""

    def __init__(self, node):
        super().__init__(node)
        self.node = node


class Opaque(Abstraction):
    """The step's reading: with ``reals``, a symbolic `exists real` whose inputs are not all
    concrete is an uninterpreted predicate applied to the values it reads, one predicate per
    `exists real` of the source: two places that ask it of equal values get one answer, and
    nothing else is known of it (a step that needs no more costs no real arithmetic: the
    Farkas dual of a body whose lever arms are symbolic splits every product over its
    interval).  With ``fixes``, a symbolic expression that computes a `fix` (see
    `evaluate._abstractable`), with inputs not all concrete, is, leaf by leaf, an
    uninterpreted function of the values it reads (one family of functions per node of the
    source): what does not depend on what the fixpoint computes (a count of pieces, beside a
    guard that floods a region) is proved without unrolling it, which on a large board does
    not build.  With ``regions`` (a `RegionFacts`), the region builtins are its unknowns,
    and what computes a fixpoint only through them is computed."""

    def __init__(self, reals: bool = True, fixes: bool = False,
                 regions: RegionFacts | None = None, budget_ms: int | None = None):
        self.reals = reals
        # Without ``fixes``, the unrolling's time budget (see `fixpoint`): the `fix` nodes
        # found too costly (by identity, each kept in ``_nodes``), the hooks being evaluated
        # (outermost first), the instant the outermost's budget runs out, and how many
        # values were read coarsely for it (`approximations`).
        self.budget = None if budget_ms is None else budget_ms / 1000
        self._blown: set[int] = set()
        self._active: list = []
        self._deadline: float | None = None
        self._coarse = 0
        self.fixes = fixes
        self.regions = regions
        self._inputs: dict = {}      # IR node id -> (node, what it reads)
        self._nodes: dict = {}       # IR node id -> (node, its functions' layout or None)
        # One predicate per `exists real` of the source and sorts of its inputs, and per
        # predicate's name the ids (in the evaluator's `linear.Sides`) of its applications
        # decided exactly.
        self._predicates: dict = {}
        self._facts: dict = {}
        # The action paths built under this reading (`splits.paths`), by state and share:
        # one pass of a proof builds the same ones twice, for the invariants' step and for
        # the transition properties'.
        self._paths: dict = {}
        # One family of functions per node of the source that computes a fixpoint (and sorts
        # of its inputs), and per function's z3 id: (its family, which leaf of the value it
        # is, the value's type, the types of the inputs its arguments are the leaves of).
        self._fix_functions: dict = {}
        self._fix_layout: dict = {}

    @property
    def predicates(self) -> dict:
        return self._facts

    def _reads(self, e):
        hit = self._inputs.get(id(e))
        if hit is None or hit[0] is not e:
            hit = self._inputs[id(e)] = (e, _inputs(e))
        return hit[1]

    def real_exists(self, e, st, env):
        if not self.reals:
            return None
        inputs = self._reads(e)
        return None if inputs is None else _predicate(e, inputs, st, env, self._predicates)

    def real_decided(self, term, c, sides) -> None:
        # Concrete inputs: the predicate at them is what the rows decide, so that a term the
        # step reaches by substitution, the same application, knows it too.
        sides.define(term, term == c)
        # Every query that applies the predicate to terms gets this fact too: a term that
        # equals these inputs (the guard says so) then has the same answer.
        self._facts.setdefault(term.decl().name(), set()).add(term.get_id())

    def approximations(self) -> int:
        return self._coarse

    def kept_paths(self) -> dict:
        return self._paths

    def _layout_of(self, e):
        """`_layout` of ``e``, worked out once per node (the entry keeps the node alive, so
        that its id is not reused)."""
        hit = self._nodes.get(id(e))
        if hit is None or hit[0] is not e:
            hit = self._nodes[id(e)] = (e, _layout(e))
        return hit[1]

    def fixpoint(self, e, f, st, env):
        if not self.fixes and self.budget is None:
            return f(st, env)
        layout = self._layout_of(e)
        if not self.fixes:
            return self._budgeted(e, f, st, env, layout)
        if layout is None:
            return f(st, env)
        proper = layout[1]
        # Under region facts, what computes a fixpoint only through a region builtin is
        # computed, the builtin giving its region's unknowns.
        if not proper and self.regions is not None:
            return f(st, env)
        return self._coarsely(e, f, st, env, layout)

    def _budgeted(self, e, f, st, env, layout):
        """``e`` unrolled within the budget: the outermost hook being evaluated owns it;
        when it runs out (seen as a nested hook begins), the outermost `fix` node then being
        unrolled (or begun) whose value can be read as uninterpreted functions is, from then
        on, and the owner evaluates again.  A blown node's value is read so at once.  A node with
        no such reading under the owner: the owner finishes with no budget."""
        if id(e) in self._blown:
            return self._coarsely(e, f, st, env, layout)
        owner = not self._active
        if not owner:
            self._past_budget((e, layout))
            self._active.append((e, layout))
            try:
                return f(st, env)
            finally:
                self._active.pop()
        while True:
            self._deadline = time.monotonic() + self.budget
            self._active.append((e, layout))
            try:
                return f(st, env)
            except _OverBudget as over:
                self._blown.add(id(over.node))
                self._layout_of(over.node)      # kept, so that its id is not reused
            finally:
                self._active.pop()
                self._deadline = None
            if id(e) in self._blown:
                return self._coarsely(e, f, st, env, layout)

    def _coarsely(self, e, f, st, env, layout):
        """``e``'s value as uninterpreted functions of what it reads (computed, when that is
        all concrete); counted when it is read so for the budget, not as asked."""
        args = _arguments(layout[0], st, env)
        if not args or _all_concrete(args):
            return f(st, env)
        if not self.fixes:
            self._coarse += 1
        inputs, proper, key, label, types = layout
        return _applied(key, label, e.type, args, types, self._fix_functions, self._fix_layout)

    def _past_budget(self, *entering) -> None:
        """Past the owner's budget: the outermost `fix` being unrolled (or ``entering``)
        that can be read coarsely is to be (raised to the owner); with none, no budget."""
        if self._deadline is not None and time.monotonic() > self._deadline:
            blowable = [x for x, lay in (*self._active, *entering)
                        if isinstance(x, ir.Fix) and lay is not None]
            if blowable:
                raise _OverBudget(blowable[0])
            self._deadline = None

    def unrolled(self) -> None:
        if self._active:
            self._past_budget()

    def region(self, ok: tuple, nb):
        return None if self.regions is None else self.regions.region(ok, nb)

    def whole(self, terms):
        return None if self.regions is None else self.regions.whole(terms)

    def fold(self, kind: str, pairs, dflt: int):
        if self.regions is None:
            return None
        return self.regions.fold(kind, [(g, b) for g, b in pairs if g is not False], dflt)

    def side_conditions(self, solver, assumptions) -> list:
        return [] if self.regions is None else self.regions.side_conditions(solver, assumptions)

    def fix_functions(self):
        """The z3 ids of the declarations of the functions that read fixpoints (a
        container)."""
        return self._fix_layout

    def fix_family(self, decl_id: int):
        """(its family's functions, which leaf of the value it is, the value's type, the types
        of the inputs its arguments are the leaves of) of one of the functions that read
        fixpoints, by the z3 id of its declaration; None for another function."""
        return self._fix_layout.get(decl_id)


def regions_of(abstraction) -> RegionFacts | None:
    """The region facts an abstraction reads the region builtins by, if any."""
    return getattr(abstraction, "regions", None)


def _layout(e: ir.Expr):
    """What `Opaque.fixpoint` needs of a node: (its inputs, whether it computes a `fix` other
    than through a region builtin, its family's key and label, its inputs' types); None when
    it reads a state whole or its value has no fixed list of z3 leaves."""
    inputs = _inputs(e)
    if inputs is None or leaf_sorts(e.type) is None:
        return None
    sp = e.span
    return (inputs, fixinc.computes_fixpoint(e, {}, regions=False),
            ("node", sp.file, sp.line, sp.col, sp.end_line, sp.end_col, type(e).__name__),
            f"{type(e).__name__.lower()}@{sp.line}:{sp.col}",
            tuple(t for part in inputs for _, t in part))


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


def _predicate(e: ir.RealExists, inputs, st, env, made: dict):
    """The uninterpreted predicate of ``e`` (one of those ``made``, by the source place and
    the sorts of its inputs) applied to what it reads, and whether every input is concrete
    (true: the caller decides it exactly as well); None when an input has no z3 leaf (a
    text)."""
    args = _arguments(inputs, st, env)
    if args is None:
        return None
    concrete = _all_concrete(args)
    sorts = tuple(a.sort() for a in args)
    key = (e.span.file, e.span.line, e.span.col, e.name, tuple(str(x) for x in sorts))
    f = made.get(key)
    if f is None:
        f = made[key] = z3.Function(
            f"{e.name}@{e.span.line}:{e.span.col}#{len(made)}", *sorts, z3.BoolSort())
    return f(*args), z3.BoolVal(concrete)


# ---- fixpoints as uninterpreted functions -------------------------------------------------------

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


def _applied(key: tuple, label: str, t, args: list, inputs: tuple, made: dict, layout: dict):
    """A value of type ``t`` whose leaves are uninterpreted functions (one family per ``key``,
    kept in ``made``, each function's place in ``layout``) applied to ``args`` (the leaves of
    values of the types ``inputs``, one after the other); None when ``t`` has no fixed list of
    z3 leaves."""
    out = leaf_sorts(t)
    if out is None:
        return None
    sorts = tuple(a.sort() for a in args)
    key = key + (tuple(s.kind() for s in sorts),)
    fs = made.get(key)
    if fs is None:
        n = len(made)
        fs = made[key] = [z3.Function(f"{label}#{n}[{i}]", *sorts, srt)
                                    for i, srt in enumerate(out)]
        for i, f in enumerate(fs):
            layout[f.get_id()] = (fs, i, t, inputs)
    # One argument array for every leaf (z3's own call casts each argument, leaf by leaf).
    arr = (z3.Ast * len(args))(*[a.as_ast() for a in args])
    ctx = args[0].ctx
    return _rebuild(t, iter([_expr_ref(z3.Z3_mk_app(ctx.ref(), f.ast, len(args), arr), ctx)
                             for f in fs]))


def fix_functions(abstraction):
    """The z3 ids of the declarations of ``abstraction``'s functions that read fixpoints (a
    container; empty for an abstraction that reads none so)."""
    return abstraction.fix_functions() if isinstance(abstraction, Opaque) else {}


def fix_family(abstraction, decl_id: int):
    """`Opaque.fix_family` of ``abstraction``; None for an abstraction that reads no fixpoint
    as functions."""
    return abstraction.fix_family(decl_id) if isinstance(abstraction, Opaque) else None
