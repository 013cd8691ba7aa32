"""The generated documentation, without Sphinx: English sentences from the IR, the lexer, the
grammar reference, the CLI reference, stored witnesses replayed (and stale ones caught)."""
from __future__ import annotations

import copy
import json
import re

import pytest
from pygments.token import Error, Keyword, Name

from solver.docs import english as E
from solver.lang import ir
from solver.docs.docpages import anchor, game_page, replay_witness
from solver.cli.main import main
from solver.docs.docrefs import cli_reference, grammar_reference, grammar_rules, run_cli
from solver.engine.game import load_game
from solver.docs.lexer import RulesLexer, grammar_keywords
from solver.lang.resources import grammar_path, spec_dir

from conftest import ROOT

TUTORIAL = ROOT / "docs" / "tutorial"


def _english(game, action, rule):
    en = E.for_program(game.p, {f.path: f.text for f in game.symbols.files})
    a = next(a for a in game.p.actions if a.name == action)
    r = next(s for s in a.body if isinstance(s, ir.Requires) and s.name == rule)
    return E.rule_sentence(en, a, r)


# ---- English ---------------------------------------------------------------------------

def test_english_of_rules(game2):
    assert _english(game2, "build", "building") == \
        "You may build c only if phase is building."
    # `not standing() or n > bid()` is an implication: said as one.
    assert _english(game2, "bid", "higher") == \
        "You may bid n only if n is more than the bid, whenever standing holds."
    # A reading folded to a constant by the checker is still named as the reading.
    assert _english(game2, "bid", "zero_is_pass") == \
        "You may bid n only if n is more than 0, unless the reading zero_bid is nothing."
    # A def of no argument is said to hold; its negation, not to.
    assert "rest buildable does not hold" in _english(game2, "undo", "stuck")
    en = E.for_program(game2.p, {f.path: f.text for f in game2.symbols.files})
    # A bounded search, and its negation pushed into it.
    assert "some sequence of legal moves (demolish or build), the build moves at most, leads " \
        "from here to a state where the size of hand is 0" in \
        E.def_sentence(en, E.checked_def(game2, "rest_buildable"))
    assert "no sequence of legal moves" in E.English.clause(
        en, E.checked_def(game2, "rest_buildable").body, True)


def test_english_keeps_grouping_and_names(game2):
    en = E.for_program(game2.p, {f.path: f.text for f in game2.symbols.files})
    assert E.def_sentence(en, E.checked_def(game2, "penalty")) == \
        "The penalty of n is n times (n plus 1) divided by 2."
    # A param folded to its value by the checker keeps its name.
    assert "players is at least 4" in E.def_sentence(en, E.checked_def(game2, "copies"))
    # A transition property reads the previous state through old(...).
    inv = next(i for i in game2.p.invariants if i.name == "pile_never_shrinks")
    assert E.invariant_sentence(en, inv) == ("After every move, for every p in Player, the "
                                             "previous committed of p is contained in the "
                                             "committed of p.")


def test_english_covers_every_rule_of_every_spec():
    """Every requires, def and invariant of every spec reads as English, with no fallback to
    source text (a fallback means the generator misses a construct)."""
    for path in sorted(spec_dir().glob("*.rules")):
        g = load_game(path.stem)
        en = E.for_program(g.p, {f.path: f.text for f in g.symbols.files})
        sentences = [E.rule_sentence(en, a, s) for a in g.p.actions for s in a.body
                     if isinstance(s, ir.Requires)]
        sentences += [E.invariant_sentence(en, i) for i in g.p.invariants]
        sentences += [E.def_sentence(en, c) for n in g.p.defs
                      for c in [E.checked_def(g, n)] if c is not None]
        assert sentences
        for s in sentences:
            assert "`" not in s and "(Const)" not in s, f"{path.name}: no English for: {s}"


