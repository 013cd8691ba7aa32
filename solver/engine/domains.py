"""Value domains for the one evaluator: concrete Python values, or the same shapes with Z3 terms
at the leaves.  The symbolic domain evaluates partially: an operation on concrete operands stays
concrete, so only what depends on a symbolic choice becomes a term."""
from __future__ import annotations

import z3
from z3.z3types import Ast

from ..lang.types import (BagT, BoolT, EnumT, IntT, MapT, RecordT, SeqT, SetT, TextT, Type, default,
                    finite, radix)


class Undefined(Exception):
    """An operation with no value (top of an empty seq, an index out of range)."""


class SymSeq:
    """A seq whose length is symbolic: ``cap`` slots, of which the first ``length`` count."""

    __slots__ = ("length", "slots")

    def __init__(self, length, slots: tuple):
        self.length = length
        self.slots = slots

    def __repr__(self) -> str:
        return f"SymSeq({self.length}, {self.slots})"


def is_sym(v) -> bool:
    return isinstance(v, z3.ExprRef)


def is_concrete(v) -> bool:
    if isinstance(v, tuple):
        return all(is_concrete(x) for x in v)
    return not isinstance(v, (z3.ExprRef, SymSeq))


# ---- boolean helpers (shared by the symbolic domain and the solver) ------------------------

def _connective(mk, xs: list, slow):
    """z3's n-ary conjunction or disjunction (``mk``: Z3_mk_and or Z3_mk_or) of the z3
    booleans ``xs``, made by z3's C API in one call: `z3.And` and `z3.Or` coerce and check
    each argument in Python first, which was most of the time of building a step's paths
    where a region is unrolled.  Anything but booleans of one context: ``slow(xs)``."""
    ctx = xs[0].ctx
    for x in xs:
        if not isinstance(x, z3.BoolRef) or x.ctx is not ctx:
            return slow(xs)
    return z3.BoolRef(mk(ctx.ref(), len(xs), (Ast * len(xs))(*[x.ast for x in xs])), ctx)


def and_(a, b):
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    return _connective(z3.Z3_mk_and, [a, b], z3.And)


def or_(a, b):
    if a is True or b is True:
        return True
    if a is False:
        return b
    if b is False:
        return a
    return _connective(z3.Z3_mk_or, [a, b], z3.Or)


def not_(a):
    if a is True:
        return False
    if a is False:
        return True
    return z3.Not(a)


def all_(xs):
    out = []
    for x in xs:
        if x is False:
            return False
        if x is not True:
            out.append(x)
    if not out:
        return True
    return out[0] if len(out) == 1 else _connective(z3.Z3_mk_and, out, z3.And)


def any_(xs):
    out = []
    for x in xs:
        if x is True:
            return True
        if x is not False:
            out.append(x)
    if not out:
        return False
    return out[0] if len(out) == 1 else _connective(z3.Z3_mk_or, out, z3.Or)


def simplify_bool(v):
    """Fold a z3 boolean that simplifies to a constant back to a Python bool."""
    if isinstance(v, bool):
        return v
    if z3.is_true(v):
        return True
    if z3.is_false(v):
        return False
    return v


def leaf_eq(a, b):
    if not is_sym(a) and not is_sym(b):
        return a == b
    if a is b:
        return True
    return a == b


def leaf_ite(c, a, b):
    if c is True:
        return a
    if c is False:
        return b
    if a is b:
        return a
    sa, sb = is_sym(a), is_sym(b)
    if not sa and not sb and a == b and type(a) is type(b):
        return a
    if is_sym(c):
        # Symbolic execution merges every leaf of the state at each `if`: z3.If's checks and
        # coercions in Python were half the time of building a step's paths.  Two leaves of
        # one kind are joined by the C API directly; z3 shares equal terms, so equal ones
        # need no conditional at all.  (A sort mismatch is z3's error: then z3.If decides.)
        kind = _ITE_KIND.get(type(a))
        if kind is not None and kind is _ITE_KIND.get(type(b)):
            ctx = c.ctx
            ta = a if sa else _constant(a, ctx)
            tb = b if sb else _constant(b, ctx)
            if ta.eq(tb):
                return ta
            try:
                return kind(z3.Z3_mk_ite(ctx.ref(), c.as_ast(), ta.as_ast(), tb.as_ast()), ctx)
            except z3.Z3Exception:
                pass
    return z3.If(c, a, b)


