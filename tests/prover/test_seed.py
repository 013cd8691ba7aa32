"""Filling the proof store from what is already proved (solver/prover/seed.py): a journal's
verdicts imported (`rulebook prove ... --import-journal FILE`), and the compact seed a stored
proof carries planted; a re-proof then checks nothing, and after an edit of one action only
that action's paths.  A journal or seed of another run is refused, saying why."""
from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import FIXTURES, run_cli
from solver.engine.game import load_path
from solver.lang.digest import proof_digest, proof_ir_digest
from solver.prover import seed
from solver.prover.options import ProveOptions
from solver.prover.prove import prove
from solver.prover.result import Tally
from solver.prover.store import Store

SPEC = (FIXTURES / "stored.rules").read_text(encoding="utf-8")
# Four cases (one per value of c): the journal's places are within each case.
SPLIT = {"split_on": ("c",)}
EDIT = ("    c = 0;", "    c = 1;")            # lap's second path
DOC = ('doc "b follows a."', 'doc "b follows a, one step at a time."')


def _game(tmp_path, text: str = SPEC):
    f = tmp_path / "stored.rules"
    f.write_text(text, encoding="utf-8")
    return load_path(f)


def _prove(tmp_path, text: str = SPEC, seeds=(), **kw):
    tally = Tally()
    res = prove(_game(tmp_path, text), ProveOptions(bmc_depth=2, **{**SPLIT, **kw}),
                tally=tally, seeds=seeds)
    return {r.name: (r.status, r.detail) for r in res}, tally


def _journal(tmp_path, text: str = SPEC):
    """A journal of a proof of ``text``, and that proof's verdicts and tally."""
    path = tmp_path / "run.jsonl"
    got, tally = _prove(tmp_path, text, journal=str(path))
    return path, got, tally


def _import(tmp_path, journal, db, text: str = SPEC, proofs=(), **kw):
    g = _game(tmp_path, text)
    options = ProveOptions(store=str(db), **{**SPLIT, **kw})
    return seed.import_journal(journal, g, options, Store(db, g, options, print), proofs,
                               print)


def test_an_imported_journal_leaves_nothing_to_check_or_build(tmp_path):
    journal, first, t1 = _journal(tmp_path)
    assert t1.checked == t1.paths > 0
    db = tmp_path / "p.sqlite"
    got = _import(tmp_path, journal, db)
    assert got["why"] == "its run key is this run's" and got["cases"] == 4
    # Every path of the step and of the transition property; one group per action and case.
    assert got["paths"] == t1.paths and got["groups"] == got["transition_groups"] == 3 * 4
    again, t = _prove(tmp_path, store=str(db))
    assert again == first
    assert (t.paths, t.reused, t.checked, t.built) == (t1.paths, t1.paths, 0, 0)


def test_after_an_import_an_edit_of_one_action_checks_only_its_paths(tmp_path):
    journal, _, t1 = _journal(tmp_path)
    db = tmp_path / "p.sqlite"
    _import(tmp_path, journal, db)
    edited = SPEC.replace(*EDIT)
    got, t = _prove(tmp_path, edited, store=str(db))
    fresh, t0 = _prove(tmp_path, edited)
    lap = sum(1 for r in map(json.loads, journal.read_text().splitlines()[1:])
              if r.get("action") == "lap" and r.get("kind", "step") == "step")
    assert lap == 4             # one path a case: c < 3 or not, c known in each
    assert got == fresh and t.paths == t1.paths
    # lap's paths, once in the Houdini round and once for the transition property.
    assert t.checked == t.built == 2 * lap < t.paths


def _rewrite_head(journal, **fields):
    lines = journal.read_text().splitlines()
    head = json.loads(lines[0])
    head["journal"].update(fields)
    journal.write_text("\n".join([json.dumps(head)] + lines[1:]) + "\n")


@pytest.mark.parametrize("fields, said", [
    ({"z3": "4.8.0"}, 'z3 "4.8.0", this run\'s "'),
    ({"params": [["players", 3]]}, "params players=3, this run's none"),
    ({"split_on": []}, "split_on [], this run's [\"c\"]"),
])
def test_a_journal_of_another_run_is_refused_saying_why(tmp_path, fields, said):
    journal, _, _ = _journal(tmp_path)
    _rewrite_head(journal, **fields)
    db = tmp_path / "p.sqlite"
    with pytest.raises(seed.JournalRefused, match="of another run") as e:
        _import(tmp_path, journal, db)
    assert said in str(e.value)
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM verdicts").fetchone()[0] == 0