def test_english_falls_back_to_source_for_unknown_nodes():
    from solver.lang.errors import Span
    from solver.lang.types import BoolT

    class Future:  # a node added to the language later
        type = BoolT()
        span = Span("f.rules", 1, 5, 1, 13)  # Lark: the end column is past the last

    en = E.English({"f.rules": "x = newop(a);"})
    assert en.clause(Future()) == "`newop(a)`"


# ---- the lexer ---------------------------------------------------------------------------

def test_lexer_keywords_come_from_the_grammar():
    kws = grammar_keywords()
    for k in ("action", "requires", "forall", "reading", "invariant", "example", "puzzle"):
        assert k in kws
    text = grammar_path().read_text(encoding="utf-8")
    assert all(f'"{k}"' in text for k in kws)


def test_lexer_highlights_every_spec_without_errors():
    lexer = RulesLexer()
    for path in sorted(spec_dir().glob("*.rules")) + [TUTORIAL / "pile-up.rules"]:
        toks = list(lexer.get_tokens(path.read_text(encoding="utf-8")))
        assert not [v for t, v in toks if t is Error], path
    toks = [(t, v) for t, v in lexer.get_tokens('action build(c in hand) {\n'
                                                 '  requires decreasing "m": legal(t);\n}')
            if v.strip()]
    assert toks[0] == (Keyword, "action")
    assert toks[1] == (Name.Function, "build")
    assert (Name.Label, "decreasing") in toks
    assert (Name.Function, "legal") in toks  # a def named like a keyword is still a call


def test_lexer_is_registered_as_entry_point():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'rulebook = "solver.docs.lexer:RulesLexer"' in text


# ---- references -----------------------------------------------------------------------------

def test_grammar_reference_has_every_rule_with_real_examples():
    text = grammar_path().read_text(encoding="utf-8")
    rules = grammar_rules(text)
    defined = set(re.findall(r"^[?!]?([a-z_]+)\s*:", text, re.M))
    assert {r.name for r in rules} == defined
    page = grammar_reference(grammar_path(), sorted(spec_dir().glob("*.rules")))
    for r in rules:
        assert f".. rubric:: {r.name}\n" in page
    # An example is a real snippet of a spec.
    specs = "".join(p.read_text(encoding="utf-8") for p in spec_dir().glob("*.rules"))
    m = re.search(r"\.\. rubric:: requires_stmt\n.*?Example \(from :file:`spec/[^`]+`\):\n\n"
                  r"\.\. code-block:: rulebook\n\n   (.+?)\n", page, re.S)
    assert m and m.group(1).strip() in specs


def test_cli_reference_lists_every_command():
    from solver.cli.main import COMMANDS, build_parser
    page = cli_reference(build_parser)
    for name in COMMANDS:
        assert f"rulebook {name}\n" in page
        assert f"usage: rulebook {name}" in page


def test_run_cli_captures_real_output():
    code, out = run_cli(main, ["examples", "pile-up"], ROOT, {"RULEBOOK_SPECS": "docs/tutorial"})
    assert code == 0
    assert "opening: confirmed" in out and "too_high: confirmed" in out


# ---- witnesses: replayed, stale ones reported -----------------------------------------------

@pytest.fixture(scope="module")
def tutorial_witness(tmp_path_factory):
    code, out = run_cli(main, ["ambiguities", "pile-up", "--json"], ROOT,
                        {"RULEBOOK_SPECS": str(TUTORIAL)})
    assert code == 0
    [w] = json.loads(out)
    return w


def test_stored_witness_replays(tutorial_witness, monkeypatch):
    monkeypatch.setenv("RULEBOOK_SPECS", str(TUTORIAL))
    ok, why, st, g = replay_witness("pile-up", tutorial_witness, {})
    assert ok, why
    assert "illegal (rule lower)" in why and "legal" in why


