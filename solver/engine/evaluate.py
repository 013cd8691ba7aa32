"""The one evaluator: compiles IR to Python closures, parametrised by a value domain.

``Compiler(symbolic=False)`` gives the reference interpreter (plain Python values);
``Compiler(symbolic=True)`` gives the Z3 backend (the same shapes with Z3 terms at the leaves).
Both come from the same code below, so the two cannot drift apart: every node kind is handled
once, with the domain deciding only how a leaf operation is carried out.

A compiled expression is ``f(st, env)``: ``st`` is the state, ``env`` the frame (``env[0]`` is the
previous state in a transition property, slot ``s`` is ``env[s + 1]``).

Here: the `Compiler`'s core (node dispatch, calls, statements); its operators and its loops
are mixins (operators.py, loops.py), over values.py (seqs, bounds, sums) and memo.py (the
interpreter's remembered evaluations, shared with codegen.py).
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable, assert_never

from . import codegen
from . import domains as dz
from . import fixinc
from . import linear
from . import reach
from . import regions
from .abstraction import EXACT, Abstraction
from .loops import Loops
from .memo import DefMemo, Idents, memoised, memoised_pure, reads_no_state
from .operators import Operators
from .values import (checked_int, fits_check, key_error, narrow_int, out_of_type, proved,
                     seq_get, seq_set, sym_fits, truncate)
from ..lang import ir
from ..lang.errors import EvalError
from ..lang.irwalk import nodes
from ..lang.types import BagT, BoolT, IntT, MapT, SeqT, SetT, Type

Fn = Callable


class Refused(Exception):
    """A `requires` that does not hold (concrete evaluation): the rule that forbids the action."""

    def __init__(self, rule: str, message: str, span=None):
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.message = message
        self.span = span


class ShowLog(list):
    """The shown items of a concrete run that also records each `show ... via` region (its
    type and value): what a picture asks of a move (`Game.move_via`); a plain list records
    only the items."""

    def __init__(self):
        super().__init__()
        self.via: list = []


@dataclass
class SymCtx:
    """One path of a symbolic run of statements: its condition (the `if`s taken), its frame,
    the guards of the `requires` met on it, and its shown items."""

    pc: object = True
    env: list = field(default_factory=list)
    guards: list = field(default_factory=list)   # (rule name, condition)
    shows: list = field(default_factory=list)    # shown items
    dead: bool = False      # a `requires` failed outright: the rest is not run

    def fork(self, cond) -> "SymCtx":
        return SymCtx(dz.and_(self.pc, cond), list(self.env), list(self.guards),
                      list(self.shows), self.dead)


class Compiler(Operators, Loops):
    """IR to closures in one value domain (see the module's docstring); the operators and the
    loops are its mixins (operators.py, loops.py).  Symbolically it reads through
    ``abstraction`` what a prover may abstract (abstraction.py; exact by default)."""

    def __init__(self, symbolic: bool, state_type: Type | None = None,
                 codegen: bool | None = None):
        self.symbolic = symbolic
        # Concretely, expressions are compiled to Python source (codegen.py) unless turned off
        # (RULEBOOK_CODEGEN=0: the closures alone, for differential tests and timings).
        if codegen is None:
            codegen = os.environ.get("RULEBOOK_CODEGEN", "1") != "0"
        self.codegen = codegen and not symbolic
        self._def_memos: dict = {}    # def name -> DefMemo, shared by its call sites
        # (def name, which arguments stand as their numbers) -> the memo that the generated
        # call sites of a def that reads no state share (codegen_loops.remembered_call)
        self._pure_memos: dict = {}
        self._stateless_defs: dict = {}   # def name -> whether it reads only its arguments
        self._summaries: dict = {}        # IR node id -> what it reads (fixinc.summary)
        self._fields_read: dict = {}      # IR node id -> the state fields it reads
        self._recorded: set = set()       # env indices of fixpoints whose reads are recorded
        self._fixful: dict = {}           # IR node id -> whether it computes a fixpoint
        self.state_type = state_type
        self.abstraction: Abstraction = EXACT
        # The side conditions of the terms this evaluator makes (its `exists real` literals):
        # a solver made with them adds those its formula uses (`symbolic.make_solver`).
        self.sides = linear.Sides()
        # Numbers for the large values in the keys of stateless defs' memos (codegen).
        self.idents = Idents()
        # The game's bounded searches (`reachable`, reach.py), set by the game that owns it.
        self.searches: reach.Searches | None = None
        # The connected regions the symbolic closures unrolled, shared by every call site.
        self.unrolled = regions.Unrolled()

    @contextmanager
    def abstracted(self, abstraction: Abstraction):
        """Within it, the symbolic closures (compiled before or after) read through
        ``abstraction``: a prover's reading of its step, for that step alone."""
        before = self.abstraction
        self.abstraction = abstraction
        try:
            yield
        finally:
            self.abstraction = before

    def _stateless(self, name, body, slots, args) -> bool:
        # A def's body reads the state or not wherever it is inlined: decided once per def.
        hit = self._stateless_defs.get(name)
        if hit is None:
            hit = self._stateless_defs[name] = fixinc.stateless(body, slots, args, self._summaries)
        return hit

    # ---- expressions ------------------------------------------------------------------

    def expr(self, e: ir.Expr) -> Fn:
        if self.codegen and not isinstance(e, _LEAVES):
            f = codegen.compile_expr(self, e)
            if f is not None:
                return f
        f = self._closure(e)
        if self.symbolic and _abstractable(e) and fixinc.computes_fixpoint(e, self._fixful):
            # What computes a fixpoint is the abstraction's to read (a prover's inductive step
            # may read it as uninterpreted functions of what it reads).
            f = self._fixpoint(e, f)
        return f

    def _fixpoint(self, e: ir.Expr, f: Fn) -> Fn:
        def fixpoint(st, env):
            return self.abstraction.fixpoint(e, f, st, env)
        return fixpoint

    def _call_memo(self, e: ir.Call):
        """How a call is remembered: ``("pure", None)`` (by its arguments, across states),
        ``("shared", memo)`` (the def's `DefMemo`, None symbolically), ``("remembered",
        None)`` (a def of scalar arguments that reads no state) or ``("inline", None)``."""
        if fixinc.memoisable(e.body, e.slots, self._summaries):
            if not self.symbolic and reads_no_state(e.body):
                # A function of its arguments alone (a score of a value): remembered across
                # states, in a bounded memo.
                return "pure", None
            if self.symbolic:
                return "shared", None
            # Concretely, one memo per def (not per call site): a flood `f(s)` asked by
            # three other defs in one state is computed once.
            shared = self._def_memos.get(e.name)
            if shared is None:
                fields = fixinc.state_fields(e.body, self._fields_read)
                shared = self._def_memos[e.name] = DefMemo(fields)
            return "shared", shared
        if not self.symbolic and self._stateless(e.name, e.body, e.slots, e.args):
            return "remembered", None
        return "inline", None

    def _closure(self, e: ir.Expr) -> Fn:
        """The closure of ``e``: one per node (its children through `expr`)."""
        match e:
            case ir.Const(value=v):
                return lambda st, env: v
            case ir.Text(value=v):
                return lambda st, env: v
            case ir.Local(slot=s):
                s1 = s + 1
                get = lambda st, env: env[s1]  # noqa: E731
                get.local = s1      # read straight from env by the fast paths (`local`)
                return get
            case ir.StateRef(old=old):
                if old:
                    return lambda st, env: env[0]
                return lambda st, env: st
            case ir.Field(record=rec, index=i):
                if isinstance(rec, ir.StateRef) and not rec.old:
                    return lambda st, env: st[i]
                fr = self.expr(rec)
                return lambda st, env: fr(st, env)[i]
            case ir.Index():
                return self._index(e)
            case ir.Unary(op=op, arg=a):
                fa = self.expr(a)
                if op == "neg":
                    return lambda st, env: -fa(st, env)
                if self.symbolic:
                    return lambda st, env: dz.not_(fa(st, env))
                return lambda st, env: not fa(st, env)
            case ir.Binary():
                return self._binary(e)
            case ir.Ite(cond=c, then=a, other=b, type=t):
                fc, fa, fb = self.expr(c), self.expr(a), self.expr(b)
                if not self.symbolic:
                    return lambda st, env: fa(st, env) if fc(st, env) else fb(st, env)

                def ite(st, env):
                    cv = fc(st, env)
                    if cv is True:
                        return fa(st, env)
                    if cv is False:
                        return fb(st, env)
                    return dz.merge(t, cv, fa(st, env), fb(st, env))
                return ite
            case ir.Let(slot=s, value=v, body=b):
                fv, fb, s1 = self.expr(v), self.expr(b), s + 1

                def let(st, env):
                    env[s1] = fv(st, env)
                    return fb(st, env)
                return let
            case ir.Call(args=args, slots=slots, body=body, check=chk, name=name, span=span):
                fargs = [(s + 1, self.expr(a)) for s, a in zip(slots, args)]
                fb = self.expr(body)
                if len(fargs) == 0:
                    call = fb
                elif len(fargs) == 1:
                    (s1, f1), = fargs

                    def call(st, env):
                        env[s1] = f1(st, env)
                        return fb(st, env)
                elif len(fargs) == 2:
                    (s1, f1), (s2, f2) = fargs

                    def call(st, env):
                        a1, a2 = f1(st, env), f2(st, env)
                        env[s1] = a1
                        env[s2] = a2
                        return fb(st, env)
                else:
                    def call(st, env):
                        # All arguments first: an argument may read a slot another one sets.
                        vals = [f(st, env) for _, f in fargs]
                        for (s1, _), v in zip(fargs, vals):
                            env[s1] = v
                        return fb(st, env)
                kind, shared = self._call_memo(e)
                if kind == "pure":
                    call = memoised_pure(fb, fargs)
                elif kind == "shared":
                    call = memoised(fb, fargs, self.symbolic, shared)
                elif kind == "remembered":
                    call = fixinc.remembered(fb, fargs)
                if chk is None or self.symbolic:
                    # Symbolically, the declared type's bounds are asserted by the concrete
                    # replay of every answer, so an out-of-type def cannot go unnoticed.
                    return call

                def returned(v, t, sp):
                    return EvalError(f"{name} returned {v!r}, outside its declared type {t}", sp)

                if isinstance(chk, IntT):       # the common case, without a `fits_check` call
                    return checked_int(call, chk, returned, span)

                ok = fits_check(chk)

                def checked(st, env):
                    v = call(st, env)
                    if not ok(v):
                        raise returned(v, chk, span)
                    return v
                return checked
            case ir.Builtin():
                return self._builtin(e)
            case ir.Member():
                return self._member(e)
            case ir.RecordLit(items=items):
                fs = [self.expr(x) for x in items]
                if len(fs) == 3:
                    # Cells and offsets: three fields, built in the hot loops of 3-D specs.
                    f0, f1, f2 = fs
                    return lambda st, env: (f0(st, env), f1(st, env), f2(st, env))
                return lambda st, env: tuple(f(st, env) for f in fs)
            case ir.SeqLit(items=items):
                fs = [self.expr(x) for x in items]
                return lambda st, env: tuple(f(st, env) for f in fs)
            case ir.BagLit(type=t, items=items):
                return self._baglit(t, items)
            case ir.With(record=rec, updates=ups):
                fr = self.expr(rec)
                fus = [(i, self.expr(x)) for i, x in ups]

                def with_(st, env):
                    r = list(fr(st, env))
                    for i, f in fus:
                        r[i] = f(st, env)
                    return tuple(r)
                return with_
            case ir.Quant():
                return self._quant(e)
            case ir.RealExists():
                # Both domains: the body is lowered to linear rows, decided by an LP or by
                # z3's linear real arithmetic (see linear.py).
                return linear.compile_exists(self, e)
            case ir.RealVar():
                raise AssertionError("f[k] is compiled inside its `exists real` (linear.py)")
            case ir.Fix():
                return self._fix(e)
            case ir.Largest():
                return self._largest(e)
            case ir.Reachable():
                return self._reachable(e)
            case _:
                assert_never(e)

    def _reachable(self, e: ir.Reachable) -> Fn:
        """A bounded search (reach.py): the game's `Searches`, in both domains (from the state
        its set-up makes, if it has one); over a state with unknowns, an unknown boolean."""
        if not self.symbolic:
            fw, fg = self.expr(e.within), self.expr(e.goal)
            fs = self.stmts(e.setup) if e.setup else None

            def reachable(st, env):
                if fs is not None:
                    try:
                        st = fs(st, env, [])
                    except Refused:     # no such state to search from
                        return False
                return self.searches.search(e, fg, fw(st, env), st, env)
            return reachable

        def sym_reachable(st, env):
            searches = self.searches
            fw, fg, fs = searches.concrete(e)
            try:
                cst = reach.concrete_state(self.state_type, st)
                cenv = reach.concrete_env(env)
            except LookupError:
                return searches.unknown(e, st, env)
            if fs is not None:
                try:
                    cst = fs(cst, cenv, [])
                except Refused:
                    return False
            return searches.search(e, fg, fw(cst, cenv), cst, cenv)
        return sym_reachable

    # ---- statements -------------------------------------------------------------------

    def stmts(self, body: tuple[ir.Stmt, ...]) -> Fn:
        """Compile statements.

        Concrete: ``run(st, env, shows) -> st``; a failing `requires` raises `Refused`.
        Symbolic: ``run(st, ctx) -> [(st, ctx), ...]``, one pair per path: an `if` whose
        condition is symbolic forks the path instead of merging two different states, so the
        control of each path stays concrete."""
        if not self.symbolic:
            if len(body) == 1 and isinstance(body[0], (ir.Assign, ir.Show)):
                return self.stmt(body[0])
            return self._written(body)
        runs = [self.stmt(s) for s in body]

        def srun(st, ctx):
            paths = [(st, ctx)]
            for r in runs:
                nxt = []
                for st_, ctx_ in paths:
                    if ctx_.dead:
                        nxt.append((st_, ctx_))
                    else:
                        nxt.extend(r(st_, ctx_))
                paths = nxt
            return paths
        return srun

    def _written(self, body: tuple[ir.Stmt, ...]) -> Fn:
        """Concrete statements as the source of one function: a `requires`, a `let` and an
        `if` written inline, an assignment or a `show` called as `stmt` compiles it; the same
        evaluations in the same order, the same errors, as a closure per statement."""
        scope: dict = {"Refused": Refused}
        lines = ["def run(st, env, ctx):"]
        def block(stmts, pad: str):
            if not stmts:
                lines.append(f"{pad}pass")
            for s in stmts:
                k = len(lines)          # a name of its own for each statement's functions
                match s:
                    case ir.Requires(name=name, message=msg, cond=c, span=span):
                        scope[f"c{k}"], scope[f"r{k}"] = self.expr(c), (name, msg, span)
                        lines.extend([f"{pad}if not c{k}(st, env):",
                                      f"{pad}    raise Refused(*r{k})"])
                    case ir.LetStmt(slot=slot, value=v):
                        scope[f"v{k}"] = self.expr(v)
                        lines.append(f"{pad}env[{slot + 1}] = v{k}(st, env)")
                    case ir.IfStmt(cond=c, then=then, other=other) if len(pad) < 64:
                        scope[f"c{k}"] = self.expr(c)
                        lines.append(f"{pad}if c{k}(st, env):")
                        block(then, pad + "    ")
                        lines.append(f"{pad}else:")
                        block(other, pad + "    ")
                    case _:
                        scope[f"s{k}"] = self.stmt(s)
                        lines.append(f"{pad}st = s{k}(st, env, ctx)")
        block(body, "    ")
        lines.append("    return st")
        exec("\n".join(lines), scope)
        return scope["run"]

    def stmt(self, s: ir.Stmt) -> Fn:
        sym = self.symbolic
        match s:
            case ir.Requires(name=name, message=msg, cond=c, span=span):
                fc = self.expr(c)
                if not sym:
                    def req(st, env, ctx):
                        if not fc(st, env):
                            raise Refused(name, msg, span)
                        return st
                    return req

                def sreq(st, ctx):
                    g = fc(st, ctx.env)
                    if g is False:
                        # A rule that fails outright ends the path (it is kept, refused by this
                        # rule): what follows may assume it (a cell inside the building space)
                        # and is not evaluated.
                        ctx.guards.append((name, False))
                        ctx.dead = True
                        return [(st, ctx)]
                    if g is not True:
                        ctx.guards.append((name, g))
                    return [(st, ctx)]
                return sreq
            case ir.LetStmt(slot=slot, value=v):
                fv, s1 = self.expr(v), slot + 1
                if sym:
                    def slet(st, ctx):
                        ctx.env[s1] = fv(st, ctx.env)
                        return [(st, ctx)]
                    return slet

                def let(st, env, ctx):
                    env[s1] = fv(st, env)
                    return st
                return let
            case ir.Assign():
                return self._assign(s)
            case ir.IfStmt(cond=c, then=then, other=other):
                fc = self.expr(c)
                if not sym:
                    ft = self.stmts(then) if then else (lambda st, env, ctx: st)
                    fo = self.stmts(other) if other else (lambda st, env, ctx: st)
                    return lambda st, env, ctx: ft(st, env, ctx) if fc(st, env) else \
                        fo(st, env, ctx)
                ft = self.stmts(then) if then else (lambda st, ctx: [(st, ctx)])
                fo = self.stmts(other) if other else (lambda st, ctx: [(st, ctx)])

                def sif(st, ctx):
                    cv = fc(st, ctx.env)
                    if cv is True:
                        return ft(st, ctx)
                    if cv is False:
                        return fo(st, ctx)
                    return ft(st, ctx.fork(cv)) + fo(st, ctx.fork(dz.not_(cv)))
                return sif
            case ir.Show(items=items, via=via):
                fs = [self.expr(x) for x in items]
                if not sym:
                    from ..lang.codec import to_json
                    typed = [(x.type, f) for x, f in zip(items, fs)]
                    fvia = self.expr(via) if via is not None else None

                    def show(st, env, ctx):
                        if ctx is not None:
                            ctx.append([to_json(t, f(st, env)) for t, f in typed])
                            if fvia is not None and isinstance(ctx, ShowLog):
                                ctx.via.append((via.type, fvia(st, env)))
                        return st
                    return show

                def sshow(st, ctx):
                    ctx.shows.append([f(st, ctx.env) for f in fs])
                    return [(st, ctx)]
                return sshow
        assert_never(s)

    def _key_expr(self, k: ir.Expr, kt: Type, span, f: Fn | None = None) -> Fn:
        """A map's or bag's int key ``k`` (``f``, when the caller compiled it already),
        checked to be one of the keys ``kt`` where its static type may leave them (see
        `values.narrow_int`; a record key out of its type fails at its look-up,
        `types.finite`).  Symbolically, as a def's declared type, the concrete replay of every
        answer checks it."""
        f = self.expr(k) if f is None else f
        t = narrow_int(k.type, kt)
        if t is None or self.symbolic:
            return f
        return checked_int(f, t, key_error, span)

    def _assign(self, s: ir.Assign) -> Fn:
        fv = self.expr(s.value)
        path = s.path
        getters = []
        for p in path:
            match p:
                case ir.PathField(index=i):
                    getters.append(("field", i, None, None))
                case ir.PathIndex(key=k, type=ct):
                    if isinstance(ct, SeqT):
                        getters.append(("seq", self.expr(k), ct.elem, ct))
                    else:
                        kt = ct.key if isinstance(ct, MapT) else ct.elem
                        vt = ct.val if isinstance(ct, MapT) else (
                            BoolT() if isinstance(ct, SetT) else IntT(0, ct.most))
                        getters.append(("key", self._key(kt, self._key_expr(k, kt, s.span)),
                                        vt, ct))
        bounds = s.bounds
        source = s.source
        target = s.target
        span = s.span
        sym = self.symbolic

        def put(container, depth, value, st, env):
            kind, a, vt, ct = getters[depth]
            if kind == "field":
                child = container[a]
            elif kind == "seq":
                i = a(st, env)
                child = seq_get(vt, container, i) if sym else container[i]
            else:
                i = a(st, env)
                child = dz.select(vt, container, i) if sym else container[i]
            if depth + 1 < len(getters):
                value = put(child, depth + 1, value, st, env)
            if kind == "field":
                return container[:a] + (value,) + container[a + 1:]
            if kind == "seq":
                return seq_set(vt, container, i, value) if sym else \
                    container[:i] + (value,) + container[i + 1:]
            return dz.store(vt, container, i, value) if sym else \
                container[:i] + (value,) + container[i + 1:]

        if not sym:
            if out_of_type(s.value):
                # The value may hold a field or item computed out of its range (the checker
                # lets it through, trusting the spec's guards): checked whole as it is stored.
                bounds, source = (bounds if bounds is not None else s.value.type), None
            return _concrete_assign(fv, getters, bounds, source, target, span)

        def sassign(st, ctx):
            env = ctx.env
            v = fv(st, env)
            if bounds is not None:
                g = sym_fits(bounds, v, source)
                if g is not True:
                    ctx.guards.append(("bounds", g))
                v = truncate(bounds, v)
            return [(put(st, 0, v, st, env), ctx)]
        return sassign


# Leaves: their closures are as fast as generated code, and the closures' fast paths
# recognise a local's (`local`).
_LEAVES = (ir.Const, ir.Text, ir.Local, ir.StateRef)


def _abstractable(e: ir.Expr) -> bool:
    """Whether ``e`` is the abstraction's to read (`Abstraction.fixpoint`: a prover's may read
    it as uninterpreted functions) when it computes a fixpoint: not a leaf, and not a
    connective (`and`, `or`, `not`, `if`, `forall`, `exists`), an operator (a comparison, a
    sum) nor a call, whose parts are read instead: a guard's cheap conjuncts (the square is
    empty) stay known beside the part that floods, and `count() >= old(count())` compares two
    values of one function."""
    if isinstance(e, _LEAVES + (ir.Call, ir.Ite, ir.Binary, ir.Unary)):
        return False
    return not (isinstance(e, ir.Quant) and e.kind in ("forall", "exists"))


def _concrete_assign(fv, getters, bounds, source, target, span):
    """The interpreter's assignment, written out as one Python function per statement (the
    playouts and searches run millions of them): the value, its bounds check reduced to what
    the value's static type does not already prove, then the path down and the containers
    rebuilt on the way up, with no call per level of the path."""
    if bounds is not None and proved(bounds, source):
        bounds = None
    scope = {"fv": fv, "Refused": Refused, "EvalError": EvalError, "span": span,
             "msg": f"{target} would leave {bounds}"}
    lines = ["def assign(st, env, ctx):", "    v = fv(st, env)"]
    if isinstance(bounds, IntT):
        scope["lo"], scope["hi"] = bounds.lo, bounds.hi
        lines.append("    if not lo <= v <= hi:")
    elif isinstance(bounds, BagT):
        scope["most"] = bounds.most
        lines.append("    if v and (min(v) < 0 or max(v) > most):")
    elif bounds is not None:
        scope["ok"] = fits_check(bounds, source)
        lines.append("    if not ok(v):")
    if bounds is not None:
        lines.append('        raise Refused("bounds", msg, span)')
    # Down the path: c{d} is the container at depth d, i{d} the index of the entry there.
    lines.append("    c0 = st")
    last = len(getters) - 1
    for d, (kind, a, _, _) in enumerate(getters):
        if kind == "field":
            lines.append(f"    i{d} = {a}")
        else:
            scope[f"k{d}"] = a
            lines.append(f"    i{d} = k{d}(st, env)")
            if kind == "seq":
                lines += [f"    if not 0 <= i{d} < len(c{d}):",
                          f'        raise EvalError(f"index {{i{d}}} is outside a seq of '
                          f'length {{len(c{d})}}", span)']
        if d < last:
            lines.append(f"    c{d + 1} = c{d}[i{d}]")
    # Up again: each container copied with its entry replaced.
    for d in range(last, -1, -1):
        lines += [f"    o = list(c{d})", f"    o[i{d}] = v", "    v = tuple(o)"]
    lines.append("    return v")
    exec("\n".join(lines), scope)
    return scope["assign"]


# ---- compile-time constants -------------------------------------------------------------------

def const_value(e: ir.Expr):
    """Evaluate a constant expression (no state) concretely."""
    f = Compiler(False).expr(e)
    # A constant table may inline many defs: give it every slot its IR names.
    slots = [n.slot for n in nodes(e) if isinstance(getattr(n, "slot", None), int)]
    slots += [s for n in nodes(e) if isinstance(n, ir.Call) for s in n.slots]
    return f(None, [None] * (max(slots, default=0) + 64))
