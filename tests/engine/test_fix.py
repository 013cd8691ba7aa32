"""The bounded fixpoint `fix`, memoised def calls, enum JSON spellings and board-shaped JSON:
the interpreter and the Z3 terms agree on generated boards, and the values are the ones the
definitions mean (a castle is the connected built squares; the widest path's bottleneck)."""
from __future__ import annotations

import itertools

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from solver.engine import domains as dz
from solver.lang.codec import from_json, to_json
from solver.lang.errors import EvalError, InputError
from solver.engine.game import load_path
from support.floods import components, square_type, state, symbolic_agrees
from solver.lang.types import finite


@pytest.fixture(scope="module")
def flood():
    return load_path(FIXTURES / "flood.rules")


boards = st.dictionaries(st.tuples(st.integers(0, 2), st.integers(0, 2)), st.integers(0, 3))


@settings(max_examples=40, deadline=None)
@given(heights=boards)
def test_castle_is_the_connected_component(flood, heights):
    castle = flood.expr("castle(s)", {"s": square_type(flood)})[0]
    S = state(flood, heights)
    sqs = finite(square_type(flood)).values
    for s in sqs:
        got = {t for t, b in zip(sqs, castle(S, s)) if b}
        assert got == components(heights, s)


def test_fix_agrees_with_z3_on_generated_boards(flood):
    import random
    rng = random.Random(4)
    cells = list(itertools.product(range(3), range(3)))
    boards_ = [{c: rng.choice([0, 0, 1, 2, 3]) for c in cells} for _ in range(12)]
    boards_.append({})
    boards_.append({c: 1 for c in cells})
    for text in ("castle(s)", "area(s)", "widest(s)", "flip(0)"):
        symbolic_agrees(flood, text, boards_)


def test_fix_stops_early_only_at_a_fixpoint(flood):
    """`flip` never settles: its value is r(3) (true -> false -> true -> false), on both sides."""
    f = flood.expr("flip(0)")[0]
    assert f(state(flood, {(0, 0): 2})) is False    # starts true, flips three times
    assert f(state(flood, {})) is True


def test_memoised_calls_follow_the_state(flood):
    """The memo is per state object: a second state gets its own answers."""
    area = flood.expr("area(s)", {"s": square_type(flood)})[0]
    a = state(flood, {(0, 0): 1, (1, 0): 1})
    b = state(flood, {(0, 0): 1})
    assert area(a, (0, 0)) == 2
    assert area(b, (0, 0)) == 1
    assert area(a, (0, 0)) == 2


def test_memoised_calls_are_kept_per_value_of_the_fields_read():
    """castle and area read only `height`: their calls are kept per heights, so a state with
    the same heights and other pieces reuses them, and states with other heights get their
    own answers, however the states alternate."""
    flood = load_path(FIXTURES / "flood.rules")       # its own memos, not the module's
    area = flood.expr("area(s)", {"s": square_type(flood)})[0]
    a = state(flood, {(0, 0): 1, (1, 0): 1})
    a2 = state(flood, {(0, 0): 1, (1, 0): 1}, {(2, 2): 2})
    b = state(flood, {(0, 0): 1})
    assert area(a, (0, 0)) == 2
    # (Generated code is written at its first call: the memo exists from then on.)
    memo = flood.concrete._def_memos["castle"]
    assert memo.fields.fields == (flood.field_index["height"],)
    assert len(memo.store) == 1
    assert area(a2, (0, 0)) == 2
    assert len(memo.store) == 1          # a2 met a's heights: no new entry
    assert [area(x, (0, 0)) for x in (b, a, b, a2)] == [1, 2, 1, 2]
    assert len(memo.store) == 2


