"""The digests of the checked program (`solver.lang.irdigest`): a stored proof or witness stays
current through an edit that changes no rule as the checker lowers it (a doc string, a layout,
a local's name, a reading whose chosen option lowers to the old rules, a puzzle, an example),
and goes stale on any change to what a move or an invariant computes.  Each case is an edit of
les-5-tours' spec text; the text digests are checked to see every one of them, so that only
the program digest can keep a result current."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from functools import lru_cache
from types import SimpleNamespace

import pytest

from conftest import ROOT
from solver.engine.evaluate import const_value
from solver.lang.check import check_program
from solver.lang.sources import load_files
from solver.lang.digest import (current, proof_digest, proof_ir_digest, rules_digest,
                                rules_ir_digest, spec_digest)
from solver.lang.resources import spec_dir

SRC = (spec_dir() / "les-5-tours.rules").read_text(encoding="utf-8")


@lru_cache(maxsize=16)
def _checked(name: str, variants=(), params=()):
    """What the digests read of a game (its checked program and symbols), without compiling
    it for the engine (six times faster)."""
    files, readings = load_files(name, tuple(variants))
    p, symbols = check_program(files, dict(params), readings, const_value)
    return SimpleNamespace(p=p, symbols=symbols)


def _edit(*pairs: tuple[str, str]) -> str:
    text = SRC
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new)
    return text


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    """A loader of edited copies of les-5-tours (each in a file of its own), and the stored
    proof and witness records of the spec as it is."""
    where = tmp_path_factory.mktemp("digest")
    count = iter(range(1000))

    def game(text, *variants):
        d = where / str(next(count))
        d.mkdir()
        p = d / "les-5-tours.rules"
        p.write_text(text, encoding="utf-8")
        return _checked(str(p), tuple(variants))
    g0 = game(SRC)
    proof = {"spec_sha256": spec_digest(g0), "proof_sha256": proof_digest(g0),
             "proof_ir_sha256": proof_ir_digest(g0)}
    witness = {"spec_sha256": spec_digest(g0), "rules_sha256": rules_digest(g0),
               "rules_ir_sha256": rules_ir_digest(g0)}
    return game, proof, witness


# ---- edits that change no lowered rule ---------------------------------------------------------

DOC = [  # on a def the actions reach, on an action, on an invariant
    ('doc "Nothing goes on a 0, the top of a tower (not even a 9)."',
     'doc "A 0 closes a tower: nothing more goes on it."'),
    ('doc "Pass instead of bidding."', 'doc "Pass: bid nothing this round."'),
    ('doc "Outside a build the hand is empty."', 'doc "The hand is empty between builds."'),
]
LAYOUT = [
    ("def decreasing(t: Tower, v: Value): bool = len(t) == 0 or top(t) == 8 or v == 9 or "
     "v < top(t);",
     "def decreasing(t: Tower, v: Value): bool =\n    len(t) == 0\n    or top(t) == 8\n"
     "    or v == 9   or v < top(t) ;"),
    ("  deck[c] -= 1;\n  market[c] += 1;", "  deck[c]  -=  1;   market[c] += 1;\n\n"),
    ("invariant empty_hand: (phase == reveal or phase == bidding or phase == over)",
     "invariant empty_hand:\n  (phase == reveal or phase == bidding or phase == over)\n "),
]
LOCALS = [  # a def's parameter, a quantifier's binder, an action's parameter, a message
    ("def decreasing(t: Tower, v: Value): bool = len(t) == 0 or top(t) == 8 or v == 9 or "
     "v < top(t);",
     "def decreasing(tower: Tower, value: Value): bool = len(tower) == 0 or top(tower) == 8 "
     "or value == 9 or value < top(tower);"),
    ("forall i in 1..(len(t) - 1): pair_ok(t[i - 1], t[i])",
     "forall k in 1..(len(t) - 1): pair_ok(t[k - 1], t[k])"),
    ("action demolish(s in Style) {", "action demolish(style in Style) {"),
    ('requires once "at most one card is demolished per build"',
     'requires once "one demolition per build, no more"'),
]
# The demolish body names its parameter `s` throughout: renamed with it.
_DEMOLISH = SRC[SRC.index("action demolish(s in Style) {"):]
_DEMOLISH = _DEMOLISH[:_DEMOLISH.index("\n}\n") + 3]
LOCALS[2] = (_DEMOLISH, _DEMOLISH.replace("(s in Style)", "(style in Style)")
             .replace("[s]", "[style]").replace("(s,", "(style,").replace(", s,", ", style,"))
# A new reading whose default is today's rule: a guard and a branch that its default folds away.
READING = [
    ("# ---- the state ---",
     'doc "May an undo wait for a hand that can never be built?"\n'
     "reading undo_when = stuck {\n"
     '  stuck "Undo only when no card of the hand fits now (default).";\n'
     '  early "Undo at any time during the build.";\n'
     "}\n\n# ---- the state ---"),
    ('requires stuck "a build is undone only when the rest of the hand cannot be placed, in any '
     'order, even with the demolition if it is still unused": ',
     'requires stuck "a build is undone only when the rest of the hand cannot be placed, in any '
     'order, even with the demolition if it is still unused": undo_when == early or '),
    ("  if undo_bidding == reopen { spoken = (turn - first + players) % players; } "
     "else { spoken -= 1; }\n}",
     "  if undo_when == early { spoken = 0; } else {\n"
     "  if undo_bidding == reopen { spoken = (turn - first + players) % players; } "
     "else { spoken -= 1; } }\n}"),
]
CHECKS_ONLY = [  # a puzzle's bound, an example's expectation
    ("within: build_moves();", "within: build_moves() + 1;"),
    ("  expect main_bonus(0) == 6;\n", ""),
]


@pytest.mark.parametrize("edit", [DOC, LAYOUT, LOCALS, READING, CHECKS_ONLY],
                         ids=["doc", "layout", "locals", "reading", "puzzle-example"])
def test_an_edit_that_lowers_to_the_same_program_keeps_proofs_and_witnesses(spec, edit):
    """The text digests see the edit (the old rule alone would call the results stale); the
    program digests do not, so the stored proof and witnesses stay current."""
    game, proof, witness = spec
    g = game(_edit(*edit))
    assert spec_digest(g) != proof["spec_sha256"]
    if edit is not CHECKS_ONLY:
        assert proof_digest(g) != proof["proof_sha256"]
        assert rules_digest(g) != witness["rules_sha256"]
    assert proof_ir_digest(g) == proof["proof_ir_sha256"] and current(g, proof)
    if edit is not READING:       # a new reading asks for its own witness
        assert current(g, witness)     # by rules_ir_sha256: the text digests differ


def test_a_new_reading_under_its_other_option_is_another_program(spec):
    """The reading's guard and branch are in the program under the option that is not the
    default (so folding, not ignoring them, keeps the default current), and the witnesses
    (which compare the options) go stale when the reading is added."""
    game, proof, witness = spec
    g = game(_edit(*READING), "undo_when:early")
    assert not current(g, proof)
    g = game(_edit(*READING))
    assert not current(g, witness)


# ---- edits that change what a move or an invariant computes ----------------------------------

STALE = {
    # in an action: a constant, a bound, a guard removed, an operator
    "action-constant": ("if size(market) == 5 or", "if size(market) == 4 or"),
    "action-enum": ("{ phase = bidding; }", "{ phase = taking; }"),
    "init-constant": ("  cap = table p in Player: MOST_BID + 1;\n}\n\ndef standing",
                      "  cap = table p in Player: MOST_BID;\n}\n\ndef standing"),
    "action-bound": ("action bid(n in 0..(MOST_BID))", "action bid(n in 0..(MOST_BID - 1))"),
    "state-bound": ("  spoken: 0..5;", "  spoken: 0..6;"),
    "action-guard": ('  requires once "at most one card is demolished per build": '
                     "not demolished;\n", ""),
    "action-operator": ("requires market_size \"no one may bid more cards than the market "
                        "holds\": n <= bid_limit();",
                        "requires market_size \"no one may bid more cards than the market "
                        "holds\": n < bid_limit();"),
    # in a def an action reaches (build -> stacking -> decreasing; undo searches build)
    "def-operator": ("or v == 9 or v < top(t);", "or v == 9 or v <= top(t);"),
    "def-constant": ("top(t) == 8 or v == 9", "top(t) == 7 or v == 9"),
    # in an invariant, and in a def only the invariants reach
    "invariant-operator": ("forall c in Card: held(c) == copies(c);",
                           "forall c in Card: held(c) >= copies(c);"),
    "invariant-constant": ("forall i in 0..(len(towers[p][s]) - 2)",
                           "forall i in 0..(len(towers[p][s]) - 3)"),
    "invariant-def": ("(below == 8 or above == 9", "(below == 9 or above == 9"),
}


@pytest.mark.parametrize("name", list(STALE))
def test_a_changed_rule_or_invariant_makes_the_proof_stale(spec, name):
    game, proof, witness = spec
    g = game(_edit(STALE[name]))
    assert not current(g, proof)
    if not name.startswith("invariant"):
        assert not current(g, witness)
    else:                          # witnesses do not read the invariants
        assert current(g, witness)


def test_a_rule_only_a_reading_s_other_option_reaches_stales_witnesses_not_proofs(spec):
    """Under the default `zero_bid = nothing` the guard `zero_bid == nothing or n > 0` is
    true: the proof read nothing of `n > 0`, the witnesses (which run both options) did."""
    game, proof, witness = spec
    g = game(_edit(("zero_bid == nothing or n > 0;", "zero_bid == nothing or n > 1;")))
    assert current(g, proof)
    assert not current(g, witness)


# A `let` in the branch that the default `zero_bid = nothing` folds away: the checker gives it a
# slot of bid's frame all the same, so the frame grows (and, in a longer action, the slots of the
# live code after it move).
LET_IN_DEAD_BRANCH = ("zero_bid == nothing or n > 0;",
                      "zero_bid == nothing or (let m = n in m > 0);")


def test_a_slot_in_a_branch_the_reading_folds_away_keeps_the_digests(spec):
    """Actions are hashed with their frame slots named in the order the folded traversal meets
    them, and without their frame's size (`irdigest.SlotCanon`): the proof under the default
    stays current, and so do the per-path keys (the part digests).  The digests as made before
    (``legacy``) do see the edit; under the option that reads the branch, so do today's."""
    from solver.lang.irdigest import part_digests
    game, proof, _ = spec
    g0, g = game(SRC), game(_edit(LET_IN_DEAD_BRANCH))
    assert proof_ir_digest(g, legacy=True) != proof_ir_digest(g0, legacy=True)
    assert part_digests(g.p, legacy=True)["action:bid"] \
        != part_digests(g0.p, legacy=True)["action:bid"]
    assert proof_ir_digest(g) == proof["proof_ir_sha256"] and current(g, proof)
    assert part_digests(g.p) == part_digests(g0.p)
    other = game(_edit(LET_IN_DEAD_BRANCH), "zero_bid:pass")
    assert part_digests(other.p)["action:bid"] \
        != part_digests(game(SRC, "zero_bid:pass").p)["action:bid"]


