"""The extension constructs of the language, on a small fixture (tests/fixtures/extend.rules):
`extend NAME before` runs and reports first and its lets reach the body, `extend` on procs
runs around every inlined call, `extend puzzle` adds inputs, checks, moves and set-up (to the
queries its `query when` names), and `with reading = option` runs an example under it."""
from __future__ import annotations

import pytest

from conftest import FIXTURES
from solver.lang.errors import InputError
from solver.queries.examples import run_example
from solver.engine.game import Move, load_path
from solver.queries.puzzles import solve

PATH = FIXTURES / "extend.rules"


@pytest.fixture(scope="module")
def game():
    return load_path(PATH)


def test_before_blocks_come_first_and_after_blocks_last(game):
    inc = next(a for a in game.p.actions if a.name == "inc")
    from solver.lang import ir
    names = [s.name for s in inc.body if isinstance(s, ir.Requires)]
    assert names == ["no_bonus", "small"]
    res = run_example(game, next(e for e in game.p.examples if e.name == "order"))
    assert res.confirmed, [o.as_json() for o in res.outcomes]


def test_the_before_rule_is_reported_before_the_base_one(game):
    res = run_example(game, next(e for e in game.p.examples if e.name == "refused_first"))
    assert res.confirmed
    # Both rules fail in that state; the one the extension put first is named.
    from solver.engine.evaluate import Refused
    st = list(game.initial())
    fi = game.field_index
    st[fi["bonus"]], st[fi["n"]] = True, 12
    with pytest.raises(Refused) as e:
        game.apply(tuple(st), Move("inc", ()))
    assert e.value.rule == "no_bonus"


def test_example_with_a_reading(game):
    ex = next(e for e in game.p.examples if e.name == "twice")
    assert ex.readings == (("step", "two"),)
    # Under the default reading the same script gives 2, not 4.
    assert not run_example(game, ex).confirmed
    g2 = load_path(PATH, ("step:two",))
    assert run_example(g2, next(e for e in g2.p.examples if e.name == "twice")).confirmed


def test_extend_puzzle_adds_inputs_and_moves(game):
    p = game.p.puzzles[0]
    assert [i.name for i in p.inputs] == ["start", "limit", "boost"]
    # `using` from a top-level item goes to every query; `query when limit` only to that one.
    assert [q.using for q in p.queries] == [("inc",), ("inc", "dec")]
    # The extension's `from` runs after each query's own.
    assert all(len(q.setup) == 2 for q in p.queries)


def _solve(obj, backend="search"):
    import solver.queries.puzzleprep as PP
    import solver.queries.puzzles as P
    from solver.engine import game as G
    orig, orig_find = G.load_game, PP.find_spec
    try:
        # A fixture game is not in spec/: serve it by name.
        PP.load_game = lambda name, variants=(), params=(), digest=None: load_path(
            PATH, tuple(v for v in variants if ":" in v), params)
        PP.find_spec = lambda name, near=None: PATH
        return P.solve(obj, backend=backend)
    finally:
        PP.load_game, PP.find_spec = orig, orig_find


@pytest.mark.parametrize("backend", ["search", "z3"])
def test_extend_puzzle_answers(backend):
    # The boost is added after the query's own `from`: from 1 + 2, one inc reaches 4.
    got = _solve({"game": "extend-toy", "start": 1, "boost": 2}, backend)
    assert got["ok"] is True and got["path"] == [["inc"]]
    # `query when limit` gained dec: from 1 + 2 = 3 down to 2.
    got = _solve({"game": "extend-toy", "start": 1, "boost": 2, "limit": 2}, backend)
    assert got["exact"] is True
    with pytest.raises(InputError) as e:
        _solve({"game": "extend-toy", "boost": 3})
    assert "boost" in e.value.headline() and "at most 2" in e.value.headline()


# ---- one resolver: the program cache's unparsed read follows load_files ---------------------

@pytest.mark.parametrize("game, variants", [
    ("les-5-tours", ()), ("les-5-tours", ("tours-de-pouvoir",)),
    ("les-5-tours", ("tours-de-pouvoir", "zero_bid:pass")), ("torres-advanced", ()),
    ("torres", ("torres-own-pile",)), ("spec/towers.rules", ()),
    ("les-5-tours", ("nope",)), ("les-5-tours", ("zero_bid:pass", "zero_bid:nothing")),
    ("les-5-tours", ("zero_bid:",)), ("torres", ("tours-de-pouvoir",)),
    ("torres", ("torres",)), ("no-such-game", ()), ("spec", ())])
def test_spec_texts_reads_what_load_files_parses_or_refuses(game, variants):
    """`spec_texts` (what the program cache is keyed by) and `load_files` share one resolver:
    the same files in the same order and the same reading choices, and None exactly where
    load_files refuses."""
    from solver.lang.errors import RulebookError
    from solver.lang.sources import load_files, spec_texts
    found = spec_texts(game, variants)
    try:
        files, readings = load_files(game, variants)
    except RulebookError:
        assert found is None
        return
    assert found == ([(f.path, f.text) for f in files], readings)