def test_a_journal_of_an_older_text_counts_when_a_stored_proof_vouches_for_it(tmp_path):
    # The journal was made from the spec before a doc edit: its run key's text digest is no
    # longer today's, but a stored proof of that text whose checked program is today's says
    # the paths are the same.
    journal, first, t1 = _journal(tmp_path)
    old = _game(tmp_path)
    edited = SPEC.replace(*DOC)
    g = _game(tmp_path, edited)
    assert proof_digest(g) != proof_digest(old)
    db = tmp_path / "p.sqlite"
    with pytest.raises(seed.JournalRefused, match="of another spec text"):
        _import(tmp_path, journal, db, edited)
    stored = {"game": g.name, "proof_sha256": proof_digest(old),
              "proof_ir_sha256": proof_ir_digest(g), "params": {}}
    stale = {**stored, "proof_ir_sha256": "0" * 16}
    with pytest.raises(seed.JournalRefused):
        _import(tmp_path, journal, db, edited, [("docs/proofs/stale.json", stale)])
    got = _import(tmp_path, journal, db, edited, [("docs/proofs/stored.json", stored)])
    assert "stored proof docs/proofs/stored.json" in got["why"]
    # A journal written before run keys named the text by its proof digest named it by the
    # whole spec's digest: the stored proof's spec_sha256 of that text.
    older = {**stored, "proof_sha256": "f" * 16, "spec_sha256": proof_digest(old)}
    got = _import(tmp_path, journal, db, edited, [("docs/proofs/older.json", older)])
    assert "stored proof docs/proofs/older.json" in got["why"]
    again, t = _prove(tmp_path, edited, store=str(db))
    assert again == first and (t.checked, t.built) == (0, 0)


def test_a_journal_missing_a_path_imports_what_it_places(tmp_path):
    # The last record of case 1 (lap's path) is gone: lap's group there is not written (its
    # count is unknown), the rest is reused; lap in case 1 is checked again.
    journal, first, t1 = _journal(tmp_path)
    lines = journal.read_text().splitlines()
    drop = next(i for i, line in enumerate(lines[1:], 1)
                if json.loads(line).get("case") == 0 and json.loads(line).get("action") == "lap"
                and json.loads(line).get("kind", "step") == "step")
    journal.write_text("\n".join(lines[:drop] + lines[drop + 1:]) + "\n")
    db = tmp_path / "p.sqlite"
    got = _import(tmp_path, journal, db)
    assert got["groups"] == 3 * 4 - 1
    again, t = _prove(tmp_path, store=str(db))
    assert again == first and t.checked == 1 and t.reused == t1.paths - 1


def _refresh(tmp_path, monkeypatch, load=None):
    """docs/refresh.py as a module, writing under ``tmp_path`` and loading the game by
    ``load`` (by default the fixture's)."""
    import importlib.util
    from conftest import ROOT
    spec_ = importlib.util.spec_from_file_location("refresh", ROOT / "docs" / "refresh.py")
    refresh = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(refresh)
    monkeypatch.setattr(refresh, "HERE", tmp_path)
    monkeypatch.setattr(refresh, "load_game", load or (lambda *a, **k: _game(tmp_path)))
    return refresh


def _seed(tmp_path, db, text: str = SPEC, **kw):
    g = _game(tmp_path, text)
    options = ProveOptions(store=str(db), **{**SPLIT, **kw})
    store = Store(db, g, options, print)
    invs = [i.name for i in g.p.invariants if not i.transition]
    props = [i.name for i in g.p.invariants if i.transition]
    return seed.seed_of(store, g, options, invs, invs, props)


def test_a_seed_is_compact_and_fills_a_fresh_store(tmp_path):
    db = tmp_path / "p.sqlite"
    first, t1 = _prove(tmp_path, store=str(db))
    s = _seed(tmp_path, db)
    assert s["cases"] == 4 and len(s["groups"]) == 3 and len(s["transition_groups"]) == 3
    assert seed.seed_paths(s) == t1.paths
    assert all(None not in v for v in s["groups"].values())
    fresh = tmp_path / "fresh.sqlite"
    again, t = _prove(tmp_path, store=str(fresh), seeds=[("docs/proofs/x.json", s)])
    assert again == first and (t.reused, t.checked, t.built) == (t1.paths, 0, 0)
    # Planted once: a second run finds the groups there and writes nothing.
    con = sqlite3.connect(fresh)
    rows = con.execute("SELECT count(*) FROM verdicts").fetchone()[0]
    _, t = _prove(tmp_path, store=str(fresh), seeds=[("docs/proofs/x.json", s)])
    assert con.execute("SELECT count(*) FROM verdicts").fetchone()[0] == rows
    assert t.checked == 0


