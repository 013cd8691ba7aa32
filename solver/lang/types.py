"""The finite types of the rules language and the concrete shape of their values.

Concrete values: bool -> bool; integer ranges -> int; enums -> int (ordinal); records -> tuple;
seq -> tuple (variable length, at most ``cap``); bag -> tuple of counts indexed by the element's
ordinal; map -> tuple of values indexed by the key's ordinal; set -> tuple of bools likewise.
Everything is bounded, so that both backends can always run.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterator, TypeAlias

from .errors import EvalError


@dataclass(frozen=True)
class BoolT:
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class IntT:
    lo: int
    hi: int

    def __str__(self) -> str:
        return f"{self.lo}..{self.hi}"


@dataclass(frozen=True)
class EnumT:
    name: str
    members: tuple[str, ...]
    # Each member's JSON spelling when the spec gives one (`empty = null`), else its name.
    json: tuple = ()

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class RecordT:
    name: str
    fields: tuple[tuple[str, "Type"], ...]

    def __str__(self) -> str:
        return self.name

    def index(self, field: str) -> int | None:
        for i, (n, _) in enumerate(self.fields):
            if n == field:
                return i
        return None


@dataclass(frozen=True)
class SeqT:
    elem: "Type"
    cap: int

    def __str__(self) -> str:
        return f"seq[{self.elem}, {self.cap}]"


@dataclass(frozen=True)
class BagT:
    elem: "Type"
    most: int

    def __str__(self) -> str:
        return f"bag[{self.elem}, {self.most}]"


@dataclass(frozen=True)
class MapT:
    key: "Type"
    val: "Type"

    def __str__(self) -> str:
        return f"map[{self.key}, {self.val}]"


@dataclass(frozen=True)
class SetT:
    elem: "Type"

    def __str__(self) -> str:
        return f"set[{self.elem}]"


@dataclass(frozen=True)
class TextT:
    """Strings exist only in `show` clauses (puzzle step rendering)."""

    def __str__(self) -> str:
        return "text"


@dataclass(frozen=True)
class RealT:
    """A linear term over the real unknowns of an `exists real` (never a value: reals do not
    escape their body, so no state field, def or puzzle input has this type)."""

    def __str__(self) -> str:
        return "real"


@dataclass(frozen=True)
class RealFamilyT:
    """The unknowns ``f`` of an `exists real f[k in K]`: read only as ``f[k]``."""

    key: "Type"

    def __str__(self) -> str:
        return f"real[{self.key}]"


Type: TypeAlias = (BoolT | IntT | EnumT | RecordT | SeqT | BagT | MapT | SetT | TextT | RealT
                   | RealFamilyT)
BOOL = BoolT()

KEYED = (BagT, MapT, SetT)


def is_finite(t: Type) -> bool:
    """Return whether ``t`` can index a map or bag (a small finite scalar or record of them)."""
    match t:
        case BoolT() | IntT() | EnumT():
            return True
        case RecordT(fields=fields):
            return all(is_finite(ft) for _, ft in fields)
        case _:
            return False


def cardinality(t: Type) -> int:
    match t:
        case BoolT():
            return 2
        case IntT(lo, hi):
            return max(0, hi - lo + 1)
        case EnumT(members=m):
            return len(m)
        case RecordT(fields=fields):
            n = 1
            for _, ft in fields:
                n *= cardinality(ft)
            return n
    raise TypeError(f"{t} is not finite")


class Finite:
    """Enumeration, ordinals and decoding of one finite type, cached."""

    def __init__(self, t: Type):
        self.t = t
        self.values: tuple = tuple(_enumerate(t))
        self.index = _Ordinals(t, {v: i for i, v in enumerate(self.values)})
        self.size = len(self.values)


class _Ordinals(dict):
    """A finite type's ordinals by value: a value outside the type (a record whose field was
    computed out of its range, `P(x - 1, y)` unguarded) is an evaluation error where it
    is looked up, not a Python KeyError."""

    def __init__(self, t: Type, ordinals: dict):
        super().__init__(ordinals)
        self.t = t

    def __missing__(self, v):
        raise EvalError(f"{_shown(v)} is outside {self.t}")


def _shown(v) -> str:
    return f"({', '.join(map(str, v))})" if isinstance(v, tuple) else repr(v)


# A cache of `finite` per type (types are frozen values, so an entry never goes stale).
_FINITE: dict[Type, Finite] = {}


def finite(t: Type) -> Finite:
    f = _FINITE.get(t)
    if f is None:
        f = _FINITE[t] = Finite(t)
    return f


def _enumerate(t: Type) -> Iterator:
    match t:
        case BoolT():
            yield from (False, True)
        case IntT(lo, hi):
            yield from range(lo, hi + 1)
        case EnumT(members=m):
            yield from range(len(m))
        case RecordT(fields=fields):
            for combo in itertools.product(*(tuple(_enumerate(ft)) for _, ft in fields)):
                yield combo
        case _:
            raise TypeError(f"{t} is not finite")


def radix(t: Type) -> list[tuple[int, int]]:
    """Return, for a record type, each field's (offset, multiplier) in the ordinal."""
    assert isinstance(t, RecordT)
    out = []
    mult = 1
    for _, ft in reversed(t.fields):
        out.append((_lowest(ft), mult))
        mult *= cardinality(ft)
    return list(reversed(out))


