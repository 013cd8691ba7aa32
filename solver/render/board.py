"""Boards in SVG: the state fields keyed by one square type, drawn as one grid.

A *square type* is a record of two integer fields (x, then y).  Every state field that is a map
of scalars or a bag keyed by such a type is a *layer* of that board: integer layers (a bag's
counts, a map of numbers) shade each cell and print the number in its corner; enum and bool
layers print their value (its JSON spelling) in a disc at the centre.  Nothing here knows what a
game calls its fields: the types decide.  Rows run as in the JSON of a board (row y = 0 on top,
the first row of the list).  Squares given as ``marks`` (a move's arguments) get a red frame
and an arrow from the first to the last; squares given as ``spots`` (the squares an answer
names, say every destination of a piece) a green frame each.
"""
from __future__ import annotations

from ..lang.codec import from_json, grid_axes, to_json
from ..lang.types import BagT, BoolT, EnumT, IntT, MapT, RecordT, SetT, Type, default, finite

CELL = 44
_MARK = "#d62728"
_SPOT = "#2ca02c"


def square_type(t: Type) -> RecordT | None:
    """The square type a field is keyed by, when the field is a board layer."""
    if isinstance(t, MapT) and grid_axes(t) is not None:
        return t.key
    if isinstance(t, BagT) and grid_axes(MapT(t.elem, IntT(0, t.most))) is not None:
        return t.elem
    return None


def layers(game, state) -> tuple[RecordT | None, list]:
    """The first square type among the state's fields and its layers (name, type, value)."""
    key = None
    out = []
    for f, v in zip(game.p.state, state):
        k = square_type(f.type)
        if f.internal:
            continue
        if k is None or (key is not None and k != key):
            continue
        key = k
        out.append((f.name, f.type, v))
    return key, out


def _esc(s: str) -> str:
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def _label(t: Type, x) -> str:
    j = to_json(t, x)
    if j is None:
        return ""
    if isinstance(j, bool):
        return "T" if j else ""
    return str(j)[:4]


