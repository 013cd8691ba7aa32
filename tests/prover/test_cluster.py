"""The inductive step on Dask distributed (solver/prover/cluster.py): the verdicts of two
workers are those of one process (why a candidate fell included, under case splits and
symmetries too), a worker killed mid-proof changes none of them, what the workers proved is
in the store and the journal, an edit re-checks only its action's paths there, and a
scheduler that does not answer is one line, exit 2."""
from __future__ import annotations

import os
import socket
import time

import json

import pytest
from distributed import Client, LocalCluster, WorkerPlugin

from conftest import FIXTURES, run_cli
from solver.engine import domains as dz
from solver.engine.game import load_game
from solver.lang.errors import RulebookError
from solver.prover import cluster, orbits, splits, transitions
from solver.prover.cluster import Engine, Recipe
from solver.prover.options import ProveOptions
from solver.prover.prove import prove
from solver.prover.result import Tally

SPECS = ["toy.rules", "stored.rules", "turns.rules", "vacuous.rules"]


@pytest.fixture(scope="module")
def client():
    """Two worker processes, one thread each, for the module (a cluster takes seconds)."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", memory_limit=0) as cluster, \
            Client(cluster) as c:
        yield c


def _verdicts(spec: str, engine=None, **kw):
    path = str(FIXTURES / spec)
    tally = Tally()
    res = prove(load_game(path), ProveOptions(bmc_depth=2, **kw), tally=tally, engine=engine)
    return {r.name: (r.status, r.depth) for r in res}, tally


def _engine(client, spec: str) -> Engine:
    return Engine(Recipe.of(str(FIXTURES / spec)), client=client)


@pytest.mark.parametrize("spec", SPECS)
def test_two_workers_give_the_verdicts_of_one_process(client, spec):
    one, t1 = _verdicts(spec)
    two, t2 = _verdicts(spec, _engine(client, spec))
    assert two == one
    assert t2.checked == t1.checked > 0


def test_the_workers_verdicts_are_written_into_the_store(client, tmp_path):
    # The parent writes what the workers send back: a second run, in one process, checks
    # nothing and says the same.
    db = str(tmp_path / "p.sqlite")
    first, t1 = _verdicts("toy.rules", _engine(client, "toy.rules"), store=db)
    again, t2 = _verdicts("toy.rules", store=db)
    assert again == first == _verdicts("toy.rules")[0]
    assert t1.reused == 0 and t2.checked == 0 and t2.reused == t1.paths > 0


def test_why_a_candidate_fell_is_the_first_path_that_breaks_it_whichever_worker(client):
    def results(engine=None):
        res = prove(load_game(str(FIXTURES / "toy.rules")),
                    ProveOptions(bmc_depth=5, timeout_ms=30_000), engine=engine)
        # A refutation's depth is that of the model z3 finds, not always the least.
        return {r.name: (r.status, r.detail, None if r.status == "refuted" else r.depth)
                for r in res}
    one = results()
    two = results(_engine(client, "toy.rules"))
    assert two == one
    # The reason not_eight is not inductive is the first path that breaks it (dec), as one
    # process finds it, whichever worker checked that path.
    assert "where dec() breaks it" in two["not_eight"][1]


def test_the_workers_split_the_step_on_a_field(client):
    # With `tries` a number in each case, `light` is proved (without the split it is not):
    # the workers build the parent's cases.
    one, _ = _verdicts("opaque.rules", split_on=("tries",))
    two, tally = _verdicts("opaque.rules", _engine(client, "opaque.rules"), split_on=("tries",))
    assert two == one and {n: s for n, (s, _) in two.items()} == \
        {"borne": "inductive", "light": "inductive"}
    assert tally.checked > 0


def _paths_of(path, action: str) -> int:
    """How many action paths ``action`` has over the step's cases, counted afresh."""
    g = load_game(str(path))
    fields = splits.split_fields(g)
    return sum(1 for S in splits.cases(g, dz.Fresh("s_"), "s", fields)
               for b in splits.paths(g, S, fields) if b.action == action)


