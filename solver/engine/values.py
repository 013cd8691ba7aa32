"""Values in both domains of the evaluator: sums of terms, the symbolic domain's seq
operations, the bounds of declared types, and the structural identity by which an unrolled
fixpoint stops."""
from __future__ import annotations

import z3

from . import domains as dz
from ..lang import ir
from ..lang.errors import EvalError
from ..lang.irwalk import nodes
from ..lang.types import BagT, IntT, MapT, RecordT, SeqT, Type, default


def count_term(c):
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

def proved(t: Type, src: Type | None) -> bool:
    """Whether every value of static type ``src`` already fits ``t``."""
    if src is None:
        return False
    match (t, src):
        case (IntT(), IntT()):
            return t.lo <= src.lo and src.hi <= t.hi
        case (SeqT(), SeqT()):
            return src.cap <= t.cap and proved(t.elem, src.elem)
        case (BagT(), BagT()):
            return False  # bag arithmetic may go negative
        case (MapT(), MapT()):
            return proved(t.val, src.val)
    return t == src


def _part(src: Type | None, attr: str):
    return getattr(src, attr, None) if src is not None else None


def fits_check(t: Type, src: Type | None = None):
    """Whether a value fits ``t`` (its bounds), as a function of the value alone, for values
    of static type ``src``: what the types prove is decided once, not on every value (an
    assignment and a def's declared type check each)."""
    if proved(t, src):
        return _always
    match t:
        case IntT(lo, hi):
            return lambda v: lo <= v <= hi
        case BagT(most=m):
            return lambda v: all(0 <= x <= m for x in v)
        case SeqT(elem=et, cap=cap):
            se = _part(src, "elem")
            if proved(et, se):
                return lambda v: len(v) <= cap
            inner = fits_check(et, se)
            return lambda v: len(v) <= cap and all(inner(x) for x in v)
        case MapT(val=vt):
            inner = fits_check(vt, _part(src, "val"))
            return lambda v: all(inner(x) for x in v)
        case RecordT(fields=fields):
            inners = tuple(fits_check(ft) for _, ft in fields)
            return lambda v: all(f(x) for f, x in zip(inners, v))
    return _always


def _always(v) -> bool:
    return True


# ---- values kept in their types ----------------------------------------------------------------
#
# The checker lets an int of a wider static type into a narrower place (`P(x - 1, y)`,
# `m[n - 1]`): a spec guards such a place by its own conditions (`x > 0 and m[P(x - 1, y)]`).
# Where the value may still be out of range, the interpreter checks it where it matters: an
# int key where it is looked up (`m[-1]` would read the last entry of a Python tuple), a record
# where it is looked up (`types.finite`), a record or seq that holds such a field or item
# where it is stored.

def narrow_int(src: Type, dst: Type) -> IntT | None:
    """``dst``, when it is a range that a value of static type ``src`` may leave (the value
    is then checked where it goes); None when nothing is to check."""
    if isinstance(dst, IntT) and isinstance(src, IntT) and (src.lo < dst.lo or src.hi > dst.hi):
        return dst
    return None


def key_error(v, t: IntT, span) -> EvalError:
    return EvalError(f"key {v!r} is outside the keys {t}", span)


def checked_int(f, t: IntT, error, span):
    """``f`` (a closure of ``(st, env)``), its value checked to lie in ``t``; ``error(v, t,
    span)`` the error raised when it does not."""
    lo, hi = t.lo, t.hi

    def check(st, env):
        v = f(st, env)
        if not lo <= v <= hi:
            raise error(v, t, span)
        return v
    return check


def out_of_type(e: ir.Expr) -> bool:
    """Whether the value of ``e``, a record, seq or map of them, may hold a field or an item
    made out of its range: a record or seq literal, or a record's update, whose int item's
    static type leaves the field's or the seq's (in ``e`` or a def it calls)."""
    if not isinstance(e.type, (RecordT, SeqT, MapT)):
        return False
    held = _held(e.type)
    for n in nodes(e):
        if getattr(n, "type", None) not in held:
            continue        # not a part of the value (a record built to look a map up)
        if isinstance(n, ir.RecordLit):
            if any(narrow_int(x.type, ft) for x, (_, ft) in zip(n.items, n.type.fields)):
                return True
        elif isinstance(n, ir.SeqLit):
            if any(narrow_int(x.type, n.type.elem) for x in n.items):
                return True
        elif isinstance(n, ir.With) and isinstance(n.type, RecordT):
            if any(narrow_int(x.type, n.type.fields[i][1]) for i, x in n.updates):
                return True
    return False


def _held(t: Type) -> set:
    """The record and seq types of the values ``t`` holds, ``t`` included (not its keys)."""
    out: set = set()
    while True:
        if isinstance(t, (RecordT, SeqT)):
            out.add(t)
        if isinstance(t, RecordT):
            for _, ft in t.fields:
                out |= _held(ft)
            return out
        if isinstance(t, (SeqT, MapT)):
            t = t.elem if isinstance(t, SeqT) else t.val
            continue
        return out


def sym_fits(t: Type, v, src: Type | None = None):
    """The bounds condition, for only what the value's static type does not prove."""
    if proved(t, src):
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
            if proved(et, se):
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


# ---- unrolled fixpoints -------------------------------------------------------------------------

def simplified(v):
    if isinstance(v, tuple):
        return tuple(simplified(x) for x in v)
    if dz.is_sym(v):
        return dz.simplify_bool(z3.simplify(v))
    return v


def identical(a, b) -> bool:
    """Structural identity of two values of one type (z3 terms compared as terms)."""
    if a is b:
        return True
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(
            identical(x, y) for x, y in zip(a, b))
    if dz.is_sym(a) or dz.is_sym(b):
        return dz.is_sym(a) and dz.is_sym(b) and a.eq(b)
    if isinstance(a, dz.SymSeq) or isinstance(b, dz.SymSeq):
        return False
    return type(a) is type(b) and a == b


def empty_extreme(t: IntT) -> int:
    """max/min over an empty domain: 0 when the type allows it (documented in the language)."""
    return 0 if t.lo <= 0 <= t.hi else t.lo
