"""Bookkeeping is not drawn: the state fields of every spec that are counters, caches or what
an undo restores are marked `internal`, so no picture of a state shows them."""
from __future__ import annotations

import pytest

from solver.engine.game import load_game
from solver.render.render import render_svg, render_text

# game -> the fields that are bookkeeping, not the position a player sees.
BOOKKEEPING = {
    "torres": {"reserve"},                       # 92 less the blocks elsewhere (blocks_kept)
    "clock-towers": {"played"},                  # a turn counter
    "tours-de-pouvoir": {"paid", "cap", "built", "saved_market", "saved_towers", "saved_pile"},
    "les-5-tours": {"cap", "built", "saved_market", "saved_towers", "saved_pile"},
    "towers": {"occ", "turns_left", "last"},
}


@pytest.mark.parametrize("name", sorted(BOOKKEEPING))
def test_bookkeeping_fields_are_internal_and_not_drawn(name):
    g = load_game(name)
    internal = {f.name for f in g.p.state if f.internal}
    assert internal == BOOKKEEPING[name]
    st = list(g.initial())
    # Every internal field away from its initial value: still not drawn.
    for f in g.p.state:
        if f.internal:
            i = g.field_index[f.name]
            st[i] = _other(f.type, st[i])
    text = render_text(g, tuple(st))
    svg = render_svg(g, tuple(st))
    for n in internal:
        assert f"\n{n}:" not in "\n" + text and f'data-field="{n}"' not in svg


def _other(t, v):
    """A value of type ``t`` other than ``v`` where that is easy (a number, a flag, a map of
    numbers), else ``v``."""
    from solver.lang.types import BoolT, IntT, MapT
    match t:
        case BoolT():
            return not v
        case IntT(lo=lo, hi=hi):
            return v + 1 if v < hi else lo
        case MapT(val=IntT() | BoolT() as vt) if len(v):
            return (_other(vt, v[0]), *v[1:])
    return v
