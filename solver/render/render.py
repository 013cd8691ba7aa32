"""Readable renderings of a concrete state: plain text and a standalone SVG.

Generic: driven only by the state's field names and types (see ``types``), never by what a game
means by them.  Both renderings show the fields that differ from their type's default, plus any
highlighted field (so that a field a move just emptied is still shown).

Text: one line per field, ``name: value``; maps open nested indented lines ``key: value``.
SVG: a seq of scalars (or records) is a stack of boxes, first element at the bottom; a map of seqs
draws its seqs side by side on a common baseline; other maps stack their entries vertically under a
group label; bags and sets are rows of chips; everything else is a ``name = value`` line.
Output is deterministic: same input, byte-identical string.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from . import iso
from ..lang.codec import to_json
from ..lang.types import (BagT, BoolT, EnumT, IntT, MapT, RecordT, SeqT, SetT, TextT, Type, default,
                    finite)

HIGHLIGHT = "#d62728"
_INK = "#333333"
_DIM = "#888888"
_FILL = "#f2f2f2"
_HL_FILL = "#fbe3e3"
_SCALAR_LIKE = (BoolT, IntT, EnumT, TextT, RecordT)     # drawn on one line


# ---- values as one line ---------------------------------------------------------------------

def _leaf(t: Type, v) -> str:
    j = to_json(t, v)
    if isinstance(j, bool):
        return "true" if j else "false"
    return str(j)


def _inline(t: Type, v) -> str:
    """Format ``v`` (of type ``t``) on one line."""
    match t:
        case BoolT() | IntT() | EnumT() | TextT():
            return _leaf(t, v)
        case RecordT(fields=fields):
            return "(" + ", ".join(_inline(ft, x) for (_, ft), x in zip(fields, v)) + ")"
        case SeqT(elem=et):
            return "[" + ", ".join(_inline(et, x) for x in v) + "]"
        case BagT() | SetT():
            return "{" + ", ".join(_chip_texts(t, v)) + "}"
        case MapT(key=kt, val=vt):
            keys = finite(kt).values
            return "{" + ", ".join(f"{_inline(kt, k)}: {_inline(vt, x)}"
                                   for k, x in zip(keys, v)) + "}"
    raise TypeError(t)


def _chip_texts(t: BagT | SetT, v) -> list[str]:
    """The elements of a bag (``x`` or ``x×n``, by ordinal) or of a set."""
    vals = finite(t.elem).values
    if isinstance(t, SetT):
        return [_inline(t.elem, vals[i]) for i, b in enumerate(v) if b]
    return [_inline(t.elem, vals[i]) + (f"×{n}" if n > 1 else "")
            for i, n in enumerate(v) if n > 0]


def _fields(game, state, highlight):
    decls = game.p.state
    if len(state) != len(decls):
        raise ValueError(f"a state of {len(decls)} fields expected, found {len(state)}")
    hl = set(highlight or ())
    unknown = hl - {f.name for f in decls}
    if unknown:
        raise ValueError(f"highlight names no state field: {', '.join(sorted(unknown))}")
    # A field the spec marks `internal` (bookkeeping, not the position) is not drawn.
    return [(f.name, f.type, v, f.name in hl) for f, v in zip(decls, state)
            if not f.internal or f.name in hl]


# ---- text ------------------------------------------------------------------------------------

def render_text(game, state, highlight: set[str] | None = None, skip_defaults: bool = True) -> str:
    """Render ``state`` as plain text, one line per field (maps: nested lines).

    Fields at their type's default are left out when ``skip_defaults`` (highlighted fields never
    are); entries of maps likewise.  Highlighted fields start with ``*``.
    """
    lines: list[str] = []
    omitted = 0
    for name, t, v, hl in _fields(game, state, highlight):
        if skip_defaults and not hl and v == default(t):
            omitted += 1
            continue
        mark = "* " if hl else ""
        if isinstance(t, MapT) and finite(t.key).size > 0:
            lines.append(f"{mark}{name}:")
            lines.extend(_map_lines(t, v, 1, skip_defaults))
        else:
            lines.append(f"{mark}{name}: {_inline(t, v)}")
    if omitted:
        lines.append("(all other fields at their defaults)")
    return "\n".join(lines)


def _map_lines(t: MapT, v, depth: int, skip_defaults: bool) -> list[str]:
    ind = "  " * depth
    kt, vt = t.key, t.val
    d = default(vt)
    out: list[str] = []
    skipped = 0
    for k, x in zip(finite(kt).values, v):
        if skip_defaults and x == d:
            skipped += 1
            continue
        key = _inline(kt, k)
        if isinstance(vt, MapT) and finite(vt.key).size > 0:
            out.append(f"{ind}{key}:")
            out.extend(_map_lines(vt, x, depth + 1, skip_defaults))
        else:
            out.append(f"{ind}{key}: {_inline(vt, x)}")
    if skipped:
        out.append(f"{ind}(all at their defaults)" if not out
                   else f"{ind}({skipped} others at their defaults)")
    return out


# ---- SVG -------------------------------------------------------------------------------------

_LINE_H = 16      # a text line
_CELL_H = 18      # a stack box or a chip
_GAP = 8
_INDENT = 12
_MARGIN = 10
_WRAP = 640       # chip rows wrap at this width
_FULL_MAP = 8     # maps with at most this many keys draw their default entries too


def _xml_char(c: str) -> bool:
    o = ord(c)
    return (o >= 0x20 or c in "\t\n\r") and not 0xD800 <= o <= 0xDFFF and o not in (0xFFFE, 0xFFFF)


def _esc(s: str) -> str:
    """Escape ``s`` for XML text or attributes (characters XML cannot hold become U+FFFD)."""
    if not all(map(_xml_char, s)):
        s = "".join(c if _xml_char(c) else "\ufffd" for c in s)
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def _tw(s: str, char_w2: int = 15) -> int:
    """Estimated width of ``s`` in monospace at 12px (``char_w2`` = twice a character's width)."""
    return (len(s) * char_w2 + 1) // 2


def _even(n: int) -> int:
    return n + (n & 1)


@dataclass
class _Pen:
    stroke: str
    fill: str
    text: str           # extra attributes of text elements
    marks: frozenset = frozenset()   # points drawn in the highlight colour (iso pictures)

    @staticmethod
    def of(hl: bool) -> "_Pen":
        if hl:
            return _Pen(HIGHLIGHT, _HL_FILL, f' fill="{HIGHLIGHT}"')
        return _Pen(_INK, _FILL, "")


@dataclass
class _Block:
    w: int
    h: int
    body: list[str] = field(default_factory=list)


def _place(b: _Block, x: int, y: int, attrs: str = "") -> str:
    inner = "".join(b.body)
    if x == 0 and y == 0 and not attrs:
        return inner
    tr = f' transform="translate({x},{y})"' if (x or y) else ""
    return f"<g{attrs}{tr}>{inner}</g>"


def _text(s: str, sty: _Pen, cls: str = "value", extra: str = "") -> _Block:
    return _Block(_tw(s), _LINE_H,
                  [f'<text class="{cls}" x="0" y="12"{sty.text}{extra}>{_esc(s)}</text>'])


def _column(blocks: list[_Block], gap: int = _GAP, indent: int = 0) -> _Block:
    out = _Block(0, 0)
    y = 0
    for i, b in enumerate(blocks):
        if i:
            y += gap
        out.body.append(_place(b, indent, y))
        y += b.h
        out.w = max(out.w, indent + b.w)
    out.h = y
    return out


def _row(blocks: list[_Block], gap: int = _GAP * 2) -> _Block:
    """Side by side, bottoms aligned (stacks share a baseline)."""
    h = max((b.h for b in blocks), default=0)
    out = _Block(0, h)
    x = 0
    for i, b in enumerate(blocks):
        if i:
            x += gap
        out.body.append(_place(b, x, h - b.h))
        x += b.w
    out.w = x
    return out


def _labelled(label: str, inner: _Block, sty: _Pen) -> _Block:
    head = _text(label, sty, "group", ' font-weight="bold"')
    return _Block(max(head.w, _INDENT + inner.w), head.h + 4 + inner.h,
                  head.body + [_place(inner, _INDENT, head.h + 4)])


def _stackable(t: Type) -> bool:
    return isinstance(t, _SCALAR_LIKE)


def _stack(t: SeqT, v, path: str, sty: _Pen) -> _Block:
    """Boxes, first element at the bottom, on a baseline, labelled under it with ``path``."""
    texts = [_inline(t.elem, x) for x in v]
    cw = _even(max(36, max((_tw(s) for s in texts), default=0) + 12))
    w = _even(max(cw + 8, _tw(path)))
    x0 = (w - cw) // 2
    n = len(texts)
    body = []
    for i, s in enumerate(texts):
        y = (n - 1 - i) * _CELL_H
        body.append(f'<rect class="cell" x="{x0}" y="{y}" width="{cw}" height="{_CELL_H}" '
                    f'fill="{sty.fill}" stroke="{sty.stroke}"/>')
        body.append(f'<text x="{x0 + cw // 2}" y="{y + 13}" text-anchor="middle"{sty.text}>'
                    f'{_esc(s)}</text>')
    base = n * _CELL_H
    body.append(f'<line class="base" x1="{x0 - 4}" y1="{base}" x2="{x0 + cw + 4}" y2="{base}" '
                f'stroke="{sty.stroke}" stroke-width="2"/>')
    body.append(f'<text class="label" x="{w // 2}" y="{base + 14}" text-anchor="middle"'
                f'{sty.text}>{_esc(path)}</text>')
    return _Block(w, base + 2 + _LINE_H, body)


def _chips(t: BagT | SetT, v, path: str, sty: _Pen) -> _Block:
    texts = _chip_texts(t, v)
    total = sum(v) if isinstance(t, BagT) else len(texts)
    if not texts:
        return _text(f"{path} = {{}}", sty)
    head = _text(f"{path} ({total})", sty, "group", ' font-weight="bold"')
    body = list(head.body)
    x, y = 0, head.h + 4
    w = head.w
    for s in texts:
        cw = _tw(s) + 10
        if x > 0 and x + cw > _WRAP:
            x, y = 0, y + _CELL_H + 4
        body.append(f'<rect class="chip" x="{_INDENT + x}" y="{y}" width="{cw}" '
                    f'height="{_CELL_H}" rx="4" fill="{sty.fill}" stroke="{sty.stroke}"/>')
        body.append(f'<text x="{_INDENT + x + 5}" y="{y + 13}"{sty.text}>{_esc(s)}</text>')
        x += cw + 4
        w = max(w, _INDENT + x - 4)
    return _Block(w, y + _CELL_H, body)


def _map(t: MapT, v, path: str, sty: _Pen) -> _Block:
    kt, vt = t.key, t.val
    keys = finite(kt).values
    if not keys or _stackable(vt):
        return _text(f"{path} = {_inline(t, v)}", sty)
    d = default(vt)
    full = len(keys) <= _FULL_MAP
    kids: list[_Block] = []
    skipped = 0
    for k, x in zip(keys, v):
        if not full and x == d:
            skipped += 1
            continue
        kids.append(_block(vt, x, f"{path}[{_inline(kt, k)}]", sty))
    if skipped:
        kids.append(_text(f"({skipped} {'more ' if kids else ''}at their defaults)", sty, "note",
                          f' fill="{_DIM}"' if not sty.text else ""))
    inner = _row(kids) if isinstance(vt, SeqT) else _column(kids)
    return _labelled(path, inner, sty)


def _iso(t: Type, v, path: str, sty: _Pen) -> _Block:
    w, h, body = iso.picture(t, v, sty.marks)
    return _labelled(path, _Block(w, h, body), sty)


def _block(t: Type, v, path: str, sty: _Pen) -> _Block:
    # Solids (records with a seq of x/y/z points) are drawn in space, one picture per key.
    if iso.is_groups(t):
        keys = finite(t.key).values
        return _labelled(path, _row([_iso(t.val, x, f"{path}[{_inline(t.key, k)}]", sty)
                                     for k, x in zip(keys, v)]), sty)
    if iso.is_group(t):
        return _iso(t, v, path, sty)
    match t:
        case SeqT(elem=et) if _stackable(et):
            return _stack(t, v, path, sty)
        case BagT() | SetT():
            return _chips(t, v, path, sty)
        case MapT():
            return _map(t, v, path, sty)
    return _text(f"{path} = {_inline(t, v)}", sty)


def render_svg(game, state, highlight: set[str] | None = None, title: str = "",
               note: str = "", marks=(), spots=(), path=()) -> str:
    """Render the non-default (and the highlighted) fields of ``state`` as a standalone SVG.

    ``marks``: the squares or cells of a move (framed, an arrow from the first to the last on
    a board); ``path``: the squares the move passes, in order (`board.move_path`), when the
    arrow must follow them rather than jump; ``spots``: squares an answer names (each framed
    on the board).

    Each field is a ``<g class="field" data-field="name">``; stack boxes are ``rect.cell``, bag
    and set elements ``rect.chip``.  Highlighted fields are drawn in ``HIGHLIGHT`` and listed in
    a legend; ``title`` goes on top, ``note`` (may hold several lines) at the bottom.
    """
    plain = _Pen.of(False)
    parts: list[str] = []
    y = _MARGIN
    width = 200
    if title:
        parts.append(f'<text class="title" x="{_MARGIN}" y="{y + 14}" font-size="15" '
                     f'font-weight="bold">{_esc(title)}</text>')
        width = max(width, _tw(title, 19) + 2 * _MARGIN)
        y += 20 + _GAP
    omitted = 0
    marked: list[str] = []
    on_board: set[str] = set()
    b = _board(game, state, highlight, marks, spots, path)
    if b is not None:
        board_block, on_board = b
        parts.append(_place(board_block, _MARGIN, y, ' class="board"'))
        y += board_block.h + _GAP * 2
        width = max(width, board_block.w + 2 * _MARGIN)
        marked += sorted(on_board & set(highlight or ()))
    for name, t, v, hl in _fields(game, state, highlight):
        if name in on_board:
            continue
        if not hl and v == default(t):
            omitted += 1
            continue
        pen = _Pen.of(hl)
        pen.marks = frozenset(marks)
        b = _block(t, v, name, pen)
        parts.append(_place(b, _MARGIN, y, f' class="field" data-field="{_esc(name)}"'))
        y += b.h + _GAP * 2
        width = max(width, b.w + 2 * _MARGIN)
        if hl:
            marked.append(name)
    tail: list[_Block] = []
    if omitted:
        tail.append(_text(f"({omitted} other fields at their defaults)", plain, "note",
                          f' fill="{_DIM}"'))
    if marked:
        s = "highlighted: " + ", ".join(marked)
        tail.append(_Block(18 + _tw(s), _LINE_H, [
            f'<rect class="legend" x="0" y="2" width="12" height="12" fill="{_HL_FILL}" '
            f'stroke="{HIGHLIGHT}"/>',
            f'<text class="legend" x="18" y="12" fill="{HIGHLIGHT}">{_esc(s)}</text>']))
    for line in note.splitlines() if note else ():
        tail.append(_text(line, plain, "note"))
    if tail:
        b = _column(tail, gap=2)
        parts.append(_place(b, _MARGIN, y))
        y += b.h + _GAP
        width = max(width, b.w + 2 * _MARGIN)
    height = y + _MARGIN - _GAP
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">'
            f'<rect class="bg" x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>'
            + "".join(parts) + "</svg>\n")


def _board(game, state, highlight, marks, spots=(), path=()):
    """The fields keyed by a square type, drawn as one board (see ``board``), or None."""
    from . import board
    key, lays = board.layers(game, state)
    if key is None:
        return None
    names = [n for n, _, _ in lays]
    hl = bool(set(names) & set(highlight or ()))
    sty = _Pen.of(hl)
    w, h, body = board.draw(key, lays, marks, hl, spots, path)
    head = _text("board: " + ", ".join(names), sty, "group", ' font-weight="bold"')
    inner = _Block(w, h, body)
    return _Block(max(head.w, w), head.h + 4 + h,
                  head.body + [_place(inner, 0, head.h + 4)]), set(names)
