"""The evaluator's operators: keys and indexing, arithmetic and comparisons, bags and sets,
membership and the builtins, in both domains (a mixin of `evaluate.Compiler`)."""
from __future__ import annotations

from operator import add, le, sub
from typing import Callable

import z3

from . import domains as dz
from . import regions
from ..lang import ir
from ..lang.errors import EvalError
from ..lang.types import BagT, BoolT, EnumT, IntT, MapT, RecordT, SeqT, SetT, Type, finite
from .memo import local
from .values import (seq_get, seq_items, seq_len, seq_pop, seq_pop_bottom, seq_push,
                     seq_push_bottom, sum_terms)

Fn = Callable


class Operators:
    """Indexing, operators, literals, membership and builtins (see `evaluate.Compiler`)."""

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
        fk0 = self._key_expr(e.key, kt, span)
        fk = self._key(kt, fk0)
        if not self.symbolic:
            c = e.coll
            lk = local(fk0)
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
            lc = local(fc)
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
            # `map` over the operator: a generator costs twice as much on a bag of 80 counts.
            return lambda st, env: tuple(map(add, fa(st, env), fb(st, env)))
        if op == "-":
            return lambda st, env: tuple(map(sub, fa(st, env), fb(st, env)))
        if op == "<=":
            if not self.symbolic:
                return lambda st, env: all(map(le, fa(st, env), fb(st, env)))
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
        fk = self._key(ct.elem, self._key_expr(e.elem, ct.elem, e.span, fe))
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
                                                         self.abstraction, self.unrolled)
            case "components":
                kt = e.args[0].type.key
                if not sym:
                    return lambda st, env: regions.count_of(kt, f0(st, env))
                return lambda st, env: regions.components(kt, f0(st, env), self.abstraction,
                                                          self.unrolled)
        raise AssertionError(name)


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
    """``r[k]`` for a fixpoint's value ``r`` held in ``env[lc]`` as a `fixinc.Reads`: the
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


def _own_ordinal(kt: Type) -> bool:
    """Whether a key's value is its ordinal (`Compiler._key` passes it through)."""
    return isinstance(kt, EnumT) or (isinstance(kt, IntT) and kt.lo == 0)
