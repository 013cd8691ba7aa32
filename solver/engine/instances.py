"""The instances of an action's parameters for the interpreter: the shapes enumerated fast,
the products of fixed domains built once per game, and the candidates of a random move drawn
one by one from them without building the whole list."""
from __future__ import annotations

from bisect import bisect_right
from itertools import compress, product

from ..lang import ir
from ..lang.irwalk import nodes
from ..lang.types import BagT, SetT, finite


def locals_used(node) -> set[int]:
    """The frame slots an IR expression reads."""
    return {n.slot for n in nodes(node) if isinstance(n, ir.Local)}


def _fixed_values(d: ir.Domain):
    """The values of a domain that depends on neither the state nor a local, in the order the
    evaluator enumerates them; None for any other domain."""
    if isinstance(d, ir.TypeDomain):
        return tuple(finite(d.elem).values)
    if isinstance(d, ir.RangeDomain) and isinstance(d.lo, ir.Const) \
            and isinstance(d.hi, ir.Const):
        return tuple(range(d.lo.value, d.hi.value + 1))
    return None


def fixed_instances(a: ir.Action) -> tuple | None:
    """Every parameter tuple of ``a``, in the order of the general enumeration (the first
    parameter outermost), when each parameter ranges over a type or a constant range: the
    same in every state, so built once.  None when a domain reads the state or a local."""
    cols = [_fixed_values(b.domain) for b in a.params]
    if any(c is None for c in cols):
        return None
    return tuple(product(*cols))


def instances_fn(cc, a: ir.Action, seq_domain: bool):
    """`instances` for the common shapes, giving the same tuples in the same order: no
    parameter, or one ranging over a type, a constant range, or the members of a bag or set
    read from the state.  None for any other shape (the general enumeration serves it)."""
    if not a.params:
        return lambda st: [()]
    if len(a.params) != 1 or seq_domain:
        return None
    d = a.params[0].domain
    fixed = fixed_instances(a)
    if fixed is not None:
        return lambda st: list(fixed)
    if isinstance(d, ir.CollDomain) and isinstance(d.coll.type, (BagT, SetT)) \
            and not locals_used(d.coll):
        singles = tuple((v,) for v in finite(d.coll.type.elem).values)
        c = d.coll
        if isinstance(c, ir.Field) and isinstance(c.record, ir.StateRef) and not c.record.old:
            i = c.index
            return lambda st: list(compress(singles, st[i]))
        fc = cc.expr(c)
        size = a.frame + 1
        return lambda st: list(compress(singles, fc(st, [None] * size)))
    return None


def weights_fn(cc, a: ir.Action):
    """For a chance action drawn from a bag with weight its count (``c in bag weight bag[c]``):
    the weights of its instances, in order, read from the bag at once."""
    if a.weight is None or len(a.params) != 1:
        return None
    b = a.params[0]
    d, w = b.domain, a.weight
    if isinstance(d, ir.CollDomain) and isinstance(d.coll.type, BagT) \
            and isinstance(w, ir.Index) and isinstance(w.key, ir.Local) \
            and w.key.slot == b.slot and _same(w.coll, d.coll) and not locals_used(d.coll):
        fc = cc.expr(d.coll)
        size = a.frame + 1
        return lambda st: [n for n in fc(st, [None] * size) if n]
    return None


def _same(x, y) -> bool:
    """Structural equality of IR, spans ignored."""
    if type(x) is not type(y):
        return False
    if isinstance(x, tuple):
        return len(x) == len(y) and all(_same(p, q) for p, q in zip(x, y))
    if hasattr(x, "__dataclass_fields__"):
        return all(f == "span" or _same(getattr(x, f), getattr(y, f))
                   for f in x.__dataclass_fields__)
    return x == y


class Shuffle:
    """The candidates of several actions, one list after another, drawn at random without
    replacement as the list ``cands = [(a, p) for a, ps in groups for p in ps]`` would be with
    ``i = rng.randrange(n); n -= 1; pick cands[i]; cands[i] = cands[n]``: `take(i, n)` after
    the same random calls gives the same picks, but only the positions swapped so far are
    stored, so a state with thousands of candidates and a legal move among the first few
    draws costs a few draws, not the list."""

    __slots__ = ("groups", "starts", "ends", "moved")

    def __init__(self, groups: list):
        self.groups = groups                # [(action, its instances: a tuple or list)]
        starts, ends, n = [], [], 0
        for _, ps in groups:
            starts.append(n)
            n += len(ps)
            ends.append(n)
        self.starts, self.ends = starts, ends
        self.moved: dict = {}               # position -> the index it holds, where swapped

    def take(self, i: int, last: int):
        """``(action, params)`` at position ``i``, which then holds what ``last`` held."""
        moved = self.moved
        k = moved.get(i, i)
        moved[i] = moved.get(last, last)
        g = bisect_right(self.ends, k)
        a, ps = self.groups[g]
        return a, ps[k - self.starts[g]]


SHORT = 64      # up to this many candidates, a plain list is cheaper than a `Shuffle`
