"""Long commands: progress on stderr (never under --json unless asked), --time-limit and Ctrl-C
stop them with what they found and its scope, and the exit status says which (4: time limit,
130: Ctrl-C)."""
from __future__ import annotations

import io
import json
import os

from conftest import FIXTURES, run_cli
from solver.cli.progress import Progress, count_text
from support.interrupt import interrupt

LADDER = {"RULEBOOK_SPECS": str(FIXTURES)}


def _cli(*args, env=None, timeout=120):
    if env:
        old = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
    try:
        return run_cli(*args, timeout=timeout)
    finally:
        for k, v in (old.items() if env else ()):
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# ---- the printer ---------------------------------------------------------------------------

class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_counts_get_a_rate_and_the_time_left_and_lines_are_spaced_off_a_terminal():
    out, clock = io.StringIO(), Clock()
    p = Progress(out, tty=False, every=10, clock=clock)
    p("induction: building the symbolic step")
    p("paths", done=0, total=100)
    clock.t = 5
    p("paths", done=10, total=100)            # within 10 s of the last line: not printed
    clock.t = 20
    p("paths", done=40, total=100, note="checking move")
    clock.t = 21
    p("paths", done=100, total=100)           # the last one always
    lines = out.getvalue().splitlines()
    assert lines[0] == "  .. [0 s] induction: building the symbolic step"
    assert lines[1] == "  .. [0 s] paths: 0/100 (0%)"
    assert lines[2] == "  .. [20 s] paths: 40/100 (40%), 2/s, about 30 s left — checking move"
    assert lines[3].startswith("  .. [21 s] paths: 100/100 (100%)")
    assert len(lines) == 4


def test_on_a_terminal_one_line_is_kept_up_to_date_and_cleared():
    out = io.StringIO()
    p = Progress(out, tty=True, clock=Clock())
    p("a", done=1, total=3)
    p("a", done=2, total=3)
    p.clear()
    assert "\n" not in out.getvalue() and out.getvalue().count("\r\x1b[K") == 3


def test_count_text_without_a_total_and_long_times():
    assert count_text(7, None, 7, 0.5) == "7"
    assert count_text(10, 4000, 10, 10) == "10/4000 (0%), 1/s, about 1 h 6 min left"


# ---- progress on stderr, silent under --json -------------------------------------------------

def test_play_says_how_far_it_is_but_not_under_json():
    r = run_cli("play", "les-5-tours", "--games", "2", "--progress")
    assert r.returncode == 0, r.stderr
    assert "games played: 0/2" in r.stderr
    r = run_cli("play", "les-5-tours", "--games", "2", "--json")
    assert r.returncode == 0 and r.stderr == ""
    assert len(json.loads(r.stdout)["games"]) == 2


def test_ambiguities_streams_witnesses_with_their_scope():
    # In this process (`--workers 1`): the progress of each rung searched here.
    r = _cli("ambiguities", "ladder", "--progress", "--workers", "1", env=LADDER)
    assert r.returncode == 0, r.stderr
    # Progress: the rung being searched, then what it gave.
    assert "hop: over_any vs over_empty on players=1 w=1 bonus=1: none" in r.stderr
    # The witness: where it was found, where it is shown, where there was none.
    assert "  on players=3 w=6 bonus=1\n  found on players=3 w=3 bonus=1" in r.stdout
    assert "  no witness on players=1 w=1 bonus=1;" in r.stdout
    q = _cli("ambiguities", "ladder", "--json", "--workers", "1", env=LADDER)
    assert q.returncode == 0 and q.stderr == ""
    got = json.loads(q.stdout)
    hop, edge = got
    assert hop["found"] and hop["searched_on"]["w"] == 3 and hop["params"]["w"] == 6
    # A hop onto the last cell of three is no hop onto the last of six: shown where found.
    assert edge["found"] and edge["params"]["w"] == 3 and "searched_on" not in edge
    assert edge["note"] == "shown where found: it does not carry over to players=3 w=6 bonus=1"


