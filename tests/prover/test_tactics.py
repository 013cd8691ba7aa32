"""The tactics the prover picks when given none (solver/prover/tactics.py): the passes the
rules call for, the next only where z3 gave up on the last, each building and checking only
the actions the ones before left open; a group held under one abstraction of the step is held
under all (the store's rows `anywhere`)."""
from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, run_cli
from solver.engine.game import load_game, load_path
from solver.prover import tactics, tiers
from solver.prover.options import ProveOptions
from solver.prover.prove import prove
from solver.prover.result import Tally
from solver.engine.symbolic import Unknown

SPEC = FIXTURES / "stored.rules"


def _prove(db, heard=None, **kw):
    tally = Tally()
    res = prove(load_path(SPEC), ProveOptions(bmc_depth=1, store=str(db), **kw),
                None if heard is None else heard.append, tally=tally)
    return {r.name: r.status for r in res}, tally


@pytest.mark.parametrize("game, rungs", [
    ("torres", ["the plain step", "the facts of connected regions",
                "the facts of connected regions, 60 s a query"]),
    ("les-5-tours", ["the plain step", "the plain step, 60 s a query"]),
])
def test_the_ladder_follows_the_rules_features(game, rungs):
    g = load_game(game)
    got = tactics.ladder(g, ProveOptions(auto=True, only=("x",)))
    assert [name for name, _ in got] == rungs
    first = got[0][1]
    assert (first.split_lengths, first.symmetric, first.step_timeout_ms, first.auto,
            first.only) == (True, True, tactics.STEP_TIMEOUT_MS, False, ("x",))
    assert all(o.region_facts for _, o in got[1:]) == (game == "torres")
    assert got[-1][1].step_timeout_ms == tactics.LONG_TIMEOUT_MS
    assert not any(o.symmetric for _, o in tactics.ladder(g, ProveOptions(auto=True),
                                                          remote=True))


def test_towers_gets_exact_reals_last():
    f = tactics.features(load_game("towers").p)
    assert f.reals
    names = [n for n, _ in tactics.ladder(load_game("towers"), ProveOptions(auto=True))]
    assert names[0] == "the plain step" and names[-2] == "exact reals"


@pytest.mark.parametrize("game, params, fields", [
    ("towers", (("levels", 2), ("reach", 0)), ("block",)),
    ("les-5-tours", (), ()), ("tours-de-pouvoir", (), ()), ("torres", (), ()),
    ("clock-towers", (), ()),
])
def test_the_ladder_splits_on_the_keys_of_constant_tables(game, params, fields):
    """Towers' actions read their block's entries of constant tables (`FIRST[block]`, and
    `SHAPE[s]` in defs called with the block): every rung splits the step on `block`, as the
    stored proofs' `--split-on block` did; the other games get no split, so their stored
    proofs' keys are those of a ladder without one.  A split given by the caller stays."""
    g = load_game(game, (), params)
    assert tactics.pinning_fields(g.p) == fields
    assert {o.split_on for _, o in tactics.ladder(g, ProveOptions(auto=True))} == {fields}
    assert {o.split_on for _, o in tactics.ladder(g, ProveOptions(auto=True,
                                                                  split_on=("turn",)))} \
        == {("turn",)}


def test_a_group_held_under_one_abstraction_is_held_under_another(tmp_path):
    db = tmp_path / "p.sqlite"
    first, t1 = _prove(db, opaque_fix=True)
    assert set(first.values()) == {"inductive"} and t1.checked > 0
    again, t = _prove(db)                   # the plain step: other keys, the same proof
    assert again == first and (t.paths, t.reused, t.checked, t.built) == \
        (t1.paths, t1.paths, 0, 0)
    # and back: the plain run's own groups (a fresh store) serve the abstraction
    fresh = tmp_path / "q.sqlite"
    _prove(fresh)
    _, t = _prove(fresh, exact_reals=True)
    assert t.checked == 0 and t.reused == t1.paths


