"""A plain brute force for Towers' `placements` puzzle, for `make bench` (issue 65) to compare the
engine with.  It imports nothing of the engine: it reads spec/towers.rules (default parameters
and readings: reach 2, 34 levels; `floating = forbidden`, `touch = face`, `first_layer = whole`,
`collapse = placed`) and does what the spec says, one candidate at a time:

  - the block's distinct orientations: the 24 rotations of `turned` (`spun` then `tipped`),
    each moved so that its lowest corner is at (0, 0, 0), duplicates dropped;
  - every anchor cell of the building space; the placement is legal when the block stays in
    the space (`fits`), lands on free cells (`free`), lies wholly on the 3x3 base if it
    touches the first layer (`first_ok`), rests on the base or face to face on a cube
    (`touches`), and the tower has a free slot (`room`);
  - it is kept when the tower with it stands (`stands`): ONE linear program per candidate,
    solved by HiGHS through scipy.optimize.linprog, whose unknowns are the non-negative
    forces at the four bearing corners under every cube that rests on the base or on a cube
    of another block, and whose equations are each block's three equilibrium conditions
    (force, moment about x, moment about y, in doubled coordinates) as `stands` writes them.

The answer is the set of placements, each the frozenset of its cells, and their number.
"""
from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

REACH, LEVELS, SLOTS = 2, 34, 12
LO, HI = -REACH, 2 + REACH

# The spec's `cells(s)`: the cubes of each block as offsets from its first cube.
# (tests/bench/test_brute.py checks this table against the compiled spec.)
CELLS = {
    "cube": [(0, 0, 0)],
    "domino": [(0, 0, 0), (1, 0, 0)],
    "tri_line": [(0, 0, 0), (1, 0, 0), (2, 0, 0)],
    "tri_corner": [(0, 0, 0), (1, 0, 0), (0, 1, 0)],
    "tet_line": [(0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0)],
    "tet_square": [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)],
    "tet_l": [(0, 0, 0), (1, 0, 0), (2, 0, 0), (0, 1, 0)],
    "tet_t": [(0, 0, 0), (1, 0, 0), (2, 0, 0), (1, 1, 0)],
    "tet_s": [(0, 0, 0), (1, 0, 0), (1, 1, 0), (2, 1, 0)],
    "tet_tripod": [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)],
    "pen_l": [(0, 0, 0), (1, 0, 0), (2, 0, 0), (3, 0, 0), (0, 1, 0)],
    "pen_plus": [(1, 0, 0), (0, 1, 0), (1, 1, 0), (2, 1, 0), (1, 2, 0)],
    "pen_p": [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0), (0, 2, 0)],
    "pen_stair": [(0, 0, 0), (1, 0, 0), (1, 0, 1), (2, 0, 1), (2, 0, 2)],
    "hex_rect": [(0, 0, 0), (1, 0, 0), (2, 0, 0), (0, 1, 0), (1, 1, 0), (2, 1, 0)],
    "hex_chair": [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0), (0, 0, 1), (0, 1, 1)],
}


def _spun(o, k):
    x, y, z = o
    return [(x, y, z), (-y, x, z), (-x, -y, z), (y, -x, z)][k]


def _tipped(o, f):
    x, y, z = o
    return [(x, y, z), (x, -y, -z), (z, y, -x), (-z, y, x), (x, z, -y), (x, -z, y)][f]


def orientations(shape: str) -> list[tuple]:
    """The distinct orientations of a block: tuples of cells, lowest corner at the origin, in
    the order of the spec's rotation numbers (r = 0..23), each once."""
    out, seen = [], set()
    for r in range(24):
        cs = [_tipped(_spun(o, r % 4), r // 4) for o in CELLS[shape]]
        m = tuple(min(c[a] for c in cs) for a in range(3))
        cs = tuple((c[0] - m[0], c[1] - m[1], c[2] - m[2]) for c in cs)
        if frozenset(cs) not in seen:
            seen.add(frozenset(cs))
            out.append(cs)
    return out


def in_base(c) -> bool:
    return 0 <= c[0] <= 2 and 0 <= c[1] <= 2


def stands(blocks: list[list[tuple]]) -> bool:
    """The spec's `stands`: one feasibility LP over the whole tower (``blocks``: each block's
    cells, in slot order)."""
    occ = {c: (b, i) for b, cells in enumerate(blocks) for i, c in enumerate(cells)}

    def rests(b, c):
        if c[2] == 0:
            return True
        below = occ.get((c[0], c[1], c[2] - 1))
        return below is not None and below[0] != b

    var = {}                            # (block, cube, corner) -> column
    for b, cells in enumerate(blocks):
        for i, c in enumerate(cells):
            if rests(b, c):
                for q in range(4):
                    var[(b, i, q)] = len(var)
    if not var:
        return not blocks

    def arm(m, c, q):
        return 1 if m == 0 else 2 * (c[0] + q % 2) if m == 1 else 2 * (c[1] + q // 2)

    rows, rhs = [], []
    for b, cells in enumerate(blocks):
        for m in range(3):
            row = np.zeros(len(var))
            for i, c in enumerate(cells):
                if (b, i, 0) in var:
                    for q in range(4):
                        row[var[(b, i, q)]] += arm(m, c, q)
                up = occ.get((c[0], c[1], c[2] + 1))
                if up is not None and up[0] != b:
                    for q in range(4):
                        row[var[(up[0], up[1], q)]] -= arm(m, c, q)
            rows.append(row)
            rhs.append(len(cells) if m == 0 else sum(2 * c[m - 1] + 1 for c in cells))
    res = linprog(np.zeros(len(var)), A_eq=np.array(rows), b_eq=np.array(rhs),
                  bounds=(0, None), method="highs")
    return res.status == 0


def placements(blocks: list[list[tuple]], shape: str) -> set[frozenset]:
    """Every legal placement of a block of ``shape`` on the tower ``blocks`` (each a list of
    (x, y, z) cells) that leaves it standing, each distinct orientation once."""
    blocks = [[tuple(c) for c in b] for b in blocks]
    occ = {c for b in blocks for c in b}
    out = set()
    if len(blocks) >= SLOTS:
        return out
    for cells in orientations(shape):
        span = tuple(max(c[a] for c in cells) for a in range(3))
        for ax in range(LO, HI + 1):
            for ay in range(LO, HI + 1):
                for az in range(LEVELS):
                    if ax + span[0] > HI or ay + span[1] > HI or az + span[2] > LEVELS - 1:
                        continue                                            # fits
                    put = [(ax + x, ay + y, az + z) for x, y, z in cells]
                    if any(c in occ for c in put):
                        continue                                            # free
                    if az == 0 and not all(in_base(c) for c in put):
                        continue                                            # first_ok
                    if az != 0 and not any((c[0], c[1], c[2] - 1) in occ for c in put):
                        continue                                            # touches
                    if stands(blocks + [put]):
                        out.add(frozenset(put))
    return out


def engine_answer(answer: dict) -> set[frozenset]:
    """The engine's `placements` answer as the same set of cell sets."""
    return {frozenset(tuple(c) for c in run[0][2]) for run in answer["placements"]}