def test_a_memo_whose_fields_change_every_state_keeps_each_states_calls_only(monkeypatch):
    """Over a window of states whose heights are all new, castle's calls kept per heights
    are never found again: it pauses (each state's calls only, none kept) and afterwards
    looks again; over states that share their heights it keeps them.  Answers stay right."""
    import solver.engine.memo as ev
    monkeypatch.setattr(ev, "STORE_WINDOW", 4)
    monkeypatch.setattr(ev, "STORE_PAUSE", 3)
    flood = load_path(FIXTURES / "flood.rules")
    area = flood.expr("area(s)", {"s": square_type(flood)})[0]
    boards = [{(0, 0): 1, (1, 0): 1}, {(0, 0): 1}, {(0, 0): 1, (0, 1): 2}, {(2, 2): 1},
              {(0, 0): 1, (1, 0): 1, (2, 0): 1}]
    fresh = [state(flood, h) for h in boards]
    assert area(fresh[0], (0, 0)) == 2
    memo = flood.concrete._def_memos["castle"]
    memo.window, memo.found = ev.STORE_WINDOW, 0
    memo.store.clear()
    assert [area(x, (0, 0)) for x in fresh[1:]] == [1, 2, 0, 3]
    assert memo.window < 0 and not memo.store         # a window of new heights: paused
    again = [state(flood, h) for h in boards[:3]]
    assert [area(x, (0, 0)) for x in again] == [2, 1, 2]
    assert not memo.store and memo.window == ev.STORE_WINDOW   # the pause over
    # The same two heights over and over: found again, kept.
    pair = [state(flood, boards[0]), state(flood, boards[1], {(2, 2): 2})] * 4
    assert [area(x, (0, 0)) for x in pair] == [2, 1] * 4
    assert memo.window > 0 and len(memo.store) == 2


def test_defs_reading_the_same_fields_name_a_states_values_once(monkeypatch):
    """castle and area both read `height`: one numbering of the heights serves both memos.
    Numbers are never reused: when the numbering is emptied, heights met before get a new
    number, and no memo answers for other heights."""
    import solver.engine.memo as ev
    # The numberings are shared by every game whose defs read the same field indices: a game
    # tested before (Torres on 3 x 3) may have numbered c's heights already.
    monkeypatch.setattr(ev, "_FIELD_VALUES", {})
    flood = load_path(FIXTURES / "flood.rules")
    area = flood.expr("area(s)", {"s": square_type(flood)})[0]
    a = state(flood, {(0, 0): 1, (1, 0): 1})
    b = state(flood, {(0, 0): 1})
    assert area(a, (0, 0)) == 2
    memos = flood.concrete._def_memos
    assert memos["castle"].fields is memos["area"].fields
    values = memos["castle"].fields
    n_a = values.of(a)
    assert values.of(b) != n_a and values.of(a) == n_a
    monkeypatch.setattr(ev, "FIELD_MEMO_STATES", 0)    # every new value empties the numbering
    c = state(flood, {(1, 1): 1, (1, 2): 1, (0, 2): 1})
    assert area(c, (1, 1)) == 3
    assert values.of(a) not in (n_a, values.of(c))     # a numbered afresh: a new number
    assert [area(x, (0, 0)) for x in (b, a, c)] == [1, 2, 0]


@settings(max_examples=30, deadline=None)
@given(a=boards, b=boards)
def test_a_remembered_filter_follows_the_state_and_the_outer_locals(a, b):
    """`t in Sq where height[t] > 1` reads only the state: its values are remembered per
    heights; `d in Dir where on_board(s, d)` reads the outer local s: per square.  Asked for
    every square of two alternating states, each answer is the plain one."""
    g = load_path(FIXTURES / "flood.rules")
    sq = square_type(g)
    tall = g.expr("count t in Sq where height[t] > 1: t.x == s.x", {"s": sq})[0]
    sides = g.expr("count d in Dir where on_board(s, d): height[shift(s, d)] == 0",
                   {"s": sq})[0]
    states = [(h, state(g, h)) for h in (a, b)]
    for _ in range(2):
        for h, st_ in states:
            for s in finite(sq).values:
                assert tall(st_, s) == sum(1 for t, v in h.items() if v > 1 and t[0] == s[0])
                near = [(s[0] + dx, s[1] + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))]
                assert sides(st_, s) == sum(1 for n in near if 0 <= n[0] <= 2
                                            and 0 <= n[1] <= 2 and h.get(n, 0) == 0)


@settings(max_examples=30, deadline=None)
@given(a=boards, b=boards)
def test_a_quantifier_of_the_state_alone_follows_the_state(a, b):
    """`count t in Sq: height[t] > 0` reads only the state: it is kept per heights, and
    states that alternate each get their own count."""
    g = load_path(FIXTURES / "flood.rules")
    built = g.expr("count t in Sq: height[t] > 0")[0]
    states = [(h, state(g, h)) for h in (a, b)]
    for _ in range(2):
        for h, st_ in states:
            assert built(st_) == sum(1 for v in h.values() if v > 0)


