"""The proof store (solver/prover/store.py): a re-proof re-checks only the path queries whose
key an edit changed, reuses the others with the same verdicts, and the store survives
concurrent writers; a bad store file is one line and exit status 2."""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import sqlite3
import subprocess
import sys

import pytest

from conftest import FIXTURES, ROOT, run_cli
from solver.engine import domains as dz
from solver.engine.game import load_path
from solver.lang.errors import RulebookError
from solver.prover import splits
from solver.prover.options import ProveOptions
from solver.prover.prove import prove
from solver.prover.result import Tally
from solver.prover.store import Store

SPEC = (FIXTURES / "stored.rules").read_text(encoding="utf-8")


def _prove(tmp_path, text: str, store, name: str = "stored.rules", **kw):
    """The verdicts of a proof of ``text`` (written to ``name``) and its tally."""
    f = tmp_path / name
    f.write_text(text, encoding="utf-8")
    tally = Tally()
    res = prove(load_path(f), ProveOptions(bmc_depth=2, store=None if store is None
                                           else str(store), **kw), tally=tally)
    return {r.name: (r.status, r.depth, r.detail) for r in res}, tally


def _edit(old: str, new: str, text: str = SPEC) -> str:
    assert old in text
    return text.replace(old, new)


def _paths_of(tmp_path, text: str, action: str) -> int:
    """How many action paths ``action`` has over the step's cases, counted afresh."""
    f = tmp_path / "count.rules"
    f.write_text(text, encoding="utf-8")
    g = load_path(f)
    fields = splits.split_fields(g)
    return sum(1 for S in splits.cases(g, dz.Fresh("s_"), "s", fields)
               for b in splits.paths(g, S, fields) if b.action == action)


def test_a_second_run_checks_nothing_and_gives_the_same_verdicts(tmp_path):
    db = tmp_path / "p.sqlite"
    first, t1 = _prove(tmp_path, SPEC, db)
    assert t1.paths > 0 and t1.reused == 0
    second, t2 = _prove(tmp_path, SPEC, db)
    assert (t2.paths, t2.reused) == (t1.paths, t1.paths)
    assert second == first
    assert {s for s, _, _ in first.values()} == {"inductive"}


@pytest.mark.parametrize("edit", [
    ('doc "b follows a."', 'doc "b follows a, one step at a time."'),          # a doc string
    ("  let next = b + 1;\n  b = next;", "let  after=b+1 ;b=after;"),       # reformat, rename
    ('requires room "a has room"', 'requires room "a is below 5"'),           # a message
])
def test_an_edit_that_changes_no_rule_rechecks_nothing(tmp_path, edit):
    db = tmp_path / "p.sqlite"
    first, _ = _prove(tmp_path, SPEC, db)
    again, t = _prove(tmp_path, _edit(*edit), db)
    assert t.paths > 0 and t.reused == t.paths
    assert again == first


def test_an_edit_of_one_action_rechecks_only_its_paths(tmp_path):
    db = tmp_path / "p.sqlite"
    _, t1 = _prove(tmp_path, SPEC, db)
    edited = _edit("    c = 0;", "    c = 1;")
    lap = _paths_of(tmp_path, edited, "lap")
    assert lap == 2
    got, t = _prove(tmp_path, edited, db)
    # Each path is asked once by the inductive step (one Houdini round: both invariants
    # hold) and once for the transition property.
    assert t.paths == t1.paths and t.paths - t.reused == 2 * lap < t.paths
    fresh, t0 = _prove(tmp_path, edited, None)
    assert got == fresh and t0.reused == 0