def test_a_seeded_store_rechecks_only_the_edited_action(tmp_path):
    db = tmp_path / "p.sqlite"
    _, t1 = _prove(tmp_path, store=str(db))
    s = _seed(tmp_path, db)
    edited = SPEC.replace(*EDIT)
    got, t = _prove(tmp_path, edited, store=str(tmp_path / "fresh.sqlite"),
                    seeds=[("x", s)])
    assert got == _prove(tmp_path, edited)[0]
    assert t.checked == 2 * 4 < t.paths == t1.paths


def test_a_seed_of_another_context_is_not_planted(tmp_path):
    db = tmp_path / "p.sqlite"
    _prove(tmp_path, store=str(db))
    s = _seed(tmp_path, db)
    g = _game(tmp_path)
    other = Store(tmp_path / "o.sqlite", g, ProveOptions(), print)     # no case split
    assert seed.plant(other, s) == (0, "of another context (parameters, options, state "
                                       "or z3 version)")
    assert seed.plant(other, {**s, "format": "0"})[0] == 0
    _, t = _prove(tmp_path, store=str(tmp_path / "o.sqlite"), split_on=(), seeds=[("x", s)])
    assert t.reused == 0 and t.checked == t.paths > 0


def test_a_seeded_verdict_never_overwrites_a_stored_one(tmp_path):
    # A store that checked the edited spec keeps its own rows; only missing groups planted.
    db = tmp_path / "p.sqlite"
    _prove(tmp_path, store=str(db))
    s = _seed(tmp_path, db)
    con = sqlite3.connect(db)
    before = dict(con.execute("SELECT key, value FROM verdicts"))
    g = _game(tmp_path)
    assert seed.plant(Store(db, g, ProveOptions(**SPLIT), print), s) == (0, None)
    after = dict(con.execute("SELECT key, value FROM verdicts"))
    assert {k: v for k, v in after.items() if k in before} == before
    # added: only the abstraction each action was proved under, as the seed says
    added = con.execute(f"SELECT kind, value FROM verdicts WHERE key NOT IN "
                        f"({','.join('?' * len(before))})", list(before)).fetchall()
    assert s["rungs"] and {(k, v) for k, v in added} == {("rung", '{"under": [[false, '
                                                          'false, false]]}')}


def test_the_command_imports_a_journal_and_refuses_another_runs(tmp_path):
    spec = str(FIXTURES / "stored.rules")
    journal = tmp_path / "j.jsonl"
    db = tmp_path / "p.sqlite"
    r = run_cli("prove", spec, "--depth", "2", "--split-on", "c", "--journal", str(journal))
    assert r.returncode == 0, r.stderr
    r = run_cli("prove", spec, "--split-on", "c", "--store", str(db), "--import-journal",
                str(journal))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0] == f"{journal}: current (its run key is this run's)"
    assert "imported 24 path verdicts of 4 cases, 12 groups" in r.stdout
    r = run_cli("prove", spec, "--depth", "2", "--split-on", "c", "--store", str(db),
                "--json")
    assert json.loads(r.stdout)["paths"] == {"total": 24, "reused": 24, "checked": 0}
    # Another case split: one line, exit 2, nothing done.
    r = run_cli("prove", spec, "--store", str(db), "--import-journal", str(journal))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        f"rulebook: {journal}: not imported: of another run: split_on [\"c\"], this "
        f"run's []"]
    r = run_cli("prove", spec, "--no-store", "--import-journal", str(journal))
    assert r.returncode == 2 and "--import-journal" in r.stderr
    r = run_cli("prove", spec, "--store", str(db), "--import-journal",
                str(tmp_path / "none.jsonl"))
    assert r.returncode == 2 and "cannot read the journal" in r.stderr


