"""`rulebook play --games N`: the summary a designer reads (wins and score by seat, game
length) and `--compare READING` (the same seeds under each option of a reading)."""
from __future__ import annotations

import json
import random

import pytest

from solver.cli.main import main
from solver.engine.game import load_game
from solver.queries.playstats import Played, Player, game_rng, summary, winner_changed


def _play(capsys, *argv) -> dict:
    assert main(["play", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_summary_worked_by_hand():
    games = [Played(10, (3, 5, 1), (1,)),
             Played(20, (4, 4, 0), (0, 1)),     # a tie: a win for each
             Played(30, (5, 3, 2), ()),         # nobody won
             Played(40, (0, 0, 5), (2,))]
    sm = summary(games, 3)
    assert sm["games"] == 4
    assert sm["length"] == {"mean": 25.0, "sd": 11.18, "min": 10, "max": 40}   # sqrt(125)
    assert sm["wins"] == [1, 2, 1] and sm["win_rate"] == [0.25, 0.5, 0.25]
    assert sm["no_winner"] == 1
    assert sm["score_mean"] == [3.0, 3.0, 2.0]
    assert sm["score_sd"] == [1.87, 1.87, 1.87]     # sqrt(3.5) each
    other = [Played(10, None, (1,)), Played(20, None, (1, 0)), Played(1, None, (0,)),
             Played(40, None, (2,))]
    assert winner_changed(games, other) == 2        # (0, 1) != (1, 0): an order is an answer


def test_each_game_has_its_own_seed_and_the_first_is_the_seeds_own():
    g = load_game("les-5-tours")
    assert game_rng(7, 0).random() == random.Random(7).random()
    assert game_rng(7, 3).random() != game_rng(7, 2).random()
    pl = Player(g)
    alone = pl.play(7, 3)
    st, n = g.playout(random.Random("7/3"))
    assert alone == pl.outcome(st, n)


def test_the_games_of_a_run_are_the_games_of_their_seeds(capsys):
    got = _play(capsys, "les-5-tours", "--seed", "4", "--games", "3")
    pl = Player(load_game("les-5-tours"))
    assert got["games"] == [pl.play(4, k).as_json() for k in range(3)]
    assert got["summary"] == summary([pl.play(4, k) for k in range(3)], 2)
    one = _play(capsys, "les-5-tours", "--seed", "4")
    assert one["games"] == got["games"][:1]


def test_compare_plays_the_same_seeds_under_each_option(capsys):
    got = _play(capsys, "les-5-tours", "--seed", "2", "--games", "4", "--compare", "zero_bid")
    cmp = got["compare"]
    assert cmp["reading"] == "zero_bid" and cmp["base"] == "nothing"
    assert list(cmp["options"]) == ["pass"]
    # The option's games are those `--variant zero_bid:pass` plays on the same seed.
    alone = _play(capsys, "les-5-tours", "--seed", "2", "--games", "4",
                  "--variant", "zero_bid:pass")
    assert cmp["options"]["pass"]["games"] == alone["games"]
    assert cmp["options"]["pass"]["summary"] == alone["summary"]
    changed = sum(a["winners"] != b["winners"] for a, b in zip(got["games"], alone["games"]))
    assert cmp["options"]["pass"]["winner_changed"] == changed


def test_compare_in_text_names_each_option(capsys):
    assert main(["play", "les-5-tours", "--games", "3", "--compare", "zero_bid"]) == 0
    out = capsys.readouterr().out
    assert "reading zero_bid, the same 3 games (seeds) under each option" in out
    assert "\n  nothing (played above)  mean length" in out
    assert "winner changed in " in out and " of 3 (" in out
    assert "les-5-tours: 3 games of seed 0\n" in out and "least" in out


@pytest.mark.parametrize("argv,says", [
    (["--compare", "nope"], "--compare nope: les-5-tours has no such reading (readings: "
                            "market_choice, main_tower, demolition_order, zero_bid, "
                            "undo_bidding, build_order, rebid, first_pass, "
                            "zero_opener)"),
    (["--compare", "zero_bid", "--variant", "zero_bid:pass"],
     "--compare zero_bid plays every option of zero_bid: give it without --variant "
     "zero_bid:..."),
])
def test_a_bad_comparison_is_one_line(capsys, argv, says):
    assert main(["play", "les-5-tours", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1


def test_the_trace_under_json_is_in_the_document(capsys):
    """`--trace --json`: the first game's moves are the document's "trace" (stderr stays
    empty, for a one-line error there); the same moves as the text trace."""
    assert main(["play", "torres", "--seed", "3", "--games", "2", "--trace", "--json"]) == 0
    got = capsys.readouterr()
    out = json.loads(got.out)
    assert got.err == "" and len(out["trace"]) == out["games"][0]["moves"] > 50
    assert main(["play", "torres", "--seed", "3", "--trace"]) == 0
    text = [line.split(None, 1)[1] for line in capsys.readouterr().out.splitlines()
            if line[:5].strip().isdigit()]
    assert [json.loads(m) for m in text] == out["trace"]


def test_torres_advanced_on_a_small_board_has_no_dead_end(capsys):
    """Found by the fuzzing: on a 4 x 4 board the eight spaced starting blocks of the advanced
    rules may not fit, and game 3 of seed 13 had no legal move after six.  The placing now
    ends when no square is left at the distance (example founding_ends_when_no_room)."""
    out = _play(capsys, "torres-advanced", "--seed", "13", "--games", "3", "--param", "w=4",
                "--param", "h=4", "--players", "2")
    assert len(out["games"]) == 3 and all(gm["moves"] > 100 for gm in out["games"])