def test_an_edit_of_one_action_builds_only_its_paths(tmp_path):
    # The other actions' paths all held before: they are not even built (building them is
    # most of a re-proof's time on a large board), and the verdicts are those of a run
    # without the store.
    db = tmp_path / "p.sqlite"
    _, t1 = _prove(tmp_path, SPEC, db)
    assert t1.built == t1.paths         # one Houdini round and the transition pass
    edited = _edit("    c = 0;", "    c = 1;")
    lap = _paths_of(tmp_path, edited, "lap")
    got, t = _prove(tmp_path, edited, db)
    assert t.built == 2 * lap < t1.built
    assert (t.paths, t.checked) == (t1.paths, 2 * lap)
    assert got == _prove(tmp_path, edited, None)[0]
    again, t2 = _prove(tmp_path, edited, db)
    assert (t2.built, t2.checked, t2.reused) == (0, 0, t1.paths) and again == got


@pytest.mark.parametrize("broken, fell, status", [
    (_edit("  a += 2;", "  a += 1;"), "a_even", "refuted"),
    # true up to depth 2, not inductive: its result says why (a path of up breaks it)
    (SPEC + "\ninvariant low_a: a <= 4;\n", "low_a", "holds"),
])
def test_a_round_where_a_candidate_falls_is_not_built_again(tmp_path, broken, fell, status):
    # A candidate falls on up's path in the first Houdini round: the round's later paths
    # leave it out.  Its groups are kept all the same (with why it fell), so a re-proof, and
    # one after an edit of another action, build only what changed, with the same results.
    db = tmp_path / "p.sqlite"
    first, t1 = _prove(tmp_path, broken, db)
    assert first[fell][0] == status and first["b_le_a"][0] == "inductive"
    if status == "holds":
        assert "not inductive" in first[fell][2] and "up" in first[fell][2]
    again, t = _prove(tmp_path, broken, db)
    assert again == first and (t.built, t.checked, t.paths) == (0, 0, t1.paths)
    edited = _edit("    c = 0;", "    c = 1;", broken)
    lap = _paths_of(tmp_path, edited, "lap")
    got, t = _prove(tmp_path, edited, db)
    # lap's paths: built once for the step and once for the transition property; checked in
    # both Houdini rounds and for the transition property.
    assert (t.built, t.checked) == (2 * lap, 3 * lap) and t.paths == t1.paths
    assert got == _prove(tmp_path, edited, None)[0]


def test_a_group_whose_paths_are_gone_is_built_again(tmp_path):
    # A group row stands only with every one of its paths' rows.
    db = tmp_path / "p.sqlite"
    first, t1 = _prove(tmp_path, SPEC, db)
    con = sqlite3.connect(db)
    groups = con.execute("SELECT count(*) FROM verdicts WHERE kind = 'group'").fetchone()[0]
    assert groups == 3          # one per action: one case, one Houdini round
    steps = [k for k, v in con.execute("SELECT key, value FROM verdicts WHERE kind = 'step'")]
    con.execute("DELETE FROM verdicts WHERE key = ?", (steps[0],))
    con.commit()
    con.close()
    again, t = _prove(tmp_path, SPEC, db)
    assert again == first and t.checked == 1 and 0 < t.built < t1.built


def test_a_new_action_first_rechecks_only_its_own_paths(tmp_path):
    # The paths are named within their action, not by their place among all the paths.
    db = tmp_path / "p.sqlite"
    _, t1 = _prove(tmp_path, SPEC, db)
    edited = _edit('doc "a goes up by two."', 'doc "c back to 0."\naction reset() {\n'
                   '  requires top "c is 3": c == 3;\n  c = 0;\n}\n\ndoc "a goes up by two."')
    got, t = _prove(tmp_path, edited, db)
    new = _paths_of(tmp_path, edited, "reset")
    assert new >= 1 and t.paths - t.reused == 2 * new and t.reused == t1.paths
    assert got == _prove(tmp_path, edited, None)[0]


def test_an_edit_that_breaks_an_invariant_is_not_hidden_by_the_store(tmp_path):
    db = tmp_path / "p.sqlite"
    before, _ = _prove(tmp_path, SPEC, db)
    assert before["a_even"][0] == "inductive"
    edited = _edit("  a += 2;", "  a += 1;")
    got, t = _prove(tmp_path, edited, db)
    fresh, _ = _prove(tmp_path, edited, None)
    assert got == fresh and got["a_even"][0] == "refuted"
    assert 0 < t.paths - t.reused < t.paths