def test_refresh_seeds_its_store_and_writes_the_seed(tmp_path, monkeypatch, capsys):
    # docs/refresh.py proves with the store, planted first from the stored proofs' seeds,
    # and writes the seed of what it proved: a fresh store re-proves from it with nothing
    # checked, and after an edit of one action checks that action's paths.  --seed-only
    # writes the same seed from the store, proving nothing.
    text = [SPEC]
    refresh = _refresh(tmp_path, monkeypatch, lambda *a, **k: _game(tmp_path, text[0]))

    def run(store):
        refresh.refresh_proofs("stored", 2, 30.0, split_on=("c",), store=str(store))
        err = capsys.readouterr().err
        return next(x for x in err.splitlines() if "paths:" in x).split("paths: ")[1]
    assert run(tmp_path / "a.sqlite") == "24 in all, 0 reused from the store, 24 checked"
    path = tmp_path / "proofs" / "stored.json"
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored["command"] == "rulebook prove stored --depth 2 --split-on c --json"
    assert seed.seed_paths(stored["store_seed"]) == 24
    assert '"groups": {\n' in path.read_text(encoding="utf-8")    # a count list a line
    # every action proved by the one pass there was, the plain step, and the seed says so
    assert {a: r["under"] for a, r in stored["store_seed"]["rungs"].items()} == {
        a: [[False, False, False]] for a in ("up", "follow", "lap")}
    assert run(tmp_path / "b.sqlite") == "24 in all, 24 reused from the store, 0 checked"
    text[0] = SPEC.replace(*EDIT)
    assert run(tmp_path / "c.sqlite") == "24 in all, 16 reused from the store, 8 checked"
    text[0] = SPEC
    path.write_text(json.dumps({k: v for k, v in stored.items() if k != "store_seed"}),
                    encoding="utf-8")
    assert refresh.main(["--seed-only", "--store", str(tmp_path / "a.sqlite")]) == 0
    assert json.loads(path.read_text(encoding="utf-8")) == stored
    # A proof's own seed counts as held: an empty store gives it back, with the shapes.
    assert refresh.main(["--seed-only", "--store", str(tmp_path / "empty.sqlite")]) == 0
    assert json.loads(path.read_text(encoding="utf-8")) == stored
    assert len(stored["store_seed"]["shapes"]) == 3
    path.write_text(json.dumps({k: v for k, v in stored.items() if k != "store_seed"}),
                    encoding="utf-8")
    assert refresh.main(["--seed-only", "--store", str(tmp_path / "none.sqlite")]) == 1
    assert "the store holds none of its paths: no seed" in capsys.readouterr().err


def test_a_proof_with_no_tactic_flag_seeds_the_cases_its_ladder_split(tmp_path, monkeypatch,
                                                                       capsys):
    # With no tactic flag the ladder splits the step on the pinned fields (Towers' block):
    # the seed is read under that split, not under the caller's options (which name none),
    # else it finds no group and the stored proof carries no seed.
    from solver.prover import tactics
    refresh = _refresh(tmp_path, monkeypatch)
    monkeypatch.setattr(tactics, "pinning_fields", lambda p: ("c",))
    refresh.refresh_proofs("stored", 2, 30.0, store=str(tmp_path / "a.sqlite"), auto=True)
    stored = json.loads((tmp_path / "proofs" / "stored.json").read_text(encoding="utf-8"))
    assert stored["command"] == "rulebook prove stored --depth 2 --json"
    assert stored["store_seed"]["cases"] == 4 and seed.seed_paths(stored["store_seed"]) == 24
    path = tmp_path / "proofs" / "stored.json"
    path.write_text(json.dumps({k: v for k, v in stored.items() if k != "store_seed"}),
                    encoding="utf-8")
    assert refresh.main(["--seed-only", "--store", str(tmp_path / "a.sqlite")]) == 0
    assert json.loads(path.read_text(encoding="utf-8")) == stored


def test_refresh_stores_a_proof_of_a_named_reading(tmp_path, monkeypatch, capsys):
    # docs/refresh.py --variant READING:OPTION proves the game under that reading, says so in
    # the command, stores it as "variants", and reads the game back under it (--seed-only).
    asked = []

    def load(name, variants=(), params=()):
        asked.append(tuple(variants))
        return _game(tmp_path)
    refresh = _refresh(tmp_path, monkeypatch, load)
    assert refresh.main(["stored", "--only", "proofs", "--depth", "2", "--split-on", "c",
                         "--variant", "r:b", "--store", str(tmp_path / "a.sqlite")]) == 0
    stored = json.loads((tmp_path / "proofs" / "stored.json").read_text(encoding="utf-8"))
    assert stored["command"] == "rulebook prove stored --variant r:b --depth 2 --split-on c --json"
    assert stored["variants"] == ["r:b"] and ("r:b",) in asked
    asked.clear()
    assert refresh.main(["--seed-only", "--store", str(tmp_path / "a.sqlite")]) == 0
    assert asked == [("r:b",)]
    with pytest.raises(SystemExit):
        refresh.main(["stored", "--variant", "r:b"])
    assert "--variant: only with --only proofs" in capsys.readouterr().err


