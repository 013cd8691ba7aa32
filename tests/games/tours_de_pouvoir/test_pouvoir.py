"""Les 5 Tours with the Tours de pouvoir expansion: golden build puzzles for every power on both
backends (each answer replayed move by move in the interpreter, each optimum re-derived by a
plain enumeration), malformed puzzles, the expansion's worked examples against the book, and
the language constructs the expansion is written with (extend before, extend on procs, extend
puzzle, `with reading = option`)."""
from __future__ import annotations

import json

import pytest

from conftest import GAME, golden, run_cli
from solver.lang.codec import from_json
from solver.lang.errors import InputError
from solver.queries.examples import run_examples
from solver.engine.game import Move, load_game
from solver.queries.puzzles import solve

EXT = "tours-de-pouvoir"
GOLDEN = {name: (inp, exp) for name, inp, exp in golden("pouvoir")}
ANSWER_KEYS = {"feasible", "steps", "best_score", "max_take"}
# Step kinds as shown by the spec's `show` statements, and the action each one is.
STEP_ACTIONS = {"top": "build", "bottom": "build_bottom", "rebuild": "rebuild",
                "rebuild-bottom": "rebuild_bottom", "pay": "pay", "demolish": "demolish"}


def _game_for(puzzle: dict):
    return load_game(GAME, tuple(puzzle.get("variants", [])),
                     (("players", puzzle.get("players", 2)),))


def _start(game, puzzle: dict):
    """The build query's start, set here from the state fields (not by solver.queries.puzzles): building
    phase, player 0's towers and pile, the hand, an empty deck, and what the bid leaves owed."""
    fi = game.field_index
    ftype = {f.name: f.type for f in game.p.state}
    st = list(game.initial())
    st[fi["phase"]] = ftype["phase"].members.index("building")
    towers = list(st[fi["towers"]])
    towers[0] = from_json(ftype["towers"].val, puzzle.get("towers", {}), "towers")
    st[fi["towers"]] = tuple(towers)
    piles = list(st[fi["pile"]])
    piles[0] = from_json(ftype["pile"].val, puzzle.get("demolished", []), "demolished")
    st[fi["pile"]] = tuple(piles)
    st[fi["hand"]] = from_json(ftype["hand"], puzzle.get("hand", []), "hand")
    st[fi["deck"]] = from_json(ftype["deck"], [], "deck")
    st[fi["owed"]] = max(0, puzzle.get("bid", 0) - len(puzzle.get("hand", [])))
    return tuple(st)


def _move_of_step(game, step: list) -> Move:
    kind, style, value = step
    action = STEP_ACTIONS[kind]
    if action == "demolish":
        return Move("demolish", (from_json(game.p.types["Style"], style, "step"),))
    if action == "pay":
        return Move("pay", ())
    return Move(action, (from_json(game.p.types["Card"], [style, value], "step"),))


def _replay(puzzle: dict, steps: list):
    game = _game_for(puzzle)
    st = _start(game, puzzle)
    for step in steps:
        st, shows = game.apply(st, _move_of_step(game, step))
        assert shows[0] == step, (shows, step)
    return game, st, game.expr("score(0)")[0](st)


def _assert_witness(puzzle: dict, answer: dict) -> None:
    game, st, score = _replay(puzzle, answer["steps"])
    fi = game.field_index
    assert sum(st[fi["hand"]]) == 0, "the steps do not build the whole hand"
    assert st[fi["owed"]] == 0, "the steps do not pay what the bid owes"
    assert score == answer["best_score"]


def _all_scores(game, st0, owed: int) -> list:
    """score(0) of every run of the puzzle's moves that empties the hand and pays what is owed
    (plain depth-first enumeration in the interpreter, independent of solver.queries.puzzles)."""
    fi = game.field_index
    score = game.expr("score(0)")[0]
    acts = set(STEP_ACTIONS.values())
    out = []

    def dfs(st, d):
        if sum(st[fi["hand"]]) == 0 and st[fi["owed"]] == 0:
            out.append(score(st))
        if d:
            for _, st2, _ in game.legal(st, acts):
                dfs(st2, d - 1)
    dfs(st0, sum(st0[fi["hand"]]) + 2 + sum(st0[fi["pile"]][0]) + owed)
    return out