def test_a_second_pass_takes_only_what_the_first_left_open(tmp_path, monkeypatch):
    # z3 "gives up" on every path of `up` in the plain step (patched); the ladder's second
    # pass (here: fixpoints as uninterpreted functions) builds and checks `up` alone.
    g = load_path(SPEC)
    base = tactics.ladder(g, ProveOptions(auto=True))[0][1]
    monkeypatch.setattr(tactics, "ladder", lambda game, options, remote=False, split=None: [
        ("first", tactics.replace(base, store=options.store)),
        ("second", tactics.replace(base, store=options.store, opaque_fix=True))])
    real = tiers.step_each
    state = {"pass": None}

    def step_each(*a, **k):
        if state["pass"] == "first" and a[9][4][0] == "up":
            raise Unknown("patched")
        return real(*a, **k)
    monkeypatch.setattr(tiers, "step_each", step_each)
    heard: list = []

    def hear(m, *a, **k):
        heard.append(m)
        if m.startswith("tactics: pass"):
            state["pass"] = m.split(": ")[2].split(" (")[0]
    hear.takes_counts = True
    db = tmp_path / "p.sqlite"
    tally = Tally()
    res = prove(g, ProveOptions(bmc_depth=1, store=str(db), auto=True), hear, tally=tally)
    assert {r.status for r in res} == {"inductive"}
    gave = [h for h in heard if h.startswith("tactics: z3 gave up")]
    assert len(gave) == 1 and "a_even" in gave[0] and "under first" in gave[0]
    second = heard[heard.index(gave[0]):]
    assert any("1 action paths of 1 of 3 actions" in h for h in second), second
    # Run again: every group held now, under one pass or the other: nothing built.
    t2 = Tally()
    prove(load_path(SPEC), ProveOptions(bmc_depth=1, store=str(db), auto=True), tally=t2)
    assert (t2.checked, t2.built) == (0, 0)


def test_the_command_picks_its_tactics_with_no_flag_and_not_with_one(tmp_path):
    db = tmp_path / "p.sqlite"
    r = run_cli("prove", str(SPEC), "--depth", "1", "--store", str(db), "--progress")
    assert r.returncode == 0, r.stderr
    assert "tactics: pass 1 of at most 2: the plain step" in r.stderr
    assert "tactics: the plain step\n" in r.stdout
    r = run_cli("prove", str(SPEC), "--depth", "1", "--store", str(db), "--json")
    assert json.loads(r.stdout)["passes"] == ["the plain step"]
    r = run_cli("prove", str(SPEC), "--depth", "1", "--store", str(db), "--progress",
                "--step-timeout", "5")
    assert r.returncode == 0 and "tactics:" not in r.stderr


# ---- where a re-proof starts: the pass that proved an edited action before ------------------

F, T = False, True


def test_the_first_rung_is_the_latest_that_proved_an_action_left_to_check():
    rungs = tactics.ladder(load_game("torres"), ProveOptions(auto=True))
    plain, regions = [F, F, F], [F, T, T]
    assert tactics.first_rung(rungs, {"take": [regions]}, ["take"]) == 1
    assert tactics.first_rung(rungs, {"take": [plain]}, ["take"]) == 0
    # held under the plain step in one case and the region facts in another: the latter
    assert tactics.first_rung(rungs, {"take": [plain, regions]}, ["take"]) == 1
    # two actions left: the later pass of the two
    assert tactics.first_rung(rungs, {"take": [plain], "move": [regions]},
                              ["take", "move"]) == 1
    # an action with no hint, or a hint of no pass of this ladder: from the start
    assert tactics.first_rung(rungs, {"take": [regions]}, ["take", "move"]) == 0
    assert tactics.first_rung(rungs, {"take": [[T, F, F]]}, ["take"]) == 0


def _patched(monkeypatch, gives_up: str):
    """A two-pass ladder, "first" (the plain step) and "second" (fixpoints as uninterpreted
    functions), where z3 "gives up" on every path of `up` under the pass ``gives_up``; the
    number of `up`'s queries asked in each pass."""
    base = tactics.ladder(load_path(SPEC), ProveOptions(auto=True))[0][1]
    monkeypatch.setattr(tactics, "ladder", lambda game, options, remote=False, split=None: [
        ("first", tactics.replace(base, store=options.store)),
        ("second", tactics.replace(base, store=options.store, opaque_fix=True))])
    real = tiers.step_each
    state = {"pass": None, "up": {}}

    def step_each(*a, **k):
        if a[9][4][0] == "up":
            state["up"][state["pass"]] = state["up"].get(state["pass"], 0) + 1
            if state["pass"] == gives_up:
                raise Unknown("patched")
        return real(*a, **k)
    monkeypatch.setattr(tiers, "step_each", step_each)

    def hear(m, *a, **k):
        heard.append(m)
        if m.startswith("tactics: pass"):
            state["pass"] = m.split(": ")[2].split(" (")[0]
    hear.takes_counts = True
    heard: list = []
    return base, state, hear, heard


def _edited(tmp_path):
    """The fixture with `up`'s requires written otherwise: the same rule, another program."""
    text = SPEC.read_text(encoding="utf-8")
    assert "a <= 4;" in text
    path = tmp_path / "stored.rules"
    path.write_text(text.replace("a <= 4;", "a + 2 <= 6;"), encoding="utf-8")
    return load_path(path)