def test_stale_witness_is_caught(tutorial_witness, monkeypatch):
    monkeypatch.setenv("RULEBOOK_SPECS", str(TUTORIAL))
    stale = copy.deepcopy(tutorial_witness)
    # On an empty tower any card fits under both readings: no disagreement any more.
    stale["state"]["tower"] = []
    ok, why, _, _ = replay_witness("pile-up", stale, {})
    assert not ok and "same outcome" in why


def test_game_page_replays_stored_witnesses(tmp_path, tutorial_witness, monkeypatch):
    """A game page warns (an error under -W) for a stale witness, and draws a good one."""
    monkeypatch.setenv("RULEBOOK_SPECS", str(TUTORIAL))
    wdir, pdir = tmp_path / "w", tmp_path / "p"
    wdir.mkdir()
    pdir.mkdir()
    store = {"game": "pile-up", "generated": "today", "command": "x", "params": {},
             "ambiguities": [tutorial_witness]}
    (wdir / "pile-up.json").write_text(json.dumps(store))
    (pdir / "pile-up.json").write_text(json.dumps({"generated": "today", "depth": 3,
                                                   "command": "y", "results": [
        {"invariant": "decreasing", "status": "inductive", "summary": "inductive (1-induction)",
         "detail": ""}]}))
    page = game_page("pile-up", wdir, pdir)
    assert not page.warnings, page.warnings
    assert '<div class="rulebook-witness" data-reading="equal_ok">' in page.text
    assert 'stroke="#d62728"' in page.text          # the disagreement, marked
    w = tutorial_witness                             # and it opens in the explorer
    assert (f"<http://127.0.0.1:8000/compare?game=pile-up&witness={w['reading']}:{w['a']}:"
            f"{w['b']}>`__") in page.text
    assert "**Status:** inductive (1-induction)" in page.text
    assert "not proved: no stored result" in page.text  # six_cards: honest about it
    assert "**2 invariants**: 1 inductive, 1 not proved (stored today)" in page.text
    assert ("rule", "pile-up.place.lower", anchor("rule", "pile-up.place.lower"),
            "place.lower") in page.targets
    assert "The spec has changed since" not in page.text  # no digest stored: no claim
    assert "These results are for the parameters" not in page.text
    # Proofs made under other parameters (a smaller board, say) say so.
    proofs = json.loads((pdir / "pile-up.json").read_text())
    (pdir / "pile-up.json").write_text(json.dumps({**proofs, "params": {"players": 5}}))
    assert ("These results are for the parameters ``players=5`` (the game's own: "
            "``players=2``); a proof holds for those parameters only.") in \
        game_page("pile-up", wdir, pdir).text
    store["spec_sha256"] = "0" * 16
    (wdir / "pile-up.json").write_text(json.dumps(store))
    assert "The spec has changed since these witnesses" in game_page("pile-up", wdir, pdir).text
    store["ambiguities"][0] = copy.deepcopy(tutorial_witness)
    store["ambiguities"][0]["state"]["tower"] = []
    (wdir / "pile-up.json").write_text(json.dumps(store))
    page = game_page("pile-up", wdir, pdir)
    assert any("stale witness for equal_ok" in w for w in page.warnings)


def test_a_proof_under_other_parameters_is_judged_under_them(tmp_path, monkeypatch):
    """A stored proof made at other parameters than the game's own (Clock Towers' proof at the
    bounds before issue 64) is current while the spec under those parameters is the program it
    proved: the page does not call it stale, and does when that program changed."""
    from solver.lang.digest import proof_ir_digest
    specs, wdir, pdir = tmp_path / "s", tmp_path / "w", tmp_path / "p"
    for d in (specs, wdir, pdir):
        d.mkdir()
    text = (TUTORIAL / "pile-up.rules").read_text(encoding="utf-8")
    assert "param players: 2..2 = 2;" in text
    (specs / "pile-up.rules").write_text(text.replace("param players: 2..2 = 2;",
                                                      "param players: 2..5 = 2;"))
    monkeypatch.setenv("RULEBOOK_SPECS", str(specs))
    g5 = load_game("pile-up", (), (("players", 5),))
    assert proof_ir_digest(g5) != proof_ir_digest(load_game("pile-up"))
    stored = {"generated": "today", "depth": 1, "command": "c", "params": {"players": 5},
              "spec_sha256": "0" * 16, "proof_ir_sha256": proof_ir_digest(g5), "results": []}
    (pdir / "pile-up.json").write_text(json.dumps(stored))
    stale = "The spec has changed since these proof results"
    assert stale not in game_page("pile-up", wdir, pdir).text
    (pdir / "pile-up.json").write_text(json.dumps({**stored, "proof_ir_sha256": "0" * 16}))
    assert stale in game_page("pile-up", wdir, pdir).text


