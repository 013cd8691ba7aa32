"""What a newcomer meets first (issue 68): bad files, options and values refused in one line
with exit status 2, games by name or path, help in plain words.  In-process (`main(argv)`)."""
from __future__ import annotations

import json

import pytest

from conftest import ROOT
from solver.cli.main import build_parser, main

TUTORIAL = "docs/tutorial/pile-up.rules"


def refused(capsys, argv) -> str:
    """Run ``argv``; it must exit 2 with one line on stderr and nothing on stdout: that line."""
    try:
        status = main(argv)
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    assert status == 2, (status, out, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


# ---- tracebacks that became one line -----------------------------------------------------------

def test_play_without_a_winner_def(capsys, monkeypatch):
    """The tutorial's game declares no `def winner`: several games are summed up without one,
    and no "winner(s) None" is printed."""
    monkeypatch.chdir(ROOT)
    assert main(["play", TUTORIAL, "--seed", "1", "--games", "5"]) == 0
    out = capsys.readouterr().out
    assert "None" not in out and "winner" not in out.splitlines()[0]
    assert out.count("game ") >= 5 and "mean score" in out and "wins" not in out
    assert "declares no `def winner`" in out


@pytest.mark.parametrize("data, where", [(b'{"game": "caf\xe9"}', ":1:14: not UTF-8 text (byte 0xe9)"),
                                         (b'\n\n  \xff', ":3:3: not UTF-8 text (byte 0xff)")])
@pytest.mark.parametrize("cmd", ["solve", "moves"])
def test_a_file_that_is_not_utf8(capsys, tmp_path, data, where, cmd):
    f = tmp_path / "bad.json"
    f.write_bytes(data)
    argv = ["solve", str(f)] if cmd == "solve" else ["moves", "les-5-tours", "--state", str(f)]
    assert refused(capsys, argv) == f"rulebook: {f}{where}"


@pytest.mark.parametrize("depth, shown", [(101, "101 levels"), (100_000, "too many levels")])
def test_json_nested_too_deep(capsys, tmp_path, depth, shown):
    f = tmp_path / "deep.json"
    f.write_text("[" * depth + "]" * depth)
    assert refused(capsys, ["solve", str(f)]) == \
        f"rulebook: {f}: JSON nested {shown} deep, at most 100"


def test_svg_into_a_missing_folder_or_onto_a_folder_fails_before_solving(capsys, tmp_path,
                                                                       monkeypatch):
    monkeypatch.chdir(ROOT)
    missing = tmp_path / "nope" / "x.svg"
    assert refused(capsys, ["solve", "examples/puzzles/lou.json", "--svg", str(missing)]) == \
        f"rulebook: {missing}: cannot write (no folder {missing.parent})"
    assert refused(capsys, ["solve", "examples/puzzles/lou.json", "--svg", str(tmp_path)]) == \
        f"rulebook: {tmp_path}: cannot write (a directory)"


def test_the_answer_is_printed_before_the_picture_is_written(capsys, tmp_path, monkeypatch):
    """A picture that cannot be written after all does not cost the answer."""
    import solver.cli.main as cli
    monkeypatch.chdir(ROOT)

    def fail(path, text):
        raise cli.InputError(f"{path}: cannot write (no space left)")
    monkeypatch.setattr(cli, "_write", fail)
    assert main(["solve", "examples/puzzles/lou.json", "--json", "--svg",
                 str(tmp_path / "x.svg")]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["best_score"] == 9
    assert err.strip().endswith("cannot write (no space left)")


# ---- silently accepted, now refused ------------------------------------------------------------

@pytest.mark.parametrize("argv, line", [
    (["play", "les-5-tours", "--param", "nope=3"],
     "rulebook: parameter 'nope': les-5-tours has no such parameter (parameters: players)"),
    (["play", "les-5-tours", "--variant", "gate:free"],
     "rulebook: variant 'gate:free': les-5-tours has no reading 'gate' (readings: "
     "market_choice:winner|random; main_tower:one|all; demolition_order:before|anytime; "
     "zero_bid:nothing|pass; undo_bidding:reopen|resume; build_order:annulled|refused; "
     "rebid:lower|buildable; first_pass:allowed|must_bid; zero_opener:bidder_left|same)"),
    (["play", "les-5-tours", "--variant", "zero_bid:maybe"],
     "rulebook: variant 'zero_bid:maybe': reading 'zero_bid' has no option 'maybe' "
     "(options: nothing, pass)"),
    (["play", "les-5-tours", "--variant", "zero_bid:pass", "--variant", "zero_bid:nothing"],
     "rulebook: variant 'zero_bid:nothing': reading 'zero_bid' is already 'pass' "
     "(one option per reading)"),
    (["play", "les-5-tours", "--variant", "torres-advanced"],
     "rulebook: variant 'torres-advanced': torres-advanced extends 'torres', not "
     "'les-5-tours'"),
    (["play", "les-5-tours", "--variant", "nope"],
     "rulebook: variant 'nope': no expansion of les-5-tours of that name (expansions: "
     "tours-de-pouvoir; a reading is written READING:OPTION)"),
    (["play", "les-5-tours", "--players", "2", "--param", "players=4"],
     "rulebook: --players 2: parameter players is already set by --param players=4"),
])
def test_options_that_name_nothing_of_the_game(capsys, argv, line):
    assert refused(capsys, argv) == line


def test_the_same_option_twice_is_no_conflict(capsys):
    assert main(["play", "les-5-tours", "--variant", "zero_bid:pass", "--variant",
                 "zero_bid:pass", "--players", "2", "--param", "players=2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["players"] == 2


@pytest.mark.parametrize("argv, what", [
    (["prove", "les-5-tours", "--depth", "-1"], "argument --depth: expected a number of "
     "moves (0 or more), got '-1'"),
    (["solve", "x.json", "--timeout", "-1"], "argument --timeout: expected a number of "
     "seconds above 0, got '-1'"),
    (["play", "les-5-tours", "--games", "-5"], "argument --games: expected a number of games "
     "(1 or more), got '-5'"),
    (["play", "les-5-tours", "--seed", "-1"], "argument --seed: expected a seed (0 or more), "
     "got '-1'"),
    (["play", "les-5-tours", "--players", "0"], "argument --players: expected a number of "
     "players (1 or more), got '0'"),
])
def test_negative_numbers(capsys, argv, what):
    assert refused(capsys, argv) == f"rulebook {argv[0]}: {what} (see rulebook {argv[0]} --help)"


def _puzzle(tmp_path, text: str) -> str:
    f = tmp_path / "p.json"
    f.write_text(text)
    return str(f)


def test_a_reading_of_another_game_in_a_puzzle_file(capsys, tmp_path):
    f = _puzzle(tmp_path, '{"game": "torres",\n "variants": ["zero_bid:pass"],\n'
                          ' "ask": "destinations"}')
    line = refused(capsys, ["solve", f])
    assert line.startswith(f"rulebook: {f}:2:15: variants[0]: variant 'zero_bid:pass': torres "
                           f"has no reading 'zero_bid' (readings: card_action:"), line
    assert "gate:free|around|blocked" in line


def test_two_options_of_one_reading_in_a_puzzle_file(capsys, tmp_path):
    f = _puzzle(tmp_path, '{"game": "torres", "variants": ["gate:blocked",\n'
                          '                               "gate:free"], "ask": "destinations"}')
    assert refused(capsys, ["solve", f]) == (
        f"rulebook: {f}:2:32: variants[1]: variant 'gate:free': reading 'gate' is already "
        f"'blocked' (one option per reading)")


def test_a_list_where_an_object_by_style_is_expected(capsys, tmp_path):
    f = _puzzle(tmp_path, '{"game": "les-5-tours", "towers": [[5, 3]], "hand": [["sand", 4]]}')
    assert refused(capsys, ["solve", f]) == (
        f"rulebook: {f}:1:35: towers: expected an object keyed by Style (candy, scary, tree, "
        f"scrap, sand), found [[5, 3]]")


def test_a_game_of_several_puzzles_needs_ask(capsys, tmp_path):
    f = _puzzle(tmp_path, '{"game": "torres", "piece": [0, 0]}')
    assert refused(capsys, ["solve", f]) == (
        f'rulebook: {f}:1:1: say which puzzle with "ask" (torres has destinations, '
        f'block-squares, knight-squares, round-score, best-turn)')


def test_a_line_break_in_a_key_stays_on_one_line(capsys, tmp_path):
    """Found by the fuzzing: a key holding U+0085 (a line break to Python) split the report."""
    f = _puzzle(tmp_path, '{"game": "les-5-tours", "\\u0085x\\n": 1}')
    assert refused(capsys, ["solve", f]) == (
        f"rulebook: {f}:1:38: \\x85x\\n: not an input of puzzle build (inputs: players, "
        f"towers, demolished, hand, market)")


# ---- messages ---------------------------------------------------------------------------------

def test_a_missing_file(capsys):
    assert refused(capsys, ["check", "x.rules"]) == "rulebook: x.rules: cannot read (no such file)"
    assert refused(capsys, ["solve", "x.json"]) == "rulebook: x.json: cannot read (no such file)"


def test_an_unknown_game_lists_the_games_and_how_to_add_one(capsys):
    line = refused(capsys, ["moves", "nosuch"])
    assert line.startswith("rulebook: no game named 'nosuch' (games found: clock-towers, "
                           "les-5-tours, torres,")
    assert "RULEBOOK_SPECS" in line and 'game "nosuch";' in line and "path" in line


def test_a_game_by_path_takes_its_name_from_its_game_line(capsys, tmp_path, monkeypatch):
    """A file named otherwise than its game; its base found beside it."""
    monkeypatch.chdir(ROOT)
    (tmp_path / "mine.rules").write_text((ROOT / TUTORIAL).read_text())
    assert main(["play", str(tmp_path / "mine.rules"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["game"] == "pile-up"
    monkeypatch.setenv("RULEBOOK_SPECS", str(tmp_path))
    assert main(["moves", "pile-up", "--json"]) == 0      # by the id of its game line
    assert json.loads(capsys.readouterr().out)["moves"]


def test_check_calls_a_contradicted_example_a_finding(capsys, monkeypatch):
    """Exit 0: the spec is well formed; the contradiction is said to be the book's."""
    monkeypatch.chdir(ROOT)
    assert main(["check", "tests/fixtures/wrong_example.rules"]) == 0
    out = capsys.readouterr().out
    assert "3 contradicted" in out
    assert "the rules contradict the book's worked examples wrong_total" in out
    assert "a finding about the book, not a fault of the spec" in out


# ---- help ------------------------------------------------------------------------------------

def _subparsers():
    ap = build_parser()
    sub = next(a for a in ap._actions if a.__class__.__name__ == "_SubParsersAction")
    return sub.choices


@pytest.mark.parametrize("cmd", sorted(_subparsers()))
def test_every_option_is_described_with_its_default(cmd):
    p = _subparsers()[cmd]
    for a in p._actions:
        assert a.help, (cmd, a.option_strings or a.dest)
        takes_value = a.nargs != 0 and a.option_strings and a.default not in (None, [])
        if takes_value and a.dest != "help":
            assert "%(default)s" in a.help, (cmd, a.option_strings)


def test_solve_help_lists_the_puzzle_kinds_from_the_specs():
    text = _subparsers()["solve"].format_help()
    assert "torres:" in text and "destinations:" in text and "best-turn:" in text
    assert "les-5-tours:" in text and "build:" in text and "tallest:" in text


def test_the_provers_expert_tactics_have_their_own_heading():
    p = _subparsers()["prove"]
    groups = {g.title: [a.dest for a in g._group_actions] for g in p._action_groups}
    assert {"split_lengths", "exact_reals", "region_facts", "symmetry", "opaque_fix",
            "split_on", "alone", "step_timeout"} <= set(groups["expert tactics"])
    assert "depth" not in groups["expert tactics"]
