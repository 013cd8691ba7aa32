"""Shared fixtures of the test suite: the compiled les-5-tours games, the golden-file loader,
and small helpers to run the CLI and to walk a game part of the way."""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from solver.engine.game import load_game

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
GOLDEN = TESTS / "golden"
FIXTURES = TESTS / "fixtures"
GAME = "les-5-tours"


# ---- the end of a session -------------------------------------------------------------------

@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config):
    """Everything alive now (compiled games, their memos, z3's terms) is left out of the
    collection that pytest makes at its cleanup.  An xdist worker still busy 5 s after
    execnet asked it to stop is sent a SIGINT (execnet/gateway_base.py), and in full runs of
    the suite that SIGINT landed in Hypothesis's collector callback: a
    PytestUnraisableExceptionWarning (KeyboardInterrupt) printed after the last test."""
    gc.freeze()


# ---- the real game, compiled once per session (load_game caches too) -------------------------

@pytest.fixture(scope="session")
def game2():
    """les-5-tours for 2 players (80 cards, one copy each)."""
    return load_game(GAME, (), (("players", 2),))


@pytest.fixture(scope="session")
def game4():
    """les-5-tours for 4 players (110 cards: 0, 2, 5, 7, 10, 12 doubled)."""
    return load_game(GAME, (), (("players", 4),))


# ---- golden files ---------------------------------------------------------------------------

def golden(dirname: str):
    """Yield ``(name, input, expected)`` for every ``tests/golden/<dirname>/*.json`` holding
    ``{"input": ..., "expected": ...}`` (other keys, such as "why", are documentation)."""
    folder = GOLDEN / dirname
    files = sorted(folder.glob("*.json"))
    if not files:
        raise FileNotFoundError(f"no golden files in {folder}")
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "input" not in data or "expected" not in data:
            raise ValueError(f"{path}: a golden file is an object with 'input' and 'expected'")
        yield path.stem, data["input"], data["expected"]


# ---- helpers --------------------------------------------------------------------------------

def _cache_home(made: list = []) -> str:   # noqa: B006 - one folder for the session
    """A cache folder of the test session's own (made once, removed at exit)."""
    if not made:
        import atexit
        import shutil
        import tempfile
        made.append(tempfile.mkdtemp(prefix="rulebook-cache-"))
        atexit.register(shutil.rmtree, made[0], True)
    return made[0]


@pytest.fixture(autouse=True, scope="session")
def _own_cache():
    """Commands run in the test process (`main([...])`, the fuzz driver) keep their proof
    store in the session's cache folder too, never in the user's."""
    os.environ["XDG_CACHE_HOME"] = _cache_home()


def run_cli(*args: str, stdin: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python -m solver ARGS`` from the repository root with the project importable."""
    env = dict(os.environ)
    # `prove` keeps its verdicts in the user's cache by default: the tests' own, not theirs.
    env["XDG_CACHE_HOME"] = _cache_home()
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH")
                                     else "")
    return subprocess.run([sys.executable, "-m", "solver", *args], cwd=ROOT, env=env,
                          input=stdin, capture_output=True, text=True, timeout=timeout)


def walk(game, rng, steps: int, each=None):
    """Play at most ``steps`` moves from the initial state, as `Game.playout` does (chance
    first, weighted; else a uniformly random player move); return (state, moves played).
    ``each(move, state)``, if given, is called after every move."""
    st = game.initial()
    chance = [a for a in game.actions if a.chance]
    player = [a for a in game.actions if not a.chance]
    moves = []
    for _ in range(steps):
        if game.is_terminal(st):
            break
        picked = game.pick(st, rng, chance, True) or game.pick(st, rng, player, False)
        if picked is None:
            raise AssertionError(f"no legal move in a non-terminal state after {len(moves)} moves")
        m, st = picked
        moves.append(m)
        if each is not None:
            each(m, st)
    return st, moves


def stored_proof(game_name: str, file: str | None = None):
    """docs/proofs/<game>.json (or <file>.json), checked current against the spec (its checked
    rules and invariants: `digest.current`), as (the game under the stored parameters,
    invariant name -> stored status)."""
    from solver.lang.digest import current
    stored = json.loads((ROOT / "docs" / "proofs" / f"{file or game_name}.json")
                        .read_text("utf-8"))
    g = load_game(game_name, tuple(stored.get("variants", ())),
                  tuple(sorted(stored["params"].items())))
    assert current(g, stored), "stale: rerun docs/refresh.py"
    return g, {r["invariant"]: r["status"] for r in stored["results"]}


def holds(game, inv, st, old=None) -> bool:
    """Evaluate an invariant (or transition property) of the IR concretely, as `prove` does
    when it checks a state."""
    return game.holds(inv, st, old)
