"""A query's `using` pins: which actions it may use, and the values their arguments must
equal (`using move(piece, _)`), for concrete moves and for symbolic instances."""
from __future__ import annotations

from . import domains as dz


def pins_of(actions, name: str) -> tuple | None:
    """What a query's `using` pins of action ``name``: ``actions`` is None (every action), a
    set of action names, or a mapping from each action used to the values its arguments must
    equal (None: any; `using move(piece, _)`).  None when nothing is pinned."""
    return actions.get(name) if isinstance(actions, dict) else None


def matches(pins: tuple, params: tuple) -> bool:
    return all(v is None or v == x for v, x in zip(pins, params))


def allows(actions, m) -> bool:
    """Whether a query's `using` (see `pins_of`) allows the move."""
    if actions is None:
        return True
    pins = pins_of(actions, m.action)
    return m.action in actions and (pins is None or matches(pins, m.params))


def pin_guard(actions, a, params):
    """`matches` for a symbolic instance: the condition (a z3 Bool, or True/False when
    known) that its arguments equal the pinned values."""
    pins = pins_of(actions, a.name)
    if pins is None:
        return True
    return dz.all_(dz.eq(b.domain.elem, v, x)
                   for b, v, x in zip(a.ir.params, pins, params) if v is not None)
