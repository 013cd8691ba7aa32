"""A disagreement z3 finds in a state the interpreter cannot evaluate is no witness: the search
goes on to the states of the spec's examples, as when z3 gives up.

Les 5 Tours' undo_bidding changes what an undo does to `spoken`.  The smallest state where the
two options disagree, to z3, is an undo with no bid on the stack, whose pop the interpreter
refuses ("pop of an empty seq"); `rulebook ambiguities les-5-tours --reading undo_bidding`
stopped on that error.  The witness is then the example passed_speaks_again."""
from __future__ import annotations

import pytest

from conftest import GAME
from solver.lang.errors import RulebookError
from solver.engine.game import load_game
from solver.queries.readings import find_ambiguities, from_examples, outcome
from solver.engine.game import Move


def test_unevaluable_model_falls_back_to_the_examples():
    [amb] = find_ambiguities(load_game(GAME, (), (("players", 2),)), "undo_bidding", 60_000)
    assert amb.found is True
    assert amb.move == ["undo"]
    assert amb.params == {"players": 3}          # the example's three architects
    assert amb.fields == ["spoken"]
    # Replayed in the interpreter: the undo is legal under both options, and leaves the
    # bidding at a different count of architects who have spoken.
    ga = load_game(GAME, ("undo_bidding:reopen",), (("players", 3),))
    gb = load_game(GAME, ("undo_bidding:resume",), (("players", 3),))
    ra, rb = outcome(ga, amb.state, Move("undo", ())), outcome(gb, amb.state, Move("undo", ()))
    assert ra[0] == rb[0] == "legal"
    spoken = ga.field_index["spoken"]
    assert (ra[1][spoken], rb[1][spoken]) == (1, 2)


def test_an_example_where_only_the_winner_differs_is_a_witness():
    """Clock Towers' tie-break reading `highest` changes who wins, never a score: the example
    tie_break_rank (equal scores, the mice at ranks 2 and 3, both at level 3) is a witness,
    met on the winner.  The examples' states were once searched for a score difference only."""
    g = load_game("clock-towers")
    r = next(r for r in g.p.readings if r.name == "highest")
    amb = from_examples(g, (), "highest", r.doc.text, "position", "level")
    assert amb is not None and amb.found is True and amb.move is None
    assert (amb.what, amb.under_a, amb.under_b) == ("winner", "player 0 wins: false",
                                                    "player 0 wins: true")


def test_a_witness_the_big_board_refuses_under_both_readings_stays_where_it_was_found():
    """Torres' king_block changes whether the card that moves a block may take the block under
    the king.  Found on 3 x 2 squares (the example king_block_fixed), the move is refused on
    the 8 x 8 board under both readings, by other rules (at least six castles must remain
    there): the witness is kept on the small board with a note, not shown on 8 x 8 as a
    disagreement of two refusals."""
    from solver.queries.embed import present
    small = {"players": 2, "stack": 2, "w": 3, "h": 2}
    g = load_game("torres", (), tuple(sorted(small.items())))
    r = next(r for r in g.p.readings if r.name == "king_block")
    amb = from_examples(g, (), "king_block", r.doc.text, "fixed", "movable", True)
    assert amb is not None and amb.move[0] == "play_relocate_block"
    assert (amb.under_a, amb.under_b) == ("illegal (rule uncovered)", "legal")
    shown = present("torres", amb, small, {**small, "w": 8, "h": 8})
    assert shown.params == small and shown.searched_on == small
    assert "rule six_castles" in shown.note and shown.under_b == "legal"


def test_an_example_witness_is_carried_over_from_its_own_parameters():
    """torres-advanced searches on 3 x 3 squares; the king_tie example is written for 3 x 2.
    Presented on 8 x 8, the witness is read under the example's parameters, not the search's
    (it once failed: 'witness state.occupant: 2 rows, expected 3')."""
    from solver.queries.embed import present
    small = {"players": 2, "stack": 2, "w": 3, "h": 3}
    g = load_game("torres", ("torres-advanced",), tuple(sorted(small.items())))
    r = next(r for r in g.p.readings if r.name == "king_tie")
    amb = from_examples(g, g.extensions, "king_tie", r.doc.text, "highest", "later")
    assert amb is not None and amb.params["h"] == 2
    shown = present("torres-advanced", amb, small, {**small, "w": 8, "h": 8})
    assert shown.found and shown.move == ["end_turn"]
    assert (shown.params["w"], shown.params["h"]) == (8, 8)
    assert shown.searched_on["h"] == 2



def test_a_witness_that_needs_the_small_board_s_edges_stays_where_it_was_found():
    """torres-advanced's spacing: on an empty 3 x 3 board a starting block on the centre
    square leaves room for the next one only under `apart` (the corners are a diagonal step
    away), so the placing goes on under one reading and ends under the other.  On 8 x 8 both
    leave room: the move's outcome is the same.  Presenting the witness there raises 'the
    witness no longer disagrees' (`rulebook ambiguities` then tries nearer parameters); in
    `docs/refresh.py` that once lost a whole refresh: there the witness is kept on 3 x 3, and
    says why."""
    from solver.lang.codec import from_json
    from solver.queries.embed import carry_state, present
    small = {"players": 2, "stack": 2, "w": 3, "h": 3}
    big = {**small, "w": 8, "h": 8}
    g = load_game("torres", ("torres-advanced",), tuple(sorted(small.items())))
    [amb] = find_ambiguities(g, "spacing", 60_000)
    assert amb.found and amb.move[0] == "found"
    outcomes = {}
    for where, params in (("small", small), ("big", big)):
        for opt in ("apart", "gaps"):
            go = load_game("torres", ("torres-advanced", f"spacing:{opt}"),
                           tuple(sorted(params.items())))
            st = carry_state(g, go, amb.state)
            sq = from_json(go.action("found").ir.params[0].domain.elem, amb.move[1], "move")
            res = outcome(go, st, Move("found", (sq,)))
            outcomes[where, opt] = (res[0], res[1] if res[0] == "illegal"
                                    else res[1][go.field_index["founding"]])
    assert outcomes["small", "apart"] != outcomes["small", "gaps"]
    assert outcomes["big", "apart"] == outcomes["big", "gaps"]
    with pytest.raises(RulebookError, match="no longer disagrees"):
        present("torres-advanced", amb, small, big)      # `rulebook ambiguities` tries nearer
    shown = present("torres-advanced", amb, small, big, keep=True)     # docs/refresh.py
    assert shown.params == small and shown.searched_on == small
    assert "both readings give the same outcome (legal)" in shown.note
    assert shown.move == amb.move and (shown.under_a, shown.under_b) == (amb.under_a, amb.under_b)