def test_an_edit_of_an_invariant_rechecks_the_queries_that_read_it(tmp_path):
    db = tmp_path / "p.sqlite"
    _, t1 = _prove(tmp_path, SPEC, db)
    # The transition property is read by its own queries only: the step's are reused.
    edited = _edit("transition a_grows: a >= old(a);", "transition a_grows: old(a) <= a;")
    got, t = _prove(tmp_path, edited, db)
    trans = sum(_paths_of(tmp_path, edited, a) for a in ("up", "follow", "lap"))
    assert t.paths - t.reused == trans < t.paths
    assert got == _prove(tmp_path, edited, None)[0]
    # An invariant proved alone: an edit of another one leaves its queries alone ...
    alone = {"only": ("a_even",), "alone": True}
    _, ta = _prove(tmp_path, SPEC, db, **alone)
    assert ta.reused == 0 and ta.paths == trans
    _, tb = _prove(tmp_path, _edit("invariant b_le_a: b <= a;",
                                   "invariant b_le_a: a >= b;"), db, **alone)
    assert tb.reused == tb.paths == trans
    # ... and an edit of it re-checks them all.
    _, tc = _prove(tmp_path, _edit("invariant a_even: a % 2 == 0;",
                                   "invariant a_even: a % 2 != 1;"), db, **alone)
    assert tc.reused == 0 and tc.paths == trans


def test_parameters_of_the_step_that_change_its_paths_change_the_key(tmp_path):
    db = tmp_path / "p.sqlite"
    _prove(tmp_path, SPEC, db)
    _, t = _prove(tmp_path, SPEC, db, split_on=("c",))
    assert t.reused == 0 and t.paths > 0
    # Another step time-out: the proofs stand.
    _, t = _prove(tmp_path, SPEC, db, step_timeout_ms=9_000)
    assert t.reused == t.paths


def test_a_broken_candidate_is_reused_only_under_a_time_out_no_longer(tmp_path):
    f = tmp_path / "stored.rules"
    f.write_text(SPEC, encoding="utf-8")
    g = load_path(f)
    db = tmp_path / "p.sqlite"
    actions = ["up", "follow", "lap", "lap"]
    cands = ["a_even", "b_le_a"]
    s = Store(db, g, ProveOptions(step_timeout_ms=5_000), print)
    assert s.checked(0, actions, cands) == {}
    s.record(0, 0, "up", cands, {"a_even": "why"}, [])
    s.record(0, 1, "follow", cands, {}, [])
    assert s.checked(0, actions, cands) == {0: {"a_even": "why"}, 1: {}}
    shorter = Store(db, g, ProveOptions(step_timeout_ms=1_000), print)
    assert shorter.checked(0, actions, cands) == {0: {"a_even": "why"}, 1: {}}
    longer = Store(db, g, ProveOptions(step_timeout_ms=60_000), print)
    assert longer.checked(0, actions, cands) == {1: {}}
    split = Store(db, g, ProveOptions(step_timeout_ms=5_000, split_lengths=True), print)
    assert split.checked(0, actions, cands) == {1: {}}
    # Another case, another candidate set: nothing.
    assert s.checked(1, actions, cands) == {}
    assert s.checked(0, actions, ["a_even"]) == {}


def _writer(db: str, spec: str, first: int, n: int) -> None:
    g = load_path(spec)
    s = Store(db, g, ProveOptions(), lambda *a, **k: None)
    actions = ["up", "follow", "lap", "lap"]
    for case in range(first, first + n):
        s.checked(case, actions, ["a_even"])
        for at, a in enumerate(actions):
            s.record(case, at, a, ["a_even"], {}, [], seconds=0.01)