@pytest.mark.parametrize("spec, old, new, action, passes", [
    # lap's paths: checked for the step and for the transition property.
    ("stored.rules", "    c = 0;", "    c = 1;", "lap", 2),
    # One case per player to move: pass's paths in each.
    ("turns.rules", "left[turn] == 0;", "left[turn] < 1;", "pass", 1),
])
def test_an_edit_of_one_action_builds_only_its_paths_on_the_workers(client, tmp_path, spec,
                                                                     old, new, action, passes):
    # The other actions' paths all held before: the workers neither build nor check them,
    # and the verdicts are those of one process without the store.  The file is edited in
    # place, on workers that loaded it before the edit: they prove the edited rules.
    text = (FIXTURES / spec).read_text(encoding="utf-8")
    assert old in text
    db = str(tmp_path / "p.sqlite")
    f = tmp_path / spec
    f.write_text(text, encoding="utf-8")
    _, t1 = _verdicts(str(f), _engine(client, str(f)), store=db)
    f.write_text(text.replace(old, new), encoding="utf-8")
    n = passes * _paths_of(f, action)
    got, t = _verdicts(str(f), _engine(client, str(f)), store=db)
    assert n > 0 and t.built == t.checked == n < t1.built and t.paths == t1.paths
    assert got == _verdicts(str(f))[0]
    again, t2 = _verdicts(str(f), _engine(client, str(f)), store=db)
    assert (t2.built, t2.checked, t2.reused) == (0, 0, t1.paths) and again == got


def test_a_worker_whose_spec_differs_refuses_the_work(client, tmp_path):
    # A recipe names the text it was sent with: a worker that reads other rules at that path
    # (edited since, another checkout) says so in one line rather than prove them.
    f = tmp_path / "toy.rules"
    f.write_text((FIXTURES / "toy.rules").read_text(encoding="utf-8"), encoding="utf-8")
    recipe = Recipe.of(str(f))
    assert recipe.load().name and client.submit(Recipe.load, recipe).result().name
    f.write_text(f.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    with pytest.raises(RulebookError, match="not those the work was sent with"):
        client.submit(Recipe.load, recipe, pure=False).result()
    assert Recipe.of(str(f)).digest != recipe.digest


def _symmetric(spec: str, engine=None, **kw):
    said: list[str] = []
    res = prove(load_game(str(FIXTURES / spec)),
                ProveOptions(1, 60_000, symmetric=True, **kw), progress=said.append,
                engine=engine)
    return {r.name: r.status for r in res}, said


def test_the_images_follow_of_the_paths_the_workers_checked(client, tmp_path, monkeypatch):
    """Under --symmetry the parent settles the images of the paths the workers proved, and
    records them in the journal beside the workers' verdicts."""
    monkeypatch.setattr(orbits, "MIRROR_MIN_S", 0.0)     # every image mirrored, not proved
    monkeypatch.setattr(orbits, "MIRROR_SPEND", float("inf"))
    log = tmp_path / "journal.jsonl"
    got, _ = _symmetric("regions.rules", _engine(client, "regions.rules"), region_facts=True,
                        journal=str(log))
    assert got == {"low": "inductive", "apart": "inductive"}
    records = [json.loads(line) for line in log.read_text().splitlines()]
    # 9 squares, 2 actions, 2 passes: of each action's 9 paths, the 3 orbits' first proved.
    assert sum(1 for r in records if "by" in r) == 2 * 2 * (9 - 3)
    assert any("fell" in r and "by" not in r for r in records)


def test_a_resumed_transition_pass_rotates_from_the_first_case_with_the_workers(
        client, tmp_path, monkeypatch):
    """A run stopped after the transition properties' first case resumes from the journal
    with an engine: the other cases' paths still follow from the first case's (settled in
    the parent, none of them sent to the workers), as in one process."""
    monkeypatch.setattr(orbits, "MIRROR_MIN_S", 0.0)
    monkeypatch.setattr(orbits, "MIRROR_SPEND", float("inf"))
    log = tmp_path / "journal.jsonl"
    first, _ = _symmetric("roam.rules", opaque_fix=True, journal=str(log))
    lines = log.read_text().splitlines()
    cut = next(k for k, x in enumerate(lines) if json.loads(x).get("kind") == "transition-case")
    log.write_text("\n".join(lines[:cut + 1]) + "\n")
    again, said = _symmetric("roam.rules", _engine(client, "roam.rules"), opaque_fix=True,
                             journal=str(log))
    assert again == first == {"one_each": "inductive", "all_stay": "inductive"}
    assert "transitions: case 1 of 3: every path held in a previous run" in " ".join(said)
    records = [json.loads(x) for x in log.read_text().splitlines()[cut + 1:]]
    by = [r["by"] for r in records if r.get("kind") == "transition"]
    assert len(by) == 2 * 36 and all(" of case 1 path " in b for b in by)


class _KillOnce(WorkerPlugin):
    """Test-only: the first worker to start a task of the step kills its own process (once
    over the cluster: a marker file says it happened)."""

    def __init__(self, marker: str):
        self.marker = marker

    def transition(self, key, start, finish, **kw):
        name = key if isinstance(key, str) else str(key)
        if finish == "executing" and "induction_task" in name:
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            os._exit(1)


def test_a_worker_killed_mid_proof_changes_no_verdict(client, tmp_path):
    marker = tmp_path / "killed"
    db = str(tmp_path / "p.sqlite")
    one, _ = _verdicts("toy.rules")
    client.register_plugin(_KillOnce(str(marker)), name="kill-once")
    try:
        two, tally = _verdicts("toy.rules", _engine(client, "toy.rules"), store=db)
    finally:
        client.unregister_worker_plugin("kill-once")
    assert marker.exists(), "no worker was killed"
    assert two == one
    # Nothing is lost: every path's verdict reached the store.
    _, again = _verdicts("toy.rules", store=db)
    assert again.checked == 0 and again.reused == tally.paths
    # The cluster has its two workers again (the nanny restarted the killed one).
    client.wait_for_workers(2, timeout=60)


def test_a_scheduler_that_does_not_answer_is_one_line_and_exit_2():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]           # free once closed: nobody listens there
    t0 = time.monotonic()
    r = run_cli("prove", str(FIXTURES / "toy.rules"), "--cluster", f"tcp://127.0.0.1:{port}",
                "--no-store", timeout=60)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"127.0.0.1:{port}" in lines[0], r.stderr
    assert "Traceback" not in r.stderr
    assert time.monotonic() - t0 < 30


