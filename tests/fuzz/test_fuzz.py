"""Fuzzing the command line (issue 68): puzzle files for `solve` (valid ones solved by both
backends, and corrupted ones), state files for `moves --state`, the options of every command,
seeded playouts, and rules files for `check`.  Every input is answered, or refused in one line
with exit status 2 naming where; never a traceback, never over 10 s (`support.fuzzrun`).

A test is one chunk: one stream (`support.fuzzcases.streams`) in one round.  The suite runs
one round with a few inputs per stream.  `make fuzz` runs RULEBOOK_FUZZ_ROUNDS rounds, each
stream's chunk taking its share of RULEBOOK_FUZZ_ROUND_SECONDS of processor time (at most
RULEBOOK_FUZZ_EXAMPLES inputs), so that the cheap refusals are not starved by the solver and
a run stopped at any point has covered every stream alike; chunks already done (marked in
RULEBOOK_FUZZ_DIR/done) are skipped, so the run resumes."""
from __future__ import annotations

import json
import os
import time
import zlib

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from support.fuzzcases import Case, strategy, streams
from support import fuzzrun
from support.fuzzrun import Tally, _call, done_mark, judge, run_case

ROUNDS = int(os.environ.get("RULEBOOK_FUZZ_ROUNDS", "0") or 0)
LARGE = ROUNDS > 0
ROUND_SECONDS = float(os.environ.get("RULEBOOK_FUZZ_ROUND_SECONDS", "300"))
# The suite's budget: inputs per stream (a valid puzzle is solved twice).
SMALL = {"solve/": 1, "solve-known": 2, "solve-bad": 8, "moves": 3, "moves-bad": 6, "options": 8, "play": 1, "rules": 10,
         "rules-mutated": 4}
STREAMS = streams()
TOTAL_WEIGHT = sum(STREAMS.values())


class _ChunkDone(BaseException):
    """The chunk's share of time is used up (raised through Hypothesis to end the chunk)."""


def _small(stream: str) -> int:
    return SMALL.get(stream, SMALL["solve/"] if stream.startswith("solve/") else 4)


@pytest.mark.parametrize("round_,stream", [(r, s) for r in range(max(ROUNDS, 1))
                                           for s in STREAMS],
                         ids=lambda v: v if isinstance(v, str) else f"r{v}")
def test_fuzz(round_, stream):
    mark = done_mark(round_, stream)
    if LARGE and mark.exists():
        pytest.skip("done in an earlier run")
    weight, cases = STREAMS[stream], strategy(stream)
    if cases is None:
        pytest.skip("a game without puzzles")
    examples = int(os.environ.get("RULEBOOK_FUZZ_EXAMPLES", "0") or 0) or 100_000
    if not LARGE:
        examples = _small(stream)
    seconds = ROUND_SECONDS * weight / TOTAL_WEIGHT if LARGE else float("inf")
    tally = Tally()
    start = time.process_time()

    @seed(zlib.crc32(f"{round_} {stream}".encode()))
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), print_blob=False)
    @given(cases)
    def chunk(case: Case):
        if tally.runs and time.process_time() - start > seconds:
            raise _ChunkDone              # (at least one input: a first compile is slow)
        run_case(case, tally)

    try:
        chunk()
    except _ChunkDone:
        pass
    if LARGE:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.write_text(json.dumps({"runs": tally.runs, "failures": len(tally.failures),
                                    "cpu": round(time.process_time() - start, 1)}))
    assert tally.runs > 0
    assert not tally.failures, "\n".join(tally.failures)


# ---- the harness is not vacuous ------------------------------------------------------------------

def test_a_valid_puzzle_is_answered():
    """A puzzle drawn as the strategies draw it is answered, and judged fine."""
    tally = Tally()
    obj = {"game": "les-5-tours", "ask": "build", "towers": {"sand": [11, 7]},
           "hand": [["sand", 4]]}
    run_case(Case("solve/les-5-tours", ("solve", "{file}", "--json", "--timeout", "1"),
                  json.dumps(obj).encode(), compare=True), tally)
    assert tally.runs == 2 and tally.failures == []


