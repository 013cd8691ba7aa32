"""The rulebook's worked examples: every example of les-5-tours is confirmed, with the value
the rules compute equal to the book's; a spec with a wrong expectation is reported
contradicted, with both values."""
from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, GAME, run_cli
from solver.queries.examples import run_example, run_examples
from solver.engine.game import load_game, load_path

BOOK_EXAMPLES = ["scoring", "lou_bids", "lou_builds", "lou_undoes", "building_rules"]
# The silent points named as readings, each worked under its default and its other option.
READING_EXAMPLES = ["first_passes", "first_must_bid", "first_passes_after_undo", "zero_stands",
                    "zero_stands_same", "passed_speaks_again", "passed_stays_out",
                    "undo_waits_for_the_demolition", "bad_order_undone", "bad_order_refused",
                    "refused_undoes_at_once", "rebid_lower", "rebid_buildable",
                    "lou_rebids_buildable"]


@pytest.fixture(scope="module")
def results():
    return {r.name: r for r in run_examples(GAME)}


@pytest.fixture(scope="module")
def wrong():
    game = load_path(FIXTURES / "wrong_example.rules")
    return game, {e.name: e for e in game.p.examples}


def test_the_book_examples_are_all_there(results):
    assert list(results) == BOOK_EXAMPLES + READING_EXAMPLES


@pytest.mark.parametrize("name", BOOK_EXAMPLES + READING_EXAMPLES)
def test_book_example_is_confirmed(results, name):
    r = results[name]
    assert r.outcomes, "an example with nothing checked"
    for o in r.outcomes:
        assert o.ok, o.as_json()
        assert o.computed == o.book, o.as_json()
    assert r.confirmed
    assert r.as_json()["verdict"] == "confirmed"


def test_scoring_example_parts(results):
    """The book's parts of the score: 4, 6, 12, 6 and -3, adding up to 25."""
    computed = {o.text: o.computed for o in results["scoring"].outcomes}
    assert computed["expect tower_points(towers[0][candy]) == 4;"] == 4
    assert computed["expect tower_points(towers[0][tree]) == 6;"] == 6
    assert computed["expect tower_points(towers[0][sand]) == 12;"] == 12
    assert computed["expect main_bonus(0) == 6;"] == 6
    assert computed["expect penalty(2) == 3;"] == 3
    assert computed["expect score(0) == 25;"] == 4 + 6 + 12 + 6 - 3


def test_examples_with_params_run_with_them():
    """lou_bids says `with players = 4`: Lou is player 2 and Lina player 3."""
    game4 = load_game(GAME, (), (("players", 4),))
    ex = next(e for e in game4.p.examples if e.name == "lou_bids")
    assert dict(ex.params) == {"players": 4}
    assert run_example(game4, ex).confirmed
    # At two players there is no player 2: the same script cannot be confirmed.
    game2 = load_game(GAME)
    ex2 = next(e for e in game2.p.examples if e.name == "lou_bids")
    assert not run_example(game2, ex2).confirmed


def test_wrong_total_is_contradicted_with_both_values(wrong):
    game, exs = wrong
    r = run_example(game, exs["wrong_total"])
    assert not r.confirmed
    by_text = {o.text: o for o in r.outcomes}
    ok = by_text["expect main_bonus(0) == 6;"]
    assert ok.ok and ok.computed == ok.book == 6
    bad = by_text["expect score(0) == 26;"]
    assert not bad.ok
    assert bad.computed == 25
    assert bad.book == 26
    assert r.as_json()["verdict"] == "contradicted"
    assert {"expect": "expect score(0) == 26;", "verdict": "contradicted", "computed": 25,
            "book": 26, "note": ""} in r.as_json()["checks"]


def test_wrong_legality_is_contradicted(wrong):
    game, exs = wrong
    [o] = run_example(game, exs["nine_on_a_top"]).outcomes
    assert not o.ok
    assert o.book == "legal"
    assert o.computed == "illegal (no_card_on_top)"


def test_wrong_rule_is_contradicted(wrong):
    game, exs = wrong
    [o] = run_example(game, exs["wrong_rule"]).outcomes
    assert not o.ok
    assert o.computed == "illegal (decreasing)"
    assert o.book == "illegal (no_card_on_top)"


def test_extension_keeps_the_base_examples(wrong):
    _, exs = wrong
    assert set(BOOK_EXAMPLES) <= set(exs)


def test_cli_examples_exit_status():
    r = run_cli("examples", GAME, "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert [d["example"] for d in data] == BOOK_EXAMPLES + READING_EXAMPLES
    assert all(d["verdict"] == "confirmed" for d in data)


def test_cli_check_of_a_rules_file_runs_its_examples():
    """`check FILE.rules` is documented as parse, type-check, then run the worked examples:
    exit 0 when the spec is well formed, a contradicted example reported as a finding about
    the book (`examples` is the command that exits 1 on one)."""
    r = run_cli("check", "tests/fixtures/wrong_example.rules")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "wrong_total" in r.stdout and "a finding about the book" in r.stdout
    r = run_cli("examples", "tests/fixtures/wrong_example.rules")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "wrong_total: CONTRADICTED" in r.stdout


def test_cli_check_of_a_correct_rules_file():
    r = run_cli("check", "spec/les-5-tours.rules")
    assert r.returncode == 0, r.stderr