# What a conditional of two leaves of these types is (a Python bool or int is one of its
# constants).
_ITE_KIND = {bool: z3.BoolRef, z3.BoolRef: z3.BoolRef, int: z3.ArithRef, z3.ArithRef: z3.ArithRef,
             z3.IntNumRef: z3.ArithRef, z3.DatatypeRef: z3.DatatypeRef}
_CONSTANTS: dict = {}


def _constant(v, ctx):
    """The z3 constant of a Python bool or int, made once per value."""
    key = (type(v), v)
    hit = _CONSTANTS.get(key)
    if hit is None or hit.ctx is not ctx:
        hit = _CONSTANTS[key] = z3.BoolVal(v, ctx) if isinstance(v, bool) else z3.IntVal(v, ctx)
        if len(_CONSTANTS) > 4096:
            _CONSTANTS.clear()
    return hit


# ---- structural operations ------------------------------------------------------------------

def to_symseq(t: SeqT, v) -> SymSeq:
    if isinstance(v, SymSeq):
        if len(v.slots) >= t.cap:
            return v
        pad = default_leaf(t.elem)
        return SymSeq(v.length, v.slots + (pad,) * (t.cap - len(v.slots)))
    pad = default_leaf(t.elem)
    slots = tuple(v) + (pad,) * max(0, t.cap - len(v))
    return SymSeq(len(v), slots)


def default_leaf(t: Type):
    return default(t)


def merge(t: Type, c, a, b):
    """Return the value that is ``a`` when ``c`` holds and ``b`` otherwise."""
    if c is True or a is b:
        return a
    if c is False:
        return b
    match t:
        case BoolT() | IntT() | EnumT() | TextT():
            return leaf_ite(c, a, b)
        case RecordT(fields=fields):
            return tuple(merge(ft, c, x, y) for (_, ft), x, y in zip(fields, a, b))
        case MapT(val=vt):
            return tuple(merge(vt, c, x, y) for x, y in zip(a, b))
        case BagT():
            return tuple(leaf_ite(c, x, y) for x, y in zip(a, b))
        case SetT():
            return tuple(leaf_ite(c, x, y) for x, y in zip(a, b))
        case SeqT(elem=et):
            if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
                return tuple(merge(et, c, x, y) for x, y in zip(a, b))
            cap = max(t.cap, _slots(a), _slots(b))
            sa, sb = to_symseq(SeqT(et, cap), a), to_symseq(SeqT(et, cap), b)
            return SymSeq(leaf_ite(c, sa.length, sb.length),
                          tuple(merge(et, c, x, y) for x, y in zip(sa.slots, sb.slots)))
    raise TypeError(t)


def _slots(v) -> int:
    return len(v.slots) if isinstance(v, SymSeq) else len(v)


def eq(t: Type, a, b):
    """Structural equality: a Python bool when decidable now, else a z3 Bool."""
    if a is b:
        return True
    match t:
        case BoolT() | IntT() | EnumT() | TextT():
            return leaf_eq(a, b)
        case RecordT(fields=fields):
            return all_(eq(ft, x, y) for (_, ft), x, y in zip(fields, a, b))
        case MapT(val=vt):
            return all_(eq(vt, x, y) for x, y in zip(a, b))
        case BagT() | SetT():
            return all_(leaf_eq(x, y) for x, y in zip(a, b))
        case SeqT(elem=et):
            if isinstance(a, tuple) and isinstance(b, tuple):
                if len(a) != len(b):
                    return False
                return all_(eq(et, x, y) for x, y in zip(a, b))
            cap = max(_slots(a), _slots(b))
            sa, sb = to_symseq(SeqT(et, cap), a), to_symseq(SeqT(et, cap), b)
            parts = [leaf_eq(sa.length, sb.length)]
            for i in range(cap):
                parts.append(or_(sa.length <= i, eq(et, sa.slots[i], sb.slots[i])))
            return all_(parts)
    raise TypeError(t)