def test_golden_files_cover_every_power():
    assert len(GOLDEN) >= 8
    kinds = set()
    for name, (inp, exp) in GOLDEN.items():
        assert set(exp) == ANSWER_KEYS, name
        assert inp["game"] == GAME and EXT in inp["variants"], name
        kinds |= {s[0] for s in exp["steps"] or []}
    assert {"bottom", "rebuild", "rebuild-bottom", "pay", "top", "demolish"} <= kinds
    assert any(exp["feasible"] is False for _, exp in GOLDEN.values())
    assert any("bid" in inp for inp, _ in GOLDEN.values())
    assert any(exp["max_take"] is not None for _, exp in GOLDEN.values())
    # A pairs puzzle whose best score counts the candy/scary bonus.
    assert "pairs_candy_scary" in GOLDEN and "pairs_doubled_values" in GOLDEN


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_answer_holds_in_the_interpreter(name):
    puzzle, expected = GOLDEN[name]
    if expected["steps"] is not None:
        _assert_witness(puzzle, expected)
    game = _game_for(puzzle)
    owed = max(0, puzzle.get("bid", 0) - len(puzzle.get("hand", [])))
    scores = _all_scores(game, _start(game, puzzle), owed)
    if expected["feasible"]:
        assert max(scores) == expected["best_score"]
    else:
        assert scores == []


@pytest.mark.parametrize("backend", ["search", "z3"])
@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_backend_matches_golden(name, backend):
    puzzle, expected = GOLDEN[name]
    got = solve(puzzle, backend=backend, timeout_ms=60_000)
    assert set(got) == ANSWER_KEYS
    for k in ("feasible", "best_score", "max_take"):
        assert got[k] == expected[k], k
    if expected["steps"] is None:
        assert got["steps"] is None
    else:
        # Several optimal step lists may exist: the answer's must replay to the same score.
        _assert_witness(puzzle, got)


def test_pairs_count_cards_by_default():
    """« chaque paire de cartes »: two 5s in each tower are two pairs under the default, as under
    pair_count:cards; pair_count:values counts the 5 once."""
    cards, exp_cards = GOLDEN["pairs_doubled_values"]
    values, exp_values = GOLDEN["pairs_doubled_values_by_value"]
    default = {**cards, "variants": [EXT]}
    assert solve(default)["best_score"] == exp_cards["best_score"] == 18
    assert exp_values["best_score"] == 15


@pytest.mark.parametrize("backend", ["search", "z3"])
def test_first_sand_card_goes_on_top_on_both_backends(backend):
    """An empty sand tower has no bottom card to slide a card under: both backends place its
    first card on top (the z3 backend used to answer ["bottom", "sand", 6] here)."""
    puzzle, _ = GOLDEN["sand_first_on_top"]
    got = solve(puzzle, backend=backend, timeout_ms=60_000)
    assert [s for s in got["steps"] if s[1] == "sand"] == [["top", "sand", 6]]


def test_bottom_move_needs_a_bottom_card():
    g = load_game(GAME, (EXT,))
    puzzle, _ = GOLDEN["sand_first_on_top"]
    st = _start(g, puzzle)
    sand6 = from_json(g.p.types["Card"], ["sand", 6], "card")
    assert _why(g, st, Move("build_bottom", (sand6,))) == "under_a_card"
    assert _why(g, st, Move("build", (sand6,))) == "legal"


def test_the_expansion_changes_the_answers():
    """Without the expansion the same puzzles have the base game's answers."""
    for name in ("scrap_book_rebuild", "sand_book_bottom", "pairs_candy_scary"):
        puzzle, expected = GOLDEN[name]
        base = {k: v for k, v in puzzle.items() if k != "variants"}
        got = solve(base)
        assert got["best_score"] != expected["best_score"], name
    # The bid is an input of the expansion's puzzle only.
    with pytest.raises(InputError) as e:
        solve({k: v for k, v in GOLDEN["tree_pay"][0].items() if k != "variants"})
    assert "bid" in e.value.headline()