def test_the_judge_refuses_what_the_issue_forbids(tmp_path, monkeypatch):
    """A refusal on two lines, a status that is not documented, a refusal that names no
    place, a traceback: each is a failure, saved whole with its input."""
    monkeypatch.setenv("RULEBOOK_FUZZ_DIR", str(tmp_path))
    monkeypatch.delenv("RULEBOOK_FUZZ_LOG", raising=False)
    o = _call(["moves", "les-5-tours", "--players", "x"])
    assert o.status == 2 and judge(o, None) is None
    o.err = o.err + "second line\n"
    assert judge(o, None) == "refused in 2 lines"
    o.err = "rulebook: something is wrong\n"
    assert judge(o, "input.json") == "the refusal does not say where (the file or the option)"
    assert judge(o, None) is None           # no file: the command line is the place
    o.status = 5
    assert judge(o, None) == "exit status 5"
    tally = Tally()
    # A refusal of the command line before the state file is read.
    run_case(Case("moves", ("moves", "les-5-tours", "--players", "0", "--state", "{file}"),
                  b"{\"\\u0085\": 1}"), tally)
    assert tally.runs == 1 and tally.failures == []
    monkeypatch.setattr("support.fuzzrun.main", lambda argv: 1 // 0)
    run_case(Case("moves", ("moves", "les-5-tours", "--state", "{file}"), b"{}"), tally)
    assert len(tally.failures) == 1 and "raised ZeroDivisionError" in tally.failures[0]
    saved = list((tmp_path / "failures").iterdir())
    assert len(saved) == 1 and (saved[0] / "input.json").read_bytes() == b"{}"
    assert "ZeroDivisionError" in json.loads((saved[0] / "case.json").read_text())["trace"]


def test_a_slow_run_is_judged_by_a_fresh_process(monkeypatch):
    """A run past SLOW in the fuzzing's long process is run again alone and judged by the
    fresh process's time (`check les-5-tours` compiles the game: far from nothing, far below
    ten seconds); both times are kept."""
    monkeypatch.setattr(fuzzrun, "SLOW", 1e-9)
    o = fuzzrun._judged(["check", "les-5-tours"], None)
    assert o.status == 0 and o.cpu_shared is not None
    assert 0.05 < o.cpu < 10 and o.failure.startswith("slow: ")
    monkeypatch.setattr(fuzzrun, "SLOW", 1e9)
    o = fuzzrun._judged(["check", "les-5-tours"], None)
    assert o.cpu_shared is None and o.failure is None


def test_a_run_that_stops_at_its_own_limit_is_judged_past_it():
    """`solve` gives a search 60 s by default: a run that answers "unknown" after 35 s used
    the time it was allowed (the fuzzing found a Towers ring puzzle of three blocks doing
    so); past 70 s, or 12 s with a real answer, it is slow."""
    argv = ["solve", "ring.json", "--json"]
    unknown = fuzzrun.Outcome(argv, 0, '{"possible": "unknown", "build": null}', "", 35.0, 60.0)
    assert fuzzrun.budget(unknown) == 60.0 and judge(unknown, "ring.json") is None
    unknown.cpu = 75.0
    assert judge(unknown, "ring.json").startswith("slow")
    answered = fuzzrun.Outcome(argv, 0, '{"possible": true, "build": []}', "", 12.0, 12.0)
    assert fuzzrun.budget(answered) == 0.0 and judge(answered, "ring.json").startswith("slow")
    stopped = fuzzrun.Outcome(["play", "torres", "--games", "9", "--time-limit", "5"], 4,
                              "stopped", "", 12.0, 12.0)
    assert fuzzrun.budget(stopped) == 5.0 and judge(stopped, None) is None


# ---- what the fuzzing found ------------------------------------------------------------------------

def test_a_puzzle_of_no_known_game_is_refused_at_its_game_key(tmp_path):
    """Found by the fuzzing: `{"game": ""}` was refused with no file:line:col."""
    path = tmp_path / "p.json"
    path.write_text('{"ask": "build",\n "game": ""}', encoding="utf-8")
    o = _call(["solve", str(path), "--json"])
    assert o.status == 2 and judge(o, "p.json") is None
    assert o.err.startswith(f"rulebook: {path}:2:10: game: no game named ''")


def test_a_group_separator_in_a_state_key_stays_on_one_line(tmp_path):
    """Yesterday's unreproduced failure (moves --state on torres, a key holding U+001D, which
    Python's splitlines counts as a line break): the report is one line, the character
    escaped."""
    path = tmp_path / "s.json"
    path.write_text('{"\\u001d\'x": []}', encoding="utf-8")
    o = _call(["moves", "les-5-tours", "--state", str(path), "--json"])
    assert o.status == 2 and judge(o, "s.json") is None
    assert o.err == f"rulebook: {path}:1:14: \\x1d'x: not a state field of les-5-tours\n"


def test_a_playout_at_a_dead_end_names_the_game(tmp_path):
    """Found by the fuzzing: a rules file with no action and no end was refused by `play` in
    a line that named neither the file nor the game."""
    path = tmp_path / "stuck.rules"
    path.write_text('game "g";\nstate { n: 0..4; }\n', encoding="utf-8")
    o = _call(["play", str(path), "--games", "2"])
    assert o.status == 2 and judge(o, "stuck.rules") is None
    assert o.err == (f"rulebook: {path}: game 1 of seed 0: no legal move in a state that is "
                     f"not terminal (after 0 moves)\n")


def test_a_traced_playout_ends_as_an_untraced_one():
    """Found by the fuzzing: `play --trace` of a game that never ends ran until stopped;
    without --trace it stops after 100,000 moves.  Both now stop there."""
    from solver.cli.main import traced_playout
    from solver.engine.game import load_game
    import random
    from solver.lang.errors import EvalError
    g = load_game("tests/fixtures/toy.rules")
    with pytest.raises(EvalError, match="no end after 50 moves"):
        traced_playout(g, random.Random(0), max_steps=50)


def test_a_line_break_in_an_unknown_argument_stays_on_one_line():
    """Found by the fuzzing: argparse's refusal quoted a "\\r" of the command line as is."""
    o = _call(["check", "clock-towers", "--nope", "a\rb"])
    assert o.status == 2 and judge(o, None) is None
    assert "a\\rb" in o.err
