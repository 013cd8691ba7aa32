"""One traversal of the IR, for the analyses that read it (which locals or fields an
expression uses); the IR module itself stays free of behaviour."""
from __future__ import annotations

from typing import Iterator

from . import ir
from .types import RealT

# IR nodes whose fields hold data, not IR (a constant's value may be a large table).
LEAVES = (ir.Const, ir.Text)
# Fields of every node that are not IR.
NOT_IR = ("type", "span")


def nodes(node) -> Iterator:
    """Every IR node under ``node`` (itself included), in pre-order; types and spans skipped."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(reversed(n))
            continue
        if not hasattr(n, "__dataclass_fields__"):
            continue
        yield n
        if isinstance(n, LEAVES):
            # A constant's value is data (a large table), not IR.
            continue
        for f in reversed(tuple(n.__dataclass_fields__)):
            if f not in NOT_IR:
                stack.append(getattr(n, f))


def _children(e):
    for f in e.__dataclass_fields__:
        if f in NOT_IR:
            continue
        v = getattr(e, f)
        if isinstance(v, tuple):
            for x in v:
                if isinstance(x, tuple):
                    yield from (y for y in x if hasattr(y, "__dataclass_fields__"))
                elif hasattr(x, "__dataclass_fields__"):
                    yield x
        elif hasattr(v, "__dataclass_fields__"):
            yield v


# A cache of `has_real` by node id (the node is kept with its answer, so that an id reused by
# a later node is not mistaken for it).
_HAS_REAL: dict = {}


def has_real(e) -> bool:
    """Whether ``e`` contains a real term (a nested `exists real` is a plain bool)."""
    key = id(e)
    hit = _HAS_REAL.get(key)
    if hit is not None and hit[0] is e:
        return hit[1]
    if isinstance(e, ir.RealVar) or isinstance(getattr(e, "type", None), RealT):
        r = True
    elif isinstance(e, (ir.RealExists, ir.Call, ir.Const, ir.Text, ir.StateRef)):
        r = False
    else:
        r = any(has_real(c) for c in _children(e))
    _HAS_REAL[key] = (e, r)
    return r

