"""The brute forces that `make bench` compares the engine with (bench/brute_towers.py,
bench/brute_build.py), on small puzzles worked by hand, so that they cannot rot silently; and
the brute force's copy of the blocks against the compiled spec."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import brute_build  # noqa: E402
import brute_towers  # noqa: E402
from solver.engine.game import load_game  # noqa: E402
from solver.lang.codec import to_json  # noqa: E402

PLACEMENTS = sorted((ROOT / "tests" / "golden" / "towers").glob("placements_*.json"))


@pytest.mark.parametrize("path", PLACEMENTS, ids=[p.stem for p in PLACEMENTS])
def test_towers_brute_force_counts_the_golden_placements(path):
    # The golden files' counts are worked by hand (their "why").
    data = json.loads(path.read_text(encoding="utf-8"))
    inp = data["input"]
    got = brute_towers.placements([b["cells"] for b in inp["blocks"]], inp["shape"])
    assert len(got) == data["expected"]["count"]


def test_towers_brute_force_lists_the_placements_on_a_cube():
    got = brute_towers.placements([[(1, 1, 0)]], "cube")
    assert got == {frozenset({(x, y, 0)}) for x in range(3) for y in range(3)
                   if (x, y) != (1, 1)} | {frozenset({(1, 1, 1)})}


def test_towers_statics_by_hand():
    cube = [(1, 1, 0)]
    assert brute_towers.stands([cube])
    assert brute_towers.stands([cube, [(0, 1, 1), (1, 1, 1), (2, 1, 1)]])   # centred bar
    assert brute_towers.stands([cube, [(1, 1, 1), (2, 1, 1)]])              # centre on the edge
    assert not brute_towers.stands([cube, [(1, 1, 1), (2, 1, 1), (3, 1, 1)]])
    assert not brute_towers.stands([[(1, 1, 1)]])                           # in the air
    # A bar of four on one cube, its centre (x = 2 in cube units) above the cube's edge:
    # it stands.  A cube on its far end brings the centre of both to x = 2.3: it falls.  One
    # more on its near end brings it back to x = 2.
    cube4 = [(0, 1, 1), (1, 1, 1), (2, 1, 1), (3, 1, 1)]
    assert brute_towers.stands([cube, cube4])
    assert not brute_towers.stands([cube, cube4, [(3, 1, 2)]])
    assert brute_towers.stands([cube, cube4, [(0, 1, 2)]])
    assert brute_towers.stands([cube, cube4, [(3, 1, 2)], [(0, 1, 2)]])

def test_towers_orientations_by_hand():
    counts = {s: len(brute_towers.orientations(s)) for s in brute_towers.CELLS}
    assert counts["cube"] == 1 and counts["domino"] == 3 and counts["pen_plus"] == 3
    assert counts["tet_square"] == 3 and counts["hex_rect"] == 6 and counts["tet_tripod"] == 8


def test_towers_blocks_are_the_specs():
    g = load_game("towers")
    for shape, cells in brute_towers.CELLS.items():
        f, t = g.expr(f"cells({shape})")
        assert [tuple(c) for c in to_json(t, f(g.initial()))] == cells, shape
        f, _ = g.expr(f"count r in Rot: FIRST[{shape}][r]")
        assert f(g.initial()) == len(brute_towers.orientations(shape)), shape


def test_towers_bounds_are_the_specs():
    # The brute force's building space is the spec's, at its default parameters: with fewer
    # levels it refuses the placements of a tall tower that the engine lists.
    g = load_game("towers")
    values = g.p.param_values
    assert (brute_towers.REACH, brute_towers.LEVELS) == (values["reach"], values["levels"])


@pytest.mark.parametrize("puzzle, expected", [
    # Demolish the 3, build the 5: one card (1), the tallest (+1), one demolished (-1).
    # The market: demolish the 3, then the sand 4 and the tree 0.
    ({"towers": {"sand": [3]}, "hand": [["sand", 5]], "market": [["sand", 4], ["tree", 0]]},
     {"feasible": True, "best_score": 1, "max_take": 2}),
    # Demolishing the 2 leaves the 3, still lower than the 5: no build; nor of the 4.
    ({"towers": {"sand": [3, 2]}, "hand": [["sand", 5]], "market": [["sand", 4]]},
     {"feasible": False, "best_score": None, "max_take": 0}),
    # Nothing on a 0, and a 0 cannot be demolished.
    ({"towers": {"candy": [5, 0]}, "hand": [["candy", 9]], "market": [["candy", 9]]},
     {"feasible": False, "best_score": None, "max_take": 0}),
    # The 12 on the 8, then the 9 on the 12 (not the other way): 3 cards and the tallest, 6.
    ({"towers": {"tree": [8]}, "hand": [["tree", 9], ["tree", 12]], "market": [["tree", 9]]},
     {"feasible": True, "best_score": 6, "max_take": 1}),
    # A 9 goes on anything but a 0, even a lower card; then the 3 on the 9: 2 + 2.
    ({"towers": {"scary": [4]}, "hand": [["scary", 9]], "market": [["scary", 3], ["scary", 9]]},
     {"feasible": True, "best_score": 4, "max_take": 2}),
    # One card already demolished; the 0 tops the sand tower (2 points a card): 6 + 1 + 3 - 1
    # = 9, better than demolishing the 13 first (4 + 1 + 2 - 3 = 4).  The market: the 12 on
    # the 13, or, the 13 demolished, the 14 and then the 12 on the 15.
    ({"towers": {"sand": [15, 13]}, "demolished": [["scary", 7]],
      "hand": [["sand", 0], ["candy", 4]], "market": [["sand", 14], ["sand", 12]]},
     {"feasible": True, "best_score": 9, "max_take": 2}),
])
def test_build_brute_force_by_hand(puzzle, expected):
    assert brute_build.solve(puzzle) == expected
