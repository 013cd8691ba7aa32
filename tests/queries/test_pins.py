"""`using action(value, _)` in a query: only the instances whose arguments equal the pinned
values are moves of the query (tests/fixtures/pins.rules, two tokens on a line).  Both backends,
the layered z3 unrolling, the listing of legal and refused moves, the replay of a solver's
moves, and the checker's errors."""
from __future__ import annotations

import pytest

import solver.queries.puzzleprep as PP
import solver.queries.puzzles as P
import solver.queries.puzzlez3 as PZ
from conftest import FIXTURES
from solver.lang.errors import Disagreement, SpecError
from solver.engine.game import Move, load_path
from solver.queries.puzzleprep import prepare, replay

PATH = FIXTURES / "pins.rules"


@pytest.fixture(autouse=True)
def _serve_fixture(monkeypatch):
    # A fixture game is not in spec/: serve it by name.
    monkeypatch.setattr(PP, "load_game",
                        lambda name, variants=(), params=(), digest=None: load_path(PATH))
    monkeypatch.setattr(PP, "find_spec", lambda name, near=None: PATH)


def _ask(backend="search", **inputs):
    return P.solve({"game": "pins-toy", **inputs}, backend=backend)


@pytest.mark.parametrize("backend", ["search", "z3"])
def test_pinned_hops_move_only_that_token(backend):
    # Token 0 (at 1) alone: two hops reach 0..3, the other token (at 4) stays in the way of 4.
    assert _ask(backend, puzzle="reach", token=0) == {"cells": [0, 1, 2, 3]}
    # Token 1 (at 4), three hops: 2..5 (1 is token 0's cell).
    assert _ask(backend, puzzle="reach", token=1, moves=3) == {"cells": [2, 3, 4, 5]}
    # Pinned, the other token never moves; unpinned, it does (so the pin is what stops it).
    assert _ask(backend, puzzle="other", token=0) == {"moved": False, "path": None}
    free = _ask(backend, puzzle="other_free", token=0)
    assert free["moved"] is True and ["hop", 1, 3] in free["path"]


def test_the_layered_unrolling_keeps_the_pins(monkeypatch):
    """Past the explicit-state budget, z3 unrolls symbolic steps: the pin is a constraint on
    the step's arguments there."""
    monkeypatch.setattr(PZ, "EXPLICIT_BUDGET", 0)
    assert _ask("z3", puzzle="other", token=1) == {"moved": False, "path": None}
    assert _ask("z3", puzzle="reach", token=0) == {"cells": [0, 1, 2, 3]}


@pytest.mark.parametrize("backend", ["search", "z3"])
def test_the_listing_shows_only_the_pinned_instances(backend):
    got = _ask(backend, puzzle="hops_of", token=1)
    assert got["legal_hops"] == [["hop", 1, 3], ["hop", 1, 5]]
    assert {tuple(r["move"][:2]) for r in got["refused"]} == {("hop", 1)}
    assert len(got["refused"]) == 4          # hops of token 1 to 0, 1, 2 and 4


@pytest.mark.parametrize("backend", ["search", "z3"])
def test_a_pin_may_name_the_choice(backend):
    """`using hop(_, to)` with `choose to`: the answer is the hop's own destination.  Token 0
    (at 1) lands on 0 or 2, token 1 (at 4) on 3 or 5; asked of the state alone, the cell of the
    token that did not hop (1 or 4) is answered too."""
    assert _ask(backend, puzzle="landings") == {"cells": [0, 2, 3, 5]}
    assert _ask(backend, puzzle="landings_by_state") == {"cells": [0, 1, 2, 3, 4, 5]}


def test_the_layered_unrolling_pins_the_choice(monkeypatch):
    monkeypatch.setattr(PZ, "EXPLICIT_BUDGET", 0)
    assert _ask("z3", puzzle="landings") == {"cells": [0, 2, 3, 5]}

def test_replay_refuses_a_move_the_pins_exclude():
    prep = prepare({"game": "pins-toy", "puzzle": "other", "token": 0})
    q = prep.puzzle.queries[0]
    with pytest.raises(Disagreement, match="using"):
        replay(prep, q, None, [Move("hop", (1, 3))])


@pytest.mark.parametrize("using,message", [
    ("using hop(token);", "hop takes 2 argument(s), given 1"),
    ("using hop(_, _);", "pins no argument"),
    ("using hop(token, true);", "expected 0..5, found bool"),
    ("using hope(token, _);", "unknown action 'hope'"),
])
def test_bad_pins_are_located_errors(tmp_path, using, message):
    text = PATH.read_text().replace("using hop(token, _);", using, 1)
    bad = tmp_path / "pins.rules"
    bad.write_text(text)
    with pytest.raises(SpecError) as e:
        load_path(bad)
    line = next(i for i, l in enumerate(text.splitlines(), 1) if using in l)
    assert f"pins.rules:{line}:" in str(e.value) and message in str(e.value)
