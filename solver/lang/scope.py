"""Names in scope and the frame slots they live in while one unit (an action, an invariant, a
query...) is checked, and the renumbering that moves a checked def body into another frame."""
from __future__ import annotations

from dataclasses import dataclass

from . import ir
from .irwalk import LEAVES, NOT_IR


class Frame:
    """Allocates the local slots of one compiled unit (an action, an invariant, a query...)."""

    def __init__(self, size: int = 0) -> None:
        self.size = size    # the slots below are taken

    def new(self) -> int:
        self.size += 1
        return self.size - 1


@dataclass(frozen=True)
class Scope:
    names: dict
    frame: Frame
    old: bool = False          # state references mean the previous state (transition props)
    transition: bool = False   # `old(...)` is allowed
    allow_state: bool = True

    def bind(self, name: str, local: ir.Local) -> "Scope":
        return Scope({**self.names, name: local}, self.frame, self.old, self.transition,
                     self.allow_state)


_SLOT_FIELDS = ("slot", "family")
# A cache, per IR class, of how `renumber` treats each field: 0 kept (a type, a span), 1 a
# slot, 2 a tuple of slots, 3 a part to renumber; None for a class that holds no local (not
# IR, or a constant).  It depends on the class alone, so it never goes stale.
_PLANS: dict = {}


def _plan(cls):
    if cls.__module__ != ir.__name__ or issubclass(cls, LEAVES):
        return None
    return tuple((f, 0 if f in NOT_IR else 1 if f in _SLOT_FIELDS else 2 if f == "slots" else 3)
                 for f in cls.__dataclass_fields__)


def renumber(node, moved: dict):
    """The IR ``node`` with every local slot s (binders, lets, calls, fixpoints, real
    families, and the locals that read them) replaced by ``moved[s]``.  Types, spans and
    constants' values are kept as they are.  The checker's hot spot: each call of a def
    renumbers the def's checked body.  A part met twice (the IR shares sub-trees) is
    renumbered once, and a node is copied field by field, without the frozen dataclass's
    `__init__`."""
    memo: dict = {}
    plans = _PLANS

    def go(node):
        cls = type(node)
        if cls is tuple:
            return tuple([go(x) for x in node])
        plan = plans.get(cls, False)
        if plan is False:
            plan = plans[cls] = _plan(cls)
        if plan is None:
            return node
        done = memo.get(id(node))
        if done is not None:
            return done
        d = dict(node.__dict__)
        for f, kind in plan:
            v = d[f]
            if kind == 1:
                d[f] = moved[v]
            elif kind == 2:
                d[f] = tuple([moved[x] for x in v])
            elif kind == 3:
                d[f] = go(v)
        new = object.__new__(cls)
        object.__setattr__(new, "__dict__", d)
        memo[id(node)] = new
        return new

    return go(node)
