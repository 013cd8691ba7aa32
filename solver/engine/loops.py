"""The evaluator's loops: quantifiers and their domains, `largest`, and fixpoints (iterated,
incremental or shortest paths), in both domains (a mixin of `evaluate.Compiler`)."""
from __future__ import annotations

from itertools import compress
from typing import Callable, assert_never

import z3

from . import domains as dz
from . import fixinc
from ..lang import ir
from ..lang import irwalk
from ..lang.types import MapT, SeqT, SetT, default, finite
from .abstraction import Abstraction
from .memo import DefMemo, remembered_filter, remembered_value
from .values import count_term, empty_extreme, identical, seq_items, simplified, sum_terms

Fn = Callable


class Loops:
    """Quantifiers, domains, `largest` and `fix` (see `evaluate.Compiler`)."""

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
                    fd, fw = remembered_filter(fd, fw, g.slot + 1, *memo,
                                               pre=self._prefilter(g)), None
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
            fl = None if self.symbolic else fixinc.flood(e, self._summaries)
            if fl is None:
                return self._fix_iterated(e)
            # A region grown from its seed: searched from it (fixinc.compile_flood).
            ok, q = fl
            return fixinc.compile_flood(
                self.expr(e.seed), None if ok is None else self.expr(ok),
                None if q.where is None else self.expr(q.where), self.expr(q.body.key), e, q,
                self._fix_iterated(e))
        # A relaxation of shortest paths: solved at once when that is the iteration's value.
        cost, q = mp
        # Every key's cost at once: one table, generated as one loop, not a call per key.
        costs = None if cost is None else self.expr(ir.Quant(
            MapT(e.step.domain.elem, cost.type), cost.span, "table", e.step.slot,
            e.step.domain, None, cost))
        return fixinc.compile_min_plus(
            self.expr(e.seed), costs,
            None if q.where is None else self.expr(q.where), self.expr(q.body.key), e, q,
            empty_extreme(q.type), self._fix_iterated(e))

    def _fix_iterated(self, e: ir.Fix) -> Fn:
        if not self.symbolic and fixinc.applies(e):
            # Each key's step reads the fixpoint's value through `Reads`, which records the
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
            r = simplified(fseed(st, env))
            for _ in range(bound):
                env[s1] = r
                nxt = simplified(fstep(st, env))
                if identical(nxt, r):
                    break
                r = nxt
                self.abstraction.unrolled()
            return r
        return sfix

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
                return remembered_value(_concrete_quant(kind, fd, fw, fb, s1, e),
                                         DefMemo(fields))
            memo = self._filter_memo(e)
            if memo is not None:
                fd, fw = remembered_filter(fd, fw, s1, *memo, pre=self._prefilter(e)), None
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
            return _sym_fold(kind, pairs, e, self.abstraction)
        return q

    def _prefilter(self, e: ir.Quant):
        """For `memo.remembered_filter`: when e's `where` is ``p and r1 and ... and rn`` (as
        parsed, left to right) and ``p`` reads fewer of the state's fields than the whole
        (with the domain's), ``(p's closure, its memo, its outer env entries, the closures of
        r1 ... rn)``; the longest such ``p``.  None otherwise."""
        spine = []
        n = e.where
        while isinstance(n, ir.Binary) and n.op == "and":
            spine.append(n)
            n = n.left
        if not spine:
            return None
        dfields = fixinc.state_fields(e.domain, self._fields_read)
        wfields = fixinc.state_fields(e.where, self._fields_read)
        if dfields is None or wfields is None:
            return None
        for k, node in enumerate(spine):
            pfields = fixinc.state_fields(node.left, self._fields_read)
            if pfields is None or not (pfields | dfields) < (wfields | dfields):
                continue
            memo = self._filter_memo(e, node.left)
            if memo is None:
                return None
            rest = tuple(self.expr(x.right) for x in reversed(spine[:k + 1]))
            return (self.expr(node.left), *memo, rest)
        return None

    def _filter_memo(self, e: ir.Quant,
                     where: ir.Expr | None = None) -> "tuple[DefMemo, tuple[int, ...]] | None":
        """A memo for the values of e's domain that pass its `where`, and the env indices of
        the outer locals the filter reads, when it reads nothing else but the quantified value
        and the current state, and those locals are scalars: then it selects the same values
        wherever the quantifier is evaluated in one state with the same locals (a def of a
        square whose body is `exists k in K where f(k): g(k, s)` tests f on each k once per
        state, not once per square; `where h(s, d)` is asked once per value of s).  ``where``:
        another filter over e's domain in its place (a part of it)."""
        where = e.where if where is None else where
        if where is None:
            return None
        dreads, dbound, _, dold, _ = fixinc.summary(e.domain, self._summaries)
        wreads, wbound, _, wold, _ = fixinc.summary(where, self._summaries)
        if dold or wold:
            return None
        outer = (dreads - dbound) | (wreads - wbound - {e.slot})
        todo = set(outer)
        for n in irwalk.nodes((e.domain, where)):
            if not todo:
                break
            if isinstance(n, ir.Local) and n.slot in todo:
                if not fixinc.scalar(n.type):
                    return None
                todo.discard(n.slot)
        dfields = fixinc.state_fields(e.domain, self._fields_read)
        wfields = fixinc.state_fields(where, self._fields_read)
        fields = None if dfields is None or wfields is None else dfields | wfields
        return DefMemo(fields), tuple(sorted(sl + 1 for sl in outer))


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
        return pick(vals) if vals else empty_extreme(e.type)
    return fold


def _sym_fold(kind, pairs, e: ir.Quant, abstraction: Abstraction):
    if kind == "forall":
        return dz.all_(dz.or_(dz.not_(g), b) for g, b in pairs)
    if kind == "exists":
        return dz.any_(dz.and_(g, b) for g, b in pairs)
    if kind == "sum":
        return sum_terms(b if g is True else dz.leaf_ite(g, b, 0) for g, b in pairs)
    if kind == "count":
        terms = [dz.and_(g, b) for g, b in pairs]
        # Under a prover's region facts, a count over a whole component is its size (one
        # unknown the facts speak of, not a sum of one term a square for z3 to relate).
        size = abstraction.whole(terms) if len(terms) > 1 else None
        return size if size is not None else sum_terms(count_term(c) for c in terms)
    if kind == "table":
        dflt = default(e.type.val)
        return tuple(dz.merge(e.type.val, g, b, dflt) for g, b in pairs)
    dflt = empty_extreme(e.type)
    symbolic = any(dz.is_sym(b) for _, b in pairs)
    if symbolic:
        # Under a prover's region facts, a long max or min of symbolic values is one
        # unknown with its defining facts (a bound on it is then one implication for z3).
        f = abstraction.fold(kind, pairs, dflt)
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


def _le(a, b):
    return a <= b
