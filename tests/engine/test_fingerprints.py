"""Seeded playouts play the same games from one commit to the next: for each spec, a few
seeded random games, each game's number of moves and final state hashed together, against
tests/golden/playout_fingerprints.json.  The engine's speed work (the lazy uniform draw,
the first checks decided in one pass, generated code) must keep every random call and pick
of the reference draw; a change there that alters any game fails here.

After a deliberate change of the rules (a spec edit that changes what a random game does),
write the file anew and commit it with the edit:

    .venv/bin/python tests/engine/test_fingerprints.py --write
"""
from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from solver.engine.game import load_game  # noqa: E402

GOLDEN = HERE.parent / "golden" / "playout_fingerprints.json"
# (spec, players, games): every spec, the board games with several players of one colour.
CASES = [("les-5-tours", 4, 20), ("les-5-tours", 2, 10), ("tours-de-pouvoir", 2, 10),
         ("torres", 4, 10), ("torres", 2, 10), ("torres-own-pile", 2, 5),
         ("torres-advanced", 3, 5), ("towers", 2, 10), ("towers", 3, 4),
         ("clock-towers", 2, 10)]


def fingerprint(spec: str, players: int, games: int) -> dict:
    """The moves of ``games`` seeded playouts in all, and a digest of each game's number of
    moves and final state, in order."""
    g = load_game(spec, (), (("players", players),))
    h = hashlib.sha256()
    moves = 0
    for s in range(games):
        st, n = g.playout(random.Random(f"fingerprint/{spec}/{players}/{s}"))
        moves += n
        h.update(repr((n, st)).encode())
    return {"spec": spec, "players": players, "games": games, "moves": moves,
            "digest": h.hexdigest()}


@pytest.mark.parametrize("spec,players,games", CASES)
def test_seeded_playouts_play_the_stored_games(spec, players, games):
    stored = {(c["spec"], c["players"]): c
              for c in json.loads(GOLDEN.read_text(encoding="utf-8"))}
    assert fingerprint(spec, players, games) == stored[(spec, players)]


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: test_fingerprints.py --write   (writes " + str(GOLDEN) + ")")
    GOLDEN.write_text(json.dumps([fingerprint(*c) for c in CASES], indent=1) + "\n",
                      encoding="utf-8")
    print(f"wrote {GOLDEN}")