def test_game_page_counts_invariants_another_stored_proof_proves_inductive(tmp_path,
                                                                            monkeypatch):
    """A second proof of the game under the same parameters (docs/proofs/<game>-*.json, part of
    the invariants proved alone) makes the invariants it proves inductive so on the page, and
    says where; one under other parameters is not used."""
    monkeypatch.setenv("RULEBOOK_SPECS", str(TUTORIAL))
    wdir, pdir = tmp_path / "w", tmp_path / "p"
    wdir.mkdir()
    pdir.mkdir()

    def proof(params, status, command):
        return json.dumps({"generated": "today", "depth": 1, "command": command,
                           "params": params, "seconds": 5, "results": [
            {"invariant": n, "status": st, "summary": st, "detail": ""}
            for n, st in status.items()]})
    (pdir / "pile-up.json").write_text(proof({"players": 2}, {"decreasing": "inductive"}, "a"))
    (pdir / "pile-up-other.json").write_text(proof({"players": 3}, {"six_cards": "inductive"},
                                                   "c"))
    text = game_page("pile-up", wdir, pdir).text
    assert "**2 invariants**: 1 inductive, 1 not proved" in text
    assert "pile-up-other.json" not in text
    (pdir / "pile-up-part.json").write_text(proof({"players": 2}, {"six_cards": "inductive",
                                                                   "decreasing": "holds"}, "b"))
    text = game_page("pile-up", wdir, pdir).text
    assert "**2 invariants**: 2 inductive" in text
    assert "by ``b`` (5 s), in :file:`docs/proofs/pile-up-part.json`" in text
    assert "**Status:** inductive — docs/proofs/pile-up-part.json" in text
    assert "not proved: no stored result" not in text


def test_game_page_keeps_a_proof_of_another_reading_apart(tmp_path, monkeypatch):
    """A stored proof made under a reading other than the spec's default (``variants``) proves
    nothing of the default rules: its invariants are not counted inductive, and the page says
    under which reading they were."""
    monkeypatch.setenv("RULEBOOK_SPECS", str(TUTORIAL))
    wdir, pdir = tmp_path / "w", tmp_path / "p"
    wdir.mkdir()
    pdir.mkdir()

    def proof(status, command, **more):
        return json.dumps({"generated": "today", "depth": 1, "command": command,
                           "params": {"players": 2}, "seconds": 5, **more, "results": [
            {"invariant": n, "status": st, "summary": st, "detail": ""}
            for n, st in status.items()]})
    (pdir / "pile-up.json").write_text(proof({"decreasing": "inductive"}, "a"))
    (pdir / "pile-up-other.json").write_text(proof({"six_cards": "inductive"}, "b",
                                                   variants=["order:any"]))
    text = game_page("pile-up", wdir, pdir).text
    assert "**2 invariants**: 1 inductive, 1 not proved" in text
    assert ("Under the reading ``order:any``, not the spec's default, ``six_cards`` was "
            "proved inductive on today by ``b`` (5 s), in :file:`docs/proofs/pile-up-other.json`"
            ": a proof of that reading's rules only.") in text
    assert ("**Status:** not proved: no stored result for this invariant; inductive under "
            "order:any (docs/proofs/pile-up-other.json).") in text


