"""A move through a castle is drawn along its path (`show ... via r`), not as a jump: the
spec names the squares a move passes, the picture chains them from the move's first square to
its last, in the SVG arrow and in a witness's text."""
from __future__ import annotations

import json
import re

import pytest

from solver.engine.game import load_game, load_path
from solver.lang.errors import RulebookError
from solver.lang.resources import REPO
from solver.lang.types import finite
from solver.queries.readings import Ambiguity
from solver.render.board import CELL, move_path
from solver.render.render import render_svg
from solver.render.witness import witness_svg, witness_text
from solver.web.explore import read_state

PAD = 18


def _centre(sq) -> str:
    return f"{PAD + sq[0] * CELL + CELL // 2},{sq[1] * CELL + CELL // 2}"


def _arrow(svg: str) -> list[str]:
    m = re.search(r'<polyline class="path" points="([^"]*)"', svg)
    assert m, "no arrow drawn"
    return m.group(1).split()


@pytest.fixture(scope="module")
def torres():
    return load_game("torres", params=(("w", 5), ("h", 3), ("players", 2)))


def _board(game, height: dict, occupant: dict):
    """A hand-made position: heights and pieces by (x, y), a knight of player 0 to move."""
    w, h = 5, 3
    return read_state(game, {
        "height": [[x, y] for (x, y), n in height.items() for _ in range(n)],
        "occupant": [[occupant.get((x, y)) for x in range(w)] for y in range(h)],
        "stage": "playing", "ap": 5, "turn": 0})


def test_a_move_through_a_castle_follows_the_castle(torres):
    # A castle two high: the column x = 2 and (3, 0).  The knight at (1, 2) on the ground goes
    # in by the door (2, 2), walks under (2, 1) and comes out onto (3, 1).
    st = _board(torres, {(2, 0): 2, (2, 1): 2, (2, 2): 2, (3, 0): 2}, {(1, 2): 0})
    move = ["move", [1, 2], [3, 1]]
    assert torres.legal(st) and any(m.to_json(torres) == move for m, _, _ in torres.legal(st))
    path = move_path(torres, move, st)
    # In at (2,2) beside the knight, out of (2,1) onto (3,1): every square between is a column.
    assert path[0] == (1, 2) and path[-1] == (3, 1) and len(path) == 4
    assert all(x == 2 for x, _ in path[1:-1])
    for a, b in zip(path, path[1:]):
        assert abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1
    svg = render_svg(torres, st, marks=[(1, 2), (3, 1)], path=path)
    assert _arrow(svg) == [_centre(s) for s in path]
    # Without the path, the same marks are drawn as a jump (the old picture).
    assert _arrow(render_svg(torres, st, marks=[(1, 2), (3, 1)])) == \
        [_centre((1, 2)), _centre((3, 1))]


def test_the_path_goes_around_a_column_under_a_piece_under_around(torres):
    # A 3 x 3 castle; the king in its middle bars the straight way under `around` only.
    cols = {(x, y): 2 for x in (1, 2, 3) for y in (0, 1, 2)}
    pieces = {(0, 1): 0, (2, 1): "king"}
    move = ["move", [0, 1], [4, 1]]
    path = move_path(torres, move, _board(torres, cols, pieces))
    assert len(path) == 7 and (2, 1) not in path and path[0] == (0, 1) and path[-1] == (4, 1)
    free = load_game("torres", ("gate:free",), (("w", 5), ("h", 3), ("players", 2)))
    assert move_path(free, move, _board(free, cols, pieces)) == \
        [(0, 1), (1, 1), (2, 1), (3, 1), (4, 1)]


def test_a_step_or_a_refused_move_has_no_longer_path(torres):
    st = _board(torres, {(2, 1): 1}, {(1, 1): 0})
    assert move_path(torres, ["move", [1, 1], [1, 2]], st) == [(1, 1), (1, 2)]
    # Refused (no castle in the way): nothing to draw but the jump.
    assert move_path(torres, ["move", [1, 1], [4, 2]], st) == []
    # An action that names no region.
    assert move_path(torres, ["place", [0, 0]], st) == []


