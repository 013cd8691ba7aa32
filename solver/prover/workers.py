"""The Dask workers' side of `cluster`: the tasks a proof sends (a share of the inductive
step's or the transition properties' paths) and `Runs`, the worker plugin that keeps, per run,
the game loaded and the step's cases built for the run's next tasks (the state lives in the
worker, not in a module global).  Imported by the workers and by `cluster` when it starts or
reaches a cluster, never by a proof in one process: Dask takes seconds to import."""
from __future__ import annotations

import time

from distributed import WorkerPlugin, get_worker

from ..lang.errors import RulebookError
from . import abstractions, induction, transitions

PLUGIN = "rulebook-runs"


def register(client) -> None:
    """Give every worker of ``client``'s cluster, and each that joins later, its `Runs`."""
    client.register_plugin(Runs(), name=PLUGIN)


class Runs(WorkerPlugin):
    """A worker's state: the runs it holds (at most `KEEP`, the newest), each its step built
    once, for the next tasks of the same run; and the games with their abstraction, one per
    pass of a proof (`Run.base`), which the pass's runs share."""

    KEEP = 2

    def __init__(self):
        self.runs: dict = {}
        self.bases: dict = {}

    def setup(self, worker):
        self.runs, self.bases = {}, {}

    def get(self, run) -> _Worked:
        hit = self.runs.pop(run.key, None)
        if hit is None:
            base = self.bases.pop(run.base, None)
            if base is None:
                base = (run.recipe.load(), abstractions.for_step(run.options))
            self.bases[run.base] = base
            while len(self.bases) > self.KEEP:
                self.bases.pop(next(iter(self.bases)))
            hit = _Worked(run, *base)
        self.runs[run.key] = hit
        while len(self.runs) > self.KEEP:
            self.runs.pop(next(iter(self.runs)))
        return hit


class _Worked:
    """One run on one worker: the game loaded and the step's abstractions (shared by the
    runs of one pass: the proof's own process evaluates both of a pass's steps under one,
    whose memos, the floods unrolled among them, and whose fixpoints found too costly to
    unroll serve both), the step's cases (`induction.Step`) or the transition pass
    (`transitions.Pass`) when first asked for."""

    def __init__(self, run, game, abstraction):
        self.run = run
        self.game = game
        self.abstraction = abstraction
        self._step = None

    def _named(self) -> list:
        names = set(self.run.invariants)
        return [i for i in self.game.p.invariants if i.name in names]

    def _induction(self) -> induction.Step:
        if self._step is None:
            self._step = induction.Step(self.game, self._named(), self.run.options, _quiet)
        return self._step

    def _transitions(self) -> transitions.Pass:
        if self._step is None:
            self._step = transitions.Pass(self.game, self._named(), set(self.run.assumed),
                                          self.run.options)
        return self._step

    def plan(self, kind: str, ci: int, action: str, part: tuple) -> int | None:
        """How many paths ``action``'s instances ``part`` (lo, hi) have in case ``ci``, built
        here and kept for the tasks that check them; None for a transition pass's case that
        no state satisfying the invariants is in."""
        with self.game.symbolic.abstracted(self.abstraction):
            if kind == "induction":
                return self._induction().build_action(ci, action, part)
            return self._transitions().build_action(ci, action, part)

    def induction_share(self, ci: int, candidates, items, journaled, learned=()) -> tuple:
        with self.game.symbolic.abstracted(self.abstraction):
            return self._induction().check_share(ci, candidates, items, journaled, learned)

    def transition_share(self, ci: int, live, items, done, journaled) -> tuple:
        with self.game.symbolic.abstracted(self.abstraction):
            return self._transitions().remote_share(ci, live, items, done, journaled)


def _quiet(text: str, done=None, total=None, note: str = "") -> None:
    return None


def plan_task(run, kind: str, ci: int, action: str, part: tuple) -> tuple:
    """A task: the paths of ``action``'s instances ``part`` (lo, hi) in case ``ci`` of the
    step (``kind``: "induction" or "transitions") built on this worker, for the tasks that
    will check them; their number (None: the case is impossible), this worker's address,
    which those tasks prefer, and the seconds the build took (`Engine.costs`)."""
    t0 = time.process_time()
    n = _runs().get(run).plan(kind, ci, action, part)
    return n, get_worker().address, time.process_time() - t0


def induction_task(run, ci: int, candidates: list, items: list, journaled: bool,
                   learned=()) -> tuple:
    """A task: paths ``items`` of case ``ci`` checked on this worker
    (`induction.Step.check_share`); ``learned``: what the proof learned so far of the
    (action, invariant) pairs whose steps need splitting."""
    return _runs().get(run).induction_share(ci, candidates, items, journaled, learned)


def transition_task(run, ci: int, live: tuple, items: list, done: dict,
                    journaled: bool) -> tuple:
    """A task: paths ``items`` of case ``ci`` checked for the transition properties ``live``
    on this worker (`transitions.Pass.remote_share`)."""
    return _runs().get(run).transition_share(ci, live, items, done, journaled)


def _runs() -> Runs:
    plugin = get_worker().plugins.get(PLUGIN)
    if plugin is None:
        raise RulebookError("a Dask worker without the rulebook plugin (a worker of another "
                            "client?)")
    return plugin