def canonical_leaves(t: Type, v) -> list | None:
    """The leaves of ``v`` as z3 terms, in an order fixed by ``t``, with the slots of a seq past
    its length replaced by defaults: two values are equal exactly when their leaves are equal,
    term for term.  None for a text, which has no z3 leaf."""
    match t:
        case BoolT() | IntT() | EnumT():
            return [lift(v)]
        case RecordT(fields=fields):
            out = []
            for (_, ft), x in zip(fields, v):
                sub = canonical_leaves(ft, x)
                if sub is None:
                    return None
                out += sub
            return out
        case MapT(val=vt):
            out = []
            for x in v:
                sub = canonical_leaves(vt, x)
                if sub is None:
                    return None
                out += sub
            return out
        case BagT() | SetT():
            return [lift(x) for x in v]
        case SeqT(elem=et, cap=cap):
            s = to_symseq(t, v)
            blank = canonical_leaves(et, default(et))
            if blank is None:
                return None
            out = [lift(s.length)]
            for i in range(cap):
                here = simplify_bool(s.length > i) if is_sym(s.length) else s.length > i
                sub = canonical_leaves(et, s.slots[i])
                out += [lift(leaf_ite(here, a, b)) for a, b in zip(sub, blank)]
            return out
    return None


def ordinal(t: Type, v):
    """The index of key ``v`` among the values of finite type ``t`` (concrete or a term)."""
    if is_concrete(v):
        return finite(t).index[v]
    match t:
        case BoolT():
            return z3.If(v, 1, 0)
        case IntT(lo=lo):
            return v - lo if lo else v
        case EnumT():
            return v
        case RecordT(fields=fields):
            acc = 0
            lo = hi = 0
            for (off, mult), (_, ft), x in zip(radix(t), fields, v):
                o = ordinal(ft, x)
                acc = acc + o * mult if mult != 1 else acc + o
                if is_concrete(x):
                    lo, hi = lo + o * mult, hi + o * mult
                else:
                    hi += (finite(ft).size - 1) * mult
            if is_sym(acc) and (lo, hi) != (0, finite(t).size - 1):
                return _spanned(acc, lo, hi)
            return acc
    raise TypeError(t)


def _spanned(term, lo: int, hi: int):
    """``term`` (a new wrapper of the same z3 term) noting that its value lies in lo..hi: a
    record key with some fields concrete (its first field known) can only be one of a few
    slots, and select/store then build terms over those slots only — so a move that writes
    one key with a known first field leaves the terms of keys with other ones untouched (the prover
    sees them unchanged).  Outside lo..hi a key is out of its type, which no rule allows."""
    out = z3.ArithRef(term.as_ast(), term.ctx)
    out._rb_span = (lo, hi)
    return out


def _span(idx, n: int) -> tuple[int, int]:
    return getattr(idx, "_rb_span", None) or (0, n - 1)


_SELECTED: dict = {}
SELECT_MEMO = 4096


def select(elem_t: Type, tup: tuple, idx):
    """``tup[idx]`` for a possibly symbolic index.  Remembered per (tuple, index term): a
    constant table read at a symbolic key by every call of a def (a table of entries at the
    chosen key) is merged once, not once per call, and the merge is the costly part."""
    if not is_sym(idx):
        return tup[idx]
    key = (id(tup), idx.get_id())
    hit = _SELECTED.get(key)
    if hit is not None and hit[0] is tup and hit[1].eq(idx) and _span(hit[1], 0) == \
            _span(idx, 0):
        return hit[2]
    lo, hi = _span(idx, len(tup))
    out = tup[hi]
    for i in range(hi - 1, lo - 1, -1):
        out = merge(elem_t, idx == i, tup[i], out)
    if len(_SELECTED) >= SELECT_MEMO:
        _SELECTED.clear()
    _SELECTED[key] = (tup, idx, out)      # both kept alive: their ids stay theirs
    return out