def test_a_short_proof_starts_no_local_cluster():
    # --workers 2 on a proof of milliseconds: every path checked in this process.
    engine = Engine(Recipe.of(str(FIXTURES / "toy.rules")), workers=2)
    try:
        got, _ = _verdicts("toy.rules", engine)
        assert engine.client is None and engine.spent > 0
    finally:
        engine.close()
    assert got == _verdicts("toy.rules")[0]


def test_the_local_cluster_starts_once_the_step_has_taken_long_enough(monkeypatch):
    # No time in this process at all: the engine starts its own cluster of two workers for
    # the first paths, and closes it.
    monkeypatch.setattr(cluster, "LOCAL_S", 0.0)
    engine = Engine(Recipe.of(str(FIXTURES / "stored.rules")), workers=2)
    try:
        got, tally = _verdicts("stored.rules", engine)
        assert engine.client is not None
        assert len(engine.client.scheduler_info()["workers"]) == 2
    finally:
        engine.close()
    assert engine.client is None
    one, t1 = _verdicts("stored.rules")
    assert got == one and tally.checked == t1.checked


def _begun_here(monkeypatch, spec: str) -> tuple:
    """A proof of ``spec`` on two local workers whose engine says "not yet" once, then that
    the proof has run long enough (LOCAL_S 0): the paths built in this process, (actions,
    share) each, the actions of each plan sent to the workers, the game, and the verdicts
    and tally, checked to be one process's."""
    asked, built, planned = [], [], []
    real_remote, real_paths, real_plan = Engine.remote, splits.paths, Engine.plan_ahead

    def remote(self):
        asked.append(1)
        if len(asked) == 1:
            return False
        monkeypatch.setattr(cluster, "LOCAL_S", 0.0)
        return real_remote(self)

    def paths(game, S, fields, want, part=None):
        built.append((sorted(want), part))
        return real_paths(game, S, fields, want, part)

    def plan_ahead(self, run, kind, ci, game, S, actions):
        planned.append(tuple(actions))
        return real_plan(self, run, kind, ci, game, S, actions)
    monkeypatch.setattr(Engine, "remote", remote)
    monkeypatch.setattr(Engine, "plan_ahead", plan_ahead)
    monkeypatch.setattr(splits, "paths", paths)
    engine = Engine(Recipe.of(str(FIXTURES / spec)), workers=2)
    try:
        got, tally = _verdicts(spec, engine)
        assert engine.client is not None
    finally:
        engine.close()
    monkeypatch.setattr(splits, "paths", real_paths)
    one, t1 = _verdicts(spec)
    assert got == one and tally.checked == t1.checked
    return built, planned, load_game(str(FIXTURES / spec))


