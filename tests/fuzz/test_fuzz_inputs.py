"""Fuzzing the command line with the JSON a user writes: puzzle files for `solve` and state
files for `moves --state`, for every game, valid (drawn from the types of each puzzle's inputs
and of the state's fields) and corrupted (see `support.jsonfuzz`).  Each input is answered, or
refused in one line with exit status 2; never a traceback, never a hang.

Small budget in the suite; `make fuzz` sets RULEBOOK_FUZZ_EXAMPLES for a large one."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.engine.game import load_game
from solver.lang.resources import spec_dir
from solver.lang.sources import games_found
from support.jsonfuzz import budget, corrupted, json_of, run, texts, write

GAMES = sorted(g for g, (path, _) in games_found().items() if path.parent == spec_dir())


@st.composite
def puzzles(draw, name: str):
    """A puzzle file's object for game ``name``: one of its puzzles, some of its inputs (each
    of its declared type; the parameters left at their defaults), maybe a reading."""
    g = load_game(name)
    decl = draw(st.sampled_from(g.p.puzzles))
    obj = {"game": name, "ask": decl.name.replace("_", "-")}
    for inp in decl.inputs:
        if inp.is_param:
            continue
        if inp.default is None or draw(st.booleans()):
            obj[inp.name] = draw(json_of(inp.type))
    if g.p.readings and draw(st.integers(0, 5)) == 0:
        r = draw(st.sampled_from(g.p.readings))
        obj["variants"] = [f"{r.name}:{draw(st.sampled_from([o for o, _ in r.options]))}"]
    return obj


def _puzzle_keys(name: str) -> list[str]:
    g = load_game(name)
    return sorted({i.name for p in g.p.puzzles for i in p.inputs} | {"game", "ask", "variants"})


@st.composite
def states(draw, name: str):
    """A state file's object for game ``name``: some of its fields, each of its type."""
    g = load_game(name)
    fields = draw(st.lists(st.sampled_from(g.p.state), max_size=5, unique_by=lambda f: f.name))
    return {f.name: draw(json_of(f.type)) for f in fields}


def _documents(make, keys):
    return st.one_of(make, make.flatmap(lambda d: corrupted(d, keys)))


@pytest.mark.parametrize("name", [g for g in GAMES if load_game(g).p.puzzles])
def test_puzzle_files(name, capsys):
    docs = _documents(puzzles(name), _puzzle_keys(name))

    @budget(4)
    @given(texts(docs), st.sampled_from(["search"] * 3 + ["z3"]))
    def check(data, backend):
        with tempfile.TemporaryDirectory() as d:
            path = write(Path(d), "puzzle.json", data)
            status, out, _ = run(capsys, ["solve", path, "--json", "--timeout", "2",
                                          "--backend", backend], data.decode("utf-8", "replace"))
        if status == 0:
            json.loads(out)             # the answer is JSON
    check()


@pytest.mark.parametrize("name", GAMES)
def test_state_files(name, capsys):
    g = load_game(name)
    docs = _documents(states(name), [f.name for f in g.p.state])

    @budget(3)
    @given(texts(docs))
    def check(data):
        with tempfile.TemporaryDirectory() as d:
            path = write(Path(d), "state.json", data)
            status, out, _ = run(capsys, ["moves", name, "--state", path, "--json", "--all"],
                                 data.decode("utf-8", "replace"))
        if status == 0:
            assert "moves" in json.loads(out)
    check()


def test_a_valid_puzzle_is_answered(capsys):
    """The harness is not vacuous: a puzzle drawn as the strategies draw it is answered."""
    obj = {"game": "les-5-tours", "ask": "build", "towers": {"sand": [11, 7]},
           "hand": [["sand", 4]]}
    with tempfile.TemporaryDirectory() as d:
        path = write(Path(d), "p.json", json.dumps(obj).encode())
        status, out, _ = run(capsys, ["solve", path, "--json"], json.dumps(obj))
    assert status == 0 and json.loads(out)["feasible"] is True