def test_a_proof_of_named_invariants_ignores_the_others(spec):
    game, _, _ = spec
    g0 = game(SRC)
    alone = {"spec_sha256": "0", "proof_invariants": ["empty_hand"],
             "proof_ir_sha256": proof_ir_digest(g0, ["empty_hand"])}
    assert current(game(_edit(STALE["invariant-operator"])), alone)
    assert not current(game(_edit(("(phase == reveal or phase == bidding or phase == over) "
                                    "implies size(hand) == 0",
                                    "(phase == reveal or phase == bidding) "
                                    "implies size(hand) == 0"))), alone)


def test_the_program_digests_are_the_same_in_another_process(spec):
    """No `hash()` of a string or `id()` reaches a digest: a process with another hash seed
    agrees with this one."""
    game, proof, witness = spec
    code = ("import json; from types import SimpleNamespace; "
            "from solver.engine.evaluate import const_value; "
            "from solver.lang.check import check_program; "
            "from solver.lang.sources import load_files; "
            "from solver.lang.digest import proof_ir_digest, rules_ir_digest; "
            "files, readings = load_files('les-5-tours', ()); "
            "g = SimpleNamespace(**dict(zip(('p', 'symbols'), "
            "check_program(files, {}, readings, const_value)))); "
            "print(json.dumps([proof_ir_digest(g), rules_ir_digest(g)]))")
    seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True, timeout=120).stdout
    assert json.loads(out) == [proof["proof_ir_sha256"], witness["rules_ir_sha256"]]