def test_a_case_begun_here_is_built_on_the_workers_once_the_proof_is_old_enough(monkeypatch):
    # This process builds the first case's first action, then the cluster starts and the
    # workers build the case; the verdicts are one process's.
    built, planned, game = _begun_here(monkeypatch, "stored.rules")
    assert len(game.actions) > 1
    assert built[0][0] == [game.actions[0].name]
    assert not any(len(w) > 1 for w, _ in built)     # no case built whole here
    # The action built here is built on the workers too, in shares with the rest, once:
    # each worker sent a path of it would otherwise build it whole.
    assert planned[0] == tuple(a.name for a in game.actions)


def test_a_case_begun_here_is_built_a_share_at_a_time(monkeypatch):
    # The engine is asked between two shares of an action's instances, not once the action
    # is built whole (one took 3.7 s, all of it dropped when the workers take over).
    built, planned, game = _begun_here(monkeypatch, "turns.rules")
    first = game.actions[0].name
    n = splits.instance_count(game, splits.cases(game, dz.Fresh("s_"), "s", [])[0], first)
    assert n > 2
    # Asked once before the case (not yet), then after the first share (the workers' turn).
    assert built == [([first], (0, n // min(n, 8)))]
    assert planned[0] == tuple(a.name for a in game.actions)


def test_a_worker_keeps_a_case_built_while_it_builds_the_next(monkeypatch):
    # A worker builds the next case (`Engine.plan_ahead`) while it checks this one: the case
    # it was checking stays built, not made again for its next task.
    game = load_game(str(FIXTURES / "roam.rules"))
    trans = [i for i in game.p.invariants if i.transition]
    tp = transitions.Pass(game, trans, {i.name for i in game.p.invariants
                                        if not i.transition}, ProveOptions())
    assert len(tp.cases) > 1
    made, real_prepare = [], tp.prepare

    def prepare(ci, only=None):
        made.append(ci)
        return real_prepare(ci, only)
    monkeypatch.setattr(tp, "prepare", prepare)
    walk = game.actions[0].name
    n = splits.instance_count(game, tp.cases[0], walk)
    first = tp.build_action(0, walk, (0, n))
    tp.build_action(1, walk, (0, n))
    assert tp.build_action(0, walk, (0, n)) == first > 0
    assert made == [0, 1]


def test_prove_checks_on_the_machines_cores_unless_told(monkeypatch, capsys):
    # No --workers: an engine of as many workers as the process has cores (3 here, patched);
    # --workers 1: no engine, everything in this process.
    import solver.cli.main as cli
    made = []

    def engine(recipe, workers, address=None):
        made.append(workers)
        return Engine(recipe, workers)
    monkeypatch.setattr(cluster, "engine", engine)
    monkeypatch.setattr(cli, "cores", lambda: 3)
    spec = str(FIXTURES / "toy.rules")
    code = cli.main(["prove", spec, "--no-store"])
    assert made == [3]
    one = capsys.readouterr().out
    assert "inductive" in one
    assert cli.main(["prove", spec, "--no-store", "--workers", "1"]) == code
    assert made == [3]
    # The same verdicts, a refutation's depth included (its trace is one of z3's models).
    def verdicts(out):
        return [ln for ln in out.splitlines()[:-1] if ln[:1].strip()]
    assert verdicts(capsys.readouterr().out) == verdicts(one)


def test_too_many_local_workers_is_one_line_and_exit_2():
    r = run_cli("prove", str(FIXTURES / "toy.rules"), "--workers", "100", "--no-store")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == ("rulebook: --workers 100: at most 64 local worker processes "
                                "(a cluster of more machines: --cluster)")


def test_the_costliest_paths_are_sent_first(client):
    # Longest first: a case's end is then short tasks, not one long one while the other
    # worker waits.  An action's cost: its paths' check time seen so far, else their build's.
    engine = Engine(Recipe.of(str(FIXTURES / "toy.rules")), client=client)
    engine.costs.checked("cheap", 4, 0.4)
    engine.costs.built("dear", 2, 1.0)          # no check seen yet: its build time
    engine.costs.built("cheap", 4, 40.0)        # a check seen: its build does not count
    assert engine.costs.of("cheap") == pytest.approx(0.1)
    assert engine.costs.of("dear") == pytest.approx(0.5)
    assert engine.costs.of("unseen") == 0.0
    home = sorted(client.scheduler_info()["workers"])[0]
    items = [(0, "unseen", 0), (1, "cheap", 0), (2, "cheap", 1), (3, "dear", 0)]
    parts = {a: [((0, 2), 2, home)] for a in ("unseen", "cheap", "dear")}
    sent = []

    def submit(chunk, **where):
        sent.append([it[1] for it in chunk])
        return client.submit(len, chunk, pure=False, **where)
    got = engine._map(items, submit, lambda n: (n, None), None, lambda *a, **k: None,
                      "induction", 0, parts)
    assert got == [1, 1, 1, 1]                 # a path a task here
    assert sent == [["dear"], ["cheap"], ["cheap"], ["unseen"]]


def test_the_runs_of_one_pass_share_a_workers_game_and_abstraction():
    # The proof's own process evaluates a pass's invariants and transition properties under
    # one abstraction, whose memos (the floods unrolled) serve both; a worker made one per
    # run, and built the transition pass's floods again.  Another pass (other options) has
    # its own.
    from dataclasses import replace

    from solver.prover import workers
    recipe = Recipe.of(str(FIXTURES / "roam.rules"))
    game = load_game(str(FIXTURES / "roam.rules"))
    state = [i.name for i in game.p.invariants if not i.transition]
    trans = [i.name for i in game.p.invariants if i.transition]
    assert state and trans
    options = ProveOptions()
    step, props = cluster.Run.of(recipe, options, state), \
        cluster.Run.of(recipe, options, trans, state)
    later = cluster.Run.of(recipe, replace(options, opaque_fix=True), state)
    assert step.key != props.key and step.base == props.base != later.base
    runs = workers.Runs()
    a, b, c = runs.get(step), runs.get(props), runs.get(later)
    assert a is not b and a.game is b.game and a.abstraction is b.abstraction
    assert c.abstraction is not a.abstraction
    assert runs.get(props) is b      # a run itself is kept too (the two newest)


def test_a_cases_checks_are_sent_before_the_last_cases_results_are_back(client, monkeypatch):
    # At a case's end one worker finished its share while the other still checked: it now
    # goes on to the next case's checks, sent before this case's results are waited for.
    # The cases still close in order: the verdicts, why included, are one process's.
    events = []
    real_map, real_wait = Engine._map, cluster.Sent.wait

    def _map(self, items, submit, take, tally, say, what, ci, parts=None, then=None,
             wait=True):
        events.append((what, "sent", ci))
        return real_map(self, items, submit, take, tally, say, what, ci, parts, then, wait)

    def wait(self):
        events.append((self.what, "back", self.ci))
        return real_wait(self)
    monkeypatch.setattr(Engine, "_map", _map)
    monkeypatch.setattr(cluster.Sent, "wait", wait)
    game = load_game(str(FIXTURES / "roam.rules"))
    assert any(i.transition for i in game.p.invariants)
    got, tally = _verdicts("roam.rules", _engine(client, "roam.rules"))
    one, t1 = _verdicts("roam.rules")
    assert got == one and tally.checked == t1.checked
    for what in ("induction", "transitions"):
        seen = [(e, ci) for w, e, ci in events if w == what]
        cases = sorted({ci for _, ci in seen})
        assert len(cases) > 1 and [ci for e, ci in seen if e == "back"] == cases, seen
        for k in cases[:-1]:
            assert seen.index(("sent", k + 1)) < seen.index(("back", k)), (what, seen)


def test_a_transition_broken_in_several_cases_keeps_the_first_cases_why(client, tmp_path):
    # The cases' checks overlap on the workers: the next case is checked for a property
    # before this case's failure of it is back.  The failure reported is still the first
    # case's, as one process says it (which does not check it again).
    spec = tmp_path / "roam.rules"
    spec.write_text((FIXTURES / "roam.rules").read_text()
                    + "doc \"Not inductive: broken first by another move when 0 does not "
                      "play.\"\ntransition full: pieces() == 3 or (old(turn) != 0 and "
                      "old(board[Sq(0, 0)]) != none);\n")

    def results(engine=None):
        res = prove(load_game(str(spec)), ProveOptions(bmc_depth=2), engine=engine)
        return {r.name: (r.status, r.depth, r.detail, r.trace) for r in res}
    one = results()
    assert one["full"][0] == "holds" and one["full"][2]
    assert results(Engine(Recipe.of(str(spec)), client=client)) == one


def test_the_progress_says_each_cases_paths_built_on_the_workers(client):
    # One process says how many paths each case has as it builds them; the workers' build
    # said nothing of it.
    def counts(engine=None):
        said: list = []
        prove(load_game(str(FIXTURES / "roam.rules")), ProveOptions(bmc_depth=1),
              progress=said.append, engine=engine)
        return [m.split(" action paths")[0] for m in said
                if m.startswith("induction:") and " action paths, " in m]
    one = counts()
    assert len(one) > 1
    assert counts(_engine(client, "roam.rules")) == one


def test_ctrl_c_while_a_case_is_waited_for_keeps_what_the_next_case_sent_back(client,
                                                                            monkeypatch):
    # Case 2's checks are out while case 1's results are waited for: a Ctrl-C then keeps
    # what came back of both (each `Sent` abandoned: its finished tasks' verdicts taken).
    abandoned = []
    real_wait, real_abandon = cluster.Sent.wait, cluster.Sent.abandon

    def wait(self):
        if self.what == "induction" and self.ci == 0:
            real_abandon(self)
            raise KeyboardInterrupt
        return real_wait(self)

    def abandon(self):
        abandoned.append((self.what, self.ci))
        return real_abandon(self)
    monkeypatch.setattr(cluster.Sent, "wait", wait)
    monkeypatch.setattr(cluster.Sent, "abandon", abandon)
    try:
        prove(load_game(str(FIXTURES / "roam.rules")), ProveOptions(bmc_depth=1),
              engine=_engine(client, "roam.rules"))
    except KeyboardInterrupt:
        pass
    assert abandoned == [("induction", 1)]


def test_a_local_clusters_workers_check_their_health_seldom_and_profile_nothing():
    """`workpool.start_local`'s workers run with `workpool.QUIET`: the event loop's health
    checked once a second and the system sampled every 10 s (Dask's defaults, 20 ms and
    500 ms, cost an idle cluster of two workers 9 s of CPU over an 80 s proof), no
    statistical profiler."""
    import dask
    from solver.engine import workpool
    cl, client = workpool.start_local(1)
    try:
        got = client.run(lambda: [dask.config.get(k) for k in workpool.QUIET])
    finally:
        workpool.stop_local(cl, client)
    assert list(got.values()) == [list(workpool.QUIET.values())]
    # Here, outside the cluster's start, Dask's own defaults: each setting changes one.
    assert all(dask.config.get(k) != v for k, v in workpool.QUIET.items())
