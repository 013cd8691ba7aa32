"""The checker checks a def's body once per kind of scope and renumbers it into each caller's
frame (scope.renumber): the program must be exactly the one that checking every call afresh
gives, slots, types and spans included, for every spec and expansion."""
from __future__ import annotations

import pytest

from solver.engine.evaluate import const_value
from solver.lang.check import Checker, check_program
from solver.lang.sources import gc_paused, load_files


class _Forgets(dict):
    """A body store that keeps nothing: every call is checked afresh."""

    def __setitem__(self, key, value):
        pass


@pytest.mark.parametrize("name,variants", [
    ("les-5-tours", ()), ("les-5-tours", ("tours-de-pouvoir",)), ("clock-towers", ()),
    ("torres", ()), ("torres", ("torres-advanced",)), ("towers", ())])
def test_a_reused_body_is_the_body_checked_afresh(name, variants):
    files, readings = load_files(name, variants)
    reused = Checker(files, {}, readings, const_value)
    prog = reused.program()
    assert reused._bodies            # bodies were stored, so the next calls reused them
    fresh = Checker(files, {}, readings, const_value)
    fresh._bodies = _Forgets()
    assert prog == fresh.program()


def test_no_cycle_collection_runs_while_a_spec_is_compiled():
    """Parsing, checking and building pause Python's cycle collector (`sources.gc_paused`):
    with a threshold that would collect every ten allocations, no collection starts while
    the parser, the checker or the game's build is at work (it may start when the collector
    comes back on); a pause leaves the collector as it found it.  Fails if a phase of the
    compile runs with the collector on."""
    import gc
    import sys
    from solver.engine.game import Game
    inside, outside = [], []

    def at_work() -> bool:
        f = sys._getframe(2)
        while f is not None:
            code = f.f_code
            if code.co_name != "gc_paused" and (
                    "/solver/lang/" in code.co_filename.replace("\\", "/")
                    or "lark" in code.co_filename
                    or (code.co_filename.endswith("game.py") and code.co_name == "__init__")):
                return True
            f = f.f_back
        return False

    def count(phase, info):
        if phase == "start":
            (inside if at_work() else outside).append(info["generation"])

    threshold = gc.get_threshold()
    gc.callbacks.append(count)
    gc.set_threshold(10)
    try:
        files, readings = load_files("towers", ())
        Game(*check_program(files, {}, readings, const_value))
        [object() for _ in range(100)]
        assert inside == []
        assert outside              # the threshold is live: the count is not vacuous
        assert gc.isenabled()
        gc.disable()
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.callbacks.remove(count)
        gc.set_threshold(*threshold)
