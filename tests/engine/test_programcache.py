"""The checked programs kept on disk (`solver.engine.programcache`): a second compile of the
same sources is a load that gives the same game; any edit of a source, a parameter, a reading
or the checker's code is a miss; a damaged entry is checked afresh; the cache can be turned
off; and what is loaded keeps everything the later stages read (the tokens' end positions)."""
from __future__ import annotations

import shutil

import lark
import pytest

from solver.engine import programcache as pc
from solver.engine.game import Game, load_game
from solver.lang.sources import spec_texts
from solver.lang.resources import spec_dir


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "programs"
    monkeypatch.setenv("RULEBOOK_PROGRAM_CACHE", str(folder))
    return folder


@pytest.fixture
def checks(monkeypatch):
    """How many times the checker ran."""
    calls = []
    real = pc.check_program
    monkeypatch.setattr(pc, "check_program", lambda *a: calls.append(1) or real(*a))
    return calls


def _moves(game: Game) -> list:
    return [m.to_json(game) for m, _, _, refused in game.moves(game.initial()) if refused is None]


def test_a_second_compile_is_a_load_of_the_same_game(cache, checks):
    texts, readings = spec_texts("les-5-tours", ())
    first = Game(*pc.checked(texts, readings, (("players", 3),)))
    assert len(checks) == 1 and len(list(cache.glob("*.program"))) == 1
    again = Game(*pc.checked(texts, readings, (("players", 3),)))
    assert len(checks) == 1                                 # loaded, not checked
    assert again.p is not first.p and again.p == first.p
    assert _moves(again) == _moves(first) and len(_moves(first)) > 3
    # The symbols come back whole: an expression is checked against the loaded program.
    f, _ = again.expr("score(0)", {})
    assert f(again.initial(), [None] * 8) == first.expr("score(0)", {})[0](first.initial(),
                                                                          [None] * 8)


def test_tokens_keep_where_they_end(cache):
    texts, readings = spec_texts("torres", ())
    fresh = pc.checked(texts, readings, ())
    loaded = pc.checked(texts, readings, ())
    pairs = list(zip(loaded[1].files[0].tree.scan_values(lambda v: isinstance(v, lark.Token)),
                     fresh[1].files[0].tree.scan_values(lambda v: isinstance(v, lark.Token))))
    assert len(pairs) > 1000
    assert all(a == b and a.type == b.type and (a.line, a.column, a.end_line, a.end_column,
                                                   a.end_pos) ==
               (b.line, b.column, b.end_line, b.end_column, b.end_pos) for a, b in pairs)


def test_every_input_of_checking_is_in_the_key(cache, checks, tmp_path, monkeypatch):
    texts, readings = spec_texts("les-5-tours", ())
    base = pc.key(texts, readings, ())
    doc_edit = [(texts[0][0], texts[0][1].replace("Player 0", "Player zero", 1))]
    assert doc_edit[0][1] != texts[0][1]
    assert len({base, pc.key(doc_edit, readings, ()),
                pc.key(texts, readings, (("players", 3),)),
                pc.key(texts, {"zero_bid": "pass"}, ()),
                pc.key([("elsewhere.rules", texts[0][1])], readings, ())}) == 5
    # Parameters are a set: their order is not.
    assert pc.key(texts, {}, (("a", 1), ("b", 2))) == pc.key(texts, {}, (("b", 2), ("a", 1)))
    pc.code_digest.cache_clear()
    monkeypatch.setattr(pc, "FORMAT", pc.FORMAT + 1)        # stands for any change of code
    try:
        assert pc.key(texts, readings, ()) != base
    finally:
        pc.code_digest.cache_clear()


def test_an_edited_spec_is_checked_again(cache, checks, tmp_path):
    rules = tmp_path / "les-5-tours.rules"
    shutil.copy(spec_dir() / "les-5-tours.rules", rules)
    pc.checked(*spec_texts(str(rules), ()), ())
    pc.checked(*spec_texts(str(rules), ()), ())
    assert len(checks) == 1
    rules.write_text(rules.read_text() + "\n# an edit\n")
    pc.checked(*spec_texts(str(rules), ()), ())
    assert len(checks) == 2


def test_a_damaged_entry_is_checked_afresh_and_rewritten(cache, checks):
    texts, readings = spec_texts("les-5-tours", ())
    good = Game(*pc.checked(texts, readings, ()))
    (entry,) = cache.glob("*.program")
    entry.write_bytes(b"not a program")
    again = Game(*pc.checked(texts, readings, ()))
    assert len(checks) == 2 and _moves(again) == _moves(good)
    assert entry.read_bytes() != b"not a program"
    pc.checked(texts, readings, ())
    assert len(checks) == 2


def test_turned_off_nothing_is_written(tmp_path, monkeypatch, checks):
    monkeypatch.setenv("RULEBOOK_PROGRAM_CACHE", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    texts, readings = spec_texts("les-5-tours", ())
    pc.checked(texts, readings, ())
    pc.checked(texts, readings, ())
    assert len(checks) == 2 and not list(tmp_path.rglob("*.program"))


def test_at_most_keep_entries(cache, monkeypatch):
    monkeypatch.setattr(pc, "KEEP", 2)
    texts, readings = spec_texts("les-5-tours", ())
    for players in (2, 3, 4):
        pc.checked(texts, readings, (("players", players),))
    assert len(list(cache.glob("*.program"))) == 2


def test_load_game_goes_through_the_cache(cache, checks):
    load_game.cache_clear()
    try:
        a = load_game("les-5-tours", (), (("players", 4),))
        load_game.cache_clear()
        b = load_game("les-5-tours", (), (("players", 4),))
    finally:
        load_game.cache_clear()
    assert len(checks) == 1 and a.p == b.p


def test_load_game_follows_an_edit_of_its_file(cache, tmp_path):
    # The game kept in memory is keyed by its sources' text, not by its path: a long-lived
    # process (a Dask worker kept across proofs) loads the edited rules, not the old ones.
    rules = tmp_path / "les-5-tours.rules"
    text = (spec_dir() / "les-5-tours.rules").read_text(encoding="utf-8")
    rules.write_text(text, encoding="utf-8")
    first = load_game(str(rules))
    assert load_game(str(rules)) is first
    rules.write_text(text.replace('game "les-5-tours"', 'game "les-5-tours-edited"'),
                     encoding="utf-8")
    assert load_game(str(rules)).name == "les-5-tours-edited" and first.name == "les-5-tours"