def test_a_filter_that_fails_further_on_is_not_evaluated_there(flood):
    """`where 6 / (2 - t.x) > 0` divides by zero at x = 2.  An `exists` that is true before
    that square must not fail, with or without its filter remembered; a `forall` that gets
    there fails as the plain loop does."""
    st_ = state(flood, {})
    found = flood.expr("exists t in Sq where 6 / (2 - t.x) > 0: t.x == 0")[0]
    assert found(st_) is True
    assert found(st_) is True           # asked again: still the lazy loop, still no error
    every = flood.expr("forall t in Sq where 6 / (2 - t.x) > 0: t.x < 5")[0]
    with pytest.raises(EvalError, match="division by zero"):
        every(st_)


def test_enum_json_spellings_round_trip(flood):
    piece = flood.p.types["Piece"]
    assert [from_json(piece, j, "p") for j in (None, "king", 0, 1)] == [0, 1, 2, 3]
    assert [to_json(piece, i) for i in range(4)] == [None, "king", 0, 1]
    with pytest.raises(InputError, match=r"p: unknown Piece 2 \(one of null, \"king\", 0, 1\)"):
        from_json(piece, 2, "p")
    with pytest.raises(InputError, match="unknown Piece"):
        from_json(piece, "red", "p")     # the member's name is not its spelling


def test_a_board_is_written_as_rows(flood):
    t = flood.state_type.fields[flood.field_index["height"]][1]
    rows = [[1, 0, 0], [2, 0, 0], [0, 0, 3]]       # rows are y, columns x
    v = from_json(t, rows, "height")
    index = finite(square_type(flood)).index
    assert v[index[(0, 1)]] == 2 and v[index[(2, 2)]] == 3 and v[index[(1, 0)]] == 0
    assert to_json(t, v) == rows
    with pytest.raises(InputError, match=r"height\[1\]: 2 columns, expected 3"):
        from_json(t, [[0, 0, 0], [0, 0], [0, 0, 0]], "height")
    with pytest.raises(InputError, match="height: 2 rows, expected 3"):
        from_json(t, [[0, 0, 0], [0, 0, 0]], "height")


@pytest.mark.parametrize("backend", ["search", "z3"])
def test_answer_all_lists_every_feasible_choice(backend, monkeypatch):
    from solver.queries.puzzles import solve
    monkeypatch.setenv("RULEBOOK_SPECS", str(FIXTURES))
    board = [[1, 1, 0], [0, 0, 0], [0, 0, 3]]
    out = solve({"game": "flood", "ask": "raisable", "board": board}, backend)
    # beside the two-square castle (0,0)-(1,0): (0,1), (1,1), (2,0) and the castle itself
    assert out == {"squares": [[0, 0], [0, 1], [1, 0], [1, 1], [2, 0]]}


def test_symbolic_min_over_a_guarded_range(flood):
    """`min t in v..3: t` with a symbolic v: the guarded elements before v must not leave the
    empty default (0) in place once a later element's guard holds (a bug Torres' score track
    found: the interpreter said 1, Z3 said 0)."""
    from solver.lang.types import IntT
    fc = flood.expr("min t in v..3: t", {"v": IntT(0, 3)})[0]
    fs = flood.expr("min t in v..3: t", {"v": IntT(0, 3)}, symbolic=True)[0]
    fm = flood.expr("max t in 0..v where t < 2: t", {"v": IntT(0, 3)}, symbolic=True)[0]
    gm = flood.expr("max t in 0..v where t < 2: t", {"v": IntT(0, 3)})[0]
    # negative elements: the empty default (0) would beat every one of them in a plain fold
    fn = flood.expr("max t in 0..v: t - 3", {"v": IntT(0, 3)}, symbolic=True)[0]
    gn = flood.expr("max t in 0..v: t - 3", {"v": IntT(0, 3)})[0]
    # symbolic values, some guards false: the fold starts from a sentinel, not the default
    env = {"v": IntT(0, 3)}
    sym = [(flood.expr(x, env, symbolic=True)[0], flood.expr(x, env)[0])
           for x in ("max t in 0..3 where t < v: t - v", "min t in 0..3 where t >= v: t + v")]
    v = z3.Int("v")
    S = flood.initial()
    for n in range(4):
        for f, g in ((fs, fc), (fm, gm), (fn, gn), *sym):
            got = z3.simplify(z3.substitute(dz.lift(f(S, v)), (v, z3.IntVal(n)))).as_long()
            assert got == g(S, n), n
