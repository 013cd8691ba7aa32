"""`rulebook play` and `rulebook ambiguities` with --workers K / --cluster ADDRESS: the games
(`playstats.outcomes`) and the pairs of readings (`ascent.ambiguities`) done as Dask tasks
(solver/engine/workpool.py) give the output of one process, byte for byte but play's timings;
a run stopped part-way keeps a prefix of the games; a game the rules leave without a move is
named as in one process; a scheduler that does not answer is one line, exit 2."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest
from distributed import Client, LocalCluster

from conftest import FIXTURES, ROOT, run_cli
from solver.cli.main import main
from solver.engine import workpool
from solver.engine.game import load_game
from solver.queries.playstats import Player

TIMINGS = re.compile(r'"seconds": [0-9.e+-]+, "games_per_second": [0-9.e+-]+')


@pytest.fixture(scope="module")
def scheduler():
    """Two worker processes, one thread each, for the module (a cluster takes seconds)."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", memory_limit=0) as cluster, \
            Client(cluster) as c:
        c.wait_for_workers(2, timeout=60)
        yield cluster.scheduler_address


def _play(capsys, *argv) -> tuple[str, str]:
    """The --json document (its timings blanked) and stderr of `play ARGV`."""
    assert main(["play", *argv, "--json"]) == 0
    got = capsys.readouterr()
    out, n = TIMINGS.subn('"seconds": 0, "games_per_second": 0', got.out)
    assert n == 1, got.out[:200]
    return out, got.err


def test_two_local_workers_print_what_one_process_prints(capsys, monkeypatch):
    # No time in this process at all: every game but none is sent to the two workers.
    monkeypatch.setattr(workpool, "LOCAL_S", 0.0)
    one, _ = _play(capsys, "les-5-tours", "--seed", "3", "--games", "60")
    two, err = _play(capsys, "les-5-tours", "--seed", "3", "--games", "60", "--workers", "2",
                     "--progress")
    assert "games 1 to 60 sent to 2 Dask workers" in err
    assert two == one
    assert len(json.loads(one)["games"]) == 60


def test_a_board_game_on_a_running_scheduler_prints_what_one_process_prints(capsys,
                                                                          scheduler):
    one, _ = _play(capsys, "towers", "--seed", "5", "--games", "40")
    two, err = _play(capsys, "towers", "--seed", "5", "--games", "40", "--cluster", scheduler,
                     "--progress")
    assert "games 1 to 40 sent to 2 Dask workers" in err
    assert two == one


def test_compare_and_trace_on_the_workers_print_what_one_process_prints(capsys, scheduler):
    # Each option of the reading is loaded on the workers from its variants; game 1 (traced)
    # is played here, the others there.
    argv = ["les-5-tours", "--seed", "2", "--games", "12", "--compare", "zero_bid", "--trace"]
    one, _ = _play(capsys, *argv)
    two, err = _play(capsys, *argv, "--cluster", scheduler, "--progress")
    assert "games 2 to 12 sent to 2 Dask workers" in err
    assert two == one
    assert json.loads(two)["compare"]["options"]["pass"]["games"]


