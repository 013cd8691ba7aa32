"""Pictures of a state: no `internal` field, rows as the JSON lists them (row 0 on top), and
the squares an answer names framed."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from solver.engine.game import load_path
from solver.render.render import render_svg, render_text

SPEC = """game "pics";
record Sq { x: 0..2, y: 0..1 }
state {
  doc "The blocks on each square."
  height: map[Sq, 0..3];
  doc "What the rules count, not the position."
  internal moves_made: 0..9;
  internal seen: map[Sq, bool];
  score: 0..9;
}
init { height[Sq(2, 0)] = 3; moves_made = 7; seen[Sq(0, 0)] = true; score = 4; }
action grow(s in Sq) { requires low "at most 3": height[s] < 3; height[s] += 1; }
"""


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    path = tmp_path_factory.mktemp("pics") / "pics.rules"
    path.write_text(SPEC)
    return load_path(path)


def test_the_checker_reads_the_marker(game):
    assert [(f.name, f.internal) for f in game.p.state] == [
        ("height", False), ("moves_made", True), ("seen", True), ("score", False)]


def test_internal_fields_are_not_drawn(game):
    st = game.initial()
    text = render_text(game, st)
    assert "score: 4" in text and "height:" in text
    assert "moves_made" not in text and "seen" not in text
    svg = render_svg(game, st)
    assert 'data-field="score"' in svg
    assert "moves_made" not in svg and "seen" not in svg
    # ... unless a caller asks for one by name (a witness whose readings differ there).
    assert "moves_made" in render_text(game, st, highlight={"moves_made"})


def _rows(svg: str) -> dict[int, float]:
    """The top edge of each row of squares, by its y."""
    root = ET.fromstring(svg)
    out = {}
    for el in root.iter("{http://www.w3.org/2000/svg}rect"):
        if el.get("class") == "square":
            out[int(el.get("data-y"))] = float(el.get("y"))
    return out


def test_row_zero_is_drawn_on_top_as_json_lists_it(game):
    rows = _rows(render_svg(game, game.initial()))
    assert rows[0] < rows[1]
    # the square (2, 0), 3 blocks high, is in the top row, the last column
    svg = render_svg(game, game.initial())
    m = re.search(r'data-x="2" data-y="0" x="(\d+)" y="(\d+)"', svg)
    assert m and float(m.group(2)) == rows[0]


def test_the_squares_of_an_answer_are_framed(game):
    svg = render_svg(game, game.initial(), spots=[(0, 1), (1, 0)])
    spots = re.findall(r'class="spot" data-x="(\d)" data-y="(\d)"', svg)
    assert sorted(spots) == [("0", "1"), ("1", "0")]
    assert 'class="path"' not in svg          # no arrow between them: they are not a move