def test_concurrent_writers_lose_no_row(tmp_path):
    db = str(tmp_path / "p.sqlite")
    spec = str(tmp_path / "stored.rules")
    (tmp_path / "stored.rules").write_text(SPEC, encoding="utf-8")
    Store(db, load_path(spec), ProveOptions(), print)
    ctx = mp.get_context("fork")
    # Two writers of their own cases, and a third over both ranges (the same keys again).
    procs = [ctx.Process(target=_writer, args=(db, spec, first, n))
             for first, n in ((0, 150), (150, 150), (0, 300))]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT count(*) FROM verdicts").fetchone()[0] == 300 * 4
    con.close()
    s = Store(db, load_path(spec), ProveOptions(), print)
    assert all(len(s.checked(c, ["up", "follow", "lap", "lap"], ["a_even"])) == 4
               for c in range(300))


def _cli(*args, store):
    return run_cli("prove", str(FIXTURES / "stored.rules"), "--depth", "2", "--store",
                   str(store), *args)


def test_two_proofs_at_once_and_the_pool_share_one_store(tmp_path):
    db = tmp_path / "p.sqlite"
    cmd = [sys.executable, "-m", "solver", "prove", str(FIXTURES / "stored.rules"),
           "--depth", "2", "--json", "--store", str(db)]
    procs = [subprocess.Popen(cmd + extra, cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for extra in ([], ["--jobs", "2"])]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    runs = [json.loads(o) for o, _ in outs]
    assert [(r["invariant"], r["status"]) for r in runs[0]["results"]] == \
        [(r["invariant"], r["status"]) for r in runs[1]["results"]]
    r = _cli("--json", store=db)
    assert r.returncode == 0, r.stderr
    paths = json.loads(r.stdout)["paths"]
    assert paths == {"total": 8, "reused": 8, "checked": 0}


def test_the_text_output_says_the_paths_in_one_line(tmp_path):
    db = tmp_path / "p.sqlite"
    r = _cli(store=db)
    assert r.returncode == 0, r.stderr
    assert "paths: 8 in all, 0 reused from the store, 8 checked" in r.stdout.splitlines()
    r = _cli(store=db)
    assert "paths: 8 in all, 8 reused from the store, 0 checked" in r.stdout.splitlines()
    r = run_cli("prove", str(FIXTURES / "stored.rules"), "--depth", "2", "--no-store",
                "--json")
    assert json.loads(r.stdout)["paths"] == {"total": 8, "reused": 0, "checked": 8}


def _other_db(path):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()


def _old_format(path):
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("CREATE TABLE verdicts (key TEXT PRIMARY KEY, kind TEXT, value TEXT, "
                "seconds REAL, stored REAL)")
    con.execute("INSERT INTO meta VALUES ('format', '0')")
    con.commit()
    con.close()


def _corrupt(path):
    # A store whose pages are overwritten in the middle: SQLite's header is intact.
    r = _cli(store=path)
    assert r.returncode == 0, r.stderr
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = bytearray(path.read_bytes())
    assert len(data) > 3 * 4096
    data[4096:3 * 4096] = b"\xff" * (2 * 4096)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("make, says", [
    (lambda p: p.write_bytes(b"not a database at all, " * 200), "unreadable"),
    (_other_db, "not a rulebook proof store"),
    (_old_format, "another format"),
    (_corrupt, "the proof store is"),
])
def test_a_bad_store_file_is_moved_aside_and_the_proof_runs(tmp_path, make, says):
    db = tmp_path / "p.sqlite"
    make(db)
    old = db.read_bytes()
    r = _cli("--json", store=db)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.strip().splitlines()
    aside = tmp_path / "p.sqlite.bad-1"
    assert len(lines) == 1 and says in lines[0], r.stderr
    assert str(db) in lines[0] and f"moved to {aside}" in lines[0]
    assert aside.read_bytes() == old
    out = json.loads(r.stdout)
    assert out["paths"] == {"total": 8, "reused": 0, "checked": 8}
    assert {x["status"] for x in out["results"]} == {"inductive"}
    # The fresh store is a store: the next run reuses it, and a second bad file goes aside
    # beside the first.
    r = _cli("--json", store=db)
    assert json.loads(r.stdout)["paths"]["reused"] == 8 and r.stderr == ""
    db.write_bytes(b"x" * 5000)
    r = _cli("--json", store=db)
    assert r.returncode == 0 and f"moved to {tmp_path / 'p.sqlite.bad-2'}" in r.stderr


def test_the_api_says_a_moved_store_through_its_progress(tmp_path):
    db = tmp_path / "p.sqlite"
    _other_db(db)
    heard = []
    prove(load_path(FIXTURES / "stored.rules"), ProveOptions(bmc_depth=1, store=str(db)),
          heard.append)
    assert any("moved to" in h and str(db) in h for h in heard)
    assert (tmp_path / "p.sqlite.bad-1").is_file()


@pytest.mark.parametrize("make, says", [
    (lambda p: p.mkdir(), "a directory"),
    (lambda p: None, "cannot make the proof store's folder"),
])
def test_a_store_path_where_none_can_be_made_is_one_line_and_exit_2(tmp_path, make, says):
    db = tmp_path / "p.sqlite"
    make(db)
    if not db.exists():
        (tmp_path / "file").write_text("x")
        db = tmp_path / "file" / "p.sqlite"          # its folder would be under a file
    r = _cli(store=db)
    assert r.returncode == 2, r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(db) in lines[0] and says in lines[0], r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_a_store_in_a_missing_folder_gets_its_folder(tmp_path):
    db = tmp_path / "nowhere" / "p.sqlite"
    r = _cli(store=db)
    assert r.returncode == 0 and db.is_file(), r.stderr
    Store(db, load_path(FIXTURES / "stored.rules"), ProveOptions(), print)


def test_the_default_store_is_in_the_users_cache(tmp_path):
    env_cache = tmp_path / "cache"
    r = subprocess.run([sys.executable, "-m", "solver", "prove",
                        str(FIXTURES / "stored.rules"), "--depth", "1", "--json"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120,
                       env={**os.environ, "XDG_CACHE_HOME": str(env_cache)})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["store"] == str(env_cache / "rulebook" / "proofs.sqlite")
    assert (env_cache / "rulebook" / "proofs.sqlite").is_file()


class _StopAfter:
    """A progress listener that stops the proof (as Ctrl-C does) once ``n`` paths of the
    inductive step are checked."""

    takes_counts = True

    def __init__(self, n: int):
        self.n = n

    def __call__(self, text, done=None, total=None, note=""):
        if text == "induction: action paths checked" and done is not None and done >= self.n:
            raise KeyboardInterrupt


def test_a_stopped_run_counts_the_paths_it_did_and_keeps_them(tmp_path):
    f = tmp_path / "stored.rules"
    f.write_text(SPEC, encoding="utf-8")
    db = tmp_path / "p.sqlite"
    tally = Tally()
    res = prove(load_path(f), ProveOptions(bmc_depth=2, store=str(db), keep_partial=True),
                _StopAfter(3), tally)
    assert {r.stopped for r in res} == {"interrupted"}
    assert tally.paths_json() == {"total": 3, "reused": 0, "checked": 3}
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM verdicts WHERE kind = 'step'").fetchone()[0] == 3
    con.close()
    # What the stopped run checked is not checked again.
    _, t = _prove(tmp_path, SPEC, db)
    _, full = _prove(tmp_path, SPEC, None)
    assert (t.paths, t.reused) == (full.paths, 3)


def test_the_text_of_a_stopped_run_says_so_beside_its_paths(tmp_path):
    # A proof of many quick paths (4,000) stopped by --time-limit while it checks them: the
    # paths line counts what was done (the store holds as many), and says it stopped.  The
    # limit grows until a run stops part-way through the step (the machine may be loaded, or
    # fast: on an idle machine 1,200 paths took 1.0 s in all).
    n = 100
    spec = tmp_path / "many.rules"
    spec.write_text(
        'game "many" "Many counters";\nstate {\n'
        + "".join(f"  c{i}: 0..9;\n" for i in range(n)) + "}\n"
        + "".join(f"action up{i}(v in 0..39) {{\n  requires room: c{i} + v < 40;\n"
                  f"  c{i} = (c{i} + v) % 10;\n}}\n" for i in range(n))
        + "invariant sum_ok: " + " + ".join(f"c{i}" for i in range(n)) + f" <= {9 * n};\n",
        encoding="utf-8")
    for limit in (1.0, 1.5, 2.5, 3.5, 5, 7, 10, 14, 20, 30):
        db = tmp_path / f"p{limit}.sqlite"
        r = run_cli("prove", str(spec), "--depth", "1", "--store", str(db), "--time-limit",
                    str(limit))
        line = next((x for x in r.stdout.splitlines() if x.startswith("paths: ")), "")
        if not line:
            continue        # stopped before the step began (a loaded machine)
        total, reused, checked = [int(w) for w in line.replace(",", " ").split()
                                  if w.isdigit()][:3]
        if checked or "stopped" not in line:
            break
    assert "then stopped (time limit of" in line and 0 < checked < 4000, r.stdout
    assert total == checked and reused == 0
    con = sqlite3.connect(db)
    rows = con.execute("SELECT count(*) FROM verdicts WHERE kind = 'step'").fetchone()[0]
    con.close()
    # A stop lands between a path's row and its count, at worst.
    assert checked <= rows <= checked + 1
    r = run_cli("prove", str(spec), "--depth", "1", "--store", str(db), "--json")
    assert json.loads(r.stdout)["paths"] == {"total": 4000, "reused": rows,
                                              "checked": 4000 - rows}


@pytest.mark.parametrize("kw", [{}, {"symmetric": True}])
def test_an_edit_of_one_action_over_the_players_cases(tmp_path, kw):
    # One case per player to move: only the edited action's paths are built in each (under
    # --symmetry too: an orbit, and a path's rotation, are of one action), and the verdicts
    # are those of a run without the store.
    spec = (FIXTURES / "turns.rules").read_text(encoding="utf-8")
    db = tmp_path / "p.sqlite"
    first, t1 = _prove(tmp_path, spec, db, "turns.rules", **kw)
    assert first["kept"][0] == "inductive" and t1.built > 0
    edited = _edit('left[turn] == 0;', 'left[turn] < 1;', spec)
    got, t = _prove(tmp_path, edited, db, "turns.rules", **kw)
    passes = _paths_of(tmp_path, edited, "pass")
    assert passes >= 3 and t.paths == t1.paths
    if kw.get("symmetric"):
        # Some follow from the first case's by the players' rotation (checked by it).
        assert t.built == passes < t1.built and 0 < t.checked <= passes
    else:
        assert t.built == t.checked == passes < t1.built
    assert got == _prove(tmp_path, edited, None, "turns.rules", **kw)[0]


def test_a_new_reading_that_keeps_the_rules_rechecks_nothing(tmp_path):
    # The program is lowered under the readings: a reading whose default leaves every part
    # as it was changes no key.  Its other option here makes `up` stricter: held by the
    # proof of the version before it (`Store.weaker`), nothing checked either.
    db = tmp_path / "p.sqlite"
    first, t1 = _prove(tmp_path, SPEC, db)
    read = _edit("state {", 'reading stride = two {\n  two "up to 6";\n  four "up to 4";\n}'
                 "\n\nstate {")
    read = _edit(": a <= 4;", ": a <= 4 and (stride == two or a <= 2);", read)
    again, t = _prove(tmp_path, read, db)
    assert (t.paths, t.reused) == (t1.paths, t1.paths) and again == first
    f = tmp_path / "four.rules"
    f.write_text(read, encoding="utf-8")
    tally, heard = Tally(), []
    four = prove(load_path(f, ("stride:four",)), ProveOptions(bmc_depth=2, store=str(db)),
                 heard.append, tally=tally)
    assert (tally.paths, tally.reused) == (t1.paths, t1.paths), heard
    assert any("up only asks more than a proved version" in h for h in heard)
    assert {r.name: r.status for r in four} == {n: s for n, (s, _, _) in first.items()}