def test_a_stopped_run_keeps_a_prefix_of_the_games(capsys, scheduler):
    # Stopped by its time limit (as by Ctrl-C) while the workers play: the games kept are the
    # first ones, each the game of its seed, and the exit status says it stopped.  The limit
    # grows while no game came back in time (a machine loaded by other work).
    for limit in (4, 10, 25):
        assert main(["play", "les-5-tours", "--seed", "1", "--games", "100000", "--cluster",
                     scheduler, "--time-limit", str(limit), "--json"]) == 4
        got = json.loads(capsys.readouterr().out)
        n = len(got["games"])
        if n:
            break
    assert got["asked"] == 100000 and got["stopped"] == f"time limit of {limit} s" \
        and 0 < n < 100000
    pl = Player(load_game("les-5-tours"))
    for k in sorted({0, 1, n // 2, n - 1}):
        assert got["games"][k] == pl.play(1, k).as_json()


def test_a_dead_end_on_a_worker_names_the_game_as_one_process_does(capsys, scheduler,
                                                                 tmp_path):
    path = tmp_path / "stuck.rules"
    path.write_text('game "g";\nstate { n: 0..4; }\n', encoding="utf-8")
    assert main(["play", str(path), "--games", "3", "--cluster", scheduler]) == 2
    err = capsys.readouterr().err
    assert err == (f"rulebook: {path}: game 1 of seed 0: no legal move in a state that is "
                   f"not terminal (after 0 moves)\n")


def test_workers_with_one_game_play_it_here():
    one = run_cli("play", "les-5-tours", "--seed", "9", "--json")
    two = run_cli("play", "les-5-tours", "--seed", "9", "--json", "--workers", "2")
    assert one.returncode == two.returncode == 0, two.stderr
    assert TIMINGS.sub("", two.stdout) == TIMINGS.sub("", one.stdout)
    assert json.loads(two.stdout)["games"] == [Player(load_game("les-5-tours")).play(9, 0)
                                               .as_json()]


@pytest.mark.parametrize("argv", [
    ["play", "les-5-tours", "--seed", "5", "--games", "3", "--json"],
    ["ambiguities", str(FIXTURES / "ladder.rules"), "--json"],
])
def test_play_and_ambiguities_use_the_machines_cores_unless_told(argv, capsys, monkeypatch):
    # No --workers: a pool of as many workers as the process has cores (3 here, patched; a
    # run this short starts no cluster); --workers 1: no pool, all in this process; the same
    # output either way.
    import solver.cli.main as cli
    made = []
    real = workpool.pool

    def pool(workers, address=None):
        made.append(workers)
        return real(workers, address)
    monkeypatch.setattr(workpool, "pool", pool)
    monkeypatch.setattr(cli, "cores", lambda: 3)
    assert cli.main(argv) == 0
    default = capsys.readouterr().out
    assert cli.main(argv + ["--workers", "1"]) == 0
    assert made == [3, 1]
    assert TIMINGS.sub("", capsys.readouterr().out) == TIMINGS.sub("", default)


def test_a_scheduler_that_does_not_answer_is_one_line_and_exit_2():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]           # free once closed: nobody listens there
    t0 = time.monotonic()
    r = run_cli("play", "les-5-tours", "--games", "5", "--cluster", f"tcp://127.0.0.1:{port}",
                timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"rulebook: --cluster tcp://127.0.0.1:{port}: no Dask scheduler answers there"), r.stderr
    assert time.monotonic() - t0 < 30


def test_too_many_local_workers_is_one_line_and_exit_2():
    r = run_cli("play", "les-5-tours", "--workers", "100")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip() == ("rulebook: --workers 100: at most 64 local worker processes "
                                "(a cluster of more machines: --cluster)")


def test_ctrl_c_at_the_terminal_keeps_the_games_and_says_one_line(tmp_path):
    # A terminal's Ctrl-C reaches the whole process group, the workers too: they ignore it
    # (no traceback of theirs), and the command keeps the games that came back.
    env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(tmp_path))
    p = subprocess.Popen([sys.executable, "-m", "solver", "play", "les-5-tours", "--seed", "6",
                          "--games", "100000", "--workers", "2", "--json", "--progress"],
                         cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)
    try:
        said = []
        for line in p.stderr:
            said.append(line)
            if "sent to 2 Dask workers" in line:
                break
        assert said and "sent to 2 Dask workers" in said[-1], "".join(said)
        time.sleep(1.0)
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 130
    lines = [ln for ln in err.splitlines() if not ln.startswith("  .. ")]
    assert lines == ["rulebook: stopped (interrupted); what was found so far follows"], err
    got = json.loads(out)
    n = len(got["games"])
    assert got["stopped"] == "interrupted" and n > 0
    pl = Player(load_game("les-5-tours"))
    for k in sorted({0, n // 2, n - 1}):
        assert got["games"][k] == pl.play(6, k).as_json()


def _ambiguities(capsys, *argv) -> tuple[str, str]:
    """The stdout and stderr of `ambiguities ARGV`."""
    assert main(["ambiguities", *argv]) == 0
    got = capsys.readouterr()
    return got.out, got.err


def test_ambiguities_on_a_running_scheduler_print_what_one_process_prints(capsys, scheduler):
    # Both pairs of readings of the ladder on the workers: the same witnesses, the same
    # pictures in the text (drawn here from the witnesses' JSON), in the same order.
    ladder = str(FIXTURES / "ladder.rules")
    outs = {}
    for fmt in (("--json",), ()):
        one, _ = _ambiguities(capsys, ladder, *fmt)
        two, err = _ambiguities(capsys, ladder, *fmt, "--cluster", scheduler, "--progress")
        assert "reading pairs 1 to 2 sent to 2 Dask workers" in err
        assert two == one
        outs[fmt] = one
    got = json.loads(outs[("--json",)])
    assert [a["reading"] for a in got] == ["hop", "edge"] and got[0]["found"]
    assert "hop" in outs[()]


def test_ambiguities_on_two_local_workers_print_what_one_process_prints(capsys, monkeypatch,
                                                                         tmp_path):
    monkeypatch.setattr(workpool, "LOCAL_S", 0.0)
    ladder = str(FIXTURES / "ladder.rules")
    one, _ = _ambiguities(capsys, ladder, "--svg-dir", str(tmp_path / "one"))
    two, err = _ambiguities(capsys, ladder, "--svg-dir", str(tmp_path / "two"), "--workers",
                            "2", "--progress")
    assert "sent to 2 Dask workers" in err
    assert two == one
    svgs = sorted(p.name for p in (tmp_path / "one").iterdir())
    assert svgs and svgs == sorted(p.name for p in (tmp_path / "two").iterdir())
    for name in svgs:
        assert (tmp_path / "two" / name).read_text() == (tmp_path / "one" / name).read_text()


def test_ambiguities_with_a_scheduler_that_does_not_answer_is_one_line_and_exit_2():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = run_cli("ambiguities", "les-5-tours", "--cluster", f"tcp://127.0.0.1:{port}",
                timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"rulebook: --cluster tcp://127.0.0.1:{port}: no Dask scheduler answers there"), r.stderr


def test_a_local_clusters_workers_run_without_dasks_profiler():
    # It sampled each worker's stack every 10 ms: 9 % of a proof's check time.
    cluster, client = workpool.start_local(2)
    try:
        got = client.run(lambda dask_worker: sorted(dask_worker.periodic_callbacks))
    finally:
        workpool.stop_local(cluster, client)
    assert len(got) == 2
    assert all("profile" not in cbs and "profile-cycle" not in cbs for cbs in got.values())
    assert all(cbs for cbs in got.values())     # their other callbacks are there


def test_a_local_cluster_is_stopped_without_waiting_for_its_workers(tmp_path):
    # What the workers hold (a prover's cases) is not needed once the work is back, and
    # letting go of it in order took seconds: the processes are killed, their plugins never
    # torn down, and none is left running.
    from distributed import WorkerPlugin

    class Farewell(WorkerPlugin):
        """Leaves a file behind when its worker lets go of it in order."""

        def __init__(self, path: str):
            self.path = path

        def teardown(self, worker):
            with open(self.path, "a") as f:
                f.write(worker.address + "\n")
    cluster, client = workpool.start_local(2)
    pids = [w.pid for w in cluster.workers.values()]
    assert len(pids) == 2 and all(pids)
    client.register_plugin(Farewell(str(tmp_path / "bye")), name="farewell")
    assert client.submit(sum, [1, 2], pure=False).result() == 3
    workpool.stop_local(cluster, client)
    assert not (tmp_path / "bye").exists()
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_stopping_a_busy_local_cluster_logs_no_traceback():
    # Killed with tasks still queued, the workers' links to the scheduler break, and one
    # with a message still to send was logged with its traceback on the user's terminal at
    # the end of a proof (about one stop in three).  Eight stops: each with work in flight.
    import logging
    seen: list = []
    catch = logging.Handler()
    catch.emit = seen.append
    logger = logging.getLogger("distributed")
    logger.addHandler(catch)
    try:
        for _ in range(8):
            cluster, client = workpool.start_local(2)
            futures = [client.submit(time.sleep, 0.05, pure=False) for _ in range(40)]
            futures[0].result()
            workpool.stop_local(cluster, client)
    finally:
        logger.removeHandler(catch)
    assert [r.getMessage() for r in seen if r.exc_info] == []