@pytest.mark.parametrize("path", sorted((ROOT / "docs" / "proofs").glob("*.json")),
                         ids=lambda p: p.stem)
def test_every_stored_proof_names_the_program_it_proved(path):
    """Each stored proof carries the program digest of the spec as it is (under its parameters
    and, proved alone, its invariants): `docs/refresh.py --restamp` was run after the digest
    last changed, so the next edit that keeps the program keeps the proof."""
    stored = json.loads(path.read_text(encoding="utf-8"))
    g = _checked(stored["game"], tuple(stored.get("variants", ())),
                 tuple(sorted(stored["params"].items())))
    assert stored["proof_ir_sha256"] == proof_ir_digest(g, stored.get("proof_invariants"))


def _refresh(tmp_path, monkeypatch):
    """docs/refresh.py as a module, its stored results read from and written to ``tmp_path``
    (empty ``proofs`` and ``witnesses`` folders)."""
    import importlib.util
    spec_ = importlib.util.spec_from_file_location("refresh", ROOT / "docs" / "refresh.py")
    refresh = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(refresh)
    monkeypatch.setattr(refresh, "HERE", tmp_path)
    (tmp_path / "proofs").mkdir()
    (tmp_path / "witnesses").mkdir()
    return refresh


def test_restamp_adds_the_program_digest_to_current_results_only(tmp_path, monkeypatch,
                                                                   capsys):
    """`docs/refresh.py --restamp` adds ``proof_ir_sha256`` to a stored proof that is current
    by its text digest, after it, and leaves a stale one alone, named, with exit status 1."""
    refresh = _refresh(tmp_path, monkeypatch)
    g = _checked("les-5-tours", (), (("players", 2),))
    fresh = {"game": "les-5-tours", "spec_sha256": "0" * 16,
             "proof_sha256": proof_digest(g), "params": {"players": 2}, "results": []}
    stale = {**fresh, "proof_sha256": "1" * 16}
    (tmp_path / "proofs" / "fresh.json").write_text(json.dumps(fresh), encoding="utf-8")
    (tmp_path / "proofs" / "stale.json").write_text(json.dumps(stale), encoding="utf-8")
    assert refresh.main(["--restamp"]) == 1
    out = json.loads((tmp_path / "proofs" / "fresh.json").read_text(encoding="utf-8"))
    assert list(out) == ["game", "spec_sha256", "proof_sha256", "proof_ir_sha256", "params",
                         "results"]
    assert out["proof_ir_sha256"] == proof_ir_digest(g)
    assert json.loads((tmp_path / "proofs" / "stale.json").read_text(encoding="utf-8")) == stale
    assert f"stale, not re-stamped: {tmp_path.name}/proofs/stale.json" in capsys.readouterr().err


