"""An edit that only makes an action ask more (solver/lang/irshape.py, `Store.weaker`): a
stricter `requires`, a new one, a disjunct dropped with the `let` only it read.  Every move the
edited action allows, the proved version allowed with the same effect, so its proof stands and
nothing is checked again; any other edit of the action (a weaker or moved `requires`, another
effect) is checked as before, and a path on which an invariant fell is never reused."""
from __future__ import annotations

import pytest

from conftest import FIXTURES
from solver.engine.game import load_path
from solver.lang.irshape import implies, shape, strengthens
from solver.prover import seed
from solver.prover.options import ProveOptions
from solver.prover.prove import prove
from solver.prover.result import Tally
from solver.prover.store import Store

SPEC = (FIXTURES / "stored.rules").read_text(encoding="utf-8")
SPLIT = {"split_on": ("c",)}        # four cases: the groups are per case

# `follow` written with a disjunct that reads a `let` of its own, and a quantifier.
WIDE = SPEC.replace(
    "  requires behind \"b is behind a\": b < a;\n  let next = b + 1;",
    "  let far = a >= 6;\n"
    "  requires behind \"b is behind a\": far or b < a;\n"
    "  requires some \"some step fits\": exists k in 1..2 where k <= 1: b + k <= 6;\n"
    "  let next = b + 1;")

STRONGER = [
    # a conjunct more
    ("requires room \"a has room\": a <= 4;", "requires room \"a has room\": a <= 4 and b <= a;"),
    # a new requires at the same place
    ("requires room \"a has room\": a <= 4;",
     "requires room \"a has room\": a <= 4;\n  requires calm \"c is low\": c < 3;"),
    # a disjunct dropped, and the `let` only it read
    ("  let far = a >= 6;\n  requires behind \"b is behind a\": far or b < a;",
     "  requires behind \"b is behind a\": b < a;"),
    # inside a quantifier
    ("exists k in 1..2 where k <= 1: b + k <= 6;",
     "exists k in 1..2 where k <= 1: b + k <= 6 and k < a;"),
]
OTHER = [
    # weaker
    ("requires room \"a has room\": a <= 4;", "requires room \"a has room\": a <= 4 or b == 0;"),
    # stricter by arithmetic, which the skeletons do not see: checked again, never wrong
    ("requires room \"a has room\": a <= 4;", "requires room \"a has room\": a <= 2;"),
    # the same condition asked after the effect, of another state
    ("  requires room \"a has room\": a <= 4;\n  a += 2;",
     "  a += 2;\n  requires room \"a has room\": a <= 6;"),
    # another effect
    ("  a += 2;", "  a += 2;\n  b = 0;"),
    # another quantifier domain
    ("exists k in 1..2 where k <= 1", "exists k in 1..3 where k <= 1"),
]


def _game(tmp_path, text: str):
    f = tmp_path / "stored.rules"
    f.write_text(text, encoding="utf-8")
    return load_path(f)


def _shapes(tmp_path, text: str) -> dict:
    return {a.name: shape(a) for a in _game(tmp_path, text).p.actions}


def _prove(tmp_path, text: str, db=None, seeds=(), says=None):
    tally = Tally()
    res = prove(_game(tmp_path, text),
                ProveOptions(bmc_depth=2, store=None if db is None else str(db), **SPLIT),
                None if says is None else says.append, tally=tally, seeds=seeds)
    return {r.name: (r.status, r.detail) for r in res}, tally


@pytest.mark.parametrize("edit", STRONGER)
def test_a_stricter_action_strengthens_its_old_version_and_not_back(tmp_path, edit):
    old = _shapes(tmp_path, WIDE)
    new = _shapes(tmp_path, WIDE.replace(*edit))
    changed = [a for a in old if old[a] != new[a]]
    assert len(changed) == 1
    a = changed[0]
    assert strengthens(new[a], old[a]) and not strengthens(old[a], new[a])


