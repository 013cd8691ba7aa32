"""Tests of solver.render.render: the text and SVG renderings of concrete states."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.lang import ir
from solver.lang.errors import Span
from solver.engine.game import load_game
from solver.render.render import HIGHLIGHT, render_svg, render_text
from solver.lang.types import (BagT, BoolT, EnumT, IntT, MapT, RecordT, SeqT, SetT, TextT, default,
                          finite)

NS = "{http://www.w3.org/2000/svg}"
SAND = 4          # ordinal of Style.sand (candy, scary, tree, scrap, sand)
CANDY = 0


@pytest.fixture(scope="module")
def game():
    return load_game("les-5-tours")


def _card(game, style: int, value: int) -> int:
    card_t = game.p.state[game.field_index["market"]].type.elem
    return finite(card_t).index[(style, value)]


@pytest.fixture(scope="module")
def state(game):
    """The initial state with towers, market, phase and bids changed."""
    st_ = list(game.initial())
    fi = game.field_index
    empty5 = ((),) * 5
    p0 = tuple((11, 7, 6) if s == SAND else () for s in range(5))
    p1 = tuple((3,) if s == CANDY else () for s in range(5))
    assert st_[fi["towers"]] == (empty5, empty5)
    st_[fi["towers"]] = (p0, p1)
    market = [0] * 80
    market[_card(game, CANDY, 3)] = 2
    market[_card(game, SAND, 15)] = 1
    market[_card(game, 1, 0)] = 1
    st_[fi["market"]] = tuple(market)
    st_[fi["phase"]] = 1                     # the second Phase member
    st_[fi["bids"]] = ((2, 0), (3, 1))
    return tuple(st_)


def _lines(text: str) -> list[str]:
    return text.split("\n")


# ---- text ------------------------------------------------------------------------------------

def test_text_values(game, state):
    text = render_text(game, state)
    assert "sand" in text and "[11, 7, 6]" in text
    lines = _lines(text)
    # towers is a map of maps: nested lines, key by key, default entries left out
    i = lines.index("towers:")
    assert lines[i + 1:i + 7] == ["  0:", "    sand: [11, 7, 6]",
                                  "    (4 others at their defaults)",
                                  "  1:", "    candy: [3]", "    (4 others at their defaults)"]
    assert "phase: bidding" in lines
    assert "bids: [(2, 0), (3, 1)]" in lines
    # a bag groups repeated elements, in ordinal order
    assert "market: {(candy, 3)×2, (scary, 0), (sand, 15)}" in lines
    # an int-keyed map of scalars (`cap`, internal: drawn only when asked for by name)
    assert "cap:" not in lines
    lines = _lines(render_text(game, state, highlight={"cap"}))
    j = lines.index("* cap:")
    assert lines[j + 1:j + 3] == ["  0: 6", "  1: 6"]


def test_text_defaults_omitted(game, state):
    text = render_text(game, state)
    lines = _lines(text)
    heads = {re.match(r"\*? ?(\w+):", ln).group(1) for ln in lines if re.match(r"\*? ?\w+:", ln)}
    # `cap` is not at its default either, but `internal`: bookkeeping, not drawn
    assert heads == {"deck", "market", "towers", "phase", "bids"}
    assert lines[-1] == "(all other fields at their defaults)"
    for name in ("demolished", "saved_towers", "reshuffled", "discard", "hand"):
        assert not any(ln.startswith(name) for ln in lines)

    full = _lines(render_text(game, state, skip_defaults=False))
    for f in game.p.state:
        # every field but the internal ones (bookkeeping, never drawn)
        assert any(ln.startswith(f.name + ":") for ln in full) != f.internal, f.name
    assert "(all other fields at their defaults)" not in full
    assert "demolished: false" in full and "saved_market" not in "\n".join(full)
    # without skipping, every key of a map is listed, the empty seqs too
    i = full.index("towers:")
    assert full[i + 1:i + 4] == ["  0:", "    candy: []", "    scary: []"]

    # the initial state only differs from the defaults in deck and cap (internal: not drawn)
    init = _lines(render_text(game, game.initial()))
    assert [ln for ln in init if not ln.startswith(" ")] == [
        init[0], "(all other fields at their defaults)"]
    assert init[0].startswith("deck: {(candy, 0), (candy, 1)")


def test_text_highlight(game, state):
    lines = _lines(render_text(game, state, highlight={"towers", "built"}))
    assert "* towers:" in lines and "towers:" not in lines
    assert "phase: bidding" in lines and "* phase: bidding" not in lines
    # a highlighted field is shown even at its default
    assert "* built: false" in lines
    assert sum(ln.startswith("*") for ln in lines) == 2
    with pytest.raises(ValueError, match="nope"):
        render_text(game, state, highlight={"nope"})


# ---- SVG -------------------------------------------------------------------------------------

def _walk(el, dx=0.0, dy=0.0):
    """Yield (element, absolute x offset, absolute y offset) through translate() groups."""
    m = re.fullmatch(r"translate\((-?\d+),(-?\d+)\)", el.get("transform", "")) \
        if el.get("transform") else None
    if m:
        dx, dy = dx + int(m.group(1)), dy + int(m.group(2))
    yield el, dx, dy
    for c in el:
        yield from _walk(c, dx, dy)


def _field(root, name):
    found = [g for g in root.iter(NS + "g") if g.get("data-field") == name]
    assert len(found) == 1, name
    return found[0]


def _texts(el) -> list[str]:
    return [t.text for t in el.iter(NS + "text")]


def _bottom(el) -> float:
    """The lowest y an element reaches (a text: its baseline plus a descender)."""
    if el.tag == NS + "rect":
        return float(el.get("y", 0)) + float(el.get("height"))
    if el.tag == NS + "line":
        return max(float(el.get("y1")), float(el.get("y2")))
    if el.tag == NS + "text":
        return float(el.get("y")) + 4
    return 0.0


def _check_geometry(root):
    """Every rect and line lies inside the viewBox, every text above its bottom; fields don't
    overlap."""
    w, h = int(root.get("width")), int(root.get("height"))
    assert root.get("viewBox") == f"0 0 {w} {h}"
    for el, dx, dy in _walk(root):
        if el.tag == NS + "rect":
            x, y = dx + float(el.get("x", 0)), dy + float(el.get("y", 0))
            assert 0 <= x and x + float(el.get("width")) <= w
            assert 0 <= y and y + float(el.get("height")) <= h
        elif el.tag == NS + "line":
            for a, b in (("x1", "y1"), ("x2", "y2")):
                assert 0 <= dx + float(el.get(a)) <= w and 0 <= dy + float(el.get(b)) <= h
        elif el.tag == NS + "text":
            assert dy + _bottom(el) <= h
    # the fields do not overlap: each one's boxes end above where the next one starts
    tops, bottoms = [], []
    for g, _, gy in _walk(root):
        if g.get("class") == "field":
            tops.append(gy)
            bottoms.append(max([gy] + [dy + _bottom(el) for el, _, dy in _walk(g)]))
    assert all(b <= t for b, t in zip(bottoms, tops[1:])), (bottoms, tops)


def test_svg_structure(game, state):
    svg = render_svg(game, state, title="Les <5> & tours", note="first line\nsecond line")
    root = ET.fromstring(svg)
    assert root.tag == NS + "svg"
    _check_geometry(root)
    fields = [g.get("data-field") for g in root.iter(NS + "g") if g.get("class") == "field"]
    assert fields == ["deck", "market", "towers", "phase", "bids"]     # not the internal cap
    # one box per tower card, one per bid
    towers = _field(root, "towers")
    assert len([r for r in towers.iter(NS + "rect") if r.get("class") == "cell"]) == 4
    assert len([r for r in root.iter(NS + "rect") if r.get("class") == "cell"]) == 6
    # one chip per distinct card in the market, one per card in the full deck
    market = _field(root, "market")
    assert len([r for r in market.iter(NS + "rect") if r.get("class") == "chip"]) == 3
    deck = _field(root, "deck")
    assert len([r for r in deck.iter(NS + "rect") if r.get("class") == "chip"]) == 80
    texts = _texts(root)
    for s in ("towers[0][sand]", "towers[1][candy]", "towers[0][candy]", "towers", "towers[0]",
              "phase = bidding", "(candy, 3)×2", "(2, 0)", "11",
              "Les <5> & tours", "first line", "second line", "market (4)",
              "(9 other fields at their defaults)"):       # the internal ones not counted
        assert s in texts, s
    assert "Les &lt;5&gt; &amp; tours" in svg


def test_svg_stack_bottom_first(game, state):
    root = ET.fromstring(render_svg(game, state))
    towers = _field(root, "towers")
    ys = {}
    for el, dx, dy in _walk(towers):
        if el.tag == NS + "text" and el.text in ("11", "7", "6", "towers[0][sand]", "3"):
            ys[el.text] = dy + float(el.get("y"))
    # first element at the bottom, the label under the stack
    assert ys["towers[0][sand]"] > ys["11"] > ys["7"] > ys["6"]
    # the towers of one player stand on a common baseline
    bases = {}
    for el, dx, dy in _walk(towers):
        if el.tag == NS + "line" and el.get("class") == "base":
            bases.setdefault(dy + float(el.get("y1")), []).append(dx)
    assert sorted(len(v) for v in bases.values()) == [5, 5]


def test_svg_highlight(game, state):
    plain = render_svg(game, state)
    assert HIGHLIGHT not in plain
    svg = render_svg(game, state, highlight={"towers", "demolished"})
    root = ET.fromstring(svg)
    _check_geometry(root)
    cells = [r for r in _field(root, "towers").iter(NS + "rect") if r.get("class") == "cell"]
    assert cells and all(r.get("stroke") == HIGHLIGHT for r in cells)
    bids = [r for r in _field(root, "bids").iter(NS + "rect") if r.get("class") == "cell"]
    assert bids and all(r.get("stroke") != HIGHLIGHT for r in bids)
    # a highlighted default field is still drawn, and the legend lists both
    assert "demolished = false" in _texts(_field(root, "demolished"))
    legend = [t.text for t in root.iter(NS + "text") if t.get("class") == "legend"]
    assert legend == ["highlighted: towers, demolished"]
    with pytest.raises(ValueError):
        render_svg(game, state, highlight={"nope"})


def test_svg_deterministic_and_defaults(game, state):
    a = render_svg(game, state, highlight={"towers"}, title="t")
    b = render_svg(game, tuple(state), highlight={"towers"}, title="t")
    assert a == b
    assert render_text(game, state) == render_text(game, state)
    init = ET.fromstring(render_svg(game, game.initial()))
    fields = [g.get("data-field") for g in init.iter(NS + "g") if g.get("class") == "field"]
    assert fields == ["deck"]           # `cap` starts at no limit, but is internal
    empty = ET.fromstring(render_svg(game, game.default_state()))
    assert not [g for g in empty.iter(NS + "g") if g.get("class") == "field"]
    # the 5 internal fields are neither drawn nor counted
    assert [t.text for t in empty.iter(NS + "text")] == ["(14 other fields at their defaults)"]


# ---- every type, on a synthetic state --------------------------------------------------------

E = EnumT("E", ("a", "b", "c"))
R = RecordT("R", (("x", E), ("y", IntT(0, 3))))
TYPES = {
    "flag": BoolT(),
    "num": IntT(-3, 3),
    "low": IntT(2, 5),
    "e": E,
    "rec": R,
    "stack": SeqT(IntT(0, 9), 4),
    "recs": SeqT(R, 3),
    "nested_seq": SeqT(SeqT(BoolT(), 2), 2),
    "bag": BagT(E, 3),
    "rbag": BagT(R, 2),
    "set": SetT(IntT(0, 4)),
    "eset": SetT(E),
    "by_e": MapT(E, SeqT(IntT(0, 9), 3)),
    "by_bool": MapT(BoolT(), IntT(0, 3)),
    "deep": MapT(IntT(0, 2), MapT(E, BagT(E, 2))),
    "wide": MapT(IntT(0, 20), SeqT(E, 2)),
    "sets": MapT(E, SetT(BoolT())),
    "none": MapT(IntT(0, -1), BoolT()),
    "by_rec": MapT(R, BoolT()),
    "mixed": RecordT("N", (("s", SeqT(E, 2)), ("m", MapT(BoolT(), E)), ("b", BagT(BoolT(), 2)))),
    "text": TextT(),
}
FAKE = SimpleNamespace(p=SimpleNamespace(state=tuple(
    ir.StateFieldDecl(n, t, None, Span("x", 1, 1)) for n, t in TYPES.items())))


def values(t):
    match t:
        case BoolT():
            return st.booleans()
        case IntT(lo, hi):
            return st.integers(lo, hi)
        case EnumT(members=m):
            return st.integers(0, len(m) - 1)
        case RecordT(fields=fields):
            return st.tuples(*(values(ft) for _, ft in fields))
        case SeqT(elem=e, cap=c):
            return st.lists(values(e), max_size=c).map(tuple)
        case BagT(elem=e, most=m):
            return st.tuples(*[st.integers(0, m)] * finite(e).size)
        case SetT(elem=e):
            return st.tuples(*[st.booleans()] * finite(e).size)
        case MapT(key=k, val=v):
            return st.tuples(*[values(v)] * finite(k).size)
        case TextT():
            return st.text(max_size=8)
    raise TypeError(t)


def test_every_type_defaults():
    d = tuple(default(t) for t in TYPES.values())
    assert render_text(FAKE, d) == "(all other fields at their defaults)"
    full = _lines(render_text(FAKE, d, skip_defaults=False))
    assert "none: {}" in full and "stack: []" in full and "bag: {}" in full
    assert "set: {}" in full and "rec: (a, 0)" in full and "low: 2" in full
    i = full.index("by_bool:")
    assert full[i + 1:i + 3] == ["  false: 0", "  true: 0"]
    # highlighting everything draws every type at its default: empty collections included
    root = ET.fromstring(render_svg(FAKE, d, highlight=set(TYPES)))
    _check_geometry(root)
    fields = [g.get("data-field") for g in root.iter(NS + "g") if g.get("class") == "field"]
    assert fields == list(TYPES)
    assert not [r for r in root.iter(NS + "rect") if r.get("class") in ("cell", "chip")]


def test_every_type_example():
    v = dict((n, default(t)) for n, t in TYPES.items())
    v["bag"] = (0, 3, 1)
    v["eset"] = (True, False, True)
    v["wide"] = tuple(((2, 0) if i == 17 else ()) for i in range(21))
    v["by_rec"] = tuple(i == finite(R).index[(1, 2)] for i in range(finite(R).size))
    v["mixed"] = ((2,), (0, 1), (1, 2))
    v["text"] = "a<b"
    s = tuple(v.values())
    lines = _lines(render_text(FAKE, s))
    assert "bag: {b×3, c}" in lines and "eset: {a, c}" in lines
    assert "text: a<b" in lines and "mixed: ([c], {false: a, true: b}, {false, true×2})" in lines
    i = lines.index("wide:")
    assert lines[i + 1:i + 3] == ["  17: [c, a]", "  (20 others at their defaults)"]
    i = lines.index("by_rec:")
    assert lines[i + 1] == "  (b, 2): true"
    root = ET.fromstring(render_svg(FAKE, s))
    _check_geometry(root)
    texts = _texts(root)
    assert "wide[17]" in texts and "(20 more at their defaults)" in texts
    assert "text = a<b" in texts
    chips = [r for r in _field(root, "bag").iter(NS + "rect") if r.get("class") == "chip"]
    assert len(chips) == 2
    wide_cells = [r for r in _field(root, "wide").iter(NS + "rect") if r.get("class") == "cell"]
    assert len(wide_cells) == 2


@settings(max_examples=150, deadline=None)
@given(st.tuples(*(values(t) for t in TYPES.values())), st.sets(st.sampled_from(list(TYPES))),
       st.text(max_size=12))
def test_every_type_random(s, hl, title):
    text = render_text(FAKE, s, highlight=hl)
    assert render_text(FAKE, s, highlight=hl) == text
    lines = _lines(text)
    shown = {n for n, t in TYPES.items() if s[list(TYPES).index(n)] != default(t) or n in hl}
    for n in TYPES:
        starts = any(ln.startswith(("* " if n in hl else "") + n + ":") for ln in lines)
        assert starts == (n in shown), n
    full = render_text(FAKE, s, skip_defaults=False)
    assert all(any(ln.startswith(n + ":") or ln.startswith("* " + n + ":") for ln in
                   _lines(full)) for n in TYPES)
    svg = render_svg(FAKE, s, highlight=hl, title=title, note=title)
    assert render_svg(FAKE, s, highlight=hl, title=title, note=title) == svg
    root = ET.fromstring(svg)
    _check_geometry(root)
    fields = [g.get("data-field") for g in root.iter(NS + "g") if g.get("class") == "field"]
    assert fields == [n for n in TYPES if n in shown]
    assert (HIGHLIGHT in svg) == bool(hl)
    # one box per element of the stackable seq
    if "stack" in shown:
        cells = [r for r in _field(root, "stack").iter(NS + "rect") if r.get("class") == "cell"]
        assert len(cells) == len(s[list(TYPES).index("stack")])
