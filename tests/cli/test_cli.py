"""The command line, run as `python -m solver ...` in a subprocess: help, JSON outputs, exit
statuses, and one-line error reports."""
from __future__ import annotations

import json
import random

import pytest

from conftest import GAME, run_cli
from solver.engine.game import load_game

PURPOSE = {
    "check": "type-check",
    "moves": "legal",
    "solve": "puzzle",
    "prove": "invariant",
    "examples": "confirmed",
    "ambiguities": "readings",
    "play": "same seed gives the same games",
}


def test_top_level_help_lists_every_command():
    r = run_cli("--help")
    assert r.returncode == 0
    for cmd in PURPOSE:
        assert cmd in r.stdout


@pytest.mark.parametrize("cmd", sorted(PURPOSE))
def test_subcommand_help(cmd):
    r = run_cli(cmd, "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"usage: rulebook {cmd}")
    assert PURPOSE[cmd] in " ".join(r.stdout.split()), r.stdout


def test_check_json_lists_the_game():
    r = run_cli("check", GAME, "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["game"] == GAME
    assert data["examples"] == 19
    assert data["contradicted"] == []
    assert data["files"] == ["spec/les-5-tours.rules"]
    assert set(data["actions"]) == {"draw", "bid", "pass", "take", "take_random", "demolish",
                                    "build", "undo"}
    assert "whole_deck" in data["invariants"]
    assert data["readings"]["main_tower"] == "one"


def test_moves_json_on_the_initial_state_lists_draws():
    r = run_cli("moves", GAME, "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["terminal"] is False
    moves = [m["move"] for m in data["moves"]]
    assert all(m["legal"] for m in data["moves"])
    assert {m[0] for m in moves} == {"draw"}
    # Every card of the 2-player deck, once: 5 styles x 16 values.
    styles = ["candy", "scary", "tree", "scrap", "sand"]
    assert sorted(map(json.dumps, moves)) == sorted(
        json.dumps(["draw", [s, v]]) for s in styles for v in range(16))


def test_moves_all_gives_the_refusing_rule(tmp_path):
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"phase": "building", "turn": 0,
                                 "towers": [{"candy": [5, 0], "scrap": [5]}],
                                 "hand": [["candy", 9], ["scrap", 4]],
                                 "bids": [[2, 0]]}))
    r = run_cli("moves", GAME, "--json", "--all", "--state", str(state))
    assert r.returncode == 0, r.stderr
    moves = {json.dumps(m["move"]): m for m in json.loads(r.stdout)["moves"]}
    assert moves['["build", ["candy", 9]]']["rule"] == "no_card_on_top"
    assert moves['["build", ["scrap", 4]]']["legal"] is True
    assert moves['["demolish", "candy"]']["rule"] == "not_a_top"
    assert moves['["draw", ["sand", 3]]']["rule"] == "revealing"


def test_moves_rejects_an_unknown_state_field(tmp_path):
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"colour": 1}))
    r = run_cli("moves", GAME, "--state", str(state))
    assert r.returncode == 2
    assert len(r.stderr.splitlines()) == 1
    assert "colour" in r.stderr


def _strip_timing(out: str) -> dict:
    data = json.loads(out)
    data.pop("seconds")
    data.pop("games_per_second")
    return data


def test_play_is_deterministic_and_scores_are_right():
    a = run_cli("play", GAME, "--players", "4", "--seed", "3", "--json")
    b = run_cli("play", GAME, "--players", "4", "--seed", "3", "--json")
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    da, db = _strip_timing(a.stdout), _strip_timing(b.stdout)
    assert da == db
    assert da["players"] == 4 and da["seed"] == 3
    [g] = da["games"]
    assert len(g["scores"]) == 4
    best = max(g["scores"])
    assert g["winners"] == [p for p, s in enumerate(g["scores"]) if s == best]
    # The same game through the Python API.
    game = load_game(GAME, (), (("players", 4),))
    st, n = game.playout(random.Random(3))
    assert n == g["moves"]
    score = game.expr("score(p)", {"p": game.p.types["Player"]})[0]
    assert [score(st, p) for p in range(4)] == g["scores"]


def test_play_different_seeds_differ():
    outs = {json.dumps(_strip_timing(run_cli("play", GAME, "--seed", str(s), "--json",
                                             "--games", "2").stdout)["games"])
            for s in (1, 2)}
    assert len(outs) == 2


def test_examples_exit_0():
    r = run_cli("examples", GAME)
    assert r.returncode == 0, r.stderr
    for name in ("scoring", "lou_bids", "lou_builds", "lou_undoes", "building_rules"):
        assert f"{name}: confirmed" in r.stdout
    assert "CONTRADICTED" not in r.stdout


