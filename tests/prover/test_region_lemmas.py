"""The facts about grid components that bench/region_lemmas.py proves Torres' flood steps
from (the design experiment for a region primitive): true on every set of a small board, and
enough, with the spec's guards, for the steps of `place` and of the card that moves a block;
and each check can fail."""
import itertools
import random
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import region_lemmas as rl  # noqa: E402


def _every_set(w: int, h: int):
    return [list(bits) for bits in itertools.product((False, True), repeat=w * h)]


def _grid(w: int, h: int):
    return [[(y + dy) * w + x + dx for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
             if 0 <= x + dx < w and 0 <= y + dy < h]
            for y in range(h) for x in range(w)]


def test_the_components_search_counts_a_known_board():
    nb = rl.board(3)
    # By index y * 3 + x: row 0 whole and the centre (one component), the far corners (two).
    ok = [True, True, True, False, True, False, True, False, True]
    label = rl.labels(nb, ok)
    assert len({x for x in label if x >= 0}) == 3
    assert label.count(-1) == 3


def test_every_fact_holds_on_every_set_of_a_2x3_board():
    nb = _grid(3, 2)
    assert rl.check_sets(nb, _every_set(3, 2), random.Random(1)) == 64 * 6


def test_a_wrong_fact_is_caught(monkeypatch):
    """The check can fail: adding a square said to add one component whatever is beside it."""
    add = rl.Lemmas.add

    def wrong(self, r, r2, q, around):
        return [r2.count == r.count + 1] + add(self, r, r2, q, around)[1:]
    monkeypatch.setattr(rl.Lemmas, "add", wrong)
    with pytest.raises(AssertionError, match="a fact fails"):
        rl.check_sets(_grid(3, 2), _every_set(3, 2), random.Random(1))


@pytest.mark.parametrize("s", [0, 5, 9])
def test_place_keeps_both_flood_properties_from_the_facts(s):
    verdicts = rl.place_step(rl.board(4), s, 60)
    assert {k: v for k, (v, _) in verdicts.items()} == {
        "height_within_area": "proved", "castles_never_merge": "proved"}


def test_place_without_no_merge_can_join_castles():
    verdicts = rl.place_step(rl.board(4), 5, 60, without=("no_merge",))
    assert verdicts["castles_never_merge"][0] == "refuted"


@pytest.mark.parametrize("a,c", [(5, 10), (0, 15), (6, 7)])
def test_the_relocating_card_keeps_height_within_area_from_the_facts(a, c):
    assert rl.relocate_step(rl.board(4), a, c, 60)["height_within_area"][0] == "proved"


def test_the_relocating_card_without_its_source_guard_breaks_height_within_area():
    """The guard `rulebook prove` found missing on 3 x 3 is needed here too."""
    verdicts = rl.relocate_step(rl.board(4), 5, 10, 60, without=("source_not_too_tall",))
    assert verdicts["height_within_area"][0] == "refuted"
