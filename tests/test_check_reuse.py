"""The checker checks a def's body once per kind of scope and renumbers it into each caller's
frame (check._renumber): the program must be exactly the one that checking every call afresh
gives, slots, types and spans included, for every spec and expansion."""
from __future__ import annotations

import pytest

from solver import check as C
from solver.game import load_files


class _Forgets(dict):
    """A body store that keeps nothing: every call is checked afresh."""

    def __setitem__(self, key, value):
        pass


@pytest.mark.parametrize("name,variants", [
    ("les-5-tours", ()), ("les-5-tours", ("tours-de-pouvoir",)), ("clock-towers", ()),
    ("torres", ()), ("torres", ("torres-advanced",)), ("towers", ())])
def test_a_reused_body_is_the_body_checked_afresh(name, variants):
    files, readings = load_files(name, variants)
    reused = C.Checker(files, {}, readings)
    prog = reused.program()
    assert reused._bodies            # bodies were stored, so the next calls reused them
    fresh = C.Checker(files, {}, readings)
    fresh._bodies = _Forgets()
    assert prog == fresh.program()