def store(elem_t: Type, tup: tuple, idx, value):
    if not is_sym(idx):
        return tup[:idx] + (value,) + tup[idx + 1:]
    lo, hi = _span(idx, len(tup))
    return tuple(merge(elem_t, idx == i, value, old) if lo <= i <= hi else old
                 for i, old in enumerate(tup))


def lift(v):
    """A z3 term for a leaf (Python bools and ints become constants, made once per value)."""
    if isinstance(v, (bool, int)):
        return _constant(v, z3.main_ctx())
    return v


# ---- fresh symbolic values and models ------------------------------------------------------------

class Fresh:
    """Makes fresh symbolic values of a type, recording their range constraints."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        self.n = 0
        self.constraints: list = []

    def name(self, hint: str) -> str:
        self.n += 1
        return f"{self.prefix}{hint}!{self.n}"

    def value(self, t: Type, hint: str = "v"):
        match t:
            case BoolT():
                return z3.Bool(self.name(hint))
            case IntT(lo, hi):
                x = z3.Int(self.name(hint))
                self.constraints += [x >= lo, x <= hi]
                return x
            case EnumT(members=m):
                x = z3.Int(self.name(hint))
                self.constraints += [x >= 0, x < len(m)]
                return x
            case RecordT(fields=fields):
                return tuple(self.value(ft, f"{hint}.{fn}") for fn, ft in fields)
            case SeqT(elem=et, cap=cap):
                n = z3.Int(self.name(f"{hint}.len"))
                self.constraints += [n >= 0, n <= cap]
                return SymSeq(n, tuple(self.value(et, f"{hint}[{i}]") for i in range(cap)))
            case BagT(elem=et, most=most):
                out = []
                for i in range(finite(et).size):
                    x = z3.Int(self.name(f"{hint}#{i}"))
                    self.constraints += [x >= 0, x <= most]
                    out.append(x)
                return tuple(out)
            case MapT(key=k, val=vt):
                return tuple(self.value(vt, f"{hint}[{i}]") for i in range(finite(k).size))
            case SetT(elem=et):
                return tuple(z3.Bool(self.name(f"{hint}#{i}")) for i in range(finite(et).size))
        raise TypeError(t)


def concretize(t: Type, v, model: z3.ModelRef):
    """Read a (partly) symbolic value back as a concrete value under ``model``."""
    match t:
        case BoolT():
            return v if isinstance(v, bool) else z3.is_true(model.eval(v, model_completion=True))
        case IntT() | EnumT():
            return v if isinstance(v, int) and not isinstance(v, bool) else \
                model.eval(lift(v), model_completion=True).as_long()
        case TextT():
            return v
        case RecordT(fields=fields):
            return tuple(concretize(ft, x, model) for (_, ft), x in zip(fields, v))
        case MapT(val=vt):
            return tuple(concretize(vt, x, model) for x in v)
        case BagT():
            return tuple(concretize(IntT(0, 0), x, model) for x in v)
        case SetT():
            return tuple(concretize(BoolT(), x, model) for x in v)
        case SeqT(elem=et):
            if isinstance(v, tuple):
                return tuple(concretize(et, x, model) for x in v)
            n = concretize(IntT(0, 0), v.length, model)
            return tuple(concretize(et, x, model) for x in v.slots[:n])
    raise TypeError(t)


def leaf_sorts(t) -> list | None:
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
                sub = leaf_sorts(ft)
                if sub is None:
                    return None
                out += sub
            return out
        case MapT(key=k, val=vt):
            sub = leaf_sorts(vt)
            return None if sub is None else sub * finite(k).size
        case SetT(elem=et):
            return [z3.BoolSort()] * finite(et).size
        case BagT(elem=et):
            return [z3.IntSort()] * finite(et).size
    return None