def test_rules_digest_ignores_checks_only(tmp_path):
    """A witness depends on the rules alone: an added invariant (and the def only it uses)
    leaves the rules digest alone, while any change to a rule changes it."""
    from solver.lang.digest import rules_digest, spec_digest
    from solver.engine.game import load_path
    src = (spec_dir() / "les-5-tours.rules").read_text(encoding="utf-8")

    def digests(text):
        p = tmp_path / "les-5-tours.rules"
        p.write_text(text, encoding="utf-8")
        g = load_path(p)
        return spec_digest(g), rules_digest(g)
    spec0, rules0 = digests(src)
    spec1, rules1 = digests(src + '\ndef aux(p: Player): bool = size(pile[p]) >= 0;\n'
                            'doc "aux"\ninvariant aux_inv: forall p in Player: aux(p);\n')
    assert spec1 != spec0 and rules1 == rules0
    _, rules2 = digests(src.replace("deck[c] -= 1;", "deck[c] -= 1; spoken = 0;"))
    assert rules2 != rules0


def _edited_les_5_tours(tmp_path):
    """Les 5 Tours' spec text, and a loader of edited copies of it."""
    from solver.engine.game import load_path
    src = (spec_dir() / "les-5-tours.rules").read_text(encoding="utf-8")

    def game(text):
        p = tmp_path / "les-5-tours.rules"
        p.write_text(text, encoding="utf-8")
        return load_path(p)
    return src, game


def test_proof_digest_ignores_examples_and_puzzles_only(tmp_path):
    """A proof depends on the rules and the invariants: a changed puzzle or example leaves the
    proof digest alone (so a stored proof stays current), a changed invariant or rule does
    not."""
    from solver.lang.digest import current, proof_digest, spec_digest
    src, game = _edited_les_5_tours(tmp_path)
    g0 = game(src)
    stored = {"spec_sha256": spec_digest(g0), "proof_sha256": proof_digest(g0)}
    assert "within: build_moves();" in src
    puzzle = game(src.replace("within: build_moves();", "within: build_moves() + 1;", 1))
    assert spec_digest(puzzle) != stored["spec_sha256"] and current(puzzle, stored)
    inv = game(src.replace("invariant empty_hand: (phase == reveal or",
                           "invariant empty_hand: (phase == reveal or phase == reveal or"))
    assert proof_digest(inv) != stored["proof_sha256"] and not current(inv, stored)
    rule = game(src.replace("deck[c] -= 1;", "deck[c] -= 1; spoken = 0;"))
    assert not current(rule, stored)


def test_proof_of_named_invariants_survives_an_added_invariant(tmp_path):
    """A proof made with `--invariant N --alone` read only the named invariants: another one
    added leaves it current, while a change to a named one (or to a rule) does not; a proof of
    them all is stale as soon as one is added."""
    from solver.lang.digest import current, proof_digest, spec_digest
    src, game = _edited_les_5_tours(tmp_path)
    g0 = game(src)
    named = ["empty_hand"]
    alone = {"spec_sha256": spec_digest(g0), "proof_sha256": proof_digest(g0, named),
             "proof_invariants": named}
    whole = {"spec_sha256": spec_digest(g0), "proof_sha256": proof_digest(g0)}
    added = game(src + '\ndoc "aux"\ninvariant aux_inv: forall p in Player: size(pile[p]) >= 0;\n')
    assert current(added, alone) and not current(added, whole)
    changed = game(src.replace("invariant empty_hand: (phase == reveal or",
                               "invariant empty_hand: (phase == reveal or phase == reveal or"))
    assert not current(changed, alone)
    rule = game(src.replace("deck[c] -= 1;", "deck[c] -= 1; spoken = 0;"))
    assert not current(rule, alone)
