"""Torres puzzles on crowded boards (issue 64, point 1): several knights of a player, the king,
crowded castles.  `destinations` answers the squares THE knight on `piece` reaches, checked
against the interpreter's own list of that knight's legal moves on generated boards (both
backends); the crowded golden boards (tests/golden/torres/*crowded*) hold on the expansions,
which inherit the puzzles."""
from __future__ import annotations

import random

import pytest

from conftest import golden
from solver.engine.evaluate import Refused
from solver.engine.game import Move
from solver.queries.puzzleprep import prepare, query_start
from solver.queries.puzzles import solve

CROWDED = {name: (inp, exp) for name, inp, exp in golden("torres") if "crowded" in name}
SIZE = 5


def _board(rng: random.Random) -> dict:
    """A crowded SIZE x SIZE board: heights 0-3, two to four knights of each of two players
    (often side by side), sometimes the king."""
    height = [[rng.choice((0, 0, 1, 2, 3)) for _ in range(SIZE)] for _ in range(SIZE)]
    occ = [[None] * SIZE for _ in range(SIZE)]
    squares = [(x, y) for y in range(SIZE) for x in range(SIZE)]
    rng.shuffle(squares)
    pieces = ["king"] * rng.randint(0, 1) + [0] * rng.randint(2, 4) + [1] * rng.randint(2, 4)
    for (x, y), who in zip(squares, pieces):
        occ[y][x] = who
    return {"w": SIZE, "h": SIZE, "height": height, "occupant": occ}


def _legal_destinations(inp: dict) -> list:
    """The destinations of the legal `move`s of the knight on `piece`: every instance of the
    action applied on the puzzle's start state by the interpreter (no query, no pin)."""
    prep = prepare(inp)
    st, _ = query_start(prep, prep.puzzle.queries[0])
    move = prep.game.action("move")
    out = []
    for params in move.instances(st):
        try:
            move.apply(st, params)
        except Refused:
            continue
        _, a, c = Move("move", params).to_json(prep.game)
        if a == inp["piece"]:
            out.append(c)
    return sorted(out)


def _cases(n: int, seed: int):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        board = _board(rng)
        knights = [[x, y] for y in range(SIZE) for x in range(SIZE)
                   if board["occupant"][y][x] in (0, 1)]
        piece = rng.choice(knights)
        reading = ("free", "around", "blocked")[len(out) % 3]
        out.append({"game": "torres", "w": SIZE, "h": SIZE, "board": board,
                    "ask": "destinations", "piece": piece, "variants": [f"gate:{reading}"]})
    return out


@pytest.mark.parametrize("backend", ["search", "z3"])
def test_destinations_are_the_legal_moves_of_that_knight(backend):
    """On generated crowded boards, the answer is exactly where the interpreter lets that one
    knight move: never a square a piece stands on (the old query answered the squares of the
    player's other knights), never a move of another knight."""
    seen_other_knights = 0
    for inp in _cases(9, seed=64):
        want = _legal_destinations(inp)
        got = solve(inp, backend=backend)["destinations"]
        assert got == want, inp
        occ = inp["board"]["occupant"]
        assert all(occ[y][x] is None for x, y in got)
        colour = occ[inp["piece"][1]][inp["piece"][0]]
        seen_other_knights += sum(row.count(colour) for row in occ) > 1
    assert seen_other_knights == 9     # every board has another knight of the mover's colour


@pytest.mark.parametrize("game", ["torres-advanced", "torres-own-pile"])
def test_the_expansions_answer_the_crowded_boards_alike(game):
    """The expansions inherit the puzzles (their new actions are in no `using`): the same
    answers on the crowded golden boards under the default readings (each other reading is
    one more compilation; best-turn is left out: its search takes a while)."""
    names = sorted(n for n, (inp, _) in CROWDED.items()
                   if inp["ask"] != "best-turn" and not inp.get("variants"))
    assert len(names) >= 10
    for name in names:
        inp, exp = CROWDED[name]
        got = solve({**inp, "game": game})
        assert {k: got[k] for k in exp} == exp, name


def test_every_puzzle_has_a_crowded_golden_board():
    """Each Torres puzzle has golden boards where a player has several knights (the old
    destinations query could not be told apart from the right one on the other boards)."""
    asks = {inp["ask"] for inp, _ in CROWDED.values()}
    assert asks == {"destinations", "block-squares", "knight-squares", "round-score", "best-turn"}
    for name, (inp, _) in CROWDED.items():
        occ = [o for row in inp["board"]["occupant"] for o in row]
        assert max(occ.count(p) for p in (0, 1, 2, 3)) >= 2, name
        assert "king" in occ, name