def _lowest(t: Type) -> int:
    return t.lo if isinstance(t, IntT) else 0


def default(t: Type):
    """Return the value a state field has before `init` sets it."""
    match t:
        case BoolT():
            return False
        case IntT(lo, hi):
            return 0 if lo <= 0 <= hi else lo
        case EnumT():
            return 0
        case RecordT(fields=fields):
            return tuple(default(ft) for _, ft in fields)
        case SeqT():
            return ()
        case BagT(elem=e):
            return (0,) * finite(e).size
        case MapT(key=k, val=v):
            d = default(v)
            return (d,) * finite(k).size
        case SetT(elem=e):
            return (False,) * finite(e).size
        case TextT():
            return ""
    raise TypeError(t)


def leaf_count(t: Type) -> int:
    """Count the scalar leaves of a value of ``t`` (a measure of state size)."""
    match t:
        case BoolT() | IntT() | EnumT() | TextT():
            return 1
        case RecordT(fields=fields):
            return sum(leaf_count(ft) for _, ft in fields)
        case SeqT(elem=e, cap=c):
            return 1 + c * leaf_count(e)
        case BagT(elem=e):
            return finite(e).size
        case MapT(key=k, val=v):
            return finite(k).size * leaf_count(v)
        case SetT(elem=e):
            return finite(e).size
    raise TypeError(t)


def is_grid(t: Type) -> bool:
    """A record of two integer fields (the squares of `component` and `components`)."""
    return (isinstance(t, RecordT) and len(t.fields) == 2
            and all(isinstance(ft, IntT) for _, ft in t.fields))


def is_grid_region(t: Type) -> bool:
    return isinstance(t, MapT) and is_grid(t.key) and t.val == BOOL


# ---- type relations (what the checker allows where) -------------------------------------------

def elem_type(t: Type) -> Type | None:
    """The element type of a seq, bag or set; None for any other type."""
    match t:
        case SeqT(elem=e) | BagT(elem=e) | SetT(elem=e):
            return e
    return None


def comparable(a: Type, b: Type) -> bool:
    if isinstance(a, IntT) and isinstance(b, IntT):
        return True
    if isinstance(a, SeqT) and isinstance(b, SeqT):
        return comparable(a.elem, b.elem)
    if isinstance(a, BagT) and isinstance(b, BagT):
        return a.elem == b.elem
    if isinstance(a, MapT) and isinstance(b, MapT):
        return a.key == b.key and comparable(a.val, b.val)
    return a == b


def assignable(src: Type, dst: Type) -> bool:
    match (src, dst):
        case (IntT(), IntT()):
            return True
        case (SeqT(), SeqT()):
            return assignable(src.elem, dst.elem)
        case (BagT(), BagT()):
            return src.elem == dst.elem
        case (MapT(), BagT()):
            return src.key == dst.elem and isinstance(src.val, IntT)
        case (MapT(), MapT()):
            return src.key == dst.key and assignable(src.val, dst.val)
    return src == dst


def needs_bounds(src: Type, dst: Type) -> bool:
    """Whether a runtime bounds check is needed to store a ``src`` value into ``dst``."""
    match (src, dst):
        case (IntT(), IntT()):
            return src.lo < dst.lo or src.hi > dst.hi
        case (SeqT(), SeqT()):
            return src.cap > dst.cap or needs_bounds(src.elem, dst.elem)
        case (BagT(), BagT()):
            return src.most > dst.most
        case (MapT(), BagT()):
            return src.val.lo < 0 or src.val.hi > dst.most
        case (MapT(), MapT()):
            return needs_bounds(src.val, dst.val)
    return False


def param_fits(value, t: Type) -> bool:
    """Whether a parameter's value lies in its declared type (only ranges restrict one)."""
    if isinstance(t, IntT):
        return isinstance(value, int) and t.lo <= value <= t.hi
    return True