def test_a_stopped_ambiguity_search_keeps_the_witnesses_found(monkeypatch, capsys):
    """Ctrl-C during the second pair: the first witness is printed, the second pair is "not
    decided" with the parameters it was on, and the status is 130."""
    from solver.cli.main import main
    from solver.queries import ascent
    monkeypatch.setenv("RULEBOOK_SPECS", str(FIXTURES))
    real = ascent.pair_ambiguity

    def stop_at_edge(game, r, *a, **k):
        if r.name == "edge":
            raise KeyboardInterrupt
        return real(game, r, *a, **k)
    monkeypatch.setattr(ascent, "pair_ambiguity", stop_at_edge)
    # In this process (`--workers 1`): a pair sent to a worker would not meet the patch.
    assert main(["ambiguities", "ladder", "--json", "--workers", "1"]) == 130
    hop, edge = json.loads(capsys.readouterr().out)
    assert hop["found"] is True and hop["reading"] == "hop"
    assert edge == {"reading": "edge", "a": "allowed", "b": "refused", "found": None,
                    "stopped": "interrupted", "searching": {"players": 1, "w": 1, "bonus": 1},
                    "tried": []}
    assert main(["ambiguities", "ladder", "--workers", "1"]) == 130
    out = capsys.readouterr().out
    assert "stopped (interrupted) after 1 of 2 pairs of readings; not decided:\n" \
           "  edge: allowed vs refused (was searching on players=1 w=1 bonus=1)" in out


# ---- --time-limit and Ctrl-C keep what was done ------------------------------------------------

def test_play_time_limit_keeps_the_games_played():
    # In this process (`--workers 1`); on workers: tests/cli/test_dask_workers.py.
    r = run_cli("play", "les-5-tours", "--games", "100000", "--time-limit", "2", "--json",
                "--workers", "1")
    assert r.returncode == 4, r.stderr
    out = json.loads(r.stdout)
    assert out["stopped"] == "time limit of 2 s" and out["asked"] == 100000
    assert 0 < len(out["games"]) < 100000
    t = run_cli("play", "les-5-tours", "--games", "100000", "--time-limit", "2",
                "--workers", "1")
    assert t.returncode == 4
    assert "stopped (time limit of 2 s) after " in t.stdout and " of 100000 games" in t.stdout


def test_ctrl_c_keeps_the_games_played():
    code, out, err = interrupt(["play", "les-5-tours", "--games", "100000", "--json",
                                 "--progress", "--workers", "1"], "games played")
    assert code == 130, err
    got = json.loads(out)
    assert got["stopped"] == "interrupted" and 0 < len(got["games"]) < 100000


def test_solve_says_how_far_an_exhaustive_search_is(tmp_path):
    """A `tallest` Towers puzzle (no `bound:`, so exhaustive): the first moves explored, out of
    how many; nothing on stderr under --json without --progress, and the same answer."""
    from conftest import GOLDEN
    case = json.loads((GOLDEN / "towers" / "tallest_bar_and_cube.json").read_text())
    f = tmp_path / "tallest.json"
    f.write_text(json.dumps(case["input"]))
    r = run_cli("solve", str(f), "--json", "--progress")
    assert r.returncode == 0, r.stderr
    assert "search: first moves explored: 0/24 (0%)" in r.stderr
    q = run_cli("solve", str(f), "--json")
    assert q.stderr == "" and json.loads(q.stdout) == json.loads(r.stdout)
    assert json.loads(r.stdout)["height"] == case["expected"]["height"]


def test_a_stop_landing_in_a_library_waits_for_the_packages_own_code():
    """The fuzzing lost a --time-limit's stop: the alarm landed in Hypothesis' collector
    callback, whose exceptions the interpreter swallows.  A stop landing in an installed
    library (z3, a callback) is kept and raised a few milliseconds later; in this package's
    own code it is raised at once."""
    import signal
    from types import SimpleNamespace

    import pytest

    from solver.cli import progress
    from solver.lang.errors import TimeUp

    def frame(path):
        return SimpleNamespace(f_code=SimpleNamespace(co_filename=path))

    stopper = progress._Stopper(5)
    old = signal.signal(signal.SIGALRM, signal.SIG_IGN)
    try:
        for lib in ("/v/lib/python3.11/site-packages/hypothesis/internal/junkdrawer.py",
                    "/usr/lib/python3/dist-packages/z3/z3.py"):
            stopper._raise(TimeUp(5), frame(lib))
            assert isinstance(stopper.pending, TimeUp) and stopper.fired is None
            assert signal.getitimer(signal.ITIMER_REAL)[0] > 0       # tried again soon
        signal.setitimer(signal.ITIMER_REAL, 0)
        with pytest.raises(TimeUp):
            stopper.on_alarm(signal.SIGALRM, frame(progress.__file__))
        assert stopper.pending is None and isinstance(stopper.fired, TimeUp)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