def test_refresh_says_a_bad_reading_in_one_line():
    """docs/refresh.py with an option a reading does not have: one line, exit status 2."""
    import subprocess
    import sys
    from conftest import ROOT
    r = subprocess.run([sys.executable, str(ROOT / "docs" / "refresh.py"), "towers", "--only",
                        "proofs", "--variant", "collapse:nope"], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines() == [
        "refresh: variant 'collapse:nope': reading 'collapse' has no option 'nope' (options: "
        "placed, upwards, fewest, physical)"]


def test_an_expansion_finds_its_own_stored_proofs(tmp_path, monkeypatch, capsys):
    """`rulebook prove tours-de-pouvoir` loads the base game (named les-5-tours) with the
    expansion; its stored proofs are named tours-de-pouvoir, and those are the ones asked for
    (before, the base's: an expansion's seed was never planted)."""
    from solver.cli import main as cli, seeding
    asked: list = []

    def stored(name):
        asked.append(name)
        return []
    monkeypatch.setattr(seeding, "stored_proofs", stored)
    journal = tmp_path / "j.jsonl"
    journal.write_text(json.dumps({"journal": {"game": "les-5-tours", "spec": "0" * 16}}) + "\n")
    code = cli.main(["prove", "tours-de-pouvoir", "--store", str(tmp_path / "p.sqlite"),
                     "--import-journal", str(journal)])
    assert code == 2 and asked == ["tours-de-pouvoir"]
    assert "not imported" in capsys.readouterr().err


def test_a_proof_made_with_an_experts_split_is_re_made_with_no_flag(tmp_path, monkeypatch,
                                                                     capsys):
    # A proof stored from `--split-on c` (an expert's flag): with no tactic flag, the ladder
    # splits the step as that proof did, so its seed serves and nothing is checked; stored
    # again so, its command names no tactic, and the next run with none reuses it as well.
    refresh = _refresh(tmp_path, monkeypatch)
    refresh.refresh_proofs("stored", 2, 30.0, split_on=("c",), store=str(tmp_path / "a.sqlite"))
    path = tmp_path / "proofs" / "stored.json"
    flagged = json.loads(path.read_text(encoding="utf-8"))
    g = _game(tmp_path)
    auto = ProveOptions(bmc_depth=2, auto=True)
    assert seed.split_of(g, auto, []) is None
    assert seed.split_of(g, auto, refresh.stored_seeds("stored")) == ("c",)
    # not of another run's candidates, nor for an expert's own split
    other = {**flagged["store_seed"], "candidates": flagged["store_seed"]["candidates"][:1]}
    assert seed.split_of(g, auto, [("x", other)]) is None
    assert seed.split_of(g, ProveOptions(auto=True, split_on=("b",)),
                         refresh.stored_seeds("stored")) is None
    heard: list = []
    tally = Tally()
    res = prove(g, ProveOptions(bmc_depth=2, auto=True, store=str(tmp_path / "b.sqlite")),
                heard.append, tally=tally, seeds=refresh.stored_seeds("stored"))
    assert {r.status for r in res} == {"inductive"}
    assert (tally.reused, tally.checked) == (24, 0)
    assert "tactics: the step split on c, as a stored proof of this run was" in heard
    capsys.readouterr()
    refresh.refresh_proofs("stored", 2, 30.0, store=str(tmp_path / "c.sqlite"), auto=True)
    assert "paths: 24 in all, 24 reused from the store, 0 checked" in capsys.readouterr().err
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored["command"] == "rulebook prove stored --depth 2 --json"
    assert stored["store_seed"]["context"] == flagged["store_seed"]["context"]
    _, t = _prove(tmp_path, store=str(tmp_path / "d.sqlite"), split_on=(), auto=True,
                  seeds=refresh.stored_seeds("stored"))
    assert (t.reused, t.checked) == (24, 0)


def test_a_seeds_rungs_that_are_not_well_formed_are_left_out(tmp_path):
    # `rungs` is read from a file anyone may edit: what is not a rung is no hint, and the
    # groups are planted all the same.
    db = tmp_path / "p.sqlite"
    _prove(tmp_path, store=str(db))
    s = _seed(tmp_path, db)
    g = _game(tmp_path)
    digest = s["rungs"]["up"]["digest"]
    for bad in ("x", {"up": "x"}, {"up": {"digest": 5, "under": [[False, False, False]]}},
                {"up": {"digest": digest, "under": [[1, 0, 0], [False], "x"]}}):
        store = Store(tmp_path / f"{len(str(bad))}.sqlite", g, ProveOptions(**SPLIT), print)
        assert seed.plant(store, {**s, "rungs": bad})[0] > 0
        assert seed.hints(store, [("x", {**s, "rungs": bad})]) == {}
        assert store.rungs(s["cases"], []) == {}