BASE = {"game": GAME, "variants": [EXT], "players": 2}
BAD = {
    "bid_below_hand": ({"hand": [["candy", 3], ["sand", 4]], "bid": 1}, ["bid", "at least"]),
    "pays_with_tree_in_hand": ({"towers": {"tree": [9, 5]}, "hand": [["tree", 2]], "bid": 2},
                               ["bid", "no tree card"]),
    "bid_too_high": ({"bid": 40}, ["bid", "40"]),
    "unknown_variant": ({"variants": ["tours-de-puissance"]}, ["tours-de-puissance"]),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_puzzle_names_the_field(name):
    fields, needles = BAD[name]
    with pytest.raises(Exception) as e:
        solve({**BASE, **fields})
    msg = e.value.headline() if hasattr(e.value, "headline") else str(e.value)
    for n in needles:
        assert n in msg, f"{n!r} not in {msg!r}"


def test_cli_variant_selects_the_expansion(tmp_path):
    puzzle, expected = GOLDEN["scrap_book_rebuild"]
    path = tmp_path / "p.json"
    path.write_text(json.dumps(puzzle))
    r = run_cli("solve", str(path), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["best_score"] == expected["best_score"]
    r = run_cli("check", GAME, "--variant", EXT, "--json")
    data = json.loads(r.stdout)
    assert data["files"] == ["spec/les-5-tours.rules", "spec/tours-de-pouvoir.rules"]
    assert {"rebuild", "build_bottom", "pay", "stop_taking"} <= set(data["actions"])
    assert data["readings"]["tree_payment"] == "before_demolition"
    assert data["contradicted"] == ["candy_scary_pairs"]


# ---- the expansion's worked examples --------------------------------------------------------

@pytest.fixture(scope="module")
def results():
    return {r.name: r for r in run_examples(GAME, (EXT,))}


BOOK = ["tree_payment", "scrap_rebuild", "sand_top_or_bottom", "candy_scary_pairs"]
BASE_EXAMPLES = ["scoring", "lou_bids", "lou_builds", "lou_undoes", "building_rules"]


def test_the_book_examples_are_there(results):
    assert set(BOOK + BASE_EXAMPLES) <= set(results)


@pytest.mark.parametrize("name", [n for n in BOOK if n != "candy_scary_pairs"] + BASE_EXAMPLES
                         + ["scrap_chain", "sand_top_first", "sand_first_commits",
                            "sand_first_free", "five_leaves_a_tree_owner_to_speak",
                            "five_ends_the_bidding", "five_ends_the_bidding_without_trees",
                            "bid_capped_by_the_tree", "bid_uncapped"])
def test_example_is_confirmed(results, name):
    r = results[name]
    assert r.outcomes
    for o in r.outcomes:
        assert o.ok and o.computed == o.book, o.as_json()


def test_candy_scary_example_is_contradicted_with_both_values(results):
    """The book's towers share 12, 11 and 8, but the book counts two pairs (6 VP): the rules
    give three pairs (9 VP); the tool says so, both values, and the rules are not bent."""
    r = results["candy_scary_pairs"]
    assert not r.confirmed
    by = {o.text: o for o in r.outcomes}
    assert (by["expect pairs(0) == 2;"].computed, by["expect pairs(0) == 2;"].book) == (3, 2)
    o = by["expect extra_points(0) == 6;"]
    assert (o.ok, o.computed, o.book) == (False, 9, 6)


def test_cli_examples_reports_contradicted(tmp_path):
    r = run_cli("examples", GAME, "--variant", EXT, "--json")
    assert r.returncode == 1
    data = json.loads(r.stdout)
    verdicts = {e["example"]: e["verdict"] for e in data}
    assert verdicts["candy_scary_pairs"] == "contradicted"
    assert all(v == "confirmed" for k, v in verdicts.items() if k != "candy_scary_pairs")


def test_example_with_a_reading_runs_under_it(results):
    """`sand_first_free with first_sand = free` runs under that reading whatever the default;
    the same script under the default is refused by `one_end`."""
    assert results["sand_first_free"].confirmed
    g = load_game(GAME, (EXT,))
    ex = next(e for e in g.p.examples if e.name == "sand_first_free")
    assert ex.readings == (("first_sand", "free"),)
    from solver.queries.examples import run_example
    assert not run_example(g, ex).confirmed


@pytest.mark.parametrize("name,other", [("bid_capped_by_the_tree", "bid_cap:none"),
                                        ("bid_uncapped", "bid_cap:payable")])
def test_bid_cap_examples_fail_under_the_other_option(name, other):
    from solver.queries.examples import run_example
    g = load_game(GAME, (EXT, other))
    ex = next(e for e in g.p.examples if e.name == name)
    assert not run_example(g, ex).confirmed


def test_a_bid_that_can_be_settled_is_not_renounced():
    """Under bid_cap:none a bid of 6 with 4 non-tree market cards and a tree tower of 2 can be
    settled: renounce is refused; a bid of 7 cannot, and renounce is the way out."""
    g = load_game(GAME, (EXT, "bid_cap:none"))
    fi = g.field_index
    ft = {f.name: f.type for f in g.p.state}
    st = list(g.initial())
    st[fi["phase"]] = ft["phase"].members.index("bidding")
    st[fi["market"]] = from_json(ft["market"], [["candy", 10], ["scary", 6], ["sand", 3],
                                                ["scrap", 12], ["tree", 2]], "market")
    ts = list(st[fi["towers"]])
    ts[0] = from_json(ft["towers"].val, {"tree": [9, 4]}, "towers")
    st[fi["towers"]] = tuple(ts)
    st = tuple(st)
    six, _ = g.apply(st, Move("bid", (6,)))
    assert _why(g, six, Move("renounce", ())) == "unsettleable"
    seven, _ = g.apply(st, Move("bid", (7,)))
    back, _ = g.apply(seven, Move("renounce", ()))
    assert back[fi["market"]] == st[fi["market"]] and _why(g, back, Move("bid", (6,))) == "legal"
    # Under the default the 7 is refused when bid.
    d = load_game(GAME, (EXT,))
    assert _why(d, tuple(st[fi[f.name]] for f in d.p.state), Move("bid", (7,))) == "market_size"


@pytest.mark.parametrize("name,other", [("five_leaves_a_tree_owner_to_speak", "whole_market"),
                                        ("five_ends_the_bidding", "unbeatable")])
def test_bid_close_examples_fail_under_the_other_option(name, other):
    """A bid of 5 with a tree owner still to speak: each option's example is contradicted under
    the other option of bid_close."""
    from solver.queries.examples import run_example
    g = load_game(GAME, (EXT, f"bid_close:{other}"))
    ex = next(e for e in g.p.examples if e.name == name)
    assert not run_example(g, ex).confirmed
    # With no tree owner to speak, a 5 ends the bidding under both options.
    ex = next(e for e in g.p.examples if e.name == "five_ends_the_bidding_without_trees")
    assert run_example(g, ex).confirmed


# ---- the powers, move by move -----------------------------------------------------------------

def _card(g, style, value):
    return from_json(g.p.types["Card"], [style, value], "card")


def _building(g, towers: dict, hand: list, pile: list = (), **extra):
    fi = g.field_index
    ft = {f.name: f.type for f in g.p.state}
    st = list(g.initial())
    st[fi["phase"]] = ft["phase"].members.index("building")
    ts = list(st[fi["towers"]])
    ts[0] = from_json(ft["towers"].val, towers, "towers")
    st[fi["towers"]] = tuple(ts)
    ps = list(st[fi["pile"]])
    ps[0] = from_json(ft["pile"].val, list(pile), "pile")
    st[fi["pile"]] = tuple(ps)
    st[fi["hand"]] = from_json(ft["hand"], list(hand), "hand")
    st[fi["bids"]] = from_json(ft["bids"], [[max(1, len(hand)), 0]], "bids")
    st[fi["saved_towers"]] = st[fi["towers"]][0]
    st[fi["saved_pile"]] = st[fi["pile"]][0]
    for k, v in extra.items():
        st[fi[k]] = from_json(ft[k], v, k)
    return tuple(st)


def _why(g, st, move):
    from solver.engine.evaluate import Refused
    try:
        g.apply(st, move)
        return "legal"
    except Refused as r:
        return r.rule


def test_extend_before_reports_its_rule_first():
    """`extend demolish before`: while tree cards are owed, demolition is refused by the
    expansion's rule paid_first, reported before the base's rules are even reached."""
    g = load_game(GAME, (EXT,))
    st = _building(g, {"candy": [13, 10], "tree": [9]}, [["candy", 11]], owed=1,
                   demolished=True)
    # The base would refuse by `once` (already demolished); paid_first runs first.
    assert _why(g, st, Move("demolish", (g.p.types["Style"].members.index("candy"),))) == \
        "paid_first"
    g2 = load_game(GAME, (EXT, "tree_payment:any_time"))
    st2 = _building(g2, {"candy": [13, 10], "tree": [9]}, [["candy", 11]], owed=1,
                    demolished=True)
    assert _why(g2, st2, Move("demolish", (0,))) == "once"


def test_round_waits_for_the_rebuild_offer():
    """`extend placed before` sets the offer; the base `finished` then keeps the round open
    (the overridden `pending`) until the offer is taken or declined."""
    g = load_game(GAME, (EXT,))
    st = _building(g, {"candy": [14]}, [["scrap", 15]], pile=[["candy", 9]])
    fi = g.field_index
    st, _ = g.apply(st, Move("build", (_card(g, "scrap", 15),)))
    assert st[fi["offer"]] is True
    assert g.p.types["Phase"].members[st[fi["phase"]]] == "building"
    done, shows = g.apply(st, Move("decline", ()))
    assert shows == [["decline"]]
    assert g.p.types["Phase"].members[done[fi["phase"]]] != "building"
    assert done[fi["offer"]] is False


def test_undo_gives_back_the_tree_cards_paid():
    """After paying, an undone build restores the tree tower (the snapshot) and takes the paid
    cards out of the discard: no card is created.  (The candy 10 cannot go on the 3, and the
    demolition is used: the hand cannot be built.)"""
    g = load_game(GAME, (EXT,))
    fi = g.field_index
    st = _building(g, {"tree": [12, 7, 4], "candy": [3]}, [["candy", 10]], owed=2,
                   demolished=True)
    held = g.expr("held(c)", {"c": g.p.types["Card"]})[0]
    before = {v: held(st, _card(g, "tree", v)) for v in (4, 7, 12)}
    st, _ = g.apply(st, Move("pay", ()))
    assert sum(st[fi["discard"]]) == 1
    st, _ = g.apply(st, Move("pay", ()))
    st, _ = g.apply(st, Move("undo", ()))
    assert sum(st[fi["discard"]]) == 0
    assert st[fi["towers"]][0][g.p.types["Style"].members.index("tree")] == (12, 7, 4)
    assert st[fi["owed"]] == 0 and st[fi["paid"]] == ()
    assert {v: held(st, _card(g, "tree", v)) for v in (4, 7, 12)} == before


@pytest.mark.parametrize("reading", ["before_demolition", "any_time"])
def test_a_0_is_never_rebuilt_onto_a_tree_tower_that_owes(reading):
    """While a tree card is owed, a scrap card built offers a rebuild; a 0 of the pile rebuilt
    onto the tree tower would give it a top, and the debt could no longer be paid: no move at
    all would be left (the build can be undone only while a hand card cannot be placed).
    Under the default tree_payment:before_demolition nothing is built before paying; under
    any_time the rebuild of that 0 is refused (`keeps_payment`), while a non-zero tree card
    may still come back (the tower keeps paying, from its new top)."""
    from solver.engine.evaluate import Refused
    g = load_game(GAME, (EXT, f"tree_payment:{reading}"))
    st = _building(g, {"tree": [5]}, [["scrap", 3]], pile=[["tree", 0], ["tree", 4]], owed=1,
                   demolished=True)
    try:
        st, _ = g.apply(st, Move("build", (_card(g, "scrap", 3),)))
    except Refused as r:
        assert reading == "before_demolition" and r.rule == "paid_first"
        return
    assert reading == "any_time" and st[g.field_index["offer"]] is True
    assert _why(g, st, Move("rebuild", (_card(g, "tree", 0),))) == "keeps_payment"
    st, _ = g.apply(st, Move("rebuild", (_card(g, "tree", 4),)))
    st, shows = g.apply(st, Move("pay", ()))
    assert shows == [["pay", "tree", 4]] and st[g.field_index["owed"]] == 0


def test_a_demolition_after_the_last_card_ends_the_build():
    """Under demolition_order:anytime a demolition may follow the last card built; when that
    card was a scrap card, its rebuild offer kept the round open, and the demolition declines
    the offer.  The build then ends like any other.  Before, the round stayed open with an empty
    hand and nothing on offer: no move was legal (found by seeded playouts under each reading)."""
    g = load_game(GAME, (EXT, "demolition_order:anytime"))
    fi = g.field_index
    phase = g.p.types["Phase"].members
    st = _building(g, {"candy": [10], "scary": [4]}, [["scrap", 13]], pile=[["scrap", 12]])
    st, _ = g.apply(st, Move("build", (_card(g, "scrap", 13),)))
    assert st[fi["offer"]] is True and phase[st[fi["phase"]]] == "building"
    st, _ = g.apply(st, Move("demolish", (g.p.types["Style"].members.index("scary"),)))
    assert st[fi["offer"]] is False
    assert phase[st[fi["phase"]]] != "building" and g.legal(st)


@pytest.mark.parametrize("game", ["les-5-tours", EXT])
def test_stored_proof_is_current_and_every_invariant_is_inductive(game):
    """docs/proofs/<game>.json (``python docs/refresh.py GAME --only proofs --depth 2
    --split-lengths``, 2 players; the expansion's run in sittings from a local journal, see
    docs/prover.md) was made from this very spec (its rules and
    invariants), and every invariant in it is inductive, the transition pile_never_shrinks
    included.  With the expansion on, that takes the adapted card counts (whole_snapshot,
    the tree cards paid counted once) and market_only_gives, without which the transition
    has a counterexample to induction on demolish.  Fails when a rule or an invariant
    changes (refresh), when an invariant is added without a proof, or when one that was
    proved no longer is."""
    from conftest import stored_proof
    g, status = stored_proof(game)
    assert set(status) == {i.name for i in g.p.invariants}
    assert {n: s for n, s in status.items() if s != "inductive"} == {}


def test_bid_beyond_the_market_needs_a_tree_tower():
    g = load_game(GAME, (EXT,))
    fi = g.field_index
    ft = {f.name: f.type for f in g.p.state}
    st = list(g.initial())
    st[fi["phase"]] = ft["phase"].members.index("bidding")
    st[fi["market"]] = from_json(ft["market"], [["candy", 3], ["sand", 5]], "market")
    st = tuple(st)
    assert _why(g, st, Move("bid", (3,))) == "market_size"
    ts = list(st[fi["towers"]])
    ts[0] = from_json(ft["towers"].val, {"tree": [9, 4]}, "towers")
    st2 = tuple(ts if i == fi["towers"] else v for i, v in enumerate(st))
    assert _why(g, st2, Move("bid", (4,))) == "legal"
    assert _why(g, st2, Move("bid", (5,))) == "market_size"
    # A tree tower with a top (a 0) has lost its power.
    ts[0] = from_json(ft["towers"].val, {"tree": [9, 4, 0]}, "towers")
    st3 = tuple(ts if i == fi["towers"] else v for i, v in enumerate(st))
    assert _why(g, st3, Move("bid", (3,))) == "market_size"
    # The base game, for comparison, never allows more than the market.
    b = load_game(GAME)
    assert _why(b, tuple(st2[fi[f.name]] for f in b.p.state), Move("bid", (3,))) == "market_size"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_playouts_end_and_keep_the_invariants(seed):
    """Random games with the expansion reach the end (no deadlock: a payment or a rebuild offer
    always has a way out), and every invariant and transition property holds on every state."""
    import random

    from conftest import holds, walk
    g = load_game(GAME, (EXT,))
    final, moves = walk(g, random.Random(seed), 100_000)
    assert g.is_terminal(final)
    used = {m.action for m in moves}
    st = g.initial()
    for m in moves:
        old = st
        st, _ = g.apply(st, m)
        for inv in g.p.invariants:
            assert holds(g, inv, st, old if inv.transition else None), (inv.name, m)
    assert st == final
    assert {"build", "demolish"} <= used
