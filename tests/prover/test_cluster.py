"""The inductive step on Dask distributed (solver/prover/cluster.py): the verdicts of two
workers are those of one process, a worker killed mid-proof changes none of them, what the
workers proved is in the store, and a scheduler that does not answer is one line, exit 2."""
from __future__ import annotations

import os
import socket
import time

import pytest
from distributed import Client, LocalCluster, WorkerPlugin

from conftest import FIXTURES, run_cli
from solver.engine.game import load_game
from solver.prover import cluster
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


def test_too_many_local_workers_is_one_line_and_exit_2():
    r = run_cli("prove", str(FIXTURES / "toy.rules"), "--workers", "100", "--no-store")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == ("rulebook: --workers 100: at most 64 local worker processes "
                                "(a cluster of more machines: --cluster)")
