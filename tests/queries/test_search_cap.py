"""The interpreter's search stops at an objective's cap (the most its shape allows: `size(market)
- size(state.hand)` is at most the market's size) and then tries the moves that raise the
objective first: the same best value, fewer states searched."""
from __future__ import annotations

from solver.engine.game import Game
from solver.queries.puzzleprep import prepare, query_actions, query_start
from solver.queries.puzzles import solve
from solver.queries.puzzlesearch import fixed_slots, _search_one, objective_cap

# Every market card can be built (a 9 and an 8 open the way): the whole market is a best take.
ALL = {"game": "les-5-tours", "players": 2, "towers": {"sand": [10, 6], "tree": [11]},
       "hand": [["sand", 3]],
       "market": [["sand", 9], ["sand", 8], ["sand", 5], ["tree", 4], ["candy", 7]]}
# The 12 cannot go on the 3 (nor the 5 on the 3), and a demolition opens only one tower.
SOME = {"game": "les-5-tours", "players": 2, "towers": {"sand": [10, 3], "tree": [6, 3]},
        "hand": [["sand", 2]],
        "market": [["sand", 12], ["tree", 5], ["candy", 7], ["tree", 2]]}


def _queries(puzzle):
    prep = prepare(puzzle)
    q1, q2 = prep.puzzle.queries
    return prep, q1, q2


def test_the_cap_is_the_market_size_and_the_score_has_none():
    for puzzle in (ALL, SOME):
        prep, q1, q2 = _queries(puzzle)
        st, env = query_start(prep, q2)
        assert objective_cap(prep.game, q2.maximize, st, env, fixed_slots(prep, q2)) \
            == len(puzzle["market"])
        st, env = query_start(prep, q1)
        # score(0) is a def: nothing tighter than its declared type.
        assert objective_cap(prep.game, q1.maximize, st, env, fixed_slots(prep, q1)) is None


def _search(prep, q, monkeypatch, **kw):
    calls = []
    legal = Game.legal
    monkeypatch.setattr(Game, "legal", lambda self, st, a=None, shown=True: calls.append(1)
                        or legal(self, st, a, shown))
    game = prep.game
    st, env = query_start(prep, q)
    res = _search_one(game, st, env, game.compiled(q.goal), game.compiled(q.maximize),
                      game.compiled(q.within)(st, env), query_actions(prep, q, st, env), **kw)
    monkeypatch.setattr(Game, "legal", legal)
    return res[0], len(calls)


def test_the_same_best_take_with_fewer_states(monkeypatch):
    prep, _, q2 = _queries(ALL)
    st, env = query_start(prep, q2)
    cap = objective_cap(prep.game, q2.maximize, st, env, fixed_slots(prep, q2))
    full, n_full = _search(prep, q2, monkeypatch)
    capped, n_capped = _search(prep, q2, monkeypatch, cap=cap, greedy=True)
    assert full == capped == 5
    assert n_capped < n_full / 4
    # Below the cap the search goes to the end, and finds the same best.
    prep, _, q2 = _queries(SOME)
    st, env = query_start(prep, q2)
    cap = objective_cap(prep.game, q2.maximize, st, env, fixed_slots(prep, q2))
    full, _ = _search(prep, q2, monkeypatch)
    capped, _ = _search(prep, q2, monkeypatch, cap=cap, greedy=True)
    assert full == capped < cap


def test_a_query_answering_steps_keeps_the_first_best_run():
    # The build query answers its steps: they are the first best run in the legal moves' order
    # (the same run as a search without the cap would report).
    got = solve(ALL)
    assert got["max_take"] == 5 and got["feasible"] is True
    assert got["steps"] == [["top", "sand", 3]]