@pytest.mark.parametrize("edit", OTHER)
def test_any_other_edit_strengthens_nothing(tmp_path, edit):
    assert edit[0] in WIDE
    old = _shapes(tmp_path, WIDE)
    new = _shapes(tmp_path, WIDE.replace(*edit))
    changed = [a for a in old if old[a] != new[a]]
    assert len(changed) == 1
    assert not strengthens(new[changed[0]], old[changed[0]])


def test_the_implication_rules():
    a, b, c = ["atom", "a"], ["atom", "b"], ["atom", "c"]
    assert implies(["and", [a, b]], a) and not implies(a, ["and", [a, b]])
    assert implies(a, ["or", [a, b]]) and not implies(["or", [a, b]], a)
    assert implies(["or", [["and", [a, c]], ["and", [c, a]]]], a)
    assert implies(["not", ["or", [a, b]]], ["not", a]) and not implies(["not", a], ["not", b])
    assert implies(["exists", "c0", "d", None, ["and", [a, b]]], ["exists", "c0", "d", None, a])
    assert not implies(["exists", "c0", "d", None, a], ["exists", "c0", "e", None, a])
    assert implies(["and", []], ["and", []]) and not implies(["and", []], a)


@pytest.mark.parametrize("edit", STRONGER)
def test_a_stricter_action_is_not_checked_again(tmp_path, edit):
    db = tmp_path / "p.sqlite"
    first, t1 = _prove(tmp_path, WIDE, db)
    assert {s for s, _ in first.values()} == {"inductive"}
    said: list = []
    got, t = _prove(tmp_path, WIDE.replace(*edit), db, says=said)
    assert (t.paths, t.reused, t.checked, t.built) == (t1.paths, t1.paths, 0, 0)
    assert got == _prove(tmp_path, WIDE.replace(*edit))[0]
    assert any("only asks more than a proved version" in s for s in said)


@pytest.mark.parametrize("edit", OTHER)
def test_any_other_edit_is_checked_again(tmp_path, edit):
    db = tmp_path / "p.sqlite"
    _, t1 = _prove(tmp_path, WIDE, db)
    got, t = _prove(tmp_path, WIDE.replace(*edit), db)
    assert t.checked > 0 and t.reused < t.paths
    assert got == _prove(tmp_path, WIDE.replace(*edit))[0]


def test_a_path_where_an_invariant_fell_is_checked_again(tmp_path):
    # `up` adds 1: a_even falls on it.  A stricter `up` must be checked again, whatever
    # the store holds of the version before it (here a_even still falls).
    broken = WIDE.replace("  a += 2;", "  a += 1;")
    db = tmp_path / "p.sqlite"
    first, _ = _prove(tmp_path, broken, db)
    assert first["a_even"][0] != "inductive"
    stricter = broken.replace(*STRONGER[0])
    got, t = _prove(tmp_path, stricter, db)
    assert t.checked > 0
    assert got == _prove(tmp_path, stricter)[0] and got["a_even"][0] != "inductive"


def test_a_seed_carries_the_shapes_and_a_fresh_store_reuses_it(tmp_path):
    db = tmp_path / "p.sqlite"
    _, t1 = _prove(tmp_path, WIDE, db)
    g = _game(tmp_path, WIDE)
    options = ProveOptions(store=str(db), **SPLIT)
    invs = [i.name for i in g.p.invariants if not i.transition]
    props = [i.name for i in g.p.invariants if i.transition]
    s = seed.seed_of(Store(db, g, options, print), g, options, invs, invs, props)
    assert len(s["shapes"]) == len(g.p.actions)
    edited = WIDE.replace(*STRONGER[2])
    fresh = tmp_path / "fresh.sqlite"
    got, t = _prove(tmp_path, edited, fresh, seeds=[("docs/proofs/x.json", s)])
    assert (t.reused, t.checked, t.built) == (t1.paths, 0, 0)
    assert got == _prove(tmp_path, edited)[0]
    # The seed written now names the edited action's own digest: a clone of it needs no
    # shape to reuse it.
    g2 = _game(tmp_path, edited)
    s2 = seed.seed_of(Store(fresh, g2, options, print), g2, options, invs, invs, props)
    assert set(s2["groups"]) == set(s2["shapes"]) != set(s["groups"])
    assert all(None not in v for v in s2["groups"].values())