def draw(key: RecordT, lays: list, marks=(), highlight: bool = False,
         spots=(), path=()) -> tuple[int, int, list]:
    """The board as SVG elements: (width, height, elements).  Row y = 0 is drawn on top, as
    the JSON of a board lists it first; columns and rows are numbered on the edges.  The
    arrow runs through the squares of ``path`` when given (`move_path`), else through the
    marks."""
    (_, fx), (_, fy) = key.fields
    xs, ys = range(fx.lo, fx.hi + 1), range(fy.lo, fy.hi + 1)
    index = finite(key).index
    ink = _MARK if highlight else "#333333"
    nums = [(n, t, v) for n, t, v in lays if isinstance(t, BagT) or isinstance(t.val, IntT)]
    tags = [(n, t, v) for n, t, v in lays if (n, t, v) not in nums]
    top = max([1] + [max(v) for _, _, v in nums])
    pad = 18
    w, h = pad + CELL * len(xs) + 4, CELL * len(ys) + pad + 4
    body = []
    for yi, y in enumerate(ys):
        row = yi
        body.append(f'<text class="axis" x="{pad - 6}" y="{row * CELL + CELL // 2 + 4}" '
                    f'text-anchor="end" fill="#888888">{y}</text>')
        for xi, x in enumerate(xs):
            i = index[(x, y)]
            cx, cy = pad + xi * CELL, row * CELL
            n = nums[0][2][i] if nums else 0
            shade = 242 - int(150 * n / top) if n else 255
            body.append(f'<rect class="square" data-x="{x}" data-y="{y}" x="{cx}" y="{cy}" '
                        f'width="{CELL}" height="{CELL}" fill="rgb({shade},{shade},{shade})" '
                        f'stroke="{ink}"/>')
            for k, (_, _, v) in enumerate(nums):
                if v[i]:
                    body.append(f'<text class="count" x="{cx + 3}" y="{cy + 11 + 11 * k}" '
                                f'font-size="10" fill="{"#ffffff" if shade < 150 else "#000000"}"'
                                f'>{v[i]}</text>')
            for name, t, v in tags:
                vt = t.val
                if v[i] == default(vt):
                    continue
                s = _label(vt, v[i])
                body.append(f'<circle class="piece" data-layer="{_esc(name)}" '
                            f'cx="{cx + CELL // 2}" '
                            f'cy="{cy + CELL // 2 + 3}" r="13" fill="#ffffff" stroke="#1f77b4" '
                            f'stroke-width="2"/>')
                body.append(f'<text x="{cx + CELL // 2}" y="{cy + CELL // 2 + 7}" '
                            f'text-anchor="middle" font-size="{10 if len(s) > 2 else 12}">'
                            f'{_esc(s)}</text>')
    for xi, x in enumerate(xs):
        body.append(f'<text class="axis" x="{pad + xi * CELL + CELL // 2}" '
                    f'y="{len(ys) * CELL + 14}" text-anchor="middle" fill="#888888">{x}</text>')
    for m in sorted(set(spots)):
        if m not in index:
            continue
        x, y = m
        cx, cy = pad + (x - fx.lo) * CELL, (y - fy.lo) * CELL
        body.append(f'<rect class="spot" data-x="{x}" data-y="{y}" x="{cx + 4}" y="{cy + 4}" '
                    f'width="{CELL - 8}" height="{CELL - 8}" fill="none" stroke="{_SPOT}" '
                    f'stroke-width="3"/>')
    centres = []
    for m in marks:
        if m not in index:
            continue
        x, y = m
        cx = pad + (x - fx.lo) * CELL
        cy = (y - fy.lo) * CELL
        body.append(f'<rect class="mark" x="{cx + 2}" y="{cy + 2}" width="{CELL - 4}" '
                    f'height="{CELL - 4}" fill="none" stroke="{_MARK}" stroke-width="3"/>')
        centres.append((cx + CELL // 2, cy + CELL // 2))
    if len(path) >= 2 and all(m in index for m in path):
        centres = [(pad + (x - fx.lo) * CELL + CELL // 2, (y - fy.lo) * CELL + CELL // 2)
                   for x, y in path]
    if len(centres) >= 2:
        pts = " ".join(f"{a},{b}" for a, b in centres)
        body.insert(0, '<defs><marker id="rb-arrow" viewBox="0 0 10 10" refX="8" refY="5" '
                    'markerWidth="6" markerHeight="6" orient="auto-start-reverse">'
                    f'<path d="M 0 0 L 10 5 L 0 10 z" fill="{_MARK}"/></marker></defs>')
        body.append(f'<polyline class="path" points="{pts}" fill="none" stroke="{_MARK}" '
                    f'stroke-width="3" stroke-dasharray="6 3" marker-end="url(#rb-arrow)"/>')
    return w, h, body


def _is_square(t: Type) -> bool:
    return isinstance(t, RecordT) and square_type(MapT(t, BoolT())) is not None


def move_marks(game, move) -> list:
    """The squares among a move's arguments (by type), in order: what a witness marks."""
    if move is None:
        return []
    name, *args = move
    act = game.action(name)
    out = []
    for b, j in zip(act.ir.params, args):
        if _is_square(b.domain.elem):
            out.append(from_json(b.domain.elem, j, f"move {name}"))
    return out


def move_path(game, move, state) -> list:
    """The squares a move passes, in order, when its action says by which (`show ... via r`):
    a shortest chain from its first square argument to its last whose other squares are in r,
    each a side away from the last (a corner when no such chain exists).  [] when the action
    names no region, refuses the move in ``state`` (the state before it), or no chain exists:
    the move is then drawn from square to square as its arguments give them."""
    if move is None or state is None:
        return []
    ends = move_marks(game, move)
    if len(ends) < 2 or ends[0] == ends[-1]:
        return []
    name, *args = move
    act = game.action(name)
    params = tuple(from_json(b.domain.elem, j, f"move {name}")
                   for b, j in zip(act.ir.params, args))
    square = next(b.domain.elem for b in act.ir.params if _is_square(b.domain.elem))
    region: set = set()
    for t, v in game.move_via(state, name, params):
        key = t.elem if isinstance(t, SetT) else t.key
        if key == square:
            region |= {k for k, b in zip(finite(key).values, v) if b}
    if not region:
        return []
    for diagonal in (False, True):
        chain = _chain(ends[0], ends[-1], region, diagonal)
        if chain:
            return chain
    return []


def _chain(a, c, region: set, diagonal: bool) -> list:
    """A shortest chain of squares from a to c through ``region`` (breadth first, neighbours
    in a fixed order, so the same every time)."""
    steps = [(1, 0), (-1, 0), (0, 1), (0, -1)]
    if diagonal:
        steps += [(1, 1), (1, -1), (-1, 1), (-1, -1)]
    back = {a: None}
    todo = [a]
    for s in todo:
        for dx, dy in steps:
            n = (s[0] + dx, s[1] + dy)
            if n in back or (n != c and n not in region):
                continue
            back[n] = s
            if n == c:
                out = [c]
                while back[out[-1]] is not None:
                    out.append(back[out[-1]])
                return out[::-1]
            todo.append(n)
    return []


def path_text(path: list) -> str:
    """A chain of squares on one line: ``(0, 1) -> (0, 0) -> (1, 0)``."""
    return " -> ".join("(" + ", ".join(str(x) for x in s) + ")" for s in path)


__all__ = ["draw", "layers", "move_marks", "move_path", "path_text", "square_type", "EnumT"]
