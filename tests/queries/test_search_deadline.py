"""The interpreter's search answers "unknown" once its time is out, with or without a
`bound:` (a puzzle without one was searched to the end, however long that took)."""
from __future__ import annotations

import itertools
import json

from conftest import ROOT
from solver.queries import puzzlesearch
from solver.queries.puzzles import solve

TALLEST = json.loads((ROOT / "tests/golden/towers/tallest_bar_and_cube.json").read_text())


def test_a_search_without_a_bound_stops_at_its_deadline(monkeypatch):
    ticks = itertools.count()
    monkeypatch.setattr(puzzlesearch, "_clock", lambda: 1000.0 * next(ticks))  # 1000 s a call
    got = solve(TALLEST["input"], "search", timeout_ms=50_000)
    assert got == {"build": None, "height": "unknown"}


def test_in_time_it_answers(monkeypatch):
    assert solve(TALLEST["input"], "search")["height"] == TALLEST["expected"]["height"]
