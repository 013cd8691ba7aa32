"""Isometric pictures of solids, for `render.render_svg`.

Generic, driven by types: a record with exactly three integer fields named ``x``, ``y`` and
``z`` is a *point* (a unit cube of space, z upwards).  A record with a ``seq`` of points is a
*solid*; a map or seq of solids is drawn as one picture, each solid in its own colour; a map
keyed by points with scalar values is drawn as the cubes whose value is not the default.  A map
whose values are such groups (one group per player) gives one picture per key, side by side.
Points listed in ``marks`` (the cells a move just filled) are drawn in the highlight colour.
"""
from __future__ import annotations

from ..lang.types import BoolT, EnumT, IntT, MapT, RecordT, SeqT, default, finite

_S = 14                 # the edge of a cube on screen
_COS = 0.8660254
_PALETTE = ("#8fb8de", "#f3c677", "#9fd49a", "#d9a6e6", "#f2a48f", "#a7d8d4", "#e0d38a",
            "#c3b8f0", "#f7b6d2", "#b9c9a0", "#f0c3a0", "#a0b8c9")
HIGHLIGHT = "#d62728"


def is_point(t) -> bool:
    return isinstance(t, RecordT) and tuple(n for n, _ in t.fields) == ("x", "y", "z") and \
        all(isinstance(ft, IntT) for _, ft in t.fields)


def _points_field(t) -> int | None:
    """The index of the seq-of-points field of a solid record, if ``t`` is one."""
    if not isinstance(t, RecordT):
        return None
    hits = [i for i, (_, ft) in enumerate(t.fields) if isinstance(ft, SeqT) and is_point(ft.elem)]
    return hits[0] if len(hits) == 1 else None


def is_group(t) -> bool:
    """A collection of solids, or a map from points to scalars."""
    if isinstance(t, MapT):
        if is_point(t.key) and isinstance(t.val, (IntT, BoolT, EnumT)):
            return True
        return _points_field(t.val) is not None
    return isinstance(t, SeqT) and _points_field(t.elem) is not None


def is_groups(t) -> bool:
    """A map whose values are groups: one picture per key."""
    return isinstance(t, MapT) and not is_point(t.key) and is_group(t.val)


def solids(t, v) -> list[tuple[int, list[tuple[int, int, int]]]]:
    """``(colour index, cells)`` of every solid of a group value."""
    if isinstance(t, MapT) and is_point(t.key):
        d = default(t.val)
        keys = finite(t.key).values
        return [(x if isinstance(x, int) and not isinstance(x, bool) else 1, [k])
                for k, x in zip(keys, v) if x != d]
    elem = t.val if isinstance(t, MapT) else t.elem
    i = _points_field(elem)
    return [(n, list(s[i])) for n, s in enumerate(v) if s[i]]


def bounds(t) -> tuple[IntT, IntT, IntT]:
    """The x, y, z ranges of the group's point type (for the ground grid)."""
    if isinstance(t, MapT) and is_point(t.key):
        p = t.key
    else:
        elem = t.val if isinstance(t, MapT) else t.elem
        p = elem.fields[_points_field(elem)][1].elem
    return tuple(ft for _, ft in p.fields)


def picture(t, v, marks=frozenset()) -> tuple[int, int, list[str]]:
    """An isometric drawing of a group: (width, height, SVG elements at the origin)."""
    bx, by, bz = bounds(t)

    def proj(x, y, z):
        return (((x - bx.lo) - (y - by.lo)) * _S * _COS,
                ((x - bx.lo) + (y - by.lo)) * _S / 2 - z * _S)

    ox = (by.hi + 1 - by.lo) * _S * _COS + 4
    oy = (bz.hi + 1) * _S + 4

    def pt(x, y, z):
        a, b = proj(x, y, z)
        return f"{a + ox:.1f},{b + oy:.1f}"

    out = []
    # The ground: the x/y range of the point type, its cells outlined.
    for x in range(bx.lo, bx.hi + 1):
        for y in range(by.lo, by.hi + 1):
            out.append(f'<polygon class="ground" points="{pt(x, y, 0)} {pt(x + 1, y, 0)} '
                       f'{pt(x + 1, y + 1, 0)} {pt(x, y + 1, 0)}" fill="#fafafa" '
                       f'stroke="#dddddd" stroke-width="0.5"/>')
    cubes = []
    for colour, cells in solids(t, v):
        for c in cells:
            cubes.append((c[0] + c[1] + c[2], c[2], c, colour))
    cubes.sort()
    for _, _, (x, y, z), colour in cubes:
        hit = (x, y, z) in marks
        base = HIGHLIGHT if hit else _PALETTE[colour % len(_PALETTE)]
        edge = "#7a0f10" if hit else "#444444"
        cls = "cube new" if hit else "cube"
        top = (f"{pt(x, y, z + 1)} {pt(x + 1, y, z + 1)} "
               f"{pt(x + 1, y + 1, z + 1)} {pt(x, y + 1, z + 1)}")
        right = (f"{pt(x + 1, y, z)} {pt(x + 1, y + 1, z)} "
                 f"{pt(x + 1, y + 1, z + 1)} {pt(x + 1, y, z + 1)}")
        left = (f"{pt(x, y + 1, z)} {pt(x + 1, y + 1, z)} "
                f"{pt(x + 1, y + 1, z + 1)} {pt(x, y + 1, z + 1)}")
        out.append(f'<g class="{cls}" data-cell="{x},{y},{z}">'
                   f'<polygon points="{top}" fill="{base}" stroke="{edge}" stroke-width="0.8"/>'
                   f'<polygon points="{right}" fill="{base}" fill-opacity="0.75" stroke="{edge}" '
                   f'stroke-width="0.8"/>'
                   f'<polygon points="{left}" fill="{base}" fill-opacity="0.55" stroke="{edge}" '
                   f'stroke-width="0.8"/></g>')
    w = int(ox + (bx.hi + 1 - bx.lo) * _S * _COS + 4)
    h = int(oy + ((bx.hi + 1 - bx.lo) + (by.hi + 1 - by.lo)) * _S / 2 + 4)
    return w, h, out