def _seeded_run(g, db, seeds, hear):
    tally = Tally()
    res = prove(g, ProveOptions(bmc_depth=1, store=str(db), auto=True), hear, tally=tally,
                seeds=seeds)
    return {r.name: r.status for r in res}, tally


def test_an_edited_action_is_tried_first_under_the_pass_that_proved_it(tmp_path, monkeypatch):
    from solver.prover import seed as seeding
    from solver.prover.store import Store
    base, state, hear, heard = _patched(monkeypatch, gives_up="first")
    db = tmp_path / "p.sqlite"
    first, t1 = _seeded_run(load_path(SPEC), db, [], hear)
    assert set(first.values()) == {"inductive"} and t1.passes == ("first", "second")
    invs = ["a_even", "b_le_a"]
    s = seeding.seed_of(Store(db, load_path(SPEC), tactics.replace(base, store=str(db)),
                              print), load_path(SPEC), base, invs, invs, ["a_grows"])
    assert {a: r["under"] for a, r in s["rungs"].items()} == {
        "up": [[F, T, F]], "follow": [[F, F, F]], "lap": [[F, F, F]]}
    # `up` edited: the re-proof from the seed starts where `up` was proved, and ends there.
    state["up"].clear()
    heard.clear()
    again, t = _seeded_run(_edited(tmp_path), tmp_path / "q.sqlite", [("seed", s)], hear)
    assert again == first and t.passes == ("second",), heard
    assert "tactics: up left to check, proved under second by the stored proofs: tried " \
           "there first" in heard
    assert "first" not in state["up"] and state["up"]["second"] > 0
    assert 0 < t.checked < t.paths and t.reused == t.paths - t.checked
    # Without the seed's rungs, the same re-proof climbs from the plain step.
    del s["rungs"]
    state["up"].clear()
    plain, t = _seeded_run(_edited(tmp_path), tmp_path / "r.sqlite", [("seed", s)], hear)
    assert plain == first and t.passes == ("first", "second") and state["up"]["first"] > 0


def test_a_hint_that_fails_falls_back_to_the_whole_ladder(tmp_path, monkeypatch):
    from solver.prover import seed as seeding
    from solver.prover.store import Store
    # `up` was proved under the second pass; edited, it now gives up there, not under the
    # first: the hinted pass leaves it, the ladder from its start proves it.
    base, state, hear, heard = _patched(monkeypatch, gives_up="first")
    db = tmp_path / "p.sqlite"
    _seeded_run(load_path(SPEC), db, [], hear)
    invs = ["a_even", "b_le_a"]
    s = seeding.seed_of(Store(db, load_path(SPEC), tactics.replace(base, store=str(db)),
                              print), load_path(SPEC), base, invs, invs, ["a_grows"])
    base, state, hear, heard = _patched(monkeypatch, gives_up="second")
    got, t = _seeded_run(_edited(tmp_path), tmp_path / "q.sqlite", [("seed", s)], hear)
    assert set(got.values()) == {"inductive"}
    assert t.passes == ("second", "first"), heard
    assert any(h.startswith("tactics: a_even") and "the whole ladder follows, from first" in h
               for h in heard), heard


def test_the_stored_torres_proofs_start_an_edited_action_under_the_region_facts(tmp_path):
    # Torres 8x8 was proved with --region-facts: its seed says so of every action, and an
    # edited one is tried there first (the plain step took over 23 minutes to build its
    # state, docs/prover.md).  The seeds of the other boards are of another context.
    from solver.cli.seeding import seeds
    from solver.prover import seed as seeding
    from solver.prover.store import Store
    g = load_game("torres")
    rungs = tactics.ladder(g, ProveOptions(auto=True))
    store = Store(tmp_path / "s.sqlite", g, ProveOptions(auto=True), print)
    hints = seeding.hints(store, seeds("torres"))
    assert hints == {a.name: [[F, T, T]] for a in g.p.actions}
    assert rungs[tactics.first_rung(rungs, hints, ["take"])][0] == \
        "the facts of connected regions"


def test_every_stored_proof_is_made_with_no_tactic_flag():
    # Issue 63: the prover picks its tactics; no shipped proof needs an expert's flag.
    from conftest import ROOT
    from solver.cli.parser import build_parser, picks_tactics
    files = sorted((ROOT / "docs" / "proofs").glob("*.json"))
    assert len(files) >= 10
    for f in files:
        command = json.loads(f.read_text(encoding="utf-8"))["command"]
        assert picks_tactics(build_parser().parse_args(command.split()[1:])), (f.name, command)