def test_the_stored_gate_witnesses_are_drawn_through_the_castle():
    stored = json.loads((REPO / "docs" / "witnesses" / "torres.json").read_text())
    gates = [w for w in stored["ambiguities"] if w["reading"] == "gate" and w.get("move")]
    assert len(gates) == 3
    for w in gates:
        g = load_game("torres", (f"gate:{w['a']}",), tuple(w["params"].items()))
        st = read_state(g, w["state"])
        amb = Ambiguity(w["reading"], w["question"], w["a"], w["b"], True, w["move"],
                        w["disagree_on"], w["under_a"], w["under_b"], w["size"], True,
                        state=st, game=g, marked=True)
        path = move_path(g, w["move"], st)
        assert len(path) > 2, w
        hv = st[g.field_index["height"]]
        idx = finite(g.p.state[g.field_index["height"]].type.elem).index
        assert all(hv[idx[s]] > 0 for s in path[1:-1]), (w, path)
        text = witness_text(amb)
        assert "path: " + " -> ".join(f"({x}, {y})" for x, y in path) in text
        svg = witness_svg(amb)
        assert _arrow(svg) == [_centre(s) for s in path]


RULES = """game "viaerr";
record Sq { x: 0..2, y: 0..0 }
state { at: Sq; }
action go(s in Sq) {
  show "go", s via 3;
  at = s;
}
"""


def test_via_takes_a_region(tmp_path):
    p = tmp_path / "viaerr.rules"
    p.write_text(RULES)
    with pytest.raises(RulebookError) as e:
        load_path(p)
    assert ":5:20:" in str(e.value) and "`via` takes the squares" in str(e.value)


def test_a_via_changes_no_stored_result(tmp_path):
    from solver.lang.digest import rules_digest
    text = RULES.replace("via 3", "via table t in Sq: t == s")
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "viaerr.rules").write_text(text)
    (b / "viaerr.rules").write_text(RULES.replace(" via 3", ""))
    ga, gb = load_path(a / "viaerr.rules"), load_path(b / "viaerr.rules")
    assert rules_digest(ga) == rules_digest(gb)
    assert move_path(ga, ["go", [2, 0]], ga.initial()) == []   # a chain needs two squares


def test_a_solution_picture_marks_its_last_move_from_the_state_before_it():
    from solver.queries.puzzles import last_move, prepare, solution_state, solve
    golden = json.loads((REPO / "tests" / "golden" / "torres" / "best_turn_small.json")
                        .read_text())
    prep = prepare(golden["input"])
    q = prep.puzzle.queries[0]
    answer = solve(golden["input"])
    after, marks, n = solution_state(prep, q, answer)
    before, m = last_move(prep, q, answer)
    assert n == len(answer["actions"]) and not marks
    assert m.to_json(prep.game) == answer["actions"][-1]
    assert prep.game.apply(before, m)[0] == after


def test_a_witness_legal_only_under_b_is_drawn_along_b_s_path():
    stored = json.loads((REPO / "docs" / "witnesses" / "torres.json").read_text())
    w = next(x for x in stored["ambiguities"] if x["reading"] == "gate" and x["b"] == "blocked"
             and x["a"] == "around")
    # The same witness with the readings the other way round: refused under a.
    g = load_game("torres", ("gate:blocked",), tuple(sorted(w["params"].items())))
    st = read_state(g, w["state"])
    amb = Ambiguity("gate", "", "blocked", "around", True, w["move"], w["disagree_on"],
                    w["under_b"], w["under_a"], w["size"], True, state=st, game=g, marked=True)
    assert move_path(g, w["move"], st) == []
    assert "path: (" in witness_text(amb)