def test_solve_lou():
    r = run_cli("solve", "examples/puzzles/lou.json", "--json")
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["feasible"] is True
    assert data["best_score"] == 9
    assert data["steps"] == [["top", "sand", 4]]


def test_solve_reads_stdin():
    puzzle = {"game": GAME, "towers": {"sand": [10, 6]}, "hand": [["sand", 7]]}
    r = run_cli("solve", "-", "--json", stdin=json.dumps(puzzle))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["best_score"] == 2 + 2 - 1


@pytest.mark.parametrize("cmd", [["moves", "no-such-game"], ["play", "no-such-game"],
                                 ["examples", "no-such-game"], ["check", "no-such-game"]])
def test_unknown_game_exits_2_with_one_line(cmd):
    r = run_cli(*cmd)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert "no-such-game" in lines[0]
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("flag, jobs", [("--jobs", "0"), ("--jobs", "-1"), ("--workers", "two")])
def test_prove_jobs_must_be_a_number_of_processes(flag, jobs):
    # --jobs is --workers under its old name.
    r = run_cli("prove", GAME, flag, jobs)
    assert r.returncode == 2
    assert r.stdout == ""
    assert f"argument --workers/--jobs: expected a number of processes (1 or more), got " \
        f"'{jobs}'" in r.stderr.splitlines()[-1]
    assert "Traceback" not in r.stderr


def test_invalid_json_reports_file_line_col(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"game": "les-5-tours",\n "hand": [["sand", 4],\n}\n')
    r = run_cli("solve", str(bad))
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"rulebook: {bad}:3:1: invalid JSON")
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("text, where", [
    # a record's missing field: at the record
    ('{"game": "torres",\n "board": {"w": 8,\n   "height": [[0]], "occupant": [[null]]},\n'
     ' "ask": "destinations", "piece": [3, 4]}', ":2:11: board: Board needs the field 'h'"),
    # the second puzzle of a list, a card's value out of range: at the card
    ('[{"game": "les-5-tours", "hand": [["sand", 4]]},\n {"game": "les-5-tours",\n'
     '  "hand": [["sand", 4], ["sand", 99]]}]', ":3:25: [1].hand[1].value: 99 is outside"),
    ('[1, 2]', ":1:2: [0]: a puzzle is a JSON object"),
])
def test_bad_puzzle_reports_file_line_col(tmp_path, text, where):
    """A well-formed JSON file whose puzzle is wrong is located at the value at fault (or the
    deepest value of its path that the text writes), in one line, exit 2."""
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    r = run_cli("solve", str(bad))
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"rulebook: {bad}{where}"), lines[0]


def test_bad_state_reports_file_line_col(tmp_path):
    bad = tmp_path / "state.json"
    bad.write_text('{"ap": 3,\n  "turn": 9}')
    r = run_cli("moves", "torres", "--state", str(bad))
    assert r.returncode == 2
    assert r.stderr.splitlines() == [f"rulebook: {bad}:2:11: turn: 9 is outside 0..3"]
    bad.write_text('{"apx": 3}')
    r = run_cli("moves", "torres", "--state", str(bad))
    assert r.stderr.splitlines() == [f"rulebook: {bad}:1:9: apx: not a state field of torres"]


def test_missing_file_exits_2(tmp_path):
    r = run_cli("solve", str(tmp_path / "nope.json"))
    assert r.returncode == 2
    assert len(r.stderr.splitlines()) == 1
    assert "nope.json" in r.stderr


def test_bad_reading_exits_2():
    r = run_cli("moves", GAME, "--variant", "zero_bid:maybe")
    assert r.returncode == 2
    assert "zero_bid" in r.stderr and "maybe" in r.stderr
    assert "Traceback" not in r.stderr


def test_no_command_prints_help():
    r = run_cli()
    assert r.returncode == 0
    assert "usage: rulebook" in r.stdout


@pytest.mark.parametrize("error", ["python", "z3"])
def test_out_of_memory_is_one_line_with_status_3(error, monkeypatch, capsys):
    """A command that runs out of memory (z3's or Python's) says so in one line, exit 3."""
    import z3
    from solver.cli import main as cli

    def exhausted(args):
        if error == "python":
            raise MemoryError()
        raise z3.Z3Exception(b"out of memory")
    monkeypatch.setitem(cli.COMMANDS, "prove", exhausted)
    assert cli.main(["prove", "towers"]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "out of memory" in err and "Traceback" not in err


def test_other_errors_are_not_taken_for_out_of_memory(monkeypatch):
    import z3
    from solver.cli import main as cli

    def broken(args):
        raise z3.Z3Exception(b"sort mismatch")
    monkeypatch.setitem(cli.COMMANDS, "prove", broken)
    with pytest.raises(z3.Z3Exception):
        cli.main(["prove", "towers"])