def test_restamp_carries_a_proof_current_by_the_old_program_digest(tmp_path, monkeypatch,
                                                                     capsys):
    """A stored proof whose ``proof_ir_sha256`` is the program digest as made before
    `SlotCanon` is current: `--restamp` writes today's digest, and its seed's action digests
    (the keys of its groups and shapes) made anew; other keys and digests it does not know are
    kept.  A proof of neither digest is stale, left alone."""
    from solver.lang.irdigest import part_digests
    refresh = _refresh(tmp_path, monkeypatch)
    g = _checked("les-5-tours", (), (("players", 2),))
    old, new = part_digests(g.p, legacy=True), part_digests(g.p)
    assert old["action:bid"] != new["action:bid"]
    seed = {"format": "1", "context": "c" * 16, "candidates": [old["invariant:empty_hand"]],
            "groups": {old["action:bid"]: [3, None], "f" * 16: [1, 1]},
            "shapes": {old["action:bid"]: {"relaxed": "r"}}}
    stored = {"game": "les-5-tours", "spec_sha256": "0" * 16, "proof_sha256": "1" * 16,
              "proof_ir_sha256": proof_ir_digest(g, legacy=True), "params": {"players": 2},
              "results": [], "store_seed": seed}
    stale = {**stored, "proof_ir_sha256": "2" * 16}
    (tmp_path / "proofs" / "old.json").write_text(json.dumps(stored), encoding="utf-8")
    (tmp_path / "proofs" / "stale.json").write_text(json.dumps(stale), encoding="utf-8")
    assert refresh.main(["--restamp"]) == 1
    out = json.loads((tmp_path / "proofs" / "old.json").read_text(encoding="utf-8"))
    assert out["proof_ir_sha256"] == proof_ir_digest(g) != stored["proof_ir_sha256"]
    assert out["store_seed"] == {**seed, "groups": {new["action:bid"]: [3, None],
                                                    "f" * 16: [1, 1]},
                                 "shapes": {new["action:bid"]: {"relaxed": "r"}}}
    assert json.loads((tmp_path / "proofs" / "stale.json").read_text(encoding="utf-8")) == stale
    assert f"stale, not re-stamped: {tmp_path.name}/proofs/stale.json" in capsys.readouterr().err


def test_part_digests_change_only_where_an_edit_reaches(spec):
    """Per part (the first piece of a per-path key): a changed def changes the actions that
    reach it and no other part; a changed action itself and the actions that search it; a doc
    string nothing."""
    from solver.lang.irdigest import part_digests
    game, _, _ = spec
    base = part_digests(game(SRC).p)

    def changed(*pairs):
        new = part_digests(game(_edit(*pairs)).p)
        assert set(new) == set(base)
        return {k for k in base if new[k] != base[k]}
    assert changed(STALE["def-operator"]) == {"action:build", "action:undo"}
    # undo searches demolish and build (`rest_buildable`): their edits reach it too.
    assert changed(STALE["action-guard"]) == {"action:demolish", "action:undo"}
    assert changed(STALE["invariant-def"]) == {"invariant:legal_towers",
                                                "invariant:legal_snapshot"}
    assert changed(*DOC) == set()
