"""The search backend runs with Python's cycle collector paused (a search makes millions of
short-lived states and no cycles, and each collection rescanned what the memos keep: about a
fifth of a Torres best turn) and leaves no cyclic garbage behind, so nothing waits for the
collector once it is back."""
from __future__ import annotations

import gc
import json
from pathlib import Path

from solver.engine.game import Game
from solver.queries.puzzles import solve

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
BUILD = {"game": "les-5-tours", "players": 2, "towers": {"sand": [10, 6], "tree": [11]},
         "hand": [["sand", 3]],
         "market": [["sand", 9], ["sand", 8], ["sand", 5], ["tree", 4], ["candy", 7]]}
PLACE = {"game": "towers", "ask": "placements", "shape": "domino",
         "blocks": [{"shape": "tri_line", "cells": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}]}


def _destinations() -> dict:
    return json.loads((GOLDEN / "torres" / "destinations_crowded_ground_edge.json")
                      .read_text())["input"]


PUZZLES = {"a best value (search_query)": BUILD, "every run (search_runs)": PLACE,
           "every choice (search_all)": None}


def _each():
    for name, obj in PUZZLES.items():
        yield name, obj if obj is not None else _destinations()


def test_each_search_runs_with_the_collector_paused_and_gives_it_back(monkeypatch):
    seen: list = []
    legal = Game.legal

    def spy(self, *a, **kw):
        seen.append(gc.isenabled())
        return legal(self, *a, **kw)
    monkeypatch.setattr(Game, "legal", spy)
    assert gc.isenabled()
    for name, obj in _each():
        seen.clear()
        solve(obj, "search")
        assert seen and not any(seen), name
        assert gc.isenabled(), name


def test_a_search_leaves_no_cyclic_garbage():
    for name, obj in _each():
        solve(obj, "search")                  # the query's code generated once
        gc.collect()
        gc.disable()
        try:
            solve(obj, "search")
            # A solve compiles a few expressions of its query, whose lazy closures are cycles
            # (about 20 objects); the candidates' closures, one a state (5,046 objects in
            # the Towers search before), are gone.
            assert gc.collect() < 50, name
        finally:
            gc.enable()
