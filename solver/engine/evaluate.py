"""The one evaluator: compiles IR to Python closures, parametrised by a value domain.

``Compiler(symbolic=False)`` gives the reference interpreter (plain Python values);
``Compiler(symbolic=True)`` gives the Z3 backend (the same shapes with Z3 terms at the leaves).
Both come from the same code below, so the two cannot drift apart: every node kind is handled
once, with the domain deciding only how a leaf operation is carried out.

A compiled expression is ``f(st, env)``: ``st`` is the state, ``env`` the frame (``env[0]`` is the
previous state in a transition property, slot ``s`` is ``env[s + 1]``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import compress
from typing import Callable, assert_never

import z3

from . import codegen
from . import domains as dz
from . import fixinc
from ..lang import ir
from ..lang import irwalk
from . import linear
from ..prover import regionfacts
from . import regions
from ..lang.errors import EvalError
from ..lang.irwalk import nodes
from ..lang.types import (BagT, BoolT, EnumT, IntT, MapT, RecordT, SeqT, SetT, Type, default,
                    finite)

Fn = Callable


class Refused(Exception):
    """A `requires` that does not hold (concrete evaluation): the rule that forbids the action."""

    def __init__(self, rule: str, message: str, span=None):
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.message = message
        self.span = span


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


class Compiler:
    def __init__(self, symbolic: bool, state_type: Type | None = None,
                 codegen: bool | None = None):
        self.symbolic = symbolic
        # Concretely, expressions are compiled to Python source (codegen.py) unless turned off
        # (RULEBOOK_CODEGEN=0: the closures alone, for differential tests and timings).
        if codegen is None:
            codegen = os.environ.get("RULEBOOK_CODEGEN", "1") != "0"
        self.codegen = codegen and not symbolic
        self._def_memos: dict = {}    # def name -> _DefMemo, shared by its call sites
        self._stateless_defs: dict = {}   # def name -> whether it reads only its arguments
        self._summaries: dict = {}        # IR node id -> what it reads (fixinc.summary)
        self._fields_read: dict = {}      # IR node id -> the state fields it reads
        self._recorded: set = set()       # env indices of fixpoints whose reads are recorded
        self._fixful: dict = {}           # IR node id -> whether it computes a fixpoint
        self.state_type = state_type

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
        if self.symbolic and _opaque_candidate(e) and linear.computes_fixpoint(e, self._fixful):
            # In the prover's inductive step, on request: uninterpreted functions of what it
            # reads (linear.opaque_fixes).
            f = linear.opaque_node(e, f)
        return f

    def _call_memo(self, e: ir.Call):
        """How a call is remembered: ``("pure", None)`` (by its arguments, across states),
        ``("shared", memo)`` (the def's `_DefMemo`, None symbolically), ``("remembered",
        None)`` (a def of scalar arguments that reads no state) or ``("inline", None)``."""
        if fixinc.memoisable(e.body, e.slots, self._summaries):
            if not self.symbolic and _reads_no_state(e.body):
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
                shared = self._def_memos[e.name] = _DefMemo(fields)
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
                get.local = s1      # read straight from env by the fast paths (`_local`)
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
                    call = _memoised_pure(fb, fargs)
                elif kind == "shared":
                    call = _memoised(fb, fargs, self.symbolic, shared)
                elif kind == "remembered":
                    call = fixinc.remembered(fb, fargs)
                if chk is None or self.symbolic:
                    # Symbolically, the declared type's bounds are asserted by the concrete
                    # replay of every answer, so an out-of-type def cannot go unnoticed.
                    return call

                if isinstance(chk, IntT):
                    lo, hi = chk.lo, chk.hi     # the common case, without `fits`' dispatch

                    def checked_int(st, env):
                        v = call(st, env)
                        if not lo <= v <= hi:
                            raise EvalError(f"{name} returned {v!r}, outside its declared "
                                            f"type {chk}", span)
                        return v
                    return checked_int

                def checked(st, env):
                    v = call(st, env)
                    if not fits(chk, v):
                        raise EvalError(f"{name} returned {v!r}, outside its declared type "
                                        f"{chk}", span)
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
            case _:
                assert_never(e)

    def _largest(self, e: ir.Largest) -> Fn:
        """The sum of the k largest items above 0.  Concrete: the items sorted.  Symbolic: the
        least of k·t + Σ n·max(0, v - t) over t in {0} and the items' values (every t >= 0
        gives at least the sum, the k-th largest value, or 0 when fewer, gives it exactly)."""
        fk = self.expr(e.count)
        groups = []
        for g in e.groups:
            fd = self.domain(g.domain) if g.domain is not None else None
            fw = self.expr(g.where) if g.where is not None else None
            if fd is not None and fw is not None and not self.symbolic:
                memo = self._filter_memo(g)
                if memo is not None:
                    fd, fw = _remembered_filter(fd, fw, g.slot + 1, *memo), None
            gains = tuple((self.expr(v), None if n is None else self.expr(n))
                          for v, n in zip(g.values, g.times))
            groups.append((fd, fw, g.slot + 1, gains))
        once = ((True, None),)

        def items(st, env):
            out = []
            for fd, fw, s1, gains in groups:
                for g, x in (once if fd is None else fd(st, env)):
                    if fd is not None:
                        env[s1] = x
                    if fw is not None:
                        g = dz.and_(g, fw(st, env))
                        if g is False:
                            continue
                    for fv, fn in gains:
                        out.append((g, fv(st, env), 1 if fn is None else fn(st, env)))
            return out

        def top(k, pool):
            pool = sorted(((v, n) for _, v, n in pool if v > 0 and n > 0), reverse=True)
            total = 0
            for v, n in pool:
                if k <= 0:
                    break
                take = n if n < k else k
                total += take * v
                k -= take
            return total

        if not self.symbolic:
            return lambda st, env: top(fk(st, env), items(st, env))

        def largest(st, env):
            k, pool = fk(st, env), items(st, env)
            if not dz.is_sym(k) and not any(dz.is_sym(x) for it in pool for x in it):
                return top(k, [it for it in pool if it[0] is True])
            def pos(x):
                return max(x, 0) if not dz.is_sym(x) else z3.If(x >= 0, x, 0)
            kk = pos(k)
            ths = [0] + [pos(v) for _, v, _ in pool]
            best = None
            for th in ths:
                over = sum_terms(dz.leaf_ite(g, pos(n) * pos(v - th), 0) if g is not True
                                 else pos(n) * pos(v - th) for g, v, n in pool)
                val = sum_terms([kk * th, over])
                if best is None:
                    best = val
                elif dz.is_sym(val) or dz.is_sym(best):
                    best = z3.If(val < best, val, best)
                else:
                    best = min(best, val)
            return best
        return largest

    def _fix(self, e: ir.Fix) -> Fn:
        mp = None if self.symbolic else fixinc.min_plus(e, self._summaries)
        if mp is None:
            return self._fix_iterated(e)
        # A relaxation of shortest paths: solved at once when that is the iteration's value.
        cost, q = mp
        # Every key's cost at once: one table, generated as one loop, not a call per key.
        costs = None if cost is None else self.expr(ir.Quant(
            MapT(e.step.domain.elem, cost.type), cost.span, "table", e.step.slot,
            e.step.domain, None, cost))
        return fixinc.compile_min_plus(
            self.expr(e.seed), costs,
            None if q.where is None else self.expr(q.where), self.expr(q.body.key), e, q,
            _empty_extreme(q.type), self._fix_iterated(e))

    def _fix_iterated(self, e: ir.Fix) -> Fn:
        if not self.symbolic and fixinc.applies(e):
            # Each key's step reads the fixpoint's value through `_Reads`, which records the
            # entries read: its reads r[k] are compiled to record them (see _index).
            st_ = e.step
            fseed = self.expr(e.seed)
            self._recorded.add(e.slot + 1)
            try:
                fw = self.expr(st_.where) if st_.where is not None else None
                fbody = self.expr(st_.body)
            finally:
                self._recorded.discard(e.slot + 1)
            return fixinc.compile_fix(fseed, fw, fbody, e)
        fseed, fstep, s1, bound = self.expr(e.seed), self.expr(e.step), e.slot + 1, e.bound
        if not self.symbolic:
            def fix(st, env):
                r = fseed(st, env)
                for _ in range(bound):
                    env[s1] = r
                    nxt = fstep(st, env)
                    if nxt == r:
                        break
                    r = nxt
                return r
            return fix

        def sfix(st, env):
            # Unrolled; a step that is structurally the previous value (after z3's
            # simplification) is the fixpoint, so concrete or saturated runs stop early.
            r = _simplified(fseed(st, env))
            for _ in range(bound):
                env[s1] = r
                nxt = _simplified(fstep(st, env))
                if _identical(nxt, r):
                    break
                r = nxt
            return r
        return sfix

    def _key(self, kt: Type, fk: Fn) -> Fn:
        """Compile a key to its ordinal in the key type."""
        index = finite(kt).index
        if not self.symbolic:
            # Enums and ranges are their own ordinals (less an offset); records need the table.
            if isinstance(kt, EnumT) or (isinstance(kt, IntT) and kt.lo == 0):
                return fk
            if isinstance(kt, IntT):
                lo = kt.lo
                return lambda st, env: fk(st, env) - lo
            return lambda st, env: index[fk(st, env)]
        return lambda st, env: dz.ordinal(kt, fk(st, env))

    def _index(self, e: ir.Index) -> Fn:
        fc = self.expr(e.coll)
        ct = e.coll.type
        span = e.span
        if isinstance(ct, SeqT):
            fi = self.expr(e.key)
            if not self.symbolic:
                def get(st, env):
                    s, i = fc(st, env), fi(st, env)
                    if not 0 <= i < len(s):
                        raise EvalError(f"index {i} is outside a seq of length {len(s)}", span)
                    return s[i]
                return get
            et = ct.elem
            return lambda st, env: seq_get(et, fc(st, env), fi(st, env))
        kt = ct.key if isinstance(ct, MapT) else ct.elem
        fk0 = self.expr(e.key)
        fk = self._key(kt, fk0)
        if not self.symbolic:
            c = e.coll
            lk = _local(fk0)
            if isinstance(c, ir.Field) and isinstance(c.record, ir.StateRef) and not c.record.old:
                # A state field indexed (the interpreter's commonest lookup): no inner calls.
                i = c.index
                if lk is not None and _own_ordinal(kt):
                    return lambda st, env: st[i][env[lk]]
                if lk is not None and isinstance(kt, RecordT):
                    # A square bound by a quantifier: its ordinal straight from the table.
                    index = finite(kt).index
                    return lambda st, env: st[i][index[env[lk]]]
                if isinstance(kt, RecordT):
                    index = finite(kt).index
                    return lambda st, env: st[i][index[fk0(st, env)]]
                return lambda st, env: st[i][fk(st, env)]
            # A local map (a fixpoint's value, a let) indexed in a hot loop: read straight
            # from env, a record key's ordinal straight from the table.
            lc = _local(fc)
            if lc is not None and lc in self._recorded:
                if isinstance(kt, RecordT):
                    return _recording_index(lc, fk0, finite(kt).index, lk)
                return _recording_index(lc, fk, None, None)
            if lc is not None and _own_ordinal(kt):
                if lk is not None:
                    return lambda st, env: env[lc][env[lk]]
                return lambda st, env: env[lc][fk(st, env)]
            if isinstance(kt, RecordT):
                index = finite(kt).index
                if lc is not None and lk is not None:
                    return lambda st, env: env[lc][index[env[lk]]]
                if lc is not None:
                    return lambda st, env: env[lc][index[fk0(st, env)]]
                return lambda st, env: fc(st, env)[index[fk0(st, env)]]
            return lambda st, env: fc(st, env)[fk(st, env)]
        vt = e.type
        return lambda st, env: dz.select(vt, fc(st, env), fk(st, env))

    def _binary(self, e: ir.Binary) -> Fn:
        op = e.op
        fa, fb = self.expr(e.left), self.expr(e.right)
        lt = e.left.type
        sym = self.symbolic
        if op == "and":
            if not sym:
                return lambda st, env: fa(st, env) and fb(st, env)

            def and_(st, env):
                a = fa(st, env)
                if a is False:
                    return False
                return dz.and_(a, fb(st, env))
            return and_
        if op == "or":
            if not sym:
                return lambda st, env: fa(st, env) or fb(st, env)

            def or_(st, env):
                a = fa(st, env)
                if a is True:
                    return True
                return dz.or_(a, fb(st, env))
            return or_
        if isinstance(lt, BagT):
            return self._bag_binary(op, fa, fb, lt)
        if op in ("==", "!="):
            if not sym and isinstance(e.right, ir.Const) and isinstance(lt, (IntT, BoolT, EnumT)):
                v = e.right.value     # a comparison with a constant: one call less
                if op == "==":
                    return lambda st, env: fa(st, env) == v
                return lambda st, env: fa(st, env) != v
            if isinstance(lt, (IntT, BoolT, EnumT)) or not sym:
                if op == "==":
                    return lambda st, env: fa(st, env) == fb(st, env)
                if not sym:
                    return lambda st, env: fa(st, env) != fb(st, env)
                return lambda st, env: dz.not_(dz.leaf_eq(fa(st, env), fb(st, env)))
            t = lt
            if op == "==":
                return lambda st, env: dz.eq(t, fa(st, env), fb(st, env))
            return lambda st, env: dz.not_(dz.eq(t, fa(st, env), fb(st, env)))
        if not sym and isinstance(e.right, ir.Const) and op in _WITH_CONST:
            # `x > 0`, `x + 1`: the constant inline, one call less.
            return _WITH_CONST[op](fa, e.right.value)
        match op:
            case "+":
                return lambda st, env: fa(st, env) + fb(st, env)
            case "-":
                return lambda st, env: fa(st, env) - fb(st, env)
            case "*":
                if not sym:
                    return lambda st, env: fa(st, env) * fb(st, env)
                return self._sym_mul(fa, fb, e.left.type, e.right.type)
            case "/":
                return self._divmod(fa, fb, e.span, "/", e.right.type)
            case "%":
                return self._divmod(fa, fb, e.span, "%", e.right.type)
            case "<":
                return lambda st, env: fa(st, env) < fb(st, env)
            case "<=":
                return lambda st, env: fa(st, env) <= fb(st, env)
            case ">":
                return lambda st, env: fa(st, env) > fb(st, env)
            case ">=":
                return lambda st, env: fa(st, env) >= fb(st, env)
        raise AssertionError(op)

    def _sym_mul(self, fa, fb, ta: IntT, tb: IntT):
        """A product of two terms, kept linear: case-split on the narrower operand's interval
        (the checker's bounds make this exact), so z3 never sees nonlinear arithmetic."""
        def mul(st, env):
            a, b = fa(st, env), fb(st, env)
            if not dz.is_sym(a) or not dz.is_sym(b):
                return a * b
            x, y, tx = (a, b, ta) if ta.hi - ta.lo <= tb.hi - tb.lo else (b, a, tb)
            out = tx.lo * y
            for k in range(tx.lo + 1, tx.hi + 1):
                out = z3.If(x == k, k * y, out)
            return out
        return mul

    def _divmod(self, fa, fb, span, op, tb: IntT):
        def f(st, env):
            a, b = fa(st, env), fb(st, env)
            if not dz.is_sym(a) and not dz.is_sym(b):
                if b == 0:
                    raise EvalError("division by zero", span)
                # Floor division: z3's for the positive divisors specs use.
                return a // b if op == "/" else a % b
            if not dz.is_sym(b):
                return a / b if op == "/" else a % b
            # A symbolic divisor: case-split on its interval to stay linear.
            out = None
            for k in range(tb.hi, tb.lo - 1, -1):
                if k == 0:
                    continue
                v = (a / k if op == "/" else a % k) if dz.is_sym(a) else \
                    (a // k if op == "/" else a % k)
                out = v if out is None else z3.If(b == k, v, out)
            return out if out is not None else 0
        return f

    def _bag_binary(self, op, fa, fb, t: BagT) -> Fn:
        if op == "+":
            return lambda st, env: tuple(x + y for x, y in zip(fa(st, env), fb(st, env)))
        if op == "-":
            return lambda st, env: tuple(x - y for x, y in zip(fa(st, env), fb(st, env)))
        if op == "<=":
            if not self.symbolic:
                return lambda st, env: all(x <= y for x, y in zip(fa(st, env), fb(st, env)))
            return lambda st, env: dz.all_(x <= y for x, y in zip(fa(st, env), fb(st, env)))
        if op == "==":
            if not self.symbolic:
                return lambda st, env: fa(st, env) == fb(st, env)
            return lambda st, env: dz.eq(t, fa(st, env), fb(st, env))
        if op == "!=":
            if not self.symbolic:
                return lambda st, env: fa(st, env) != fb(st, env)
            return lambda st, env: dz.not_(dz.eq(t, fa(st, env), fb(st, env)))
        raise AssertionError(op)

    def _baglit(self, t: Type, items) -> Fn:
        et = t.elem
        n = finite(et).size
        fks = [self._key(et, self.expr(x)) for x in items]
        is_set = isinstance(t, SetT)
        if not self.symbolic:
            def lit(st, env):
                out = [False if is_set else 0] * n
                for fk in fks:
                    i = fk(st, env)
                    out[i] = True if is_set else out[i] + 1
                return tuple(out)
            return lit

        def slit(st, env):
            out = [False if is_set else 0] * n
            for fk in fks:
                i = fk(st, env)
                for j in range(n):
                    hit = (i == j) if dz.is_sym(i) else (i == j)
                    if hit is False:
                        continue
                    if is_set:
                        out[j] = dz.or_(out[j], hit)
                    else:
                        out[j] = out[j] + (1 if hit is True else z3.If(hit, 1, 0))
            return tuple(out)
        return slit

    def _member(self, e: ir.Member) -> Fn:
        ct = e.coll.type
        fe = self.expr(e.elem)
        if isinstance(e.coll, ir.BagLit) and isinstance(ct, SetT):
            # `x in {a, b, c}`: a disjunction of equalities, no table needed.
            fs = [self.expr(x) for x in e.coll.items]
            if not self.symbolic and all(isinstance(x, ir.Const) for x in e.coll.items):
                # A set of constants (`c in {floor1, floor2}`): built once, not per call.
                consts = frozenset(x.value for x in e.coll.items)
                return lambda st, env: fe(st, env) in consts
            if not self.symbolic:
                return lambda st, env: fe(st, env) in {f(st, env) for f in fs}
            et = ct.elem
            return lambda st, env: dz.any_(dz.eq(et, fe(st, env), f(st, env)) for f in fs)
        fc = self.expr(e.coll)
        if isinstance(ct, SeqT):
            et = ct.elem
            if not self.symbolic:
                return lambda st, env: fe(st, env) in fc(st, env)
            return lambda st, env: dz.any_(dz.and_(g, dz.eq(et, fe(st, env), x))
                                           for g, x in seq_items(fc(st, env)))
        fk = self._key(ct.elem, fe)
        if isinstance(ct, BagT):
            if not self.symbolic:
                return lambda st, env: fc(st, env)[fk(st, env)] > 0
            return lambda st, env: dz.select(IntT(0, ct.most), fc(st, env), fk(st, env)) > 0
        if not self.symbolic:
            return lambda st, env: fc(st, env)[fk(st, env)]
        return lambda st, env: dz.select(BoolT(), fc(st, env), fk(st, env))

    def _builtin(self, e: ir.Builtin) -> Fn:
        name = e.name
        fs = [self.expr(a) for a in e.args]
        span = e.span
        sym = self.symbolic
        f0 = fs[0]
        match name:
            case "len":
                if not sym:
                    return lambda st, env: len(f0(st, env))
                return lambda st, env: seq_len(f0(st, env))
            case "top" | "bottom":
                at_top = name == "top"
                if not sym:
                    def end(st, env):
                        s = f0(st, env)
                        if not s:
                            raise EvalError(f"{name} of an empty seq", span)
                        return s[-1] if at_top else s[0]
                    return end
                et = e.type
                if at_top:
                    return lambda st, env: seq_get(et, f0(st, env), seq_len(f0(st, env)) - 1)
                return lambda st, env: seq_get(et, f0(st, env), 0)
            case "push" | "push_bottom":
                f1 = fs[1]
                et = e.type.elem
                if not sym:
                    if name == "push":
                        return lambda st, env: f0(st, env) + (f1(st, env),)
                    return lambda st, env: (f1(st, env),) + f0(st, env)
                if name == "push":
                    return lambda st, env: seq_push(et, f0(st, env), f1(st, env))
                return lambda st, env: seq_push_bottom(et, f0(st, env), f1(st, env))
            case "pop" | "pop_bottom":
                if not sym:
                    def pop(st, env):
                        s = f0(st, env)
                        if not s:
                            raise EvalError(f"{name} of an empty seq", span)
                        return s[:-1] if name == "pop" else s[1:]
                    return pop
                et = e.args[0].type.elem
                if name == "pop":
                    return lambda st, env: seq_pop(f0(st, env))
                return lambda st, env: seq_pop_bottom(et, f0(st, env))
            case "size":
                if isinstance(e.args[0].type, SetT):
                    if not sym:
                        return lambda st, env: sum(f0(st, env))
                    return lambda st, env: sum_terms(z3.If(x, 1, 0) if dz.is_sym(x) else int(x)
                                                for x in f0(st, env))
                if not sym:
                    return lambda st, env: sum(f0(st, env))
                return lambda st, env: sum_terms(f0(st, env))
            case "least" | "most":
                f1 = fs[1]
                pick_lo = name == "least"
                if not sym:
                    pick = min if pick_lo else max
                    return lambda st, env: pick(f0(st, env), f1(st, env))

                def mm(st, env):
                    a, b = f0(st, env), f1(st, env)
                    if not dz.is_sym(a) and not dz.is_sym(b):
                        return min(a, b) if pick_lo else max(a, b)
                    return z3.If(a <= b, a, b) if pick_lo else z3.If(a >= b, a, b)
                return mm
            case "abs":
                def ab(st, env):
                    a = f0(st, env)
                    return abs(a) if not dz.is_sym(a) else z3.If(a >= 0, a, -a)
                return ab
            case "component":
                kt, f1 = e.type.key, fs[1]
                if not sym:
                    return lambda st, env: regions.component_of(kt, f0(st, env), f1(st, env))
                return lambda st, env: regions.component(kt, f0(st, env), f1(st, env),
                                                         _simplified, _identical)
            case "components":
                kt = e.args[0].type.key
                if not sym:
                    return lambda st, env: regions.count_of(kt, f0(st, env))
                return lambda st, env: regions.components(kt, f0(st, env), _simplified,
                                                          _identical)
        raise AssertionError(name)

    # ---- domains and quantifiers -------------------------------------------------------

    def domain(self, d: ir.Domain) -> Fn:
        """Compile a domain to ``f(st, env) -> [(guard, value), ...]``."""
        match d:
            case ir.TypeDomain(elem=t):
                items = [(True, v) for v in finite(t).values]
                return lambda st, env: items
            case ir.RangeDomain(elem=t, lo=lo, hi=hi):
                flo, fhi = self.expr(lo), self.expr(hi)
                if not self.symbolic:
                    return lambda st, env: [(True, i) for i in range(flo(st, env),
                                                                      fhi(st, env) + 1)]

                def rng(st, env):
                    a, b = flo(st, env), fhi(st, env)
                    if not dz.is_sym(a) and not dz.is_sym(b):
                        return [(True, i) for i in range(a, b + 1)]
                    return [(dz.and_(_le(a, i), _le(i, b)), i) for i in range(t.lo, t.hi + 1)]
                return rng
            case ir.CollDomain(coll=c):
                fc = self.expr(c)
                ct = c.type
                if isinstance(ct, SeqT):
                    if not self.symbolic:
                        return lambda st, env: [(True, x) for x in fc(st, env)]
                    return lambda st, env: seq_items(fc(st, env))
                values = finite(ct.elem).values
                if not self.symbolic:
                    # A member per nonzero count (or true flag), picked at C speed.
                    pairs = tuple((True, v) for v in values)
                    return lambda st, env: list(compress(pairs, fc(st, env)))

                def coll(st, env):
                    out = []
                    for i, n in enumerate(fc(st, env)):
                        if dz.is_sym(n):
                            out.append((n if isinstance(ct, SetT) else n > 0, values[i]))
                        elif n:
                            out.append((True, values[i]))
                    return out
                return coll
            case ir.SubbagDomain():
                raise AssertionError("subbags are enumerated by the query runner")
        assert_never(d)

    def _quant(self, e: ir.Quant) -> Fn:
        fd = self.domain(e.domain)
        fw = self.expr(e.where) if e.where is not None else None
        fb = self.expr(e.body)
        s1 = e.slot + 1
        kind = e.kind
        if not self.symbolic:
            reads, bound, _, old, _ = fixinc.summary(e, self._summaries)
            if not old and reads <= bound:
                # It reads nothing but the state: one value per state (a table of the state
                # passed as an argument at every call of a def), its filter with it.
                fields = fixinc.state_fields(e, self._fields_read)
                return _remembered_value(_concrete_quant(kind, fd, fw, fb, s1, e),
                                         _DefMemo(fields))
            memo = self._filter_memo(e)
            if memo is not None:
                fd, fw = _remembered_filter(fd, fw, s1, *memo), None
            return _concrete_quant(kind, fd, fw, fb, s1, e)

        def q(st, env):
            pairs = []
            for g, v in fd(st, env):
                env[s1] = v
                if fw is not None:
                    g = dz.and_(g, fw(st, env))
                    if g is False:
                        continue
                pairs.append((g, fb(st, env)))
            return _sym_fold(kind, pairs, e)
        return q

    def _filter_memo(self, e: ir.Quant) -> "tuple[_DefMemo, tuple[int, ...]] | None":
        """A memo for the values of e's domain that pass its `where`, and the env indices of
        the outer locals the filter reads, when it reads nothing else but the quantified value
        and the current state, and those locals are scalars: then it selects the same values
        wherever the quantifier is evaluated in one state with the same locals (a def of a
        square whose body is `exists k in K where f(k): g(k, s)` tests f on each k once per
        state, not once per square; `where h(s, d)` is asked once per value of s)."""
        if e.where is None:
            return None
        dreads, dbound, _, dold, _ = fixinc.summary(e.domain, self._summaries)
        wreads, wbound, _, wold, _ = fixinc.summary(e.where, self._summaries)
        if dold or wold:
            return None
        outer = (dreads - dbound) | (wreads - wbound - {e.slot})
        todo = set(outer)
        for n in irwalk.nodes((e.domain, e.where)):
            if not todo:
                break
            if isinstance(n, ir.Local) and n.slot in todo:
                if not fixinc.scalar(n.type):
                    return None
                todo.discard(n.slot)
        dfields = fixinc.state_fields(e.domain, self._fields_read)
        wfields = fixinc.state_fields(e.where, self._fields_read)
        fields = None if dfields is None or wfields is None else dfields | wfields
        return _DefMemo(fields), tuple(sorted(sl + 1 for sl in outer))

    # ---- statements -------------------------------------------------------------------

    def stmts(self, body: tuple[ir.Stmt, ...]) -> Fn:
        """Compile statements.

        Concrete: ``run(st, env, shows) -> st``; a failing `requires` raises `Refused`.
        Symbolic: ``run(st, ctx) -> [(st, ctx), ...]``, one pair per path: an `if` whose
        condition is symbolic forks the path instead of merging two different states, so the
        control of each path stays concrete."""
        runs = [self.stmt(s) for s in body]
        if self.symbolic:
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
        if len(runs) == 1:
            return runs[0]

        def run(st, env, ctx):
            for r in runs:
                st = r(st, env, ctx)
            return st
        return run

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
            case ir.Show(items=items):
                fs = [self.expr(x) for x in items]
                if not sym:
                    from ..lang.codec import to_json
                    typed = [(x.type, f) for x, f in zip(items, fs)]

                    def show(st, env, ctx):
                        if ctx is not None:
                            ctx.append([to_json(t, f(st, env)) for t, f in typed])
                        return st
                    return show

                def sshow(st, ctx):
                    ctx.shows.append([f(st, ctx.env) for f in fs])
                    return [(st, ctx)]
                return sshow
        assert_never(s)

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
                        getters.append(("key", self._key(kt, self.expr(k)), vt, ct))
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
# recognise a local's (`_local`).
_LEAVES = (ir.Const, ir.Text, ir.Local, ir.StateRef)


def _opaque_candidate(e: ir.Expr) -> bool:
    """Whether ``e`` may be read as uninterpreted functions by `linear.opaque_fixes` when it
    computes a fixpoint: not a leaf, and not a connective (`and`, `or`, `not`, `if`, `forall`,
    `exists`), an operator (a comparison, a sum) nor a call, whose parts are read instead: a
    guard's cheap conjuncts (the square is empty) stay known beside the part that floods, and
    `count() >= old(count())` compares two values of one function."""
    if isinstance(e, _LEAVES + (ir.Call, ir.Ite, ir.Binary, ir.Unary)):
        return False
    return not (isinstance(e, ir.Quant) and e.kind in ("forall", "exists"))


# Concrete binary operators with a constant right operand (Compiler._binary).
_WITH_CONST = {
    "+": lambda fa, c: lambda st, env: fa(st, env) + c,
    "-": lambda fa, c: lambda st, env: fa(st, env) - c,
    "<": lambda fa, c: lambda st, env: fa(st, env) < c,
    "<=": lambda fa, c: lambda st, env: fa(st, env) <= c,
    ">": lambda fa, c: lambda st, env: fa(st, env) > c,
    ">=": lambda fa, c: lambda st, env: fa(st, env) >= c,
}


def _recording_index(lc: int, fk: Fn, index: dict | None, lk: int | None) -> Fn:
    """``r[k]`` for a fixpoint's value ``r`` held in ``env[lc]`` as a `fixinc._Reads`: the
    entry read is recorded.  With ``index`` (a record key's ordinals), ``fk`` gives the key
    (or it is the local ``env[lk]``); without, ``fk`` gives the ordinal."""
    if index is not None and lk is not None:
        def get_local(st, env):
            p = env[lc]
            i = index[env[lk]]
            p.seen.add(i)
            return p.vals[i]
        return get_local
    if index is not None:
        def get_rec(st, env):
            p = env[lc]
            i = index[fk(st, env)]
            p.seen.add(i)
            return p.vals[i]
        return get_rec

    def get(st, env):
        p = env[lc]
        i = fk(st, env)
        p.seen.add(i)
        return p.vals[i]
    return get


def _local(f: Fn) -> int | None:
    """The env index ``f`` reads, when ``f`` is a local's closure (see Compiler.expr)."""
    return getattr(f, "local", None)


def _own_ordinal(kt: Type) -> bool:
    """Whether a key's value is its ordinal (`Compiler._key` passes it through)."""
    return isinstance(kt, EnumT) or (isinstance(kt, IntT) and kt.lo == 0)


def _concrete_assign(fv, getters, bounds, source, target, span):
    """The interpreter's assignment: one closure per level of the path, built once (the
    playouts run millions of them), with the bounds check reduced to what the value's static
    type does not already prove."""
    if bounds is not None and _proved(bounds, source):
        bounds = None
    if isinstance(bounds, IntT):
        lo, hi = bounds.lo, bounds.hi

        def ok(v):
            return lo <= v <= hi
    elif isinstance(bounds, BagT):
        most = bounds.most

        def ok(v):
            return not v or (min(v) >= 0 and max(v) <= most)
    elif bounds is not None:
        def ok(v):
            return fits(bounds, v, source)

    def level(depth):
        kind, a, _, _ = getters[depth]
        last = depth + 1 == len(getters)
        inner = None if last else level(depth + 1)
        if kind == "field":
            if last:
                def set_field(c, value, st, env):
                    out = list(c)
                    out[a] = value
                    return tuple(out)
                return set_field

            def in_field(c, value, st, env):
                out = list(c)
                out[a] = inner(c[a], value, st, env)
                return tuple(out)
            return in_field
        if kind == "seq":
            def in_seq(c, value, st, env):
                i = a(st, env)
                if not 0 <= i < len(c):
                    raise EvalError(f"index {i} is outside a seq of length {len(c)}", span)
                out = list(c)
                out[i] = value if last else inner(c[i], value, st, env)
                return tuple(out)
            return in_seq
        if last:
            def set_key(c, value, st, env):
                out = list(c)
                out[a(st, env)] = value
                return tuple(out)
            return set_key

        def in_key(c, value, st, env):
            i = a(st, env)
            out = list(c)
            out[i] = inner(c[i], value, st, env)
            return tuple(out)
        return in_key

    put = level(0)
    if bounds is None:
        def assign(st, env, ctx):
            return put(st, fv(st, env), st, env)
        return assign

    def checked(st, env, ctx):
        v = fv(st, env)
        if not ok(v):
            raise Refused("bounds", f"{target} would leave {bounds}", span)
        return put(st, v, st, env)
    return checked


# ---- concrete quantifiers ----------------------------------------------------------------------

_FAILS: list = []     # a filter that fails on some value (see _remembered_filter)


def _remembered_filter(fd, fw, s1, shared: "_DefMemo", outer: tuple[int, ...]):
    """The domain ``fd`` filtered by ``fw``, as ``(True, value)`` pairs, computed once per
    state and value of the ``outer`` env entries (see Compiler._filter_memo).  When the filter
    fails on some value, the error is left to the plain loop, which may stop before that value;
    that the filter fails is remembered, so the next evaluation goes straight to the loop."""
    def filtered(st, env):
        memo = shared.memo if st is shared.last else shared.switch(st)
        key = tuple([env[i] for i in outer]) if outer else ()
        hit = memo.get(key)
        if hit is None:
            hit = []
            try:
                for g, v in fd(st, env):
                    env[s1] = v
                    if fw(st, env):
                        hit.append((g, v))
            except EvalError:
                hit = _FAILS
            if len(memo) >= MEMO_CALLS:
                memo.clear()
            memo[key] = hit
        if hit is _FAILS:
            return _Lazy(fd(st, env), fw, s1, st, env)
        return hit
    return filtered


def _remembered_value(f: Fn, shared: "_DefMemo") -> Fn:
    """``f``, an expression of the state alone, evaluated once per state (the fields it
    reads, as a def's memo).  An evaluation that fails is not remembered."""
    def once(st, env):
        memo = shared.memo if st is shared.last else shared.switch(st)
        hit = memo.get((), memo)
        if hit is memo:
            hit = memo[()] = f(st, env)
        return hit
    return once


class _Lazy:
    """A domain filtered as it is walked: its `where` is evaluated for each value only when
    the loop gets there, as without a memo."""

    __slots__ = ("items", "fw", "s1", "st", "env")

    def __init__(self, items, fw, s1, st, env):
        self.items, self.fw, self.s1, self.st, self.env = items, fw, s1, st, env

    def __iter__(self):
        env, st, fw, s1 = self.env, self.st, self.fw, self.s1
        for g, v in self.items:
            env[s1] = v
            if fw(st, env):
                yield g, v


def _concrete_quant(kind, fd, fw, fb, s1, e: ir.Quant):
    if kind == "forall":
        def forall(st, env):
            for _, v in fd(st, env):
                env[s1] = v
                if fw is not None and not fw(st, env):
                    continue
                if not fb(st, env):
                    return False
            return True
        return forall
    if kind == "exists":
        def exists(st, env):
            for _, v in fd(st, env):
                env[s1] = v
                if fw is not None and not fw(st, env):
                    continue
                if fb(st, env):
                    return True
            return False
        return exists
    if kind == "table":
        dflt = default(e.type.val)

        def table(st, env):
            out = []
            for _, v in fd(st, env):
                env[s1] = v
                out.append(fb(st, env) if fw is None or fw(st, env) else dflt)
            return tuple(out)
        return table

    if kind in ("sum", "count"):
        def total(st, env):
            n = 0
            for _, v in fd(st, env):
                env[s1] = v
                if fw is not None and not fw(st, env):
                    continue
                if kind == "count":
                    if fb(st, env):
                        n += 1
                else:
                    n += fb(st, env)
            return n
        return total

    pick = max if kind == "max" else min

    def fold(st, env):
        vals = []
        for _, v in fd(st, env):
            env[s1] = v
            if fw is not None and not fw(st, env):
                continue
            vals.append(fb(st, env))
        return pick(vals) if vals else _empty_extreme(e.type)
    return fold


def _empty_extreme(t: IntT) -> int:
    """max/min over an empty domain: 0 when the type allows it (documented in the language)."""
    return 0 if t.lo <= 0 <= t.hi else t.lo


def _sym_fold(kind, pairs, e: ir.Quant):
    if kind == "forall":
        return dz.all_(dz.or_(dz.not_(g), b) for g, b in pairs)
    if kind == "exists":
        return dz.any_(dz.and_(g, b) for g, b in pairs)
    if kind == "sum":
        return sum_terms(b if g is True else dz.leaf_ite(g, b, 0) for g, b in pairs)
    if kind == "count":
        terms = [dz.and_(g, b) for g, b in pairs]
        # Under the prover's region facts, a count over a whole component is its size (one
        # unknown the facts speak of, not a sum of one term a square for z3 to relate).
        size = regionfacts.whole(terms) if regionfacts.on() and len(terms) > 1 else None
        return size if size is not None else sum_terms(_count_term(c) for c in terms)
    if kind == "table":
        dflt = default(e.type.val)
        return tuple(dz.merge(e.type.val, g, b, dflt) for g, b in pairs)
    dflt = _empty_extreme(e.type)
    symbolic = any(dz.is_sym(b) for _, b in pairs)
    if symbolic and regionfacts.on():
        # Under the prover's region facts, a long max or min of symbolic values is one
        # unknown with its defining facts (a bound on it is then one implication for z3).
        f = regionfacts.fold(kind, [(g, b) for g, b in pairs if g is not False], dflt)
        if f is not None:
            return f
    if not symbolic:
        # Concrete values (`min b in Slot where free(b): b`): ordered best first, the first
        # element whose guard holds is the answer, so the fold is a plain chain of ites, with
        # no comparisons for z3 to reason about.
        acc = dflt
        for g, b in reversed(sorted(pairs, key=lambda p: p[1], reverse=kind == "max")):
            acc = dz.leaf_ite(g, b, acc)
        return acc
    # Symbolic values: fold from a sentinel beyond every element (so the first element whose
    # guard holds always replaces it, without a per-element "nothing taken yet" disjunct,
    # which z3 pays for dearly in nested folds), then put the empty default back if no guard
    # held.  Where no element can lie beyond the default on the losing side (max over values
    # >= 0, min over values <= 0), the default itself is that sentinel.
    bt = e.body.type
    exact = bt.lo >= dflt if kind == "max" else bt.hi <= dflt
    acc = dflt if exact else (bt.lo - 1 if kind == "max" else bt.hi + 1)
    have = False
    for g, b in pairs:
        if have is False:
            better = True
        else:
            better = b > acc if kind == "max" else b < acc
            if not dz.is_sym(better) and not isinstance(better, bool):
                better = bool(better)
        acc = dz.leaf_ite(dz.and_(g, better), b, acc)
        have = dz.or_(have, g)
    return acc if exact else dz.leaf_ite(have, acc, dflt)


def _count_term(c):
    if c is True:
        return 1
    if c is False:
        return 0
    return dz.leaf_ite(c, 1, 0)


def sum_terms(xs):
    """Add Python numbers and z3 terms, folding the constant part."""
    total = 0
    terms = []
    for x in xs:
        if dz.is_sym(x):
            terms.append(x)
        else:
            total += x
    if not terms:
        return total
    s = z3.Sum(terms) if len(terms) > 1 else terms[0]
    return s + total if total else s


def _le(a, b):
    return a <= b


# ---- seq operations in the symbolic domain (tuples where the length is known) -----------------

def seq_len(s):
    return s.length if isinstance(s, dz.SymSeq) else len(s)


def seq_items(s):
    if isinstance(s, dz.SymSeq):
        n = s.length
        return [((i < n) if dz.is_sym(n) else (i < n), x) for i, x in enumerate(s.slots)
                if dz.is_sym(n) or i < n]
    return [(True, x) for x in s]


def seq_get(et: Type, s, i):
    if isinstance(s, tuple):
        if not dz.is_sym(i):
            if 0 <= i < len(s):
                return s[i]
            return default(et) if not s else s[-1]
        if not s:
            return default(et)
        return dz.select(et, s, i)
    if not dz.is_sym(i):
        if 0 <= i < len(s.slots):
            return s.slots[i]
        return s.slots[-1] if s.slots else default(et)
    return dz.select(et, s.slots, i)


def seq_set(et: Type, s, i, v):
    if isinstance(s, tuple) and not dz.is_sym(i):
        return s[:i] + (v,) + s[i + 1:]
    ss = dz.to_symseq(SeqT(et, _nslots(s)), s)
    return dz.SymSeq(ss.length, dz.store(et, ss.slots, i, v))


def _nslots(s) -> int:
    return len(s.slots) if isinstance(s, dz.SymSeq) else len(s)


def seq_push(et: Type, s, x):
    if isinstance(s, tuple):
        return s + (x,)
    n = s.length
    slots = s.slots + (dz.default_leaf(et),)
    if not dz.is_sym(n):
        return dz.SymSeq(n + 1, slots[:n] + (x,) + slots[n + 1:])
    return dz.SymSeq(n + 1, tuple(dz.merge(et, n == i, x, old) for i, old in enumerate(slots)))


def seq_push_bottom(et: Type, s, x):
    if isinstance(s, tuple):
        return (x,) + s
    return dz.SymSeq(s.length + 1, (x,) + s.slots)


def seq_pop(s):
    if isinstance(s, tuple):
        return s[:-1]
    return dz.SymSeq(s.length - 1, s.slots)


def seq_pop_bottom(et: Type, s):
    if isinstance(s, tuple):
        return s[1:]
    return dz.SymSeq(s.length - 1, s.slots[1:] + (dz.default_leaf(et),))


# ---- bounds ---------------------------------------------------------------------------------

def _proved(t: Type, src: Type | None) -> bool:
    """Whether every value of static type ``src`` already fits ``t``."""
    if src is None:
        return False
    match (t, src):
        case (IntT(), IntT()):
            return t.lo <= src.lo and src.hi <= t.hi
        case (SeqT(), SeqT()):
            return src.cap <= t.cap and _proved(t.elem, src.elem)
        case (BagT(), BagT()):
            return False  # bag arithmetic may go negative
        case (MapT(), MapT()):
            return _proved(t.val, src.val)
    return t == src


def _part(src: Type | None, attr: str):
    return getattr(src, attr, None) if src is not None else None


def fits(t: Type, v, src: Type | None = None) -> bool:
    if _proved(t, src):
        return True
    match t:
        case IntT(lo, hi):
            return lo <= v <= hi
        case BagT(most=m):
            return all(0 <= x <= m for x in v)
        case SeqT(elem=et, cap=cap):
            se = _part(src, "elem")
            return len(v) <= cap and (_proved(et, se) or all(fits(et, x, se) for x in v))
        case MapT(val=vt):
            sv = _part(src, "val")
            return all(fits(vt, x, sv) for x in v)
        case RecordT(fields=fields):
            return all(fits(ft, x) for (_, ft), x in zip(fields, v))
    return True


def sym_fits(t: Type, v, src: Type | None = None):
    """The bounds condition, for only what the value's static type does not prove."""
    if _proved(t, src):
        return True
    match t:
        case IntT(lo, hi):
            if not dz.is_sym(v):
                return lo <= v <= hi
            return z3.And(v >= lo, v <= hi)
        case BagT(most=m):
            return dz.all_((0 <= x <= m) if not dz.is_sym(x) else z3.And(x >= 0, x <= m)
                           for x in v)
        case SeqT(elem=et, cap=cap):
            n = seq_len(v)
            ok = n <= cap
            se = _part(src, "elem")
            if _proved(et, se):
                return ok
            return dz.and_(ok, dz.all_(dz.or_(dz.not_(g), sym_fits(et, x, se))
                                       for g, x in seq_items(v)))
        case MapT(val=vt):
            sv = _part(src, "val")
            return dz.all_(sym_fits(vt, x, sv) for x in v)
        case RecordT(fields=fields):
            return dz.all_(sym_fits(ft, x) for (_, ft), x in zip(fields, v))
    return True


def truncate(t: Type, v):
    """Drop the slots a symbolic seq has beyond its declared capacity (after a bounds guard)."""
    if isinstance(t, SeqT) and isinstance(v, dz.SymSeq) and len(v.slots) > t.cap:
        return dz.SymSeq(v.length, v.slots[:t.cap])
    return v


# ---- compile-time constants -------------------------------------------------------------------

def const_value(e: ir.Expr):
    """Evaluate a constant expression (no state) concretely."""
    f = Compiler(False).expr(e)
    # A constant table may inline many defs: give it every slot its IR names.
    slots = [n.slot for n in nodes(e) if isinstance(getattr(n, "slot", None), int)]
    slots += [s for n in nodes(e) if isinstance(n, ir.Call) for s in n.slots]
    return f(None, [None] * (max(slots, default=0) + 64))


# ---- fixpoints and memoised calls ---------------------------------------------------------------

def _simplified(v):
    if isinstance(v, tuple):
        return tuple(_simplified(x) for x in v)
    if dz.is_sym(v):
        return dz.simplify_bool(z3.simplify(v))
    return v


def _identical(a, b) -> bool:
    """Structural identity of two values of one type (z3 terms compared as terms)."""
    if a is b:
        return True
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(
            _identical(x, y) for x, y in zip(a, b))
    if dz.is_sym(a) or dz.is_sym(b):
        return dz.is_sym(a) and dz.is_sym(b) and a.eq(b)
    if isinstance(a, dz.SymSeq) or isinstance(b, dz.SymSeq):
        return False
    return type(a) is type(b) and a == b


def _memoisable(body: ir.Expr, slots) -> bool:
    """Worth remembering per state: a def body that loops (a quantifier or a fixpoint) and
    reads nothing but its arguments and the current state."""
    from ..lang.irwalk import nodes
    mine = set(slots)
    bound: set = set()
    loops = False
    for n in nodes(body):
        match n:
            case ir.Quant(slot=sl) | ir.Let(slot=sl) | ir.Fix(slot=sl) | ir.ItemGroup(slot=sl):
                bound.add(sl)
                loops = loops or not isinstance(n, ir.Let)
            case ir.Call(slots=ss):
                bound.update(ss)
            case ir.RealExists(slot=sl, family=fam):
                bound.update((sl, fam))
                loops = True
            case ir.StateRef(old=True):
                return False
    if not loops:
        return False
    return all(n.slot in mine or n.slot in bound for n in nodes(body) if isinstance(n, ir.Local))


def _reads_no_state(body: ir.Expr) -> bool:
    """A def body that reads no state (only its arguments): a function of them alone."""
    from ..lang.irwalk import nodes
    return not any(isinstance(n, ir.StateRef) for n in nodes(body))


PURE_MEMO_SIZE = 1 << 16


def _memoised_pure(fb: Fn, fargs: list) -> Fn:
    """A stateless def call remembered across states, by argument values: a search meets the
    same values in many states (the score of a part that no move touched is computed once,
    not once per state).  The memo is emptied when full, so it stays bounded."""
    memo: dict = {}

    def pcall(st, env):
        key = tuple(f(st, env) for _, f in fargs)
        for (s1, _), v in zip(fargs, key):
            env[s1] = v
        try:
            hit = memo.get(key, memo)
        except TypeError:   # an unhashable argument
            return fb(st, env)
        if hit is memo:
            if len(memo) >= PURE_MEMO_SIZE:
                memo.clear()
            hit = memo[key] = fb(st, env)
        return hit
    return pcall


FIELD_MEMO_STATES = 256
# A memo kept across states is bounded too: a def of a rarely changed field, called with ever
# new arguments, would otherwise grow all run long.
MEMO_CALLS = 1 << 14


class _FieldValues:
    """The values some fields of the state have, named by a small number: the defs that read
    the same fields (a board's heights and pieces) name a state's values once between them,
    instead of each hashing the whole board again.  Numbers are never reused, so a memo keyed
    by one stays right when the table is emptied (past FIELD_MEMO_STATES * 16 values)."""

    __slots__ = ("fields", "last", "id", "ids", "next")

    def __init__(self, fields: tuple):
        self.fields = fields
        self.last = None
        self.id = None
        self.ids: dict = {}
        self.next = 0

    def of(self, st):
        """The number of ``st``'s values (None when a field is not hashable)."""
        if st is self.last:
            return self.id
        self.last = st
        key = tuple([st[i] for i in self.fields])
        try:
            n = self.ids.get(key)
        except TypeError:       # a field that is not hashable
            self.id = None
            return None
        if n is None:
            if len(self.ids) >= FIELD_MEMO_STATES * 16:
                self.ids.clear()
            n = self.ids[key] = self.next
            self.next += 1
        self.id = n
        return n


_FIELD_VALUES: dict[tuple, _FieldValues] = {}


class _DefMemo:
    """One def's remembered calls, shared by its call sites, for the states met lately.

    A def that reads only some fields of the state (``fields``) has the same values in every
    state that agrees on them: its calls are kept per value of those fields, so a search whose
    move leaves those fields alone computes none of them again.
    Up to FIELD_MEMO_STATES such values are kept, then all are dropped; so are a value's
    calls past MEMO_CALLS.  A def that reads the state whole (``fields`` None) keeps the
    calls of the last state only."""

    __slots__ = ("fields", "store", "last", "memo")

    def __init__(self, fields):
        if fields is None:
            self.fields = None
        else:
            key = tuple(sorted(fields))
            self.fields = _FIELD_VALUES.get(key)
            if self.fields is None:
                self.fields = _FIELD_VALUES[key] = _FieldValues(key)
        self.store: dict = {}
        self.last = None
        self.memo: dict = {}

    def switch(self, st) -> dict:
        """The memo for ``st`` (the caller checked that ``st`` is not the last state)."""
        self.last = st
        if self.fields is None:
            self.memo = {}
            return self.memo
        n = self.fields.of(st)
        if n is None:
            self.memo = {}
            return self.memo
        memo = self.store.get(n)
        if memo is None:
            if len(self.store) >= FIELD_MEMO_STATES:
                self.store.clear()
            memo = self.store[n] = {}
        self.memo = memo
        return memo


def _memoised(fb: Fn, fargs: list, symbolic: bool, shared: _DefMemo | None = None) -> Fn:
    """A def call remembered per state and argument values: a flood asked by every candidate
    move is computed once.  Concretely the memo is a `_DefMemo` (shared by
    the def's call sites; across states that agree on the fields the def reads).  A symbolic
    call is remembered for the last state only, and only for concrete arguments (z3 terms
    compare as terms, not as values)."""
    if shared is None:
        shared = _DefMemo(None)
    if not symbolic and 1 <= len(fargs) <= 2:
        # The common cases without the generic loop: one or two arguments, concrete.  The
        # keys are the tuples mcall builds: the memo is shared with it.
        (s1, f1), (s2, f2) = fargs[0], fargs[-1]
        one = len(fargs) == 1
        l1 = _local(f1)

        def mcall12(st, env):
            memo = shared.memo if st is shared.last else shared.switch(st)
            if one:
                a = env[l1] if l1 is not None else f1(st, env)
                env[s1] = a
                key = (a,)
            else:
                key = (f1(st, env), f2(st, env))
                env[s1], env[s2] = key
            try:
                hit = memo.get(key, memo)
            except TypeError:
                return fb(st, env)
            if hit is memo:
                if len(memo) >= MEMO_CALLS:
                    memo.clear()
                hit = memo[key] = fb(st, env)
            return hit
        return mcall12

    def mcall(st, env):
        memo = shared.memo if st is shared.last else shared.switch(st)
        key = tuple(f(st, env) for _, f in fargs)
        for (s1, _), v in zip(fargs, key):
            env[s1] = v
        if symbolic and not dz.is_concrete(key):
            return fb(st, env)
        try:
            hit = memo.get(key, memo)
        except TypeError:   # an unhashable argument
            return fb(st, env)
        if hit is memo:
            if len(memo) >= MEMO_CALLS:
                memo.clear()
            hit = memo[key] = fb(st, env)
        return hit
    return mcall
