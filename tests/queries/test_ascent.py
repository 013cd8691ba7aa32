"""Ambiguities searched from the smallest sizes the spec declares upward (`queries.ascent`), on
the row of tests/fixtures/ladder.rules (a `hop` over an occupied cell needs three cells) and on
Torres' declarations (which of its parameters are sizes)."""
from __future__ import annotations

import pytest

from solver.engine.game import load_game
from solver.queries.ascent import Climb, Ladder, ambiguities
from conftest import FIXTURES


@pytest.fixture(autouse=True)
def fixtures_as_specs(monkeypatch):
    monkeypatch.setenv("RULEBOOK_SPECS", str(FIXTURES))


def test_the_sizes_come_from_the_declarations():
    """`players` and `w` set a table's extent; `bonus` (0..2 = 1) sets none and keeps its
    value; the first rung is every size at its lowest declared value."""
    lad = Ladder.of(load_game("ladder"))
    assert lad.sizes == ["players", "w"]
    assert lad.at(0) == {"players": 1, "w": 1, "bonus": 1}
    # Each rung raises one size by one, the one adding the fewest leaves, toward the game's own.
    rungs = []
    k = 0
    while (p := lad.at(k)) is not None:
        rungs.append(p)
        k += 1
    assert rungs[-1] == {"players": 3, "w": 6, "bonus": 1}
    assert all(sum(abs(b[n] - a[n]) for n in a) == 1 for a, b in zip(rungs, rungs[1:]))


def test_a_pinned_parameter_is_not_climbed():
    lad = Ladder.of(load_game("ladder", (), (("w", 4),)), pinned={"w"})
    assert lad.sizes == ["players"] and lad.at(0)["w"] == 4


def test_torres_sizes_are_the_board_and_the_players_not_the_stacks():
    lad = Ladder.of(load_game("torres"))
    assert lad.sizes == ["players", "w", "h"]
    assert lad.at(0) == {"players": 2, "stack": 2, "w": 2, "h": 2}


def test_each_witness_is_found_on_the_first_rung_that_has_one_and_shown_on_the_game():
    where = Climb()
    seen = []
    for amb in ambiguities(load_game("ladder"), where=where):
        seen.append(amb)
        assert where.done == len(seen)          # yielded as soon as found, one pair at a time
    hop = next(a for a in seen if a.reading == "hop")
    assert hop.found and hop.minimal and hop.move == ["hop", 0, 2]
    assert hop.searched_on["w"] == 3 and hop.params == {"players": 3, "w": 6, "bonus": 1}
    # Every rung below had no witness (a hop needs three cells), and says so.
    assert hop.tried and all(t["w"] < 3 for t in hop.tried)
    assert hop.under_a == "legal" and hop.under_b == "illegal (rule over)"
    assert len(hop.state_json["piece"]) == 6      # drawn on the game's own row


def test_pinned_too_small_a_row_has_no_witness_for_hop():
    g = load_game("ladder", (), (("w", 2),))
    [hop] = list(ambiguities(g, "hop", pinned={"w"}))
    assert hop.found is False and hop.params == {"players": 3, "w": 2, "bonus": 1}


def test_a_pairs_witness_does_not_depend_on_the_pairs_searched_before():
    """z3's model follows the order terms were first made in its context: searched after
    another pair in the same process, Les 5 Tours' demolition_order gave another witness
    each time (scary 13, sand 1, sand 12).  Each pair starts a fresh z3 (`fresh_z3`), so its
    witness is the same in one process and on any Dask worker."""
    g = load_game("les-5-tours")

    def after(*readings):
        for r in readings:
            [amb] = list(ambiguities(g, r))
        return amb.as_json()
    assert after("market_choice", "demolition_order") == after("zero_bid", "demolition_order") \
        == after("demolition_order")


def test_a_search_leaves_the_process_z3_context_and_games_as_they_were():
    """The fresh z3 is the search's alone: after it, the main context and the games loaded
    before are the ones in use (a game's terms never meet another context's)."""
    import z3
    g = load_game("ladder", (), (("w", 2),))
    ctx = z3.main_ctx()
    [hop] = list(ambiguities(g, "hop", pinned={"w"}))
    assert hop.found is False
    assert z3.main_ctx() is ctx and load_game("ladder", (), (("w", 2),)) is g
